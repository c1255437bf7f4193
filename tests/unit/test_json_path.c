/* test_json_path.c - a parser's error names the field it sits in: random
 * documents with one faulty value at a random place (a number over the
 * length limit, a malformed number, a stray character, the body cut short)
 * must be refused with that value's path, as the decoders write paths;
 * json_path_at's edges; the streaming mesh decoder likewise. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "json.h"
#include "json_mesh.h"
#include "json_path.h"
#include "teststr.h"

static struct xs rng = { 0x51a7e5c0ffee1234ull };

static unsigned rnd_below(unsigned n)
{
	return (unsigned)(xs_next(&rng) % n);
}

static void gen_ws(struct sb *b)
{
	while (rnd_below(5) == 0)
		sb_putc(b, " \t\n\r"[rnd_below(4)]);
}

/* A key as written in the text (no quotes), unique in its object by its
 * member number k: plain, with escapes, or longer than the 64 bytes a path
 * keeps of it. */
static void gen_key(char *out, size_t cap, unsigned k)
{
	static const char *const escapes[] = { "\\\"", "\\\\", "\\n", "\\u00e9", "\\/" };
	size_t n = 0;
	unsigned len;

	switch (rnd_below(6)) {
	case 0:
		snprintf(out, cap, "%s%u%s", "k", k, escapes[rnd_below(5)]);
		return;
	case 1:
		len = 60 + rnd_below(20);
		for (; n < len && n + 1 < cap; n++)
			out[n] = (char)('a' + rnd_below(26));
		n += (size_t)snprintf(out + n, cap - n, "_%u", k);
		return;
	default:
		len = 1 + rnd_below(8);
		for (; n < len && n + 1 < cap; n++)
			out[n] = (char)('a' + rnd_below(26));
		snprintf(out + n, cap - n, "%u", k);
	}
}

/* Start a member: ", " before all but the first, and for an object the
 * key (into key, cap bytes, as written) and its colon. */
static void put_member(struct sb *b, int arr, unsigned i, char *key, size_t cap)
{
	if (i) {
		sb_putc(b, ',');
		gen_ws(b);
	}
	if (arr)
		return;
	gen_key(key, cap, i);
	sb_putc(b, '"');
	sb_puts(b, key);
	sb_putc(b, '"');
	gen_ws(b);
	sb_putc(b, ':');
	gen_ws(b);
}

static void gen_plain(struct sb *b, int depth);

static void gen_container(struct sb *b, int depth, int arr)
{
	unsigned n = rnd_below(4);

	sb_putc(b, arr ? '[' : '{');
	gen_ws(b);
	for (unsigned i = 0; i < n; i++) {
		char key[128];

		put_member(b, arr, i, key, sizeof(key));
		gen_plain(b, depth + 1);
		gen_ws(b);
	}
	sb_putc(b, arr ? ']' : '}');
}

/* A valid value, no fault in it. */
static void gen_plain(struct sb *b, int depth)
{
	static const char *const scalars[] = { "0", "-1.5e3", "true", "null", "\"s,[]{}:\\\"x\"",
					       "\"\"", "12345678901234567890" };

	if (depth < 4 && rnd_below(3) == 0)
		gen_container(b, depth, (int)rnd_below(2));
	else
		sb_puts(b, scalars[rnd_below(7)]);
}

/* The faults; each makes the parser stop inside the value it replaces. */
enum fault { F_LONG, F_DOTS, F_STRAY, F_CUT, F_NFAULTS };

/*
 * A container holding, at a random member, either a deeper container that
 * leads to the fault or the fault itself; the members before and after it
 * are plain. The fault's path is appended to *path (as the decoders write
 * it: "." between keys, [i], keys cut at 64 bytes). Returns 1 once the
 * body ends at the fault (F_CUT: nothing may follow).
 */
static int gen_to_fault(struct sb *b, struct sb *path, int depth, enum fault fault)
{
	int arr = (int)rnd_below(2);
	unsigned n = 1 + rnd_below(4), at = rnd_below(n);

	sb_putc(b, arr ? '[' : '{');
	gen_ws(b);
	for (unsigned i = 0; i < n; i++) {
		char key[128];

		put_member(b, arr, i, key, sizeof(key));
		if (!arr && i == at) {
			char cut[80];

			snprintf(cut, sizeof(cut), "%s%.64s", path->len ? "." : "", key);
			sb_puts(path, cut);
		} else if (i == at) {
			char idx[24];

			snprintf(idx, sizeof(idx), "[%u]", i);
			sb_puts(path, idx);
		}
		if (i != at) {
			gen_plain(b, depth + 1);
		} else if (depth < 4 && rnd_below(2)) {
			if (gen_to_fault(b, path, depth + 1, fault))
				return 1;
		} else {
			switch (fault) {
			case F_LONG:
				sb_puts(b, "1.");
				for (int d = 0; d < 64 + (int)rnd_below(40); d++)
					sb_putc(b, (char)('0' + rnd_below(10)));
				break;
			case F_DOTS:
				sb_puts(b, "0.5.1");
				break;
			case F_STRAY:
				sb_putc(b, 'x');
				break;
			default:
				return 1;
			}
		}
		gen_ws(b);
	}
	sb_putc(b, arr ? ']' : '}');
	return 0;
}

START_TEST(test_random_faults_named)
{
	static const char *const why[F_NFAULTS] = {
		"numbers longer than 63 characters are not accepted", "expected ',' or",
		"unexpected character", "unexpected end of input"
	};
	struct json_arena a = JSON_ARENA_INIT;
	int named = 0;

	for (int round = 0; round < 20000; round++) {
		enum fault fault = (enum fault)(round % F_NFAULTS);
		struct sb b = { 0 }, path = { 0 };
		char want[400];
		struct api_fail f;
		cJSON *root;

		sb_puts(&path, "");
		gen_to_fault(&b, &path, 0, fault);
		if (path.len >= 160)
			snprintf(want, sizeof(want), "body: %s", why[fault]);
		else
			snprintf(want, sizeof(want), "%s: %s", path.p, why[fault]);
		ck_assert_int_ne(api_json_parse_in(b.p, b.len, &a, &root, &f), API_OK);
		ck_assert_msg(!strncmp(f.msg, want, strlen(want)), "body %s\nwant %s\ngot  %s", b.p,
			      want, f.msg);
		ck_assert_ptr_nonnull(strstr(f.msg, " at byte "));
		named += path.len < 160;
		json_arena_release(&a);
		free(b.p);
		free(path.p);
	}
	/* most paths fit: the test is not only of "body" */
	ck_assert_int_gt(named, 15000);
}
END_TEST

START_TEST(test_path_edges)
{
	static const char doc[] = "{\"a\":[1,{\"b\":2,\"c\":[3,4]}],\"d\":5}";
	char out[64];

	/* top level: before, between and after the object */
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), 1, out, sizeof(out)), 0);
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), strlen(doc), out, sizeof(out)), 0);
	/* at the 4 of c */
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), 23, out, sizeof(out)), 9);
	ck_assert_str_eq(out, "a[1].c[1]");
	/* at the , after b's value: still b; at the next key: the object a[1] */
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), 14, out, sizeof(out)), 6);
	ck_assert_str_eq(out, "a[1].b");
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), 15, out, sizeof(out)), 4);
	ck_assert_str_eq(out, "a[1]");
	/* inside the key "d": the root */
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), 29, out, sizeof(out)), 0);
	/* off past len reads len bytes; a cap too small writes nothing */
	ck_assert_uint_eq(json_path_at(doc, 23, 1000, out, sizeof(out)), 9);
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), 23, out, 9), 0);
	ck_assert_str_eq(out, "");
	ck_assert_uint_eq(json_path_at(doc, strlen(doc), 23, out, 10), 9);
	/* brackets and quotes inside strings are text */
	ck_assert_uint_eq(json_path_at("{\"x\\\"]\":[\"],{\",7", 16, 15, out, sizeof(out)), 7);
	ck_assert_str_eq(out, "x\\\"][1]");
	/* nesting far past every parser's limit: no path */
	{
		char deep[300];

		memset(deep, '[', sizeof(deep));
		ck_assert_uint_eq(json_path_at(deep, sizeof(deep), sizeof(deep), out, sizeof(out)), 0);
	}
}
END_TEST

START_TEST(test_mesh_stream_named)
{
	static const struct {
		const char *body, *msg;
	} rows[] = {
		{ "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2],[0,1,2.]]}",
		  "triangles[1][2]: digits must follow the decimal point at byte 66" },
		{ "{\"vertices\":[[0,0,0],[1,0,x", "vertices[1][2]: unexpected character at byte 26" },
		{ "{\"vertices\":[[0,0,0],[1,0,0],[0,1", "vertices[2][1]: unexpected end of input at byte 33" },
		/* after a member's value: named by the member it follows */
		{ "{\"vertices\":[[0,0,0]] x", "vertices: expected ',' or '}' at byte 22" },
		{ "{\"vertices\":[[0,0,0]]} x", "body: unexpected data after the JSON value at byte 23" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mesh_data md;
		struct api_fail f;

		ck_assert_int_ne(json_mesh_decode(rows[i].body, strlen(rows[i].body), 1000, &md, &f),
				 API_OK);
		ck_assert_str_eq(f.msg, rows[i].msg);
	}
}
END_TEST

static Suite *path_suite(void)
{
	Suite *s = suite_create("json_path");
	TCase *tc = tcase_create("path");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_random_faults_named);
	tcase_add_test(tc, test_path_edges);
	tcase_add_test(tc, test_mesh_stream_named);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(path_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
