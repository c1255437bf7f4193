/* query_handlers.c - ray, segment, overlap, OBB and hitscan queries: decoded
 * request in, core query per ray, answers encoded in request order. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "handlers.h"

/* The world point o + t*d of a query ray, in double (box hits). */
static vec3 world_point(const struct qray *r, float t)
{
	return v3((float)(r->ray.origin.x + (double)t * r->dir[0]),
		  (float)(r->ray.origin.y + (double)t * r->dir[1]),
		  (float)(r->ray.origin.z + (double)t * r->dir[2]));
}

/*
 * The world point and unit normal of a mesh hit. The point is o + t d of the
 * world ray, in double: the same point the distance describes, and exact
 * along the axes the ray does not move in (a vertical ray keeps its x, z).
 * The normal is (B-A)x(C-A) of the placed vertices, exactly the API's
 * definition whatever sign conventions a mirroring placement gives the
 * mesh-space normal.
 */
static void hit_to_world(const struct mesh *mesh, const struct xform *xf, const struct qray *r,
			 const struct hit *h, vec3 *point, vec3 *normal)
{
	double e[2][3], w[2][3], n[3], len;
	vec3 a, b, c;
	int k;

	mesh_triangle(mesh, h->triangle, &a, &b, &c);
	e[0][0] = (double)b.x - a.x; e[0][1] = (double)b.y - a.y; e[0][2] = (double)b.z - a.z;
	e[1][0] = (double)c.x - a.x; e[1][1] = (double)c.y - a.y; e[1][2] = (double)c.z - a.z;
	*point = world_point(r, h->t);
	if (!xf) {
		*normal = h->normal;
		return;
	}
	for (k = 0; k < 2; k++) {
		w[k][0] = xf->m[0] * e[k][0] + xf->m[1] * e[k][1] + xf->m[2] * e[k][2];
		w[k][1] = xf->m[4] * e[k][0] + xf->m[5] * e[k][1] + xf->m[6] * e[k][2];
		w[k][2] = xf->m[8] * e[k][0] + xf->m[9] * e[k][1] + xf->m[10] * e[k][2];
	}
	n[0] = w[0][1] * w[1][2] - w[0][2] * w[1][1];
	n[1] = w[0][2] * w[1][0] - w[0][0] * w[1][2];
	n[2] = w[0][0] * w[1][1] - w[0][1] * w[1][0];
	len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
	if (!(len > 0) || !isfinite(len))
		*normal = xform_normal(xf, h->normal);
	else
		*normal = v3((float)(n[0] / len), (float)(n[1] / len), (float)(n[2] / len));
}

static void to_world_hit(const struct mesh *mesh, const struct xform *xf, const struct qray *r,
			 const struct hit *h, struct world_hit *w)
{
	w->distance = h->t;
	hit_to_world(mesh, xf, r, h, &w->point, &w->normal);
	w->triangle = h->triangle;
	w->u = h->u;
	w->v = h->v;
	w->front_face = h->front_face;
	w->fraction = 0;
	if (r->length > 0) {
		double fr = h->t / r->length;

		w->fraction = (float)(fr < 0 ? 0 : fr > 1 ? 1 : fr);
	}
}

/* A core failure for ray i of a batch (or the one ray) as an api error. */
static void respond_query_error(struct api_response *resp, enum core_result r, const char *what,
				int batch, size_t i)
{
	char msg[160];

	if (r == CORE_ENOMEM) {
		api_respond_error(resp, API_INTERNAL, "out of memory");
		return;
	}
	if (batch)
		snprintf(msg, sizeof(msg), "%s[%zu]: not a valid ray once moved into mesh space (transform)",
			 what, i);
	else
		snprintf(msg, sizeof(msg), "transform: moves the ray out of the float range");
	api_respond_error(resp, API_INVALID_REQUEST, msg);
}

static struct mesh *lookup_mesh(const struct api_ctx *ctx, const char *name,
				struct api_response *resp)
{
	struct mesh *mesh = store_get(ctx->store, name, NULL);
	char msg[128];

	if (!mesh) {
		snprintf(msg, sizeof(msg), "no mesh named '%s'", name);
		api_respond_error(resp, API_MESH_NOT_FOUND, msg);
	}
	return mesh;
}

/*
 * Parse the JSON body into arena (empty on entry); the caller releases the
 * arena once done with the tree. On failure an error response, the arena
 * already released, and NULL.
 */
static cJSON *parse_body(const struct api_request *req, struct json_arena *arena,
			 struct api_response *resp)
{
	struct api_fail f;
	cJSON *root;

	if (api_json_parse_in(req->body, req->body_len, arena, &root, &f)) {
		api_respond_fail(resp, &f);
		json_arena_release(arena);
		return NULL;
	}
	return root;
}

/* Every ray of q against mesh, answers appended to resp->body. */
static enum core_result run_ray_query(const struct mesh *mesh, const struct ray_query *q,
				      struct hit *hits, struct world_hit *wh, struct buf *b,
				      size_t *failed)
{
	const struct xform *xf = q->has_xform ? &q->xf : NULL;
	size_t i;

	for (i = 0; i < q->n; i++) {
		const struct qray *r = &q->rays[i];
		struct ray local = xf ? xform_ray_to_local(xf, &r->ray) : r->ray;
		uint32_t nh = 0, total = 0, k;
		enum core_result res;

		res = mesh_raycast(mesh, &local, &q->opts, hits, &nh, &total);
		if (res != CORE_OK) {
			*failed = i;
			return res;
		}
		if (i)
			buf_putc(b, ',');
		if (q->opts.mode == HIT_ALL) {
			for (k = 0; k < nh; k++)
				to_world_hit(mesh, xf, r, &hits[k], &wh[k]);
			encode_mesh_hits(b, wh, nh, total > nh, q->segments);
		} else if (nh) {
			to_world_hit(mesh, xf, r, &hits[0], &wh[0]);
			encode_mesh_hit(b, &wh[0], q->segments);
		} else {
			encode_miss(b);
		}
	}
	return CORE_OK;
}

static void handle_ray_query(const struct api_ctx *ctx, const struct api_request *req,
			     const struct api_match *m, struct api_response *resp, int segments)
{
	struct world_hit *wh = NULL;
	struct hit *hits = NULL;
	struct ray_query q;
	struct api_fail f;
	struct mesh *mesh;
	enum core_result r;
	size_t failed = 0;
	struct json_arena arena = JSON_ARENA_INIT;
	cJSON *root;

	resp->ray_kind = segments ? "mesh_segment" : "mesh_ray";
	root = parse_body(req, &arena, resp);
	if (!root)
		return;
	if (decode_ray_query(root, segments, &ctx->limits, &q, &f)) {
		api_respond_fail(resp, &f);
		goto out_release_arena;
	}
	mesh = lookup_mesh(ctx, m->name, resp);
	if (!mesh)
		goto out_release_query;
	hits = calloc(q.opts.max_hits, sizeof(*hits));
	wh = calloc(q.opts.max_hits, sizeof(*wh));
	if (!hits || !wh) {
		api_respond_error(resp, API_INTERNAL, "out of memory");
		goto out_free_hits;
	}
	buf_reserve(&resp->body, 32 + q.n * ENCODE_HIT_BYTES);
	if (q.batch)
		buf_puts(&resp->body, "{\"results\":[");
	r = run_ray_query(mesh, &q, hits, wh, &resp->body, &failed);
	if (r != CORE_OK) {
		respond_query_error(resp, r, segments ? "segments" : "rays", q.batch, failed);
		goto out_free_hits;
	}
	if (q.batch)
		buf_puts(&resp->body, "]}");
	resp->rays = q.n;
out_free_hits:
	free(hits);
	free(wh);
	mesh_unref(mesh);
out_release_query:
	ray_query_release(&q);
out_release_arena:
	json_arena_release(&arena);
}

void handle_mesh_raycast(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp)
{
	handle_ray_query(ctx, req, m, resp, 0);
}

void handle_mesh_segment(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp)
{
	handle_ray_query(ctx, req, m, resp, 1);
}

void handle_mesh_overlap(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp)
{
	struct overlap_query q;
	struct mesh_info mi;
	struct api_fail f;
	struct mesh *mesh;
	uint32_t *tris = NULL;
	size_t cap, count = 0;
	struct json_arena arena = JSON_ARENA_INIT;
	cJSON *root;

	resp->ray_kind = "overlap";
	root = parse_body(req, &arena, resp);
	if (!root)
		return;
	if (decode_overlap_query(root, &q, &f)) {
		api_respond_fail(resp, &f);
		goto out_release_arena;
	}
	mesh = lookup_mesh(ctx, m->name, resp);
	if (!mesh)
		goto out_release_arena;
	mesh_get_info(mesh, &mi);
	cap = q.limit < mi.triangles ? q.limit : mi.triangles;
	if (cap) {
		tris = malloc(cap * sizeof(*tris));	/* cap <= MESH_MAX_TRIANGLES */
		if (!tris) {
			api_respond_error(resp, API_INTERNAL, "out of memory");
			goto out_unref_mesh;
		}
	}
	if (mesh_overlap_obb(mesh, &q.box, tris, cap, &count) != CORE_OK) {
		api_respond_error(resp, API_INTERNAL, "out of memory");
		goto out_free_tris;
	}
	encode_overlap(&resp->body, count, tris, count < cap ? count : cap);
	resp->rays = 1;
out_free_tris:
	free(tris);
out_unref_mesh:
	mesh_unref(mesh);
out_release_arena:
	json_arena_release(&arena);
}

void handle_obb_raycast(const struct api_ctx *ctx, const struct api_request *req,
			const struct api_match *m, struct api_response *resp)
{
	struct obb_query q;
	struct api_fail f;
	struct buf *b = &resp->body;
	struct json_arena arena = JSON_ARENA_INIT;
	cJSON *root;
	size_t i;

	resp->ray_kind = "obb_ray";
	root = parse_body(req, &arena, resp);
	if (!root)
		return;
	if (decode_obb_query(root, &ctx->limits, &q, &f)) {
		api_respond_fail(resp, &f);
		goto out_release_arena;
	}
	buf_reserve(b, 32 + q.n * ENCODE_HIT_BYTES);
	if (q.batch)
		buf_puts(b, "{\"results\":[");
	for (i = 0; i < q.n; i++) {
		const struct qray *r = &q.rays[i];
		struct obb_hit h;
		size_t bi;

		if (i)
			buf_putc(b, ',');
		if (q.boxes.n && obb_raycast_first(q.boxes.boxes, q.boxes.n, &r->ray, &bi, &h))
			encode_obb_hit(b, bi, q.boxes.ids[bi], h.t, world_point(r, h.t), h.normal,
				       h.inside);
		else
			encode_miss(b);
	}
	if (q.batch)
		buf_puts(b, "]}");
	resp->rays = q.n;
	obb_query_release(&q);
out_release_arena:
	json_arena_release(&arena);
}

/*
 * One shot: the first box along the ray, then the mesh up to that box's
 * distance; a mesh hit at t <= the box's t wins (a wall flush with a hitbox
 * blocks the shot).
 */
static enum core_result hitscan_shot(const struct mesh *mesh, const struct hitscan_query *q,
				     const struct qray *r, struct buf *b)
{
	const struct xform *xf = q->has_xform ? &q->xf : NULL;
	struct query_opts opts = { HIT_CLOSEST, 0, xf && xf->det < 0, 1 };
	struct obb_hit bh;
	struct hit h;
	size_t bi = 0;
	uint32_t nh = 0;
	int box_hit;

	box_hit = q->boxes.n && obb_raycast_first(q->boxes.boxes, q->boxes.n, &r->ray, &bi, &bh);
	if (mesh) {
		struct ray local = xf ? xform_ray_to_local(xf, &r->ray) : r->ray;
		enum core_result res;

		if (box_hit)
			local.tmax = bh.t > 0 ? bh.t : FLT_TRUE_MIN;
		res = mesh_raycast(mesh, &local, &opts, &h, &nh, NULL);
		if (res != CORE_OK)
			return res;
		if (nh && (!box_hit || h.t <= bh.t)) {
			vec3 point, normal;

			hit_to_world(mesh, xf, r, &h, &point, &normal);
			encode_hitscan_mesh(b, h.t, point, normal, h.triangle);
			return CORE_OK;
		}
	}
	if (box_hit)
		encode_hitscan_box(b, bh.t, world_point(r, bh.t), bh.normal, bi, q->boxes.ids[bi]);
	else
		encode_hitscan_miss(b);
	return CORE_OK;
}

void handle_hitscan(const struct api_ctx *ctx, const struct api_request *req,
		    const struct api_match *m, struct api_response *resp)
{
	struct hitscan_query q;
	struct mesh *mesh = NULL;
	struct api_fail f;
	struct buf *b = &resp->body;
	enum core_result r;
	struct json_arena arena = JSON_ARENA_INIT;
	cJSON *root;
	size_t i;

	resp->ray_kind = "hitscan";
	root = parse_body(req, &arena, resp);
	if (!root)
		return;
	if (decode_hitscan_query(root, &ctx->limits, &q, &f)) {
		api_respond_fail(resp, &f);
		goto out_release_arena;
	}
	if (q.mesh) {
		mesh = lookup_mesh(ctx, q.mesh, resp);
		if (!mesh)
			goto out_release_query;
	}
	buf_reserve(b, 32 + q.n * ENCODE_HIT_BYTES);
	if (q.batch)
		buf_puts(b, "{\"results\":[");
	for (i = 0; i < q.n; i++) {
		if (i)
			buf_putc(b, ',');
		r = hitscan_shot(mesh, &q, &q.rays[i], b);
		if (r != CORE_OK) {
			respond_query_error(resp, r, "shots", q.batch, i);
			goto out_unref_mesh;
		}
	}
	if (q.batch)
		buf_puts(b, "]}");
	resp->rays = q.n;
out_unref_mesh:
	mesh_unref(mesh);
out_release_query:
	hitscan_query_release(&q);
out_release_arena:
	json_arena_release(&arena);
}
