/* test_api_numbers.c - the number printers against independent oracles:
 * buf_put_double against printf's shortest search, the layout of every
 * printed number against the ECMAScript rules, and in-place encoding
 * (buf_room) against the appends, byte for byte. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "encode.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

/* ECMAScript Number#toString layout of nd digits whose first has exponent e10. */
static void ref_layout(char *out, size_t cap, int neg, const char *dig, int nd, int e10)
{
	int n = e10 + 1;
	const char *sg = neg ? "-" : "";

	if (nd <= n && n <= 21)
		snprintf(out, cap, "%s%.*s%.*s", sg, nd, dig, n - nd, "000000000000000000000");
	else if (0 < n && n <= 21)
		snprintf(out, cap, "%s%.*s.%.*s", sg, n, dig, nd - n, dig + n);
	else if (-6 < n && n <= 0)
		snprintf(out, cap, "%s0.%.*s%.*s", sg, -n, "000000", nd, dig);
	else if (nd == 1)
		snprintf(out, cap, "%s%ce%d", sg, dig[0], e10);
	else
		snprintf(out, cap, "%s%c.%.*se%d", sg, dig[0], nd - 1, dig + 1, e10);
}

/* "%.{p-1}e" text into digits (trailing zeros stripped) and exponent. */
static int split_e(const char *t, char *dig, int *e10)
{
	int nd = 0;

	if (*t == '-')
		t++;
	for (; (*t >= '0' && *t <= '9') || *t == '.'; t++)
		if (*t != '.')
			dig[nd++] = *t;
	*e10 = atoi(t + 1);
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	dig[nd] = '\0';
	return nd;
}

/* The oracle for buf_put_double: the fewest of 15..17 digits that printf
 * rounds to and strtod reads back, laid out as ECMAScript does. */
static void ref_double(double d, char *out, size_t cap)
{
	char t[64], dig[32];
	int p, nd, e10;

	if (!isfinite(d)) {
		snprintf(out, cap, "null");
		return;
	}
	if (d == 0) {
		snprintf(out, cap, "0");
		return;
	}
	for (p = 15; p <= 17; p++) {
		snprintf(t, sizeof(t), "%.*e", p - 1, d);
		if (strtod(t, NULL) == d)
			break;
	}
	if (p > 17)
		snprintf(t, sizeof(t), "%.16e", d);
	nd = split_e(t, dig, &e10);
	ref_layout(out, cap, signbit(d) != 0, dig, nd, e10);
}

/* Doubles of every kind: random bits, short decimals, millisecond times,
 * integers, powers of two, subnormals, halves. */
static double gen_double(void)
{
	uint64_t r = rnd(), u;
	double d;

	switch (rnd() % 8) {
	case 0:
		u = rnd();
		memcpy(&d, &u, sizeof(d));
		break;
	case 1:
		d = round((double)(r >> 11) / 9007199254740992.0 * pow(10, (int)(r % 12)) * 1000) / 1000;
		break;
	case 2:
		d = (double)(int64_t)(r % 2000000001) / pow(10, (int)(rnd() % 30));
		break;
	case 3:
		d = (double)(r >> (rnd() % 64));
		break;
	case 4:
		d = ldexp(1.0, (int)(r % 2098) - 1074);
		break;
	case 5:
		u = r % (UINT64_C(1) << 52);	/* subnormal */
		memcpy(&d, &u, sizeof(d));
		break;
	case 6:
		d = ((double)(r % 100000000) + 0.5) * pow(10, (int)(rnd() % 40) - 20);
		break;
	default:
		d = ldexp((double)(r >> 11), (int)(rnd() % 200) - 150);
		break;
	}
	return rnd() & 1 ? -d : d;
}

START_TEST(test_double_vs_printf_search)
{
	struct buf b;
	char ref[80], fmt[BUF_NUMBER_ROOM];
	size_t len;
	long k;

	buf_init(&b);
	for (k = 0; k < 150000; k++) {
		double d = gen_double();

		b.len = 0;
		buf_put_double(&b, d);
		ref_double(d, ref, sizeof(ref));
		ck_assert_msg(strcmp(b.data, ref) == 0, "%a: %s, printf search %s", d, b.data, ref);
		len = buf_format_double(fmt, d);
		ck_assert_uint_le(len, BUF_NUMBER_LEN);
		ck_assert_msg(len == b.len && memcmp(fmt, b.data, len) == 0, "%a: in place %.*s",
			      d, (int)len, fmt);
	}
	buf_release(&b);
}
END_TEST

/* Floats: the digits are checked elsewhere (test_api_buf.c); here the
 * layout of what is printed, and buf_format_float against buf_put_float. */
START_TEST(test_float_layout)
{
	struct buf b;
	char t[64], dig[32], ref[80], fmt[BUF_NUMBER_ROOM];
	long k;

	buf_init(&b);
	for (k = 0; k < 200000; k++) {
		uint32_t u = (uint32_t)rnd();
		float f;
		int nd, e10;
		size_t len;

		if (k % 3 == 0)
			u = (u & 0x807fffff) | (uint32_t)(90 + rnd() % 80) << 23;	/* 1e-11..1e13 */
		memcpy(&f, &u, sizeof(f));
		b.len = 0;
		buf_put_float(&b, f);
		len = buf_format_float(fmt, f);
		ck_assert_uint_le(len, BUF_NUMBER_LEN);
		ck_assert_msg(len == b.len && memcmp(fmt, b.data, len) == 0, "%a: in place %.*s",
			      (double)f, (int)len, fmt);
		if (!isfinite(f) || f == 0)
			continue;
		/* the digits printed, re-laid out by the rules */
		snprintf(t, sizeof(t), "%.8e", strtod(b.data, NULL));
		nd = split_e(t, dig, &e10);
		ref_layout(ref, sizeof(ref), signbit(f) != 0, dig, nd, e10);
		ck_assert_msg(strcmp(b.data, ref) == 0, "%a: %s laid out as %s", (double)f, b.data,
			      ref);
	}
	buf_release(&b);
}
END_TEST

static float gen_float(void)
{
	uint32_t u = (uint32_t)rnd();
	float f;

	switch (rnd() % 4) {
	case 0:
		memcpy(&f, &u, sizeof(f));
		return f;
	case 1:
		return 0.0f;
	case 2:
		return (float)((double)(u % 2000001) / 1000.0 - 1000.0);
	}
	return (float)ldexp((double)(u % 1000), (int)(rnd() % 60) - 30);
}

static void gen_hit(struct world_hit *h)
{
	h->distance = gen_float();
	h->point = (vec3){ gen_float(), gen_float(), gen_float() };
	h->normal = (vec3){ gen_float(), gen_float(), gen_float() };
	h->triangle = (uint32_t)(rnd() >> (rnd() % 64 | 32));
	h->u = gen_float();
	h->v = gen_float();
	h->front_face = (int)(rnd() & 1);
	h->fraction = gen_float();
}

/* A mesh hit written in place (a buffer with room) is what the appends
 * write (a fresh buffer: no room, so every piece is appended). */
START_TEST(test_hit_in_place_vs_appends)
{
	struct buf fast, slow;
	long k;

	buf_init(&fast);
	buf_reserve(&fast, 4096);
	for (k = 0; k < 30000; k++) {
		struct world_hit h;
		int seg = (int)(rnd() & 1);

		gen_hit(&h);
		buf_init(&slow);
		encode_mesh_hit(&slow, &h, seg);
		fast.len = 0;
		ck_assert_uint_ge(buf_room(&fast), 1024);
		encode_mesh_hit(&fast, &h, seg);
		ck_assert(!slow.oom && !fast.oom);
		ck_assert_msg(fast.len == slow.len && memcmp(fast.data, slow.data, slow.len) == 0,
			      "in place %s\nappends  %s", fast.data, slow.data);
		ck_assert_uint_eq(strlen(fast.data), fast.len);
		buf_release(&slow);
		/* the distance, point and normal of OBB and world hits too */
		buf_init(&slow);
		encode_dpn(&slow, h.distance, h.point, h.normal);
		fast.len = 0;
		encode_dpn(&fast, h.distance, h.point, h.normal);
		ck_assert_msg(fast.len == slow.len && memcmp(fast.data, slow.data, slow.len) == 0,
			      "in place %s\nappends  %s", fast.data, slow.data);
		buf_release(&slow);
	}
	buf_release(&fast);
}
END_TEST

/* Under a response cap the same answers stop at the same byte whether
 * written in place or appended: for every cap, a buffer allocated well past
 * it and one that grows piece by piece end alike. */
START_TEST(test_hit_cap_in_place_vs_appends)
{
	struct world_hit hits[12];
	size_t limit, k;

	for (k = 0; k < 12; k++)
		gen_hit(&hits[k]);
	for (limit = 1; limit < 5000; limit += 7) {
		struct buf a, b;

		buf_init(&a);
		buf_init(&b);
		buf_reserve(&a, limit + 4096);	/* more room than the cap allows */
		buf_set_limit(&a, limit);
		buf_set_limit(&b, limit);
		for (k = 0; k < 12; k++) {
			encode_mesh_hit(&a, &hits[k], (int)(k & 1));
			encode_mesh_hit(&b, &hits[k], (int)(k & 1));
			encode_dpn(&a, hits[k].distance, hits[k].point, hits[k].normal);
			encode_dpn(&b, hits[k].distance, hits[k].point, hits[k].normal);
		}
		ck_assert_int_eq(a.over, b.over);
		ck_assert_uint_eq(a.len, b.len);
		if (a.len)
			ck_assert(memcmp(a.data, b.data, a.len) == 0);
		ck_assert_uint_le(a.len, limit);
		buf_release(&a);
		buf_release(&b);
	}
}
END_TEST

static Suite *numbers_suite(void)
{
	Suite *s = suite_create("api_numbers");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_double_vs_printf_search);
	tcase_add_test(tc, test_float_layout);
	tcase_add_test(tc, test_hit_in_place_vs_appends);
	tcase_add_test(tc, test_hit_cap_in_place_vs_appends);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(numbers_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
