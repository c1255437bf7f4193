/* test_raycast_kernels.c - Check suite for the traversal kernels and the
 * range of the exact path: every kernel (scalar, SSE2, AVX2 where the CPU has
 * it) against brute force with exact rationals and against each other
 * (bit-identical answers), batches against each ray alone (walks
 * interleaved or not), the BVH's depth bound, and coordinates across the
 * float range (2^-100 .. 2^100, 1e35) where every answer must be numeric and
 * exact. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "bvh_split.h"
#include "exact.h"
#include "mesh.h"
#include "raycast_impl.h"
#include "testgeom.h"

static const enum rc_isa kernels[] = { RC_ISA_SCALAR, RC_ISA_SSE2, RC_ISA_AVX2, RC_ISA_AVX512 };
#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))

/* closest hit over every triangle, decided by the GMP oracle */
struct brute {
	int hit;
	double t;
	uint32_t tri;
	uint32_t nall;
};

static struct brute brute_force(const struct tmesh *t, struct ray r, int cull)
{
	struct brute b = { 0, INFINITY, 0, 0 };

	for (size_t i = 0; i < t->ntri; i++) {
		const uint32_t *q = t->idx + 3 * i;
		vec3 a = tmesh_vertex(t, q[0]), bb = tmesh_vertex(t, q[1]), c = tmesh_vertex(t, q[2]);
		double th;
		struct exact_hit eh;

		if (!oracle_ray_triangle(r.origin, r.dir, isfinite(r.tmax) ? r.tmax : -1, a, bb, c, &th))
			continue;
		if (cull && !exact_ray_triangle(r.origin, r.dir, r.tmax, a, bb, c, 1, &eh))
			continue;
		b.nall++;
		if (!b.hit || th < b.t) {
			b.hit = 1;
			b.t = th;
			b.tri = (uint32_t)i;
		}
	}
	return b;
}

/* rays at vertices, at edge points, or anywhere in the box of half-size span
 * around center; a tenth along an axis (zero direction components: the slab
 * test's capped inverses, a ray in a grid's plane), a fifth of the others
 * not unit length (t in units of the direction's length) */
static struct ray aimed_ray(const struct tmesh *t, struct rng *r, vec3 center, double span,
			    int finite)
{
	struct ray ray;
	double kind = rng_unit(r);
	vec3 target;

	if (kind < 0.35) {
		target = tmesh_vertex(t, (uint32_t)(rng_next(r) % t->nvert));
	} else if (kind < 0.6) {
		const uint32_t *q = t->idx + 3 * (rng_next(r) % t->ntri);
		vec3 a = tmesh_vertex(t, q[0]), b = tmesh_vertex(t, q[1]);
		float s = rng_unit(r) < 0.5 ? 0.5f : (float)rng_unit(r);

		target = v3(a.x + s * (b.x - a.x), a.y + s * (b.y - a.y), a.z + s * (b.z - a.z));
	} else {
		target = v3((float)(center.x + rng_range(r, -span, span)),
			    (float)(center.y + rng_range(r, -span, span)),
			    (float)(center.z + rng_range(r, -span, span)));
	}
	if (rng_unit(r) < 0.1) {
		float c[3] = { 0, 0, 0 };
		uint64_t axis = rng_next(r) % 3;
		vec3 d;

		c[axis] = rng_unit(r) < 0.5 ? -1.0f : 1.0f;
		d = v3(c[0], c[1], c[2]);
		ray.origin = v3_sub(target, v3_scale(d, (float)(rng_range(r, 0.2, 3) * span)));
		ray.dir = d;
	} else {
		ray.origin = v3_add(target, v3_scale(rng_dir(r), (float)(rng_range(r, 0.2, 3) * span)));
		ray.dir = v3_normalize(v3_sub(target, ray.origin));
		if (rng_unit(r) < 0.2)
			ray.dir = v3_scale(ray.dir, (float)rng_range(r, 0.01, 100));
	}
	ray.tmax = finite ? (float)(rng_range(r, 0.1, 4) * span) : INFINITY;
	return ray;
}

static int finite_hit(const struct hit *h)
{
	return isfinite(h->t) && v3_isfinite(h->point) && v3_isfinite(h->normal) &&
	       isfinite(h->u) && isfinite(h->v);
}

/*
 * Every kernel on ray: closest, any and all against brute force, and the
 * kernels' answers bit-identical to the scalar one. scale: the size of the
 * geometry (for the distance tolerance).
 */
static void check_ray(const struct mesh *m, const struct tmesh *t, struct ray ray, int cull,
		      double scale, int ray_no)
{
	struct brute b = brute_force(t, ray, cull);
	struct hit ref = { 0 }, *all = malloc(sizeof(*all) * t->ntri), *ref_all;
	uint32_t ref_n = 0, ref_na = 0;

	ref_all = malloc(sizeof(*ref_all) * t->ntri);
	ck_assert_ptr_nonnull(all);
	ck_assert_ptr_nonnull(ref_all);
	for (size_t k = 0; k < NKERNELS; k++) {
		struct query_opts oc = { .mode = HIT_CLOSEST, .cull_backfaces = cull, .max_hits = 1 };
		struct query_opts oa = { .mode = HIT_ANY, .cull_backfaces = cull, .max_hits = 1 };
		struct query_opts ol = { .mode = HIT_ALL, .cull_backfaces = cull,
					 .max_hits = (uint32_t)t->ntri };
		struct hit h = { 0 }, ha = { 0 };
		uint32_t n, na, nl, total;

		if (!rc_isa_supported(kernels[k]))
			continue;
		ck_assert_int_eq(mesh_raycast_isa(m, &ray, &oc, &h, &n, NULL, kernels[k]), CORE_OK);
		ck_assert_msg((int)n == b.hit, "ray %d kernel %d: closest %u, brute force %d", ray_no,
			      (int)kernels[k], n, b.hit);
		if (n) {
			ck_assert_msg(finite_hit(&h), "ray %d kernel %d: non-finite answer", ray_no,
				      (int)kernels[k]);
			ck_assert_msg(fabs(h.t - b.t) <= 1e-4 * (b.t + scale / v3_dot(ray.dir, ray.dir)),
				      "ray %d kernel %d: t %.9g, exact %.9g", ray_no, (int)kernels[k],
				      h.t, b.t);
		}
		ck_assert_int_eq(mesh_raycast_isa(m, &ray, &oa, &ha, &na, NULL, kernels[k]), CORE_OK);
		ck_assert_int_eq((int)na, b.hit);
		ck_assert_int_eq(mesh_raycast_isa(m, &ray, &ol, all, &nl, &total, kernels[k]), CORE_OK);
		ck_assert_uint_eq(nl, b.nall);
		ck_assert_uint_eq(total, b.nall);
		if (k == 0) {
			ref = h;
			ref_n = n;
			ref_na = nl;
			memcpy(ref_all, all, sizeof(*all) * nl);
			continue;
		}
		/* bit-identical to the scalar kernel */
		ck_assert_uint_eq(n, ref_n);
		ck_assert_msg(!n || !memcmp(&h, &ref, sizeof(h)), "ray %d kernel %d differs from scalar",
			      ray_no, (int)kernels[k]);
		ck_assert_uint_eq(nl, ref_na);
		ck_assert(!memcmp(all, ref_all, sizeof(*all) * nl));
	}
	free(all);
	free(ref_all);
}

static void check_mesh(const struct tmesh *t, struct rng *r, int nrays, vec3 center, double span)
{
	struct mesh *m = tmesh_build(t);

	for (int i = 0; i < nrays; i++)
		check_ray(m, t, aimed_ray(t, r, center, span, i % 3 == 0), i % 4 == 1, span, i);
	mesh_unref(m);
}

START_TEST(kernels_match_brute_force_soup)
{
	/* leaves start anywhere in a block of four: every lane mask occurs */
	struct rng r = { 21000 + (uint64_t)_i };
	struct tmesh t;

	tmesh_soup(&t, 100 + 400 * (size_t)_i, 10, &r);
	check_mesh(&t, &r, 250, v3(0, 0, 0), 10);
	tmesh_release(&t);
}
END_TEST

START_TEST(kernels_match_brute_force_closed)
{
	struct rng r = { 22000 + (uint64_t)_i };
	struct tmesh t;

	tmesh_sphere(&t, 4 + 3 * _i, v3(1, -2, 0.5f), 3);
	check_mesh(&t, &r, 250, v3(1, -2, 0.5f), 3);
	tmesh_release(&t);
}
END_TEST

START_TEST(kernels_match_brute_force_grid)
{
	struct rng r = { 23000 + (uint64_t)_i };
	struct tmesh t;

	tmesh_grid(&t, 16, -8, 1, &r, _i ? 0.5f : 0);	/* flat: rays in the plane too */
	check_mesh(&t, &r, 250, v3(0, 0, 0), 8);
	tmesh_release(&t);
}
END_TEST

/* A 12 x 12 bumpy grid of cells of size cell (grid), and t: the grid and
 * one triangle far (far_tri: its vertices) that widens the mesh's box. */
static void grid_and_far_triangle(struct tmesh *grid, struct tmesh *t, struct rng *r, float cell,
				  float amp, const float far_tri[9])
{
	uint32_t v;

	tmesh_grid(grid, 12, -6, cell, r, amp);
	*t = *grid;
	t->nvert = grid->nvert + 3;
	t->ntri = grid->ntri + 1;
	t->xyz = malloc(sizeof(float) * 3 * t->nvert);
	t->idx = malloc(sizeof(uint32_t) * 3 * t->ntri);
	ck_assert_ptr_nonnull(t->xyz);
	ck_assert_ptr_nonnull(t->idx);
	memcpy(t->xyz, grid->xyz, sizeof(float) * 3 * grid->nvert);
	memcpy(t->idx, grid->idx, sizeof(uint32_t) * 3 * grid->ntri);
	memcpy(t->xyz + 3 * grid->nvert, far_tri, sizeof(float) * 9);
	v = (uint32_t)grid->nvert;
	t->idx[3 * grid->ntri] = v;
	t->idx[3 * grid->ntri + 1] = v + 1;
	t->idx[3 * grid->ntri + 2] = v + 2;
}

/* ---- small triangles in a large mesh (a 12 x 12 bumpy grid of unit cells
 * and one triangle 4000 away, so the segment ends' coordinates are
 * thousands of cells, where the float test leaves the most lanes to the
 * exact one), rays aimed within a few float errors of an edge, every kernel
 * against the oracle. With RC_GAMMA at u/8 it fails (a closest hit or a hit
 * count the oracle does not give); the errors that random rays meet stay
 * far below the count that RC_GAMMA covers (next test), so no test of rays
 * tells 10u from u/2: the count does. */
START_TEST(near_edge_rays_leave_no_wrong_sign)
{
	struct rng r = { 27000 + (uint64_t)_i };
	struct tmesh grid, t;
	struct mesh *m;
	const float far = 4000;
	const float far_tri[9] = { far, -far / 2, far, far + 1, -far / 2, far, far, -far / 2 + 1, far };

	grid_and_far_triangle(&grid, &t, &r, 1, 0.4f, far_tri);
	m = tmesh_build(&t);
	for (int i = 0; i < 150; i++) {
		const uint32_t *q = grid.idx + 3 * (rng_next(&r) % grid.ntri);
		int e = (int)(rng_next(&r) % 3);
		vec3 a = tmesh_vertex(&grid, q[e]), b = tmesh_vertex(&grid, q[(e + 1) % 3]);
		double s = rng_range(&r, 0.05, 0.95), p[3], side[3], len;
		double off = rng_range(&r, -30, 30) * 0x1p-24 * far;
		vec3 target, d;
		struct ray ray;

		/* a point of edge ab, moved off it across the edge (in the xz plane) */
		side[0] = -(double)(b.z - a.z);
		side[1] = 0;
		side[2] = (double)(b.x - a.x);
		len = sqrt(side[0] * side[0] + side[2] * side[2]);
		p[0] = a.x + s * (b.x - a.x) + off * side[0] / len;
		p[1] = a.y + s * (b.y - a.y);
		p[2] = a.z + s * (b.z - a.z) + off * side[2] / len;
		target = v3((float)p[0], (float)p[1], (float)p[2]);
		do {
			d = rng_dir(&r);
		} while (d.y < 0.3f);
		ray.origin = v3_add(target, v3_scale(d, (float)rng_range(&r, 1, 3000)));
		ray.dir = v3_normalize(v3_sub(target, ray.origin));
		ray.tmax = i % 2 ? INFINITY : (float)rng_range(&r, 1, 6000);
		check_ray(m, &t, ray, i % 4 == 1, 12, i);
	}
	mesh_unref(m);
	free(t.xyz);
	free(t.idx);
	tmesh_release(&grid);
}
END_TEST

/* ---- RC_GAMMA's count, measured: a segment end's local coordinates
 * computed as the kernels compute them (the ends as rq_init rounds them,
 * then each row in the kernels' order) against the same coordinates in long
 * double from the float vertices (errors near 2^-64, and the matrix's
 * cancellation near 2^-40 at the sliver limit: far below u). The first-order
 * count in raycast_impl.h says at most 9u (s P + T); RC_GAMMA is 10u. */
START_TEST(coordinate_errors_within_the_count)
{
	struct rng r = { 28000 + (uint64_t)_i };
	struct tmesh grid, t;
	struct mesh *m;
	double worst = 0;
	const long double u = 0x1p-24L;
	const float far_tri[9] = { 3000, -700, 2500, 3001, -700, 2500, 3000, -699, 2500 };

	grid_and_far_triangle(&grid, &t, &r, _i ? 0.01f : 1, _i ? 0.004f : 0.4f, far_tri);
	m = tmesh_build(&t);
	for (int i = 0; i < 20000; i++) {
		uint32_t rec = (uint32_t)(rng_next(&r) % m->nprim), id = prim_id(m, rec);
		uint32_t tri = id >> PRIM_SHIFT;
		int k = (int)(id & PRIM_AXIS_MASK), ii = (k + 1) % 3, jj = (k + 2) % 3;
		vec3 o = v3((float)rng_range(&r, -4000, 4000), (float)rng_range(&r, -4000, 4000),
			    (float)rng_range(&r, -4000, 4000));
		vec3 d = rng_dir(&r), j, kk, a, b, c;
		float L = (float)rng_range(&r, 0, 8000), f[2][3], mat[9], P, sc, T;
		long double end[2][3], A[3], e1[3], e2[3], nk, R[3][3];

		if (id & PRIM_EXACT)
			continue;
		for (int q = 0; q < 9; q++)
			mat[q] = prim_mat(m, rec, q);
		/* the ends as rq_init rounds them */
		j = v3_sub(o, m->center);
		kk = v3_add(j, v3_scale(d, L));
		memcpy(f[0], &j, sizeof(f[0]));
		memcpy(f[1], &kk, sizeof(f[1]));
		P = 0;
		for (int e = 0; e < 2; e++)
			for (int q = 0; q < 3; q++)
				P = fmaxf(P, fabsf(f[e][q]));
		sc = fmaxf(fmaxf(fabsf(mat[0]) + fabsf(mat[1]), fabsf(mat[3]) + fabsf(mat[4])),
			   fabsf(mat[6]) + fabsf(mat[7]) + 1);
		T = fmaxf(fmaxf(fabsf(mat[2]), fabsf(mat[5])), fabsf(mat[8]));
		/* the exact ends and the exact map, in long double */
		a = tmesh_vertex(&t, t.idx[3 * tri]);
		b = tmesh_vertex(&t, t.idx[3 * tri + 1]);
		c = tmesh_vertex(&t, t.idx[3 * tri + 2]);
		{
			float of[3] = { o.x, o.y, o.z }, df[3] = { d.x, d.y, d.z };
			float cf[3] = { m->center.x, m->center.y, m->center.z };
			float af[3] = { a.x, a.y, a.z }, bf[3] = { b.x, b.y, b.z };
			float cvf[3] = { c.x, c.y, c.z };

			for (int q = 0; q < 3; q++) {
				end[0][q] = (long double)of[q] - cf[q];
				end[1][q] = end[0][q] + (long double)df[q] * L;
				A[q] = (long double)af[q] - cf[q];
				e1[q] = (long double)bf[q] - af[q];
				e2[q] = (long double)cvf[q] - af[q];
			}
		}
		/* rows of the inverse (mesh.c): e2 x e_k, e_k x e1, n; over n_k */
		nk = e1[ii] * e2[jj] - e1[jj] * e2[ii];
		R[0][0] = e2[jj] / nk;
		R[0][1] = -e2[ii] / nk;
		R[1][0] = -e1[jj] / nk;
		R[1][1] = e1[ii] / nk;
		R[2][0] = (e1[jj] * e2[k] - e1[k] * e2[jj]) / nk;
		R[2][1] = (e1[k] * e2[ii] - e1[ii] * e2[k]) / nk;
		for (int row = 0; row < 3; row++)
			R[row][2] = -(R[row][0] * A[ii] + R[row][1] * A[jj] + (row == 2 ? A[k] : 0));
		for (int e = 0; e < 2; e++) {
			/* the kernels' order (raycast_kern.h) */
			float uf = mat[0] * f[e][ii] + mat[1] * f[e][jj] + mat[2];
			float vf = mat[3] * f[e][ii] + mat[4] * f[e][jj] + mat[5];
			float zf = mat[6] * f[e][ii] + mat[7] * f[e][jj] + f[e][k] + mat[8];
			long double ux = R[0][0] * end[e][ii] + R[0][1] * end[e][jj] + R[0][2];
			long double vx = R[1][0] * end[e][ii] + R[1][1] * end[e][jj] + R[1][2];
			long double zx = R[2][0] * end[e][ii] + R[2][1] * end[e][jj] + end[e][k] +
					 R[2][2];
			long double unit = u * ((long double)sc * P + T);
			double err = (double)(fmaxl(fabsl(uf - ux), fmaxl(fabsl(vf - vx),
									  fabsl(zf - zx))) / unit);

			worst = fmax(worst, err);
			ck_assert_msg(err <= 9, "prim %u: a coordinate off by %.2f u (s P + T)", rec,
				      err);
		}
	}
	fprintf(stderr, "coordinate_errors_within_the_count %d: worst %.2f u (s P + T) of 9\n", _i,
		worst);
	ck_assert(RC_GAMMA >= 0x1.2p-21f);	/* 9u, with room */
	mesh_unref(m);
	free(t.xyz);
	free(t.idx);
	tmesh_release(&grid);
}
END_TEST

/* ---- ties: each triangle three times (indices i, i + n, i + 2n, the same
 * float matrix, so the same float distance). Closest must answer the lowest
 * copy, whether the copies share a leaf pass or not, and all must list the
 * copies in index order; the single mesh is the reference. */
START_TEST(equal_distances_answer_the_lowest_index)
{
	struct rng r = { 26000 + (uint64_t)_i };
	struct tmesh one, three;
	struct mesh *m1, *m3;
	struct hit *all;

	tmesh_soup(&one, 60 + 140 * (size_t)_i, 10, &r);
	three = one;
	three.ntri = 3 * one.ntri;
	three.idx = malloc(sizeof(*three.idx) * 3 * three.ntri);
	all = malloc(sizeof(*all) * three.ntri);
	ck_assert_ptr_nonnull(three.idx);
	ck_assert_ptr_nonnull(all);
	for (int c = 0; c < 3; c++)
		memcpy(three.idx + (size_t)c * 3 * one.ntri, one.idx, sizeof(*one.idx) * 3 * one.ntri);
	m1 = tmesh_build(&one);
	m3 = tmesh_build(&three);
	for (int i = 0; i < 300; i++) {
		struct ray ray = aimed_ray(&one, &r, v3(0, 0, 0), 10, i % 3 == 0);
		int cull = i % 4 == 1;

		for (size_t k = 0; k < NKERNELS; k++) {
			struct query_opts oc = { .mode = HIT_CLOSEST, .cull_backfaces = cull,
						 .max_hits = 1 };
			struct query_opts ol = { .mode = HIT_ALL, .cull_backfaces = cull,
						 .max_hits = (uint32_t)three.ntri };
			struct hit h1, h3;
			uint32_t n1, n3, nl, total;

			if (!rc_isa_supported(kernels[k]))
				continue;
			ck_assert_int_eq(mesh_raycast_isa(m1, &ray, &oc, &h1, &n1, NULL, kernels[k]),
					 CORE_OK);
			ck_assert_int_eq(mesh_raycast_isa(m3, &ray, &oc, &h3, &n3, NULL, kernels[k]),
					 CORE_OK);
			ck_assert_uint_eq(n3, n1);
			ck_assert_msg(!n1 || !memcmp(&h1, &h3, sizeof(h1)),
				      "ray %d kernel %d: triangle %u of the copies, %u alone", i,
				      (int)kernels[k], h3.triangle, h1.triangle);
			ck_assert_int_eq(mesh_raycast_isa(m3, &ray, &ol, all, &nl, &total, kernels[k]),
					 CORE_OK);
			ck_assert_uint_eq(nl % 3, 0);
			for (uint32_t j = 1; j < nl; j++)
				ck_assert(all[j - 1].t < all[j].t ||
					  (all[j - 1].t == all[j].t &&
					   all[j - 1].triangle < all[j].triangle));
		}
	}
	mesh_unref(m1);
	mesh_unref(m3);
	free(all);
	free(three.idx);
	tmesh_release(&one);
}
END_TEST

/* ---- the float range: spheres of radius 2^e, e in [-100, 100], centred up
 * to 4 radii away; vertices and edge points aimed at exactly */
START_TEST(scale_sweep_numeric_and_exact)
{
	struct rng r = { 24000 + (uint64_t)_i };

	for (int s = 0; s < 12; s++) {
		int e = -100 + (int)(rng_next(&r) % 201);
		double radius;
		vec3 c;
		struct tmesh t;

		if (_i == 0 && s == 0)
			e = 100;	/* both ends for sure */
		if (_i == 1 && s == 0)
			e = -100;
		radius = ldexp(1, e);
		c = v3((float)(rng_range(&r, -4, 4) * radius), (float)(rng_range(&r, -4, 4) * radius),
		       (float)(rng_range(&r, -4, 4) * radius));
		tmesh_sphere(&t, 3, c, (float)radius);
		check_mesh(&t, &r, 40, c, radius);
		tmesh_release(&t);
	}
}
END_TEST

START_TEST(huge_triangle_through_vertex)
{
	/* issue 10: vertices at 1e35, a ray through one of them answered null */
	float xyz[9] = { 1e35f, 1e35f, 1e35f, -1e35f, 1e35f, 1e35f, 1e35f, -1e35f, 1e35f };
	uint32_t idx[3] = { 0, 1, 2 };
	struct tmesh t = { xyz, 3, idx, 1 };
	struct ray rays[] = {
		{ v3(1e35f, 1e35f, 2e35f), v3(0, 0, -1), INFINITY },		/* at vertex 0 */
		{ v3(0, 1e35f, 3e35f), v3(0, 0, -1), INFINITY },		/* at an edge */
		{ v3(0, 0, 0), v3(0.57735026f, 0.57735026f, 0.57735026f), INFINITY },
		{ v3(1e35f, 1e35f, -3e38f), v3(0, 0, 1), INFINITY },	/* from the far end */
		{ v3(FLT_MAX, FLT_MAX, FLT_MAX), v3(-1, -1, -1), INFINITY },
	};
	struct mesh *m = tmesh_build(&t);

	struct ray beyond = { v3(1e35f, 1e35f, -FLT_MAX), v3(0, 0, 1), INFINITY };
	struct query_opts o = { .mode = HIT_CLOSEST, .max_hits = 1 };
	struct hit h;
	uint32_t n = 1;

	for (size_t i = 0; i < sizeof(rays) / sizeof(rays[0]); i++)
		check_ray(m, &t, rays[i], 0, 1e35, (int)i);
	/* a hit at t > FLT_MAX has no float distance: not reported (mesh.h) */
	ck_assert_int_eq(mesh_raycast(m, &beyond, &o, &h, &n, NULL), CORE_OK);
	ck_assert_uint_eq(n, 0);
	mesh_unref(m);
}
END_TEST

START_TEST(depth_is_bounded)
{
	/* triangles at exponentially spaced positions (a hard case for SAH):
	 * the tree stays within the bound the traversal stack is sized for,
	 * and every kernel still equals brute force */
	size_t n = 3000;
	struct tmesh t;
	struct mesh *m;
	struct rng r = { 25000 };

	tmesh_deep(&t, n);
	m = tmesh_build(&t);
	ck_assert_uint_le(m->bvh.depth, BVH_MAX_DEPTH);
	for (int i = 0; i < 60; i++)
		check_ray(m, &t, aimed_ray(&t, &r, v3(0, 0, 0), 1, 0), 0, 1, i);
	mesh_unref(m);
	tmesh_release(&t);
}
END_TEST

START_TEST(median_split_halves)
{
	/* the split that bounds the depth (bvh.h): each half at most ceil(n/2),
	 * every centroid on the left no larger than any on the right along the
	 * axis of widest spread, bounds exact */
	struct rng r = { 28000 + (uint64_t)_i };
	uint32_t n = 2 + (uint32_t)(rng_next(&r) % 5000);
	struct bvh_prim *p = malloc(sizeof(*p) * n);
	struct range all = { .begin = 0, .end = n }, l, rr;
	int w = 0;
	float spread[3];

	ck_assert_ptr_nonnull(p);
	box_empty(&all.bounds);
	for (uint32_t i = 0; i < n; i++) {
		float x = (float)rng_range(&r, -10, 10), y = (float)rng_range(&r, -1, 1);
		float z = _i ? 0.5f : (float)rng_range(&r, -3, 3);	/* _i: many equal centroids */

		if (_i && i % 3)
			x = 1;
		p[i] = (struct bvh_prim){ { x, y, z }, i, { x + 0.1f, y + 0.2f, z + 0.3f }, 0 };
		box_grow_prim(&all.bounds, &p[i]);
	}
	for (int k = 0; k < 3; k++) {
		float lo = FLT_MAX, hi = -FLT_MAX;

		for (uint32_t i = 0; i < n; i++) {
			lo = fminf(lo, p[i].lo[k] + p[i].hi[k]);
			hi = fmaxf(hi, p[i].lo[k] + p[i].hi[k]);
		}
		spread[k] = hi - lo;
	}
	for (int k = 1; k < 3; k++)
		if (spread[k] > spread[w])
			w = k;
	bvh_split_median(p, &all, &l, &rr);
	ck_assert_uint_eq(l.begin, 0);
	ck_assert_uint_eq(l.end, rr.begin);
	ck_assert_uint_eq(rr.end, n);
	ck_assert_uint_le(l.end - l.begin, (n + 1) / 2);
	ck_assert_uint_le(rr.end - rr.begin, (n + 1) / 2);
	ck_assert_uint_ge(l.end - l.begin, 1);
	for (uint32_t i = l.begin; i < l.end; i++)
		for (uint32_t j = rr.begin; j < rr.end; j += 1 + j % 7)
			ck_assert(p[i].lo[w] + p[i].hi[w] <= p[j].lo[w] + p[j].hi[w]);
	{
		struct box bl, br;

		box_empty(&bl);
		box_empty(&br);
		for (uint32_t i = l.begin; i < l.end; i++)
			box_grow_prim(&bl, &p[i]);
		for (uint32_t i = rr.begin; i < rr.end; i++)
			box_grow_prim(&br, &p[i]);
		ck_assert(!memcmp(&bl, &l.bounds, sizeof(bl)));
		ck_assert(!memcmp(&br, &rr.bounds, sizeof(br)));
	}
	free(p);
}
END_TEST

/* ---- the threaded build: the same tree as one thread's */
START_TEST(threaded_build_same_leaf_order)
{
	size_t n = 150000;
	struct bvh_prim *a = malloc(sizeof(*a) * n), *b = malloc(sizeof(*b) * n);
	struct rng r = { 26000 };
	struct bvh ta, tb;
	size_t leaves_a = 0, leaves_b = 0;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++) {
		float x = (float)rng_range(&r, -100, 100), y = (float)rng_range(&r, -100, 100);
		float z = (float)rng_range(&r, -5, 5), s = (float)rng_range(&r, 0.01, 2);

		a[i] = (struct bvh_prim){ { x, y, z }, (uint32_t)i, { x + s, y + s, z + s / 4 }, 0 };
	}
	memcpy(b, a, sizeof(*a) * n);
	ck_assert_int_eq(bvh_build(a, n, 1, &ta), CORE_OK);
	ck_assert_int_eq(bvh_build(b, n, 4, &tb), CORE_OK);
	/* partitioning does not depend on the threads: same leaf order, same
	 * node count, every primitive in exactly one leaf */
	ck_assert_uint_eq(ta.nnodes, tb.nnodes);
	ck_assert_uint_eq(ta.depth, tb.depth);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(a[i].id, b[i].id);
	for (size_t k = 0; k < ta.nnodes; k++) {
		for (int s = 0; s < BVH_WIDTH; s++) {
			leaves_a += bvh_ref_count(ta.nodes[k].ref[s]);
			leaves_b += bvh_ref_count(tb.nodes[k].ref[s]);
			if (bvh_ref_count(tb.nodes[k].ref[s]) == 0 && tb.nodes[k].ref[s] != BVH_EMPTY)
				ck_assert_uint_lt(bvh_ref_index(tb.nodes[k].ref[s]), tb.nnodes);
		}
	}
	ck_assert_uint_eq(leaves_a, n);
	ck_assert_uint_eq(leaves_b, n);
	bvh_release(&ta);
	bvh_release(&tb);
	free(a);
	free(b);
}
END_TEST

START_TEST(threaded_build_answers)
{
	/* a flat 240 x 240 grid (115 200 triangles, built on threads): every
	 * downward ray hits at its height, every upward one misses */
	struct rng r = { 27000 };
	struct tmesh t;
	struct mesh *m;

	tmesh_grid(&t, 240, -120, 1, &r, 0);
	m = tmesh_build(&t);
	for (int i = 0; i < 3000; i++) {
		struct ray ray = { v3((float)rng_range(&r, -119, 119), (float)rng_range(&r, 0.5, 30),
				      (float)rng_range(&r, -119, 119)),
				   rng_dir(&r), INFINITY };
		float tt = -ray.origin.y / ray.dir.y;
		vec3 p = v3_add(ray.origin, v3_scale(ray.dir, tt));
		int inside = ray.dir.y < 0 && fabsf(p.x) < 119.9f && fabsf(p.z) < 119.9f;

		for (size_t k = 0; k < NKERNELS; k++) {
			struct query_opts o = { .mode = HIT_CLOSEST, .max_hits = 1 };
			struct hit h;
			uint32_t n;

			if (!rc_isa_supported(kernels[k]))
				continue;
			ck_assert_int_eq(mesh_raycast_isa(m, &ray, &o, &h, &n, NULL, kernels[k]), CORE_OK);
			if (inside) {
				ck_assert_uint_eq(n, 1);
				ck_assert(fabs(h.t - tt) <= 1e-4 * (1 + tt));
			} else if (ray.dir.y >= 0) {
				ck_assert_uint_eq(n, 0);
			}
		}
	}
	mesh_unref(m);
	tmesh_release(&t);
}
END_TEST

/* The fields a bare hit carries, equal to the whole hit's. */
static int same_bare(const struct hit *b, const struct hit *h)
{
	return b->t == h->t && b->triangle == h->triangle && b->u == h->u && b->v == h->v &&
	       b->front_face == h->front_face;
}

/* Ray r alone with bare hits (o->bare_hits), closest or any and every hit:
 * the whole answers' bare fields. */
static void check_bare_alone(const struct mesh *m, const struct ray *r,
			     const struct query_opts *o, enum rc_isa isa)
{
	struct query_opts whole = *o, all, all_whole;
	struct hit hb, hw, lb[8], lw[8];
	uint32_t nb = 9, nw = 9, tb = 0, tw = 0;

	whole.bare_hits = 0;
	ck_assert_int_eq(mesh_raycast_isa(m, r, o, &hb, &nb, NULL, isa), CORE_OK);
	ck_assert_int_eq(mesh_raycast_isa(m, r, &whole, &hw, &nw, NULL, isa), CORE_OK);
	ck_assert(nb == nw && (!nb || same_bare(&hb, &hw)));
	all = *o;
	all.mode = HIT_ALL;
	all.max_hits = 8;
	all_whole = all;
	all_whole.bare_hits = 0;
	ck_assert_int_eq(mesh_raycast_isa(m, r, &all, lb, &nb, &tb, isa), CORE_OK);
	ck_assert_int_eq(mesh_raycast_isa(m, r, &all_whole, lw, &nw, &tw, isa), CORE_OK);
	ck_assert(nb == nw && tb == tw);
	for (uint32_t i = 0; i < nb; i++)
		ck_assert(same_bare(&lb[i], &lw[i]));
}

/*
 * A batch of rays answers as each ray alone, bit for bit: every kernel, one
 * walk at a time, RC_WALKS interleaved and (AVX-512) ray streams, forced
 * whatever the mesh's and the batch's size, closest and any, culled or not, mirrored winding or not, whole or
 * bare hits (bare: the whole answer's fields, and so alone). The batch
 * spans several chunks, the last one partial, and holds rays the walks must
 * skip (invalid ones, rays that miss the root box) between aimed ones.
 */
static void check_batch(const struct mesh *m, const struct tmesh *t, struct rng *r, vec3 center,
			double span, size_t n)
{
	struct ray *rays = malloc(n * sizeof(*rays));
	struct hit *hits = malloc(n * sizeof(*hits));
	uint32_t *nh = malloc(n * sizeof(*nh));
	enum core_result *res = malloc(n * sizeof(*res));
	size_t found = 0;

	ck_assert(rays && hits && nh && res);
	for (size_t i = 0; i < n; i++) {
		rays[i] = aimed_ray(t, r, center, span, i % 3 == 0);
		if (i % 37 == 5)
			rays[i].dir = v3(0, 0, 0);	/* invalid */
		else if (i % 37 == 11)
			rays[i].tmax = 0;		/* invalid */
		else if (i % 37 == 17)
			rays[i].origin.x = NAN;		/* invalid */
		else if (i % 37 == 23)	/* away from the mesh: misses the root box */
			rays[i] = (struct ray){ v3_add(center, v3(0, (float)(10 * span), 0)),
						v3(0, 1, 0), INFINITY };
	}
	for (size_t k = 0; k < NKERNELS; k++) {
		if (!rc_isa_supported(kernels[k]))
			continue;
		for (int c = 0; c < 16; c++) {
			struct query_opts o = { .mode = c & 1 ? HIT_ANY : HIT_CLOSEST,
						.cull_backfaces = c >> 1 & 1,
						.flip_winding = c >> 2 & 1, .max_hits = 1,
						.bare_hits = c >> 3 };
			struct query_opts whole = o;
			/* one at a time, interleaved, or streams (AVX-512) */
			int walks = c % 3 == 0 ? 1 : c % 3 == 1 || kernels[k] != RC_ISA_AVX512 ?
				    RC_WALKS : RC_WALK_STREAM;

			/* bare hits: the whole answer's t, triangle, u, v and face */
			whole.bare_hits = 0;
			memset(hits, 0xa5, n * sizeof(*hits));
			ck_assert_int_eq(mesh_raycast_batch_isa(m, rays, n, &o, hits, nh, res,
								kernels[k], walks),
					 CORE_OK);
			for (size_t i = 0; i < n; i++) {
				struct hit h;
				uint32_t n1 = 7;
				enum core_result r1;

				r1 = mesh_raycast_isa(m, &rays[i], &whole, &h, &n1, NULL, kernels[k]);
				ck_assert_msg(res[i] == r1 && nh[i] == (r1 == CORE_OK ? n1 : 0),
					      "kernel %d case %d ray %zu: %d/%u, alone %d/%u",
					      (int)kernels[k], c, i, (int)res[i], nh[i], (int)r1, n1);
				if (o.bare_hits)
					ck_assert_msg(!nh[i] || same_bare(&hits[i], &h),
						      "kernel %d case %d ray %zu: the bare hit differs",
						      (int)kernels[k], c, i);
				else
					ck_assert_msg(!nh[i] || !memcmp(&hits[i], &h, sizeof(h)),
						      "kernel %d case %d ray %zu: the hit differs",
						      (int)kernels[k], c, i);
				if (o.bare_hits && res[i] == CORE_OK)
					check_bare_alone(m, &rays[i], &o, kernels[k]);
				found += nh[i];
			}
		}
	}
	ck_assert_uint_gt(found, n);	/* the rays hit, not only miss */
	{
		struct query_opts all = { .mode = HIT_ALL, .max_hits = 4 };

		ck_assert_int_eq(mesh_raycast_batch(m, rays, n, &all, hits, nh, res), CORE_EINVAL);
	}
	free(rays);
	free(hits);
	free(nh);
	free(res);
}

START_TEST(batch_answers_as_each_ray_alone)
{
	struct rng r = { 28000 + (uint64_t)_i };
	struct tmesh t;
	struct mesh *m;

	if (_i == 0) {
		tmesh_soup(&t, 3000, 10, &r);	/* slivers, exact-only primitives */
		m = tmesh_build(&t);
		check_batch(m, &t, &r, v3(0, 0, 0), 10, 700);
	} else if (_i == 1) {
		tmesh_sphere(&t, 40, v3(1, -2, 0.5f), 3);
		m = tmesh_build(&t);
		check_batch(m, &t, &r, v3(1, -2, 0.5f), 3, 700);
	} else {
		tmesh_grid(&t, 64, -32, 1, &r, 0.5f);
		m = tmesh_build(&t);
		check_batch(m, &t, &r, v3(0, 0, 0), 32, 700);
	}
	mesh_unref(m);
	tmesh_release(&t);
}
END_TEST

/*
 * Ray streams past one stream's rays (16 384 closest, 8 192 any queries)
 * and with lists outgrowing their arena (every node's rays, with a limit
 * under the stream's rays, or the deeper ones', with one a few times
 * them, walking alone): each ray's answer is its answer alone, bit for
 * bit; and mesh_raycast_batch, which picks streams for this mesh and
 * batch, answers so too.
 */
START_TEST(streams_answer_as_each_ray_alone)
{
	static const size_t limits[] = { 0, 40, 3 * RC_STREAM_RAYS };
	struct rng r = { 29000 + (uint64_t)_i };
	size_t n = 20000, found = 0;
	struct ray *rays = malloc(n * sizeof(*rays));
	struct hit *hits = malloc(n * sizeof(*hits));
	uint32_t *nh = malloc(n * sizeof(*nh));
	enum core_result *res = malloc(n * sizeof(*res));
	struct tmesh t;
	struct mesh *m;

	ck_assert(rays && hits && nh && res);
	if (_i == 0)
		tmesh_sphere(&t, 40, v3(1, -2, 0.5f), 3);
	else
		tmesh_soup(&t, 3000, 10, &r);
	m = tmesh_build(&t);
	for (size_t i = 0; i < n; i++)
		rays[i] = aimed_ray(&t, &r, _i ? v3(0, 0, 0) : v3(1, -2, 0.5f), _i ? 10 : 3,
				    i % 3 == 0);
	for (int c = 0; c < 4 * 4; c++) {
		struct query_opts o = { .mode = c & 1 ? HIT_ANY : HIT_CLOSEST,
					.cull_backfaces = c >> 1 & 1, .max_hits = 1 };
		size_t limit = limits[(c >> 2) % 3];
		int auto_pick = c >> 2 == 3;

		rc_stream_arena_limit(limit);
		memset(hits, 0xa5, n * sizeof(*hits));
		ck_assert_int_eq(auto_pick ? mesh_raycast_batch(m, rays, n, &o, hits, nh, res) :
				 mesh_raycast_batch_isa(m, rays, n, &o, hits, nh, res,
							RC_ISA_AVX512, RC_WALK_STREAM),
				 CORE_OK);
		for (size_t i = 0; i < n; i++) {
			struct hit h;
			uint32_t n1 = 7;
			enum core_result r1 = mesh_raycast_isa(m, &rays[i], &o, &h, &n1, NULL,
							       RC_ISA_AVX512);

			ck_assert_msg(res[i] == r1 && nh[i] == n1 &&
				      (!n1 || !memcmp(&hits[i], &h, sizeof(h))),
				      "case %d ray %zu: %d/%u, alone %d/%u", c, i, (int)res[i],
				      nh[i], (int)r1, n1);
			found += nh[i];
		}
	}
	rc_stream_arena_limit(0);
	ck_assert_uint_gt(found, 4 * n);	/* the rays hit, not only miss */
	mesh_unref(m);
	tmesh_release(&t);
	free(rays);
	free(hits);
	free(nh);
	free(res);
}
END_TEST

static Suite *kernels_suite(void)
{
	Suite *s = suite_create("raycast_kernels");
	TCase *tc = tcase_create("kernels");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, kernels_match_brute_force_soup, 0, 3);
	tcase_add_loop_test(tc, kernels_match_brute_force_closed, 0, 2);
	tcase_add_loop_test(tc, kernels_match_brute_force_grid, 0, 2);
	tcase_add_loop_test(tc, equal_distances_answer_the_lowest_index, 0, 2);
	tcase_add_test(tc, depth_is_bounded);
	tcase_add_loop_test(tc, median_split_halves, 0, 4);
	tcase_add_test(tc, threaded_build_same_leaf_order);
	tcase_add_test(tc, threaded_build_answers);
	tcase_add_loop_test(tc, batch_answers_as_each_ray_alone, 0, 3);
	if (rc_isa_supported(RC_ISA_AVX512))	/* streams are the AVX-512 kernel's */
		tcase_add_loop_test(tc, streams_answer_as_each_ray_alone, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("range");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, scale_sweep_numeric_and_exact, 0, 4);
	tcase_add_loop_test(tc, near_edge_rays_leave_no_wrong_sign, 0, 4);
	tcase_add_loop_test(tc, coordinate_errors_within_the_count, 0, 2);
	tcase_add_test(tc, huge_triangle_through_vertex);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(kernels_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
