/* bvh_split.c - how the BVH builder splits a range of primitives in two:
 * binned SAH (Wald 2007, "On fast Construction of SAH-based Bounding Volume
 * Hierarchies"; 16 bins on each axis, one axis for large ranges) and the
 * object median that bounds the depth (bvh.h). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>	/* SSE2 (and SSE) */
#endif

#include "bvh_split.h"

#define NBINS 16
#define BIG_RANGE 4096	/* above this, bin one axis only */
/* The cost of visiting a node relative to one triangle test. With 8-wide
 * nodes and leaves tested eight lanes at once, 5 keeps leaves near 6
 * triangles and every harness mesh at or under 71.3 bytes per triangle
 * (bunny 71.2, level 69.0, bunny_sub4 68.7); 2 doubles the node count
 * (87 B/tri), and 3 to 6 cost the same instructions per ray within 2%
 * (callgrind on the harness's level and bunny_sub4). */
#define COST_TRAVERSAL 5.0f

/* Twice the centroid along axis k (no halving needed for binning). */
static inline float cen2(const struct bvh_prim *p, int k)
{
	return p->lo[k] + p->hi[k];
}

/* The bin of doubled centroid c: (c - cmin) * scale clamped to [0, nb - 1]
 * in float, then truncated (bins_fill3 does the same on four lanes; a NaN,
 * which only an axis that is not binned can produce, goes to bin 0). */
static inline int bin_of(float c, float cmin, float scale, int nb)
{
	float x = (c - cmin) * scale, top = (float)(nb - 1);

	x = x > 0 ? x : 0;
	return (int)(x < top ? x : top);
}

/* Per-axis bins: boxes as 4-wide lo/hi for SSE, counts as cnt[bin][axis]
 * (the sweep adds the three axes' counts in one vector). */
struct bins {
	float lo[3][NBINS][4], hi[3][NBINS][4];
	uint32_t cnt[NBINS][4];
};

static void bins_clear(struct bins *bn, int nb)
{
	/* lane 3 too: sweep_axes reads it (and never uses it) */
	memset(bn->cnt, 0, (size_t)nb * sizeof(bn->cnt[0]));
	for (int k = 0; k < 3; k++) {
		for (int b = 0; b < nb; b++) {
			for (int q = 0; q < 4; q++) {
				bn->lo[k][b][q] = FLT_MAX;
				bn->hi[k][b][q] = -FLT_MAX;
			}
		}
	}
}

/* Primitive p into bin b of axis k. */
static inline void bin_add(struct bins *bn, int k, int b, const struct bvh_prim *p)
{
	bn->cnt[b][k]++;
#if defined(__SSE2__)
	_mm_storeu_ps(bn->lo[k][b], _mm_min_ps(_mm_loadu_ps(bn->lo[k][b]), _mm_loadu_ps(p->lo)));
	_mm_storeu_ps(bn->hi[k][b], _mm_max_ps(_mm_loadu_ps(bn->hi[k][b]), _mm_loadu_ps(p->hi)));
#else
	for (int q = 0; q < 3; q++) {
		bn->lo[k][b][q] = MINF(bn->lo[k][b][q], p->lo[q]);
		bn->hi[k][b][q] = MAXF(bn->hi[k][b][q], p->hi[q]);
	}
#endif
}

/* Bin p[0, n) on axis k only. */
static void bins_fill1(struct bins *bn, const struct bvh_prim *p, uint32_t n, int k, float cmin,
		       float scale, int nb)
{
	for (uint32_t i = 0; i < n; i++)
		bin_add(bn, k, bin_of(cen2(&p[i], k), cmin, scale, nb), &p[i]);
}

/* Bin p[0, n) on all three axes (an axis of scale 0 fills its bin 0 only,
 * which nothing reads): the three bins of a primitive in one vector. */
static void bins_fill3(struct bins *bn, const struct bvh_prim *p, uint32_t n, const float cmin[3],
		       const float scale[3], int nb)
{
#if defined(__SSE2__)
	const __m128 cm = _mm_setr_ps(cmin[0], cmin[1], cmin[2], 0);
	const __m128 sc = _mm_setr_ps(scale[0], scale[1], scale[2], 0);
	const __m128 top = _mm_set1_ps((float)(nb - 1)), zero = _mm_setzero_ps();
	const __m128 xyz = _mm_castsi128_ps(_mm_setr_epi32(-1, -1, -1, 0));

	for (uint32_t i = 0; i < n; i++) {
		/* lane 3 (the id's bits over pad: a subnormal float) cleared
		 * before the product: arithmetic on subnormals is slow here
		 * (a bunny build took 0.82 ms with it, 0.64 without) */
		__m128 c = _mm_and_ps(_mm_add_ps(_mm_loadu_ps(p[i].lo), _mm_loadu_ps(p[i].hi)), xyz);
		/* max(x, 0) first: a NaN x (inf * 0) becomes 0 */
		__m128 x = _mm_min_ps(_mm_max_ps(_mm_mul_ps(_mm_sub_ps(c, cm), sc), zero), top);
		__m128i b = _mm_cvttps_epi32(x);

		bin_add(bn, 0, _mm_cvtsi128_si32(b), &p[i]);
		bin_add(bn, 1, _mm_cvtsi128_si32(_mm_shuffle_epi32(b, 1)), &p[i]);
		bin_add(bn, 2, _mm_cvtsi128_si32(_mm_shuffle_epi32(b, 2)), &p[i]);
	}
#else
	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			bin_add(bn, k, bin_of(cen2(&p[i], k), cmin[k], scale[k], nb), &p[i]);
#endif
}

/* The bounds of p[0, n)'s doubled centroids. */
static void centroid_bounds(const struct bvh_prim *p, uint32_t n, float cmin[3], float cmax[3])
{
#if defined(__SSE2__)
	__m128 lo = _mm_set1_ps(FLT_MAX), hi = _mm_set1_ps(-FLT_MAX);
	float l[4], h[4];

	for (uint32_t i = 0; i < n; i++) {
		__m128 c = _mm_add_ps(_mm_loadu_ps(p[i].lo), _mm_loadu_ps(p[i].hi));

		lo = _mm_min_ps(lo, c);
		hi = _mm_max_ps(hi, c);
	}
	_mm_storeu_ps(l, lo);
	_mm_storeu_ps(h, hi);
	memcpy(cmin, l, 3 * sizeof(float));
	memcpy(cmax, h, 3 * sizeof(float));
#else
	for (int k = 0; k < 3; k++) {
		cmin[k] = FLT_MAX;
		cmax[k] = -FLT_MAX;
	}
	for (uint32_t i = 0; i < n; i++) {
		for (int k = 0; k < 3; k++) {
			cmin[k] = MINF(cmin[k], cen2(&p[i], k));
			cmax[k] = MAXF(cmax[k], cen2(&p[i], k));
		}
	}
#endif
}

/* A bin's box as four lanes (the fourth is not a coordinate). */
#if defined(__SSE2__)
typedef __m128 box4;
#define B4_LOAD _mm_loadu_ps
#define B4_MIN _mm_min_ps
#define B4_MAX _mm_max_ps
#define B4_SET1 _mm_set1_ps

static inline void box4_store(struct box *b, box4 lo, box4 hi)
{
	float l[4], h[4];

	_mm_storeu_ps(l, lo);
	_mm_storeu_ps(h, hi);
	memcpy(b->lo, l, sizeof(b->lo));
	memcpy(b->hi, h, sizeof(b->hi));
}
#else
typedef struct {
	float v[3];
} box4;

static inline box4 b4_load(const float *p)
{
	box4 b;

	memcpy(b.v, p, sizeof(b.v));
	return b;
}

static inline box4 b4_min(box4 a, box4 b)
{
	for (int k = 0; k < 3; k++)
		a.v[k] = MINF(a.v[k], b.v[k]);
	return a;
}

static inline box4 b4_max(box4 a, box4 b)
{
	for (int k = 0; k < 3; k++)
		a.v[k] = MAXF(a.v[k], b.v[k]);
	return a;
}

static inline box4 b4_set1(float x)
{
	return (box4){ { x, x, x } };
}
#define B4_LOAD b4_load
#define B4_MIN b4_min
#define B4_MAX b4_max
#define B4_SET1 b4_set1

static inline void box4_store(struct box *b, box4 lo, box4 hi)
{
	memcpy(b->lo, lo.v, sizeof(b->lo));
	memcpy(b->hi, hi.v, sizeof(b->hi));
}

/* box_area of [lo, hi] (sweep_axis, without SSE2; sweep_axes has area3) */
static inline float area4(box4 lo, box4 hi)
{
	struct box b;

	box4_store(&b, lo, hi);
	return box_area(&b);
}
#endif

#if !defined(__SSE2__)
/*
 * The SAH cost of each plane between bins of axis k (right to left the
 * areas and counts of the right sides, then left to right the left sides'
 * and the costs); a cost below *best_cost becomes the best (axis, bin).
 */
static void sweep_axis(const struct bins *bn, int k, int nb, float *best_cost, int *best_axis,
		       int *best_bin)
{
	float right_area[NBINS];
	uint32_t right_cnt[NBINS], nr = 0, nl = 0;
	box4 lo = B4_SET1(FLT_MAX), hi = B4_SET1(-FLT_MAX);

	for (int b = nb - 1; b > 0; b--) {
		lo = B4_MIN(lo, B4_LOAD(bn->lo[k][b]));
		hi = B4_MAX(hi, B4_LOAD(bn->hi[k][b]));
		nr += bn->cnt[b][k];
		right_area[b] = area4(lo, hi);
		right_cnt[b] = nr;
	}
	lo = B4_SET1(FLT_MAX);
	hi = B4_SET1(-FLT_MAX);
	for (int b = 0; b < nb - 1; b++) {
		float cost;

		lo = B4_MIN(lo, B4_LOAD(bn->lo[k][b]));
		hi = B4_MAX(hi, B4_LOAD(bn->hi[k][b]));
		nl += bn->cnt[b][k];
		if (nl == 0 || right_cnt[b + 1] == 0)
			continue;
		cost = area4(lo, hi) * nl + right_area[b + 1] * right_cnt[b + 1];
		if (cost < *best_cost) {
			*best_cost = cost;
			*best_axis = k;
			*best_bin = b;
		}
	}
}

#endif

#if defined(__SSE2__)
/* The areas (box_area's products and sums in the same order, so the same
 * floats) of three boxes given by their extents d[k] = hi - lo, one box per
 * lane: 0 where an extent is negative (an empty box). */
static inline __m128 area3(__m128 d0, __m128 d1, __m128 d2)
{
	/* transpose: dx = (d0.x, d1.x, d2.x, -), dy, dz; d2's fourth lane
	 * (what the bins' fourth lanes leave: a subnormal, slow in the
	 * products, as in bins_fill3) cleared first: dy's and dz's 0 */
	__m128 e2 = _mm_and_ps(d2, _mm_castsi128_ps(_mm_setr_epi32(-1, -1, -1, 0)));
	__m128 t0 = _mm_unpacklo_ps(d0, d1), t1 = _mm_unpackhi_ps(d0, d1);
	__m128 dx = _mm_movelh_ps(t0, e2);
	__m128 dy = _mm_shuffle_ps(t0, e2, _MM_SHUFFLE(3, 1, 3, 2));
	__m128 dz = _mm_movelh_ps(t1, _mm_shuffle_ps(e2, e2, _MM_SHUFFLE(3, 3, 3, 2)));
	__m128 zero = _mm_setzero_ps();
	__m128 neg = _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(dx, zero), _mm_cmplt_ps(dy, zero)),
			       _mm_cmplt_ps(dz, zero));
	__m128 a = _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dy), _mm_mul_ps(dy, dz)),
			      _mm_mul_ps(dz, dx));

	return _mm_andnot_ps(neg, a);
}

/*
 * sweep_axis for the three axes at once, one per lane (half the
 * instructions: the sweep was a quarter of a bunny build's, callgrind). The costs
 * are the same floats, and the best is chosen in sweep_axis's order (axis,
 * then bin; the first of equal costs), skipping axes whose scale is 0.
 */
static void sweep_axes(const struct bins *bn, int nb, const float scale[3], float *best_cost,
		       int *best_axis, int *best_bin)
{
	__m128 right_area[NBINS], lo[3], hi[3], bc = _mm_set1_ps(FLT_MAX);
	__m128i right_cnt[NBINS], n = _mm_setzero_si128(), bb = _mm_setzero_si128();
	float c[4];
	int32_t at[4];
	int k, b;

	for (k = 0; k < 3; k++) {
		lo[k] = _mm_set1_ps(FLT_MAX);
		hi[k] = _mm_set1_ps(-FLT_MAX);
	}
	for (b = nb - 1; b > 0; b--) {
		for (k = 0; k < 3; k++) {
			lo[k] = _mm_min_ps(lo[k], _mm_loadu_ps(bn->lo[k][b]));
			hi[k] = _mm_max_ps(hi[k], _mm_loadu_ps(bn->hi[k][b]));
		}
		n = _mm_add_epi32(n, _mm_loadu_si128((const __m128i *)bn->cnt[b]));
		right_area[b] = area3(_mm_sub_ps(hi[0], lo[0]), _mm_sub_ps(hi[1], lo[1]),
				      _mm_sub_ps(hi[2], lo[2]));
		right_cnt[b] = n;
	}
	n = _mm_setzero_si128();
	for (k = 0; k < 3; k++) {
		lo[k] = _mm_set1_ps(FLT_MAX);
		hi[k] = _mm_set1_ps(-FLT_MAX);
	}
	/* per axis, the least cost and its first bin (a strict <, as
	 * sweep_axis: the first of equal costs stays) */
	for (b = 0; b < nb - 1; b++) {
		__m128 a, cost, better;
		__m128i none;

		for (k = 0; k < 3; k++) {
			lo[k] = _mm_min_ps(lo[k], _mm_loadu_ps(bn->lo[k][b]));
			hi[k] = _mm_max_ps(hi[k], _mm_loadu_ps(bn->hi[k][b]));
		}
		n = _mm_add_epi32(n, _mm_loadu_si128((const __m128i *)bn->cnt[b]));
		a = area3(_mm_sub_ps(hi[0], lo[0]), _mm_sub_ps(hi[1], lo[1]),
			  _mm_sub_ps(hi[2], lo[2]));
		/* counts < 2^28: converted as C converts them */
		cost = _mm_add_ps(_mm_mul_ps(a, _mm_cvtepi32_ps(n)),
				  _mm_mul_ps(right_area[b + 1], _mm_cvtepi32_ps(right_cnt[b + 1])));
		none = _mm_or_si128(_mm_cmpeq_epi32(n, _mm_setzero_si128()),
				    _mm_cmpeq_epi32(right_cnt[b + 1], _mm_setzero_si128()));
		better = _mm_andnot_ps(_mm_castsi128_ps(none), _mm_cmplt_ps(cost, bc));
		bc = _mm_or_ps(_mm_and_ps(better, cost), _mm_andnot_ps(better, bc));
		bb = _mm_or_si128(_mm_and_si128(_mm_castps_si128(better), _mm_set1_epi32(b)),
				  _mm_andnot_si128(_mm_castps_si128(better), bb));
	}
	_mm_storeu_ps(c, bc);
	_mm_storeu_si128((__m128i *)at, bb);
	for (k = 0; k < 3; k++) {
		if (scale[k] != 0 && c[k] < *best_cost) {
			*best_cost = c[k];
			*best_axis = k;
			*best_bin = at[k];
		}
	}
}
#endif

/* The boxes of the two sides of the plane after bin b of axis k. */
static void best_boxes(const struct bins *bn, int k, int b, int nb, struct box *left,
		       struct box *right)
{
	box4 lo = B4_SET1(FLT_MAX), hi = B4_SET1(-FLT_MAX);

	for (int i = 0; i <= b; i++) {
		lo = B4_MIN(lo, B4_LOAD(bn->lo[k][i]));
		hi = B4_MAX(hi, B4_LOAD(bn->hi[k][i]));
	}
	box4_store(left, lo, hi);
	lo = B4_SET1(FLT_MAX);
	hi = B4_SET1(-FLT_MAX);
	for (int i = nb - 1; i > b; i--) {
		lo = B4_MIN(lo, B4_LOAD(bn->lo[k][i]));
		hi = B4_MAX(hi, B4_LOAD(bn->hi[k][i]));
	}
	box4_store(right, lo, hi);
}

/* r cut at mid into l = [begin, mid) and rr = [mid, end), each with the
 * bounds of its primitives. */
static void split_at(const struct bvh_prim *p, const struct range *r, uint32_t mid,
		     struct range *l, struct range *rr)
{
	uint32_t i;

	l->begin = r->begin;
	l->end = mid;
	rr->begin = mid;
	rr->end = r->end;
	box_empty(&l->bounds);
	box_empty(&rr->bounds);
	for (i = l->begin; i < l->end; i++)
		box_grow_prim(&l->bounds, &p[i]);
	for (i = rr->begin; i < rr->end; i++)
		box_grow_prim(&rr->bounds, &p[i]);
	l->final = rr->final = 0;
}

/* 1 when p goes right of the plane after bin best (of nb on axis k). */
static inline int goes_right(const struct bvh_prim *p, int k, float c0, float s0, int nb,
			     int best)
{
	return bin_of(cen2(p, k), c0, s0, nb) > best;
}

static inline void prim_swap(struct bvh_prim *x, struct bvh_prim *y)
{
	struct bvh_prim t = *x;

	*x = *y;
	*y = t;
}

#define PART_BLOCK 64

/*
 * Reorder p[0, n) so that the primitives whose centroid bin (axis k) is at
 * most best come first; returns how many. Block partition (Edelkamp and
 * Weiss, "BlockQuicksort", 2016): a block at each end is scanned without a
 * branch on the side, the offsets of the misplaced primitives noted, then
 * swapped in pairs. Which side a primitive takes is as good as random, so a
 * branch on it would mispredict half the time; a swap at every step
 * (Lomuto) chained every step to the one before through memory (1.6 to 2.2
 * times slower on a million primitives). The middle, under two blocks, is
 * done by Lomuto. The order within a side is not kept: the bins, and so
 * every split, do not depend on it.
 */
static uint32_t partition(struct bvh_prim *p, uint32_t n, int k, float c0, float s0, int nb,
			  int best)
{
	uint8_t offl[PART_BLOCK], offr[PART_BLOCK];
	uint32_t l = 0, r = n, a;
	int nl = 0, nr = 0, sl = 0, sr = 0;

	/* [0, l) goes left, [r, n) right; a block's offsets are all swapped
	 * before its end moves past it */
	while (r - l > 2 * PART_BLOCK) {
		int m;

		if (!nl) {
			sl = 0;
			for (int i = 0; i < PART_BLOCK; i++) {
				offl[nl] = (uint8_t)i;
				nl += goes_right(&p[l + i], k, c0, s0, nb, best);
			}
		}
		if (!nr) {
			sr = 0;
			for (int i = 0; i < PART_BLOCK; i++) {
				offr[nr] = (uint8_t)i;
				nr += !goes_right(&p[r - 1 - i], k, c0, s0, nb, best);
			}
		}
		m = nl < nr ? nl : nr;
		for (int i = 0; i < m; i++)
			prim_swap(&p[l + offl[sl + i]], &p[r - 1 - offr[sr + i]]);
		nl -= m;
		nr -= m;
		sl += m;
		sr += m;
		if (!nl)
			l += PART_BLOCK;
		if (!nr)
			r -= PART_BLOCK;
	}
	/* the middle: Lomuto, [l, a) going left */
	a = l;
	for (uint32_t j = l; j < r; j++) {
		struct bvh_prim t = p[j];

		p[j] = p[a];
		p[a] = t;
		a += !goes_right(&t, k, c0, s0, nb, best);
	}
	return a;
}

/*
 * Split r into *l and *rr by binned SAH. Returns 0 when r should stay a
 * leaf (too few primitives, or a split does not pay and r fits a leaf).
 */
int bvh_split_sah(struct bvh_prim *p, const struct range *r, struct range *l,
		  struct range *rr)
{
	uint32_t n = r->end - r->begin;
	float cmin[3], cmax[3], scale[3];
	int best_axis = -1, best_bin = 0, k, w = 0;
	float best_cost = FLT_MAX;
	struct box bl_best, br_best;
	struct bvh_prim *base = p + r->begin;
	struct bins bn;
	int nb = n < NBINS ? (int)n : NBINS;	/* small ranges: fewer bins */

	/* a leaf either way: with n <= COST_TRAVERSAL, the cost of the leaf,
	 * area * n, is at most COST_TRAVERSAL * area <= the split's cost
	 * (roundings keep that order), and no split is needed to fit a leaf */
	if (n <= 1 || (n <= BVH_LEAF_MAX && (float)n <= COST_TRAVERSAL))
		return 0;
	centroid_bounds(base, n, cmin, cmax);
	for (k = 0; k < 3; k++) {
		float ext = cmax[k] - cmin[k];

		scale[k] = ext > 0 ? (nb * (1 - 1e-6f)) / ext : 0;
	}
	if (n > BIG_RANGE) {
		/* large ranges: bin only the widest centroid axis (a third of
		 * the work where most of it is; the SAH still picks the plane) */
		for (k = 1; k < 3; k++)
			if (cmax[k] - cmin[k] > cmax[w] - cmin[w])
				w = k;
		for (k = 0; k < 3; k++)
			if (k != w)
				scale[k] = 0;
	}
	bins_clear(&bn, nb);
	if (n > BIG_RANGE)
		bins_fill1(&bn, base, n, w, cmin[w], scale[w], nb);
	else
		bins_fill3(&bn, base, n, cmin, scale, nb);
#if defined(__SSE2__)
	sweep_axes(&bn, nb, scale, &best_cost, &best_axis, &best_bin);
#else
	for (k = 0; k < 3; k++)
		if (scale[k] != 0)
			sweep_axis(&bn, k, nb, &best_cost, &best_axis, &best_bin);
#endif
	if (best_axis < 0) {
		/* all centroids coincide: split by count if it cannot be one leaf */
		uint32_t mid;

		if (n <= BVH_LEAF_MAX)
			return 0;
		mid = r->begin + n / 2;
		split_at(p, r, mid, l, rr);
		return 1;
	}
	{
		float area = box_area(&r->bounds);
		float leaf_cost = area * n;
		float split_cost = COST_TRAVERSAL * area + best_cost;

		if (n <= BVH_LEAF_MAX && leaf_cost <= split_cost)
			return 0;
	}
	{
		uint32_t a = partition(base, n, best_axis, cmin[best_axis], scale[best_axis], nb,
				       best_bin);

		best_boxes(&bn, best_axis, best_bin, nb, &bl_best, &br_best);
		l->begin = r->begin;
		l->end = r->begin + a;
		rr->begin = r->begin + a;
		rr->end = r->end;
		l->bounds = bl_best;
		rr->bounds = br_best;
		l->final = rr->final = 0;
	}
	return 1;
}

/* Reorder p[0, n) so that p[k] has the k-th smallest centroid on axis and
 * none before it is larger, none after it smaller (Hoare's quickselect). */
static void select_nth(struct bvh_prim *p, int64_t n, int64_t k, int axis)
{
	int64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		float pivot = cen2(&p[lo + (hi - lo) / 2], axis);
		int64_t i = lo, j = hi;

		while (i <= j) {
			while (cen2(&p[i], axis) < pivot)
				i++;
			while (cen2(&p[j], axis) > pivot)
				j--;
			if (i <= j) {
				struct bvh_prim t = p[i];

				p[i++] = p[j];
				p[j--] = t;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
}

/* Split r (more than one primitive) at its object median on the widest
 * centroid axis: each half holds at most ceil(n / 2) primitives. */
void bvh_split_median(struct bvh_prim *p, const struct range *r, struct range *l,
		      struct range *rr)
{
	uint32_t n = r->end - r->begin, mid = n / 2;
	struct bvh_prim *base = p + r->begin;
	float cmin[3], cmax[3];
	int w = 0;

	centroid_bounds(base, n, cmin, cmax);
	for (int k = 1; k < 3; k++)
		if (cmax[k] - cmin[k] > cmax[w] - cmin[w])
			w = k;
	select_nth(base, n, mid, w);
	split_at(p, r, r->begin + mid, l, rr);
}
