/* test_api_response_cap.c - the response cap: struct buf's limit and the 413
 * api_handle answers when a query's answer would pass --max-response-bytes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "buf.h"
#include "store.h"

/* ---- struct buf */

START_TEST(test_buf_limit_exact)
{
	struct buf b;
	size_t k;

	buf_init(&b);
	buf_set_limit(&b, 1000);
	for (k = 0; k < 1000; k++)
		buf_putc(&b, 'x');
	ck_assert(!b.over && !b.oom);
	ck_assert_uint_eq(b.len, 1000);
	ck_assert_uint_le(b.cap, 1001);
	buf_putc(&b, 'y');
	ck_assert(b.over && b.oom);
	ck_assert_uint_eq(b.len, 1000);
	buf_puts(&b, "z");	/* ignored after over */
	ck_assert_uint_eq(b.len, 1000);
	ck_assert_int_eq(b.data[1000], '\0');
	buf_release(&b);
	ck_assert(!b.over && !b.limit);
}
END_TEST

START_TEST(test_buf_limit_reserve_clamps)
{
	struct buf b;

	buf_init(&b);
	buf_set_limit(&b, 4096);
	buf_reserve(&b, (size_t)1 << 30);	/* a reservation is a hint: no over, no 1 GiB */
	ck_assert(!b.over && !b.oom);
	ck_assert_uint_le(b.cap, 4097);
	buf_append(&b, "abc", 3);
	ck_assert_str_eq(b.data, "abc");
	buf_release(&b);
}
END_TEST

/* Random appends of every kind against random caps: len never passes the cap,
 * the allocation never passes cap + 1, and whatever was kept is a prefix of
 * the uncapped output. */
START_TEST(test_buf_limit_random)
{
	unsigned seed = 12345;
	int round;

	for (round = 0; round < 300; round++) {
		struct buf capped, free_b;
		size_t limit;
		int k;

		seed = seed * 1103515245u + 12345u;
		limit = 1024 + seed % 20000;
		buf_init(&capped);
		buf_init(&free_b);
		buf_set_limit(&capped, limit);
		for (k = 0; k < 3000; k++) {
			struct buf *bs[2] = { &capped, &free_b };
			int i;

			seed = seed * 1103515245u + 12345u;
			for (i = 0; i < 2; i++) {
				switch (seed >> 16 & 7) {
				case 0: buf_putc(bs[i], 'c'); break;
				case 1: buf_puts(bs[i], "{\"hit\":true}"); break;
				case 2: buf_put_float(bs[i], (float)(seed % 100000) / 7.0f); break;
				case 3: buf_put_double(bs[i], (double)seed / 3.0); break;
				case 4: buf_put_u64(bs[i], seed); break;
				case 5: buf_printf(bs[i], "%u-%s", seed, "printf"); break;
				case 6: buf_put_json_string(bs[i], "a\"b\\c\n", 6); break;
				default: buf_reserve(bs[i], seed % 50000); break;
				}
			}
		}
		ck_assert_uint_le(capped.len, limit);
		ck_assert_uint_le(capped.cap, limit + 1);
		/* the cap trips at the bytes themselves, never a few early */
		ck_assert(capped.over == (free_b.len > limit));
		ck_assert(memcmp(capped.data, free_b.data, capped.len) == 0);
		buf_release(&capped);
		buf_release(&free_b);
	}
}
END_TEST

/* Numbers near the cap: the buffer is over only when their bytes do not
 * fit, not when the room a number is written through does not (an unsplit
 * batch would otherwise refuse, up to 40 bytes early, an answer that a
 * batch split across threads passes whole: a 413 by thread count). */
START_TEST(test_buf_limit_numbers_exact)
{
	static const float fs[] = { 0.5f, 1.0f / 3.0f, 1e-30f, 123456.7f, -2.5e20f };
	static const uint64_t us[] = { 0, 7, 4294967296u, UINT64_MAX };
	char text[64];
	size_t k, len, lim;

	for (k = 0; k < sizeof(fs) / sizeof(fs[0]) + sizeof(us) / sizeof(us[0]); k++) {
		struct buf b;

		buf_init(&b);
		if (k < sizeof(fs) / sizeof(fs[0]))
			buf_put_float(&b, fs[k]);
		else
			buf_put_u64(&b, us[k - sizeof(fs) / sizeof(fs[0])]);
		len = b.len;
		memcpy(text, b.data, len);
		buf_release(&b);
		for (lim = len - 1; lim <= len + 40; lim++) {
			buf_init(&b);
			buf_set_limit(&b, lim + 1000);
			buf_putc(&b, '[');
			/* '[' and 999 spaces, then the number: lim + 1000 is its end when lim == len */
			for (size_t i = 1; i < 1000; i++)
				buf_putc(&b, ' ');
			if (k < sizeof(fs) / sizeof(fs[0]))
				buf_put_float(&b, fs[k]);
			else
				buf_put_u64(&b, us[k - sizeof(fs) / sizeof(fs[0])]);
			ck_assert_msg(b.over == (lim < len), "%.*s under a cap %zu bytes past it: over %d",
				      (int)len, text, lim - len + 1, b.over);
			if (!b.over)
				ck_assert(memcmp(b.data + 1000, text, len) == 0);
			buf_release(&b);
		}
	}
}
END_TEST

/* ---- through api_handle: a mesh of stacked planes and mode "all" */

static struct api_ctx ctx;

static void call(const char *method, const char *path, const char *body, struct api_response *r)
{
	struct api_request rq = { method, path, "application/json", body, strlen(body), API_AUTH_WRITE, NULL, NULL };

	api_handle(&ctx, &rq, r);
}

/* n unit squares stacked along z. */
static char *planes_json(int n)
{
	size_t cap = 64 + (size_t)n * 200, len = 0;
	char *s = malloc(cap);
	int k;

	ck_assert_ptr_nonnull(s);
	len += (size_t)sprintf(s + len, "{\"vertices\":[");
	for (k = 0; k < n; k++)
		len += (size_t)sprintf(s + len, "%s[-1,-1,%d],[1,-1,%d],[1,1,%d],[-1,1,%d]", k ? "," : "",
				       k, k, k, k);
	len += (size_t)sprintf(s + len, "],\"triangles\":[");
	for (k = 0; k < n; k++)
		len += (size_t)sprintf(s + len, "%s[%d,%d,%d],[%d,%d,%d]", k ? "," : "", 4 * k,
				       4 * k + 1, 4 * k + 2, 4 * k, 4 * k + 2, 4 * k + 3);
	sprintf(s + len, "]}");
	return s;
}

/* nrays rays up through the planes, every hit asked for. */
static char *rays_json(int nrays, int max_hits)
{
	char *s = malloc(64 + (size_t)nrays * 80);
	size_t len = 0;
	int k;

	ck_assert_ptr_nonnull(s);
	len += (size_t)sprintf(s, "{\"mode\":\"all\",\"max_hits\":%d,\"rays\":[", max_hits);
	for (k = 0; k < nrays; k++)
		len += (size_t)sprintf(s + len, "%s{\"origin\":[0.%03d,0.25,-1],\"direction\":[0,0,1]}",
				       k ? "," : "", k % 1000);
	sprintf(s + len, "]}");
	return s;
}

static void setup(void)
{
	struct api_response r;
	char *m = planes_json(100);

	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ctx.limits = (struct api_limits){ 65536, 16u << 20, 65536, 0, 1u << 28, 1u << 24, 0 };
	call("PUT", "/v1/meshes/planes", m, &r);
	ck_assert_int_eq(r.status, 201);
	api_response_release(&r);
	free(m);
}

static void teardown(void)
{
	store_free(ctx.store);
}

/* The answer of 50 rays x 100 hits; then under caps around its size: 200 with
 * the same bytes when it fits, else 413 naming the cap. */
START_TEST(test_cap_around_answer)
{
	char *q = rays_json(50, 1000);
	struct api_response full, r;
	size_t size, cap;
	char want[64];
	int k;

	call("POST", "/v1/meshes/planes/raycast", q, &full);
	ck_assert_int_eq(full.status, 200);
	size = full.body.len;
	ck_assert_uint_gt(size, 200000);	/* 5000 hits */
	for (k = -40; k <= 40; k++) {
		cap = size + (size_t)(k * 7) - (k < -20 ? size / 2 : 0);
		ctx.limits.max_response_bytes = cap;
		call("POST", "/v1/meshes/planes/raycast", q, &r);
		if (r.status == 200) {
			ck_assert_uint_le(r.body.len, cap);
			ck_assert_uint_eq(r.body.len, size);
			ck_assert(memcmp(r.body.data, full.body.data, size) == 0);
		} else {
			ck_assert_int_eq(r.status, 413);
			ck_assert_uint_gt(size, cap);	/* refused only when over */
			snprintf(want, sizeof(want), "response limit of %zu bytes", cap);
			ck_assert_msg(strstr(r.body.data, want) && strstr(r.body.data, "payload_too_large") &&
				      strstr(r.body.data, "max_hits"), "%s", r.body.data);
		}
		if (cap < size)
			ck_assert_int_eq(r.status, 413);
		api_response_release(&r);
	}
	ctx.limits.max_response_bytes = 0;
	api_response_release(&full);
	free(q);
}
END_TEST

/* Error answers and small answers are untouched by a small cap. */
START_TEST(test_cap_small_answers_and_errors)
{
	struct api_response r;

	ctx.limits.max_response_bytes = 1024;
	call("POST", "/v1/meshes/planes/raycast", "{\"origin\":[0,0,-1],\"direction\":[0,0,1]}", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body.data, "\"hit\":true"));
	api_response_release(&r);
	call("POST", "/v1/meshes/planes/raycast", "{\"origin\":[0,0,-1]}", &r);
	ck_assert_int_eq(r.status, 400);
	api_response_release(&r);
	call("GET", "/v1/meshes/planes", "", &r);
	ck_assert_int_eq(r.status, 200);
	api_response_release(&r);
	ctx.limits.max_response_bytes = 0;
}
END_TEST

static Suite *cap_suite(void)
{
	Suite *s = suite_create("api_response_cap");
	TCase *tb = tcase_create("buf"), *ta = tcase_create("api");

	tcase_add_test(tb, test_buf_limit_exact);
	tcase_add_test(tb, test_buf_limit_reserve_clamps);
	tcase_add_test(tb, test_buf_limit_random);
	tcase_add_test(tb, test_buf_limit_numbers_exact);
	suite_add_tcase(s, tb);
	tcase_add_checked_fixture(ta, setup, teardown);
	tcase_set_timeout(ta, 60);
	tcase_add_test(ta, test_cap_around_answer);
	tcase_add_test(ta, test_cap_small_answers_and_errors);
	suite_add_tcase(s, ta);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cap_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
