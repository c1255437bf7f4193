/* test_api_json.c - the arena JSON parser: trees equal to cJSON's, numbers
 * bit-identical to strtod, every invalid form refused, arena growth, limits. */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "teststr.h"

/* ---- a deterministic PRNG (teststr.h) */

static struct xs rng = { 0x9e3779b97f4a7c15ull };

static uint64_t rnd(void)
{
	return xs_next(&rng);
}

static unsigned rnd_below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

/* ---- random valid JSON */

static void gen_ws(struct sb *b)
{
	static const char ws[] = " \t\n\r";

	while (rnd_below(6) == 0)
		sb_putc(b, ws[rnd_below(4)]);
}

static void put_utf8(struct sb *b, unsigned u)
{
	char o[4];
	size_t n;

	if (u < 0x80) {
		o[0] = (char)u;
		n = 1;
	} else if (u < 0x800) {
		o[0] = (char)(0xc0 | u >> 6);
		o[1] = (char)(0x80 | (u & 0x3f));
		n = 2;
	} else if (u < 0x10000) {
		o[0] = (char)(0xe0 | u >> 12);
		o[1] = (char)(0x80 | (u >> 6 & 0x3f));
		o[2] = (char)(0x80 | (u & 0x3f));
		n = 3;
	} else {
		o[0] = (char)(0xf0 | u >> 18);
		o[1] = (char)(0x80 | (u >> 12 & 0x3f));
		o[2] = (char)(0x80 | (u >> 6 & 0x3f));
		o[3] = (char)(0x80 | (u & 0x3f));
		n = 4;
	}
	sb_putn(b, o, n);
}

static unsigned rnd_codepoint(void)
{
	unsigned u;

	do {
		switch (rnd_below(3)) {
		case 0: u = 1 + rnd_below(0x7ff); break;
		case 1: u = 1 + rnd_below(0xffff); break;
		default: u = 0x10000 + rnd_below(0x100000); break;
		}
	} while (u >= 0xd800 && u <= 0xdfff);
	return u;
}

static void gen_string(struct sb *b)
{
	static const char esc[] = "\"\\/bfnrt";
	unsigned n = rnd_below(12), k;
	char tmp[16];

	sb_putc(b, '"');
	for (k = 0; k < n; k++) {
		unsigned u;

		switch (rnd_below(5)) {
		case 0:
			sb_putc(b, '\\');
			sb_putc(b, esc[rnd_below(8)]);
			break;
		case 1:
			u = rnd_codepoint();
			if (u >= 0x10000) {
				u -= 0x10000;
				snprintf(tmp, sizeof(tmp), "\\u%04x\\u%04X", 0xd800 + (u >> 10),
					 0xdc00 + (u & 0x3ff));
			} else {
				snprintf(tmp, sizeof(tmp), "\\u%04x", u);
			}
			sb_puts(b, tmp);
			break;
		case 2:
			u = rnd_codepoint();
			if (u < 0x20)
				u += 0x40;
			put_utf8(b, u == '\\' || u == '"' ? 'y' : u);
			break;
		default:
			u = 0x20 + rnd_below(0x5f);
			if (u == '"' || u == '\\')
				u = 'x';
			sb_putc(b, (char)u);
			break;
		}
	}
	sb_putc(b, '"');
}

/* A random number in valid JSON syntax into out. */
static void gen_number_text(char *out, size_t cap)
{
	size_t o = 0;
	unsigned nint, nfrac, k;

	if (rnd_below(2))
		out[o++] = '-';
	nint = 1 + rnd_below(rnd_below(4) ? 6 : 22);
	if (rnd_below(5) == 0) {
		out[o++] = '0';
	} else {
		out[o++] = (char)('1' + rnd_below(9));
		for (k = 1; k < nint; k++)
			out[o++] = (char)('0' + rnd_below(10));
	}
	if (rnd_below(2)) {
		nfrac = 1 + rnd_below(rnd_below(3) ? 10 : 25);
		out[o++] = '.';
		for (k = 0; k < nfrac; k++)
			out[o++] = (char)('0' + (rnd_below(4) ? rnd_below(10) : 0));
	}
	if (rnd_below(2)) {
		int e = rnd_below(3) ? (int)rnd_below(60) - 30 : (int)rnd_below(800) - 400;

		o += (size_t)snprintf(out + o, cap - o, "%s%s%d", rnd_below(2) ? "e" : "E",
				      e >= 0 && rnd_below(2) ? "+" : "", e);
	}
	out[o] = '\0';
	if (o >= cap)
		ck_abort_msg("number buffer overflow");
}

static void gen_value(struct sb *b, int depth)
{
	char num[128];
	unsigned k, n, pick = rnd_below(depth < 6 ? 10 : 7);

	gen_ws(b);
	switch (pick) {
	case 0: sb_puts(b, "true"); break;
	case 1: sb_puts(b, "false"); break;
	case 2: sb_puts(b, "null"); break;
	case 3: gen_string(b); break;
	case 4: case 5: case 6:
		gen_number_text(num, sizeof(num));
		sb_puts(b, num);
		break;
	case 7: case 8:
		sb_putc(b, '[');
		n = rnd_below(6);
		for (k = 0; k < n; k++) {
			if (k)
				sb_putc(b, ',');
			gen_value(b, depth + 1);
		}
		gen_ws(b);
		sb_putc(b, ']');
		break;
	default:
		sb_putc(b, '{');
		n = rnd_below(6);
		for (k = 0; k < n; k++) {
			if (k)
				sb_putc(b, ',');
			gen_ws(b);
			if (rnd_below(4))
				gen_string(b);
			else
				sb_puts(b, "\"dup\"");	/* duplicate keys are kept in order */
			gen_ws(b);
			sb_putc(b, ':');
			gen_value(b, depth + 1);
		}
		gen_ws(b);
		sb_putc(b, '}');
		break;
	}
	gen_ws(b);
}

/* ---- tree comparison with cJSON */

static int same_double(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* Plain ifs, not ck_assert: a passing ck_assert writes to Check's pipe. */
static void assert_same_tree(const cJSON *a, const cJSON *b, const char *doc)
{
	const cJSON *ca, *cb, *la = NULL, *lb = NULL;

	if (a->type != b->type)
		ck_abort_msg("type %d vs %d in %s", a->type, b->type, doc);
	if (!a->string != !b->string || (a->string && strcmp(a->string, b->string)))
		ck_abort_msg("key %s vs %s in %s", a->string, b->string, doc);
	if (!a->valuestring != !b->valuestring ||
	    (a->valuestring && strcmp(a->valuestring, b->valuestring)))
		ck_abort_msg("valuestring %s vs %s in %s", a->valuestring, b->valuestring, doc);
	if (a->valueint != b->valueint)
		ck_abort_msg("valueint %d vs %d in %s", a->valueint, b->valueint, doc);
	if (!same_double(a->valuedouble, b->valuedouble))
		ck_abort_msg("valuedouble %.17g vs %.17g in %s", a->valuedouble, b->valuedouble, doc);
	if (!a->child != !b->child)
		ck_abort_msg("child presence in %s", doc);
	for (ca = a->child, cb = b->child; ca && cb; ca = ca->next, cb = cb->next) {
		if ((la && ca->prev != la) || (lb && cb->prev != lb))
			ck_abort_msg("prev links in %s", doc);
		assert_same_tree(ca, cb, doc);
		la = ca;
		lb = cb;
	}
	if (ca || cb)
		ck_abort_msg("child count differs in %s", doc);
	/* as cJSON: the first element's prev is the last */
	if (a->child && (a->child->prev != la || b->child->prev != lb))
		ck_abort_msg("first->prev is not the last element in %s", doc);
}

/* json_parse must succeed on doc; its tree must equal cJSON's. */
static void check_against_cjson(const char *doc, size_t len)
{
	struct json_arena a = JSON_ARENA_INIT;
	const char *why;
	cJSON *mine, *ref;
	size_t off;

	if (json_parse(doc, len, &a, &mine, &off, &why) != API_OK)
		ck_abort_msg("refused (%s at %zu): %s", why ? why : "?", off, doc);
	ref = cJSON_ParseWithLength(doc, len);
	if (!ref)
		ck_abort_msg("cJSON refused %s", doc);
	assert_same_tree(mine, ref, doc);
	cJSON_Delete(ref);
	json_arena_release(&a);
	if (a.head)
		ck_abort_msg("arena not empty after release");
}

START_TEST(test_tree_random_vs_cjson)
{
	struct sb b = { 0 };
	int k;

	rng.s = 0x1234567887654321ull;
	for (k = 0; k < 20000; k++) {
		b.len = 0;
		gen_value(&b, 0);
		check_against_cjson(b.p, b.len);
	}
	free(b.p);
}
END_TEST

START_TEST(test_tree_fixed_vs_cjson)
{
	static const char *const docs[] = {
		"{}", "[]", "0", "-0", "\"\"", "true", "false", "null", " [ ] ",
		"{\"a\":1,\"a\":2,\"A\":3}",
		"[2147483647,2147483648,-2147483648,-2147483649,3e9,-3e9,1e400,-1e400,2147483646.9]",
		"[0.1,1e-400,4.9e-324,2.2250738585072014e-308,1.7976931348623157e308,9007199254740993]",
		"{\"k\":\"\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\\"\\\\\",\"\xf0\x9f\x98\x80\":[{}]}",
		"[[[[[[[[[[1]]]]]]]]]]",
		"{\"rays\":[{\"origin\":[-11.0639582,-0.0384884551,254.326721],"
		"\"direction\":[0.0287746973,0.03292327,-0.999043584],\"max_distance\":200}]}",
	};
	size_t k;

	for (k = 0; k < sizeof(docs) / sizeof(docs[0]); k++)
		check_against_cjson(docs[k], strlen(docs[k]));
}
END_TEST

/* ---- numbers against strtod */

/* json_number and the cursor's one-pass reading (json_parse's) both give
 * strtod's double; the cursor stops right after the number. */
static void check_number(const char *s)
{
	/* what may follow a number: each with bytes that are next to the digits
	 * ('/' and ':'), past 0xF9 (a carry out of the byte when 6 is added),
	 * NUL, and digits after the first non-digit */
	static const char tails[][12] = {
		",1234567890", "]}\xfa\xff" "9999999", "/:/:/:/:/:/:", " \t\r\n12345678",
		"\0\x30\x39\x3a\x2f\xff\xfe\xfd\xfc\xfb\xfa", "}\x80\x7f\xb0\xc0\x36\x3f" "1234",
	};
	double mine = 0, ref = strtod(s, NULL);
	struct json_cursor c;
	char text[128];
	size_t len = strlen(s), k;

	if (json_number(s, len, &mine))
		ck_abort_msg("%s: json_number failed", s);
	if (!same_double(mine, ref))
		ck_abort_msg("%s: %a vs strtod %a", s, mine, ref);
	if (len > JSON_MAX_NUMBER_LEN) {
		json_cursor_init(&c, s, len);
		ck_assert_int_eq(json_cursor_number(&c, &mine), -1);
		ck_assert_int_eq(c.err, API_INVALID_REQUEST);
		return;
	}
	mine = 0;
	snprintf(text, sizeof(text), "%s,", s);
	json_cursor_init(&c, text, len + 1);
	if (json_cursor_number(&c, &mine))
		ck_abort_msg("%s: json_cursor_number failed: %s", s, c.why);
	if (c.i != len || !same_double(mine, ref))
		ck_abort_msg("%s: cursor %a at %zu vs strtod %a", s, mine, c.i, ref);
	/* with bytes after it: eight-byte reads that end inside the number */
	for (k = 0; k < sizeof(tails) / sizeof(tails[0]); k++) {
		memcpy(text, s, len);
		memcpy(text + len, tails[k], 12);
		mine = 0;
		json_cursor_init(&c, text, len + 12);
		if (json_cursor_number(&c, &mine) || c.i != len || !same_double(mine, ref))
			ck_abort_msg("%s + tail %zu: cursor %a at %zu vs strtod %a", s, k, mine, c.i, ref);
		/* two tails: room for the fast path's eight-byte reads too */
		memcpy(text + len + 12, tails[(k + 1) % (sizeof(tails) / sizeof(tails[0]))], 12);
		mine = 0;
		json_cursor_init(&c, text, len + 24);
		if (json_cursor_number(&c, &mine) || c.i != len || !same_double(mine, ref))
			ck_abort_msg("%s + tails %zu: cursor %a at %zu vs strtod %a", s, k, mine, c.i, ref);
	}
	mine = 0;
	json_cursor_init(&c, s, len);	/* the number ends the body */
	if (json_cursor_number(&c, &mine) || c.i != len || !same_double(mine, ref))
		ck_abort_msg("%s: cursor at the end: %a vs strtod %a", s, mine, ref);
}

START_TEST(test_number_random_vs_strtod)
{
	char num[128];
	int k;

	rng.s = 0xdeadbeefcafef00dull;
	for (k = 0; k < 2000000; k++) {
		gen_number_text(num, sizeof(num));
		if (strlen(num) <= JSON_MAX_NUMBER_LEN)
			check_number(num);
	}
}
END_TEST

START_TEST(test_number_printed_doubles_vs_strtod)
{
	char num[64];
	uint64_t bits;
	uint32_t fbits;
	double d;
	float fl;
	int k;

	rng.s = 0x0123456789abcdefull;
	for (k = 0; k < 1000000; k++) {
		bits = rnd();
		memcpy(&d, &bits, sizeof(d));
		if (isfinite(d)) {
			snprintf(num, sizeof(num), "%.17g", d);
			check_number(num);
			snprintf(num, sizeof(num), "%.9g", d);
			check_number(num);
		}
		fbits = (uint32_t)rnd();
		memcpy(&fl, &fbits, sizeof(fl));
		if (isfinite(fl)) {
			snprintf(num, sizeof(num), "%.9g", (double)fl);
			check_number(num);
			snprintf(num, sizeof(num), "%.17g", (double)fl);
			check_number(num);
		}
		/* values of the size rays carry: mostly fast-path candidates */
		d = ((double)(rnd() >> 11) / 9007199254740992.0 - 0.5) * 1000.0;
		snprintf(num, sizeof(num), "%.9g", d);
		check_number(num);
		snprintf(num, sizeof(num), "%.*g", 1 + (int)rnd_below(17), d);
		check_number(num);
	}
}
END_TEST

/* The edges of the fast path: 2^53 mantissas, 10^22, 19 digits. */
START_TEST(test_number_fast_path_edges)
{
	static const char *const nums[] = {
		"9007199254740992", "9007199254740993", "9007199254740991e22", "9007199254740993e22",
		"9007199254740992e-22", "9007199254740993e-22", "1e22", "1e23", "1e-22", "1e-23",
		"1234567890123456789", "12345678901234567890", "1234567890123456789e-22",
		"0.1", "0.2", "0.3", "123456.789e3", "0e400", "-0e-400", "0.0000000000000000000000001",
		"-0", "0", "1e308", "1e309", "2.4703282292062327e-324", "2.4703282292062328e-324",
		"1.00000000000000000000000000000000000000000000000000000000000001",
		"4503599627370496.5", "4503599627370497.5", "9007199254740992.000",
	};
	size_t k;

	for (k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
		check_number(nums[k]);
}
END_TEST

/*
 * Mantissas past 2^53 (16 to 19 digits, as a float printed as a double
 * reads: "0.10000000149011612") are rounded in integer arithmetic; exact
 * halves must go to the even neighbour as strtod's do: an odd 54-bit n is
 * halfway between two doubles, and so are n * 5^k / 10^k = n / 2^k and,
 * for an odd o with 5o of 54 bits, o * 2^j * 10 = 5o * 2^(j+1). Each also
 * one unit of the last digit to either side (just off the half).
 */
START_TEST(test_number_wide_mantissa_halves)
{
	char num[64];
	int k;

	rng.s = 0x5eed0f4a1f5eedull;
	for (k = 0; k < 50000; k++) {
		uint64_t n = ((UINT64_C(1) << 53) + (rnd() & ((UINT64_C(1) << 53) - 1))) | 1;
		uint64_t o = ((UINT64_C(1) << 53) / 5 + rnd() % ((UINT64_C(1) << 53) / 5)) | 1;
		int d, j = 3 + (int)rnd_below(7);

		for (d = -1; d <= 1; d++) {
			snprintf(num, sizeof(num), "%llu", (unsigned long long)(n + (uint64_t)d));
			check_number(num);
			snprintf(num, sizeof(num), "%llue-1",
				 (unsigned long long)(n * 5 + (uint64_t)d));
			check_number(num);
			snprintf(num, sizeof(num), "%llu.%03llu",
				 (unsigned long long)(n * 125 + (uint64_t)d) / 1000,
				 (unsigned long long)(n * 125 + (uint64_t)d) % 1000);
			check_number(num);
			snprintf(num, sizeof(num), "-%llue1",
				 (unsigned long long)((o << j) + (uint64_t)d));
			check_number(num);
		}
		/* a float as a double, with 17 significant digits, and at 10^-22 */
		snprintf(num, sizeof(num), "%.17g", (double)(float)((double)rnd() / 1e16 - 900.0));
		check_number(num);
		snprintf(num, sizeof(num), "%llue-22",
			 (unsigned long long)(n + (rnd() & ((UINT64_C(1) << 62) - 1))));
		check_number(num);
	}
}
END_TEST

START_TEST(test_number_valueint_saturates)
{
	static const struct {
		const char *s;
		int vi;
	} rows[] = {
		{ "2147483647", INT_MAX }, { "2147483648", INT_MAX }, { "1e400", INT_MAX },
		{ "-2147483648", INT_MIN }, { "-2147483649", INT_MIN }, { "-1e400", INT_MIN },
		{ "-2.9", -2 }, { "2.9", 2 }, { "-0", 0 },
	};
	struct json_arena a = JSON_ARENA_INIT;
	const char *why;
	cJSON *n;
	size_t k, off;

	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		ck_assert_int_eq(json_parse(rows[k].s, strlen(rows[k].s), &a, &n, &off, &why), API_OK);
		ck_assert(cJSON_IsNumber(n));
		ck_assert_int_eq(n->valueint, rows[k].vi);
	}
	json_arena_release(&a);
}
END_TEST

/* ---- every invalid form: error, message and offset */

struct bad {
	const char *doc;
	enum api_err err;
	const char *why;
	size_t off;
};

static const struct bad bad_rows[] = {
	{ "", API_INVALID_JSON, "unexpected end of input", 0 },
	{ "   ", API_INVALID_JSON, "unexpected end of input", 3 },
	{ "{", API_INVALID_JSON, "expected a key string", 1 },
	{ "[", API_INVALID_JSON, "unexpected end of input", 1 },
	{ "[1", API_INVALID_JSON, "unexpected end of input", 2 },
	{ "[01]", API_INVALID_JSON, "leading zero in a number", 2 },
	{ "[-01]", API_INVALID_JSON, "leading zero in a number", 3 },
	{ "[1.]", API_INVALID_JSON, "digits must follow the decimal point", 3 },
	{ "[1.e5]", API_INVALID_JSON, "digits must follow the decimal point", 3 },
	{ "[-]", API_INVALID_JSON, "a number needs digits", 2 },
	{ "[-a]", API_INVALID_JSON, "a number needs digits", 2 },
	{ "[1e]", API_INVALID_JSON, "digits must follow the exponent", 3 },
	{ "[1e+]", API_INVALID_JSON, "digits must follow the exponent", 4 },
	{ "[.5]", API_INVALID_JSON, "unexpected character", 1 },
	{ "[+1]", API_INVALID_JSON, "unexpected character", 1 },
	{ "[NaN]", API_INVALID_JSON, "unexpected character", 1 },
	{ "[Infinity]", API_INVALID_JSON, "unexpected character", 1 },
	{ "[0x10]", API_INVALID_JSON, "expected ',' or ']'", 2 },
	{ "\"x\ty\"", API_INVALID_JSON, "raw control character in a string", 2 },
	{ "\"\xff\"", API_INVALID_JSON, "invalid UTF-8", 1 },
	{ "\"\xc0\xaf\"", API_INVALID_JSON, "invalid UTF-8", 1 },
	{ "\"\xed\xa0\x80\"", API_INVALID_JSON, "invalid UTF-8", 1 },
	{ "\"\xe2\x82\"", API_INVALID_JSON, "invalid UTF-8", 1 },
	{ "\"\xf4\x90\x80\x80\"", API_INVALID_JSON, "invalid UTF-8", 1 },
	{ "\"\xe0\x80\xaf\"", API_INVALID_JSON, "invalid UTF-8", 1 },
	{ "\"\\ud800\"", API_INVALID_JSON, "lone high surrogate", 1 },
	{ "\"\\ud800\\u0041\"", API_INVALID_JSON, "lone high surrogate", 1 },
	{ "\"\\udc00x\"", API_INVALID_JSON, "lone low surrogate", 1 },
	{ "\"\\x\"", API_INVALID_JSON, "bad escape", 1 },
	{ "\"\\'\"", API_INVALID_JSON, "bad escape", 1 },
	{ "\"\\u12g4\"", API_INVALID_JSON, "bad \\u escape", 1 },
	{ "\"\\u12\"", API_INVALID_JSON, "bad \\u escape", 1 },
	{ "\"\\u0000\"", API_INVALID_REQUEST, "\\u0000 is not allowed in strings", 1 },
	{ "\"abc", API_INVALID_JSON, "unterminated string", 4 },
	{ "\"ab\\", API_INVALID_JSON, "unterminated string", 3 },
	{ "[1,]", API_INVALID_JSON, "unexpected character", 3 },
	{ "{\"a\":1,}", API_INVALID_JSON, "expected a key string", 7 },
	{ "{\"a\" 1}", API_INVALID_JSON, "expected ':'", 5 },
	{ "{1:2}", API_INVALID_JSON, "expected a key string", 1 },
	{ "{'a':2}", API_INVALID_JSON, "expected a key string", 1 },
	{ "{\"a\":1", API_INVALID_JSON, "unexpected end of input", 6 },
	{ "{\"a\":1 \"b\":2}", API_INVALID_JSON, "expected ',' or '}'", 7 },
	{ "[1 2]", API_INVALID_JSON, "expected ',' or ']'", 3 },
	{ "[1}", API_INVALID_JSON, "expected ',' or ']'", 2 },
	{ "tru", API_INVALID_JSON, "unexpected character", 0 },
	{ "nul", API_INVALID_JSON, "unexpected character", 0 },
	{ "True", API_INVALID_JSON, "unexpected character", 0 },
	{ "1 2", API_INVALID_JSON, "unexpected data after the JSON value", 2 },
	{ "{}x", API_INVALID_JSON, "unexpected data after the JSON value", 2 },
	{ "\xef\xbb\xbf{}", API_INVALID_JSON, "unexpected character", 0 },
	{ "[1]\f", API_INVALID_JSON, "unexpected data after the JSON value", 3 },
	{ "[/*c*/1]", API_INVALID_JSON, "unexpected character", 1 },
	{ "[1234567890123456789012345678901234567890123456789012345678901234]",
	  API_INVALID_REQUEST, "numbers longer than 63 characters are not accepted", 1 },
};

START_TEST(test_invalid_forms)
{
	const struct bad *r = &bad_rows[_i];
	struct json_arena a = JSON_ARENA_INIT;
	const char *why;
	cJSON *root = (cJSON *)&why;	/* must be reset to NULL */
	size_t off;

	ck_assert_int_eq(json_parse(r->doc, strlen(r->doc), &a, &root, &off, &why), r->err);
	ck_assert_ptr_null(root);
	ck_assert_str_eq(why, r->why);
	ck_assert_msg(off == r->off, "%s: offset %zu, expected %zu", r->doc, off, r->off);
	json_arena_release(&a);
}
END_TEST

START_TEST(test_invalid_args)
{
	struct json_arena a = JSON_ARENA_INIT;
	const char *why;
	cJSON *root;
	size_t off;

	ck_assert_int_eq(json_parse(NULL, 5, &a, &root, &off, &why), API_INVALID_JSON);
	ck_assert_ptr_null(root);
	ck_assert_uint_eq(off, 0);
	/* a length shorter than the text: only len bytes are read */
	ck_assert_int_eq(json_parse("{}garbage", 2, &a, &root, &off, &why), API_OK);
	ck_assert(cJSON_IsObject(root));
	ck_assert_int_eq(json_parse("[1,2]", 4, &a, &root, &off, &why), API_INVALID_JSON);
	ck_assert_str_eq(why, "unexpected end of input");
	json_arena_release(&a);
	json_arena_release(&a);	/* releasing an empty arena is a no-op */
}
END_TEST

START_TEST(test_number_length_limit)
{
	struct json_arena a = JSON_ARENA_INIT;
	char doc[80];
	const char *why;
	cJSON *root;
	size_t off;

	memset(doc, '1', JSON_MAX_NUMBER_LEN);
	doc[JSON_MAX_NUMBER_LEN] = '\0';
	ck_assert_int_eq(json_parse(doc, strlen(doc), &a, &root, &off, &why), API_OK);
	ck_assert(same_double(root->valuedouble, strtod(doc, NULL)));
	memcpy(doc, "-0.", 3);
	ck_assert_int_eq(json_parse(doc, strlen(doc), &a, &root, &off, &why), API_OK);
	ck_assert(same_double(root->valuedouble, strtod(doc, NULL)));
	strcat(doc, "1");
	ck_assert_int_eq(json_parse(doc, strlen(doc), &a, &root, &off, &why), API_INVALID_REQUEST);
	ck_assert_uint_eq(off, 0);
	json_arena_release(&a);
}
END_TEST

/* ---- nesting and arena growth */

static void nested(struct sb *b, int levels, int objects)
{
	int k;

	b->len = 0;
	for (k = 0; k < levels; k++)
		sb_puts(b, objects ? "{\"k\":" : "[");
	sb_puts(b, "1");
	for (k = 0; k < levels; k++)
		sb_puts(b, objects ? "}" : "]");
}

START_TEST(test_nesting_limit)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct sb b = { 0 };
	const char *why;
	const cJSON *n;
	cJSON *root;
	size_t off;
	int objects, k;

	for (objects = 0; objects < 2; objects++) {
		nested(&b, JSON_MAX_DEPTH, objects);
		ck_assert_int_eq(json_parse(b.p, b.len, &a, &root, &off, &why), API_OK);
		for (n = root, k = 0; n->child; n = n->child)
			k++;
		ck_assert_int_eq(k, JSON_MAX_DEPTH);
		ck_assert_int_eq(n->valueint, 1);
		check_against_cjson(b.p, b.len);
		nested(&b, JSON_MAX_DEPTH + 1, objects);
		ck_assert_int_eq(json_parse(b.p, b.len, &a, &root, &off, &why), API_INVALID_REQUEST);
		ck_assert_str_eq(why, "nested deeper than 64 levels");
		ck_assert_uint_eq(off, (size_t)JSON_MAX_DEPTH * (objects ? 5 : 1));
	}
	json_arena_release(&a);
	free(b.p);
}
END_TEST

START_TEST(test_arena_growth)
{
	struct json_arena a = JSON_ARENA_INIT;
	const size_t n = 1000000;
	struct sb b = { 0 };
	const cJSON *e, *last = NULL;
	const char *why;
	cJSON *root, *second;
	size_t k, off;

	/* [0,1,...,9,0,...] then a long string: many times the first chunk */
	sb_putc(&b, '[');
	for (k = 0; k < n; k++) {
		sb_putc(&b, (char)('0' + k % 10));
		sb_putc(&b, ',');
	}
	sb_putc(&b, '"');
	for (k = 0; k < 3 * n; k++)
		sb_putc(&b, (char)('a' + k % 26));
	sb_puts(&b, "\"]");
	ck_assert_int_eq(json_parse(b.p, b.len, &a, &root, &off, &why), API_OK);
	for (k = 0, e = root->child; k < n; k++, e = e->next) {
		if (!cJSON_IsNumber(e) || e->valueint != (int)(k % 10) || (k && e->prev != last))
			ck_abort_msg("element %zu", k);
		last = e;
	}
	ck_assert(cJSON_IsString(e));
	ck_assert_uint_eq(strlen(e->valuestring), 3 * n);
	ck_assert_int_eq(e->valuestring[3 * n - 1], 'a' + (3 * n - 1) % 26);
	ck_assert_ptr_null(e->next);
	ck_assert_ptr_eq(root->child->prev, e);
	/* a second tree in the same arena leaves the first intact */
	ck_assert_int_eq(json_parse("{\"x\":[true]}", 12, &a, &second, &off, &why), API_OK);
	ck_assert_int_eq(cJSON_GetArraySize(root), (int)n + 1);
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(second, "x")->child));
	ck_assert_uint_gt(json_arena_chunks(&a), 1);
	json_arena_release(&a);
	ck_assert_ptr_null(a.head);
	free(b.p);
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("api_json");
	TCase *tc = tcase_create("json");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_tree_random_vs_cjson);
	tcase_add_test(tc, test_tree_fixed_vs_cjson);
	tcase_add_test(tc, test_number_random_vs_strtod);
	tcase_add_test(tc, test_number_printed_doubles_vs_strtod);
	tcase_add_test(tc, test_number_fast_path_edges);
	tcase_add_test(tc, test_number_wide_mantissa_halves);
	tcase_add_test(tc, test_number_valueint_saturates);
	tcase_add_loop_test(tc, test_invalid_forms, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	tcase_add_test(tc, test_invalid_args);
	tcase_add_test(tc, test_number_length_limit);
	tcase_add_test(tc, test_nesting_limit);
	tcase_add_test(tc, test_arena_growth);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
