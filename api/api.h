/* api.h - HTTP-agnostic request handling: route, decode, validate, call
 * core, encode. The server hands over one whole request and gets one whole
 * response back; nothing here knows about sockets or libmicrohttpd.
 *
 * Thread-safety: api_handle may run on many threads at once against one
 * struct api_ctx; the ctx is read-only after set-up except the store, which
 * is itself thread-safe.
 */
#ifndef API_API_H
#define API_API_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "errors.h"

struct store;
struct world_registry;
struct batch_pool;

/* What the persist hooks return. */
#define API_PERSIST_OK 0
#define API_PERSIST_FAILED (-1)		/* 500 internal */
#define API_PERSIST_UNAVAILABLE (-2)	/* 503 store_unavailable */
#define API_PERSIST_FULL (-3)		/* 413: a new name, the shared store at --max-meshes */
#define API_PERSIST_NO_SPACE (-4)	/* 507 insufficient_storage: --data-dir's disk full */
#define API_PERSIST_ABSENT 1		/* persist_delete: the store held no such name */
/* persist_put, a store shared by replicas: what the write was there (201 or
 * 200 whatever this replica has applied so far); API_PERSIST_OK leaves it
 * to memory */
#define API_PERSIST_CREATED 2
#define API_PERSIST_REPLACED 3

struct api_limits {
	size_t max_batch;		/* rays/segments/shots per request (65536) */
	size_t max_triangles;		/* per mesh (16 M) */
	size_t max_boxes;		/* boxes per request (65536) */
	size_t max_meshes;		/* meshes in the store, 0 = unlimited */
	size_t max_body_mesh;		/* bytes of a mesh upload (256 MiB) */
	size_t max_body_query;		/* bytes of any other body (16 MiB) */
	size_t max_response_bytes;	/* bytes of a response body, 0 = no cap (64 MiB): 413 past it */
};

/* Limits of /v1/worlds (0 = unlimited); shots per request use max_batch. */
struct api_world_limits {
	size_t max_worlds;		/* worlds held (64) */
	size_t max_instances;		/* static instances per world (4096) */
	size_t max_entities;		/* entities per snapshot (1024) */
	size_t max_hitboxes;		/* hitboxes per snapshot, all entities (65536) */
	size_t max_snapshots;		/* snapshots a world holds, >= 2 (256; 0 = 256) */
};

struct api_ctx {
	struct store *store;
	struct world_registry *worlds;	/* NULL: the /v1/worlds routes answer 404 */
	struct api_limits limits;
	struct api_world_limits world_limits;
	const char *openapi_yaml;	/* served at GET /v1/openapi.yaml */
	size_t openapi_len;
	/* Optional persistence (server/), NULL when meshes live in memory only.
	 * persist_lock / persist_unlock (both or neither) bracket the durable
	 * write and the swap in memory of one name, so writers of a name reach
	 * the store and memory in the same order.
	 * persist_put runs after the mesh is built and before it is swapped in,
	 * with the version the mesh will have in memory (a store that keeps
	 * it gives it back when loading);
	 * persist_delete runs before the name is removed from memory, whether
	 * memory holds it or not (the store decides: a replica may not have
	 * applied a write yet; API_PERSIST_ABSENT when it held nothing), and
	 * to undo a put the store then refused. Both return API_PERSIST_*; on a
	 * failure the request is refused and memory is left unchanged. */
	void *persist_cls;
	int (*persist_put)(void *cls, const char *name, const float *xyz, size_t nvert,
			   const uint32_t *idx, size_t ntri, uint64_t version);
	int (*persist_delete)(void *cls, const char *name);
	void (*persist_lock)(void *cls, const char *name);
	void (*persist_unlock)(void *cls, const char *name);
	/* Optional worker threads for big batches (batch.h), NULL: every batch
	 * runs on the calling thread. */
	struct batch_pool *pool;
};

/* What the caller's credentials grant (the server compares the keys). */
enum api_auth { API_AUTH_NONE, API_AUTH_READ, API_AUTH_WRITE };

/* What a route needs: open, a read (query) key, or the write key. */
enum api_access { API_ACCESS_OPEN, API_ACCESS_READ, API_ACCESS_WRITE };

struct api_route_info {
	const char *label;		/* metrics label, e.g. "/v1/meshes/{name}/raycast" */
	enum api_access access;
	int mesh_upload;		/* body limit is max_body_mesh, not max_body_query */
	char allow[64];			/* for 405: the methods the path accepts */
	/* the match itself, for api_request.route */
	enum api_err err;		/* what api_route returned */
	int op;				/* the operation (API_OK) */
	const char *name_raw;		/* the {name} or {world} segment, within path */
	size_t name_raw_len;		/* 0: the route has none */
};

/*
 * Find the route of (method, path) without reading a body, so the server can
 * refuse early (401, 404, 405, 413). Returns API_OK with *info filled,
 * API_NOT_FOUND, or API_METHOD_NOT_ALLOWED (info->allow and label filled).
 * path excludes the query string.
 */
enum api_err api_route(const char *method, const char *path, struct api_route_info *info);

/* 1 for every path under /v1: all need a key, so a request without a valid
 * one gets 401 before routing (unknown paths are not revealed). */
int api_path_needs_key(const char *path);

/*
 * The one access policy, applied by the server before the body is read and
 * by api_handle: may a caller with auth reach path, whose route needs access
 * (API_ACCESS_OPEN when the path did not route)? Every /v1 path needs at
 * least a read key. API_OK, or API_UNAUTHORIZED (answer with
 * WWW-Authenticate: Bearer) / API_FORBIDDEN with *msg the message to send.
 */
enum api_err api_access(const char *path, enum api_access access, enum api_auth auth,
			const char **msg);

/* A query-string parameter, percent-decoded. */
struct api_arg {
	const char *key;
	const char *value;
};

struct api_request {
	const char *method;
	const char *path;		/* no query string */
	const char *content_type;	/* may be NULL */
	const char *body;		/* may be NULL when body_len is 0 */
	size_t body_len;
	enum api_auth auth;
	const struct api_arg *args;	/* query string, ended by a NULL key; NULL: none */
	/* api_route's answer for this method and path when the caller has it
	 * (the server routes before the body), so that it is not matched twice;
	 * NULL: api_handle routes */
	const struct api_route_info *route;
};

struct api_response {
	int status;
	const char *content_type;	/* static string */
	struct buf body;
	/* Set instead of body when not even an error body could be allocated:
	 * a static answer, never freed. api_response_body gives either. */
	const char *static_body;
	char allow[64];			/* set for 405 */
	int www_authenticate;		/* 401: send WWW-Authenticate: Bearer */
	const char *route_label;	/* metrics label ("unmatched" if none) */
	const char *ray_kind;		/* metrics: "mesh_ray", "mesh_segment", "obb_ray", "hitscan",
					 * "overlap", "world_hitscan", "world_raycast" or NULL */
	uint64_t rays;			/* rays/segments/shots/boxes answered */
	/* worlds, for metrics: shots by outcome, snapshots ingested */
	uint64_t world_shots[3];	/* API_SHOT_STATIC, API_SHOT_ENTITY, API_SHOT_MISS */
	uint64_t world_snapshots;
};

enum { API_SHOT_STATIC, API_SHOT_ENTITY, API_SHOT_MISS };

/* Handle one request. Always fills *resp (release with api_response_release),
 * also when out of memory (then a 500 with a static body). */
void api_handle(const struct api_ctx *ctx, const struct api_request *req, struct api_response *resp);
void api_response_release(struct api_response *resp);
/* The bytes to send and their length: body's, or the static answer. */
const char *api_response_body(const struct api_response *resp, size_t *len);

/* Fill resp with the JSON error body for e and a message (printf-style),
 * e.g. from the server for a 413 detected before the body was read. */
void api_error(struct api_response *resp, enum api_err e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
