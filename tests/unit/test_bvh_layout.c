/* test_bvh_layout.c - Check suite for core/bvh_layout.c: laying the leaves
 * out again moves primitives and leaf refs only (same tree, same boxes, every
 * leaf the same primitives in the same order, still a partition of the
 * array), cuts the leaves that straddle an eight-lane pass, and gives the
 * same layout whatever the build's threads. Ray answers over laid-out meshes
 * are checked against brute force in test_raycast_kernels. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "testgeom.h"

#define BLOCK 4
#define PASS 8

/* bvh_layout_leaves, then p moved to the places it gives: 0, or -1 (and p
 * as it was) when the layout refuses. */
static int layout(struct bvh *t, struct bvh_prim *p, size_t n, unsigned block, unsigned pass)
{
	uint32_t *to = malloc(n * sizeof(*to));
	struct bvh_prim *q = malloc(n * sizeof(*q));
	int rc;

	ck_assert_ptr_nonnull(to);
	ck_assert_ptr_nonnull(q);
	rc = bvh_layout_leaves(t, n, block, pass, to);
	if (rc == 0) {
		unsigned char *hit = calloc(n, 1);

		for (size_t i = 0; i < n; i++) {
			ck_assert_uint_lt(to[i], n);
			ck_assert_msg(!hit[to[i]], "two primitives go to %u", to[i]);
			hit[to[i]] = 1;
			q[to[i]] = p[i];
		}
		memcpy(p, q, n * sizeof(*p));
		free(hit);
	}
	free(q);
	free(to);
	return rc;
}

/* Passes of PASS lanes a leaf at first takes beyond the fewest it could. */
static int straddles(uint32_t first, uint32_t count)
{
	return (first % BLOCK + count + PASS - 1) / PASS > (count + PASS - 1) / PASS;
}

struct census {
	size_t leaves, straddling;
};

/* Every leaf's primitives in order, by (node, slot): ids[node * 8 + slot]
 * is a malloc'd copy of the leaf's ids (NULL for inner and empty slots). */
static uint32_t **leaf_ids(const struct bvh *t, const struct bvh_prim *p, size_t n,
			   struct census *c)
{
	uint32_t **ids = calloc(t->nnodes * BVH_WIDTH, sizeof(*ids));
	unsigned char *seen = calloc(n, 1);

	ck_assert_ptr_nonnull(ids);
	ck_assert_ptr_nonnull(seen);
	memset(c, 0, sizeof(*c));
	for (size_t k = 0; k < t->nnodes; k++)
		for (int s = 0; s < BVH_WIDTH; s++) {
			uint32_t ref = t->nodes[k].ref[s], cnt = bvh_ref_count(ref);
			uint32_t f = bvh_ref_index(ref);

			if (!cnt)
				continue;
			ck_assert_uint_le((size_t)f + cnt, n);
			ids[k * BVH_WIDTH + s] = malloc(cnt * sizeof(uint32_t));
			for (uint32_t i = 0; i < cnt; i++) {
				ck_assert_msg(!seen[f + i], "primitive %u in two leaves", f + i);
				seen[f + i] = 1;
				ids[k * BVH_WIDTH + s][i] = p[f + i].id;
			}
			c->leaves++;
			c->straddling += straddles(f, cnt);
		}
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(seen[i], "primitive %zu in no leaf", i);
	free(seen);
	return ids;
}

static void free_ids(uint32_t **ids, size_t slots)
{
	for (size_t k = 0; k < slots; k++)
		free(ids[k]);
	free(ids);
}

START_TEST(same_tree_same_leaves_fewer_straddles)
{
	size_t n = 40000;
	struct bvh_prim *p = random_prims(n, 7100 + (uint64_t)_i);
	struct bvh t;
	struct bvh_node *before;
	struct census c0, c1;
	uint32_t **ids0, **ids1;

	ck_assert_int_eq(bvh_build(p, n, 1, &t), CORE_OK);
	before = malloc(t.nnodes * sizeof(*before));
	ck_assert_ptr_nonnull(before);
	memcpy(before, t.nodes, t.nnodes * sizeof(*before));
	ids0 = leaf_ids(&t, p, n, &c0);

	ck_assert_int_eq(layout(&t, p, n, BLOCK, PASS), 0);
	ids1 = leaf_ids(&t, p, n, &c1);	/* still a partition of p */
	ck_assert_uint_eq(c1.leaves, c0.leaves);
	for (size_t k = 0; k < t.nnodes; k++) {
		/* boxes and inner refs untouched; a leaf keeps its count */
		ck_assert(!memcmp(before[k].lo, t.nodes[k].lo, sizeof(before[k].lo)));
		ck_assert(!memcmp(before[k].hi, t.nodes[k].hi, sizeof(before[k].hi)));
		for (int s = 0; s < BVH_WIDTH; s++) {
			uint32_t a = before[k].ref[s], b = t.nodes[k].ref[s];

			ck_assert_uint_eq(bvh_ref_count(a), bvh_ref_count(b));
			if (!bvh_ref_count(a)) {
				ck_assert_uint_eq(a, b);
				continue;
			}
			ck_assert(!memcmp(ids0[k * BVH_WIDTH + s], ids1[k * BVH_WIDTH + s],
					  bvh_ref_count(a) * sizeof(uint32_t)));
		}
	}
	/* the builder's order straddles often; the layout hardly ever */
	ck_assert_uint_gt(c0.straddling, c0.leaves / 10);
	ck_assert_msg(c1.straddling * 20 <= c1.leaves, "%zu of %zu leaves still straddle",
		      c1.straddling, c1.leaves);
	free_ids(ids0, t.nnodes * BVH_WIDTH);
	free_ids(ids1, t.nnodes * BVH_WIDTH);
	free(before);
	bvh_release(&t);
	free(p);
}
END_TEST

START_TEST(same_layout_whatever_the_threads)
{
	size_t n = 150000;
	struct bvh_prim *a = random_prims(n, 7200), *b = malloc(sizeof(*b) * n);
	struct bvh ta, tb;

	ck_assert_ptr_nonnull(b);
	memcpy(b, a, sizeof(*a) * n);
	ck_assert_int_eq(bvh_build(a, n, 1, &ta), CORE_OK);
	ck_assert_int_eq(bvh_build(b, n, 4, &tb), CORE_OK);
	ck_assert_int_eq(layout(&ta, a, n, BLOCK, PASS), 0);
	ck_assert_int_eq(layout(&tb, b, n, BLOCK, PASS), 0);
	ck_assert_uint_eq(ta.nnodes, tb.nnodes);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(a[i].id, b[i].id);
	bvh_release(&ta);
	bvh_release(&tb);
	free(a);
	free(b);
}
END_TEST

START_TEST(small_trees_and_bad_shapes)
{
	/* one primitive (the root a leaf), a few, and pass/block shapes the
	 * layout refuses (nothing moves) */
	size_t sizes[] = { 1, 2, 5, 9, 33 };

	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		size_t n = sizes[z];
		struct bvh_prim *p = random_prims(n, 7300 + n), *q = malloc(sizeof(*q) * n);
		struct bvh t;
		struct census c;
		uint32_t **ids;
		uint32_t ref0;

		ck_assert_int_eq(bvh_build(p, n, 1, &t), CORE_OK);
		memcpy(q, p, sizeof(*p) * n);
		ref0 = t.nodes[0].ref[0];
		ck_assert_int_eq(layout(&t, p, n, 0, PASS), -1);
		ck_assert_int_eq(layout(&t, p, n, BLOCK, 6), -1);
		ck_assert_int_eq(layout(&t, p, n, 8, 4), -1);
		ck_assert(!memcmp(p, q, sizeof(*p) * n));
		ck_assert_uint_eq(t.nodes[0].ref[0], ref0);
		ck_assert_int_eq(layout(&t, p, n, BLOCK, PASS), 0);
		ids = leaf_ids(&t, p, n, &c);
		ck_assert_uint_eq(c.straddling, 0);
		free_ids(ids, t.nnodes * BVH_WIDTH);
		bvh_release(&t);
		free(p);
		free(q);
	}
}
END_TEST

static Suite *layout_suite(void)
{
	Suite *s = suite_create("bvh_layout");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, same_tree_same_leaves_fewer_straddles, 0, 4);
	tcase_add_test(tc, same_layout_whatever_the_threads);
	tcase_add_test(tc, small_trees_and_bad_shapes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(layout_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
