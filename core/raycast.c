/* raycast.c - ray and segment queries: BVH4 traversal and the watertight
 * collision-matrix triangle test.
 *
 * The triangle test runs in float on the collision matrices (mesh_impl.h):
 * the segment j -> k (the ray clipped to the mesh bounds, relative to
 * mesh->center) has local coordinates (u, v, z) at each end, and the line
 * crosses the triangle where the three 2x2 determinants
 *   U = zj uk - zk uj,  V = zj vk - zk vj,  W = (zj - zk) - U - V
 * share a sign (U, V, W are the barycentrics of b, c, a times zj - zk).
 * Each float quantity carries a bound on its rounding error, derived from
 * the matrix's row norms and the size of the coordinates (see tri_test).
 * When every sign is certain the float answer is the exact answer; when one
 * is not (the ray passes within a few ulps of an edge, a vertex or the plane)
 * the test is redone without rounding by exact_ray_triangle(). Hit/miss is
 * therefore exact for the float ray and float vertices, and a ray aimed at an
 * edge or vertex shared by two triangles cannot slip between them.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "exact.h"
#include "mesh_impl.h"

/* Rounding bound factor: 16 float ulps covers the matrix's own rounding, the
 * rounding of the segment ends and of the evaluation (a first-order sum of
 * at most 7 unit roundoffs, doubled for the second-order terms). */
#define GAMMA 0x1p-20f
#define EPS3 0x1.8p-23f		/* 3 unit roundoffs, for products */
#define BOX_SLACK (1.0f + 0x1p-20f)
#define STACK_MAX 256		/* BVH4 depth is below 64 for any mesh */

/* fminf/fmaxf are NaN-aware library calls without -ffast-math; nothing here
 * is NaN (rays are validated), so one minss/maxss each will do. */
#define MINF(a, b) ((a) < (b) ? (a) : (b))
#define MAXF(a, b) ((a) > (b) ? (a) : (b))

struct rq {
	/* the ray as given (mesh space) */
	vec3 o, d;
	float tmax;		/* the caller's limit */
	float L;		/* clip length: tmax or the exit from the root box */
	float inv[3];
	int near_lo[3];		/* 1: the near plane of axis k is lo */
	/* segment ends relative to center, permuted per dominant axis k:
	 * jp[k] = (p_i, p_j, p_k) with i = (k+1)%3, j = (k+2)%3 */
	float jp[3][3], kp[3][3];
	float P;		/* max |coordinate| of j and k */
	int cull, flip;
};

struct cand {
	float t, u, v;
	uint32_t tri;
	int front;
};

static void rq_permute(float out[3][3], vec3 p)
{
	float c[3] = { p.x, p.y, p.z };

	for (int k = 0; k < 3; k++) {
		out[k][0] = c[(k + 1) % 3];
		out[k][1] = c[(k + 2) % 3];
		out[k][2] = c[k];
	}
}

/* Slab test against the root box; 0 when the ray misses the mesh. */
static int rq_init(struct rq *q, const struct mesh *m, const struct ray *r,
		   const struct query_opts *opts)
{
	float dv[3] = { r->dir.x, r->dir.y, r->dir.z };
	float ov[3] = { r->origin.x, r->origin.y, r->origin.z };
	float lo[3] = { m->bvh.lo.x, m->bvh.lo.y, m->bvh.lo.z };
	float hi[3] = { m->bvh.hi.x, m->bvh.hi.y, m->bvh.hi.z };
	float tn = 0, tf = r->tmax;
	vec3 j, k;

	q->o = r->origin;
	q->d = r->dir;
	q->tmax = r->tmax;
	q->cull = opts->cull_backfaces;
	q->flip = opts->flip_winding;
	for (int a = 0; a < 3; a++) {
		float t0, t1;

		/* |1/d| capped at 2^126: no inf * 0; the padded boxes keep this
		 * conservative (bvh.h) */
		if (fabsf(dv[a]) < 0x1p-126f)
			q->inv[a] = copysignf(0x1p126f, dv[a]);
		else
			q->inv[a] = 1.0f / dv[a];
		q->near_lo[a] = q->inv[a] >= 0;
		t0 = ((q->near_lo[a] ? lo[a] : hi[a]) - ov[a]) * q->inv[a];
		t1 = ((q->near_lo[a] ? hi[a] : lo[a]) - ov[a]) * q->inv[a];
		tn = MAXF(tn, t0);
		tf = MINF(tf, t1 * BOX_SLACK);
	}
	if (!(tn <= tf))
		return 0;
	q->L = isfinite(tf) ? tf : r->tmax;
	if (!isfinite(q->L))
		return 0;
	j = v3_sub(r->origin, m->center);
	k = v3_add(j, v3_scale(r->dir, q->L));
	rq_permute(q->jp, j);
	rq_permute(q->kp, k);
	q->P = MAXF(MAXF(MAXF(fabsf(j.x), fabsf(j.y)), MAXF(fabsf(j.z), fabsf(k.x))),
		     MAXF(fabsf(k.y), fabsf(k.z)));
	return 1;
}

/* The exact slow path for primitive rec. */
static int tri_exact(const struct mesh *m, const struct rq *q, uint32_t id, struct cand *c)
{
	uint32_t tri = id >> PRIM_SHIFT;
	struct exact_hit h;
	vec3 a, b, cc;

	mesh_triangle(m, tri, &a, &b, &cc);
	if (!exact_ray_triangle(q->o, q->d, q->tmax, a, b, cc, 0, &h))
		return 0;
	c->front = h.front ^ q->flip;
	if (q->cull && !c->front)
		return 0;
	c->t = (float)h.t;
	c->u = (float)h.u;
	c->v = (float)h.v;
	c->tri = tri;
	return 1;
}

/*
 * Test primitive rec. Returns 1 and fills *c on a hit (0 <= t <= tmax).
 * [tleaf, tlimit] only allows an early miss for a plane crossing certainly
 * outside it: before the leaf's box, or beyond its exit or the closest hit
 * so far. A hit on the triangle lies in the leaf's box, so this is safe.
 */
static int tri_test(const struct mesh *m, const struct rq *q, uint32_t rec, float tleaf,
		    float tlimit, struct cand *c)
{
	const float *r = m->prims[rec].mat;
	uint32_t id = m->prims[rec].id;
	const float *J, *K;
	float zj, zk, ez, s2, s, T, e, uj, uk, vj, vk, U, V, W, den, bU, bV, bW;
	int k = id & PRIM_AXIS_MASK;

	if (id & PRIM_EXACT)
		goto slow;
	J = q->jp[k];
	K = q->kp[k];
	zj = r[6] * J[0] + r[7] * J[1] + J[2] + r[8];
	zk = r[6] * K[0] + r[7] * K[1] + K[2] + r[8];
	s2 = fabsf(r[6]) + fabsf(r[7]) + 1.0f;
	ez = GAMMA * (s2 * q->P + fabsf(r[8]));
	if ((zj > 0) == (zk > 0) && zj != 0 && zk != 0) {
		/* same side: a miss unless an end is within rounding of the plane */
		if (fabsf(zj) > ez && fabsf(zk) > ez)
			return 0;
		goto slow;
	}
	den = zj - zk;
	/* the crossing's true fraction lies in [(|zj|-ez) / (|den|+2ez),
	 * (|zj|+ez) / (|den|-2ez)] */
	if ((fabsf(zj) - ez) * q->L > tlimit * (fabsf(den) + 2 * ez) * BOX_SLACK)
		return 0;	/* certainly beyond the leaf or the closest hit */
	if (fabsf(den) > 4 * ez &&
	    (fabsf(zj) + ez) * q->L * BOX_SLACK < tleaf * (fabsf(den) - 2 * ez))
		return 0;	/* certainly before the leaf's box */
	uj = r[0] * J[0] + r[1] * J[1] + r[2];
	uk = r[0] * K[0] + r[1] * K[1] + r[2];
	vj = r[3] * J[0] + r[4] * J[1] + r[5];
	vk = r[3] * K[0] + r[4] * K[1] + r[5];
	U = zj * uk - zk * uj;
	V = zj * vk - zk * vj;
	W = den - U - V;
	s = MAXF(MAXF(fabsf(r[0]) + fabsf(r[1]), fabsf(r[3]) + fabsf(r[4])), s2);
	T = MAXF(MAXF(fabsf(r[2]), fabsf(r[5])), fabsf(r[8]));
	e = GAMMA * (s * q->P + T);
	bU = e * (fabsf(zj) + fabsf(zk) + fabsf(uj) + fabsf(uk) + 2 * e) +
	     EPS3 * (fabsf(zj * uk) + fabsf(zk * uj));
	bV = e * (fabsf(zj) + fabsf(zk) + fabsf(vj) + fabsf(vk) + 2 * e) +
	     EPS3 * (fabsf(zj * vk) + fabsf(zk * vj));
	bW = 2 * e + bU + bV + EPS3 * (fabsf(zj) + fabsf(zk) + fabsf(U) + fabsf(V));
	if ((U < -bU || V < -bV || W < -bW) && (U > bU || V > bV || W > bW))
		return 0;	/* certainly outside an edge */
	if (!((U > bU && V > bV && W > bW) || (U < -bU && V < -bV && W < -bW)))
		goto slow;	/* near an edge or a vertex */
	if (fabsf(zj) <= ez || fabsf(zk) <= ez)
		goto slow;	/* starts or ends within rounding of the plane */
	c->front = ((den > 0) ^ !!(id & PRIM_NEG_NK)) ^ q->flip;
	if (q->cull && !c->front)
		return 0;
	/* a certain crossing lies inside the segment: clamp the rounded t */
	c->t = MINF(zj / den * q->L, q->L);
	c->u = U / den;
	c->v = V / den;
	c->tri = id >> PRIM_SHIFT;
	return 1;

slow:
	return tri_exact(m, q, id, c);
}

/* Entry and exit distances of the four children of nd (exits padded by
 * BOX_SLACK); returns the mask of those met with tnear <= tcur. */
static int node_hit4(const struct bvh4_node *nd, const struct rq *q, float tcur, float tn[4],
		     float tf[4])
{
#if defined(__SSE2__)
	__m128 tnear = _mm_setzero_ps(), tfar = _mm_set1_ps(tcur);
	__m128 slack = _mm_set1_ps(BOX_SLACK);
	float ov[3] = { q->o.x, q->o.y, q->o.z };

	for (int a = 0; a < 3; a++) {
		__m128 o = _mm_set1_ps(ov[a]), inv = _mm_set1_ps(q->inv[a]);
		__m128 lo = _mm_loadu_ps(nd->lo[a]), hi = _mm_loadu_ps(nd->hi[a]);
		__m128 n = q->near_lo[a] ? lo : hi, f = q->near_lo[a] ? hi : lo;

		tnear = _mm_max_ps(tnear, _mm_mul_ps(_mm_sub_ps(n, o), inv));
		tfar = _mm_min_ps(tfar, _mm_mul_ps(_mm_mul_ps(_mm_sub_ps(f, o), inv), slack));
	}
	_mm_storeu_ps(tn, tnear);
	_mm_storeu_ps(tf, tfar);
	return _mm_movemask_ps(_mm_cmple_ps(tnear, tfar));
#else
	float ov[3] = { q->o.x, q->o.y, q->o.z };
	int mask = 0;

	for (int c = 0; c < 4; c++) {
		float tnear = 0, tfar = tcur;

		for (int a = 0; a < 3; a++) {
			float n = q->near_lo[a] ? nd->lo[a][c] : nd->hi[a][c];
			float f = q->near_lo[a] ? nd->hi[a][c] : nd->lo[a][c];

			tnear = MAXF(tnear, (n - ov[a]) * q->inv[a]);
			tfar = MINF(tfar, (f - ov[a]) * q->inv[a] * BOX_SLACK);
		}
		tn[c] = tnear;
		tf[c] = tfar;
		mask |= (tnear <= tfar) << c;
	}
	return mask;
#endif
}

struct collector {
	enum hit_mode mode;
	struct cand best;	/* closest / any */
	int found;
	struct cand *all;	/* HIT_ALL: a max-heap of the max_hits nearest */
	uint32_t cap, n;
	uint32_t total;
};

static int cand_less(const struct cand *a, const struct cand *b)
{
	return a->t < b->t || (a->t == b->t && a->tri < b->tri);
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

/* Walk the BVH; leaves feed the collector. */
static void traverse(const struct mesh *m, const struct rq *q, struct collector *cl)
{
	uint32_t stack[STACK_MAX];
	float stack_t[STACK_MAX];
	int sp = 0;
	float tcur = q->L;

	stack[sp] = 0;
	stack_t[sp++] = 0;
	while (sp) {
		const struct bvh4_node *nd;
		float tn[4], tf[4];
		int mask, order[4], no = 0;

		sp--;
		if (stack_t[sp] > tcur)
			continue;
		nd = &m->bvh.nodes[stack[sp]];
		mask = node_hit4(nd, q, tcur, tn, tf);
		while (mask) {
			int c = __builtin_ctz(mask), p;

			mask &= mask - 1;
			if (nd->count[c]) {
				uint32_t end = nd->child[c] + nd->count[c];

				for (uint32_t rec = nd->child[c]; rec < end; rec++) {
					struct cand cd;

					if (!tri_test(m, q, rec, tn[c], MINF(tf[c], tcur), &cd))
						continue;
					if (cl->mode == HIT_ALL) {
						heap_push(cl, &cd);
						continue;
					}
					if (!cl->found || cand_less(&cd, &cl->best))
						cl->best = cd;
					cl->found = 1;
					if (cl->mode == HIT_ANY)
						return;
					tcur = cl->best.t;
				}
				continue;
			}
			/* insertion by distance: order[] nearest first */
			p = no++;
			while (p > 0 && tn[order[p - 1]] > tn[c]) {
				order[p] = order[p - 1];
				p--;
			}
			order[p] = c;
		}
		/* push far to near so the nearest pops first */
		for (int i = no - 1; i >= 0; i--) {
			if (sp >= STACK_MAX)
				return;	/* cannot happen: depth is bounded */
			stack[sp] = nd->child[order[i]];
			stack_t[sp++] = tn[order[i]];
			__builtin_prefetch(&m->bvh.nodes[nd->child[order[i]]]);
			__builtin_prefetch((const char *)&m->bvh.nodes[nd->child[order[i]]] + 64);
		}
	}
}

static void fill_hit(const struct mesh *m, const struct rq *q, const struct cand *c,
		     struct hit *h)
{
	vec3 a, b, cc;
	double e1[3], e2[3], n[3], len;

	mesh_triangle(m, c->tri, &a, &b, &cc);
	e1[0] = (double)b.x - a.x; e1[1] = (double)b.y - a.y; e1[2] = (double)b.z - a.z;
	e2[0] = (double)cc.x - a.x; e2[1] = (double)cc.y - a.y; e2[2] = (double)cc.z - a.z;
	n[0] = e1[1] * e2[2] - e1[2] * e2[1];
	n[1] = e1[2] * e2[0] - e1[0] * e2[2];
	n[2] = e1[0] * e2[1] - e1[1] * e2[0];
	len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
	h->t = c->t;
	h->point = v3((float)((double)q->o.x + (double)c->t * q->d.x),
		      (float)((double)q->o.y + (double)c->t * q->d.y),
		      (float)((double)q->o.z + (double)c->t * q->d.z));
	h->normal = v3((float)(n[0] / len), (float)(n[1] / len), (float)(n[2] / len));
	h->triangle = c->tri;
	h->u = c->u;
	h->v = c->v;
	h->front_face = c->front;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return cand_less(x, y) ? -1 : cand_less(y, x) ? 1 : 0;
}

enum core_result mesh_raycast(const struct mesh *m, const struct ray *ray,
			      const struct query_opts *opts, struct hit *hits,
			      uint32_t *nhits, uint32_t *total)
{
	struct collector cl = { .mode = opts->mode };
	struct rq q;
	uint32_t i;

	*nhits = 0;
	if (total)
		*total = 0;
	if (!v3_isfinite(ray->origin) || !v3_isfinite(ray->dir) || isnan(ray->tmax) ||
	    !(ray->tmax > 0) || (ray->dir.x == 0 && ray->dir.y == 0 && ray->dir.z == 0))
		return CORE_EINVAL;
	if (opts->mode == HIT_ALL && opts->max_hits == 0)
		return CORE_EINVAL;
	if (m->nprim == 0 || !rq_init(&q, m, ray, opts))
		return CORE_OK;
	if (opts->mode == HIT_ALL) {
		cl.cap = opts->max_hits;
		cl.all = malloc(sizeof(*cl.all) * cl.cap);
		if (!cl.all)
			return CORE_ENOMEM;
	}
	traverse(m, &q, &cl);
	if (opts->mode == HIT_ALL) {
		qsort(cl.all, cl.n, sizeof(*cl.all), cmp_cand);
		for (i = 0; i < cl.n; i++)
			fill_hit(m, &q, &cl.all[i], &hits[i]);
		*nhits = cl.n;
		if (total)
			*total = cl.total;
		free(cl.all);
		return CORE_OK;
	}
	if (cl.found) {
		fill_hit(m, &q, &cl.best, &hits[0]);
		*nhits = 1;
		if (total)
			*total = 1;
	}
	return CORE_OK;
}
