/* handlers.h - api/-internal: the route table's operations and the handlers
 * api_handle dispatches to. Not for server/ (it uses api.h only).
 */
#ifndef API_HANDLERS_H
#define API_HANDLERS_H

#include <stddef.h>

#include "api.h"
#include "decode.h"
#include "store.h"

enum api_op {
	OP_OPENAPI,
	OP_MESH_LIST,
	OP_MESH_PUT,
	OP_MESH_GET,
	OP_MESH_DELETE,
	OP_MESH_RAYCAST,
	OP_MESH_SEGMENT,
	OP_MESH_OVERLAP,
	OP_OBB_RAYCAST,
	OP_HITSCAN,
	/* worlds (world_handlers.c) */
	OP_WORLD_LIST,
	OP_WORLD_PUT,
	OP_WORLD_GET,
	OP_WORLD_DELETE,
	OP_WORLD_SNAPSHOT,
	OP_WORLD_HITSCAN,
	OP_WORLD_RAYCAST,
};

/* A matched route: the operation and, for /v1/meshes/{name}..., the name
 * (validated, NUL-terminated; "" for routes without one). */
struct api_match {
	enum api_op op;
	char name[STORE_NAME_MAX + 1];
	const char *name_raw;	/* the {name} segment in the path, unvalidated */
	size_t name_raw_len;	/* 0 when the route has no {name} */
	const char *media;	/* the accepted body type the Content-Type named; NULL: none sent */
};

/* Replace resp's body with an error (status from the table), keeping its
 * metrics fields, allow and www_authenticate. */
void api_respond_error(struct api_response *resp, enum api_err e, const char *msg);
void api_respond_fail(struct api_response *resp, const struct api_fail *f);
/* 507 insufficient_storage: the memory budget (--max-memory, membudget.h)
 * has no room for what (a "mesh", a "snapshot"); nothing was stored. */
void api_respond_memory_full(struct api_response *resp, const char *what);

/* The entry of the NULL-terminated types (each in lower case) that the
 * media type of content_type names (parameters ignored, any case); NULL
 * when none does. api_media_type_is: 1 when one does. */
const char *api_media_type_match(const char *content_type, const char *const *types);
int api_media_type_is(const char *content_type, const char *const *types);

/* mesh_handlers.c */
void handle_openapi(const struct api_ctx *ctx, const struct api_request *req,
		    const struct api_match *m, struct api_response *resp);
void handle_mesh_list(const struct api_ctx *ctx, const struct api_request *req,
		      const struct api_match *m, struct api_response *resp);
void handle_mesh_put(const struct api_ctx *ctx, const struct api_request *req,
		     const struct api_match *m, struct api_response *resp);
void handle_mesh_get(const struct api_ctx *ctx, const struct api_request *req,
		     const struct api_match *m, struct api_response *resp);
void handle_mesh_delete(const struct api_ctx *ctx, const struct api_request *req,
			const struct api_match *m, struct api_response *resp);

/* query_handlers.c: bodies are JSON (api_handle checked the content type) */
void handle_mesh_raycast(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp);
void handle_mesh_segment(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp);
void handle_mesh_overlap(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp);
void handle_obb_raycast(const struct api_ctx *ctx, const struct api_request *req,
			const struct api_match *m, struct api_response *resp);
void handle_hitscan(const struct api_ctx *ctx, const struct api_request *req,
		    const struct api_match *m, struct api_response *resp);

/* world_handlers.c: /v1/worlds; {name} is the world */
void handle_world_list(const struct api_ctx *ctx, const struct api_request *req,
		       const struct api_match *m, struct api_response *resp);
void handle_world_put(const struct api_ctx *ctx, const struct api_request *req,
		      const struct api_match *m, struct api_response *resp);
void handle_world_get(const struct api_ctx *ctx, const struct api_request *req,
		      const struct api_match *m, struct api_response *resp);
void handle_world_delete(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp);
void handle_world_snapshot(const struct api_ctx *ctx, const struct api_request *req,
			   const struct api_match *m, struct api_response *resp);
void handle_world_hitscan(const struct api_ctx *ctx, const struct api_request *req,
			  const struct api_match *m, struct api_response *resp);
void handle_world_raycast(const struct api_ctx *ctx, const struct api_request *req,
			  const struct api_match *m, struct api_response *resp);

#endif
