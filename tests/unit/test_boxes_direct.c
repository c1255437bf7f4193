/* test_boxes_direct.c - decode_hitscan_query_direct and
 * decode_obb_query_direct (POST /v1/hitscan and /v1/obb/raycast read without
 * a tree but for the members beside the rays: mesh, transform, boxes)
 * against the tree path (api_json_parse_in + decode_hitscan_query /
 * decode_obb_query) as oracle: the same struct on random valid bodies, never
 * an acceptance the tree refuses on mutated ones, and through api_handle the
 * same answers, byte for byte. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "decode.h"
#include "directcheck.h"
#include "json.h"
#include "shotgen.h"
#include "store.h"
#include "teststr.h"

static const struct api_limits lim = { 64, 1u << 20, 6, 0, 1u << 20, 1u << 20, 0 };

/* ---- the two paths */

/* The fast path's reading of a hitscan (obb: an OBB raycast) body into q; a
 * holds what q points into. */
static int direct(const char *body, size_t len, int obb, struct json_arena *a, struct query *q)
{
	return obb ? decode_obb_query_direct(body, len, &lim, a, q) :
		     decode_hitscan_query_direct(body, len, &lim, a, q);
}

/* The tree path's reading of body into q (API_OK) or f; a keeps the tree. */
static enum api_err tree_decode(const char *body, size_t len, int obb, struct json_arena *a,
				struct query *q, struct api_fail *f)
{
	cJSON *root;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	if ((e = api_json_parse_in(body, len, a, &root, f)))
		return e;
	return obb ? decode_obb_query(root, &lim, q, f) : decode_hitscan_query(root, &lim, q, f);
}

#define SAME(x, y) (memcmp(&(x), &(y), sizeof(x)) == 0)

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* a and b member by member: floats and doubles bitwise, strings by value. */
static void assert_same(const struct query *a, const struct query *b, const char *body)
{
	size_t i;

	ck_assert_msg(SAME(a->opts, b->opts), "opts differ: %s", body);
	ck_assert_msg(a->has_xform == b->has_xform && SAME(a->xf, b->xf), "transform differs: %s", body);
	ck_assert_msg(a->segments == b->segments && a->batch == b->batch && a->n == b->n &&
		      strcmp(a->items, b->items) == 0 && !a->records && !b->records,
		      "header differs: %s", body);
	ck_assert_msg(same_str(a->mesh, b->mesh), "mesh differs: %s", body);
	ck_assert_msg(a->boxes.n == b->boxes.n, "box count differs: %s", body);
	for (i = 0; i < a->boxes.n; i++)
		ck_assert_msg(SAME(a->boxes.boxes[i], b->boxes.boxes[i]) &&
			      same_str(a->boxes.ids[i], b->boxes.ids[i]), "box %zu differs: %s", i, body);
	for (i = 0; i < a->n; i++) {
		const struct qray *r = &a->rays[i], *s = &b->rays[i];

		ck_assert_msg(SAME(r->ray, s->ray) && SAME(r->dir, s->dir) && SAME(r->length, s->length),
			      "shot %zu differs: %s", i, body);
	}
}

/* Both paths on body[0..len) (an exact-size copy, no NUL after it); 1 when
 * the fast path took it. When required, a body the tree accepts must be
 * taken by the fast path too. */
static int cross_check(const char *text, size_t len, int obb, int required, int *tree_ok)
{
	struct json_arena a = JSON_ARENA_INIT, mine = JSON_ARENA_INIT;
	struct query q, t;
	struct api_fail f;
	char *body = dc_exact_copy(text, len);
	int d;

	d = direct(body, len, obb, &mine, &q);
	*tree_ok = tree_decode(body, len, obb, &a, &t, &f) == API_OK;
	if (d) {
		ck_assert_msg(*tree_ok, "fast path took what the tree refuses (%s): %.*s", f.msg,
			      (int)len, text);
		assert_same(&q, &t, text);
	} else {
		ck_assert_msg(q.n == 0 && !q.rays && !q.batch && !q.has_xform && !q.mesh &&
			      q.boxes.n == 0 && !q.boxes.boxes, "declined, not left empty");
		ck_assert_msg(!required || !*tree_ok, "fast path declined a plain valid body: %.*s",
			      (int)len, text);
	}
	query_release(&q);
	if (*tree_ok)
		query_release(&t);
	json_arena_release(&a);
	json_arena_release(&mine);
	free(body);
	return d;
}

/* ---- random bodies */

/* [x, y, z], random whitespace and spellings (shotgen_vec). */
static void vec(struct sb *b, double x, double y, double z)
{
	shotgen_vec(b, (const double[]){ x, y, z }, 0, 0);
}

/* A unit vector's component, now and then exactly 0 or 1. */
static double comp(void)
{
	unsigned k = shotgen_below(8);

	return k == 0 ? 0 : k == 1 ? 1 : (shotgen_unit() - 0.5) * 2;
}

/* One box near the cube (x in -4..4, z in -2..2), members in random order:
 * an id now and then, a rotation or axes now and then. */
static void gen_box(struct sb *b)
{
	static const char *const pieces[] = { "p", "head", "7", "_", "\\u0041", "\\\"", "\xc3\xa9" };
	int order[5] = { 0, 1, 2, 3, 4 }, first = 1;
	unsigned form = shotgen_below(4);

	shotgen_shuffle(order, 5);
	sb_putc(b, '{');
	for (int k = 0; k < 5; k++) {
		int m = order[k];

		if ((m == 0 && shotgen_below(2)) || (m == 3 && form != 1) || (m == 4 && form != 2))
			continue;
		if (!first)
			sb_putc(b, ',');
		first = 0;
		shotgen_ws(b);
		switch (m) {
		case 0:
			sb_puts(b, "\"id\":");
			shotgen_id(b, 1 + shotgen_below(4), pieces, sizeof(pieces) / sizeof(pieces[0]));
			break;
		case 1:
			sb_puts(b, "\"center\":");
			vec(b, (shotgen_unit() - 0.5) * 8, (shotgen_unit() - 0.5) * 3,
			    (shotgen_unit() - 0.5) * 4);
			break;
		case 2:
			sb_puts(b, "\"half_extents\":");
			vec(b, shotgen_unit(), shotgen_unit() * 2, shotgen_below(4) ? shotgen_unit() : 0);
			break;
		case 3:
			sb_puts(b, "\"rotation\":[");
			shotgen_num(b, comp());
			for (int c = 0; c < 3; c++)
				sb_putc(b, ','), shotgen_num(b, comp());
			sb_putc(b, ']');
			break;
		default:	/* a rotation about y by a quarter turn, or none */
			sb_puts(b, shotgen_below(2) ? "\"axes\":[[0,0,-1],[0,1,0],[1,0,0]]" :
						      "\"axes\":[[1,0,0],[0,1,0],[0,0,1]]");
		}
		shotgen_ws(b);
	}
	sb_putc(b, '}');
}

/* One shot (single: the single form's members, no braces) from z = -8
 * towards +z, at the cube and the boxes. */
static void gen_shot(struct sb *b, int single)
{
	int origin_at = (int)shotgen_below(2);	/* which of the two members comes first */

	if (!single)
		sb_putc(b, '{');
	for (int k = 0; k < 2; k++) {
		if (k)
			sb_putc(b, ',');
		if (k == origin_at) {
			sb_puts(b, "\"origin\":");
			vec(b, (shotgen_unit() - 0.5) * 8, (shotgen_unit() - 0.5) * 3, -8);
		} else {
			sb_puts(b, "\"direction\":");
			vec(b, (shotgen_unit() - 0.5) * 0.2, 0, 1);
		}
	}
	if (shotgen_below(3) == 0)
		sb_puts(b, ",\"max_distance\":"), shotgen_num(b, 1 + shotgen_unit() * 12);
	if (!single)
		sb_putc(b, '}');
}

/* A hitscan body: shots (or a single shot, when single), the mesh "cube"
 * now and then with a transform, 0..nbox boxes; obb: an OBB raycast's, rays
 * and boxes (always given). Members in random order. */
static void gen_body(struct sb *b, int obb, int single, unsigned nbox)
{
	int order[4] = { 0, 1, 2, 3 }, first = 1, mesh = !obb && shotgen_below(3) != 0;

	shotgen_shuffle(order, 4);
	sb_putc(b, '{');
	for (int k = 0; k < 4; k++) {
		int m = order[k];

		if ((m == 1 && !mesh) || (m == 2 && (!mesh || shotgen_below(3))) ||
		    (m == 3 && nbox == 0 && !obb && shotgen_below(2)))
			continue;
		if (!first)
			sb_putc(b, ',');
		first = 0;
		shotgen_ws(b);
		if (m == 0 && single) {
			gen_shot(b, 1);
		} else if (m == 0) {
			unsigned n = 1 + shotgen_below(12);

			sb_puts(b, obb ? "\"rays\":[" : "\"shots\":[");
			for (unsigned s = 0; s < n; s++) {
				if (s)
					sb_putc(b, ',');
				gen_shot(b, 0);
			}
			sb_putc(b, ']');
		} else if (m == 1) {
			sb_puts(b, shotgen_below(4) ? "\"mesh\":\"cube\"" : "\"mesh\":\"c\\u0075be\"");
		} else if (m == 2) {
			sb_puts(b, shotgen_below(2) ?
					   "\"transform\":{\"position\":[0.25,0,1],\"rotation\":[1,0,0,0.1]}" :
					   "\"transform\":{\"matrix\":[2,0,0,0.5, 0,1,0,0, 0,0,-1,0, 0,0,0,1]}");
		} else {
			sb_puts(b, "\"boxes\":[");
			for (unsigned k2 = 0; k2 < nbox; k2++) {
				if (k2)
					sb_putc(b, ',');
				gen_box(b);
			}
			sb_putc(b, ']');
		}
		shotgen_ws(b);
	}
	sb_putc(b, '}');
}

START_TEST(test_random_valid)
{
	unsigned it, taken = 0, plain = 0, with_boxes = 0;

	for (it = 0; it < 4000; it++) {
		struct sb b = { 0 };
		unsigned nbox = shotgen_below((unsigned)lim.max_boxes + 1);
		int tree_ok, obb = it % 4 == 3;

		gen_body(&b, obb, it % 3 == 2, nbox);
		taken += (unsigned)cross_check(b.p, b.len, obb, 1, &tree_ok);
		plain += tree_ok;
		with_boxes += tree_ok && nbox > 0;
		free(b.p);
	}
	/* nearly every body is valid (a box of no extent or a zero
	 * quaternion is refused by both), and the fast path takes each */
	ck_assert_uint_ge(plain, 3600);
	ck_assert_uint_ge(with_boxes, 2800);
	ck_assert_uint_eq(taken, plain);
}
END_TEST

/* The suite's own tokens for dc_mutate to insert. */
static const char *const tokens[] = {
	"\"mesh\":\"cube\",", "\"mesh\":null,", "\"mesh\":\"\",", "\"mesh\":3,",
	"\"boxes\":[],", "\"boxes\":null,", "\"boxes\":[{}],",
	"{\"center\":[0,0,0],\"half_extents\":[1,1,1]},", "\"rotation\":[0,0,0,0],",
	"\"axes\":[[1,0,0],[0,1,0],[0,0,2]],", "\"id\":null,", "\"id\":7,",
	"\"transform\":{},", "\"transform\":{\"scale\":[0,1,1]},", "\"mode\":\"any\",",
	"\"shots\":[{\"origin\":[0,0,0],\"direction\":[1,0,0]}],", "\"origin\":[0,0,0],",
	"\"rays\":[{\"origin\":[0,0,0],\"direction\":[1,0,0]}],",
	"\"max_distance\":0,", ",{}", "0000000000", "\"half_extents\":[-1,1,1],",
};

START_TEST(test_random_mutations)
{
	unsigned it, taken = 0;

	for (it = 0; it < 15000; it++) {
		struct sb b = { 0 };
		int k, tree_ok, obb = it % 4 == 3;

		gen_body(&b, obb, it % 3 == 2, shotgen_below((unsigned)lim.max_boxes + 1));
		for (k = 0; k < 1 + (int)shotgen_below(3); k++)
			dc_mutate(&b, tokens, sizeof(tokens) / sizeof(tokens[0]));
		taken += (unsigned)cross_check(b.p, b.len, obb, 0, &tree_ok);
		free(b.p);
	}
	/* some edits keep the body valid (a digit, whitespace): the check bites */
	ck_assert_uint_ge(taken, 900);
}
END_TEST

/* ---- through api_handle: a cube mesh */

static struct api_ctx ctx;

static void setup(void)
{
	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ctx.limits = lim;
	dc_call_ok(&ctx, "PUT", "/v1/meshes/cube", dc_cube_json, 201);
}

static void teardown(void)
{
	store_free(ctx.store);
}

static void answer(const char *body, int obb, struct api_response *r)
{
	dc_call(&ctx, "POST", obb ? "/v1/obb/raycast" : "/v1/hitscan", body, strlen(body), r);
}

/* Random bodies answered as the tree path answers them: the same body with
 * its "origin" key escaped, which the fast path declines. */
START_TEST(test_handler_same_answers)
{
	unsigned it, boxes = 0, meshes = 0, obb_hits = 0;

	for (it = 0; it < 500; it++) {
		struct json_arena a = JSON_ARENA_INIT;
		struct api_response ra, rb;
		struct query q;
		struct sb b = { 0 }, e = { 0 };
		const char *body;
		int obb = it % 5 == 4;
		char *at;

		gen_body(&b, obb, it % 3 == 2, shotgen_below((unsigned)lim.max_boxes + 1));
		if (!direct(b.p, b.len, obb, &a, &q)) {
			free(b.p);	/* refused by both (cross-checked above) */
			json_arena_release(&a);
			continue;
		}
		query_release(&q);
		json_arena_release(&a);
		answer(b.p, obb, &ra);
		at = strstr(b.p, "\"origin\"");
		ck_assert_ptr_nonnull(at);
		sb_putn(&e, b.p, (size_t)(at - b.p) + 1);
		sb_puts(&e, "\\u006f");
		sb_puts(&e, at + 2);
		ck_assert_int_eq(direct(e.p, e.len, obb, &a, &q), 0);
		json_arena_release(&a);
		answer(e.p, obb, &rb);
		dc_assert_same_answer(&ra, &rb, b.p);
		body = api_response_body(&ra, &(size_t){ 0 });
		ck_assert_msg(ra.status == 200, "%d %s: %s", ra.status, body, b.p);
		boxes += strstr(body, "\"hit\":\"box\"") != NULL;
		meshes += strstr(body, "\"hit\":\"mesh\"") != NULL;
		obb_hits += obb && strstr(body, "\"hit\":true") != NULL;
		api_response_release(&ra);
		api_response_release(&rb);
		free(b.p);
		free(e.p);
	}
	ck_assert_uint_ge(boxes, 50);
	ck_assert_uint_ge(meshes, 50);
	ck_assert_uint_ge(obb_hits, 20);
}
END_TEST

#define SHOTS "\"shots\":[{\"origin\":[0,0,-8],\"direction\":[0,0,1]}]"
#define RAYS "\"rays\":[{\"origin\":[0,0,-8],\"direction\":[0,0,1]}]"
#define BOX "{\"id\":\"p\",\"center\":[0,0,-4],\"half_extents\":[1,1,1]}"

/* Bodies the fast path declines; same: a body the tree path answers alike
 * (NULL: the tree path refuses it). */
static const struct decline_row {
	const char *body, *same;
	int obb;
} declines[] = {
	{ "", NULL, 0 },
	{ "{}", NULL, 0 },
	{ "{\"boxes\":[" BOX "]}", NULL, 0 },
	{ "{" SHOTS ",\"transform\":{\"position\":[1,0,0]}}", NULL, 0 },
	{ "{" SHOTS ",\"mesh\":\"cube\",\"transform\":{\"scale\":[0,1,1]}}", NULL, 0 },
	{ "{" SHOTS ",\"mesh\":3}", NULL, 0 },
	{ "{" SHOTS ",\"mesh\":\"\"}", NULL, 0 },
	{ "{" SHOTS ",\"mesh\":\"cube\",\"mesh\":\"cube\"}", NULL, 0 },
	{ "{" SHOTS ",\"boxes\":{}}", NULL, 0 },
	{ "{" SHOTS ",\"boxes\":[1]}", NULL, 0 },
	{ "{" SHOTS ",\"boxes\":[{}]}", NULL, 0 },
	{ "{" SHOTS ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[-1,1,1]}]}", NULL, 0 },
	{ "{" SHOTS ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,1,1],"
	  "\"rotation\":[0,0,0,0]}]}", NULL, 0 },
	{ "{" SHOTS ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,1,1],"
	  "\"axes\":[[1,0,0],[0,1,0],[0,0,2]]}]}", NULL, 0 },
	{ "{" SHOTS ",\"boxes\":[" BOX "," BOX "," BOX "," BOX "," BOX "," BOX "," BOX "]}", NULL, 0 },
	{ "{" SHOTS ",\"boxes\":[" BOX "],\"boxes\":[" BOX "]}", NULL, 0 },
	{ "{" SHOTS ",\"mode\":\"any\"}", NULL, 0 },
	{ "{" SHOTS ",\"rays\":[]}", NULL, 0 },
	{ "{" SHOTS ",\"origin\":[0,0,0]}", NULL, 0 },
	{ "{\"shots\":[{\"origin\":[0,0,0],\"direction\":[0,0,0]}]}", NULL, 0 },
	{ "{\"origin\":[0,0,-8],\"direction\":[0,0,1],\"boxes\":[" BOX "]", NULL, 0 },
	/* accepted by the tree path, declined here */
	{ "{\"shots\":[]}", "{\"sh\\u006fts\":[]}", 0 },
	{ "{" SHOTS ",\"mesh\":null}", "{" SHOTS "}", 0 },
	{ "{" SHOTS ",\"boxes\":null}", "{" SHOTS "}", 0 },
	{ "{" SHOTS ",\"mesh\":\"cube\",\"transform\":null}", "{" SHOTS ",\"mesh\":\"cube\"}", 0 },
	{ "{" SHOTS ",\"m\\u0065sh\":\"cube\"}", "{" SHOTS ",\"mesh\":\"cube\"}", 0 },
	{ "{" SHOTS ",\"b\\u006fxes\":[" BOX "]}", "{" SHOTS ",\"boxes\":[" BOX "]}", 0 },
	/* OBB raycasts */
	{ "{" RAYS "}", NULL, 1 },
	{ "{" RAYS ",\"boxes\":{}}", NULL, 1 },
	{ "{" RAYS ",\"boxes\":[" BOX "],\"mesh\":\"cube\"}", NULL, 1 },
	{ "{" RAYS ",\"boxes\":[" BOX "],\"mode\":\"any\"}", NULL, 1 },
	{ "{" RAYS ",\"boxes\":[" BOX "],\"transform\":{\"position\":[1,0,0]}}", NULL, 1 },
	{ "{" SHOTS ",\"boxes\":[" BOX "]}", NULL, 1 },
	{ "{" RAYS ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[-1,1,1]}]}", NULL, 1 },
	{ "{" RAYS ",\"boxes\":null}", NULL, 1 },
	{ "{\"rays\":[],\"boxes\":[" BOX "]}", "{\"r\\u0061ys\":[],\"boxes\":[" BOX "]}", 1 },
	{ "{" RAYS ",\"b\\u006fxes\":[" BOX "]}", "{" RAYS ",\"boxes\":[" BOX "]}", 1 },
};

START_TEST(test_declines)
{
	for (size_t i = 0; i < sizeof(declines) / sizeof(declines[0]); i++) {
		const struct decline_row *row = &declines[i];
		struct json_arena a = JSON_ARENA_INIT;
		struct api_response r, s;
		struct query q, t;
		struct api_fail f;
		enum api_err e;

		ck_assert_msg(direct(row->body, strlen(row->body), row->obb, &a, &q) == 0, "taken: %s",
			      row->body);
		ck_assert_msg(q.n == 0 && !q.rays && !q.mesh && q.boxes.n == 0,
			      "declined, not left empty: %s", row->body);
		json_arena_release(&a);
		answer(row->body, row->obb, &r);
		if (row->same) {
			answer(row->same, row->obb, &s);
			ck_assert_int_eq(s.status, 200);
			dc_assert_same_answer(&r, &s, row->body);
			api_response_release(&s);
		} else if (*row->body) {
			e = tree_decode(row->body, strlen(row->body), row->obb, &a, &t, &f);
			ck_assert_msg(e != API_OK, "the tree path accepts %s", row->body);
			dc_assert_error_answer(&r, e, f.msg, row->body);
			json_arena_release(&a);
		} else {
			ck_assert_int_eq(r.status, 400);
		}
		api_response_release(&r);
	}
}
END_TEST

/* The mesh's name and the box ids outlive the body: they live in the
 * caller's arena, and a later parse into it leaves them alone. */
START_TEST(test_names_in_arena)
{
	static const char text[] = "{\"mesh\":\"c\\u0075be\",\"boxes\":[{\"id\":\"h\\u00e9ad\","
				   "\"center\":[0,0,0],\"half_extents\":[1,1,1]},"
				   "{\"center\":[1,0,0],\"half_extents\":[1,1,1]}]," SHOTS "}";
	struct json_arena a = JSON_ARENA_INIT;
	struct api_fail f;
	struct query q;
	cJSON *root;
	char *body = dc_exact_copy(text, strlen(text));

	ck_assert_int_eq(direct(body, strlen(text), 0, &a, &q), 1);
	memset(body, 'x', strlen(text));
	free(body);
	ck_assert_int_eq(api_json_parse_in("[1,2,3]", 7, &a, &root, &f), API_OK);
	ck_assert_str_eq(q.mesh, "cube");
	ck_assert_uint_eq(q.boxes.n, 2);
	ck_assert_str_eq(q.boxes.ids[0], "h\xc3\xa9" "ad");
	ck_assert_ptr_null(q.boxes.ids[1]);
	ck_assert_uint_eq(q.n, 1);
	ck_assert_int_eq(q.batch, 1);
	query_release(&q);
	json_arena_release(&a);
}
END_TEST

static Suite *boxes_direct_suite(void)
{
	Suite *s = suite_create("boxes_direct");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_random_valid);
	tcase_add_test(tc, test_random_mutations);
	tcase_add_test(tc, test_handler_same_answers);
	tcase_add_test(tc, test_declines);
	tcase_add_test(tc, test_names_in_arena);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return dc_run_suite(boxes_direct_suite());
}
