/* raycast.c - ray and segment queries: setup, the exact fallback, hit
 * collection and the choice of traversal kernel (raycast_kern.h).
 *
 * The triangle test runs in float on the collision matrices (mesh_impl.h):
 * the segment j -> k (the ray clipped to the mesh bounds, relative to
 * mesh->center) has local coordinates (u, v, z) at each end, and the line
 * crosses the triangle where the three 2x2 determinants
 *   U = zj uk - zk uj,  V = zj vk - zk vj,  W = (zj - zk) - U - V
 * share a sign (U, V, W are the barycentrics of b, c, a times zj - zk).
 * Each float quantity carries a bound on its rounding error, derived from
 * the matrix's row norms and the size of the coordinates (raycast_kern.h).
 * When every sign is certain the float answer is the exact answer; when one
 * is not (the ray passes within a few ulps of an edge, a vertex or the plane)
 * the test is redone without rounding by exact_ray_triangle(). Hit/miss is
 * therefore exact for the float ray and float vertices, and a ray aimed at an
 * edge or vertex shared by two triangles cannot slip between them.
 *
 * Kernels: one lane (reference), SSE2 (four lanes, every x86-64), AVX2
 * (eight, when __builtin_cpu_supports says so) and the AVX2 code built for
 * AVX-512VL (its 32 registers). They perform the same float operations, so
 * their answers are bit-identical; the tests check that.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "exact.h"
#include "raycast_impl.h"
#include "vec.h"	/* MINF/MAXF: rays are validated, nothing here is NaN */


#ifdef __SSE2__
/* The vec3 at p and the float after it, one 16-byte load: lane 3 is never
 * read below (nor by the kernels: rq's ov, inv, nrow, frow and jk rows
 * have a spare lane). */
static inline __m128 rq_load(const vec3 *p)
{
	return _mm_loadu_ps(&p->x);
}

/* Every vec3 loaded so has a float after it inside its struct (ray_valid
 * below reads the ray so too). */
_Static_assert(offsetof(struct ray, dir) == 12 && offsetof(struct ray, tmax) == 24,
	       "ray: origin, dir and tmax as 28 contiguous bytes");
_Static_assert(offsetof(struct bvh, hi) == offsetof(struct bvh, lo) + 12,
	       "bvh.lo and bvh.hi: 24 contiguous bytes");
_Static_assert(offsetof(struct mesh, center) + 16 <= sizeof(struct mesh), "mesh.center: 16 bytes");

/*
 * The three axes of the slab test in the lanes of one vector: the inverse
 * direction, |1/d| capped at 2^126 (no inf * 0; the padded boxes keep this
 * conservative, bvh.h), the rows of a node's near and far planes (the near
 * plane is lo unless the ray goes down the axis), and the root box's entry
 * and exit into *tn and *tf, folded axis by axis as MAXF / MINF would
 * (maxss and minss are those). No branch, and the two segment ends below
 * in vectors too: rq_init 197 -> 120 instructions a ray (callgrind, bunny).
 */
static inline void rq_slabs(struct rq *q, const struct mesh *m, const struct ray *r, float *tn,
			    float *tf)
{
	const __m128 sign = _mm_set1_ps(-0.0f), zero = _mm_setzero_ps();
	__m128 o = rq_load(&r->origin), d = rq_load(&r->dir);
	/* (lo.z, hi.x, hi.y, hi.z), rotated below: nothing past the struct */
	__m128 hi = _mm_loadu_ps(&m->bvh.lo.z);
	__m128 tiny = _mm_cmplt_ps(_mm_andnot_ps(sign, d), _mm_set1_ps(0x1p-126f));
	__m128 cap = _mm_or_ps(_mm_and_ps(sign, d), _mm_set1_ps(0x1p126f));
	__m128 inv = _mm_or_ps(_mm_and_ps(tiny, cap),
			       _mm_andnot_ps(tiny, _mm_div_ps(_mm_set1_ps(1.0f), d)));
	__m128 tlo = _mm_mul_ps(_mm_sub_ps(rq_load(&m->bvh.lo), o), inv);
	__m128 thi = _mm_mul_ps(_mm_sub_ps(_mm_shuffle_ps(hi, hi, _MM_SHUFFLE(0, 3, 2, 1)), o), inv);
	__m128 t0 = _mm_mul_ps(_mm_min_ps(tlo, thi), _mm_set1_ps(RC_NEAR_SLACK));
	__m128 t1 = _mm_mul_ps(_mm_max_ps(tlo, thi), _mm_set1_ps(RC_BOX_SLACK));
	__m128i three = _mm_and_si128(_mm_castps_si128(_mm_cmplt_ps(inv, zero)), _mm_set1_epi32(3));
	__m128 n = _mm_max_ss(zero, t0), f = _mm_min_ss(_mm_set_ss(r->tmax), t1);

	_mm_storeu_ps(q->ov, o);
	_mm_storeu_ps(q->inv, inv);
	/* lo then hi: a node's float[6][8] (bvh.h) */
	_mm_storeu_si128((__m128i *)q->nrow, _mm_add_epi32(_mm_setr_epi32(0, 1, 2, 3), three));
	_mm_storeu_si128((__m128i *)q->frow, _mm_sub_epi32(_mm_setr_epi32(3, 4, 5, 6), three));
	n = _mm_max_ss(n, _mm_shuffle_ps(t0, t0, 1));
	f = _mm_min_ss(f, _mm_shuffle_ps(t1, t1, 1));
	*tn = _mm_cvtss_f32(_mm_max_ss(n, _mm_shuffle_ps(t0, t0, 2)));
	*tf = _mm_cvtss_f32(_mm_min_ss(f, _mm_shuffle_ps(t1, t1, 2)));
}

/* The segment's ends j = o - center and k = j + L d by dominant axis
 * (struct rq's jk), and P: rotations of two vectors. */
static inline void rq_ends(struct rq *q, const struct mesh *m, const struct ray *r)
{
	__m128 j = _mm_sub_ps(rq_load(&r->origin), rq_load(&m->center));
	__m128 k = _mm_add_ps(j, _mm_mul_ps(rq_load(&r->dir), _mm_set1_ps(q->L)));
	__m128 a = _mm_max_ps(_mm_andnot_ps(_mm_set1_ps(-0.0f), j),
			      _mm_andnot_ps(_mm_set1_ps(-0.0f), k));

	/* jk[c][ax] = coordinate (ax + 1 + c) % 3: (y, z, x), (z, x, y), (x, y, z) */
	_mm_store_ps(q->jk[0], _mm_shuffle_ps(j, j, _MM_SHUFFLE(3, 0, 2, 1)));
	_mm_store_ps(q->jk[1], _mm_shuffle_ps(j, j, _MM_SHUFFLE(3, 1, 0, 2)));
	_mm_store_ps(q->jk[2], j);
	_mm_store_ps(q->jk[3], _mm_shuffle_ps(k, k, _MM_SHUFFLE(3, 0, 2, 1)));
	_mm_store_ps(q->jk[4], _mm_shuffle_ps(k, k, _MM_SHUFFLE(3, 1, 0, 2)));
	_mm_store_ps(q->jk[5], k);
	/* lanes 0-2 (lane 3 is the next field's) */
	a = _mm_max_ss(_mm_max_ss(a, _mm_shuffle_ps(a, a, 1)), _mm_shuffle_ps(a, a, 2));
	q->P = _mm_cvtss_f32(a);
}
#else
/* Axis a of rq_slabs: the inverse direction, the rows of a node's near and
 * far planes, and the root box's entry and exit folded into *tn and *tf. */
static inline void rq_axis(struct rq *q, int a, float o, float d, float lo, float hi,
			   float *tn, float *tf)
{
	/* |1/d| capped at 2^126: no inf * 0; the padded boxes keep this
	 * conservative (bvh.h) */
	float inv = fabsf(d) < 0x1p-126f ? copysignf(0x1p126f, d) : 1.0f / d;
	/* the near plane is lo unless the ray goes down the axis */
	int far_lo = inv < 0;
	float tlo = (lo - o) * inv, thi = (hi - o) * inv;
	float t0 = MINF(tlo, thi), t1 = MAXF(tlo, thi);

	q->ov[a] = o;
	q->inv[a] = inv;
	q->nrow[a] = a + 3 * far_lo;	/* lo then hi: a node's float[6][8] (bvh.h) */
	q->frow[a] = a + 3 - 3 * far_lo;
	*tn = MAXF(*tn, t0 * RC_NEAR_SLACK);
	*tf = MINF(*tf, t1 * RC_BOX_SLACK);
}

/* The slab test's set-up, axis by axis (the SSE2 form above in lanes). */
static inline void rq_slabs(struct rq *q, const struct mesh *m, const struct ray *r, float *tn,
			    float *tf)
{
	*tn = 0;
	*tf = r->tmax;
	rq_axis(q, 0, r->origin.x, r->dir.x, m->bvh.lo.x, m->bvh.hi.x, tn, tf);
	rq_axis(q, 1, r->origin.y, r->dir.y, m->bvh.lo.y, m->bvh.hi.y, tn, tf);
	rq_axis(q, 2, r->origin.z, r->dir.z, m->bvh.lo.z, m->bvh.hi.z, tn, tf);
}

/* The segment's ends by dominant axis (struct rq's jk), and P. */
static inline void rq_ends(struct rq *q, const struct mesh *m, const struct ray *r)
{
	vec3 j = v3_sub(r->origin, m->center);
	vec3 k = v3_add(j, v3_scale(r->dir, q->L));

	/* jk[c][ax] = coordinate (ax + 1 + c) % 3 */
	q->jk[0][0] = j.y; q->jk[0][1] = j.z; q->jk[0][2] = j.x;
	q->jk[1][0] = j.z; q->jk[1][1] = j.x; q->jk[1][2] = j.y;
	q->jk[2][0] = j.x; q->jk[2][1] = j.y; q->jk[2][2] = j.z;
	q->jk[3][0] = k.y; q->jk[3][1] = k.z; q->jk[3][2] = k.x;
	q->jk[4][0] = k.z; q->jk[4][1] = k.x; q->jk[4][2] = k.y;
	q->jk[5][0] = k.x; q->jk[5][1] = k.y; q->jk[5][2] = k.z;
	q->P = MAXF(MAXF(MAXF(fabsf(j.x), fabsf(j.y)), MAXF(fabsf(j.z), fabsf(k.x))),
		     MAXF(fabsf(k.y), fabsf(k.z)));
}
#endif

/* Slab test against the root box; 0 when the ray misses the mesh. */
static int rq_init(struct rq *q, const struct mesh *m, const struct ray *r,
		   const struct query_opts *opts)
{
	float tn, tf;

	q->d = r->dir;
	q->tmax = r->tmax;
	q->cull = opts->cull_backfaces;
	q->flip = opts->flip_winding;
	rq_slabs(q, m, r, &tn, &tf);
	if (!(tn <= tf))
		return 0;
	q->L = isfinite(tf) ? tf : r->tmax;
	if (!isfinite(q->L))
		return 0;
	rq_ends(q, m, r);
	return 1;
}

/* The exact slow path for primitive rec. */
static int tri_exact(const struct mesh *m, const struct rq *q, uint32_t rec, struct cand *c)
{
	uint32_t id = prim_id(m, rec);
	uint32_t tri = id >> PRIM_SHIFT;
	struct exact_hit h;
	vec3 a, b, cc;

	mesh_triangle(m, tri, &a, &b, &cc);
	if (!exact_ray_triangle(rq_origin(q), q->d, q->tmax, a, b, cc, 0, &h) || !(h.t <= FLT_MAX))
		return 0;	/* no hit, or none at a float distance (mesh.h) */
	c->front = h.front ^ q->flip;
	if (q->cull && !c->front)
		return 0;
	c->t = (float)h.t;
	c->u = (float)h.u;
	c->v = (float)h.v;
	c->tri = tri;
	c->rec = rec;
	return 1;
}

static void heap_push(struct collector *cl, const struct cand *c)
{
	struct cand *h = cl->all;
	uint32_t i;

	cl->total++;
	if (cl->n < cl->cap) {
		i = cl->n++;
		while (i > 0 && cand_less(&h[(i - 1) / 2], c)) {
			h[i] = h[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		h[i] = *c;
		return;
	}
	if (!cand_less(c, &h[0]))
		return;
	/* replace the farthest and sift down */
	i = 0;
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, big = i;
		const struct cand *cur = big == i ? c : &h[big];

		if (l < cl->n && cand_less(cur, &h[l])) {
			big = l;
			cur = &h[l];
		}
		if (r < cl->n && cand_less(cur, &h[r]))
			big = r;
		if (big == i)
			break;
		h[i] = h[big];
		i = big;
	}
	h[i] = *c;
}

void rc_collector_reset(struct collector *cl)
{
	cl->found = 0;
	cl->n = 0;
	cl->total = 0;
}

static int collect(struct collector *cl, const struct cand *cd)
{
	if (cl->mode == HIT_ALL) {
		heap_push(cl, cd);
		return 0;
	}
	if (!cl->found || cand_less(cd, &cl->best))
		cl->best = *cd;
	cl->found = 1;
	return cl->mode == HIT_ANY;
}

int rc_lanes(const struct mesh *m, const struct rq *q, struct collector *cl, uint32_t first,
	     unsigned hit, unsigned slow, unsigned front, const float *t, const float *u,
	     const float *v)
{
	while (hit | slow) {
		int l = __builtin_ctz(hit | slow);
		uint32_t rec = first + (uint32_t)l;
		struct cand cd;

		if (hit >> l & 1) {
			cd.t = t[l];
			cd.u = u[l];
			cd.v = v[l];
			cd.tri = prim_id(m, rec) >> PRIM_SHIFT;
			cd.rec = rec;
			cd.front = (int)(front >> l & 1);
		} else if (!tri_exact(m, q, rec, &cd)) {
			hit &= ~(1u << l);
			slow &= ~(1u << l);
			continue;
		}
		hit &= ~(1u << l);
		slow &= ~(1u << l);
		if (collect(cl, &cd))
			return 1;
	}
	return 0;
}

/* Candidate c as a hit without its point and normal (opts->bare_hits). */
static void fill_bare(const struct cand *c, struct hit *h)
{
	h->t = c->t;
	h->triangle = c->tri;
	h->u = c->u;
	h->v = c->v;
	h->front_face = c->front;
}

/* The answer for candidate c. The unit normal comes from the matrix's third
 * row, (n_i, n_j, n_k) / n_k (mesh_impl.h), signed by n_k: no vertex fetch.
 * Primitives without a float matrix compute it from their vertices. The
 * normal's components are picked by selects, not stored through an index:
 * a vector load of those stores stalled the store forwarding (perf: 11 %
 * of a bunny ray's time in here before). */
static void fill_hit(const struct mesh *m, const struct rq *q, const struct cand *c,
		     struct hit *h)
{
	uint32_t id = prim_id(m, c->rec);
	double n0, n1, n2, len;

	if (!(id & PRIM_EXACT)) {
		/* n[k] = sg, n[(k + 1) % 3] = sg n_i / n_k, n[(k + 2) % 3] =
		 * sg n_j / n_k for the dominant axis k */
		int k = (int)(id & PRIM_AXIS_MASK);
		double sg = id & PRIM_NEG_NK ? -1 : 1;
		double ni = sg * prim_mat(m, c->rec, 6), nj = sg * prim_mat(m, c->rec, 7);

		n0 = k == 0 ? sg : k == 1 ? nj : ni;
		n1 = k == 1 ? sg : k == 2 ? nj : ni;
		n2 = k == 2 ? sg : k == 0 ? nj : ni;
	} else {
		vec3 a, b, cc;
		double e1[3], e2[3];

		mesh_triangle(m, c->tri, &a, &b, &cc);
		e1[0] = (double)b.x - a.x; e1[1] = (double)b.y - a.y; e1[2] = (double)b.z - a.z;
		e2[0] = (double)cc.x - a.x; e2[1] = (double)cc.y - a.y; e2[2] = (double)cc.z - a.z;
		n0 = e1[1] * e2[2] - e1[2] * e2[1];
		n1 = e1[2] * e2[0] - e1[0] * e2[2];
		n2 = e1[0] * e2[1] - e1[1] * e2[0];
		/* scale first: at 1e35 the squares would overflow a double's
		 * comfort, at 1e-40 underflow it */
		len = fmax(fabs(n0), fmax(fabs(n1), fabs(n2)));
		n0 /= len;
		n1 /= len;
		n2 /= len;
	}
	len = sqrt(n0 * n0 + n1 * n1 + n2 * n2);
	h->point = v3((float)((double)q->ov[0] + (double)c->t * q->d.x),
		      (float)((double)q->ov[1] + (double)c->t * q->d.y),
		      (float)((double)q->ov[2] + (double)c->t * q->d.z));
	h->normal = v3((float)(n0 / len), (float)(n1 / len), (float)(n2 / len));
	fill_bare(c, h);
}

/* Candidate c as opts asks for it: bare or whole. */
static inline void fill_answer(const struct mesh *m, const struct rq *q, const struct cand *c,
			       const struct query_opts *opts, struct hit *h)
{
	if (opts->bare_hits)
		fill_bare(c, h);
	else
		fill_hit(m, q, c, h);
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return cand_less(x, y) ? -1 : cand_less(y, x) ? 1 : 0;
}

int rc_isa_supported(enum rc_isa isa)
{
	switch (isa) {
	case RC_ISA_AUTO:
	case RC_ISA_SCALAR:
		return 1;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	case RC_ISA_SSE2:
		return 1;
	case RC_ISA_AVX2:
		return __builtin_cpu_supports("avx2");
	case RC_ISA_AVX512:
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
		       __builtin_cpu_supports("popcnt");
#endif
	default:
		return 0;
	}
}

/* The fastest kernel this CPU runs. */
static enum rc_isa best_isa(void)
{
	return rc_isa_supported(RC_ISA_AVX512) ? RC_ISA_AVX512 :
	       rc_isa_supported(RC_ISA_AVX2) ? RC_ISA_AVX2 :
	       rc_isa_supported(RC_ISA_SSE2) ? RC_ISA_SSE2 : RC_ISA_SCALAR;
}

/* A kernel's entry points (raycast_impl.h): one query, several one after
 * another, several interleaved. */
struct rc_kernel {
	void (*one)(const struct mesh *m, const struct rq *q, struct collector *cl);
	void (*seq)(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n);
	void (*many)(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n);
};

/* isa's kernel (AUTO: the fastest supported), or NULL when this CPU lacks
 * it. */
static const struct rc_kernel *kernel_for(enum rc_isa isa)
{
	static const struct rc_kernel
		scalar = { rc_traverse_scalar, rc_traverse_seq_scalar, rc_traverse_many_scalar },
		sse2 = { rc_traverse_sse2, rc_traverse_seq_sse2, rc_traverse_many_sse2 },
		avx2 = { rc_traverse_avx2, rc_traverse_seq_avx2, rc_traverse_many_avx2 },
		avx512 = { rc_traverse_avx512, rc_traverse_seq_avx512, rc_traverse_many_avx512 };

	if (isa == RC_ISA_AUTO)
		isa = best_isa();
	else if (!rc_isa_supported(isa))
		return NULL;
	return isa == RC_ISA_AVX512 ? &avx512 : isa == RC_ISA_AVX2 ? &avx2 :
	       isa == RC_ISA_SSE2 ? &sse2 : &scalar;
}

/* mesh_raycast's rule for a ray it answers at all: origin and direction
 * finite, the direction not zero, tmax > 0 (not NaN). */
#ifdef __SSE2__
static int ray_valid(const struct ray *ray)
{
	/* (ox, oy, oz, dx) and (dx, dy, dz, tmax): finite when the exponent
	 * bits are not all ones (the sixteen bytes after origin stay inside
	 * the ray) */
	__m128i o = _mm_loadu_si128((const __m128i *)&ray->origin);
	__m128i d = _mm_loadu_si128((const __m128i *)&ray->dir);
	__m128i e = _mm_set1_epi32(0x7f800000);
	__m128i inf = _mm_or_si128(_mm_cmpeq_epi32(_mm_and_si128(o, e), e),
				   _mm_cmpeq_epi32(_mm_and_si128(d, e), e));
	int nonzero = _mm_movemask_ps(_mm_cmpneq_ps(_mm_castsi128_ps(d), _mm_setzero_ps())) & 7;

	return !(_mm_movemask_ps(_mm_castsi128_ps(inf)) & 7) && nonzero && ray->tmax > 0;
}
#else
static int ray_valid(const struct ray *ray)
{
	return v3_isfinite(ray->origin) && v3_isfinite(ray->dir) && !isnan(ray->tmax) &&
	       ray->tmax > 0 && !(ray->dir.x == 0 && ray->dir.y == 0 && ray->dir.z == 0);
}
#endif

/* A closest or any query for a valid ray through kernel k: 1 when it hits
 * (then *h holds the hit, bare when opts->bare_hits). */
static inline int cast_first(const struct mesh *m, const struct ray *ray,
			     const struct query_opts *opts, const struct rc_kernel *k,
			     struct hit *h)
{
	struct collector cl = { .mode = opts->mode };
	struct rq q;

	if (m->nprim == 0 || !rq_init(&q, m, ray, opts))
		return 0;
	k->one(m, &q, &cl);
	if (!cl.found)
		return 0;
	fill_answer(m, &q, &cl.best, opts, h);
	return 1;
}

enum core_result mesh_raycast_isa(const struct mesh *m, const struct ray *ray,
				  const struct query_opts *opts, struct hit *hits,
				  uint32_t *nhits, uint32_t *total, enum rc_isa isa)
{
	const struct rc_kernel *k = kernel_for(isa);
	struct collector cl = { .mode = HIT_ALL };
	struct rq q;
	uint32_t i;
	int owned = 0;

	*nhits = 0;
	if (total)
		*total = 0;
	if (!ray_valid(ray) || !k)
		return CORE_EINVAL;
	if (opts->mode != HIT_ALL) {
		*nhits = (uint32_t)cast_first(m, ray, opts, k, hits);
		if (total)
			*total = *nhits;
		return CORE_OK;
	}
	if (opts->max_hits == 0)
		return CORE_EINVAL;
	if (m->nprim == 0 || !rq_init(&q, m, ray, opts))
		return CORE_OK;
	cl.cap = opts->max_hits;
	if (opts->scratch && opts->scratch_bytes >= MESH_ALL_SCRATCH_BYTES(cl.cap)) {
		cl.all = opts->scratch;
	} else {
		cl.all = malloc(sizeof(*cl.all) * cl.cap);
		if (!cl.all)
			return CORE_ENOMEM;
		owned = 1;
	}
	k->one(m, &q, &cl);
	qsort(cl.all, cl.n, sizeof(*cl.all), cmp_cand);
	for (i = 0; i < cl.n; i++)
		fill_answer(m, &q, &cl.all[i], opts, &hits[i]);
	*nhits = cl.n;
	if (total)
		*total = cl.total;
	if (owned)
		free(cl.all);
	return CORE_OK;
}

enum core_result mesh_raycast(const struct mesh *m, const struct ray *ray,
			      const struct query_opts *opts, struct hit *hits,
			      uint32_t *nhits, uint32_t *total)
{
	return mesh_raycast_isa(m, ray, opts, hits, nhits, total, RC_ISA_AUTO);
}

/* Rays a batch sets up at once: their rq and collectors live on the stack
 * (256 bytes a ray). */
#define RC_BATCH_CHUNK 64

/*
 * Where a batch is walked as ray streams (the AVX-512 kernel only): on a
 * mesh under RC_STREAM_*_BYTES, a batch of RC_STREAM_*_MIN rays or more.
 * Measured against one walk after another (collisiond-bench, the
 * harness's bunny rays, two runs each; docs/performance-log.md), closest /
 * any: the bunny subdivided, 1.0 MB 1.26x / 1.54x, 2.3 MB 1.07x / 1.58x,
 * 3.3 MB 0.97x / 1.49x, 4.2 MB 0.91x / 1.38x, 7.0 MB 0.73x / 1.24x, 8.9 MB
 * 0.71x / 1.14x, 17 MB (against interleaved walks) 0.46x / 0.59x; the
 * bunny (0.26 MB) in batches of 128 rays 0.43x / 0.85x, 256 0.52x / 1.03x,
 * 512 0.65x / 1.21x, 1024 0.84x / 1.37x, 2048 1.06x / 1.50x, 65 536 1.50x
 * / 1.59x.
 */
#define RC_STREAM_CLOSEST_BYTES (3u << 20)
#define RC_STREAM_ANY_BYTES (8u << 20)
#define RC_STREAM_CLOSEST_MIN 2048
#define RC_STREAM_ANY_MIN 256

/* A thread's room for streams: allocated at its first stream (5.5 MiB),
 * freed when the thread exits (room_key's destructor; a stream cast by a
 * later key's destructor gets a new room, freed at the next round). */
struct stream_room {
	struct rq *q;		/* RC_STREAM_RAYS each */
	struct collector *cl;
	uint32_t *at;
	struct rc_stream st;
};

static pthread_key_t room_key;
static pthread_once_t room_once = PTHREAD_ONCE_INIT;
static int room_key_ok;
static __thread struct stream_room *room_mine;
static __thread size_t arena_limit;

void rc_stream_arena_limit(size_t entries)
{
	arena_limit = entries < RC_STREAM_ARENA ? entries : 0;
}

static void room_free(void *p)
{
	struct stream_room *r = p;

	if (!r)
		return;
	/* the destructor runs on r's thread: no stream there takes r again */
	if (room_mine == r)
		room_mine = NULL;
	free(r->q);
	free(r->cl);
	free(r->at);
	free(r->st.ray);
	free(r->st.id);
	free(r->st.tn);
	free(r->st.stack);
	free(r);
}

static void room_key_init(void)
{
	room_key_ok = pthread_key_create(&room_key, room_free) == 0;
}

/* This thread's stream room, NULL when it cannot be had (out of memory). */
static struct stream_room *stream_room(void)
{
	struct stream_room *r = room_mine;

	if (r)
		return r;
	pthread_once(&room_once, room_key_init);
	if (!room_key_ok || !(r = calloc(1, sizeof(*r))))
		return NULL;
	r->q = aligned_alloc(64, RC_STREAM_RAYS * sizeof(*r->q));
	r->cl = malloc(RC_STREAM_RAYS * sizeof(*r->cl));
	r->at = malloc(RC_STREAM_RAYS * sizeof(*r->at));
	r->st.ray = aligned_alloc(64, RC_STREAM_RAYS * sizeof(*r->st.ray));
	r->st.id = malloc(RC_STREAM_ARENA * sizeof(*r->st.id));
	r->st.tn = malloc(RC_STREAM_ARENA * sizeof(*r->st.tn));
	r->st.stack = malloc(RC_STREAM_STACK * sizeof(*r->st.stack));
	if (!r->q || !r->cl || !r->at || !r->st.ray || !r->st.id || !r->st.tn || !r->st.stack ||
	    pthread_setspecific(room_key, r) != 0) {
		room_free(r);
		return NULL;
	}
	room_mine = r;
	return r;
}

/* Rays [s, e) of a batch set up: res and nhits written for each, the valid
 * rays that meet the mesh's box into q, cl and at (their place after s);
 * returns how many. */
static size_t batch_setup(const struct mesh *m, const struct ray *rays, size_t s, size_t e,
			  const struct query_opts *opts, struct rq *q, struct collector *cl,
			  uint32_t *at, uint32_t *nhits, enum core_result *res)
{
	size_t k = 0;

	for (size_t i = s; i < e; i++) {
		nhits[i] = 0;
		res[i] = ray_valid(&rays[i]) ? CORE_OK : CORE_EINVAL;
		if (res[i] == CORE_OK && m->nprim && rq_init(&q[k], m, &rays[i], opts)) {
			cl[k] = (struct collector){ .mode = opts->mode };
			at[k++] = (uint32_t)(i - s);
		}
	}
	return k;
}

/* The answers of the k queries batch_setup set up from s. */
static void batch_answer(const struct mesh *m, const struct rq *q, const struct collector *cl,
			 const uint32_t *at, size_t k, size_t s, const struct query_opts *opts,
			 struct hit *hits, uint32_t *nhits)
{
	for (size_t j = 0; j < k; j++) {
		if (!cl[j].found)
			continue;
		fill_answer(m, &q[j], &cl[j].best, opts, &hits[s + at[j]]);
		nhits[s + at[j]] = 1;
	}
}

/* 1 when a batch of n rays on m is best walked as streams by kernel k. */
static int stream_pays(const struct mesh *m, size_t n, enum hit_mode mode,
		       const struct rc_kernel *k)
{
	if (k != kernel_for(RC_ISA_AVX512))
		return 0;
	return mode == HIT_ANY ? n >= RC_STREAM_ANY_MIN && m->memory_bytes < RC_STREAM_ANY_BYTES :
	       n >= RC_STREAM_CLOSEST_MIN && m->memory_bytes < RC_STREAM_CLOSEST_BYTES;
}

enum core_result mesh_raycast_batch_isa(const struct mesh *m, const struct ray *rays, size_t n,
					const struct query_opts *opts, struct hit *hits,
					uint32_t *nhits, enum core_result *res, enum rc_isa isa,
					int walks)
{
	const struct rc_kernel *kern = kernel_for(isa);
	void (*walk)(const struct mesh *, const struct rq *, struct collector *, size_t);
	struct stream_room *room = NULL;
	struct rq q[RC_BATCH_CHUNK];
	struct collector cl[RC_BATCH_CHUNK];
	uint32_t at[RC_BATCH_CHUNK];

	if (opts->mode == HIT_ALL || !kern)
		return CORE_EINVAL;
	if (walks == RC_WALK_STREAM && kern != kernel_for(RC_ISA_AVX512))
		return CORE_EINVAL;
	if (walks == 0)
		walks = stream_pays(m, n, opts->mode, kern) ? RC_WALK_STREAM :
			m->memory_bytes < MESH_BATCH_WALK_BYTES ? 1 : RC_WALKS;
	if (walks == RC_WALK_STREAM && (room = stream_room()) != NULL) {
		/* any queries: half the rays a stream (their lists spread
		 * wider; 1.03x against full streams) */
		size_t chunk = opts->mode == HIT_ANY ? RC_STREAM_RAYS / 2 : RC_STREAM_RAYS;

		room->st.cap = arena_limit ? arena_limit : RC_STREAM_ARENA;
		for (size_t s = 0; s < n; s += chunk) {
			size_t e = n - s < chunk ? n : s + chunk;
			size_t k = batch_setup(m, rays, s, e, opts, room->q, room->cl, room->at,
					       nhits, res);

			rc_stream_avx512(m, room->q, room->cl, k, &room->st);
			batch_answer(m, room->q, room->cl, room->at, k, s, opts, hits, nhits);
		}
		return CORE_OK;
	}
	/* one query after another (a call per chunk, not per ray: 1.00x
	 * closest, 1.03x any-hit on bunny against a cast_first per ray), or
	 * the walks interleaved (a stream without its room: one after another) */
	walk = walks == RC_WALKS ? kern->many : kern->seq;
	for (size_t s = 0; s < n; s += RC_BATCH_CHUNK) {
		size_t e = n - s < RC_BATCH_CHUNK ? n : s + RC_BATCH_CHUNK;
		size_t k = batch_setup(m, rays, s, e, opts, q, cl, at, nhits, res);

		walk(m, q, cl, k);
		batch_answer(m, q, cl, at, k, s, opts, hits, nhits);
	}
	return CORE_OK;
}

enum core_result mesh_raycast_batch(const struct mesh *m, const struct ray *rays, size_t n,
				    const struct query_opts *opts, struct hit *hits,
				    uint32_t *nhits, enum core_result *res)
{
	return mesh_raycast_batch_isa(m, rays, n, opts, hits, nhits, res, RC_ISA_AUTO, 0);
}
