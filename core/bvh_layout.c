/* bvh_layout.c - where the leaves' primitives lie in memory.
 *
 * The builder leaves the primitives in depth-first order, each leaf a range
 * starting wherever the previous one ended. The mesh stores them in blocks
 * of four and its leaf test reads two blocks (eight lanes) at a time from the
 * block that holds a leaf's first primitive (raycast_kern.h), so a leaf of
 * six at offset 3 in its block spans three blocks and takes two passes where
 * one would do at offset 0, 1 or 2. No leaf depends on where it lies: its ref
 * names its first primitive. So the leaves are laid out again, each taking
 * the place that lets it fit the fewest passes, chosen among the next few in
 * depth-first order so that neighbours stay neighbours in memory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"

/* How far ahead a leaf may be taken out of depth-first order. */
#define LAYOUT_WINDOW 16
#define LAYOUT_BLOCK_MAX 64

struct leaf {
	uint32_t first, count;
	uint32_t node;
	uint32_t slot;
};

/* 0: count primitives at offset off in their block fit the fewest blocks
 * there can be (also for a kernel reading one block at a time); 1: they fit
 * the fewest passes of pass lanes (block-aligned); 2: neither. */
static int cost(uint32_t off, uint32_t count, unsigned block, unsigned pass)
{
	uint32_t least = (count + block - 1) / block;

	if ((off + count + block - 1) / block == least)
		return 0;
	if ((off + count + pass - 1) / pass == (count + pass - 1) / pass)
		return 1;
	return 2;
}

int bvh_layout_leaves(struct bvh *b, size_t n, unsigned block, unsigned pass, uint32_t *to)
{
	unsigned char tab[LAYOUT_BLOCK_MAX][BVH_LEAF_MAX + 1];	/* cost by offset, count */
	struct leaf *all, *lv;
	unsigned char *done;
	size_t nl = 0, k, head = 0, at = 0, skipped = 0;
	int rc = -1;

	if (block == 0 || block > LAYOUT_BLOCK_MAX || pass < block || pass % block || n == 0 ||
	    n > UINT32_MAX)
		return -1;
	for (unsigned off = 0; off < block; off++)
		for (uint32_t c = 1; c <= BVH_LEAF_MAX; c++)
			tab[off][c] = (unsigned char)cost(off, c, block, pass);
	for (k = 0; k < b->nnodes; k++)
		for (int s = 0; s < BVH_WIDTH; s++)
			nl += bvh_ref_count(b->nodes[k].ref[s]) != 0;
	all = malloc(2 * nl * sizeof(*all) + 1);
	done = calloc(nl + 1, 1);
	if (!all || !done)
		goto out;
	lv = all + nl;
	/* the leaves in memory (depth-first) order, to serving first as
	 * scratch: to[i] is the leaf whose first primitive is i */
	memset(to, 0xff, n * sizeof(*to));
	nl = 0;
	for (k = 0; k < b->nnodes; k++)
		for (int s = 0; s < BVH_WIDTH; s++) {
			uint32_t ref = b->nodes[k].ref[s];

			if (!bvh_ref_count(ref))
				continue;
			if (bvh_ref_index(ref) >= n || to[bvh_ref_index(ref)] != UINT32_MAX ||
			    bvh_ref_count(ref) > BVH_LEAF_MAX)
				goto out;	/* not the builder's leaves: cannot happen */
			to[bvh_ref_index(ref)] = (uint32_t)nl;
			all[nl++] = (struct leaf){ bvh_ref_index(ref), bvh_ref_count(ref),
						   (uint32_t)k, (uint32_t)s };
		}
	for (k = 0; k < nl; k++) {
		if (at >= n || to[at] == UINT32_MAX || all[to[at]].count > n - at)
			goto out;	/* as above */
		lv[k] = all[to[at]];
		at += lv[k].count;
	}
	if (at != n)
		goto out;
	at = 0;

	while (head < nl) {
		size_t pick = head, seen = 0;
		int best = 3;

		/* the first of the next LAYOUT_WINDOW leaves not yet placed with
		 * the lowest cost here; the oldest once it has waited a window */
		for (k = head; k < nl && seen < LAYOUT_WINDOW; k++) {
			int c;

			if (done[k])
				continue;
			seen++;
			c = tab[at % block][lv[k].count];
			if (c < best) {
				best = c;
				pick = k;
				if (c == 0)
					break;
			}
		}
		if (pick != head && ++skipped > LAYOUT_WINDOW)
			pick = head;
		if (pick == head)
			skipped = 0;
		for (uint32_t i = 0; i < lv[pick].count; i++)
			to[lv[pick].first + i] = (uint32_t)(at + i);
		b->nodes[lv[pick].node].ref[lv[pick].slot] =
			(uint32_t)at << BVH_REF_SHIFT | lv[pick].count;
		at += lv[pick].count;
		done[pick] = 1;
		while (head < nl && done[head])
			head++;
	}
	rc = 0;
out:
	free(done);
	free(all);
	return rc;
}
