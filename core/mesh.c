/* mesh.c - building immutable meshes: validation, collision matrices, BVH,
 * memory accounting and reference counting. Queries live in raycast.c and
 * overlap.c.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigmem.h"
#include "exact.h"
#include "membudget.h"
#include "mesh_impl.h"
#include "par.h"

/* Below this sine of the angle between two edges the double-precision
 * inverse is not trusted to float accuracy: such slivers use the exact test. */
#define SLIVER_SINE 1e-6

static double now_ms(void)
{
	struct timespec ts;

	timespec_get(&ts, TIME_UTC);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void mesh_free(struct mesh *m)
{
	free(m->xyz);
	free(m->idx);
	free(m->prims);
	bvh_release(&m->bvh);
	membudget_give(m->budget_bytes);
	free(m);
}

struct mesh *mesh_ref(struct mesh *m)
{
	atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
	return m;
}

void mesh_unref(struct mesh *m)
{
	if (m && atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1)
		mesh_free(m);
}

void mesh_get_info(const struct mesh *m, struct mesh_info *info)
{
	info->vertices = m->nvert;
	info->triangles = m->ntri;
	info->degenerate = m->ndegen;
	info->min = m->min;
	info->max = m->max;
	info->memory_bytes = m->memory_bytes;
	info->build_ms = m->build_ms;
}

void mesh_triangle(const struct mesh *m, uint32_t tri, vec3 *a, vec3 *b, vec3 *c)
{
	const uint32_t *t = m->idx + 3 * (size_t)tri;

	*a = mesh_vertex(m, t[0]);
	*b = mesh_vertex(m, t[1]);
	*c = mesh_vertex(m, t[2]);
}

/*
 * The collision matrix of triangle abc (coordinates relative to center, in
 * double) into mat[9]; returns the flags. M = [b-a, c-a, e_k] with translation
 * a; its inverse has rows (e2 x e_k, e_k x e1, e1 x e2) / n_k.
 */
static uint32_t make_matrix(const double a[3], const double b[3], const double c[3], float *mat)
{
	double e1[3], e2[3], n[3], r[3][3], t[3], len1, len2, nlen;
	int k = 0, i, j;
	uint32_t flags;

	for (int q = 0; q < 3; q++) {
		e1[q] = b[q] - a[q];
		e2[q] = c[q] - a[q];
	}
	n[0] = e1[1] * e2[2] - e1[2] * e2[1];
	n[1] = e1[2] * e2[0] - e1[0] * e2[2];
	n[2] = e1[0] * e2[1] - e1[1] * e2[0];
	if (fabs(n[1]) > fabs(n[k]))
		k = 1;
	if (fabs(n[2]) > fabs(n[k]))
		k = 2;
	i = (k + 1) % 3;
	j = (k + 2) % 3;
	flags = (uint32_t)k | (n[k] < 0 ? PRIM_NEG_NK : 0);
	len1 = sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
	len2 = sqrt(e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2]);
	nlen = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
	if (!(nlen > SLIVER_SINE * len1 * len2)) {
		memset(mat, 0, 9 * sizeof(*mat));
		return flags | PRIM_EXACT;
	}
	/* rows of the inverse: r0 = e2 x e_k, r1 = e_k x e1, r2 = n, all / n_k */
	{
		double ek[3] = { 0, 0, 0 };

		ek[k] = 1;
		r[0][0] = e2[1] * ek[2] - e2[2] * ek[1];
		r[0][1] = e2[2] * ek[0] - e2[0] * ek[2];
		r[0][2] = e2[0] * ek[1] - e2[1] * ek[0];
		r[1][0] = ek[1] * e1[2] - ek[2] * e1[1];
		r[1][1] = ek[2] * e1[0] - ek[0] * e1[2];
		r[1][2] = ek[0] * e1[1] - ek[1] * e1[0];
	}
	for (int q = 0; q < 3; q++) {
		r[0][q] /= n[k];
		r[1][q] /= n[k];
		r[2][q] = n[q] / n[k];
	}
	for (int row = 0; row < 3; row++)
		t[row] = -(r[row][0] * a[0] + r[row][1] * a[1] + r[row][2] * a[2]);
	for (int row = 0; row < 3; row++) {
		mat[3 * row] = (float)r[row][i];
		mat[3 * row + 1] = (float)r[row][j];
		mat[3 * row + 2] = (float)t[row];
	}
	for (int q = 0; q < 9; q++)
		if (!isfinite(mat[q]))
			return flags | PRIM_EXACT;
	return flags;
}

/* Exact zero-area test, with a cheap double filter in front of it. */
static int degenerate(vec3 a, vec3 b, vec3 c)
{
	double e1[3] = { (double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z };
	double e2[3] = { (double)c.x - a.x, (double)c.y - a.y, (double)c.z - a.z };
	double n0 = e1[1] * e2[2] - e1[2] * e2[1];
	double n1 = e1[2] * e2[0] - e1[0] * e2[2];
	double n2 = e1[0] * e2[1] - e1[1] * e2[0];
	double mag = (fabs(e1[0]) + fabs(e1[1]) + fabs(e1[2])) *
		     (fabs(e2[0]) + fabs(e2[1]) + fabs(e2[2]));

	if (fabs(n0) + fabs(n1) + fabs(n2) > 1e-12 * mag)
		return 0;
	return exact_triangle_degenerate(a, b, c);
}

/* The parallel passes of mesh_build: boxes of the non-degenerate triangles,
 * then the matrices in leaf order. */
struct build_ctx {
	struct mesh *m;
	struct bvh_prim *p;
	size_t count[PAR_MAX];	/* pass 1: primitives kept by each chunk */
	uint32_t *to;		/* p[i]'s place in m->prims (bvh_layout_leaves), or NULL: i */
};

/* Chunk [begin, end) of the triangles: its non-degenerate ones go to
 * p[begin ..], in order. */
static void pass_boxes(void *arg, int chunk, size_t begin, size_t end)
{
	struct build_ctx *b = arg;
	struct bvh_prim *p = b->p + begin;

	for (size_t i = begin; i < end; i++) {
		vec3 a, bb, c, lo, hi;

		mesh_triangle(b->m, (uint32_t)i, &a, &bb, &c);
		if (degenerate(a, bb, c))
			continue;
		lo = v3_min(a, v3_min(bb, c));
		hi = v3_max(a, v3_max(bb, c));
		*p++ = (struct bvh_prim){ { lo.x, lo.y, lo.z }, (uint32_t)i, { hi.x, hi.y, hi.z }, 0 };
	}
	b->count[chunk] = (size_t)(p - (b->p + begin));
}

/* Primitives [begin, end) of p (the builder's order): their collision
 * matrices, at their places in the laid-out leaves (to). */
static void pass_matrices(void *arg, int chunk, size_t begin, size_t end)
{
	struct build_ctx *b = arg;
	struct mesh *m = b->m;

	(void)chunk;
	for (size_t i = begin; i < end; i++) {
		uint32_t tri = b->p[i].id, at = b->to ? b->to[i] : (uint32_t)i;
		const uint32_t *t = m->idx + 3 * (size_t)tri;
		struct prim_block *blk = &m->prims[at / PRIM_LANES];
		double p[3][3];
		float mat[9];

		for (int v = 0; v < 3; v++) {
			const float *q = m->xyz + 3 * (size_t)t[v];

			p[v][0] = (double)q[0] - m->center.x;
			p[v][1] = (double)q[1] - m->center.y;
			p[v][2] = (double)q[2] - m->center.z;
		}
		blk->id[at % PRIM_LANES] = (tri << PRIM_SHIFT) | make_matrix(p[0], p[1], p[2], mat);
		for (int q = 0; q < 9; q++)
			blk->mat[q][at % PRIM_LANES] = mat[q];
	}
}

enum core_result mesh_build(const float *xyz, size_t nvert, const uint32_t *idx,
			    size_t ntri, struct mesh **out, size_t *bad_index)
{
	double t0 = now_ms();
	struct mesh *m;
	struct build_ctx bc = { 0 };
	enum core_result rc = CORE_ENOMEM;
	size_t i, np = 0;
	int threads = par_threads(ntri);

	if (nvert == 0 || ntri == 0)
		return CORE_EEMPTY;
	if (ntri > MESH_MAX_TRIANGLES || nvert > UINT32_MAX ||
	    nvert > SIZE_MAX / (3 * sizeof(float)) ||
	    ntri / PRIM_LANES + 2 > SIZE_MAX / sizeof(struct prim_block) ||
	    ntri > SIZE_MAX / sizeof(struct bvh_prim))
		return CORE_ETOOBIG;
	for (i = 0; i < 3 * nvert; i++)
		if (!isfinite(xyz[i]))
			return CORE_ENONFINITE;
	for (i = 0; i < 3 * ntri; i++) {
		if (idx[i] >= nvert) {
			if (bad_index)
				*bad_index = i / 3;
			return CORE_EINDEX;
		}
	}
	/* at least the vertices and indices kept: no build when they cannot fit */
	if (!membudget_fits(sizeof(*m) + 3 * sizeof(float) * nvert + 3 * sizeof(uint32_t) * ntri))
		return CORE_ENOSPACE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return CORE_ENOMEM;
	atomic_init(&m->refs, 1);
	m->nvert = nvert;
	m->ntri = ntri;
	m->xyz = bigmem_alloc(3 * sizeof(float) * nvert, 16);
	m->idx = bigmem_alloc(3 * sizeof(uint32_t) * ntri, 16);
	bc.p = bigmem_alloc(sizeof(*bc.p) * ntri, 16);
	if (!m->xyz || !m->idx || !bc.p)
		goto out_free;
	memcpy(m->xyz, xyz, 3 * sizeof(float) * nvert);
	memcpy(m->idx, idx, 3 * sizeof(uint32_t) * ntri);
	bc.m = m;

	m->min = v3(FLT_MAX, FLT_MAX, FLT_MAX);
	m->max = v3(-FLT_MAX, -FLT_MAX, -FLT_MAX);
	for (i = 0; i < nvert; i++) {
		vec3 p = mesh_vertex(m, (uint32_t)i);

		m->min = v3_min(m->min, p);
		m->max = v3_max(m->max, p);
	}
	m->center = v3(0.5f * m->min.x + 0.5f * m->max.x, 0.5f * m->min.y + 0.5f * m->max.y,
		       0.5f * m->min.z + 0.5f * m->max.z);

	par_for(ntri, threads, pass_boxes, &bc);
	for (int c = 0; c < threads; c++) {
		size_t begin, end;

		par_chunk(ntri, threads, c, &begin, &end);
		memmove(bc.p + np, bc.p + begin, bc.count[c] * sizeof(*bc.p));
		np += bc.count[c];
	}
	m->nprim = np;
	m->ndegen = ntri - np;
	if (np) {
		size_t nblocks = np / PRIM_LANES + 2;

		rc = bvh_build(bc.p, np, threads, &m->bvh);
		if (rc != CORE_OK)
			goto out_free;
		/* the eight-lane kernels read two blocks from a leaf's first;
		 * without the memory for it, the builder's layout serves */
		bc.to = bigmem_alloc(np * sizeof(*bc.to), 16);
		if (bc.to && bvh_layout_leaves(&m->bvh, np, PRIM_LANES, 2 * PRIM_LANES, bc.to)) {
			free(bc.to);
			bc.to = NULL;
		}
		/* on a cache-line boundary: a leaf's two or three 160-byte blocks
		 * then span one line fewer half the time (a plain malloc
		 * starts 16 bytes into a line). Lanes from np on (the last block's rest
		 * and the spare block) are zero; pass_matrices fills the others.
		 * np <= 2^28 (bvh_build): the size cannot overflow. */
		m->prims = bigmem_alloc(nblocks * sizeof(*m->prims), 64);
		rc = CORE_ENOMEM;
		if (!m->prims)
			goto out_free;
		memset(&m->prims[np / PRIM_LANES], 0,
		       (nblocks - np / PRIM_LANES) * sizeof(*m->prims));
		par_for(np, par_threads(np), pass_matrices, &bc);
		m->memory_bytes += sizeof(*m->prims) * nblocks + sizeof(struct bvh_node) * m->bvh.nnodes;
	}
	m->memory_bytes += sizeof(*m) + 3 * sizeof(float) * nvert + 3 * sizeof(uint32_t) * ntri;
	if (membudget_take(m->memory_bytes)) {
		rc = CORE_ENOSPACE;
		goto out_free;
	}
	m->budget_bytes = m->memory_bytes;
	free(bc.to);
	free(bc.p);
	m->build_ms = now_ms() - t0;
	*out = m;
	return CORE_OK;

out_free:
	free(bc.to);
	free(bc.p);
	mesh_free(m);
	return rc;
}
