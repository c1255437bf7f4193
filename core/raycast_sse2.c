/* raycast_sse2.c - the traversal kernel with four lanes (SSE2, every x86-64):
 * a node in two halves, a leaf block of four triangles at once. */
#include <math.h>

#include "raycast_impl.h"

#if defined(__SSE2__)
#include <emmintrin.h>

#define KFN
#define LANES 4
#define NLANES 4
#define TRAVERSE rc_traverse_sse2
#define TRAVERSE_SEQ rc_traverse_seq_sse2
#define TRAVERSE_MANY rc_traverse_many_sse2

typedef __m128 V;
typedef __m128 M;
typedef __m128i VI;
typedef __m128 NV;

#define V_SET1(x) _mm_set1_ps(x)
#define V_ADD _mm_add_ps
#define V_SUB _mm_sub_ps
#define V_MUL _mm_mul_ps
#define V_DIV _mm_div_ps
#define V_ABS(a) _mm_and_ps(a, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)))
#define V_NEG(a) _mm_xor_ps(a, _mm_set1_ps(-0.0f))
#define V_MIN _mm_min_ps	/* (a < b ? a : b), NaN included */
#define V_MAX _mm_max_ps	/* (a > b ? a : b) */
#define V_STORE _mm_storeu_ps
#define V_LOAD_ROW(m, g, r) _mm_loadu_ps((m)->prims[(g) / PRIM_LANES].mat[r])

#define M_ALL _mm_castsi128_ps(_mm_set1_epi32(-1))
#define M_NONE _mm_setzero_ps()
#define M_GT _mm_cmpgt_ps
#define M_LT _mm_cmplt_ps
#define M_LE _mm_cmple_ps
#define M_NE _mm_cmpneq_ps	/* true when unordered, as C's != */
#define M_AND _mm_and_ps
#define M_OR _mm_or_ps
#define M_XOR _mm_xor_ps
#define M_NOT(a) _mm_xor_ps(a, M_ALL)
#define M_ANDNOT _mm_andnot_ps	/* ~a & b */
#define M_BITS _mm_movemask_ps

#define I_LOAD_ID(m, g) _mm_loadu_si128((const __m128i *)(m)->prims[(g) / PRIM_LANES].id)
#define I_FLAG(id, f)                                                                 \
	_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(id, _mm_set1_epi32((int)(f))),     \
					 _mm_set1_epi32((int)(f))))
/* SSE2 has no variable permute: select by k with masks */
#define SEL3(m0, m1, row)                                                             \
	_mm_or_ps(_mm_and_ps(m0, _mm_set1_ps((row)[0])),                               \
		  _mm_or_ps(_mm_and_ps(m1, _mm_set1_ps((row)[1])),                     \
			    _mm_andnot_ps(_mm_or_ps(m0, m1), _mm_set1_ps((row)[2]))))
#define I_GATHER(q, id, J0, J1, J2, K0, K1, K2)                                      \
	do {                                                                          \
		__m128i k_ = _mm_and_si128(id, _mm_set1_epi32(PRIM_AXIS_MASK));       \
		__m128 m0_ = _mm_castsi128_ps(_mm_cmpeq_epi32(k_, _mm_setzero_si128()));  \
		__m128 m1_ = _mm_castsi128_ps(_mm_cmpeq_epi32(k_, _mm_set1_epi32(1)));  \
		J0 = SEL3(m0_, m1_, (q)->jk[0]); J1 = SEL3(m0_, m1_, (q)->jk[1]);     \
		J2 = SEL3(m0_, m1_, (q)->jk[2]); K0 = SEL3(m0_, m1_, (q)->jk[3]);     \
		K1 = SEL3(m0_, m1_, (q)->jk[4]); K2 = SEL3(m0_, m1_, (q)->jk[5]);     \
	} while (0)

#define N_SET1 _mm_set1_ps
#define N_LOAD _mm_loadu_ps
#define N_STORE _mm_storeu_ps
#define N_SUB _mm_sub_ps
#define N_MUL _mm_mul_ps
#define N_MIN _mm_min_ps
#define N_MAX _mm_max_ps
#define N_LE _mm_cmple_ps
#define N_BITS _mm_movemask_ps

#include "raycast_kern.h"

#else
/* not x86-64: never dispatched to (rc_isa_supported says 0) */
void rc_traverse_sse2(const struct mesh *m, const struct rq *q, struct collector *cl)
{
	rc_traverse_scalar(m, q, cl);
}

void rc_traverse_seq_sse2(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n)
{
	rc_traverse_seq_scalar(m, q, cl, n);
}

void rc_traverse_many_sse2(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n)
{
	rc_traverse_many_scalar(m, q, cl, n);
}
#endif
