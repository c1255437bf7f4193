/* bvh_split.h - the BVH builder's boxes, ranges and split functions,
 * shared by bvh.c (the tree, threads) and bvh_split.c (SAH, median).
 * Internal to core/. */
#ifndef CORE_BVH_SPLIT_H
#define CORE_BVH_SPLIT_H

#include <float.h>

#include "bvh.h"
#include "vec.h"	/* MINF/MAXF: boxes hold no NaN */


struct box {
	float lo[3], hi[3];
};


struct range {
	uint32_t begin, end;
	struct box bounds;	/* of the primitives' boxes */
	int final;		/* do not split further */
};

static inline void box_empty(struct box *b)
{
	for (int k = 0; k < 3; k++) {
		b->lo[k] = FLT_MAX;
		b->hi[k] = -FLT_MAX;
	}
}

static inline void box_grow_prim(struct box *b, const struct bvh_prim *p)
{
	for (int k = 0; k < 3; k++) {
		b->lo[k] = MINF(b->lo[k], p->lo[k]);
		b->hi[k] = MAXF(b->hi[k], p->hi[k]);
	}
}

static inline void box_merge(struct box *b, const struct box *o)
{
	for (int k = 0; k < 3; k++) {
		b->lo[k] = MINF(b->lo[k], o->lo[k]);
		b->hi[k] = MAXF(b->hi[k], o->hi[k]);
	}
}

static inline float box_area(const struct box *b)
{
	float dx = b->hi[0] - b->lo[0], dy = b->hi[1] - b->lo[1], dz = b->hi[2] - b->lo[2];

	if (dx < 0 || dy < 0 || dz < 0)
		return 0;
	return dx * dy + dy * dz + dz * dx;
}

/*
 * Split range r of p in two by binned SAH, reordering p[r->begin, r->end)
 * so that *l and *rr are its halves. Returns 0 (p untouched) when r should
 * stay a leaf: a single primitive, or at most BVH_LEAF_MAX of them and a
 * split does not pay.
 */
int bvh_split_sah(struct bvh_prim *p, const struct range *r, struct range *l, struct range *rr);

/* Split r (more than one primitive) at its object median on the widest
 * centroid axis: each half holds at most ceil(n / 2) primitives. */
void bvh_split_median(struct bvh_prim *p, const struct range *r, struct range *l,
		      struct range *rr);

#endif
