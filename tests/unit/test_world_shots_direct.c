/* test_world_shots_direct.c - world_shots_direct (the tree-free shots decoder)
 * against the tree path (api_json_parse_in + decode_world_shots) as oracle:
 * the same struct on random valid bodies, never an acceptance the tree
 * refuses on mutated ones, and through api_handle the same answers. The
 * split parse (two threads, world_shots_direct_split) is held to the same
 * on every body, cut wherever its search lands, strings included. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "batch.h"
#include "decode.h"
#include "directcheck.h"
#include "json.h"
#include "store.h"
#include "shotgen.h"
#include "teststr.h"
#include "world_decode.h"
#include "world_registry.h"

static const struct api_limits lim = { 64, 1u << 20, 64, 0, 1u << 20, 1u << 20, 0 };

/* ---- the two paths */

/* The tree path's reading of body into q (API_OK) or f; a keeps the tree. */
static enum api_err tree_decode(const char *body, size_t len, int static_only,
				struct json_arena *a, struct world_shots_req *q, struct api_fail *f)
{
	cJSON *root;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	if ((e = api_json_parse_in(body, len, a, &root, f)))
		return e;
	return decode_world_shots(root, &lim, static_only, q, f);
}

static int same_bits(const void *a, const void *b, size_t n)
{
	return memcmp(a, b, n) == 0;
}

/* a and b field by field: floats and doubles bitwise, ids by content. */
static void assert_same(const struct world_shots_req *a, const struct world_shots_req *b,
			const char *body)
{
	size_t i, k;

	ck_assert_msg(a->batch == b->batch && a->n == b->n && a->mode == b->mode &&
		      a->max_hits == b->max_hits, "header differs: %s", body);
	for (i = 0; i < a->n; i++) {
		const struct world_shot *s = &a->shots[i], *t = &b->shots[i];

		ck_assert_msg(same_bits(&s->ray.origin.x, &t->ray.origin.x, sizeof(float)) &&
			      same_bits(&s->ray.origin.y, &t->ray.origin.y, sizeof(float)) &&
			      same_bits(&s->ray.origin.z, &t->ray.origin.z, sizeof(float)) &&
			      same_bits(&s->ray.dir.x, &t->ray.dir.x, sizeof(float)) &&
			      same_bits(&s->ray.dir.y, &t->ray.dir.y, sizeof(float)) &&
			      same_bits(&s->ray.dir.z, &t->ray.dir.z, sizeof(float)) &&
			      same_bits(&s->ray.tmax, &t->ray.tmax, sizeof(float)) &&
			      same_bits(&s->unit, &t->unit, sizeof(double)),
			      "shot %zu ray differs: %s", i, body);
		ck_assert_msg(s->has_time == t->has_time &&
			      same_bits(&s->time_ms, &t->time_ms, sizeof(double)) &&
			      s->layers == t->layers, "shot %zu time/layers differ: %s", i, body);
		ck_assert_msg(s->nignore == t->nignore && !s->ignore == !t->ignore,
			      "shot %zu ignore differs: %s", i, body);
		for (k = 0; k < s->nignore; k++)
			ck_assert_msg(strcmp(s->ignore[k], t->ignore[k]) == 0,
				      "shot %zu ignore[%zu] \"%s\" != \"%s\": %s", i, k, s->ignore[k],
				      t->ignore[k], body);
	}
}

static struct batch_pool *pool;	/* one worker, for the split parse */

static void setup_pool(void)
{
	pool = batch_pool_create(1);
	ck_assert_ptr_nonnull(pool);
}

static void teardown_pool(void)
{
	batch_pool_destroy(pool);
	pool = NULL;
}

static unsigned splits_taken;	/* split parses that decoded a body */

/* The split parse of body, from any length on, gives what the one-thread
 * parse gave (d, q). */
static void split_same(const char *body, size_t len, int static_only, int d,
		       const struct world_shots_req *q)
{
	struct world_shots_req s;
	int ds = world_shots_direct_split(body, len, &lim, static_only, pool, 1, &s);

	ck_assert_msg(ds == d, "split parse %s what the one-thread parse %s: %.*s",
		      ds ? "took" : "declined", d ? "took" : "declined", (int)len, body);
	if (d)
		assert_same(&s, q, body);
	else
		ck_assert_msg(s.n == 0 && !s.shots && !s.ignore && !s.ids && !s.ids_more,
			      "split parse declined, not left empty");
	splits_taken += (unsigned)ds;
	world_shots_req_release(&s);
}

/* Both paths on body[0..len) (an exact-size copy, no NUL after it); 1 when
 * the fast path took it. When required, a body the tree accepts must be
 * taken by the fast path too. */
static int cross_check(const char *text, size_t len, int static_only, int required, int *tree_ok)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct world_shots_req q, t;
	struct api_fail f;
	char *body = dc_exact_copy(text, len);
	int d;

	d = world_shots_direct(body, len, &lim, static_only, NULL, &q);
	split_same(body, len, static_only, d, &q);
	*tree_ok = tree_decode(body, len, static_only, &a, &t, &f) == API_OK;
	if (d) {
		ck_assert_msg(*tree_ok, "fast path took what the tree refuses (%s): %.*s", f.msg,
			      (int)len, text);
		assert_same(&q, &t, text);
	} else {
		ck_assert_msg(q.n == 0 && !q.shots && !q.ignore && !q.ids && !q.ids_more,
			      "declined, not left empty");
		ck_assert_msg(!required || !*tree_ok, "fast path declined a plain valid body: %.*s",
			      (int)len, text);
	}
	world_shots_req_release(&q);
	world_shots_req_release(&t);
	json_arena_release(&a);
	free(body);
	return d;
}

START_TEST(test_random_valid)
{
	unsigned it, taken = 0, plain = 0;

	for (it = 0; it < 3000; it++) {
		struct sb b = { 0 };
		int bad = it % 10 == 9, st = (int)shotgen_below(2), tree_ok;

		shotgen_body(&b, lim.max_batch, st, bad);
		taken += (unsigned)cross_check(b.p, b.len, st, !bad, &tree_ok);
		plain += !bad && tree_ok;
		free(b.p);
	}
	/* most plain bodies are valid, and the fast path takes every one */
	ck_assert_uint_ge(plain, 2000);
	ck_assert_uint_ge(taken, plain);
	ck_assert_uint_eq(splits_taken, taken);
}
END_TEST

/* The suite's own tokens for dc_mutate to insert. */
static const char *const tokens[] = {
	"\"origin\":[0,0,0],", "\"shots\":[{\"origin\":[0,0,0],\"direction\":[1,0,0]}],",
	"\"mode\":\"all\",", "\"max_hits\":3,", "\"foo\":1,", "\"time_ms\":null,",
	"\"layers\":[31],", "\"ignore\":[],", "\"max_distance\":0,", ",{}", "0000000000",
};

static void mutate(struct sb *b)
{
	dc_mutate(b, tokens, sizeof(tokens) / sizeof(tokens[0]));
}

START_TEST(test_random_mutations)
{
	unsigned it, taken = 0;

	for (it = 0; it < 20000; it++) {
		struct sb b = { 0 };
		int st = (int)shotgen_below(2), k, tree_ok;

		shotgen_body(&b, lim.max_batch, st, 0);
		for (k = 0; k < 1 + (int)shotgen_below(3); k++)
			mutate(&b);
		taken += (unsigned)cross_check(b.p, b.len, st, 0, &tree_ok);
		free(b.p);
	}
	/* some edits keep the body valid (a digit, whitespace): the check bites */
	ck_assert_uint_ge(taken, 1000);
}
END_TEST

/* ---- through api_handle: a world with a cube and one entity */

static struct api_ctx ctx;

static void call(const char *method, const char *path, const char *body, size_t len,
		 struct api_response *resp)
{
	dc_call(&ctx, method, path, body, len, resp);
}

static void call_ok(const char *method, const char *path, const char *body, int status)
{
	dc_call_ok(&ctx, method, path, body, status);
}

static void setup(void)
{
	setup_pool();
	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ck_assert_int_eq(world_registry_new(&ctx.worlds), CORE_OK);
	ctx.limits = lim;
	call_ok("PUT", "/v1/meshes/cube", dc_cube_json, 201);
	call_ok("PUT", "/v1/worlds/w",
		"{\"static\":[{\"id\":\"level\",\"mesh\":\"cube\",\"layer\":2}]}", 201);
	call_ok("POST", "/v1/worlds/w/snapshots",
		"{\"tick\":1,\"time_ms\":0,\"entities\":[{\"id\":\"p1\",\"layer\":1,\"hitboxes\":"
		"[{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[0.5,0,-3],\"radius\":0.5}]}]}", 204);
	call_ok("POST", "/v1/worlds/w/snapshots",
		"{\"tick\":2,\"time_ms\":100,\"entities\":[{\"id\":\"p1\",\"layer\":1,\"hitboxes\":"
		"[{\"id\":\"h\",\"shape\":\"sphere\",\"center\":[-0.5,0,-3],\"radius\":0.5}]}]}", 204);
}

static void teardown(void)
{
	world_registry_free(ctx.worlds);
	store_free(ctx.store);
	teardown_pool();
}

/* The handler's answer to body on hitscan (static_only 0) or raycast. */
static void answer(const char *body, int static_only, struct api_response *r)
{
	call("POST", static_only ? "/v1/worlds/w/raycast" : "/v1/worlds/w/hitscan", body,
	     strlen(body), r);
}

/* Shots at the cube and the entity (from z = -8 towards +z), random members. */
static void gen_aimed(struct sb *b, int static_only)
{
	unsigned n = 1 + shotgen_below(12), k;
	char t[64];

	sb_puts(b, "{\"shots\":[");
	for (k = 0; k < n; k++) {
		snprintf(t, sizeof(t), "%s{\"direction\":[", k ? "," : "");
		sb_puts(b, t);
		shotgen_num(b, (shotgen_unit() - 0.5) * 0.2);
		sb_putc(b, ',');
		shotgen_num(b, (shotgen_unit() - 0.5) * 0.2);
		sb_puts(b, ",1],\"origin\":[");
		shotgen_num(b, (shotgen_unit() - 0.5) * 3);
		sb_putc(b, ',');
		shotgen_num(b, (shotgen_unit() - 0.5) * 3);
		sb_puts(b, ",-8]");
		if (shotgen_below(3) == 0)
			sb_puts(b, shotgen_below(2) ? ",\"ignore\":[\"p1\"]" : ",\"ignore\":[\"p\\u0031\",\"x\"]");
		if (shotgen_below(3) == 0)
			sb_puts(b, shotgen_below(2) ? ",\"layers\":[1]" : ",\"layers\":[2,5]");
		if (shotgen_below(3) == 0)
			sb_puts(b, ",\"max_distance\":"), shotgen_num(b, 1 + shotgen_unit() * 8);
		if (!static_only && shotgen_below(2))
			sb_puts(b, ",\"time_ms\":"), shotgen_num(b, shotgen_unit() * 100);
		sb_putc(b, '}');
	}
	sb_putc(b, ']');
	if (shotgen_below(2))
		sb_puts(b, static_only && shotgen_below(2) ? ",\"mode\":\"any\"" :
			   shotgen_below(2) ? ",\"mode\":\"all\",\"max_hits\":1" : ",\"mode\":\"all\"");
	sb_putc(b, '}');
}

START_TEST(test_handler_same_answers)
{
	unsigned it, hits = 0;

	for (it = 0; it < 400; it++) {
		struct api_response ra, rb;
		struct world_shots_req q;
		struct sb b = { 0 };
		char *esc;
		int st = (int)shotgen_below(2);

		gen_aimed(&b, st);
		ck_assert_int_eq(world_shots_direct(b.p, b.len, &lim, st, NULL, &q), 1);
		world_shots_req_release(&q);
		answer(b.p, st, &ra);
		/* the same body with a key escaped: the tree path's */
		esc = strstr(b.p, "\"origin\"");
		ck_assert_ptr_nonnull(esc);
		{
			struct sb e = { 0 };

			sb_putn(&e, b.p, (size_t)(esc - b.p));
			sb_puts(&e, "\"orig\\u0069n\"");
			sb_puts(&e, esc + 8);
			ck_assert_int_eq(world_shots_direct(e.p, e.len, &lim, st, NULL, &q), 0);
			answer(e.p, st, &rb);
			free(e.p);
		}
		dc_assert_same_answer(&ra, &rb, b.p);
		ck_assert_msg(ra.status == 200, "%d %s: %s", ra.status,
			      api_response_body(&ra, &(size_t){ 0 }), b.p);
		hits += strstr(api_response_body(&ra, &(size_t){ 0 }), "\"hit\":\"") != NULL;
		api_response_release(&ra);
		api_response_release(&rb);
		free(b.p);
	}
	ck_assert_uint_ge(hits, 100);
}
END_TEST

#define SHOT "{\"origin\":[0,0,-8],\"direction\":[0,0,1]}"
#define SHOT_WITH(m) "{\"origin\":[0,0,-8],\"direction\":[0,0,1]," m "}"

/* Bodies the fast path declines; same: a body the tree path answers alike
 * (NULL: the tree path refuses it). */
static const struct decline_row {
	const char *body;
	int static_only;
	const char *same;
} declines[] = {
	{ "", 0, NULL },
	{ "  \n", 0, NULL },
	{ "[]", 0, NULL },
	{ "{}", 0, NULL },
	{ "{\"shots\":[]}", 0, NULL },
	{ "{\"shots\":[" SHOT "]", 0, NULL },
	{ "{\"shots\":[" SHOT "]} x", 0, NULL },
	{ "{\"shots\":[" SHOT "],}", 0, NULL },
	{ "{\"shots\":[" SHOT ",]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"foo\":1") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"bar\":2}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"origin\":[1,2,3]") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"mode\":\"all\",\"mode\":\"all\"}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"shots\":[" SHOT "]}", 0, NULL },
	{ "{\"shots\":[{\"origin\":\"x\",\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"shots\":[{\"origin\":[0,0],\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"shots\":[{\"origin\":[0,0,0,0],\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"shots\":[{\"origin\":[0,1e39,0],\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"shots\":[{\"origin\":[0,0,0],\"direction\":[0,-0,0.0]}]}", 0, NULL },
	{ "{\"shots\":[{\"origin\":[0,0,0]}]}", 0, NULL },
	{ "{\"shots\":[{\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"max_distance\":0") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"max_distance\":-1") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"time_ms\":1e400") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"time_ms\":\"now\"") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"layers\":[32]") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"layers\":[1.5]") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"layers\":3") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"ignore\":[\"\"]") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"ignore\":[1]") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"ignore\":\"p1\"") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"ignore\":[\"\xc3\x28\"]") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"ignore\":[\"a\\u0000\"]") "]}", 0, NULL },
	{ "{\"shots\":[" SHOT_WITH("\"time_ms\":1234567890123456789012345678901234567890123456789012345678901234") "]}", 0, NULL },
	{ "{\"shots\":[1]}", 0, NULL },
	{ "{\"shots\":{}}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"origin\":[0,0,0]}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"mode\":\"nearest\"}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"mode\":\"any\"}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"max_hits\":3}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"mode\":\"all\",\"max_hits\":0}", 1, NULL },
	{ "{\"shots\":[" SHOT "],\"mode\":\"all\",\"max_hits\":65537}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"mode\":\"all\",\"max_hits\":2.5}", 0, NULL },
	{ "{\"shots\":[" SHOT "],\"mode\":\"a very long mode name\"}", 0, NULL },
	{ "{\"shots\":null}", 0, NULL },
	/* accepted by the tree path, declined here */
	{ "{\"shots\":[" SHOT_WITH("\"time_ms\":null") "]}", 0, "{\"shots\":[" SHOT "]}" },
	{ "{\"shots\":[" SHOT "],\"origin\":null}", 1, "{\"shots\":[" SHOT "]}" },
	{ "{\"sh\\u006fts\":[" SHOT "]}", 0, "{\"shots\":[" SHOT "]}" },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1]}", 1, "" },	/* the single form */
};

/* n shots, or one shot with n ignore ids */
static char *many(unsigned n, int ids)
{
	struct sb b = { 0 };
	unsigned k;

	sb_puts(&b, ids ? "{\"shots\":[{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"ignore\":[" :
			  "{\"shots\":[");
	for (k = 0; k < n; k++)
		sb_puts(&b, ids ? (k ? ",\"x\"" : "\"x\"") : (k ? "," SHOT : SHOT));
	sb_puts(&b, ids ? "]}]}" : "]}");
	return b.p;
}

/* The tree path's error for body, as the handler must send it. */
static void assert_tree_error(const char *body, int static_only, const struct api_response *r)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct world_shots_req t;
	struct api_fail f;
	enum api_err e = tree_decode(body, strlen(body), static_only, &a, &t, &f);

	json_arena_release(&a);
	ck_assert_msg(e != API_OK, "the tree path accepts %s", body);
	dc_assert_error_answer(r, e, f.msg, body);
}

/* Each row declined, and answered as the tree path answers it. */
static void check_decline(const struct decline_row *row)
{
	struct world_shots_req q;
	struct api_response r, s;

	ck_assert_msg(world_shots_direct(row->body, strlen(row->body), &lim, row->static_only, NULL, &q) == 0,
		      "taken: %s", row->body);
	answer(row->body, row->static_only, &r);
	if (row->same && !*row->same) {
		ck_assert_int_eq(r.status, 200);
	} else if (row->same) {
		answer(row->same, row->static_only, &s);
		ck_assert_int_eq(s.status, 200);
		dc_assert_same_answer(&r, &s, row->body);
		api_response_release(&s);
	} else if (*row->body) {
		assert_tree_error(row->body, row->static_only, &r);
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

/* A direction of tiny components is a direction, not a zero: both paths
 * scale it by its largest component before taking its length (squared,
 * 1e-200 underflows to 0). */
START_TEST(test_tiny_direction)
{
	static const char body[] = "{\"shots\":[{\"origin\":[0,0,0],\"direction\":[1e-200,0,-1e-200]}]}";
	const float h = (float)sqrt(0.5);
	struct world_shots_req q;
	int tree_ok;

	ck_assert_int_eq(cross_check(body, strlen(body), 0, 1, &tree_ok), 1);
	ck_assert(tree_ok);
	ck_assert_int_eq(world_shots_direct(body, strlen(body), &lim, 0, NULL, &q), 1);
	ck_assert(q.n == 1 && q.shots[0].ray.dir.x == h && q.shots[0].ray.dir.y == 0 &&
		  q.shots[0].ray.dir.z == -h);
	world_shots_req_release(&q);
}
END_TEST

START_TEST(test_limits)
{
	struct world_shots_req q;
	struct api_response r;
	char *b;
	int k;

	for (k = 0; k < 4; k++) {
		/* 64 shots and 256 ids are taken, one more of each is declined */
		unsigned n = k < 2 ? (unsigned)lim.max_batch + (unsigned)k : 256u + (unsigned)(k - 2);

		b = many(n, k >= 2);
		ck_assert_int_eq(world_shots_direct(b, strlen(b), &lim, 0, NULL, &q), !(k & 1));
		if (!(k & 1))
			ck_assert_uint_eq(k < 2 ? q.n : q.shots[0].nignore, n);
		world_shots_req_release(&q);
		answer(b, 0, &r);
		if (k & 1)
			assert_tree_error(b, 0, &r);
		else
			ck_assert_int_eq(r.status, 200);
		api_response_release(&r);
		free(b);
	}
	ck_assert_int_eq(world_shots_direct(NULL, 0, &lim, 0, NULL, &q), 0);
}
END_TEST

/* n shots into b: shot k ignores "p<k>", but shot mid's id, when given, is
 * that text (a string the cut search may land in). */
static void long_body(struct sb *b, unsigned n, unsigned mid, const char *id)
{
	unsigned k;

	sb_puts(b, "{\"mode\": \"closest\", \"shots\": [");
	for (k = 0; k < n; k++) {
		char one[160];

		snprintf(one, sizeof(one),
			 "%s{\"origin\": [%u, 1.5, -2], \"direction\": [1, 0, 0.%u], \"ignore\": [\"",
			 k ? ", " : "", k, k);
		sb_puts(b, one);
		if (id && k == mid)
			sb_puts(b, id);
		else {
			snprintf(one, sizeof(one), "p%u", k);
			sb_puts(b, one);
		}
		sb_puts(b, "\"], \"time_ms\": 12.5}");
	}
	sb_puts(b, "]}");
}

/* A long array cut between two shots: the second part is joined (its ids
 * are in ids_more); cut inside a string: read on alone (none there); both
 * the same as the one-thread parse, shot for shot. */
START_TEST(test_split_cuts)
{
	static const char *const ids[] = { NULL, "},{},{},{},{},{},{},{},{},{},{},{},{},{},{}, {}, {}, {",
					   "}, {\\\"origin\\\": [0, 0, 0], \\\"direction\\\": [1, 0, 0]}, {" };
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct sb b = { 0 };
		struct world_shots_req q, s;
		char *body;
		size_t k;

		/* 3 shots with the middle one's id over the middle of the body, or 61 */
		long_body(&b, ids[i] ? 3 : 61, 1, ids[i]);
		body = dc_exact_copy(b.p, b.len);
		ck_assert_msg(world_shots_direct(body, b.len, &lim, 0, NULL, &q) == 1, "%s", body);
		ck_assert_int_eq(world_shots_direct_split(body, b.len, &lim, 0, pool, 1, &s), 1);
		assert_same(&s, &q, body);
		ck_assert_uint_eq(q.n, ids[i] ? 3 : 61);
		ck_assert_msg(!s.ids_more == (ids[i] != NULL), "case %zu: joined %d", i, !!s.ids_more);
		for (k = 0; k < q.n; k++)
			ck_assert_uint_eq(s.shots[k].nignore, 1);
		world_shots_req_release(&q);
		world_shots_req_release(&s);
		free(body);
		free(b.p);
	}
}
END_TEST

static Suite *shots_direct_suite(void)
{
	Suite *s = suite_create("world_shots_direct");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_random_valid);
	tcase_add_test(tc, test_split_cuts);
	tcase_add_test(tc, test_random_mutations);
	tcase_add_test(tc, test_handler_same_answers);
	tcase_add_test(tc, test_declines);
	tcase_add_test(tc, test_tiny_direction);
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return dc_run_suite(shots_direct_suite());
}
