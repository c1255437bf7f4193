/* boxscan.c - the slab test of tlas.c over boxes kept as planes, eight
 * boxes per step (see boxscan.h). Each lane does what tlas_box_entry does:
 * entry 0 and exit tmax, then per axis the near and far planes picked by
 * the direction's sign, t = (plane - o) * inv in double, tin raised by
 * "t0 > tin" and tout lowered by "t1 < tout" (a NaN changes neither), an
 * axis with a zero direction tested by containment. tlas_box_entry returns
 * early once tin > tout; tin only grows and tout only shrinks, so testing
 * once after the three axes answers the same. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

#include "boxscan.h"

size_t box_planes_bytes(size_t n)
{
	size_t stride = (n + 7) / 8 * 8 + 8;

	return stride > SIZE_MAX / 6 / sizeof(float) ? 0 : 6 * stride * sizeof(float);
}

void box_planes_init_at(struct box_planes *b, size_t n, float *mem)
{
	size_t stride = box_planes_bytes(n) / 6 / sizeof(float), i;

	b->p = mem;
	/* empty boxes (lo above hi) everywhere, the padding included */
	for (i = 0; i < 3 * stride; i++) {
		b->p[i] = FLT_MAX;
		b->p[3 * stride + i] = -FLT_MAX;
	}
	b->n = n;
	b->stride = stride;
}

enum core_result box_planes_init(struct box_planes *b, size_t n)
{
	size_t bytes = box_planes_bytes(n);
	float *p = bytes ? malloc(bytes) : NULL;

	b->p = NULL;
	b->n = 0;
	b->stride = 0;
	if (!p)
		return CORE_ENOMEM;
	box_planes_init_at(b, n, p);
	return CORE_OK;
}

void box_planes_set(struct box_planes *b, size_t i, vec3 lo, vec3 hi)
{
	b->p[i] = lo.x;
	b->p[b->stride + i] = lo.y;
	b->p[2 * b->stride + i] = lo.z;
	b->p[3 * b->stride + i] = hi.x;
	b->p[4 * b->stride + i] = hi.y;
	b->p[5 * b->stride + i] = hi.z;
}

void box_planes_release(struct box_planes *b)
{
	free(b->p);
	b->p = NULL;
	b->n = 0;
	b->stride = 0;
}

int boxscan_isa_supported(enum boxscan_isa isa)
{
	switch (isa) {
	case BOXSCAN_AUTO:
	case BOXSCAN_SCALAR:
		return 1;
	case BOXSCAN_AVX2:
		return __builtin_cpu_supports("avx2");
	case BOXSCAN_AVX512:
		return __builtin_cpu_supports("avx512f");
	}
	return 0;
}

static uint32_t hits_scalar(const struct box_planes *b, const struct tlas_ray *r, size_t first,
			    unsigned n, double tmax, double *tin)
{
	uint32_t bits = 0;
	unsigned j;

	for (j = 0; j < n; j++) {
		size_t i = first + j;
		float lo[3] = { b->p[i], b->p[b->stride + i], b->p[2 * b->stride + i] };
		float hi[3] = { b->p[3 * b->stride + i], b->p[4 * b->stride + i],
				b->p[5 * b->stride + i] };
		double t = tlas_box_entry(r, lo, hi, tmax);

		if (t >= 0) {
			bits |= 1u << j;
			tin[j] = t;
		}
	}
	return bits;
}

/* Per call: each axis's near and far planes (picked by the direction's
 * sign) from box `first` on, or its two planes for a containment test. */
struct axes {
	const float *near[3], *far[3];
	int zero[3];
};

static void axes_init(struct axes *x, const struct box_planes *b, const struct tlas_ray *r,
		      size_t first)
{
	int k;

	for (k = 0; k < 3; k++) {
		const float *lo = b->p + (size_t)k * b->stride + first;
		const float *hi = b->p + (size_t)(k + 3) * b->stride + first;

		x->zero[k] = r->zero[k];
		x->near[k] = r->neg[k] && !r->zero[k] ? hi : lo;
		x->far[k] = r->neg[k] && !r->zero[k] ? lo : hi;
	}
}

static inline uint32_t low_bits(uint32_t bits, unsigned n)
{
	return n < 32 ? bits & ((1u << n) - 1) : bits;
}

__attribute__((target("avx2"))) static uint32_t
hits_avx2(const struct box_planes *b, const struct tlas_ray *r, size_t first, unsigned n,
	  double tmax, double *tin)
{
	struct axes x;
	uint32_t bits = 0;
	unsigned g;
	int k;

	axes_init(&x, b, r, first);
	for (g = 0; g < n; g += 4) {
		__m256d lo_t = _mm256_setzero_pd(), hi_t = _mm256_set1_pd(tmax);
		int out = 0;

		for (k = 0; k < 3; k++) {
			__m256d a = _mm256_cvtps_pd(_mm_loadu_ps(x.near[k] + g));
			__m256d c = _mm256_cvtps_pd(_mm_loadu_ps(x.far[k] + g));
			__m256d o = _mm256_set1_pd(r->o[k]), inv, t0, t1;

			if (x.zero[k]) {	/* a: lo, c: hi */
				out |= _mm256_movemask_pd(_mm256_cmp_pd(o, a, _CMP_LT_OQ)) |
				       _mm256_movemask_pd(_mm256_cmp_pd(o, c, _CMP_GT_OQ));
				continue;
			}
			inv = _mm256_set1_pd(r->inv[k]);
			t0 = _mm256_mul_pd(_mm256_sub_pd(a, o), inv);
			t1 = _mm256_mul_pd(_mm256_sub_pd(c, o), inv);
			lo_t = _mm256_blendv_pd(lo_t, t0, _mm256_cmp_pd(t0, lo_t, _CMP_GT_OQ));
			hi_t = _mm256_blendv_pd(hi_t, t1, _mm256_cmp_pd(t1, hi_t, _CMP_LT_OQ));
		}
		out |= _mm256_movemask_pd(_mm256_cmp_pd(lo_t, hi_t, _CMP_GT_OQ));
		_mm256_storeu_pd(tin + g, lo_t);
		bits |= (uint32_t)(~out & 0xf) << g;
	}
	return low_bits(bits, n);
}

__attribute__((target("avx512f"))) static uint32_t
hits_avx512(const struct box_planes *b, const struct tlas_ray *r, size_t first, unsigned n,
	    double tmax, double *tin)
{
	struct axes x;
	uint32_t bits = 0;
	unsigned g;
	int k;

	axes_init(&x, b, r, first);
	for (g = 0; g < n; g += 8) {
		__m512d lo_t = _mm512_setzero_pd(), hi_t = _mm512_set1_pd(tmax);
		__mmask8 out = 0;

		for (k = 0; k < 3; k++) {
			__m512d a = _mm512_cvtps_pd(_mm256_loadu_ps(x.near[k] + g));
			__m512d c = _mm512_cvtps_pd(_mm256_loadu_ps(x.far[k] + g));
			__m512d o = _mm512_set1_pd(r->o[k]), inv, t0, t1;

			if (x.zero[k]) {	/* a: lo, c: hi */
				out |= _mm512_cmp_pd_mask(o, a, _CMP_LT_OQ) |
				       _mm512_cmp_pd_mask(o, c, _CMP_GT_OQ);
				continue;
			}
			inv = _mm512_set1_pd(r->inv[k]);
			t0 = _mm512_mul_pd(_mm512_sub_pd(a, o), inv);
			t1 = _mm512_mul_pd(_mm512_sub_pd(c, o), inv);
			lo_t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(t0, lo_t, _CMP_GT_OQ), lo_t, t0);
			hi_t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(t1, hi_t, _CMP_LT_OQ), hi_t, t1);
		}
		out |= _mm512_cmp_pd_mask(lo_t, hi_t, _CMP_GT_OQ);
		_mm512_storeu_pd(tin + g, lo_t);
		bits |= (uint32_t)(uint8_t)~out << g;
	}
	return low_bits(bits, n);
}

uint32_t box_planes_hits_isa(const struct box_planes *b, const struct tlas_ray *r, size_t first,
			     unsigned n, double tmax, double *tin, enum boxscan_isa isa)
{
	if (isa == BOXSCAN_AUTO)
		isa = boxscan_isa_supported(BOXSCAN_AVX512) ? BOXSCAN_AVX512 :
		      boxscan_isa_supported(BOXSCAN_AVX2) ? BOXSCAN_AVX2 : BOXSCAN_SCALAR;
	else if (!boxscan_isa_supported(isa))
		isa = BOXSCAN_SCALAR;
	if (isa == BOXSCAN_AVX512)
		return hits_avx512(b, r, first, n, tmax, tin);
	if (isa == BOXSCAN_AVX2)
		return hits_avx2(b, r, first, n, tmax, tin);
	return hits_scalar(b, r, first, n, tmax, tin);
}
