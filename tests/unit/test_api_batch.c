/* test_api_batch.c - the batch driver: framing, answers in item order and the
 * same bytes whatever the thread count and split, scratch per thread, the
 * first failing item reported, against a sequential oracle. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"

/* A job whose answer for item i is a pseudo-random length string of i, so a
 * misplaced or repeated chunk shows. */
struct job_cls {
	size_t fail_from;	/* items >= this fail (SIZE_MAX: none) */
	size_t scratch_bytes;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static enum core_result item(const void *cls, size_t i, void *scratch, struct buf *out)
{
	const struct job_cls *c = cls;
	unsigned char *s = scratch;
	size_t k, len = mix(i) % 7;

	if (i >= c->fail_from)
		return CORE_EINVAL;
	/* the scratch is this thread's alone: fill it, read it back */
	for (k = 0; k < c->scratch_bytes; k++)
		s[k] = (unsigned char)(i + k);
	for (k = 0; k < c->scratch_bytes; k++)
		if (s[k] != (unsigned char)(i + k))
			return CORE_ENOMEM;
	buf_printf(out, "%zu", i);
	for (k = 0; k < len; k++)
		buf_putc(out, (char)('a' + k));
	return CORE_OK;
}

/* The expected bytes, built sequentially without the driver. */
static void oracle(size_t n, enum batch_framing fr, struct buf *b)
{
	size_t i;

	buf_init(b);
	if (fr == BATCH_JSON)
		buf_puts(b, "{\"results\":[");
	for (i = 0; i < n; i++) {
		struct job_cls c = { SIZE_MAX, 0 };

		if (i && fr == BATCH_JSON)
			buf_putc(b, ',');
		item(&c, i, NULL, b);
	}
	if (fr == BATCH_JSON)
		buf_puts(b, "]}");
}

static void run_split_case(struct batch_pool *pool, size_t n, enum batch_framing fr,
			   size_t scratch, size_t split_min)
{
	struct job_cls c = { SIZE_MAX, scratch };
	struct batch_job job = { n, fr, 8, scratch, item, &c, split_min, 0, 0 };
	struct buf got, want;
	size_t failed = 99;

	buf_init(&got);
	ck_assert_int_eq(batch_run(pool, &job, &got, &failed), CORE_OK);
	oracle(n, fr, &want);
	ck_assert(!got.oom);
	ck_assert_uint_eq(got.len, want.len);
	ck_assert_msg(want.len == 0 || memcmp(got.data, want.data, want.len) == 0,
		      "n %zu framing %d differs", n, fr);
	buf_release(&got);
	buf_release(&want);
}

static void run_case(struct batch_pool *pool, size_t n, enum batch_framing fr, size_t scratch)
{
	run_split_case(pool, n, fr, scratch, 0);
}

START_TEST(same_bytes_any_threads)
{
	static const size_t sizes[] = { 0, 1, 2, 1000, BATCH_SPLIT_MIN - 1, BATCH_SPLIT_MIN,
					BATCH_SPLIT_MIN + 1, 3 * BATCH_SPLIT_MIN + 17 };
	unsigned threads = (unsigned)_i;
	struct batch_pool *pool = batch_pool_create(threads);
	size_t k;

	if (threads)
		ck_assert_ptr_nonnull(pool);
	else
		ck_assert_ptr_null(pool);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		run_case(pool, sizes[k], BATCH_JSON, 0);
		run_case(pool, sizes[k], BATCH_BINARY, 24);
	}
	run_case(pool, 2 * BATCH_SPLIT_MIN, BATCH_BINARY, 5000);	/* over the stack scratch */
	run_case(pool, 1, BATCH_ONE, 16);
	/* a job's own split threshold (world shots split from 256) */
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]) && sizes[k] <= 1000; k++) {
		run_split_case(pool, sizes[k], BATCH_JSON, 0, 1);
		run_split_case(pool, sizes[k], BATCH_JSON, 16, 4);
		run_split_case(pool, sizes[k], BATCH_BINARY, 24, 256);
	}
	run_split_case(pool, 255, BATCH_JSON, 8, 256);
	run_split_case(pool, 257, BATCH_JSON, 8, 256);
	batch_pool_destroy(pool);
}
END_TEST

/* An answer over its cap (--max-response-bytes: the caller's buffer limit)
 * stops the items, split or not: a 413 is bound whatever comes next, and
 * once every chunk built its whole part before the cap was looked at (a
 * split 4096-ray batch of many hits each grew the daemon by 110 MB for a
 * 1 KiB cap). An answer that fits exactly is whole and the same bytes. */
static atomic_size_t ran;

static enum core_result kilo_item(const void *cls, size_t i, void *scratch, struct buf *out)
{
	static const char block[1000] = { 'x' };

	(void)cls;
	(void)scratch;
	atomic_fetch_add(&ran, 1);
	buf_printf(out, "%zu", i);
	buf_append(out, block, sizeof(block));
	return CORE_OK;
}

START_TEST(capped_answer_stops)
{
	unsigned threads = (unsigned)_i;
	struct batch_pool *pool = batch_pool_create(threads);
	size_t n = 8 * BATCH_SPLIT_MIN, failed, cut;
	struct batch_job job = { n, BATCH_BINARY, 1000, 0, kilo_item, NULL, 0, 0, 0 };
	struct job_cls c = { SIZE_MAX, 0 };
	struct batch_job exact = { 3 * BATCH_SPLIT_MIN + 17, BATCH_JSON, 8, 0, item, &c, 0, 0, 0 };
	struct buf got, want;

	buf_init(&got);
	buf_set_limit(&got, 64 * 1024);
	atomic_store(&ran, 0);
	ck_assert_int_eq(batch_run(pool, &job, &got, &failed), CORE_OK);
	ck_assert(got.over);
	ck_assert_uint_le(got.len, 64 * 1024 + 1);
	/* about 64 items fill the cap; each chunk running may have written up
	 * to 8 KiB (CAP_STEP) more before it is told; and the first chunk, cut
	 * short by the others' bytes under the cap, runs on to the cap (an
	 * item of its not run might fail first: cap_or_failure_in_item_order) */
	ck_assert_msg(atomic_load(&ran) < 2 * 64 + 16 * (threads + 1), "%zu of %zu items ran",
		      atomic_load(&ran), n);
	buf_release(&got);
	/* exactly at the cap, and one byte under it */
	oracle(exact.n, BATCH_JSON, &want);
	for (cut = 0; cut < 2; cut++) {
		buf_init(&got);
		buf_set_limit(&got, want.len - cut);
		ck_assert_int_eq(batch_run(pool, &exact, &got, &failed), CORE_OK);
		ck_assert_int_eq(got.over, (int)cut);
		if (!cut)
			ck_assert(got.len == want.len && memcmp(got.data, want.data, want.len) == 0);
		buf_release(&got);
	}
	buf_release(&want);
	batch_pool_destroy(pool);
}
END_TEST

/* batch_pool_warm: workers woken early spin, then take the chunks of the
 * next batch (same bytes) or go back to sleep; a pool warmed and destroyed
 * at once joins; NULL is fine. */
/* An item of a grouped job: the group's first item leaves its number in
 * the scratch, the others find it there (so a chunk that started inside a
 * group, on another thread's scratch, shows). */
static enum core_result group_item(const void *cls, size_t i, void *scratch, struct buf *out)
{
	size_t g = *(const size_t *)cls, *first = scratch;

	if (i % g == 0)
		*first = i;
	else if (*first != i - i % g)
		return CORE_EINVAL;
	buf_printf(out, "%zu", i);
	return CORE_OK;
}

START_TEST(groups_stay_in_one_chunk)
{
	static const size_t groups[] = { 7, 64, 256, 1000 };
	struct batch_pool *pool = batch_pool_create((unsigned)_i + 1);

	ck_assert_ptr_nonnull(pool);
	for (size_t k = 0; k < sizeof(groups) / sizeof(groups[0]); k++) {
		for (size_t n = 1; n < 6 * BATCH_SPLIT_MIN; n = n * 3 + 1) {
			size_t g = groups[k], failed = 0;
			struct batch_job job = { n, BATCH_BINARY, 8, sizeof(size_t), group_item, &g,
						 0, 0, g };
			struct buf got;
			size_t len = 0;
			char num[24];

			buf_init(&got);
			ck_assert_msg(batch_run(pool, &job, &got, &failed) == CORE_OK,
				      "group %zu n %zu: item %zu met a foreign scratch", g, n,
				      failed);
			for (size_t i = 0; i < n; i++)
				len += (size_t)snprintf(num, sizeof(num), "%zu", i);
			ck_assert_uint_eq(got.len, len);	/* every item once */
			buf_release(&got);
		}
	}
	batch_pool_destroy(pool);
}
END_TEST

START_TEST(warm_then_run)
{
	struct batch_pool *pool = batch_pool_create(3);
	int k;

	batch_pool_warm(NULL, 100000, 0);
	batch_pool_warm(pool, 10, 0);	/* too few to split: a no-op */
	for (k = 0; k < 20; k++) {
		batch_pool_warm(pool, 1000, k % 2 ? 256 : 64);
		run_split_case(pool, 1000, BATCH_JSON, 8, k % 2 ? 256 : 64);
	}
	batch_pool_warm(pool, 5000, 0);
	usleep(3000);	/* past the spin: asleep again, and still answering */
	run_split_case(pool, 5000, BATCH_BINARY, 24, 0);
	batch_pool_warm(pool, 100000, 0);
	batch_pool_destroy(pool);
	pool = batch_pool_create(2);
	batch_pool_warm(pool, 100000, 0);
	usleep(200);
	batch_pool_destroy(pool);
}
END_TEST

START_TEST(first_failure_reported)
{
	struct batch_pool *pool = batch_pool_create(3);
	static const size_t fails[] = { 0, 1, 4095, 4096, 9000, 19999 };
	size_t k;

	for (k = 0; k < sizeof(fails) / sizeof(fails[0]); k++) {
		struct job_cls c = { fails[k], 8 };
		struct batch_job job = { 20000, BATCH_JSON, 8, 8, item, &c, 0, 0, 0 };
		struct buf out;
		size_t failed = 0;

		buf_init(&out);
		ck_assert_int_eq(batch_run(pool, &job, &out, &failed), CORE_EINVAL);
		ck_assert_uint_eq(failed, fails[k]);
		buf_release(&out);
		buf_init(&out);
		ck_assert_int_eq(batch_run(NULL, &job, &out, &failed), CORE_EINVAL);
		ck_assert_uint_eq(failed, fails[k]);
		buf_release(&out);
	}
	batch_pool_destroy(pool);
}
END_TEST

/* The cap and a failing item, split or not: the first in item order
 * decides (a 413 when the answer before the failing item passes the cap,
 * else the failure), whichever chunk a thread ran first. The first chunk
 * is held until the other chunks are done, so that a split
 * meets the order that a run without threads never does. */
struct gate {
	size_t fail_at;		/* this item fails */
	size_t other_from;	/* the other chunks' items start here */
	int hold;		/* item 0 waits for the other chunks */
	atomic_size_t others;	/* the other chunks' items answered */
};

static enum core_result gate_item(const void *cls, size_t i, void *scratch, struct buf *out)
{
	static const char block[1000] = { 'x' };
	struct gate *g = (struct gate *)cls;	/* its counter only */

	(void)scratch;
	if (g->hold && i == 0) {
		/* the others are done when their count stops moving (2 s at most) */
		size_t last = SIZE_MAX, quiet = 0, k;

		for (k = 0; k < 2000 && quiet < 20; k++) {
			size_t now = atomic_load(&g->others);

			quiet = now && now == last ? quiet + 1 : 0;
			last = now;
			usleep(1000);
		}
	}
	if (i == g->fail_at)
		return CORE_EINVAL;
	if (i >= g->other_from)
		atomic_fetch_add(&g->others, 1);
	buf_append(out, block, sizeof(block));
	return CORE_OK;
}

START_TEST(cap_or_failure_in_item_order)
{
	/* 3 workers: 16 chunks of 2048 items; 1000 bytes an item, 64 KiB cap */
	struct batch_pool *pool = batch_pool_create(3);
	size_t n = 8 * BATCH_SPLIT_MIN, per = n / 16;
	/* the failure after the cap (the first item of the second chunk), and
	 * before it (item 20 of the first) */
	struct gate cases[2] = { { per, per, 0, 0 }, { 20, per, 0, 0 } };
	int k;

	ck_assert_ptr_nonnull(pool);
	for (k = 0; k < 2; k++) {
		struct gate *g = &cases[k];
		struct batch_job job = { n, BATCH_JSON, 1000, 0, gate_item, g, 0, 0, 0 };
		enum core_result want_r, got_r;
		size_t want_failed = 0, got_failed = 0;
		int want_over;
		struct buf out;

		atomic_init(&g->others, 0);
		buf_init(&out);
		buf_set_limit(&out, 64 * 1024);
		want_r = batch_run(NULL, &job, &out, &want_failed);
		want_over = out.over;
		buf_release(&out);
		ck_assert(k ? want_r == CORE_EINVAL && want_failed == 20 :
			      want_r == CORE_OK && want_over);
		g->hold = 1;
		buf_init(&out);
		buf_set_limit(&out, 64 * 1024);
		got_r = batch_run(pool, &job, &out, &got_failed);
		ck_assert_msg(got_r == want_r && out.over == want_over &&
				      (want_r == CORE_OK || got_failed == want_failed),
			      "case %d: split %d (item %zu, over %d), unsplit %d (item %zu, over %d)",
			      k, got_r, got_failed, out.over, want_r, want_failed, want_over);
		buf_release(&out);
	}
	batch_pool_destroy(pool);
}
END_TEST

/* batch_pair's call: the calls made on it, the thread that made them, and
 * the other call's (the first call waits up to 100 ms for the second to
 * start, so a worker has the time to take it). */
struct pair_arg {
	atomic_int calls;
	pthread_t by;
	struct pair_arg *other;
};

static void pair_fn(void *arg)
{
	struct pair_arg *a = arg;
	int k;

	atomic_fetch_add(&a->calls, 1);
	a->by = pthread_self();
	for (k = 0; a->other && k < 1000 && !atomic_load(&a->other->calls); k++)
		usleep(100);
}

/* batch_pair: each of the two calls made exactly once, the first by the
 * caller, both done on return; with a pool the second by a worker at least
 * once (and the batch after a pair answers as ever); without one, both
 * here. */
START_TEST(pair_runs_both_once)
{
	struct batch_pool *pool = batch_pool_create(2);
	int k, elsewhere = 0;

	for (k = 0; k < 50; k++) {
		struct pair_arg a = { 0 }, b = { 0 };

		a.other = k % 5 == 4 ? NULL : &b;	/* without a pool b runs after a */
		batch_pair(k % 5 == 4 ? NULL : pool, pair_fn, &a, &b);
		ck_assert_int_eq(atomic_load(&a.calls), 1);
		ck_assert_int_eq(atomic_load(&b.calls), 1);
		ck_assert(pthread_equal(a.by, pthread_self()));
		if (k % 5 == 4)
			ck_assert(pthread_equal(b.by, pthread_self()));
		elsewhere += !pthread_equal(b.by, pthread_self());
		if (k % 10 == 0)
			run_split_case(pool, 1000, BATCH_JSON, 8, 64);
	}
	ck_assert_int_ge(elsewhere, 20);	/* of the 40 with a pool */
	batch_pool_destroy(pool);
}
END_TEST

static Suite *batch_suite(void)
{
	Suite *s = suite_create("api_batch");
	TCase *tc = tcase_create("batch");

	tcase_set_timeout(tc, 20);	/* sanitizer builds on a loaded machine */
	tcase_add_loop_test(tc, same_bytes_any_threads, 0, 5);
	tcase_add_test(tc, first_failure_reported);
	tcase_add_test(tc, cap_or_failure_in_item_order);
	tcase_add_loop_test(tc, capped_answer_stops, 0, 3);
	tcase_add_loop_test(tc, groups_stay_in_one_chunk, 0, 3);
	tcase_add_test(tc, warm_then_run);
	tcase_add_test(tc, pair_runs_both_once);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(batch_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
