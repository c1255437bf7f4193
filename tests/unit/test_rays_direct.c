/* test_rays_direct.c - decode_ray_query_direct / decode_segment_query_direct
 * (the tree-free decoder of batches and single rays) against the tree path
 * (api_json_parse_in + decode_ray_query / decode_segment_query) as oracle:
 * the same struct on random valid bodies, never an acceptance the tree
 * refuses on mutated ones, and through api_handle the same answers, byte
 * for byte. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "decode.h"
#include "directcheck.h"
#include "json.h"
#include "raygen.h"
#include "shotgen.h"
#include "store.h"
#include "teststr.h"

static const struct api_limits lim = { 64, 1u << 20, 64, 0, 1u << 20, 1u << 20, 0 };

/* ---- the two paths */

static int direct(const char *body, size_t len, int segments, struct query *q)
{
	return segments ? decode_segment_query_direct(body, len, &lim, q)
			: decode_ray_query_direct(body, len, &lim, q);
}

/* The tree path's reading of body into q (API_OK) or f; a keeps the tree. */
static enum api_err tree_decode(const char *body, size_t len, int segments,
				struct json_arena *a, struct query *q, struct api_fail *f)
{
	cJSON *root;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	if ((e = api_json_parse_in(body, len, a, &root, f)))
		return e;
	return segments ? decode_segment_query(root, &lim, q, f) : decode_ray_query(root, &lim, q, f);
}

#define SAME(x, y) (memcmp(&(x), &(y), sizeof(x)) == 0)

/* a and b member by member: floats and doubles bitwise. */
static void assert_same(const struct query *a, const struct query *b, const char *body)
{
	size_t i;

	ck_assert_msg(a->opts.mode == b->opts.mode && a->opts.cull_backfaces == b->opts.cull_backfaces &&
		      a->opts.flip_winding == b->opts.flip_winding &&
		      a->opts.max_hits == b->opts.max_hits && a->opts.scratch == b->opts.scratch &&
		      a->opts.scratch_bytes == b->opts.scratch_bytes, "opts differ: %s", body);
	ck_assert_msg(a->has_xform == b->has_xform && SAME(a->xf, b->xf), "transform differs: %s", body);
	ck_assert_msg(a->segments == b->segments && a->batch == b->batch && a->n == b->n &&
		      strcmp(a->items, b->items) == 0, "header differs: %s", body);
	ck_assert_msg(!a->records && !b->records && a->boxes.n == 0 && b->boxes.n == 0 && !a->mesh &&
		      !b->mesh, "extras set: %s", body);
	for (i = 0; i < a->n; i++) {
		const struct qray *r = &a->rays[i], *s = &b->rays[i];

		ck_assert_msg(SAME(r->ray.origin.x, s->ray.origin.x) && SAME(r->ray.origin.y, s->ray.origin.y) &&
			      SAME(r->ray.origin.z, s->ray.origin.z) && SAME(r->ray.dir.x, s->ray.dir.x) &&
			      SAME(r->ray.dir.y, s->ray.dir.y) && SAME(r->ray.dir.z, s->ray.dir.z) &&
			      SAME(r->ray.tmax, s->ray.tmax) && SAME(r->dir, s->dir) &&
			      SAME(r->length, s->length) && SAME(r->unit, s->unit),
			      "item %zu differs: %s", i, body);
	}
}

/* Both paths on body[0..len) (an exact-size copy, no NUL after it); 1 when
 * the fast path took it. When required, a body the tree accepts must be
 * taken by the fast path too. */
static int cross_check(const char *text, size_t len, int segments, int required, int *tree_ok)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct query q, t;
	struct api_fail f;
	char *body = dc_exact_copy(text, len);
	int d;

	d = direct(body, len, segments, &q);
	*tree_ok = tree_decode(body, len, segments, &a, &t, &f) == API_OK;
	if (d) {
		ck_assert_msg(*tree_ok, "fast path took what the tree refuses (%s): %.*s", f.msg,
			      (int)len, text);
		assert_same(&q, &t, text);
	} else {
		ck_assert_msg(q.n == 0 && !q.rays && !q.batch && !q.has_xform, "declined, not left empty");
		ck_assert_msg(!required || !*tree_ok || t.n == 0,
			      "fast path declined a plain valid body: %.*s", (int)len, text);
	}
	query_release(&q);
	if (*tree_ok)
		query_release(&t);
	json_arena_release(&a);
	free(body);
	return d;
}

START_TEST(test_random_valid)
{
	unsigned it, taken = 0, plain = 0;

	for (it = 0; it < 3000; it++) {
		struct sb b = { 0 };
		int bad = it % 10 == 9, seg = (int)shotgen_below(2), tree_ok;

		if (it % 3 == 2)
			raygen_single_body(&b, seg, bad);
		else
			raygen_body(&b, lim.max_batch, seg, bad);
		taken += (unsigned)cross_check(b.p, b.len, seg, !bad, &tree_ok);
		plain += !bad && tree_ok;
		free(b.p);
	}
	/* most plain bodies are valid, and the fast path takes every one */
	ck_assert_uint_ge(plain, 2000);
	ck_assert_uint_ge(taken, plain);
}
END_TEST

/* The suite's own tokens for dc_mutate to insert. */
static const char *const tokens[] = {
	"\"origin\":[0,0,0],", "\"rays\":[{\"origin\":[0,0,0],\"direction\":[1,0,0]}],",
	"\"segments\":[{\"start\":[0,0,0],\"end\":[1,0,0]}],", "\"start\":[1,2,3],",
	"\"mode\":\"all\",", "\"max_hits\":3,", "\"foo\":1,", "\"backfaces\":null,",
	"\"backfaces\":\"cull\",", "\"transform\":{},", "\"transform\":{\"scale\":[0,1,1]},",
	"\"max_distance\":0,", ",{}", "0000000000", "\"end\":[0,0,0],",
};

static void mutate(struct sb *b)
{
	dc_mutate(b, tokens, sizeof(tokens) / sizeof(tokens[0]));
}

START_TEST(test_random_mutations)
{
	unsigned it, taken = 0;

	for (it = 0; it < 15000; it++) {
		struct sb b = { 0 };
		int seg = (int)shotgen_below(2), k, tree_ok;

		if (it % 3 == 2)
			raygen_single_body(&b, seg, 0);
		else
			raygen_body(&b, lim.max_batch, seg, 0);
		for (k = 0; k < 1 + (int)shotgen_below(3); k++)
			mutate(&b);
		taken += (unsigned)cross_check(b.p, b.len, seg, 0, &tree_ok);
		free(b.p);
	}
	/* some edits keep the body valid (a digit, whitespace): the check bites */
	ck_assert_uint_ge(taken, 900);
}
END_TEST

/* ---- through api_handle: a cube mesh */

static struct api_ctx ctx;

static void call(const char *method, const char *path, const char *body, size_t len,
		 struct api_response *resp)
{
	dc_call(&ctx, method, path, body, len, resp);
}

static void setup(void)
{
	struct api_response r;

	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ctx.limits = lim;
	call("PUT", "/v1/meshes/cube", dc_cube_json, strlen(dc_cube_json), &r);
	ck_assert_int_eq(r.status, 201);
	api_response_release(&r);
}

static void teardown(void)
{
	store_free(ctx.store);
}

/* The handler's answer to body on /raycast or /segment. */
static void answer(const char *body, int segments, struct api_response *r)
{
	call("POST", segments ? "/v1/meshes/cube/segment" : "/v1/meshes/cube/raycast", body,
	     strlen(body), r);
}

/* Rays or segments at the cube (from z = -8 towards +z), random options;
 * single: one, in the single form. */
static void gen_aimed(struct sb *b, int segments, int single)
{
	unsigned n = single ? 1 : 1 + shotgen_below(12), k;

	sb_puts(b, single ? "{" : segments ? "{\"segments\":[" : "{\"rays\":[");
	for (k = 0; k < n; k++) {
		if (!single)
			sb_puts(b, k ? ",{" : "{");
		sb_puts(b, segments ? "\"end\":[" : "\"direction\":[");
		shotgen_num(b, (shotgen_unit() - 0.5) * (segments ? 4 : 0.2));
		sb_putc(b, ',');
		shotgen_num(b, (shotgen_unit() - 0.5) * (segments ? 4 : 0.2));
		sb_puts(b, segments ? ",8],\"start\":[" : ",1],\"origin\":[");
		shotgen_num(b, (shotgen_unit() - 0.5) * 3);
		sb_putc(b, ',');
		shotgen_num(b, (shotgen_unit() - 0.5) * 3);
		sb_puts(b, ",-8]");
		if (!segments && shotgen_below(3) == 0)
			sb_puts(b, ",\"max_distance\":"), shotgen_num(b, 1 + shotgen_unit() * 8);
		if (!single)
			sb_putc(b, '}');
	}
	if (!single)
		sb_putc(b, ']');
	if (shotgen_below(2))
		sb_puts(b, shotgen_below(2) ? ",\"mode\":\"any\"" :
			   shotgen_below(2) ? ",\"mode\":\"all\",\"max_hits\":1" : ",\"mode\":\"all\"");
	if (shotgen_below(3) == 0)
		sb_puts(b, shotgen_below(2) ? ",\"backfaces\":\"cull\"" : ",\"backfaces\":\"hit\"");
	if (shotgen_below(3) == 0)
		sb_puts(b, shotgen_below(2) ? ",\"transform\":{\"position\":[0.25,0,1],\"rotation\":[1,0,0,0.1]}" :
			   ",\"transform\":{\"matrix\":[2,0,0,0.5, 0,1,0,0, 0,0,-1,0, 0,0,0,1]}");
	sb_putc(b, '}');
}

START_TEST(test_handler_same_answers)
{
	unsigned it, hits = 0;

	for (it = 0; it < 400; it++) {
		struct api_response ra, rb;
		struct query q;
		struct sb b = { 0 }, e = { 0 };
		int seg = (int)shotgen_below(2), single = it % 3 == 2;
		const char *key = single ? (seg ? "\"end\"" : "\"direction\"") :
				  seg ? "\"segments\"" : "\"rays\"";
		char *at, hex[8];

		gen_aimed(&b, seg, single);
		ck_assert_int_eq(direct(b.p, b.len, seg, &q), 1);
		query_release(&q);
		answer(b.p, seg, &ra);
		/* the same body with its items key (a single item's key) escaped:
		 * the tree path's */
		at = strstr(b.p, key);
		ck_assert_ptr_nonnull(at);
		sb_putn(&e, b.p, (size_t)(at - b.p) + 2);
		snprintf(hex, sizeof(hex), "\\u%04x", (unsigned char)at[2]);
		sb_puts(&e, hex);
		sb_puts(&e, at + 3);
		ck_assert_int_eq(direct(e.p, e.len, seg, &q), 0);
		answer(e.p, seg, &rb);
		dc_assert_same_answer(&ra, &rb, b.p);
		ck_assert_msg(ra.status == 200, "%d %s: %s", ra.status,
			      api_response_body(&ra, &(size_t){ 0 }), b.p);
		hits += strstr(api_response_body(&ra, &(size_t){ 0 }), "\"hit\":true") != NULL;
		api_response_release(&ra);
		api_response_release(&rb);
		free(b.p);
		free(e.p);
	}
	ck_assert_uint_ge(hits, 100);
}
END_TEST

#define RAY "{\"origin\":[0,0,-8],\"direction\":[0,0,1]}"
#define RAY_WITH(m) "{\"origin\":[0,0,-8],\"direction\":[0,0,1]," m "}"
#define SEG "{\"start\":[0,0,-8],\"end\":[0,0,8]}"

/* Bodies the fast path declines; same: a body the tree path answers alike
 * (NULL: the tree path refuses it; "": it answers 200). */
static const struct decline_row {
	const char *body;
	int segments;
	const char *same;
} declines[] = {
	{ "", 0, NULL },
	{ "  \n", 1, NULL },
	{ "[]", 0, NULL },
	{ "{}", 0, NULL },
	{ "{\"rays\":[" RAY "]", 0, NULL },
	{ "{\"rays\":[" RAY "]} x", 0, NULL },
	{ "{\"rays\":[" RAY "],}", 0, NULL },
	{ "{\"rays\":[" RAY ",]}", 0, NULL },
	{ "{\"rays\":[" RAY_WITH("\"foo\":1") "]}", 0, NULL },
	{ "{\"rays\":[" RAY_WITH("\"start\":[0,0,0]") "]}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"bar\":2}", 0, NULL },
	{ "{\"rays\":[" RAY_WITH("\"origin\":[1,2,3]") "]}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"mode\":\"all\",\"mode\":\"all\"}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"rays\":[" RAY "]}", 0, NULL },
	{ "{\"rays\":[{\"origin\":\"x\",\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"rays\":[{\"origin\":[0,0],\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"rays\":[{\"origin\":[0,0,0,0],\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"rays\":[{\"origin\":[0,1e39,0],\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"rays\":[{\"origin\":[0,1e400,0],\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"rays\":[{\"origin\":[0,0,0],\"direction\":[0,-0,0.0]}]}", 0, NULL },
	{ "{\"rays\":[{\"origin\":[0,0,0]}]}", 0, NULL },
	{ "{\"rays\":[{\"direction\":[0,0,1]}]}", 0, NULL },
	{ "{\"rays\":[" RAY_WITH("\"max_distance\":0") "]}", 0, NULL },
	{ "{\"rays\":[" RAY_WITH("\"max_distance\":-1") "]}", 0, NULL },
	{ "{\"rays\":[" RAY_WITH("\"max_distance\":1e400") "]}", 0, NULL },
	{ "{\"rays\":[" RAY_WITH("\"max_distance\":\"far\"") "]}", 0, NULL },
	{ "{\"rays\":[" RAY_WITH("\"max_distance\":1234567890123456789012345678901234567890123456789012345678901234") "]}", 0, NULL },
	{ "{\"rays\":[1]}", 0, NULL },
	{ "{\"rays\":{}}", 0, NULL },
	{ "{\"rays\":null}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"origin\":[0,0,0]}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"mode\":\"nearest\"}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"mode\":3}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"max_hits\":3}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"mode\":\"any\",\"max_hits\":3}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"mode\":\"all\",\"max_hits\":0}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"mode\":\"all\",\"max_hits\":65537}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"mode\":\"all\",\"max_hits\":2.5}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"mode\":\"a very long mode name\"}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"backfaces\":\"both\"}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"backfaces\":true}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"transform\":[]}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"transform\":{\"scale\":[0,1,1]}}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"transform\":{\"rotation\":[0,0,0,0]}}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"transform\":{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,2]}}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"transform\":{\"position\":[1,2,3],\"matrix\":[]}}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"transform\":{\"origin\":[1,2,3]}}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"transform\":{\"position\":[1,2,3]", 0, NULL },
	{ "{\"segments\":[" RAY "]}", 1, NULL },
	{ "{\"rays\":[" SEG "]}", 0, NULL },
	{ "{\"segments\":[" SEG "],\"rays\":[" RAY "]}", 1, NULL },
	{ "{\"segments\":[{\"start\":[1,2,3],\"end\":[1,2,3]}]}", 1, NULL },
	{ "{\"segments\":[{\"start\":[1,2,3],\"end\":[1,2.0,3e0]}]}", 1, NULL },
	{ "{\"segments\":[{\"start\":[1,2,3]}]}", 1, NULL },
	{ "{\"segments\":[{\"start\":[1,2,3],\"end\":[1,2,3e39]}]}", 1, NULL },
	{ "{\"segments\":[" SEG "],\"mode\":\"all\",\"max_hits\":-1}", 1, NULL },
	/* accepted by the tree path, declined here */
	{ "{\"rays\":[]}", 0, "{\"r\\u0061ys\":[]}" },
	{ "{\"rays\":[" RAY_WITH("\"max_distance\":null") "]}", 0, "{\"rays\":[" RAY "]}" },
	{ "{\"rays\":[" RAY "],\"mode\":null}", 0, "{\"rays\":[" RAY "]}" },
	{ "{\"rays\":[" RAY "],\"transform\":null}", 0, "{\"rays\":[" RAY "]}" },
	{ "{\"rays\":[" RAY "],\"origin\":null}", 0, "{\"rays\":[" RAY "]}" },
	{ "{\"r\\u0061ys\":[" RAY "]}", 0, "{\"rays\":[" RAY "]}" },
	{ "{\"segments\":[" SEG "],\"backfaces\":null}", 1, "{\"segments\":[" SEG "]}" },
	/* the single forms: both at once, an item key missing, odd or repeated */
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"rays\":[" RAY "]}", 0, NULL },
	{ "{\"rays\":[" RAY "],\"direction\":[0,0,1]}", 0, NULL },
	{ "{\"start\":[0,0,-8],\"segments\":[" SEG "],\"end\":[0,0,8]}", 1, NULL },
	{ "{\"origin\":[0,0,-8]}", 0, NULL },
	{ "{\"direction\":[0,0,1],\"mode\":\"any\"}", 0, NULL },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,0]}", 0, NULL },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"origin\":[0,0,-8]}", 0, NULL },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"max_distance\":0}", 0, NULL },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"start\":[0,0,0]}", 0, NULL },
	{ "{\"start\":[0,0,-8],\"end\":[0,0,8],\"max_distance\":1}", 1, NULL },
	{ "{\"start\":[1,2,3],\"end\":[1,2,3]}", 1, NULL },
	{ "{\"end\":[1,2,3]}", 1, NULL },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"max_distance\":null}", 0, RAY },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"rays\":null}", 0, RAY },
	{ "{\"\\u006frigin\":[0,0,-8],\"direction\":[0,0,1]}", 0, RAY },
	{ "{\"start\":[0,0,-8],\"end\":[0,0,8],\"backfaces\":null}", 1, SEG },
};

/* The single forms taken, and answered as the tree path answers them (the
 * same body with a key escaped). */
static const struct single_row {
	const char *body, *escaped;
	int segments;
} singles[] = {
	{ RAY, "{\"\\u006frigin\":[0,0,-8],\"direction\":[0,0,1]}", 0 },
	{ SEG, "{\"st\\u0061rt\":[0,0,-8],\"end\":[0,0,8]}", 1 },
	{ "{\"mode\":\"all\",\"direction\":[0,0,1],\"max_distance\":100,\"origin\":[0,0,-8]}",
	  "{\"mode\":\"all\",\"direction\":[0,0,1],\"max_distance\":100,\"\\u006frigin\":[0,0,-8]}", 0 },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"max_distance\":7.5}",
	  "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"m\\u0061x_distance\":7.5}", 0 },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"transform\":{\"position\":[0,0,1]},\"backfaces\":\"cull\"}",
	  "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"tr\\u0061nsform\":{\"position\":[0,0,1]},\"backfaces\":\"cull\"}", 0 },
	{ "{\"end\":[0.5,0.5,8],\"start\":[0,0,-8],\"mode\":\"any\"}",
	  "{\"\\u0065nd\":[0.5,0.5,8],\"start\":[0,0,-8],\"mode\":\"any\"}", 1 },
};

START_TEST(test_singles)
{
	size_t i;

	for (i = 0; i < sizeof(singles) / sizeof(singles[0]); i++) {
		const struct single_row *row = &singles[i];
		struct api_response ra, rb;
		struct query q;
		int tree_ok;

		ck_assert_msg(cross_check(row->body, strlen(row->body), row->segments, 1, &tree_ok) == 1 &&
			      tree_ok, "not taken: %s", row->body);
		ck_assert_int_eq(direct(row->body, strlen(row->body), row->segments, &q), 1);
		ck_assert_msg(q.n == 1 && !q.batch, "not a single item: %s", row->body);
		query_release(&q);
		ck_assert_int_eq(direct(row->escaped, strlen(row->escaped), row->segments, &q), 0);
		answer(row->body, row->segments, &ra);
		answer(row->escaped, row->segments, &rb);
		ck_assert_msg(ra.status == 200, "%d: %s", ra.status, row->body);
		dc_assert_same_answer(&ra, &rb, row->body);
		ck_assert_msg(strstr(api_response_body(&ra, &(size_t){ 0 }), "\"hits\"") ||
			      strncmp(api_response_body(&ra, &(size_t){ 0 }), "{\"hit\":", 7) == 0,
			      "not a single answer: %s", api_response_body(&ra, &(size_t){ 0 }));
		api_response_release(&ra);
		api_response_release(&rb);
	}
}
END_TEST

/* n rays or segments */
static char *many(unsigned n, int segments)
{
	struct sb b = { 0 };
	unsigned k;

	sb_puts(&b, segments ? "{\"segments\":[" : "{\"rays\":[");
	for (k = 0; k < n; k++) {
		if (k)
			sb_putc(&b, ',');
		sb_puts(&b, segments ? SEG : RAY);
	}
	sb_puts(&b, "]}");
	return b.p;
}

/* The tree path's error for body, as the handler must send it. */
static void assert_tree_error(const char *body, int segments, const struct api_response *r)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct query t;
	struct api_fail f;
	enum api_err e = tree_decode(body, strlen(body), segments, &a, &t, &f);

	json_arena_release(&a);
	ck_assert_msg(e != API_OK, "the tree path accepts %s", body);
	dc_assert_error_answer(r, e, f.msg, body);
}

/* Each row declined, and answered as the tree path answers it. */
static void check_decline(const struct decline_row *row)
{
	struct query q;
	struct api_response r, s;

	ck_assert_msg(direct(row->body, strlen(row->body), row->segments, &q) == 0, "taken: %s",
		      row->body);
	ck_assert_msg(q.n == 0 && !q.rays, "declined, not left empty: %s", row->body);
	answer(row->body, row->segments, &r);
	if (row->same && !*row->same) {
		ck_assert_int_eq(r.status, 200);
	} else if (row->same) {
		answer(row->same, row->segments, &s);
		ck_assert_int_eq(s.status, 200);
		dc_assert_same_answer(&r, &s, row->body);
		api_response_release(&s);
	} else if (*row->body) {
		assert_tree_error(row->body, row->segments, &r);
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

START_TEST(test_limits)
{
	struct query q;
	struct api_response r;
	char *b;
	int k;

	for (k = 0; k < 4; k++) {
		/* max_batch items are taken, one more is declined (413 from the tree path) */
		unsigned n = (unsigned)lim.max_batch + (unsigned)(k & 1);
		int seg = k >= 2;

		b = many(n, seg);
		ck_assert_int_eq(direct(b, strlen(b), seg, &q), !(k & 1));
		if (!(k & 1))
			ck_assert_uint_eq(q.n, n);
		query_release(&q);
		answer(b, seg, &r);
		if (k & 1) {
			ck_assert_int_eq(r.status, 413);
			assert_tree_error(b, seg, &r);
		} else {
			ck_assert_int_eq(r.status, 200);
		}
		api_response_release(&r);
		free(b);
	}
	ck_assert_int_eq(direct(NULL, 0, 0, &q), 0);
	/* a body of short rays outgrows the first guess of its item count */
	b = many(64, 0);
	ck_assert_int_eq(decode_ray_query_direct(b, strlen(b), &(struct api_limits){ 0 }, &q), 1);
	ck_assert_uint_eq(q.n, 64);
	query_release(&q);
	free(b);
}
END_TEST

static Suite *rays_direct_suite(void)
{
	Suite *s = suite_create("rays_direct");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_random_valid);
	tcase_add_test(tc, test_random_mutations);
	tcase_add_test(tc, test_handler_same_answers);
	tcase_add_test(tc, test_declines);
	tcase_add_test(tc, test_singles);
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return dc_run_suite(rays_direct_suite());
}
