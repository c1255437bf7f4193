/* raycast_scalar.c - the traversal kernel with one lane: the reference the
 * SIMD kernels are tested against, and the kernel where there is no SSE2. */
#include <math.h>

#include "raycast_impl.h"

#define KFN
#define LANES 1
#define NLANES 1
#define TRAVERSE rc_traverse_scalar
#define TRAVERSE_SEQ rc_traverse_seq_scalar
#define TRAVERSE_MANY rc_traverse_many_scalar

typedef float V;
typedef int M;
typedef uint32_t VI;
typedef float NV;

#define V_SET1(x) (x)
#define V_ADD(a, b) ((a) + (b))
#define V_SUB(a, b) ((a) - (b))
#define V_MUL(a, b) ((a) * (b))
#define V_DIV(a, b) ((a) / (b))
#define V_ABS(a) fabsf(a)
#define V_NEG(a) (-(a))
#define V_MIN(a, b) ((a) < (b) ? (a) : (b))
#define V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define V_STORE(p, x) (*(p) = (x))
#define V_LOAD_ROW(m, g, r) prim_mat(m, g, r)

#define M_ALL 1
#define M_NONE 0
#define M_GT(a, b) ((a) > (b))
#define M_LT(a, b) ((a) < (b))
#define M_LE(a, b) ((a) <= (b))
#define M_NE(a, b) ((a) != (b))
#define M_AND(a, b) ((a) & (b))
#define M_OR(a, b) ((a) | (b))
#define M_XOR(a, b) ((a) ^ (b))
#define M_NOT(a) (!(a))
#define M_ANDNOT(a, b) ((!(a)) & (b))
#define M_BITS(a) (a)

#define I_LOAD_ID(m, g) prim_id(m, g)
#define I_FLAG(id, f) (((id) & (f)) != 0)
#define I_GATHER(q, id, J0, J1, J2, K0, K1, K2)                                      \
	do {                                                                          \
		int k_ = (int)((id) & PRIM_AXIS_MASK);                                \
		J0 = (q)->jk[0][k_]; J1 = (q)->jk[1][k_]; J2 = (q)->jk[2][k_];        \
		K0 = (q)->jk[3][k_]; K1 = (q)->jk[4][k_]; K2 = (q)->jk[5][k_];        \
	} while (0)

#define N_SET1(x) (x)
#define N_LOAD(p) (*(p))
#define N_STORE(p, x) (*(p) = (x))
#define N_SUB V_SUB
#define N_MUL V_MUL
#define N_MIN V_MIN
#define N_MAX V_MAX
#define N_LE M_LE
#define N_BITS(a) (a)

#include "raycast_kern.h"
