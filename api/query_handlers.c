/* query_handlers.c - ray, segment, overlap, OBB and hitscan queries: each
 * endpoint is a decoder, an item callback and its encoder; answer_query
 * runs every one of them through the batch driver. */
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "encode.h"
#include "handlers.h"

/* What the items of one query are cast against; read-only while the batch
 * runs (several threads share it). */
struct query_run {
	const struct query *q;
	const struct mesh *mesh;	/* NULL: boxes only */
	const struct xform *xf;		/* NULL: the mesh is placed at the origin */
	int grouped;			/* mesh rays answered in groups (cast_grouped) */
};

/*
 * Rays of a batch against a large mesh are cast MESH_GROUP at a time: the
 * group's first item casts them all (mesh_query_batch interleaves their
 * walks through the BVH, which on a mesh larger than the caches answers
 * 1.2-1.7x as many rays a second), the others read their answer from the
 * item's scratch; the batch driver keeps each group in one chunk
 * (batch_job.group). Batches of fewer than MESH_GROUP_MIN rays are cast one
 * by one.
 */
#define MESH_GROUP 256
#define MESH_GROUP_MIN 16

struct mesh_group {
	struct qray rays[MESH_GROUP];	/* binary batches: the decoded records */
	struct ray local[MESH_GROUP];
	struct hit hits[MESH_GROUP];
	struct world_hit out[MESH_GROUP];
	uint32_t nh[MESH_GROUP];
	enum core_result res[MESH_GROUP];
};

/* An item's scratch: room for max_hits core hits, their world hits and, for
 * mode all, core's candidates (so no ray allocates). */
static size_t mesh_scratch_bytes(const struct query *q)
{
	size_t n = q->opts.max_hits;

	return n * (sizeof(struct hit) + sizeof(struct world_hit)) +
	       (q->opts.mode == HIT_ALL ? MESH_ALL_SCRATCH_BYTES(n) : 0);
}

static enum core_result cast(const struct query_run *run, const struct qray *r, void *scratch,
			     const struct world_hit **wh, uint32_t *nh, uint32_t *total)
{
	struct query_opts o = run->q->opts;
	struct hit *hits = scratch;
	struct world_hit *out = (struct world_hit *)(hits + o.max_hits);

	*wh = out;
	if (o.mode == HIT_ALL) {
		o.scratch = out + o.max_hits;
		o.scratch_bytes = MESH_ALL_SCRATCH_BYTES(o.max_hits);
	}
	return mesh_query(run->mesh, run->xf, r, &o, hits, out, nh, total);
}

/* The rays of the group starting at item i: how many. */
static size_t group_size(const struct query *q, size_t i)
{
	return q->n - i < MESH_GROUP ? q->n - i : MESH_GROUP;
}

/* Cast r[0..n) into g (mesh_query_batch: their walks interleaved). */
static enum core_result group_cast(const struct query_run *run, const struct qray *r, size_t n,
				   struct mesh_group *g)
{
	struct mesh_query_room room = { g->local, g->hits };

	return mesh_query_batch(run->mesh, run->xf, r, n, &run->q->opts, &room, g->out, g->nh,
				g->res);
}

/* Item k of group g's answer. */
static enum core_result group_answer(const struct mesh_group *g, size_t k,
				     const struct world_hit **wh, uint32_t *nh)
{
	if (g->res[k] != CORE_OK)
		return g->res[k];
	*wh = &g->out[k];
	*nh = g->nh[k];
	return CORE_OK;
}

/* Item i's answer from its group's (cast when i is the group's first). */
static enum core_result cast_grouped(const struct query_run *run, size_t i, void *scratch,
				     const struct world_hit **wh, uint32_t *nh)
{
	struct mesh_group *g = scratch;
	const struct query *q = run->q;

	if (i % MESH_GROUP == 0) {
		size_t n = group_size(q, i);
		enum core_result res;

		if (!q->rays)
			for (size_t j = 0; j < n; j++)
				binary_ray(q, i + j, &g->rays[j]);
		res = group_cast(run, q->rays ? q->rays + i : g->rays, n, g);
		if (res != CORE_OK)
			return res;
	}
	return group_answer(g, i % MESH_GROUP, wh, nh);
}

/* raycast / segment, JSON: a hit, a miss, or mode all's list. */
static enum core_result item_mesh_json(const void *cls, size_t i, void *scratch, struct buf *b)
{
	const struct query_run *run = cls;
	const struct query *q = run->q;
	const struct world_hit *wh;
	uint32_t nh = 0, total = 0;
	enum core_result res;

	if (run->grouped)
		res = cast_grouped(run, i, scratch, &wh, &nh);
	else
		res = cast(run, &q->rays[i], scratch, &wh, &nh, &total);
	if (res != CORE_OK)
		return res;
	if (q->opts.mode == HIT_ALL)
		encode_mesh_hits(b, wh, nh, total > nh, q->segments);
	else if (nh)
		encode_mesh_hit(b, &wh[0], q->segments);
	else
		encode_miss(b);
	return CORE_OK;
}

/* raycast, binary: {int32 triangle (-1: miss), float32 distance}. */
static enum core_result item_mesh_binary(const void *cls, size_t i, void *scratch, struct buf *b)
{
	const struct query_run *run = cls;
	const struct world_hit *wh;
	struct qray ray;
	uint32_t nh = 0;
	enum core_result res;

	if (run->grouped) {
		res = cast_grouped(run, i, scratch, &wh, &nh);
	} else {
		binary_ray(run->q, i, &ray);
		res = cast(run, &ray, scratch, &wh, &nh, NULL);
	}
	if (res != CORE_OK)
		return res;
	encode_binary_hit(b, nh ? (int32_t)wh[0].triangle : -1, nh ? wh[0].distance : INFINITY);
	return CORE_OK;
}

/* obb/raycast: the first box along the ray. */
static enum core_result item_obb(const void *cls, size_t i, void *scratch, struct buf *b)
{
	const struct query *q = ((const struct query_run *)cls)->q;
	const struct qray *r = &q->rays[i];
	struct obb_hit h;
	size_t bi;

	if (q->boxes.n && obb_raycast_first(q->boxes.boxes, q->boxes.n, &r->ray, &bi, &h))
		encode_obb_hit(b, bi, q->boxes.ids[bi], qray_distance(r, h.t), qray_point(r, h.t),
			       h.normal, h.inside);
	else
		encode_miss(b);
	return CORE_OK;
}

/* A hitscan's answer from its box test (box_hit: bi, bh) and its mesh cast
 * up to that box (nh, wh: hitscan_shot): any mesh hit there wins (a wall
 * flush with a hitbox blocks the shot). */
static void hitscan_answer(struct buf *b, const struct query *q, const struct qray *r,
			   int box_hit, size_t bi, const struct obb_hit *bh, uint32_t nh,
			   const struct world_hit *wh)
{
	if (nh)
		encode_hitscan_mesh(b, wh->distance, wh->point, wh->normal, wh->triangle);
	else if (box_hit)
		encode_hitscan_box(b, qray_distance(r, bh->t), qray_point(r, bh->t), bh->normal, bi,
				   q->boxes.ids[bi]);
	else
		encode_hitscan_miss(b);
}

/* The first box along r: 1 and bi, bh when one is met. */
static int hitscan_box(const struct query *q, const struct qray *r, size_t *bi,
		       struct obb_hit *bh)
{
	return q->boxes.n && obb_raycast_first(q->boxes.boxes, q->boxes.n, &r->ray, bi, bh);
}

/* The mesh part of a shot: the ray cut a float past its box's t (the box's
 * t is its exact entry rounded either way: a wall exactly flush with the
 * box must still be met, and then wins), never past the ray's own limit. */
static struct qray hitscan_shot(const struct qray *r, int box_hit, const struct obb_hit *bh)
{
	struct qray shot = *r;

	if (box_hit)
		shot.ray.tmax = fminf(nextafterf(bh->t, INFINITY), r->ray.tmax);
	return shot;
}

/*
 * hitscan: the first box along the ray, then the mesh up to that box's
 * distance (hitscan_answer). Against a large mesh, shots go in groups as
 * rays do (cast_grouped): the group's first item tests every shot's boxes,
 * then casts the cut rays at once.
 */
struct hitscan_group {
	struct mesh_group g;	/* the cut rays (g.rays) and their mesh answers */
	struct obb_hit bh[MESH_GROUP];
	size_t bi[MESH_GROUP];
	unsigned char box_hit[MESH_GROUP];
};

static enum core_result item_hitscan(const void *cls, size_t i, void *scratch, struct buf *b)
{
	const struct query_run *run = cls;
	const struct query *q = run->q;
	const struct qray *r = &q->rays[i];
	const struct world_hit *wh = NULL;
	struct obb_hit bh;
	size_t bi = 0;
	uint32_t nh = 0;
	int box_hit;
	enum core_result res;

	if (run->grouped) {
		struct hitscan_group *hg = scratch;
		size_t k = i % MESH_GROUP;

		if (k == 0) {
			size_t n = group_size(q, i);

			for (size_t j = 0; j < n; j++) {
				hg->box_hit[j] = (unsigned char)hitscan_box(q, r + j, &hg->bi[j],
									   &hg->bh[j]);
				hg->g.rays[j] = hitscan_shot(r + j, hg->box_hit[j], &hg->bh[j]);
			}
			res = group_cast(run, hg->g.rays, n, &hg->g);
			if (res != CORE_OK)
				return res;
		}
		res = group_answer(&hg->g, k, &wh, &nh);
		if (res != CORE_OK)
			return res;
		hitscan_answer(b, q, r, hg->box_hit[k], hg->bi[k], &hg->bh[k], nh, wh);
		return CORE_OK;
	}
	box_hit = hitscan_box(q, r, &bi, &bh);
	if (run->mesh) {
		struct qray shot = hitscan_shot(r, box_hit, &bh);

		res = cast(run, &shot, scratch, &wh, &nh, NULL);
		if (res != CORE_OK)
			return res;
	}
	hitscan_answer(b, q, r, box_hit, bi, &bh, nh, wh);
	return CORE_OK;
}

/* A core failure for item i of a batch (or the one item) as an api error. */
static void respond_query_error(struct api_response *resp, enum core_result r,
				const struct query *q, size_t i)
{
	char msg[160];

	if (r == CORE_ENOMEM) {
		api_respond_error(resp, API_INTERNAL, "out of memory");
		return;
	}
	if (q->batch)
		snprintf(msg, sizeof(msg), "%s[%zu]: not a valid ray once moved into mesh space (transform)",
			 q->items, i);
	else
		snprintf(msg, sizeof(msg), "transform: moves the ray out of the float range");
	api_respond_error(resp, API_INVALID_REQUEST, msg);
}

static void mesh_not_found(struct api_response *resp, const char *name)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "no mesh named '%s'", name);
	api_respond_error(resp, API_MESH_NOT_FOUND, msg);
}

static struct mesh *lookup_mesh(const struct api_ctx *ctx, const char *name,
				struct api_response *resp)
{
	struct mesh *mesh = store_get(ctx->store, name, NULL);

	if (!mesh)
		mesh_not_found(resp, name);
	return mesh;
}

/*
 * The one request skeleton of every query: look the mesh up (mesh_name
 * NULL: none), run the items through the batch driver into resp's body,
 * map a failure to an error answer.
 */
static void answer_query(const struct api_ctx *ctx, const struct query *q, const char *mesh_name,
			 batch_item_fn item, enum batch_framing framing, size_t answer_bytes,
			 struct api_response *resp)
{
	struct query_run run = { q, NULL, q->has_xform ? &q->xf : NULL, 0 };
	struct batch_job job = { q->n, framing, answer_bytes, 0, item, &run, 0, 0, 0 };
	struct mesh *mesh = NULL;
	enum core_result r;
	size_t failed;

	/* The mesh is used without a reference, inside a read section: the
	 * store's cache lines stay unwritten by queries (store.h). */
	store_read_begin();
	if (mesh_name) {
		mesh = store_peek(ctx->store, mesh_name, NULL);
		if (!mesh) {
			store_read_end();
			mesh_not_found(resp, mesh_name);
			return;
		}
		run.mesh = mesh;
		job.scratch_bytes = mesh_scratch_bytes(q);
		if ((item == item_mesh_json || item == item_mesh_binary || item == item_hitscan) &&
		    q->opts.mode != HIT_ALL && q->n >= MESH_GROUP_MIN) {
			struct mesh_info mi;

			mesh_get_info(mesh, &mi);
			if (mi.memory_bytes >= MESH_BATCH_WALK_BYTES) {
				run.grouped = 1;
				job.group = MESH_GROUP;
				job.scratch_bytes = item == item_hitscan ?
							    sizeof(struct hitscan_group) :
							    sizeof(struct mesh_group);
			}
		}
	}
	r = batch_run(ctx->pool, &job, &resp->body, &failed);
	store_read_end();
	if (r != CORE_OK)
		respond_query_error(resp, r, q, failed);
	else
		resp->rays = q->n;
}

typedef enum api_err (*query_decoder)(const cJSON *root, const struct api_limits *lim,
				      struct query *q, struct api_fail *f);
/* A tree-free fast path of a query_decoder: 1 decoded, 0 declined (decode.h);
 * a holds whatever q points into. */
typedef int (*query_direct)(const char *body, size_t len, const struct api_limits *lim,
			    struct json_arena *a, struct query *q);

/* A JSON query endpoint: what api_json_query needs to answer it. */
struct json_endpoint {
	const char *ray_kind;		/* metrics */
	query_decoder decode;
	query_direct direct;		/* tried first when not NULL */
	batch_item_fn item;
	int mesh_in_path;		/* the mesh is {name}; else the body's "mesh" (if any) */
};

/* About the smallest JSON ray or segment a client sends at float32
 * precision: the body's item count is guessed from its length before it is
 * parsed, to wake the pool (batch_pool_warm). */
#define JSON_RAY_BYTES 80

/* Parse, decode, answer, release: a JSON query body to its answer. */
static void api_json_query(const struct api_ctx *ctx, const struct api_request *req,
			   const struct api_match *m, struct api_response *resp,
			   const struct json_endpoint *ep)
{
	struct json_arena arena = JSON_ARENA_INIT;
	struct api_fail f;
	struct query q;
	cJSON *root;

	resp->ray_kind = ep->ray_kind;
	batch_pool_warm(ctx->pool, req->body_len / JSON_RAY_BYTES, 0);	/* while it parses */
	if ((!ep->direct || !ep->direct(req->body, req->body_len, &ctx->limits, &arena, &q)) &&
	    (api_json_parse_in(req->body, req->body_len, &arena, &root, &f) ||
	     ep->decode(root, &ctx->limits, &q, &f))) {
		api_respond_fail(resp, &f);
		json_arena_release(&arena);
		return;
	}
	answer_query(ctx, &q, ep->mesh_in_path ? m->name : q.mesh, ep->item,
		     q.batch ? BATCH_JSON : BATCH_ONE, ENCODE_HIT_BYTES, resp);
	query_release(&q);
	json_arena_release(&arena);
}

static int ray_direct(const char *body, size_t len, const struct api_limits *lim,
		      struct json_arena *a, struct query *q)
{
	return decode_ray_query_direct(body, len, lim, q);
}

static int segment_direct(const char *body, size_t len, const struct api_limits *lim,
			  struct json_arena *a, struct query *q)
{
	return decode_segment_query_direct(body, len, lim, q);
}

static const struct json_endpoint ep_raycast = {
	"mesh_ray", decode_ray_query, ray_direct, item_mesh_json, 1 };
static const struct json_endpoint ep_segment = {
	"mesh_segment", decode_segment_query, segment_direct, item_mesh_json, 1 };
static const struct json_endpoint ep_obb = {
	"obb_ray", decode_obb_query, decode_obb_query_direct, item_obb, 0 };
static const struct json_endpoint ep_hitscan = {
	"hitscan", decode_hitscan_query, decode_hitscan_query_direct, item_hitscan, 0 };

void handle_mesh_raycast(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp)
{
	struct api_fail f;
	struct query q;

	/* api_handle took the Content-Type: JSON unless it named binary rays */
	if (!m->media || strcmp(m->media, "application/octet-stream") != 0) {
		api_json_query(ctx, req, m, resp, &ep_raycast);
		return;
	}
	resp->ray_kind = "mesh_ray";
	batch_pool_warm(ctx->pool, req->body_len / 28, 0);	/* 28-byte records */
	if (decode_binary_rays(req->body, req->body_len, req->args, &ctx->limits, &q, &f)) {
		api_respond_fail(resp, &f);
		return;
	}
	resp->content_type = "application/octet-stream";
	answer_query(ctx, &q, m->name, item_mesh_binary, BATCH_BINARY, ENCODE_BINARY_HIT_BYTES, resp);
	query_release(&q);
}

void handle_mesh_segment(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp)
{
	api_json_query(ctx, req, m, resp, &ep_segment);
}

void handle_obb_raycast(const struct api_ctx *ctx, const struct api_request *req,
			const struct api_match *m, struct api_response *resp)
{
	api_json_query(ctx, req, m, resp, &ep_obb);
}

void handle_hitscan(const struct api_ctx *ctx, const struct api_request *req,
		    const struct api_match *m, struct api_response *resp)
{
	api_json_query(ctx, req, m, resp, &ep_hitscan);
}

void handle_mesh_overlap(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp)
{
	struct json_arena arena = JSON_ARENA_INIT;
	struct overlap_query q;
	struct mesh_info mi;
	struct api_fail f;
	struct mesh *mesh;
	uint32_t *tris = NULL;
	size_t cap, count = 0;
	cJSON *root;

	resp->ray_kind = "overlap";
	if (api_json_parse_in(req->body, req->body_len, &arena, &root, &f) ||
	    decode_overlap_query(root, &q, &f)) {
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
