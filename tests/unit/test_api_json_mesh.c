/* test_api_json_mesh.c - the streaming JSON mesh decoder against the tree
 * decoder (json_parse + decode_mesh_json) as oracle: same status, same
 * message, same arrays, on random valid, faulty and broken bodies. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "json.h"
#include "json_mesh.h"
#include "teststr.h"

static struct xs rng = { 0x243f6a8885a308d3ull };

static uint64_t rnd(void)
{
	return xs_next(&rng);
}

static unsigned rnd_below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static void ws(struct sb *b)
{
	static const char *const w[] = { " ", "\n", "\t", "\r\n  " };

	while (rnd_below(8) == 0)
		sb_puts(b, w[rnd_below(4)]);
}

/* A number: mostly small integers and decimals, sometimes a fault. */
static void gen_number(struct sb *b, int index, unsigned nvert, int faults)
{
	static const char *const odd[] = {
		"1e400", "-1e400", "1e39", "-3.5e38", "3.4028234e38", "1.5", "-1", "-0", "0.0",
		"4294967296", "4294967295", "1e2", "1E+1", "2.5e-3", "123456789012345678901234",
		"0.1", "-0.000001", "9007199254740993", "1e-400",
	};
	char tmp[64];

	if (faults && rnd_below(40) == 0) {
		sb_puts(b, odd[rnd_below(sizeof(odd) / sizeof(odd[0]))]);
		return;
	}
	if (index) {
		unsigned top = nvert + (faults && rnd_below(20) == 0 ? 3 : 0);

		snprintf(tmp, sizeof(tmp), "%u", top ? rnd_below(top) : 0);
	} else if (rnd_below(2)) {
		snprintf(tmp, sizeof(tmp), "%d", (int)rnd_below(2001) - 1000);
	} else {
		snprintf(tmp, sizeof(tmp), "%.*g", 1 + (int)rnd_below(17),
			 ((double)(int64_t)rnd() / 9.2e18) * pow(10, (int)rnd_below(20) - 10));
	}
	sb_puts(b, tmp);
}

/* Some other JSON value, for type faults. */
static void gen_other(struct sb *b)
{
	static const char *const v[] = {
		"\"x\"", "true", "false", "null", "{}", "{\"a\":[1,2,3]}", "[]", "[1,2]", "[1,2,3]",
		"[[1,2,3]]", "[1,\"2\",3]", "\"\\u00e9\"", "[1e400,1,1]", "[1,2,3,4]",
	};

	sb_puts(b, v[rnd_below(sizeof(v) / sizeof(v[0]))]);
}

/* vertices or triangles: n groups, nested or flat, maybe with faults. */
static void gen_array(struct sb *b, unsigned n, int index, unsigned nvert, int faults)
{
	int nested = rnd_below(2);
	unsigned k, j, count = nested ? n : 3 * n;

	if (faults && rnd_below(30) == 0) {
		gen_other(b);
		return;
	}
	if (faults && rnd_below(15) == 0)
		count += 1 + rnd_below(2);
	sb_puts(b, "[");
	ws(b);
	for (k = 0; k < count; k++) {
		if (k)
			sb_puts(b, ",");
		ws(b);
		if (faults && rnd_below(60) == 0) {
			gen_other(b);
		} else if (nested) {
			unsigned m = faults && rnd_below(40) == 0 ? rnd_below(5) : 3;

			sb_puts(b, "[");
			for (j = 0; j < m; j++) {
				if (j)
					sb_puts(b, ",");
				ws(b);
				if (faults && rnd_below(80) == 0)
					gen_other(b);
				else
					gen_number(b, index, nvert, faults);
				ws(b);
			}
			sb_puts(b, "]");
		} else {
			gen_number(b, index, nvert, faults);
		}
		ws(b);
	}
	sb_puts(b, "]");
}

static void gen_key(struct sb *b, const char *key)
{
	if (strcmp(key, "vertices") == 0 && rnd_below(10) == 0)
		sb_puts(b, "\"vert\\u0069ces\"");
	else {
		sb_puts(b, "\"");
		sb_puts(b, key);
		sb_puts(b, "\"");
	}
	ws(b);
	sb_puts(b, ":");
	ws(b);
}

/* A mesh body; faults on: type, shape, range, key and syntax faults. */
static void gen_body(struct sb *b, int faults)
{
	static const char *const keys[] = { "vertices", "triangles", "normals", "", "Vertices", "vertices" };
	unsigned nvert = 1 + rnd_below(12), ntri = rnd_below(10) ? 1 + rnd_below(12) : 0;
	int order = rnd_below(2), k;

	b->len = 0;
	ws(b);
	if (faults && rnd_below(60) == 0) {
		gen_other(b);
		return;
	}
	sb_puts(b, "{");
	ws(b);
	for (k = 0; k < 2; k++) {
		int tri = k ^ order;

		if (k)
			sb_puts(b, ",");
		ws(b);
		if (faults && rnd_below(25) == 0) {
			gen_key(b, keys[2 + rnd_below(4)]);
		} else {
			gen_key(b, tri ? "triangles" : "vertices");
		}
		if (faults && rnd_below(30) == 0)
			sb_puts(b, "null");
		else if (tri)
			gen_array(b, ntri, 1, nvert, faults);
		else
			gen_array(b, nvert, 0, 0, faults);
		ws(b);
	}
	sb_puts(b, "}");
	ws(b);
}

/* Decode with both; they must agree on everything. */
static void compare(const char *body, size_t len, size_t max_tris)
{
	struct json_arena arena = JSON_ARENA_INIT;
	struct mesh_data a, b;
	struct api_fail fa, fb;
	enum api_err ea, eb;
	cJSON *root;

	memset(&fa, 0, sizeof(fa));
	memset(&fb, 0, sizeof(fb));
	ea = api_json_parse_in(body, len, &arena, &root, &fa);
	if (!ea)
		ea = decode_mesh_json(root, max_tris, &a, &fa);
	else
		memset(&a, 0, sizeof(a));
	json_arena_release(&arena);
	eb = json_mesh_decode(body, len, max_tris, &b, &fb);
	ck_assert_msg(ea == eb, "errors %d vs %d (%s | %s) for %.*s", ea, eb, fa.msg, fb.msg,
		      (int)(len < 300 ? len : 300), body);
	if (ea) {
		ck_assert_msg(strcmp(fa.msg, fb.msg) == 0, "'%s' vs '%s' for %.*s", fa.msg, fb.msg,
			      (int)(len < 300 ? len : 300), body);
		ck_assert_ptr_null(b.xyz);
		ck_assert_ptr_null(b.idx);
		return;
	}
	ck_assert_uint_eq(a.nvert, b.nvert);
	ck_assert_uint_eq(a.ntri, b.ntri);
	ck_assert_msg(memcmp(a.xyz, b.xyz, 3 * a.nvert * sizeof(float)) == 0, "vertices differ: %s", body);
	ck_assert_msg(memcmp(a.idx, b.idx, 3 * a.ntri * sizeof(uint32_t)) == 0, "indices differ: %s", body);
	mesh_data_release(&a);
	mesh_data_release(&b);
}

START_TEST(test_random_valid)
{
	struct sb b = { 0 };
	int i;

	for (i = 0; i < 3000; i++) {
		gen_body(&b, 0);
		compare(b.p, b.len, 1000);
	}
	free(b.p);
}
END_TEST

START_TEST(test_random_faults)
{
	struct sb b = { 0 };
	int i;

	for (i = 0; i < 20000; i++) {
		gen_body(&b, 1);
		compare(b.p, b.len, rnd_below(4) ? 1000 : 1 + rnd_below(8));
	}
	free(b.p);
}
END_TEST

/* Broken syntax: every prefix of some bodies, and random byte edits. */
START_TEST(test_random_syntax)
{
	static const char edits[] = "{}[],:\"0-.eE \\x\x01\xc3";
	struct sb b = { 0 };
	size_t cut;
	int i;

	for (i = 0; i < 120; i++) {
		gen_body(&b, i & 1);
		for (cut = 0; cut <= b.len; cut++)
			compare(b.p, cut, 1000);
	}
	for (i = 0; i < 10000; i++) {
		int e, nedits = 1 + (int)rnd_below(3);

		gen_body(&b, i & 1);
		for (e = 0; e < nedits && b.len; e++)
			b.p[rnd_below((unsigned)b.len)] = edits[rnd_below(sizeof(edits) - 1)];
		compare(b.p, b.len, 1000);
	}
	free(b.p);
}
END_TEST

/* Hand-picked: each fault kind and the order between them. */
static const char *const fixed[] = {
	"", " ", "{}", "[]", "null", "{\"vertices\":null,\"triangles\":null}",
	"{\"vertices\":[0,0,0],\"triangles\":[0,0,0]}",
	"{\"triangles\":[[0,1,2]],\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}",
	"{\"triangles\":[[0,1,5]],\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}",
	"{\"triangles\":[[0,1,5],[0,1.5,2]],\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}",
	"{\"triangles\":[[0,1,2],[7,\"x\",2]],\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}",
	"{\"triangles\":[[0,1,2],[7,1,2,3]],\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}",
	"{\"triangles\":[[0,1,2],[-7,1e400,2]],\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}",
	"{\"triangles\":[0,1,9,0,[1],2],\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}",
	"{\"triangles\":[0,1,2,0,{},2],\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,1e39]],\"triangles\":[[0,1,9]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,1e39]],\"triangles\":[[0,1,2],[0,1]],\"x\":1}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,1e39]],\"triangles\":[[0,1,2],[0,1]],\"\":1}",
	"{\"vertices\":[[0,0,0],[1,0,0]],\"triangles\":[[0,1,2],[0,1,2]],\"vertices\":1}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2],[0,1,2]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2],[0,1,2],[0,1,2]]} x",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2],[0,1,2],[0,1,2]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2],[0,1,2],[0,1,2],[0,1,2]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2],[0,1,2],[0,1,2],[0,1]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,0000]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,1234567890123456789012345678901234567890123456789012345678901234567890]]}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2]],\"k\\u0000\":1}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2]],\"a-very-long-key-that-is-longer-than-sixty-four-bytes-so-it-is-cut-off-in-the-message-and-more\":1}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2]],\"a-very-long-key-that-is-longer-than-eighty-bytes-so-it-needs-a-heap-copy-in-the-reader-0123456789\":1}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2]],\"\\u00e9\\ud83d\\ude00\":1}",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2]]",
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2]],}",
	"{\"vertices\"[[0,0,0]]}",
	"{vertices:[]}",
	/* indices whose message runs past 96 bytes (fuzz_json_mesh): cut alike */
	"{\"triangles\":[0,99999999E99,2,2,1,3],\"vertices\":[15,1,0.5e1]}",
	"{\"triangles\":[0,1e300,2],\"vertices\":[1,2,3]}",
};

START_TEST(test_fixed)
{
	compare(fixed[_i], strlen(fixed[_i]), 3);
	compare(fixed[_i], strlen(fixed[_i]), 1000);
}
END_TEST

/* A NULL body with length 0 is the empty-body error. */
START_TEST(test_null_body)
{
	struct mesh_data d;
	struct api_fail f;

	ck_assert_int_eq(json_mesh_decode(NULL, 0, 10, &d, &f), API_INVALID_JSON);
	ck_assert_str_eq(f.msg, "body: empty, expected a JSON object");
	ck_assert_ptr_null(d.xyz);
}
END_TEST

/* A large flat mesh: same arrays, and nothing past max_tris is stored (413). */
START_TEST(test_large_and_limit)
{
	struct sb b = { 0 };
	struct mesh_data d;
	struct api_fail f;
	char tmp[64];
	unsigned k, n = 200000;

	sb_puts(&b, "{\"vertices\":[");
	for (k = 0; k < n; k++) {
		snprintf(tmp, sizeof(tmp), "%s%u.25,%u,-%u", k ? "," : "", k, k % 7, k % 13);
		sb_puts(&b, tmp);
	}
	sb_puts(&b, "],\"triangles\":[");
	for (k = 0; k + 2 < n; k++) {
		snprintf(tmp, sizeof(tmp), "%s[%u,%u,%u]", k ? "," : "", k, k + 1, k + 2);
		sb_puts(&b, tmp);
	}
	sb_puts(&b, "]}");
	compare(b.p, b.len, n);
	ck_assert_int_eq(json_mesh_decode(b.p, b.len, n, &d, &f), API_OK);
	ck_assert_uint_eq(d.nvert, n);
	ck_assert_uint_eq(d.ntri, n - 2);
	ck_assert(d.xyz[3 * 1234] == 1234.25f && d.idx[3 * 777 + 2] == 779);
	mesh_data_release(&d);
	ck_assert_int_eq(json_mesh_decode(b.p, b.len, 1000, &d, &f), API_PAYLOAD_TOO_LARGE);
	ck_assert_str_eq(f.msg, "triangles: 199998 triangles, the limit is 1000");
	compare(b.p, b.len, 1000);
	free(b.p);
}
END_TEST

static Suite *json_mesh_suite(void)
{
	Suite *s = suite_create("api_json_mesh");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_random_valid);
	tcase_add_test(tc, test_random_faults);
	tcase_add_test(tc, test_random_syntax);
	tcase_add_loop_test(tc, test_fixed, 0, (int)(sizeof(fixed) / sizeof(fixed[0])));
	tcase_add_test(tc, test_null_body);
	tcase_add_test(tc, test_large_and_limit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_mesh_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
