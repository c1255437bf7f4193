/* test_bvh_build.c - Check suite for the BVH builder (core/bvh.c,
 * core/bvh_split.c): whatever the input's order, size or shape, and on one
 * thread or several, the tree is a tree over every primitive exactly once,
 * every slot's box holds everything below it, and the builder leaves p a
 * permutation of what it was given. Ray answers are checked against brute
 * force in test_mesh and test_raycast_kernels; this checks the structure
 * that makes them right, on inputs those suites do not build (coherent and
 * reversed orders, coincident centroids, coordinates near FLT_MAX, ranges
 * of every partition size); and that the SAH split is the least-cost plane
 * of the bins, against every plane tried by brute force, the first of
 * equal ones. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "bvh_split.h"
#include "testgeom.h"

/* 1 when the box of slot s of nd holds [lo, hi]. */
static int slot_holds(const struct bvh_node *nd, int s, const float lo[3], const float hi[3])
{
	for (int a = 0; a < 3; a++)
		if (!(nd->lo[a][s] <= lo[a] && hi[a] <= nd->hi[a][s]))
			return 0;
	return 1;
}

/* Walk t from the root: every node reached once, every non-empty slot's box
 * holds its child node's boxes or its leaf's primitives, each primitive in
 * one leaf, leaves of 1 .. BVH_LEAF_MAX; p's ids a permutation of 0..n-1. */
static void check_tree(const struct bvh *t, const struct bvh_prim *p, size_t n)
{
	unsigned char *seen = calloc(n, 1), *reached = calloc(t->nnodes, 1);
	uint32_t *stack = malloc(sizeof(*stack) * (t->nnodes + 1));
	size_t sp = 0, nreached = 0;

	ck_assert_ptr_nonnull(seen);
	ck_assert_ptr_nonnull(reached);
	ck_assert_ptr_nonnull(stack);
	ck_assert_uint_ge(t->nnodes, 1);
	stack[sp++] = 0;
	while (sp) {
		uint32_t k = stack[--sp];
		const struct bvh_node *nd = &t->nodes[k];

		ck_assert_uint_lt(k, t->nnodes);
		ck_assert_msg(!reached[k], "node %u reached twice", k);
		reached[k] = 1;
		nreached++;
		for (int s = 0; s < BVH_WIDTH; s++) {
			uint32_t ref = nd->ref[s], cnt = bvh_ref_count(ref), f = bvh_ref_index(ref);

			if (ref == BVH_EMPTY)
				continue;
			if (!cnt) {
				const struct bvh_node *ch = &t->nodes[f];

				ck_assert_uint_lt(f, t->nnodes);
				for (int c = 0; c < BVH_WIDTH; c++) {
					float lo[3], hi[3];

					if (ch->ref[c] == BVH_EMPTY)
						continue;
					for (int a = 0; a < 3; a++) {
						lo[a] = ch->lo[a][c];
						hi[a] = ch->hi[a][c];
					}
					ck_assert_msg(slot_holds(nd, s, lo, hi),
						      "node %u slot %d does not hold node %u slot %d",
						      k, s, f, c);
				}
				stack[sp++] = f;
				continue;
			}
			ck_assert_uint_le(cnt, BVH_LEAF_MAX);
			ck_assert_uint_le((size_t)f + cnt, n);
			for (uint32_t i = f; i < f + cnt; i++) {
				ck_assert_msg(!seen[i], "primitive %u in two leaves", i);
				seen[i] = 1;
				ck_assert_msg(slot_holds(nd, s, p[i].lo, p[i].hi),
					      "node %u slot %d does not hold its primitive %u", k, s,
					      i);
			}
		}
	}
	ck_assert_uint_eq(nreached, t->nnodes);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(seen[i], "primitive %zu in no leaf", i);
		seen[i] = 0;
	}
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_lt(p[i].id, n);
		ck_assert_msg(!seen[p[i].id], "id %u twice", p[i].id);
		seen[p[i].id] = 1;
	}
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(p[i].lo[0] >= t->lo.x && p[i].lo[1] >= t->lo.y && p[i].lo[2] >= t->lo.z,
			      "primitive %zu below the root bounds", i);
		ck_assert_msg(p[i].hi[0] <= t->hi.x && p[i].hi[1] <= t->hi.y && p[i].hi[2] <= t->hi.z,
			      "primitive %zu above the root bounds", i);
	}
	free(stack);
	free(reached);
	free(seen);
}

static int by_x(const void *a, const void *b)
{
	const struct bvh_prim *x = a, *y = b;
	float cx = x->lo[0] + x->hi[0], cy = y->lo[0] + y->hi[0];

	return cx < cy ? -1 : cx > cy ? 1 : (x->id > y->id) - (x->id < y->id);
}

enum order { SHUFFLED, SORTED, REVERSED, COINCIDENT, HALF_COINCIDENT, HUGE, NORDERS };

/* random_prims in the given order (SORTED: by centroid x, as a mesh's
 * neighbouring triangles come; COINCIDENT: every box the same; HALF: every
 * other one the same; HUGE: coordinates near FLT_MAX, where a doubled
 * centroid overflows to infinity), ids renumbered 0..n-1 in that order. */
static struct bvh_prim *prims(size_t n, uint64_t seed, enum order o)
{
	struct bvh_prim *p = random_prims(n, seed);

	if (o == SORTED || o == REVERSED)
		qsort(p, n, sizeof(*p), by_x);
	for (size_t i = 0; i < n; i++) {
		if (o == REVERSED && i < n / 2) {
			struct bvh_prim t = p[i];

			p[i] = p[n - 1 - i];
			p[n - 1 - i] = t;
		}
		if (o == COINCIDENT || (o == HALF_COINCIDENT && i % 2))
			p[i] = p[0];
		if (o == HUGE)
			for (int a = 0; a < 3; a++) {
				p[i].lo[a] *= 3e36f;
				p[i].hi[a] *= 3e36f;
			}
	}
	for (size_t i = 0; i < n; i++)
		p[i].id = (uint32_t)i;
	return p;
}

static const size_t sizes[] = { 1, 2, 6, 7, 9, 17, 129, 130, 200, 257, 300, 1000, 5000, 40000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Build n primitives of seed in order o on threads threads and check the tree. */
static void build_and_check(size_t n, uint64_t seed, enum order o, int threads)
{
	struct bvh_prim *p = prims(n, seed, o);
	struct bvh t;

	ck_assert_int_eq(bvh_build(p, n, threads, &t), CORE_OK);
	check_tree(&t, p, n);
	bvh_release(&t);
	free(p);
}

START_TEST(boxes_hold_their_primitives)
{
	build_and_check(sizes[_i % NSIZES], 9100 + (uint64_t)_i, (enum order)(_i / NSIZES), 1);
}
END_TEST

/* Over PAR_MIN_PRIMS (bvh.c): the deferred subtrees built on four threads,
 * the big ranges split by the block partition. */
START_TEST(threaded_build_holds_its_primitives)
{
	build_and_check(150000, 9200 + (uint64_t)_i, _i ? SORTED : SHUFFLED, 4);
}
END_TEST

/* bvh_split.c's binning, written again: 16 bins (n of them under 16) over
 * the doubled centroids' extent, one axis (the widest) above 4096
 * primitives. */
#define T_NBINS 16
#define T_BIG_RANGE 4096

static int t_bin(const struct bvh_prim *q, int k, float cmin, float scale, int nb)
{
	float x = (q->lo[k] + q->hi[k] - cmin) * scale, top = (float)(nb - 1);

	x = x > 0 ? x : 0;
	return (int)(x < top ? x : top);
}

/* The least SAH cost (area(L) nL + area(R) nR) of the planes between bins
 * of p[0, n), each plane's sides gathered primitive by primitive; FLT_MAX
 * when no plane leaves both sides non-empty. */
static float least_binned_cost(const struct bvh_prim *p, uint32_t n)
{
	int nb = n < T_NBINS ? (int)n : T_NBINS, w = 0;
	float cmin[3] = { FLT_MAX, FLT_MAX, FLT_MAX }, cmax[3] = { -FLT_MAX, -FLT_MAX, -FLT_MAX };
	float scale[3], best = FLT_MAX;

	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			cmin[k] = MINF(cmin[k], p[i].lo[k] + p[i].hi[k]);
			cmax[k] = MAXF(cmax[k], p[i].lo[k] + p[i].hi[k]);
		}
	for (int k = 0; k < 3; k++) {
		float ext = cmax[k] - cmin[k];

		scale[k] = ext > 0 ? (nb * (1 - 1e-6f)) / ext : 0;
		if (cmax[k] - cmin[k] > cmax[w] - cmin[w])
			w = k;
	}
	for (int k = 0; k < 3; k++) {
		if (scale[k] == 0 || (n > T_BIG_RANGE && k != w))
			continue;
		for (int b = 0; b < nb - 1; b++) {
			struct box l, r;
			uint32_t nl = 0, nr = 0;
			float cost;

			box_empty(&l);
			box_empty(&r);
			for (uint32_t i = 0; i < n; i++) {
				if (t_bin(&p[i], k, cmin[k], scale[k], nb) <= b) {
					box_grow_prim(&l, &p[i]);
					nl++;
				} else {
					box_grow_prim(&r, &p[i]);
					nr++;
				}
			}
			if (!nl || !nr)
				continue;
			cost = box_area(&l) * nl + box_area(&r) * nr;
			best = MINF(best, cost);
		}
	}
	return best;
}

/* bvh_split_sah on n primitives of seed in order o: a split (n > 8 and the
 * centroids apart), whose sides hold the range, with the least cost the
 * brute force finds. */
START_TEST(sah_split_is_the_least_binned_cost)
{
	static const uint32_t ns[] = { 12, 40, 300, 2000, 5000 };
	static const enum order os[] = { SHUFFLED, SORTED, HALF_COINCIDENT };
	uint32_t n = ns[_i % 5];
	struct bvh_prim *p = prims(n, 9300 + (uint64_t)_i, os[_i / 5]);
	struct range r = { .begin = 0, .end = n }, l, rr;
	float least = least_binned_cost(p, n), cost;

	box_empty(&r.bounds);
	for (uint32_t i = 0; i < n; i++)
		box_grow_prim(&r.bounds, &p[i]);
	ck_assert_int_eq(bvh_split_sah(p, &r, &l, &rr), 1);
	ck_assert_uint_eq(l.begin, 0);
	ck_assert_uint_eq(l.end, rr.begin);
	ck_assert_uint_eq(rr.end, n);
	ck_assert_uint_gt(l.end, 0);
	ck_assert_uint_lt(l.end, n);
	cost = box_area(&l.bounds) * (float)(l.end - l.begin) +
	       box_area(&rr.bounds) * (float)(rr.end - rr.begin);
	ck_assert_msg(least < FLT_MAX, "no plane found by brute force");
	ck_assert_msg(cost == least, "split cost %.9g, least binned cost %.9g (n %u, case %d)",
		      cost, least, n, _i);
	free(p);
}
END_TEST

/* Equal costs go to the first plane in (axis, bin) order, as the tree's
 * layout depends on it: eleven unit cubes in a row along x (the planes
 * after the fifth and the sixth cost 133 each: five go left), and a 4 x 4
 * grid in the xy plane (x and y cost the same: the cut is across x). */
START_TEST(sah_ties_go_to_the_first_plane)
{
	struct bvh_prim p[16];
	struct range r = { .begin = 0 }, l, rr;
	uint32_t n = _i ? 16 : 11;

	for (uint32_t i = 0; i < n; i++) {
		float x = _i ? (float)(i % 4) : (float)i, y = _i ? (float)(i / 4) : 0;

		p[i] = (struct bvh_prim){ { x, y, 0 }, i, { x + 1, y + 1, 1 }, 0 };
	}
	r.end = n;
	box_empty(&r.bounds);
	for (uint32_t i = 0; i < n; i++)
		box_grow_prim(&r.bounds, &p[i]);
	ck_assert_int_eq(bvh_split_sah(p, &r, &l, &rr), 1);
	if (!_i) {
		ck_assert_uint_eq(l.end - l.begin, 5);
		ck_assert_float_eq(l.bounds.hi[0], 5);
	} else {
		ck_assert_uint_eq(l.end - l.begin, 8);
		ck_assert_float_eq(l.bounds.hi[0], 2);	/* cut across x */
		ck_assert_float_eq(l.bounds.hi[1], 4);
	}
}
END_TEST

static Suite *bvh_build_suite(void)
{
	Suite *s = suite_create("bvh_build");
	TCase *tc = tcase_create("structure");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, boxes_hold_their_primitives, 0, (int)(NSIZES * NORDERS));
	tcase_add_loop_test(tc, threaded_build_holds_its_primitives, 0, 2);
	tcase_add_loop_test(tc, sah_split_is_the_least_binned_cost, 0, 15);
	tcase_add_loop_test(tc, sah_ties_go_to_the_first_plane, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(bvh_build_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
