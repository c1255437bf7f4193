/* test_snapmem.c - Check suite for core/snapmem.c: blocks are aligned, never
 * overlap (each filled with its own pattern, checked before release), stay
 * valid after their snapmem is freed and when released from other threads;
 * chunks are reused rather than mapped again when snapshots come and go in
 * order, small blocks map none, and every chunk is unmapped or spare once
 * all is released. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "snapmem.h"
#include "testgeom.h"

/* Under AddressSanitizer a released block is poisoned: its next read is
 * reported, as after free(). */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifdef ASAN
#include <sanitizer/asan_interface.h>
#endif

/* A released byte is poisoned unless its chunk went back to the system
 * (mincore: ENOMEM). Not for a test where other threads take blocks. */
static int released_ok(const unsigned char *p)
{
#ifdef ASAN
	unsigned char v;
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);

	return mincore(page, 1, &v) != 0 || __asan_region_is_poisoned((void *)p, 1) != NULL;
#else
	(void)p;
	return 1;
#endif
}

struct blk {
	unsigned char *p;
	size_t n;
	unsigned char tag;
};

static void fill(struct blk *b)
{
	memset(b->p, b->tag, b->n);
}

static void check_fill(const struct blk *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (b->p[i] != b->tag)
			ck_abort_msg("block of %zu bytes changed at %zu: %u, not %u", b->n, i,
				     b->p[i], b->tag);
}

static struct blk take(struct snapmem *m, size_t n, unsigned char tag)
{
	struct blk b = { snapmem_alloc(m, n), n, tag };

	ck_assert_ptr_nonnull(b.p);
	ck_assert_uint_eq((uintptr_t)b.p % 64, 0);
	fill(&b);
	return b;
}

static void give(struct blk *b)
{
	check_fill(b);
	snapmem_release(b->p);
	ck_assert(released_ok(b->p) && released_ok(b->p + b->n - 1));
	b->p = NULL;
}

/* Everything released: each chunk left mapped is a spare, at most
 * SNAPMEM_SPARES of them. */
static void assert_all_back(void)
{
	size_t mapped, spare, maps;

	snapmem_counts(&mapped, &spare, &maps);
	ck_assert_uint_eq(mapped, spare);
	ck_assert_uint_le(spare, SNAPMEM_SPARES);
}

/* A history as a world keeps it: a ring of live blocks, the oldest released
 * when a new one comes, sometimes one held back (a query still reading it)
 * and released later; sizes from a few bytes to over a chunk. */
START_TEST(random_ring_keeps_every_block)
{
	enum { RING = 24, HELD = 6, ROUNDS = 600 };
	struct rng g = { 0x5eed0000u + (uint64_t)_i };
	struct snapmem *m = snapmem_new();
	struct blk ring[RING] = { { 0 } }, held[HELD] = { { 0 } };
	size_t i, k;

	ck_assert_ptr_nonnull(m);
	for (i = 0; i < ROUNDS; i++) {
		struct blk *old = &ring[i % RING];
		size_t n;

		switch (rng_next(&g) % 16) {
		case 0:
			n = 1 + rng_next(&g) % 64;
			break;
		case 1:		/* more than half a chunk: a mapping of its own */
			n = SNAPMEM_CHUNK / 2 + rng_next(&g) % (2 * SNAPMEM_CHUNK);
			break;
		default:
			n = 1 + rng_next(&g) % (500 << 10);
			break;
		}
		if (old->p) {
			k = rng_next(&g) % (4 * HELD);
			if (k < HELD) {	/* held back: released some rounds later */
				if (held[k].p)
					give(&held[k]);
				held[k] = *old;
				old->p = NULL;
			} else {
				give(old);
			}
		}
		*old = take(m, n, (unsigned char)(1 + i % 251));
		/* a live block checked every round: a carve over one shows */
		k = rng_next(&g) % RING;
		if (ring[k].p)
			check_fill(&ring[k]);
	}
	for (k = 0; k < RING; k++)
		if (ring[k].p)
			give(&ring[k]);
	snapmem_free(m);
	for (k = 0; k < HELD; k++)
		if (held[k].p)
			give(&held[k]);
	assert_all_back();
}
END_TEST

/* Blocks taken and released in order reuse their chunks: after the first
 * ring, not one more mapping. */
START_TEST(ordered_ring_maps_nothing_new)
{
	enum { RING = 40, BLOCK = 400 << 10 };
	struct snapmem *m = snapmem_new();
	struct blk ring[RING] = { { 0 } };
	size_t i, mapped, spare, maps, maps_warm = 0;

	for (i = 0; i < 20 * RING; i++) {
		if (ring[i % RING].p)
			give(&ring[i % RING]);
		ring[i % RING] = take(m, BLOCK - 64 * (i % 3), (unsigned char)i);
		snapmem_counts(&mapped, &spare, &maps);
		if (i == RING)
			maps_warm = maps;
		else if (i > RING)
			ck_assert_uint_eq(maps, maps_warm);
		/* five 400 KiB blocks to a chunk (with their heads): the ring's
		 * 40 in 8 or 9 chunks, one being filled, the spares */
		ck_assert_uint_le(mapped, RING / 5 + 2 + SNAPMEM_SPARES);
		ck_assert_uint_eq(snapmem_mapped_bytes(), mapped * SNAPMEM_CHUNK);
	}
	for (i = 0; i < RING; i++)
		give(&ring[i]);
	snapmem_free(m);
	assert_all_back();
}
END_TEST

/* A block outlives its snapmem (a query holding a snapshot of a world just
 * deleted). */
START_TEST(block_outlives_its_snapmem)
{
	struct snapmem *m = snapmem_new();
	size_t before = snapmem_mapped_bytes();
	struct blk a = take(m, SNAPMEM_SMALL, 7), b = take(m, 3 * SNAPMEM_CHUNK, 9);

	/* b's own mapping: 3 chunks and its head, rounded up to 4 */
	ck_assert_uint_ge(snapmem_mapped_bytes(), before + 4 * SNAPMEM_CHUNK);
	snapmem_free(m);
	fill(&a);
	fill(&b);
	give(&b);
	give(&a);
	assert_all_back();
}
END_TEST

/* Small blocks come from malloc: no chunk is mapped or kept for them. */
START_TEST(small_blocks_map_nothing)
{
	struct snapmem *m = snapmem_new();
	struct blk b[64];
	size_t i, mapped0, spare0, maps0, mapped, spare, maps;

	snapmem_counts(&mapped0, &spare0, &maps0);
	for (i = 0; i < 64; i++)
		b[i] = take(m, 1 + i * ((SNAPMEM_SMALL - 128) / 64), (unsigned char)i);
	snapmem_counts(&mapped, &spare, &maps);
	ck_assert_uint_eq(maps, maps0);
	ck_assert_uint_eq(mapped, mapped0);
	for (i = 0; i < 64; i++)
		give(&b[i]);
	snapmem_free(m);
	assert_all_back();
}
END_TEST

START_TEST(rejects_zero_and_huge)
{
	struct snapmem *m = snapmem_new();

	ck_assert_ptr_null(snapmem_alloc(m, 0));
	ck_assert_ptr_null(snapmem_alloc(m, SIZE_MAX));
	ck_assert_ptr_null(snapmem_alloc(m, SIZE_MAX / 2));
	snapmem_release(NULL);
	snapmem_free(m);
	snapmem_free(NULL);
	assert_all_back();
}
END_TEST

/* Releases from other threads while this one takes more (the readers of
 * a history drop the last references of old snapshots). */
#define NTHREAD 3
#define PER_THREAD 300

struct rel_arg {
	struct blk *blks;
	size_t n;
};

static void *release_all(void *p)
{
	struct rel_arg *a = p;
	size_t i;

	for (i = 0; i < a->n; i++) {
		check_fill(&a->blks[i]);
		snapmem_release(a->blks[i].p);
	}
	return NULL;
}

START_TEST(releases_from_other_threads)
{
	static struct blk blks[NTHREAD][PER_THREAD];
	struct rel_arg args[NTHREAD];
	pthread_t th[NTHREAD];
	struct snapmem *m = snapmem_new();
	struct rng g = { 77 };
	size_t i, t;

	for (i = 0; i < PER_THREAD; i++)
		for (t = 0; t < NTHREAD; t++)
			blks[t][i] = take(m, SNAPMEM_SMALL + rng_next(&g) % (100 << 10),
					  (unsigned char)(t * 50 + i % 50));
	for (t = 0; t < NTHREAD; t++) {
		args[t] = (struct rel_arg){ blks[t], PER_THREAD };
		ck_assert_int_eq(pthread_create(&th[t], NULL, release_all, &args[t]), 0);
	}
	for (i = 0; i < 200; i++) {	/* meanwhile more from this thread */
		struct blk b = take(m, SNAPMEM_SMALL + rng_next(&g) % (300 << 10), (unsigned char)i);

		check_fill(&b);
		snapmem_release(b.p);
	}
	for (t = 0; t < NTHREAD; t++)
		pthread_join(th[t], NULL);
	snapmem_free(m);
	assert_all_back();
}
END_TEST

static Suite *snapmem_suite(void)
{
	Suite *s = suite_create("snapmem");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, random_ring_keeps_every_block, 0, 4);
	tcase_add_test(tc, ordered_ring_maps_nothing_new);
	tcase_add_test(tc, block_outlives_its_snapmem);
	tcase_add_test(tc, small_blocks_map_nothing);
	tcase_add_test(tc, rejects_zero_and_huge);
	tcase_add_test(tc, releases_from_other_threads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(snapmem_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
