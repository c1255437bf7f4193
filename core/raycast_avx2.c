/* raycast_avx2.c - the traversal kernel with eight lanes (AVX2, chosen at run
 * time): a whole node at once, two leaf blocks (eight triangles) at once.
 * Compiled for any x86-64: only these functions carry the avx2 target, and
 * raycast.c calls them only when the CPU has it. No FMA: the error bounds
 * count separate roundings, and every kernel must round alike.
 * raycast_avx512.c includes this file with KFN and TRAVERSE set: the same
 * eight lanes with AVX-512VL's 32 registers. */
#include <math.h>

#include "raycast_impl.h"

#ifndef TRAVERSE_FALLBACK
#define TRAVERSE_FALLBACK rc_traverse_avx2
#define TRAVERSE_SEQ_FALLBACK rc_traverse_seq_avx2
#define TRAVERSE_MANY_FALLBACK rc_traverse_many_avx2
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#ifndef KFN
#define KFN __attribute__((target("avx2")))
#define TRAVERSE rc_traverse_avx2
#define TRAVERSE_SEQ rc_traverse_seq_avx2
#define TRAVERSE_MANY rc_traverse_many_avx2
#endif
#define LANES 8
#define NLANES 8

typedef __m256 V;
typedef __m256i VI;
typedef __m256 NV;

#define V_SET1(x) _mm256_set1_ps(x)
#define V_ADD _mm256_add_ps
#define V_SUB _mm256_sub_ps
#define V_MUL _mm256_mul_ps
#define V_DIV _mm256_div_ps
#define V_ABS(a) _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)))
#define V_NEG(a) _mm256_xor_ps(a, _mm256_set1_ps(-0.0f))
#define V_MIN _mm256_min_ps
#define V_MAX _mm256_max_ps
#define V_STORE _mm256_storeu_ps
/* lanes g .. g+7: blocks g/4 and g/4 + 1 (the array ends with a spare block) */
#define V_LOAD_ROW(m, g, r)                                                              \
	_mm256_insertf128_ps(                                                              \
		_mm256_castps128_ps256(_mm_loadu_ps((m)->prims[(g) / PRIM_LANES].mat[r])),   \
		_mm_loadu_ps((m)->prims[(g) / PRIM_LANES + 1].mat[r]), 1)

#ifdef RC_KMASK
/* AVX-512VL: masks in mask registers, compares straight into them */
typedef __mmask8 M;
#define M_ALL ((__mmask8)0xff)
#define M_NONE ((__mmask8)0)
#define M_GT(a, b) _mm256_cmp_ps_mask(a, b, _CMP_GT_OQ)
#define M_LT(a, b) _mm256_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define M_LE(a, b) _mm256_cmp_ps_mask(a, b, _CMP_LE_OQ)
#define M_NE(a, b) _mm256_cmp_ps_mask(a, b, _CMP_NEQ_UQ)
#define M_AND(a, b) ((__mmask8)((a) & (b)))
#define M_OR(a, b) ((__mmask8)((a) | (b)))
#define M_XOR(a, b) ((__mmask8)((a) ^ (b)))
#define M_NOT(a) ((__mmask8)~(a))
#define M_ANDNOT(a, b) ((__mmask8)(~(a) & (b)))
#define M_BITS(a) ((unsigned)(a))
/* f is one bit */
#define I_FLAG(id, f) _mm256_test_epi32_mask(id, _mm256_set1_epi32((int)(f)))
#define N_LE(a, b) _mm256_cmp_ps_mask(a, b, _CMP_LE_OQ)
#define N_BITS(a) ((unsigned)(a))
#else
typedef __m256 M;
#define M_ALL _mm256_castsi256_ps(_mm256_set1_epi32(-1))
#define M_NONE _mm256_setzero_ps()
#define M_GT(a, b) _mm256_cmp_ps(a, b, _CMP_GT_OQ)
#define M_LT(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define M_LE(a, b) _mm256_cmp_ps(a, b, _CMP_LE_OQ)
#define M_NE(a, b) _mm256_cmp_ps(a, b, _CMP_NEQ_UQ)	/* true when unordered, as C's != */
#define M_AND _mm256_and_ps
#define M_OR _mm256_or_ps
#define M_XOR _mm256_xor_ps
#define M_NOT(a) _mm256_xor_ps(a, M_ALL)
#define M_ANDNOT _mm256_andnot_ps	/* ~a & b */
#define M_BITS _mm256_movemask_ps
#define I_FLAG(id, f)                                                                    \
	_mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(id, _mm256_set1_epi32((int)(f))), \
					       _mm256_set1_epi32((int)(f))))
#define N_LE(a, b) _mm256_cmp_ps(a, b, _CMP_LE_OQ)
#define N_BITS _mm256_movemask_ps
#endif

#define I_LOAD_ID(m, g)                                                                  \
	_mm256_inserti128_si256(                                                           \
		_mm256_castsi128_si256(                                                    \
			_mm_loadu_si128((const __m128i *)(m)->prims[(g) / PRIM_LANES].id)), \
		_mm_loadu_si128((const __m128i *)(m)->prims[(g) / PRIM_LANES + 1].id), 1)
/* row c of q's jk in the low lanes (the lanes picked are 0-2) */
#define JK_ROW(q, c) _mm256_castps128_ps256(_mm_load_ps((q)->jk[c]))
#define I_GATHER(q, id, J0, J1, J2, K0, K1, K2)                                         \
	do {                                                                             \
		__m256i k_ = _mm256_and_si256(id, _mm256_set1_epi32(PRIM_AXIS_MASK));     \
		J0 = _mm256_permutevar8x32_ps(JK_ROW(q, 0), k_);                         \
		J1 = _mm256_permutevar8x32_ps(JK_ROW(q, 1), k_);                         \
		J2 = _mm256_permutevar8x32_ps(JK_ROW(q, 2), k_);                         \
		K0 = _mm256_permutevar8x32_ps(JK_ROW(q, 3), k_);                         \
		K1 = _mm256_permutevar8x32_ps(JK_ROW(q, 4), k_);                         \
		K2 = _mm256_permutevar8x32_ps(JK_ROW(q, 5), k_);                         \
	} while (0)

#define N_SET1 _mm256_set1_ps
#define N_LOAD _mm256_loadu_ps
#define N_STORE _mm256_storeu_ps
#define N_SUB _mm256_sub_ps
#define N_MUL _mm256_mul_ps
#define N_MIN _mm256_min_ps
#define N_MAX _mm256_max_ps

#include "raycast_kern.h"

#else
void TRAVERSE_FALLBACK(const struct mesh *m, const struct rq *q, struct collector *cl)
{
	rc_traverse_scalar(m, q, cl);
}

void TRAVERSE_SEQ_FALLBACK(const struct mesh *m, const struct rq *q, struct collector *cl,
			   size_t n)
{
	rc_traverse_seq_scalar(m, q, cl, n);
}

void TRAVERSE_MANY_FALLBACK(const struct mesh *m, const struct rq *q, struct collector *cl,
			    size_t n)
{
	rc_traverse_many_scalar(m, q, cl, n);
}

#ifdef STREAM
void STREAM(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n,
	    struct rc_stream *x)
{
	(void)x;
	rc_traverse_seq_scalar(m, q, cl, n);
}
#endif
#endif
