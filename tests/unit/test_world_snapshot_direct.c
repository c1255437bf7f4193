/* test_world_snapshot_direct.c - world_snapshot_direct (the tree-free
 * snapshot decoder) against the tree path (api_json_parse_in +
 * decode_snapshot) as oracle: the same struct on random valid bodies, never
 * an acceptance the tree refuses on mutated ones, and through api_handle the
 * same answers. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "batch.h"
#include "decode.h"
#include "directcheck.h"
#include "json.h"
#include "shotgen.h"
#include "snapgen.h"
#include "store.h"
#include "teststr.h"
#include "world_decode.h"
#include "world_registry.h"

/* worlds, instances, entities, hitboxes in all, snapshots */
static const struct api_world_limits wlim = { 8, 16, 48, 600, 4 };

/* ---- the two paths */

/* The tree path's reading of body into q (API_OK) or f; a keeps the tree. */
static enum api_err tree_decode(const char *body, size_t len, struct json_arena *a,
				struct snapshot_req *q, struct api_fail *f)
{
	cJSON *root;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	if ((e = api_json_parse_in(body, len, a, &root, f)))
		return e;
	return decode_snapshot(root, &wlim, q, f);
}

#define SAME(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)

static int same_vec(vec3 a, vec3 b)
{
	return SAME(a.x, b.x) && SAME(a.y, b.y) && SAME(a.z, b.z);
}

/* a and b field by field: floats and doubles bitwise, ids by content. */
static void assert_same(const struct snapshot_req *a, const struct snapshot_req *b,
			const char *body)
{
	size_t i, k, at = 0;

	ck_assert_msg(a->tick == b->tick && SAME(a->time_ms, b->time_ms) && a->n == b->n &&
		      a->nhb == b->nhb, "header differs: %.400s", body);
	for (i = 0; i < a->n; i++) {
		const struct entity_in *e = &a->ents[i], *g = &b->ents[i];

		ck_assert_msg(strcmp(e->id, g->id) == 0 && e->layer == g->layer && e->n == g->n,
			      "entity %zu differs: %.400s", i, body);
		ck_assert_msg(e->hitboxes == a->hbs + at && g->hitboxes == b->hbs + at,
			      "entity %zu hitboxes not in place: %.400s", i, body);
		at += e->n;
		for (k = 0; k < e->n; k++) {
			const struct hitbox_in *h = &e->hitboxes[k], *j = &g->hitboxes[k];

			ck_assert_msg(strcmp(h->id, j->id) == 0 && h->shape == j->shape &&
				      same_vec(h->a, j->a) && same_vec(h->b, j->b) &&
				      SAME(h->radius, j->radius) && same_vec(h->size, j->size) &&
				      SAME(h->rot, j->rot) && !h->mesh && !j->mesh,
				      "entity %zu hitbox %zu differs: %.400s", i, k, body);
		}
	}
	ck_assert_uint_eq(at, a->nhb);
}

/* random valid bodies whose split parse joined two parts, at least */
#define SPLITS_JOINED_MIN 500

static struct batch_pool *pool;	/* one worker, for the split parse */
static unsigned splits_joined;	/* split parses that joined a second part */

/* The split parse of body, from any length on, gives what the one-thread
 * parse gave (d, q). */
static void split_same(const char *body, size_t len, int d, const struct snapshot_req *q)
{
	struct snapshot_req s;
	int ds = world_snapshot_direct_split(body, len, &wlim, pool, 1, &s);

	ck_assert_msg(ds == d, "split parse %s what the one-thread parse %s: %.400s",
		      ds ? "took" : "declined", d ? "took" : "declined", body);
	if (d)
		assert_same(&s, q, body);
	else
		ck_assert_msg(s.n == 0 && !s.ents && !s.hbs && !s.ids && !s.ids_more,
			      "split parse declined, not left empty");
	splits_joined += s.ids_more != NULL;
	snapshot_req_release(&s);
}

/* Both paths on body[0..len) (an exact-size copy, no NUL after it); 1 when
 * the fast path took it. When required, a body the tree accepts must be
 * taken by the fast path too. */
static int cross_check(const char *text, size_t len, int required, int *tree_ok)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct snapshot_req q, t;
	struct api_fail f;
	char *body = dc_exact_copy(text, len);
	int d;

	d = world_snapshot_direct(body, len, &wlim, NULL, &q);
	split_same(body, len, d, &q);
	*tree_ok = tree_decode(body, len, &a, &t, &f) == API_OK;
	if (d) {
		ck_assert_msg(*tree_ok, "fast path took what the tree refuses (%s): %.*s", f.msg,
			      (int)(len < 400 ? len : 400), text);
		assert_same(&q, &t, text);
	} else {
		ck_assert_msg(q.n == 0 && q.nhb == 0 && !q.ents && !q.hbs && !q.ids,
			      "declined, not left empty");
		ck_assert_msg(!required || !*tree_ok, "fast path declined a plain valid body: %.*s",
			      (int)(len < 400 ? len : 400), text);
	}
	snapshot_req_release(&q);
	snapshot_req_release(&t);
	json_arena_release(&a);
	free(body);
	return d;
}

START_TEST(test_random_valid)
{
	unsigned it, taken = 0, plain = 0, hbs = 0, empty = 0;

	for (it = 0; it < 3000; it++) {
		struct sb b = { 0 };
		int bad = it % 10 == 9, tree_ok, d;

		snapgen_body(&b, wlim.max_entities, wlim.max_hitboxes, bad);
		d = cross_check(b.p, b.len, !bad, &tree_ok);
		taken += (unsigned)d;
		plain += !bad && tree_ok;
		if (d && !bad) {	/* how much the valid ones held */
			struct snapshot_req q;

			ck_assert_int_eq(world_snapshot_direct(b.p, b.len, &wlim, NULL, &q), 1);
			hbs += (unsigned)q.nhb;
			empty += q.n == 0;
			snapshot_req_release(&q);
		}
		free(b.p);
	}
	/* most plain bodies are valid, and the fast path takes every one */
	ck_assert_uint_ge(plain, 2000);
	ck_assert_uint_ge(taken, plain);
	ck_assert_uint_ge(hbs, 100000);
	/* and many were cut between two entities by the split parse */
	ck_assert_uint_ge(splits_joined, SPLITS_JOINED_MIN);
	ck_assert_uint_ge(empty, 100);
}
END_TEST

/* The suite's own tokens for dc_mutate to insert. */
static const char *const tokens[] = {
	"\"tick\":1,", "\"layer\":3,", "\"layer\":32,", "\"radius\":1,", "\"radius\":-1,",
	"\"rotation\":[1,0,0,0],", "\"rotation\":[0,0,0,0],", "\"a\":[0,0,0],",
	"\"center\":[0,0,0],", "\"half_extents\":[1,1,1],", "\"mesh\":\"cube\",",
	"\"shape\":\"box\",", "\"shape\":\"mesh\",", "\"id\":\"x\",", "\"id\":\"\",",
	"\"foo\":1,", "\"layer\":null,", ",{}", "0000000000", "\"transform\":{},",
	"{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":1},",
	"{\"id\":\"e\",\"hitboxes\":[]},",
};

static void mutate(struct sb *b)
{
	dc_mutate(b, tokens, sizeof(tokens) / sizeof(tokens[0]));
}

START_TEST(test_random_mutations)
{
	unsigned it, taken = 0;

	for (it = 0; it < 6000; it++) {
		struct sb b = { 0 };
		int k, tree_ok;

		snapgen_body(&b, wlim.max_entities, wlim.max_hitboxes, 0);
		for (k = 0; k < 1 + (int)shotgen_below(3); k++)
			mutate(&b);
		taken += (unsigned)cross_check(b.p, b.len, 0, &tree_ok);
		free(b.p);
	}
	/* some edits keep the body valid (a digit, whitespace): the check bites */
	ck_assert_uint_ge(taken, 200);
}
END_TEST

/* Edge values both paths take (compared struct by struct). */
static const char *const edges[] = {
	"{\"tick\":0,\"time_ms\":-0,\"entities\":[]}",
	"{\"entities\":[],\"time_ms\":1e-320,\"tick\":9007199254740991}",
	"{\"tick\":5.0,\"time_ms\":1,\"entities\":[{\"hitboxes\":[],\"id\":\"e\"}]}",
	"{\"tick\":1e2,\"time_ms\":1,\"entities\":[{\"id\":\"e\",\"layer\":31,\"hitboxes\":["
	"{\"id\":\"h\",\"shape\":\"box\",\"center\":[0,0,0],\"half_extents\":[-1e-50,0,-0]},"
	"{\"id\":\"r\",\"shape\":\"sphere\",\"center\":[3.4028234663852886e38,-1e-45,0],\"radius\":-0},"
	"{\"id\":\"c\",\"shape\":\"capsule\",\"radius\":3.4028234663852886e38,\"b\":[1,2,3],\"a\":[0,0,0]},"
	"{\"rotation\":[1e-300,0,0,0],\"half_extents\":[1,2,3],\"center\":[0,0,0],\"shape\":\"b\\u006fx\",\"id\":\"\\u00e9\"}]}]}",
};

START_TEST(test_edges)
{
	size_t i;
	int tree_ok;

	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		ck_assert_msg(cross_check(edges[i], strlen(edges[i]), 1, &tree_ok), "declined: %s",
			      edges[i]);
		ck_assert(tree_ok);
	}
}
END_TEST

/* ---- through api_handle: worlds "a" (the fast path's) and "b" (the tree's) */

static struct api_ctx ctx;

static void call(const char *method, const char *path, const char *body, struct api_response *resp)
{
	dc_call(&ctx, method, path, body, strlen(body), resp);
}

static void call_ok(const char *method, const char *path, const char *body, int status)
{
	dc_call_ok(&ctx, method, path, body, status);
}

/* Worlds a and b, empty. */
static void fresh_worlds(void)
{
	struct api_response r;

	call("DELETE", "/v1/worlds/a", "", &r);
	api_response_release(&r);
	call("DELETE", "/v1/worlds/b", "", &r);
	api_response_release(&r);
	call_ok("PUT", "/v1/worlds/a", "{}", 201);
	call_ok("PUT", "/v1/worlds/b", "{}", 201);
}

static void setup(void)
{
	static const struct api_limits lim = { 64, 1u << 20, 64, 0, 1u << 20, 1u << 20, 0 };

	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ck_assert_int_eq(world_registry_new(&ctx.worlds), CORE_OK);
	ctx.limits = lim;
	ctx.world_limits = wlim;
	call_ok("PUT", "/v1/meshes/cube", dc_cube_json, 201);
	fresh_worlds();
	pool = batch_pool_create(1);
	ck_assert_ptr_nonnull(pool);
}

static void teardown(void)
{
	world_registry_free(ctx.worlds);
	store_free(ctx.store);
	batch_pool_destroy(pool);
	pool = NULL;
}

/* A snapshot of n entities of a sphere and a capsule, "hitboxes" last; or
 * (mid) of an empty entity and one whose id is mid, over 60 % of the body. */
static void long_snapshot(struct sb *b, unsigned n, const char *mid)
{
	unsigned k;
	char t[64];

	sb_puts(b, "{\"tick\": 7, \"entities\": [");
	if (mid) {
		sb_puts(b, "{\"id\": \"e0\", \"hitboxes\": []}, {\"id\": \"");
		sb_puts(b, mid);
		sb_puts(b, "\", \"hitboxes\": [] }], \"time_ms\": 1234.5}");
		return;
	}
	for (k = 0; k < n; k++) {
		snprintf(t, sizeof(t), "%s{\"id\": \"e%u\", ", k ? ", " : "", k);
		sb_puts(b, t);
		snprintf(t, sizeof(t), "\"layer\": %u, \"hitboxes\": [", k % 32);
		sb_puts(b, t);
		snprintf(t, sizeof(t), "{\"id\": \"a\", \"shape\": \"sphere\", \"center\": [%u, 1, 2], ", k);
		sb_puts(b, t);
		sb_puts(b, "\"radius\": 0.5}, {\"id\": \"b\", \"shape\": \"capsule\", \"a\": [0, 0, 0], ");
		sb_puts(b, "\"b\": [0, 1, 0], \"radius\": 0.25} ] }");
	}
	sb_puts(b, "], \"time_ms\": 1234.5}");
}

/* A long array cut between two entities: the second part is joined (its
 * ids are in ids_more); cut inside a string: read on alone (none there);
 * both the same as the one-thread parse, entity for entity. */
START_TEST(test_split_cuts)
{
	static const char *const mids[] = { NULL,
		"}]},{}]},{}]},{}]},{}]},{}]},{}]},{}]},{}]},{}]},{}]},{}]},{}]},{}]}, {}]} ,{",
		"x}] } , {\\\"id\\\": \\\"y\\\", \\\"hitboxes\\\": []}, {}] } , {}]},{" };
	/* wlim, with room for 61 entities */
	const struct api_world_limits big = { 8, 16, 64, 600, 4 };
	size_t i;

	for (i = 0; i < sizeof(mids) / sizeof(mids[0]); i++) {
		struct sb b = { 0 };
		struct snapshot_req q, s;
		char *body;

		/* 2 entities, the second one's id over the cut, or 61 */
		long_snapshot(&b, mids[i] ? 2 : 61, mids[i]);
		body = dc_exact_copy(b.p, b.len);
		ck_assert_msg(world_snapshot_direct(body, b.len, &big, NULL, &q) == 1, "case %zu: %.300s", i, body);
		ck_assert_int_eq(world_snapshot_direct_split(body, b.len, &big, pool, 1, &s), 1);
		assert_same(&s, &q, body);
		ck_assert_uint_eq(q.n, mids[i] ? 2 : 61);
		ck_assert_uint_eq(q.nhb, mids[i] ? 0 : 2 * q.n);
		ck_assert_msg(!s.ids_more == (mids[i] != NULL), "case %zu: joined %d", i, !!s.ids_more);
		snapshot_req_release(&q);
		snapshot_req_release(&s);
		free(body);
		free(b.p);
	}
	/* over a limit only when joined: declined, as the one-thread parse does */
	{
		struct api_world_limits few = big;
		struct sb b = { 0 };
		struct snapshot_req s;

		long_snapshot(&b, 61, NULL);
		few.max_entities = 60;
		ck_assert_int_eq(world_snapshot_direct_split(b.p, b.len, &few, pool, 1, &s), 0);
		ck_assert_int_eq(world_snapshot_direct(b.p, b.len, &few, NULL, &s), 0);
		few = big;
		few.max_hitboxes = 121;
		ck_assert_int_eq(world_snapshot_direct_split(b.p, b.len, &few, pool, 1, &s), 0);
		few.max_hitboxes = 122;
		ck_assert_int_eq(world_snapshot_direct_split(b.p, b.len, &few, pool, 1, &s), 1);
		ck_assert_ptr_nonnull(s.ids_more);
		snapshot_req_release(&s);
		free(b.p);
	}
}
END_TEST

/* GET of worlds a and b alike but for the name. */
static void assert_same_worlds(const char *what)
{
	struct api_response ra, rb;
	size_t la, lb;
	const char *ba, *bb;
	char *pa;

	call("GET", "/v1/worlds/a", "", &ra);
	call("GET", "/v1/worlds/b", "", &rb);
	ba = api_response_body(&ra, &la);
	bb = api_response_body(&rb, &lb);
	ck_assert_int_eq(ra.status, 200);
	ck_assert_int_eq(rb.status, 200);
	pa = strndup(ba, la);
	ck_assert_ptr_nonnull(pa);
	ck_assert_ptr_nonnull(strstr(pa, "\"name\":\"a\""));
	strstr(pa, "\"name\":\"a\"")[8] = 'b';
	ck_assert_msg(la == lb && memcmp(pa, bb, la) == 0, "worlds differ after %.400s: %.400s | %.*s",
		      what, pa, (int)lb, bb);
	free(pa);
	api_response_release(&ra);
	api_response_release(&rb);
}

/* body to world a, and to world b with its "entities" key escaped (so
 * through the tree path); the same answers and the same worlds after. */
static int post_both(const char *body)
{
	struct api_response ra, rb;
	struct sb e = { 0 };
	const char *k = strstr(body, "\"entities\"");
	int status;

	ck_assert_ptr_nonnull(k);
	sb_putn(&e, body, (size_t)(k - body));
	sb_puts(&e, "\"entit\\u0069es\"");
	sb_puts(&e, k + 10);
	call("POST", "/v1/worlds/a/snapshots", body, &ra);
	call("POST", "/v1/worlds/b/snapshots", e.p, &rb);
	dc_assert_same_answer(&ra, &rb, body);
	assert_same_worlds(body);
	status = ra.status;
	api_response_release(&ra);
	api_response_release(&rb);
	free(e.p);
	return status;
}

START_TEST(test_handler_same_answers)
{
	unsigned it, ok = 0, dup = 0;

	for (it = 0; it < 300; it++) {
		struct snapshot_req q;
		struct sb b = { 0 };
		int d, status;

		snapgen_body(&b, wlim.max_entities, wlim.max_hitboxes, 0);
		d = world_snapshot_direct(b.p, b.len, &wlim, NULL, &q);
		snapshot_req_release(&q);
		if (d) {
			fresh_worlds();
			status = post_both(b.p);
			ok += status == 204;
			dup += status == 400;	/* a repeated entity or hitbox id, core's */
		}
		free(b.p);
	}
	ck_assert_uint_ge(ok, 100);	/* the rest: a hitbox id repeated in an entity */
	ck_assert_uint_ge(dup, 1);
}
END_TEST

#define HB "{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":1}"
#define ENT(hb) "{\"id\":\"e\",\"hitboxes\":[" hb "]}"
#define SNAP(ents) "{\"tick\":1,\"time_ms\":0,\"entities\":[" ents "]}"
#define BOX(m) "{\"id\":\"b\",\"shape\":\"box\",\"center\":[0,0,0],\"half_extents\":[1,1,1]" m "}"

/* Bodies the fast path declines; same: a body the tree path answers alike
 * (NULL: the tree path refuses it; "": the tree path takes it, 204). */
static const struct decline_row {
	const char *body;
	const char *same;
} declines[] = {
	{ "", NULL },
	{ "  \n", NULL },
	{ "[]", NULL },
	{ "{}", NULL },
	{ "{\"time_ms\":0,\"entities\":[]}", NULL },
	{ "{\"tick\":1,\"entities\":[]}", NULL },
	{ "{\"tick\":1,\"time_ms\":0}", NULL },
	{ "{\"tick\":-1,\"time_ms\":0,\"entities\":[]}", NULL },
	{ "{\"tick\":1.5,\"time_ms\":0,\"entities\":[]}", NULL },
	{ "{\"tick\":9007199254740994,\"time_ms\":0,\"entities\":[]}", NULL },
	{ "{\"tick\":9007199254740993,\"time_ms\":0,\"entities\":[]}", NULL },	/* reads as 2^53 */
	{ "{\"tick\":9007199254740992,\"time_ms\":0,\"entities\":[]}", NULL },
	{ "{\"tick\":\"1\",\"time_ms\":0,\"entities\":[]}", NULL },
	{ "{\"tick\":1,\"time_ms\":1e400,\"entities\":[]}", NULL },
	{ "{\"tick\":1,\"time_ms\":null,\"entities\":[]}", NULL },
	{ "{\"tick\":1,\"time_ms\":0,\"entities\":{}}", NULL },
	{ "{\"tick\":1,\"time_ms\":0,\"entities\":null}", NULL },
	{ "{\"tick\":1,\"tick\":1,\"time_ms\":0,\"entities\":[]}", NULL },
	{ "{\"tick\":1,\"time_ms\":0,\"entities\":[],\"foo\":1}", NULL },
	{ SNAP(ENT(HB)) " x", NULL },
	{ SNAP(ENT(HB)) ",", NULL },
	{ SNAP(ENT(HB) ","), NULL },
	{ SNAP("1"), NULL },
	{ SNAP("{\"id\":\"e\",\"hitboxes\":[],\"x\":1}"), NULL },
	{ SNAP("{\"id\":\"e\",\"hitboxes\":[],\"id\":\"f\"}"), NULL },
	{ SNAP("{\"hitboxes\":[]}"), NULL },
	{ SNAP("{\"id\":\"e\"}"), NULL },
	{ SNAP("{\"id\":\"\",\"hitboxes\":[]}"), NULL },
	{ SNAP("{\"id\":7,\"hitboxes\":[]}"), NULL },
	{ SNAP("{\"id\":\"a\\u0000\",\"hitboxes\":[]}"), NULL },
	{ SNAP("{\"id\":\"\xc3\x28\",\"hitboxes\":[]}"), NULL },
	{ SNAP("{\"id\":\"e\",\"layer\":32,\"hitboxes\":[]}"), NULL },
	{ SNAP("{\"id\":\"e\",\"layer\":-1,\"hitboxes\":[]}"), NULL },
	{ SNAP("{\"id\":\"e\",\"layer\":1.5,\"hitboxes\":[]}"), NULL },
	{ SNAP("{\"id\":\"e\",\"hitboxes\":\"x\"}"), NULL },
	{ SNAP("{\"id\":\"e\",\"hitboxes\":null}"), NULL },
	{ SNAP(ENT("1")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"center\":[0,0,0],\"radius\":1}")), NULL },
	{ SNAP(ENT("{\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":1}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"cube\",\"center\":[0,0,0],\"radius\":1}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,0]}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"radius\":1}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":1,\"a\":[0,0,0]}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":-1}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":1e39}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0],\"radius\":1}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,1e39],\"radius\":1}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":1,\"radius\":1}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"capsule\",\"a\":[0,0,0],\"radius\":1}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"capsule\",\"a\":[0,0,0],\"b\":[0,0,0],\"radius\":1,\"center\":[0,0,0]}")), NULL },
	{ SNAP(ENT(BOX(",\"radius\":1"))), NULL },
	{ SNAP(ENT(BOX(",\"rotation\":[0,0,0,0]"))), NULL },
	{ SNAP(ENT(BOX(",\"rotation\":[1,0,0]"))), NULL },
	{ SNAP(ENT(BOX(",\"rotation\":[1e39,0,0,0]"))), NULL },
	{ SNAP(ENT("{\"id\":\"b\",\"shape\":\"box\",\"center\":[0,0,0],\"half_extents\":[-1,1,1]}")), NULL },
	{ SNAP(ENT("{\"id\":\"b\",\"shape\":\"box\",\"center\":[0,0,0]}")), NULL },
	{ SNAP(ENT("{\"id\":\"m\",\"shape\":\"mesh\",\"mesh\":\"no pe\"}")), NULL },
	{ SNAP(ENT("{\"id\":\"m\",\"shape\":\"mesh\",\"mesh\":\"cube\",\"transform\":{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}}")), NULL },
	{ SNAP(ENT("{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":1234567890123456789012345678901234567890123456789012345678901234}")), NULL },
	/* taken by the tree path, declined here */
	{ SNAP(ENT(BOX(",\"rotation\":null"))), SNAP(ENT(BOX(""))) },
	{ SNAP("{\"id\":\"e\",\"layer\":null,\"hitboxes\":[]}"), SNAP("{\"id\":\"e\",\"hitboxes\":[]}") },
	{ SNAP("{\"\\u0069d\":\"e\",\"hitboxes\":[]}"), SNAP("{\"id\":\"e\",\"hitboxes\":[]}") },
	{ SNAP(ENT("{\"id\":\"m\",\"shape\":\"mesh\",\"mesh\":\"cube\"}")), "" },
	{ SNAP(ENT("{\"id\":\"m\",\"shape\":\"mesh\",\"mesh\":\"cube\",\"transform\":{\"position\":[1,2,3]}}")), "" },
};

/* The tree path's error for body, as the handler must send it. */
static void assert_tree_error(const char *body, const struct api_response *r)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct snapshot_req t;
	struct api_fail f;
	enum api_err e = tree_decode(body, strlen(body), &a, &t, &f);

	json_arena_release(&a);
	ck_assert_msg(e != API_OK, "the tree path accepts %.400s", body);
	dc_assert_error_answer(r, e, f.msg, body);
}

/* Each row declined, and answered as the tree path answers it. */
static void check_decline(const struct decline_row *row)
{
	struct snapshot_req q;
	struct api_response r, s;

	ck_assert_msg(world_snapshot_direct(row->body, strlen(row->body), &wlim, NULL, &q) == 0,
		      "taken: %.400s", row->body);
	fresh_worlds();
	call("POST", "/v1/worlds/a/snapshots", row->body, &r);
	if (row->same && !*row->same) {
		ck_assert_int_eq(r.status, 204);
	} else if (row->same) {
		ck_assert_int_eq(world_snapshot_direct(row->same, strlen(row->same), &wlim, NULL, &q), 1);
		snapshot_req_release(&q);
		call("POST", "/v1/worlds/b/snapshots", row->same, &s);
		ck_assert_int_eq(s.status, 204);
		dc_assert_same_answer(&r, &s, row->body);
		assert_same_worlds(row->body);
		api_response_release(&s);
	} else if (*row->body) {
		assert_tree_error(row->body, &r);
	} else {
		ck_assert_int_eq(r.status, 400);
	}
	api_response_release(&r);
}

START_TEST(test_declines)
{
	size_t i;

	for (i = 0; i < sizeof(declines) / sizeof(declines[0]); i++)
		check_decline(&declines[i]);
}
END_TEST

/* n entities of one hitbox each (hbs 0), or one entity of n hitboxes */
static char *many(unsigned n, int hbs)
{
	struct sb b = { 0 };
	char t[96];
	unsigned k;

	sb_puts(&b, hbs ? "{\"tick\":1,\"time_ms\":0,\"entities\":[{\"id\":\"e\",\"hitboxes\":["
			: "{\"tick\":1,\"time_ms\":0,\"entities\":[");
	for (k = 0; k < n; k++) {
		if (hbs)
			snprintf(t, sizeof(t), "%s{\"id\":\"h%u\",\"shape\":\"sphere\",\"center\":[0,0,0],\"radius\":1}",
				 k ? "," : "", k);
		else
			snprintf(t, sizeof(t), "%s{\"id\":\"e%u\",\"hitboxes\":[" HB "]}", k ? "," : "", k);
		sb_puts(&b, t);
	}
	sb_puts(&b, hbs ? "]}]}" : "]}");
	return b.p;
}

START_TEST(test_limits)
{
	struct snapshot_req q;
	struct api_response r;
	char *b;
	int k;

	for (k = 0; k < 4; k++) {
		/* 48 entities and 600 hitboxes are taken, one more of each is declined */
		unsigned n = k < 2 ? (unsigned)wlim.max_entities + (unsigned)k
				   : (unsigned)wlim.max_hitboxes + (unsigned)(k - 2);

		b = many(n, k >= 2);
		ck_assert_int_eq(world_snapshot_direct(b, strlen(b), &wlim, NULL, &q), !(k & 1));
		if (!(k & 1))
			ck_assert_uint_eq(k < 2 ? q.n : q.nhb, n);
		snapshot_req_release(&q);
		fresh_worlds();
		call("POST", "/v1/worlds/a/snapshots", b, &r);
		if (k & 1) {
			ck_assert_int_eq(r.status, 413);
			assert_tree_error(b, &r);
		} else {
			ck_assert_int_eq(r.status, 204);
		}
		api_response_release(&r);
		free(b);
	}
	ck_assert_int_eq(world_snapshot_direct(NULL, 0, &wlim, NULL, &q), 0);
}
END_TEST

static Suite *snapshot_direct_suite(void)
{
	Suite *s = suite_create("world_snapshot_direct");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_random_valid);
	tcase_add_test(tc, test_split_cuts);
	tcase_add_test(tc, test_random_mutations);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_handler_same_answers);
	tcase_add_test(tc, test_declines);
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return dc_run_suite(snapshot_direct_suite());
}
