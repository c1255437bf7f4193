/* test_api_buf.c - struct buf: growth, JSON strings, and number printing that
 * round-trips (against strtod) and is never longer than "%.9g". */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"

/* xorshift64*: reproducible bit patterns */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static float float_of_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Significant digits of a decimal text (mantissa digits minus leading and
 * trailing zeros). */
static int sig_digits(const char *s)
{
	int n = 0, lead = 1, trail = 0;

	for (; *s && *s != 'e' && *s != 'E'; s++) {
		if (*s < '0' || *s > '9')
			continue;
		if (lead && *s == '0')
			continue;
		lead = 0;
		n++;
		trail = *s == '0' ? trail + 1 : 0;
	}
	return n - trail;
}

/* The fewest significant digits p with which "%.{p-1}e" reads back. */
static int shortest_ref(float f)
{
	char t[64];
	int p;

	for (p = 1; p <= 9; p++) {
		snprintf(t, sizeof(t), "%.*e", p - 1, (double)f);
		if ((float)strtod(t, NULL) == f)
			return sig_digits(t);
	}
	return 9;
}

/* Assert only when cond fails: a passing ck_assert records its place
 * through a pipe (a system call), and the loops below check millions. */
#define CHECK(cond, ...)                                   \
	do {                                               \
		if (!(cond))                               \
			ck_assert_msg(cond, __VA_ARGS__);  \
	} while (0)

static void check_float(float f, int check_shortest)
{
	struct buf b;
	char ref[64], *end;
	double d;

	buf_init(&b);
	buf_put_float(&b, f);
	CHECK(b.data != NULL, "no text for %a", (double)f);
	CHECK(strlen(b.data) == b.len, "length of %s", b.data);
	d = strtod(b.data, &end);
	CHECK(*end == '\0', "trailing text in %s", b.data);
	/* -0 prints as 0: equal, sign dropped on purpose */
	CHECK((float)d == f && (f == 0 || !signbit(d) == !signbit(f)), "%a printed as %s",
	      (double)f, b.data);
	snprintf(ref, sizeof(ref), "%.9g", (double)f);
	CHECK(sig_digits(b.data) <= sig_digits(ref), "%s longer than %s", b.data, ref);
	if (check_shortest) {
		uint32_t u;
		int ours = sig_digits(b.data), best = shortest_ref(f);

		/* at a power of two the decimal just above the nearest one may
		 * read back with a digit less than printf's nearest: allowed */
		memcpy(&u, &f, sizeof(u));
		CHECK(ours == best || (ours == best - 1 && !(u & 0x7fffff)),
		      "%s not shortest (%d digits)", b.data, best);
	}
	buf_release(&b);
}

static const char *put_float_str(float f, char *out, size_t n)
{
	struct buf b;

	buf_init(&b);
	buf_put_float(&b, f);
	snprintf(out, n, "%s", b.data);
	buf_release(&b);
	return out;
}

START_TEST(test_float_random_roundtrip)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	long k;

	/* 3 M random bit patterns: every exponent, subnormals included */
	for (k = 0; k < 3000000; k++) {
		float f = float_of_bits((uint32_t)(rng_next(&s) >> 32));

		if (!isfinite(f))
			continue;
		check_float(f, 0);
	}
}
END_TEST

START_TEST(test_float_random_shortest)
{
	uint64_t s = 12345;
	long k;

	for (k = 0; k < 200000; k++) {
		float f = float_of_bits((uint32_t)(rng_next(&s) >> 32));

		if (!isfinite(f))
			continue;
		check_float(f, 1);
	}
}
END_TEST

/* The digits at the length printed are printf's rounding of f to that many
 * (the nearest, an exact tie to the even one), but at a power of two, where
 * the decimal just above may be the one that reads back. Ties are common in
 * game data: 41.0390625 is 41 + 5/128, halfway between 41.039062 and
 * 41.039063, both of which read back. */
static void check_printf_rounding(float f)
{
	char ours[64], ref[64], back[64];
	uint32_t u;
	int nd;

	memcpy(&u, &f, sizeof(u));
	if (!isfinite(f) || f == 0 || !(u & 0x7fffff))
		return;
	put_float_str(f, ours, sizeof(ours));
	nd = sig_digits(ours);
	/* our decimal has <= 9 digits: a double keeps them */
	snprintf(back, sizeof(back), "%.*e", nd - 1, strtod(ours, NULL));
	snprintf(ref, sizeof(ref), "%.*e", nd - 1, (double)f);
	CHECK(strcmp(back, ref) == 0, "%a printed as %s, printf at %d digits: %s", (double)f, ours,
	      nd, ref);
}

START_TEST(test_float_digits_are_printf_rounding)
{
	uint64_t s = 2718;
	char out[64];
	long k;

	for (k = 0; k < 300000; k++) {
		uint64_t r = rng_next(&s);

		check_printf_rounding(float_of_bits((uint32_t)(r >> 32)));
		/* few fraction bits: exact ties at 7 or 8 digits */
		check_printf_rounding((float)ldexp((double)(r % 100000000), -(int)((r >> 40) % 12)));
	}
	ck_assert_str_eq(put_float_str(41.0390625f, out, sizeof(out)), "41.039062");
	ck_assert_str_eq(put_float_str(339.453125f, out, sizeof(out)), "339.45312");
	ck_assert_str_eq(put_float_str(-1491.40625f, out, sizeof(out)), "-1491.4062");
	/* 7.038531e-26 is 0x15ae43fd's by strtof and 0x15ae43fe's through a
	 * double and a cast: neither may print it */
	for (k = 0; k < 4; k++) {
		float f = float_of_bits((k & 1 ? 0x15ae43feu : 0x15ae43fdu) | (k & 2 ? 0x80000000u : 0));

		put_float_str(f, out, sizeof(out));
		ck_assert_msg((float)strtod(out, NULL) == f && strtof(out, NULL) == f,
			      "%a printed as %s", (double)f, out);
		check_float(f, 0);
	}
}
END_TEST

START_TEST(test_float_subnormals_and_edges)
{
	uint64_t s = 99;
	uint32_t u;
	long k;

	for (u = 1; u < 5000; u++)
		check_float(float_of_bits(u), 1);
	for (k = 0; k < 200000; k++) {
		u = (uint32_t)(rng_next(&s) >> 41);	/* 23 bits: subnormal */
		if (u)
			check_float(float_of_bits(u), 0);
	}
	check_float(FLT_MAX, 1);
	check_float(-FLT_MAX, 1);
	check_float(FLT_MIN, 1);
	check_float(FLT_TRUE_MIN, 1);
	check_float(nextafterf(FLT_MIN, 0), 1);
	/* every power of two and its neighbours (asymmetric intervals) */
	for (k = -149; k <= 127; k++) {
		float p = ldexpf(1, (int)k);

		check_float(p, 1);
		check_float(nextafterf(p, 0), 1);
		check_float(nextafterf(p, INFINITY), 1);
	}
	/* powers of ten and their neighbours */
	for (k = -45; k <= 38; k++) {
		float p = (float)pow(10, (double)k);

		if (p == 0 || !isfinite(p))
			continue;
		check_float(p, 1);
		check_float(nextafterf(p, 0), 1);
		check_float(nextafterf(p, INFINITY), 1);
	}
}
END_TEST

/* Short decimals come out short: every 1..5 digit decimal read as a float. */
START_TEST(test_float_short_decimals)
{
	char in[32], out[64];
	int m, e;

	for (m = 1; m < 100000; m += 7)
		for (e = -12; e <= 12; e += 3) {
			float f;

			snprintf(in, sizeof(in), "%de%d", m, e);
			f = strtof(in, NULL);
			put_float_str(f, out, sizeof(out));
			CHECK(strtod(out, NULL) == strtod(in, NULL) || (float)strtod(out, NULL) == f,
			      "%s -> %s", in, out);
			CHECK(sig_digits(out) <= sig_digits(in), "%s -> %s longer", in, out);
		}
}
END_TEST

struct fmt_case {
	float f;
	const char *want;
};

static const struct fmt_case fmt_cases[] = {
	{ 0.0f, "0" }, { 1.0f, "1" }, { -1.0f, "-1" }, { 0.5f, "0.5" }, { 0.1f, "0.1" },
	{ 1.5f, "1.5" }, { 100.0f, "100" }, { 123456.0f, "123456" }, { 1e9f, "1000000000" },
	{ 16777216.0f, "16777216" }, { 3.14159274f, "3.1415927" }, { 1e-6f, "0.000001" },
	{ 1e-7f, "1e-7" }, { 1.5e-7f, "1.5e-7" }, { 1e21f, "1e21" }, { 1e20f, "100000000000000000000" },
	{ 3.4028235e38f, "3.4028235e38" }, { 1.17549435e-38f, "1.1754944e-38" },
	{ 1.4e-45f, "1e-45" }, { -2.5e-10f, "-2.5e-10" }, { 0.3f, "0.3" }, { 2.0f / 3.0f, "0.6666667" },
};

START_TEST(test_float_format)
{
	char out[64];

	put_float_str(fmt_cases[_i].f, out, sizeof(out));
	ck_assert_str_eq(out, fmt_cases[_i].want);
}
END_TEST

START_TEST(test_float_special)
{
	char out[64];

	ck_assert_str_eq(put_float_str(NAN, out, sizeof(out)), "null");
	ck_assert_str_eq(put_float_str(INFINITY, out, sizeof(out)), "null");
	ck_assert_str_eq(put_float_str(-INFINITY, out, sizeof(out)), "null");
	/* -0 prints as 0 (documented choice) */
	ck_assert_str_eq(put_float_str(-0.0f, out, sizeof(out)), "0");
}
END_TEST

START_TEST(test_double_roundtrip)
{
	uint64_t s = 7;
	long k;
	struct buf b;

	buf_init(&b);
	for (k = 0; k < 300000; k++) {
		uint64_t u = rng_next(&s);
		double d, r;
		char ref[64];

		memcpy(&d, &u, sizeof(d));
		if (!isfinite(d))
			continue;
		b.len = 0;
		buf_put_double(&b, d);
		r = strtod(b.data, NULL);
		CHECK(r == d, "%a printed as %s", d, b.data);
		snprintf(ref, sizeof(ref), "%.17g", d);
		CHECK(sig_digits(b.data) <= sig_digits(ref), "%s longer than %s", b.data, ref);
	}
	b.len = 0;
	buf_put_double(&b, 0.1);
	ck_assert_str_eq(b.data, "0.1");
	b.len = 0;
	buf_put_double(&b, 12.345);
	ck_assert_str_eq(b.data, "12.345");
	b.len = 0;
	buf_put_double(&b, 1e300);
	ck_assert_str_eq(b.data, "1e300");
	b.len = 0;
	buf_put_double(&b, NAN);
	ck_assert_str_eq(b.data, "null");
	buf_release(&b);
}
END_TEST

START_TEST(test_integers)
{
	struct buf b;

	buf_init(&b);
	buf_put_u64(&b, 0);
	buf_putc(&b, ' ');
	buf_put_u64(&b, UINT64_MAX);
	buf_putc(&b, ' ');
	buf_put_i64(&b, INT64_MIN);
	buf_putc(&b, ' ');
	buf_put_i64(&b, -42);
	buf_putc(&b, ' ');
	buf_put_u64(&b, 1234567890);
	ck_assert_str_eq(b.data, "0 18446744073709551615 -9223372036854775808 -42 1234567890");
	buf_release(&b);
}
END_TEST

START_TEST(test_growth_and_detach)
{
	struct buf b;
	size_t len, k;
	char *d;

	buf_init(&b);
	ck_assert_ptr_null(b.data);
	for (k = 0; k < 100000; k++)
		buf_puts(&b, "abc");
	ck_assert_uint_eq(b.len, 300000);
	ck_assert_int_eq(b.data[b.len], '\0');
	buf_printf(&b, "%0300d", 5);
	ck_assert_uint_eq(b.len, 300300);
	ck_assert_int_eq(b.oom, 0);
	d = buf_detach(&b, &len);
	ck_assert_uint_eq(len, 300300);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	free(d);
	buf_reserve(&b, 10);
	ck_assert_uint_ge(b.cap, 11);
	buf_release(&b);
}
END_TEST

START_TEST(test_oom_flag)
{
	struct buf b;

	buf_init(&b);
	buf_puts(&b, "x");
	buf_reserve(&b, SIZE_MAX - 1);	/* overflows: sets oom, keeps the bytes */
	ck_assert_int_eq(b.oom, 1);
	buf_puts(&b, "y");
	ck_assert_str_eq(b.data, "x");
	buf_release(&b);
}
END_TEST

START_TEST(test_json_string)
{
	struct buf b;
	const char in[] = "a\"b\\c\n\t\x01\xc3\xa9\xff\xe2\x82";

	buf_init(&b);
	buf_put_json_string(&b, in, sizeof(in) - 1);
	ck_assert_str_eq(b.data, "\"a\\\"b\\\\c\\n\\t\\u0001\xc3\xa9\\ufffd\\ufffd\\ufffd\"");
	b.len = 0;
	buf_put_json_string(&b, "", 0);
	ck_assert_str_eq(b.data, "\"\"");
	buf_release(&b);
}
END_TEST

/* Not an assertion on speed (machines differ): prints ns per number. */
START_TEST(test_float_speed)
{
	struct buf b;
	uint64_t s = 3;
	struct timespec t0, t1;
	float *v;
	int k, n = 1000000;
	double ns;

	v = malloc((size_t)n * sizeof(*v));
	ck_assert_ptr_nonnull(v);
	for (k = 0; k < n; k++)
		v[k] = (float)((double)(rng_next(&s) >> 11) / 9007199254740992.0 * 200.0 - 100.0);
	buf_init(&b);
	buf_reserve(&b, (size_t)n * 16);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (k = 0; k < n; k++) {
		buf_put_float(&b, v[k]);
		buf_putc(&b, ',');
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / n;
	printf("buf_put_float: %.1f ns per number (coordinates in [-100, 100])\n", ns);
	buf_release(&b);
	free(v);
}
END_TEST

static Suite *buf_suite(void)
{
	Suite *s = suite_create("api_buf");
	TCase *tc = tcase_create("buf");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_float_random_roundtrip);
	tcase_add_test(tc, test_float_random_shortest);
	tcase_add_test(tc, test_float_subnormals_and_edges);
	tcase_add_test(tc, test_float_digits_are_printf_rounding);
	tcase_add_test(tc, test_float_short_decimals);
	tcase_add_loop_test(tc, test_float_format, 0, (int)(sizeof(fmt_cases) / sizeof(fmt_cases[0])));
	tcase_add_test(tc, test_float_special);
	tcase_add_test(tc, test_double_roundtrip);
	tcase_add_test(tc, test_integers);
	tcase_add_test(tc, test_growth_and_detach);
	tcase_add_test(tc, test_oom_flag);
	tcase_add_test(tc, test_json_string);
	tcase_add_test(tc, test_float_speed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(buf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
