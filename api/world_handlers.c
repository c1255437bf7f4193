/* world_handlers.c - /v1/worlds: create, inspect and delete worlds, ingest
 * snapshots, and answer rewound hitscans and static raycasts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "encode.h"
#include "handlers.h"
#include "world_decode.h"
#include "world_registry.h"

/* A world shot costs a few microseconds (rewind, entities, the level): a
 * batch of 256 is worth splitting over the worker threads (batch.h). */
#define WORLD_SPLIT_MIN 256
/* About the smallest shot a game server sends (origin, direction, time and
 * the shooter to ignore, at float32 precision): the body's shot count is
 * guessed from its length to wake the pool before parsing. */
#define WORLD_SHOT_BYTES 100

static void put_str(struct buf *b, const char *s)
{
	buf_put_json_string(b, s, strlen(s));
}

/* The body parsed into arena; NULL after answering an error. */
static cJSON *parse(const struct api_request *req, struct json_arena *arena,
		    struct api_response *resp)
{
	struct api_fail f;
	cJSON *root = NULL;

	if (api_json_parse_in(req->body, req->body_len, arena, &root, &f) != API_OK) {
		api_respond_fail(resp, &f);
		return NULL;
	}
	return root;
}

/* The named world (a reference), or NULL after a 404. */
static struct world *lookup(const struct api_ctx *ctx, const struct api_match *m,
			    struct api_response *resp)
{
	char msg[160];
	struct world *w = ctx->worlds ? world_registry_get(ctx->worlds, m->name) : NULL;

	if (!w) {
		snprintf(msg, sizeof(msg), "world: no world named \"%s\"", m->name);
		api_respond_error(resp, API_WORLD_NOT_FOUND, msg);
	}
	return w;
}

/* {"name", "instances", "entities", "hitboxes", "ticks", "oldest": {"tick",
 * "time_ms"} | null, "newest": ..., "history_ms", "teleport_distance",
 * "snapshots_ingested"} */
static void encode_world_info(struct buf *b, const char *name, struct world *w)
{
	struct world_info in;
	int k;

	world_get_info(w, &in);
	PUT_LIT(b, "{\"name\":");
	put_str(b, name);
	PUT_LIT(b, ",\"instances\":");
	buf_put_u64(b, in.instances);
	PUT_LIT(b, ",\"entities\":");
	buf_put_u64(b, in.entities);
	PUT_LIT(b, ",\"hitboxes\":");
	buf_put_u64(b, in.hitboxes);
	PUT_LIT(b, ",\"ticks\":");
	buf_put_u64(b, in.ticks);
	for (k = 0; k < 2; k++) {
		buf_puts(b, k ? ",\"newest\":" : ",\"oldest\":");
		if (!in.ticks) {
			PUT_LIT(b, "null");
			continue;
		}
		PUT_LIT(b, "{\"tick\":");
		buf_put_u64(b, k ? in.newest_tick : in.oldest_tick);
		PUT_LIT(b, ",\"time_ms\":");
		buf_put_double(b, k ? in.newest_time_ms : in.oldest_time_ms);
		buf_putc(b, '}');
	}
	PUT_LIT(b, ",\"history_ms\":");
	buf_put_double(b, in.opts.history_ms);
	PUT_LIT(b, ",\"teleport_distance\":");
	buf_put_double(b, in.opts.teleport_distance);
	PUT_LIT(b, ",\"snapshots_ingested\":");
	buf_put_u64(b, in.snapshots_ingested);
	buf_putc(b, '}');
}

void handle_world_list(const struct api_ctx *ctx, const struct api_request *req,
		       const struct api_match *m, struct api_response *resp)
{
	struct world_entry *e = NULL;
	size_t n = 0, i;

	if (ctx->worlds && world_registry_list(ctx->worlds, &e, &n) != CORE_OK) {
		api_respond_error(resp, API_INTERNAL, "out of memory");
		return;
	}
	PUT_LIT(&resp->body, "{\"worlds\":[");
	for (i = 0; i < n; i++) {
		if (i)
			buf_putc(&resp->body, ',');
		encode_world_info(&resp->body, e[i].name, e[i].world);
	}
	PUT_LIT(&resp->body, "]}");
	world_registry_list_free(e, n);
}

void handle_world_get(const struct api_ctx *ctx, const struct api_request *req,
		      const struct api_match *m, struct api_response *resp)
{
	struct world *w = lookup(ctx, m, resp);

	if (!w)
		return;
	encode_world_info(&resp->body, m->name, w);
	world_unref(w);
}

void handle_world_delete(const struct api_ctx *ctx, const struct api_request *req,
			 const struct api_match *m, struct api_response *resp)
{
	char msg[160];

	if (!ctx->worlds || world_registry_delete(ctx->worlds, m->name) != CORE_OK) {
		snprintf(msg, sizeof(msg), "world: no world named \"%s\"", m->name);
		api_respond_error(resp, API_WORLD_NOT_FOUND, msg);
		return;
	}
	resp->status = 204;
}

void handle_world_put(const struct api_ctx *ctx, const struct api_request *req,
		      const struct api_match *m, struct api_response *resp)
{
	struct json_arena arena = JSON_ARENA_INIT;
	struct world_put_req q;
	struct world_opts o;
	struct world_fail wf;
	struct world *w = NULL;
	struct api_fail f;
	enum core_result r;
	char msg[200];
	cJSON *root;
	int created = 0;

	if (!ctx->worlds) {
		api_respond_error(resp, API_NOT_FOUND, "worlds are not enabled");
		return;
	}
	root = parse(req, &arena, resp);
	if (!root)
		goto out_release_arena;
	if (decode_world_put(root, &ctx->world_limits, &q, &f)) {
		api_respond_fail(resp, &f);
		goto out_release_arena;
	}
	o.history_ms = q.history_ms;
	o.teleport_distance = q.teleport_distance;
	o.max_snapshots = ctx->world_limits.max_snapshots >= 2 ? ctx->world_limits.max_snapshots : 256;
	r = world_new(ctx->store, q.inst, q.n, &o, &w, &wf);
	if (r == CORE_ENOTFOUND) {
		snprintf(msg, sizeof(msg), "static[%zu].mesh: no mesh named \"%s\" (instance \"%.64s\")",
			 wf.item, q.inst[wf.item].mesh, q.inst[wf.item].id);
		api_respond_error(resp, API_MESH_NOT_FOUND, msg);
		goto out_release_query;
	}
	if (r == CORE_EINVAL && wf.item != WORLD_NONE) {
		snprintf(msg, sizeof(msg), "static[%zu].id: \"%.64s\" is used by an earlier instance",
			 wf.item, q.inst[wf.item].id);
		api_respond_error(resp, API_INVALID_REQUEST, msg);
		goto out_release_query;
	}
	if (r != CORE_OK) {
		api_respond_error(resp, r == CORE_ENOMEM ? API_INTERNAL : API_INVALID_REQUEST,
				  core_result_str(r));
		goto out_release_query;
	}
	world_ref(w);	/* kept for the answer */
	r = world_registry_put(ctx->worlds, m->name, w, ctx->world_limits.max_worlds, &created);
	if (r == CORE_ETOOBIG) {
		snprintf(msg, sizeof(msg), "world: %zu worlds are held, the limit (--max-worlds)",
			 ctx->world_limits.max_worlds);
		api_respond_error(resp, API_PAYLOAD_TOO_LARGE, msg);
	} else if (r != CORE_OK) {
		api_respond_error(resp, API_INTERNAL, core_result_str(r));
	} else {
		resp->status = created ? 201 : 200;
		encode_world_info(&resp->body, m->name, w);
	}
	world_unref(w);
out_release_query:
	world_put_req_release(&q);
out_release_arena:
	json_arena_release(&arena);
}

void handle_world_snapshot(const struct api_ctx *ctx, const struct api_request *req,
			   const struct api_match *m, struct api_response *resp)
{
	struct json_arena arena = JSON_ARENA_INIT;
	struct snapshot_req q;
	struct world_fail wf;
	struct world *w;
	struct api_fail f;
	enum core_result r;
	char msg[240];
	cJSON *root;

	/* a plainly valid snapshot without a tree; anything else (every error)
	 * the tree's way. A long one is parsed by two threads: one worker
	 * wakes while this one starts. */
	if (req->body_len >= WORLD_SNAPSHOT_SPLIT_BYTES)
		batch_pool_warm(ctx->pool, 2, 2);
	if (!world_snapshot_direct(req->body, req->body_len, &ctx->world_limits, ctx->pool, &q)) {
		root = parse(req, &arena, resp);
		if (!root)
			goto out_release_arena;
		if (decode_snapshot(root, &ctx->world_limits, &q, &f)) {
			api_respond_fail(resp, &f);
			goto out_release_arena;
		}
	}
	w = lookup(ctx, m, resp);
	if (!w)
		goto out_release_query;
	r = world_ingest(w, q.tick, q.time_ms, q.ents, q.n, &wf);
	switch (r) {
	case CORE_OK:
		resp->status = 204;
		resp->world_snapshots = 1;
		break;
	case CORE_ECONFLICT: {
		struct world_info in;

		world_get_info(w, &in);
		snprintf(msg, sizeof(msg),
			 "tick: %llu at time_ms %.17g is not after the newest held (tick %llu at %.17g)",
			 (unsigned long long)q.tick, q.time_ms, (unsigned long long)in.newest_tick,
			 in.newest_time_ms);
		api_respond_error(resp, API_CONFLICT, msg);
		break;
	}
	case CORE_ENOTFOUND:
		snprintf(msg, sizeof(msg), "entities[%zu].hitboxes[%zu].mesh: no mesh named \"%s\"",
			 wf.item, wf.hitbox, q.ents[wf.item].hitboxes[wf.hitbox].mesh);
		api_respond_error(resp, API_MESH_NOT_FOUND, msg);
		break;
	case CORE_EINVAL:
		if (wf.item != WORLD_NONE && wf.hitbox != WORLD_NONE)
			snprintf(msg, sizeof(msg),
				 "entities[%zu].hitboxes[%zu].id: \"%.64s\" is used twice in the entity (or the shape is invalid)",
				 wf.item, wf.hitbox, q.ents[wf.item].hitboxes[wf.hitbox].id);
		else if (wf.item != WORLD_NONE)
			snprintf(msg, sizeof(msg), "entities[%zu].id: \"%.64s\" is used by another entity",
				 wf.item, q.ents[wf.item].id);
		else
			snprintf(msg, sizeof(msg), "body: invalid snapshot");
		api_respond_error(resp, API_INVALID_REQUEST, msg);
		break;
	case CORE_ETOOBIG:
		api_respond_error(resp, API_PAYLOAD_TOO_LARGE, "entities: too many hitboxes");
		break;
	case CORE_ENOSPACE:
		api_respond_memory_full(resp, "snapshot");
		break;
	default:
		api_respond_error(resp, API_INTERNAL, core_result_str(r));
	}
	world_unref(w);
out_release_query:
	snapshot_req_release(&q);
out_release_arena:
	json_arena_release(&arena);
}

/* One hit's fields (no braces): static or entity. */
static void encode_hit_fields(struct buf *b, const struct world_shot_hit *h)
{
	if (h->kind == WORLD_HIT_STATIC) {
		PUT_LIT(b, "\"hit\":\"static\",\"instance\":");
		put_str(b, h->instance);
		PUT_LIT(b, ",\"mesh\":");
		put_str(b, h->mesh);
		PUT_LIT(b, ",\"triangle\":");
		buf_put_u64(b, h->triangle);
	} else {
		PUT_LIT(b, "\"hit\":\"entity\",\"entity\":");
		put_str(b, h->entity);
		PUT_LIT(b, ",\"hitbox\":");
		put_str(b, h->hitbox);
		if (h->triangle != WORLD_NONE) {
			PUT_LIT(b, ",\"mesh\":");
			put_str(b, h->mesh);
			PUT_LIT(b, ",\"triangle\":");
			buf_put_u64(b, h->triangle);
		}
		buf_puts(b, h->inside ? ",\"inside\":true" : ",\"inside\":false");
	}
	encode_dpn(b, h->t, h->point, h->normal);
}

static void encode_time(struct buf *b, int has, double t)
{
	PUT_LIT(b, "\"time_ms\":");
	if (has)
		buf_put_double(b, t);
	else
		PUT_LIT(b, "null");
}

/* One shot's answer; with_time for hitscan. */
static void encode_shot(struct buf *b, const struct world_shots_req *q,
			const struct world_shot_hit *hits, uint32_t n, uint32_t total, int with_time,
			int has_time, double t)
{
	uint32_t i;

	buf_putc(b, '{');
	if (q->mode == HIT_ALL) {
		PUT_LIT(b, "\"hits\":[");
		for (i = 0; i < n; i++) {
			if (i)
				buf_putc(b, ',');
			buf_putc(b, '{');
			encode_hit_fields(b, &hits[i]);
			buf_putc(b, '}');
		}
		buf_puts(b, total > n ? "],\"truncated\":true" : "],\"truncated\":false");
	} else if (n) {
		encode_hit_fields(b, &hits[0]);
	} else {
		PUT_LIT(b, "\"hit\":null");
	}
	if (with_time) {
		buf_putc(b, ',');
		encode_time(b, has_time, t);
	}
	buf_putc(b, '}');
}

/* What every shot of one request reads (read-only while the batch runs,
 * but for the outcome counters). */
struct shots_run {
	const struct world_view *v;
	const struct world_shots_req *q;
	int static_only;
	unsigned char *outcome;	/* per shot, API_SHOT_*: summed after the batch (one
				 * counter shared by the threads would bounce its
				 * cache line between them at every shot) */
};

/* The batch driver's item: shot i answered into out; scratch holds
 * max(1, max_hits) hits. */
static enum core_result shot_item(const void *cls, size_t i, void *scratch, struct buf *out)
{
	const struct shots_run *run = cls;	/* only run->outcome[i] is written */
	const struct world_shots_req *q = run->q;
	struct world_shot_hit *hits = scratch;
	uint32_t n = 0, total = 0;
	double used = 0;
	int has = 0;
	enum core_result r;

	if (run->static_only)
		r = world_raycast(run->v, &q->shots[i], q->mode, q->max_hits, hits, &n, &total, NULL);
	else
		r = world_hitscan(run->v, &q->shots[i], q->mode, q->max_hits, hits, &n, &total, &used,
				  &has, NULL);
	if (r != CORE_OK)
		return r;
	encode_shot(out, q, hits, n, total, !run->static_only, has, used);
	run->outcome[i] = !n ? API_SHOT_MISS :
			  hits[0].kind == WORLD_HIT_STATIC ? API_SHOT_STATIC : API_SHOT_ENTITY;
	return CORE_OK;
}

/* hitscan (static_only 0) and raycast (1): the body, then the world, then
 * the instances' meshes (400 before 404); the shots through the batch
 * driver. */
static void world_query(const struct api_ctx *ctx, const struct api_request *req,
			const struct api_match *m, struct api_response *resp, int static_only)
{
	struct json_arena arena = JSON_ARENA_INIT;
	struct world_shots_req q;
	struct world_view *v = NULL;
	struct shots_run run;
	struct batch_job job;
	struct world *w;
	struct api_fail f;
	enum core_result r;
	char msg[240];
	cJSON *root;
	size_t bad = 0, failed = 0, i;

	resp->ray_kind = static_only ? "world_raycast" : "world_hitscan";
	/* the workers wake while the body is parsed */
	batch_pool_warm(ctx->pool, req->body_len / WORLD_SHOT_BYTES, WORLD_SPLIT_MIN);
	/* a plainly valid batch without a tree; anything else (every error) the tree's way */
	if (!world_shots_direct(req->body, req->body_len, &ctx->limits, static_only, ctx->pool,
				&q)) {
		root = parse(req, &arena, resp);
		if (!root)
			goto out_release_arena;
		if (decode_world_shots(root, &ctx->limits, static_only, &q, &f)) {
			api_respond_fail(resp, &f);
			goto out_release_arena;
		}
	}
	w = lookup(ctx, m, resp);
	if (!w)
		goto out_release_query;
	r = world_view_acquire(w, &v, &bad);
	if (r == CORE_ENOTFOUND) {
		const char *id, *mesh;
		uint32_t layer;

		world_instance(w, bad, &id, &mesh, &layer);
		snprintf(msg, sizeof(msg), "static[%zu]: instance \"%.64s\" names mesh \"%s\", which is not stored",
			 bad, id, mesh);
		api_respond_error(resp, API_MESH_NOT_FOUND, msg);
		goto out_unref_world;
	}
	if (r != CORE_OK) {
		api_respond_error(resp, API_INTERNAL, core_result_str(r));
		goto out_unref_world;
	}
	run.v = v;
	run.q = &q;
	run.static_only = static_only;
	/* zeroed: a batch cut short by the response cap leaves the shots it
	 * did not run unwritten */
	run.outcome = calloc(q.n ? q.n : 1, 1);
	if (!run.outcome) {
		api_respond_error(resp, API_INTERNAL, core_result_str(CORE_ENOMEM));
		goto out_release_view;
	}
	job = (struct batch_job){ q.n, q.batch ? BATCH_JSON : BATCH_ONE, ENCODE_HIT_BYTES,
				  (q.mode == HIT_ALL ? q.max_hits : 1) * sizeof(struct world_shot_hit),
				  shot_item, &run, WORLD_SPLIT_MIN, 0, 0 };
	r = batch_run(ctx->pool, &job, &resp->body, &failed);
	if (r == CORE_ERANGE) {
		if (q.batch)
			snprintf(msg, sizeof(msg), "shots[%zu].time_ms: older than the history held", failed);
		else
			snprintf(msg, sizeof(msg), "time_ms: older than the history held");
		api_respond_error(resp, API_INVALID_REQUEST, msg);
	} else if (r != CORE_OK) {
		api_respond_error(resp, r == CORE_ENOMEM ? API_INTERNAL : API_INVALID_REQUEST,
				  core_result_str(r));
	} else {
		/* a batch over the cap stopped early: its unrun outcomes are the
		 * calloc's zeros, and api_handle counts none of it (a 413) */
		uint64_t count[3] = { 0, 0, 0 };

		resp->rays = q.n;
		for (i = 0; !static_only && i < q.n; i++)
			count[run.outcome[i]]++;
		memcpy(resp->world_shots, count, sizeof(count));
	}
	free(run.outcome);
out_release_view:
	world_view_release(v);
out_unref_world:
	world_unref(w);
out_release_query:
	world_shots_req_release(&q);
out_release_arena:
	json_arena_release(&arena);
}

void handle_world_hitscan(const struct api_ctx *ctx, const struct api_request *req,
			  const struct api_match *m, struct api_response *resp)
{
	world_query(ctx, req, m, resp, 0);
}

void handle_world_raycast(const struct api_ctx *ctx, const struct api_request *req,
			  const struct api_match *m, struct api_response *resp)
{
	world_query(ctx, req, m, resp, 1);
}
