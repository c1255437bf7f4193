/* mesh_handlers.c - the spec and mesh resources: list, upload, read, delete. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "encode.h"
#include "formats.h"
#include "handlers.h"

void handle_openapi(const struct api_ctx *ctx, const struct api_request *req,
		    const struct api_match *m, struct api_response *resp)
{
	resp->content_type = "application/yaml";
	if (ctx->openapi_yaml)
		buf_append(&resp->body, ctx->openapi_yaml, ctx->openapi_len);
	else
		buf_append(&resp->body, "", 0);
}

void handle_mesh_list(const struct api_ctx *ctx, const struct api_request *req,
		      const struct api_match *m, struct api_response *resp)
{
	struct store_entry *e;
	struct mesh_info mi;
	size_t n, k;

	if (store_list(ctx->store, &e, &n) != CORE_OK) {
		api_respond_error(resp, API_INTERNAL, "out of memory");
		return;
	}
	buf_reserve(&resp->body, 16 + n * 320);
	buf_puts(&resp->body, "{\"meshes\":[");
	for (k = 0; k < n; k++) {
		if (k)
			buf_putc(&resp->body, ',');
		mesh_get_info(e[k].mesh, &mi);
		encode_mesh_info(&resp->body, e[k].name, e[k].version, &mi);
	}
	buf_puts(&resp->body, "]}");
	store_list_free(e, n);
}

void handle_mesh_get(const struct api_ctx *ctx, const struct api_request *req,
		     const struct api_match *m, struct api_response *resp)
{
	struct mesh_info mi;
	struct mesh *mesh;
	uint64_t version;
	char msg[128];

	mesh = store_get(ctx->store, m->name, &version);
	if (!mesh) {
		snprintf(msg, sizeof(msg), "no mesh named '%s'", m->name);
		api_respond_error(resp, API_MESH_NOT_FOUND, msg);
		return;
	}
	mesh_get_info(mesh, &mi);
	mesh_unref(mesh);
	encode_mesh_info(&resp->body, m->name, version, &mi);
}

/* The answer for a failed persist hook (API_PERSIST_*). */
static void respond_persist_error(struct api_response *resp, int pr, const char *failed)
{
	if (pr == API_PERSIST_UNAVAILABLE)
		api_respond_error(resp, API_STORE_UNAVAILABLE,
				  "the mesh store is unavailable; retry later");
	else if (pr == API_PERSIST_NO_SPACE)
		api_respond_error(resp, API_INSUFFICIENT_STORAGE,
				  "no space left on the mesh store's disk; nothing was stored");
	else
		api_respond_error(resp, API_INTERNAL, failed);
}

/* 1 when memory holds name (*version, if not NULL, its version). */
static int stored(struct store *st, const char *name, uint64_t *version)
{
	int held;

	store_read_begin();
	held = store_peek(st, name, version) != NULL;
	store_read_end();
	return held;
}

void handle_mesh_delete(const struct api_ctx *ctx, const struct api_request *req,
			const struct api_match *m, struct api_response *resp)
{
	char msg[128];
	int pr, held;

	if (ctx->persist_lock)
		ctx->persist_lock(ctx->persist_cls, m->name);
	held = stored(ctx->store, m->name, NULL);
	/* the durable store decides, also for a name this process has not
	 * (yet) got: a replica behind on a PUT made elsewhere, or a mesh left
	 * unloaded by --max-meshes */
	pr = ctx->persist_delete ? ctx->persist_delete(ctx->persist_cls, m->name) :
				   held ? API_PERSIST_OK : API_PERSIST_ABSENT;
	if (pr < 0) {
		respond_persist_error(resp, pr, "could not remove the stored mesh");
		goto out_unlock;
	}
	if (held)
		store_delete(ctx->store, m->name);
	if (!held && pr == API_PERSIST_ABSENT) {
		snprintf(msg, sizeof(msg), "no mesh named '%s'", m->name);
		api_respond_error(resp, API_MESH_NOT_FOUND, msg);
		goto out_unlock;
	}
	resp->status = 204;
	resp->content_type = NULL;	/* no body, no Content-Type */
out_unlock:
	if (ctx->persist_unlock)
		ctx->persist_unlock(ctx->persist_cls, m->name);
}

/* The api answer for a mesh_build failure. */
static void respond_build_error(struct api_response *resp, enum core_result r, size_t bad,
				size_t max_tris)
{
	char msg[128];

	switch (r) {
	case CORE_EEMPTY:
		api_respond_error(resp, API_INVALID_MESH, "triangles: the mesh has no triangles");
		return;
	case CORE_ENONFINITE:
		api_respond_error(resp, API_INVALID_MESH, "vertices: a coordinate is not finite");
		return;
	case CORE_EINDEX:
		snprintf(msg, sizeof(msg), "triangles[%zu]: index out of range", bad);
		api_respond_error(resp, API_INVALID_MESH, msg);
		return;
	case CORE_ETOOBIG:
		snprintf(msg, sizeof(msg), "triangles: more than %zu", max_tris);
		api_respond_error(resp, API_PAYLOAD_TOO_LARGE, msg);
		return;
	case CORE_ENOSPACE:
		api_respond_memory_full(resp, "mesh");
		return;
	default:
		api_respond_error(resp, API_INTERNAL, "out of memory building the mesh");
	}
}

/* Creates of new names with a durable store, one at a time (see below). */
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;

static void respond_full(struct api_response *resp, size_t max_meshes)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "the store already holds the limit of %zu meshes", max_meshes);
	api_respond_error(resp, API_PAYLOAD_TOO_LARGE, msg);
}

/*
 * Build off to the side, then persist and swap in under the name's persist
 * lock: a failure at any step leaves the store as it was. 201 for a new
 * name, 200 for a replace.
 */
void handle_mesh_put(const struct api_ctx *ctx, const struct api_request *req,
		     const struct api_match *m, struct api_response *resp)
{
	size_t max_tris = ctx->limits.max_triangles, bad = 0;
	struct api_fail f;
	struct mesh_data d;
	struct mesh_info mi;
	struct mesh *mesh;
	enum core_result r;
	uint64_t version, next = 0;
	int created, pr, locked_create, exists = 0;

	if (!max_tris || max_tris > MESH_MAX_TRIANGLES)
		max_tris = MESH_MAX_TRIANGLES;
	if (decode_mesh_upload(req->content_type, req->body, req->body_len, max_tris, &d, &f)) {
		api_respond_fail(resp, &f);
		return;
	}
	r = mesh_build(d.xyz, d.nvert, d.idx, d.ntri, &mesh, &bad);
	if (r != CORE_OK) {
		respond_build_error(resp, r, bad, max_tris);
		goto out_release_data;
	}
	if (ctx->persist_lock)
		ctx->persist_lock(ctx->persist_cls, m->name);
	/* With a durable store, a name new here is created under one lock and
	 * refused before anything is written when the store is full: a write
	 * undone after the fact would remove what the store held under that
	 * name (a mesh over the limit at start-up, never loaded). */
	if (ctx->persist_put) {
		/* the version this PUT gives, persisted with the mesh so that a
		 * restart gives it back (no other writer of the name runs under
		 * the lock: it is what store_put would choose) */
		exists = stored(ctx->store, m->name, &next);
		next = exists ? next + 1 : 1;
	}
	/* a replace changes no count: only new names take the create lock */
	locked_create = ctx->persist_put && ctx->limits.max_meshes && !exists;
	if (locked_create)
		pthread_mutex_lock(&create_lock);
	if (store_would_refuse(ctx->store, m->name, ctx->limits.max_meshes)) {
		respond_full(resp, ctx->limits.max_meshes);
		goto out_unlock;
	}
	pr = ctx->persist_put ? ctx->persist_put(ctx->persist_cls, m->name, d.xyz, d.nvert, d.idx,
						 d.ntri, next) : API_PERSIST_OK;
	if (pr == API_PERSIST_FULL) {
		respond_full(resp, ctx->limits.max_meshes);
		goto out_unlock;
	}
	if (pr != API_PERSIST_OK && pr != API_PERSIST_CREATED && pr != API_PERSIST_REPLACED) {
		respond_persist_error(resp, pr, "could not persist the mesh");
		goto out_unlock;
	}
	mesh_get_info(mesh, &mi);
	r = store_put_version(ctx->store, m->name, mesh, ctx->limits.max_meshes,
			      ctx->persist_lock ? next : 0, &version, &created);
	mesh = NULL;	/* store_put took the reference, also on failure */
	if (r != CORE_OK) {
		/* ETOOBIG here: only a name that came in from another replica
		 * between the check and now (Redis), the persisted copy is ours */
		if (r == CORE_ETOOBIG && ctx->persist_delete)
			ctx->persist_delete(ctx->persist_cls, m->name);
		if (r == CORE_ETOOBIG)
			respond_full(resp, ctx->limits.max_meshes);
		else
			api_respond_error(resp, API_INTERNAL, "out of memory storing the mesh");
		goto out_unlock;
	}
	if (pr != API_PERSIST_OK)
		created = pr == API_PERSIST_CREATED;	/* the shared store's word */
	resp->status = created ? 201 : 200;
	encode_mesh_info(&resp->body, m->name, version, &mi);
out_unlock:
	if (locked_create)
		pthread_mutex_unlock(&create_lock);
	if (ctx->persist_unlock)
		ctx->persist_unlock(ctx->persist_cls, m->name);
	mesh_unref(mesh);
out_release_data:
	mesh_data_release(&d);
}
