/* bvh.h - an 8-wide bounding volume hierarchy over triangles (internal to core/).
 *
 * Nodes are 224 bytes, structure-of-arrays over their eight children, so one
 * node visit tests eight boxes at once with AVX2, or two halves of four with
 * SSE2 (Embree's BVH8 layout). A child slot's ref packs an index and a count
 * (bvh_ref_*): an inner node (count 0, index = node), a leaf (count 1 ..
 * BVH_LEAF_MAX, index = first primitive in build order), or empty (ref
 * BVH_EMPTY, inverted box that no ray meets). Node 0 is the root. Boxes are padded outwards by a relative 2^-20 so that
 * rounding in the slab test can never cull a box that a ray touches (see
 * bvh.c).
 *
 * Depth: no path from the root to a leaf has more than BVH_MAX_DEPTH nodes
 * (bvh_build switches to median splits before the limit, which halve the
 * primitive count at every level), so a traversal stack of
 * BVH_STACK_MAX = BVH_MAX_DEPTH * (BVH_WIDTH - 1) + 1 entries never fills.
 */
#ifndef CORE_BVH_H
#define CORE_BVH_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "vec.h"

#define BVH_WIDTH 8
#define BVH_EMPTY 0u	/* node 0 is the root, never a child */
#define BVH_REF_SHIFT 4	/* count in the low bits, index above: 2^28 of each */
#define BVH_LEAF_MAX 8
#define BVH_MAX_DEPTH 64
#define BVH_STACK_MAX (BVH_MAX_DEPTH * (BVH_WIDTH - 1) + 1)

struct bvh_node {
	float lo[3][BVH_WIDTH];		/* lo[axis][child] */
	float hi[3][BVH_WIDTH];
	uint32_t ref[BVH_WIDTH];	/* index << BVH_REF_SHIFT | count */
};

_Static_assert(sizeof(struct bvh_node) == 224, "a BVH node is 3.5 cache lines");
_Static_assert(BVH_LEAF_MAX < (1 << BVH_REF_SHIFT), "a leaf's count fits its ref");

static inline uint32_t bvh_ref_count(uint32_t ref) { return ref & ((1u << BVH_REF_SHIFT) - 1); }
static inline uint32_t bvh_ref_index(uint32_t ref) { return ref >> BVH_REF_SHIFT; }
_Static_assert(offsetof(struct bvh_node, hi) == 3 * BVH_WIDTH * sizeof(float),
	       "lo and hi are one float[6][BVH_WIDTH] (raycast picks planes by row)");

struct bvh {
	struct bvh_node *nodes;
	size_t nnodes;
	unsigned depth;		/* nodes on the longest root-to-leaf path */
	vec3 lo, hi;		/* root bounds (padded) */
};

/* A primitive as the builder takes and moves it: its box and the caller's
 * id. 32 bytes, partitioned in place so every binning pass reads memory in
 * order. */
struct bvh_prim {
	float lo[3];
	uint32_t id;
	float hi[3];
	float pad;
};

_Static_assert(sizeof(struct bvh_prim) == 32, "a builder primitive is half a line");

/*
 * Build over the n primitives p (boxes lo <= hi, no NaN), 1 <= n <= 2^28
 * (CORE_EINVAL otherwise). Reorders p into leaf order: leaves refer to
 * ranges of it, and p[i].id says which primitive is i-th. threads: how many
 * threads may share the work (1 = the caller's only; used for n >= 100000).
 * CORE_ENOMEM possible (p is then in some order, out untouched).
 */
enum core_result bvh_build(struct bvh_prim *p, size_t n, int threads, struct bvh *out);
void bvh_release(struct bvh *b);

/*
 * Lay b's leaves out again (n primitives, in the order bvh_build left them)
 * so that as few as can be cross a boundary of pass primitives (a leaf
 * test's lanes, read from the block of block primitives that holds the
 * leaf's first one: bvh_layout.c), leaving each near its depth-first place.
 * Rewrites the leaves' refs and sets to[i] to the new place of primitive i
 * (to has n entries); the tree and every leaf's primitives and their order
 * are unchanged. Returns 0, or -1 with b untouched (out of memory, or block
 * and pass not a layout: pass a multiple of block).
 */
int bvh_layout_leaves(struct bvh *b, size_t n, unsigned block, unsigned pass, uint32_t *to);

#endif
