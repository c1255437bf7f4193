/* bvh.h - a 4-wide bounding volume hierarchy over triangles (internal to core/).
 *
 * Nodes are 128 bytes, structure-of-arrays over their four children, so one
 * node visit tests four boxes at once (tinybvh's and Embree's BVH4 layout).
 * A child slot is an inner node (count 0, child = node index), a leaf
 * (count > 0, child = first primitive in build order), or empty (count 0,
 * child = BVH_EMPTY, inverted box that no ray meets). Node 0 is the root.
 * Boxes are padded outwards by a relative 2^-20 so that rounding in the slab
 * test can never cull a box that a ray touches (see bvh.c).
 */
#ifndef CORE_BVH_H
#define CORE_BVH_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "vec.h"

#define BVH_EMPTY UINT32_MAX
#define BVH_LEAF_MAX 8

struct bvh4_node {
	float lo[3][4];		/* lo[axis][child] */
	float hi[3][4];
	uint32_t child[4];
	uint32_t count[4];
};

struct bvh {
	struct bvh4_node *nodes;
	size_t nnodes;
	vec3 lo, hi;		/* root bounds (padded) */
};

/*
 * Build over n primitives given by their boxes (lo[i], hi[i]). On success
 * *order (malloc'd, n entries) lists the primitives in leaf order: leaves
 * refer to ranges of it. n >= 1. CORE_ENOMEM possible. 
 */
enum core_result bvh_build(const vec3 *lo, const vec3 *hi, size_t n, struct bvh *out,
			   uint32_t **order);
void bvh_release(struct bvh *b);

#endif
