/* test_mesh.c - Check suite for mesh build and ray/segment queries:
 * BVH against brute force, the float path against exact rationals,
 * watertightness on closed meshes, and the named edge cases. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exact.h"
#include "mesh.h"
#include "obb.h"
#include "testgeom.h"
#include "xform.h"

static struct hit cast1(const struct mesh *m, struct ray r, enum hit_mode mode, int cull,
			uint32_t *n)
{
	struct query_opts o = { .mode = mode, .cull_backfaces = cull, .max_hits = 1 };
	struct hit h = { 0 };

	ck_assert_int_eq(mesh_raycast(m, &r, &o, &h, n, NULL), CORE_OK);
	return h;
}

/* ---- build contracts */
START_TEST(build_rejects_bad_input)
{
	float xyz[9] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
	uint32_t idx[3] = { 0, 1, 2 }, bad[6] = { 0, 1, 2, 0, 1, 3 };
	struct mesh *m = NULL;
	size_t where = 99;

	ck_assert_int_eq(mesh_build(xyz, 0, idx, 1, &m, NULL), CORE_EEMPTY);
	ck_assert_int_eq(mesh_build(xyz, 3, idx, 0, &m, NULL), CORE_EEMPTY);
	ck_assert_int_eq(mesh_build(xyz, 3, bad, 2, &m, &where), CORE_EINDEX);
	ck_assert_uint_eq(where, 1);
	xyz[4] = NAN;
	ck_assert_int_eq(mesh_build(xyz, 3, idx, 1, &m, NULL), CORE_ENONFINITE);
	xyz[4] = INFINITY;
	ck_assert_int_eq(mesh_build(xyz, 3, idx, 1, &m, NULL), CORE_ENONFINITE);
	ck_assert_int_eq(mesh_build(xyz, 3, idx, (size_t)MESH_MAX_TRIANGLES + 1, &m, NULL),
			 CORE_ETOOBIG);
	ck_assert_ptr_null(m);
}
END_TEST

START_TEST(build_info_and_degenerates)
{
	/* a unit square (2 triangles) plus a zero-area triangle and a repeated index */
	float xyz[15] = { 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 2, 2, 0 };
	uint32_t idx[12] = { 0, 1, 2, 0, 2, 3, 0, 2, 4, 1, 1, 3 };
	struct mesh *m = NULL;
	struct mesh_info info;
	uint32_t n;
	struct hit h;

	ck_assert_int_eq(mesh_build(xyz, 5, idx, 4, &m, NULL), CORE_OK);
	mesh_get_info(m, &info);
	ck_assert_uint_eq(info.vertices, 5);
	ck_assert_uint_eq(info.triangles, 4);
	ck_assert_uint_eq(info.degenerate, 2);
	ck_assert(info.min.x == 0 && info.max.x == 2 && info.max.y == 2 && info.max.z == 0);
	ck_assert_uint_ge(info.memory_bytes, 5 * 12 + 4 * 12);
	/* the degenerate triangle 2 lies on the diagonal: aimed at it, the ray
	 * hits triangle 0 or 1, never 2 */
	h = cast1(m, (struct ray){ v3(0.5f, 0.5f, 1), v3(0, 0, -1), INFINITY }, HIT_ALL, 0, &n);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_ne(h.triangle, 2);
	ck_assert_uint_ne(h.triangle, 3);
	mesh_unref(m);
}
END_TEST

START_TEST(refcount_keeps_mesh_alive)
{
	struct tmesh t;
	struct mesh *m;
	uint32_t n;

	tmesh_sphere(&t, 2, v3(0, 0, 0), 1);
	m = tmesh_build(&t);
	mesh_ref(m);
	mesh_unref(m);
	cast1(m, (struct ray){ v3(0, 0, -5), v3(0, 0, 1), INFINITY }, HIT_CLOSEST, 0, &n);
	ck_assert_uint_eq(n, 1);
	mesh_unref(m);
	mesh_unref(NULL);
	tmesh_release(&t);
}
END_TEST

/* ---- brute force over all triangles with the exact rational oracle */
struct brute {
	int hit;
	double t;
	uint32_t tri;
	size_t nall;
};

static struct brute brute_force(const struct tmesh *t, struct ray r, int cull)
{
	struct brute b = { 0, INFINITY, 0, 0 };

	for (size_t i = 0; i < t->ntri; i++) {
		const uint32_t *q = t->idx + 3 * i;
		vec3 a = v3(t->xyz[3 * q[0]], t->xyz[3 * q[0] + 1], t->xyz[3 * q[0] + 2]);
		vec3 bb = v3(t->xyz[3 * q[1]], t->xyz[3 * q[1] + 1], t->xyz[3 * q[1] + 2]);
		vec3 c = v3(t->xyz[3 * q[2]], t->xyz[3 * q[2] + 1], t->xyz[3 * q[2] + 2]);
		double th;

		if (!oracle_ray_triangle(r.origin, r.dir, isfinite(r.tmax) ? r.tmax : -1, a, bb, c, &th))
			continue;
		if (cull) {
			/* front faces only: dot((b-a)x(c-a), d) < 0, decided exactly */
			struct exact_hit eh;

			if (!exact_ray_triangle(r.origin, r.dir, r.tmax, a, bb, c, 1, &eh))
				continue;
		}
		b.nall++;
		if (!b.hit || th < b.t) {
			b.hit = 1;
			b.t = th;
			b.tri = (uint32_t)i;
		}
	}
	return b;
}

/* random rays, a third aimed exactly at vertices or edge points of the mesh */
static struct ray random_ray(const struct tmesh *t, struct rng *r, float span, int finite)
{
	struct ray ray;
	double kind = rng_unit(r);
	vec3 target;

	if (kind < 0.33) {
		const float *p = t->xyz + 3 * (rng_next(r) % t->nvert);

		target = v3(p[0], p[1], p[2]);
	} else if (kind < 0.5) {
		const uint32_t *q = t->idx + 3 * (rng_next(r) % t->ntri);
		const float *a = t->xyz + 3 * q[0], *b = t->xyz + 3 * q[1];
		float s = rng_unit(r) < 0.5 ? 0.5f : (float)rng_unit(r);

		target = v3(a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1]), a[2] + s * (b[2] - a[2]));
	} else {
		target = v3((float)rng_range(r, -span, span), (float)rng_range(r, -span, span),
			    (float)rng_range(r, -span, span));
	}
	ray.origin = v3_add(target, v3_scale(rng_dir(r), (float)rng_range(r, 0.1, 3) * span));
	ray.dir = v3_normalize(v3_sub(target, ray.origin));
	ray.tmax = finite ? (float)rng_range(r, 0.05, 4) * span : INFINITY;
	return ray;
}

static void cross_check(const struct tmesh *t, struct rng *r, int nrays, float span)
{
	struct mesh *m = tmesh_build(t);
	struct hit *all = malloc(sizeof(*all) * t->ntri);
	struct hit *all2 = malloc(sizeof(*all2) * t->ntri);
	void *cand = malloc(MESH_ALL_SCRATCH_BYTES(t->ntri));

	ck_assert_ptr_nonnull(all);
	ck_assert_ptr_nonnull(all2);
	ck_assert_ptr_nonnull(cand);
	for (int i = 0; i < nrays; i++) {
		int finite = i % 3 == 0, cull = i % 4 == 1;
		struct ray ray = random_ray(t, r, span, finite);
		struct brute b = brute_force(t, ray, cull);
		struct query_opts oa = { .mode = HIT_ALL, .cull_backfaces = cull,
					 .max_hits = (uint32_t)t->ntri };
		uint32_t n, na, total;
		struct hit h = cast1(m, ray, HIT_CLOSEST, cull, &n);

		ck_assert_msg((int)n == b.hit, "ray %d: closest %u, brute force %d", i, n, b.hit);
		if (n) {
			ck_assert_msg(h.triangle == b.tri || fabs(h.t - b.t) <= 1e-5 * (1 + b.t),
				      "ray %d: tri %u t %.9g vs %u %.9g", i, h.triangle, h.t, b.tri, b.t);
			ck_assert(fabs(h.t - b.t) <= 1e-4 * (1 + b.t));
		}
		cast1(m, ray, HIT_ANY, cull, &n);
		ck_assert_int_eq((int)n, b.hit);
		ck_assert_int_eq(mesh_raycast(m, &ray, &oa, all, &na, &total), CORE_OK);
		ck_assert_uint_eq(na, b.nall);
		ck_assert_uint_eq(total, b.nall);
		for (uint32_t k = 1; k < na; k++)
			ck_assert(all[k - 1].t <= all[k].t);
		/* the caller's candidate scratch (a batch's) gives the same hits */
		oa.scratch = cand;
		oa.scratch_bytes = MESH_ALL_SCRATCH_BYTES(t->ntri);
		memset(all2, 0xa5, sizeof(*all2) * t->ntri);
		ck_assert_int_eq(mesh_raycast(m, &ray, &oa, all2, &n, &total), CORE_OK);
		ck_assert_uint_eq(n, na);
		ck_assert_uint_eq(total, b.nall);
		for (uint32_t k = 0; k < na; k++)
			ck_assert(all2[k].triangle == all[k].triangle && all2[k].t == all[k].t &&
				  all2[k].u == all[k].u && all2[k].v == all[k].v);
	}
	free(cand);
	free(all2);
	free(all);
	mesh_unref(m);
}

START_TEST(bvh_matches_brute_force_soup)
{
	struct rng r = { 1000 + (uint64_t)_i };
	struct tmesh t;

	tmesh_soup(&t, 50 + 200 * (size_t)_i, 10, &r);
	cross_check(&t, &r, 300, 10);
	tmesh_release(&t);
}
END_TEST

START_TEST(bvh_matches_brute_force_closed)
{
	struct rng r = { 2000 + (uint64_t)_i };
	struct tmesh t;

	tmesh_sphere(&t, 3 + 2 * _i, v3((float)_i, -1, 2), 3);
	cross_check(&t, &r, 300, 4);
	tmesh_release(&t);
}
END_TEST

START_TEST(bvh_matches_brute_force_grid)
{
	struct rng r = { 3000 + (uint64_t)_i };
	struct tmesh t;

	tmesh_grid(&t, 12, -6, 1, &r, _i ? 0.5f : 0);	/* flat grid: coplanar rays too */
	cross_check(&t, &r, 300, 6);
	tmesh_release(&t);
}
END_TEST

/* ---- watertightness: rays aimed exactly at shared edges and vertices */
static void watertight(const struct tmesh *t, struct rng *r, int nrays, int *leaks)
{
	struct mesh *m = tmesh_build(t);

	for (int i = 0; i < nrays; i++) {
		const uint32_t *q = t->idx + 3 * (rng_next(r) % t->ntri);
		int e = (int)(rng_next(r) % 3), kind = (int)(rng_next(r) % 3);
		const float *a = t->xyz + 3 * q[e], *b = t->xyz + 3 * q[(e + 1) % 3];
		float s = kind == 0 ? 0.5f : kind == 1 ? (float)rng_range(r, 0.01, 0.99) : 0;
		vec3 p = v3(a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1]), a[2] + s * (b[2] - a[2]));
		vec3 c;
		struct ray ray;
		uint32_t n;
		struct hit h;
		double target;

		/* from outside, within ~17 degrees of the outward normal (the sphere
		 * is centred at the origin), so every incident triangle faces it */
		c = v3_normalize(v3_add(v3_normalize(p), v3_scale(rng_dir(r), 0.3f)));
		ray.origin = v3_add(p, v3_scale(c, (float)rng_range(r, 0.5, 20)));
		ray.dir = v3_normalize(v3_sub(p, ray.origin));
		ray.tmax = INFINITY;
		target = sqrt(pow((double)p.x - ray.origin.x, 2) + pow((double)p.y - ray.origin.y, 2) +
			      pow((double)p.z - ray.origin.z, 2));
		h = cast1(m, ray, HIT_CLOSEST, 0, &n);
		if (!n || h.t > target * (1 + 1e-4) + 1e-4)
			(*leaks)++;
	}
	mesh_unref(m);
}

START_TEST(watertight_sphere_edges_vertices)
{
	struct rng r = { 4000 + (uint64_t)_i };
	struct tmesh t;
	int leaks = 0;

	tmesh_sphere(&t, 4 + 3 * _i, v3(0, 0, 0), _i == 2 ? 1e-3f : 5.0f);
	watertight(&t, &r, 4000, &leaks);
	ck_assert_int_eq(leaks, 0);
	tmesh_release(&t);
}
END_TEST

START_TEST(watertight_far_from_origin)
{
	/* the same closed sphere 10 km away: still no leak */
	struct rng r = { 5000 };
	struct tmesh t;
	int leaks = 0;
	struct mesh *m;

	tmesh_sphere(&t, 6, v3(0, 0, 0), 2);
	for (size_t v = 0; v < t.nvert; v++) {
		t.xyz[3 * v] += 10000;
		t.xyz[3 * v + 2] -= 7000;
	}
	m = tmesh_build(&t);
	for (int i = 0; i < 3000; i++) {
		const uint32_t *q = t.idx + 3 * (rng_next(&r) % t.ntri);
		const float *a = t.xyz + 3 * q[0], *b = t.xyz + 3 * q[1];
		vec3 p = i % 2 ? v3(a[0], a[1], a[2]) :
			 v3(a[0] + 0.5f * (b[0] - a[0]), a[1] + 0.5f * (b[1] - a[1]), a[2] + 0.5f * (b[2] - a[2]));
		vec3 out = v3_normalize(v3(p.x - 10000, p.y, p.z + 7000));
		struct ray ray;
		uint32_t n;
		struct hit h;

		ray.origin = v3_add(p, v3_scale(out, 5));
		ray.dir = v3_normalize(v3_sub(p, ray.origin));
		ray.tmax = INFINITY;
		h = cast1(m, ray, HIT_CLOSEST, 0, &n);
		if (!n || h.t > 5.01f)
			leaks++;
	}
	ck_assert_int_eq(leaks, 0);
	mesh_unref(m);
	tmesh_release(&t);
}
END_TEST

/* ---- no false hits: grazing rays near the silhouette, checked exactly */
START_TEST(no_hit_where_exact_misses)
{
	struct rng r = { 6000 };
	struct tmesh t;
	struct mesh *m;
	int checked = 0;

	tmesh_sphere(&t, 5, v3(0, 0, 0), 1);
	m = tmesh_build(&t);
	for (int i = 0; i < 4000; i++) {
		/* a ray tangent-ish to the sphere at a silhouette edge point,
		 * nudged by a few ulps sideways */
		const uint32_t *q = t.idx + 3 * (rng_next(&r) % t.ntri);
		const float *a = t.xyz + 3 * q[0], *b = t.xyz + 3 * q[1];
		vec3 p = v3(a[0] + 0.5f * (b[0] - a[0]), a[1] + 0.5f * (b[1] - a[1]), a[2] + 0.5f * (b[2] - a[2]));
		vec3 nrm = v3_normalize(p), side = v3_normalize(v3_cross(nrm, rng_dir(&r)));
		struct ray ray;
		uint32_t n;
		struct hit h;
		double te;
		vec3 va, vb, vc;

		p = v3_add(p, v3_scale(nrm, (float)rng_range(&r, -1e-6, 1e-6)));
		ray.origin = v3_sub(p, v3_scale(side, 3));
		ray.dir = side;
		ray.tmax = INFINITY;
		h = cast1(m, ray, HIT_CLOSEST, 0, &n);
		if (!n)
			continue;
		mesh_triangle(m, h.triangle, &va, &vb, &vc);
		ck_assert_msg(oracle_ray_triangle(ray.origin, ray.dir, -1, va, vb, vc, &te),
			      "ray %d: reported hit on %u that exact arithmetic misses", i, h.triangle);
		ck_assert(fabs(te - h.t) <= 1e-5 * (1 + te));
		checked++;
	}
	ck_assert_int_gt(checked, 100);
	mesh_unref(m);
	tmesh_release(&t);
}
END_TEST

/* ---- named edge cases */
static struct mesh *one_triangle(float dx, float dy, float dz)
{
	float xyz[9] = { dx, dy, dz, dx + 1, dy, dz, dx, dy + 1, dz };
	uint32_t idx[3] = { 0, 1, 2 };
	struct mesh *m = NULL;

	ck_assert_int_eq(mesh_build(xyz, 3, idx, 1, &m, NULL), CORE_OK);
	return m;
}

START_TEST(edge_parallel_and_in_plane)
{
	struct mesh *m = one_triangle(0, 0, 0);
	uint32_t n;

	/* parallel above the plane */
	cast1(m, (struct ray){ v3(-1, 0.2f, 0.5f), v3(1, 0, 0), INFINITY }, HIT_CLOSEST, 0, &n);
	ck_assert_uint_eq(n, 0);
	/* lying in the plane, through the triangle */
	cast1(m, (struct ray){ v3(-1, 0.2f, 0), v3(1, 0, 0), INFINITY }, HIT_ALL, 0, &n);
	ck_assert_uint_eq(n, 0);
	mesh_unref(m);
}
END_TEST

START_TEST(edge_start_on_surface)
{
	struct mesh *m = one_triangle(0, 0, 0);
	uint32_t n;
	struct hit h;

	/* starting on the triangle, leaving through the front: hit at 0 */
	h = cast1(m, (struct ray){ v3(0.25f, 0.25f, 0), v3(0, 0, 1), INFINITY }, HIT_CLOSEST, 0, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert(h.t == 0);
	ck_assert(!h.front_face);
	/* going in through the front (normal +z, dir -z): front face, hit at 0 */
	h = cast1(m, (struct ray){ v3(0.25f, 0.25f, 0), v3(0, 0, -1), INFINITY }, HIT_CLOSEST, 1, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert(h.t == 0 && h.front_face);
	/* culled when it is a back face */
	cast1(m, (struct ray){ v3(0.25f, 0.25f, 0), v3(0, 0, 1), INFINITY }, HIT_CLOSEST, 1, &n);
	ck_assert_uint_eq(n, 0);
	/* starting on a vertex and on an edge */
	h = cast1(m, (struct ray){ v3(0, 0, 0), v3(0, 0, -1), INFINITY }, HIT_CLOSEST, 0, &n);
	ck_assert_uint_eq(n, 1);
	h = cast1(m, (struct ray){ v3(0.5f, 0.5f, 0), v3(0.3f, 0, -1), INFINITY }, HIT_CLOSEST, 0, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert(h.t == 0);
	mesh_unref(m);
}
END_TEST

START_TEST(edge_max_distance_is_inclusive)
{
	struct mesh *m = one_triangle(0, 0, 0);
	uint32_t n;

	cast1(m, (struct ray){ v3(0.25f, 0.25f, 2), v3(0, 0, -1), 2 }, HIT_CLOSEST, 0, &n);
	ck_assert_uint_eq(n, 1);
	cast1(m, (struct ray){ v3(0.25f, 0.25f, 2), v3(0, 0, -1), 1.9999999f }, HIT_CLOSEST, 0, &n);
	ck_assert_uint_eq(n, 0);
	/* a segment (unnormalised direction, tmax 1) ending on the triangle */
	cast1(m, (struct ray){ v3(0.25f, 0.25f, 2), v3(0, 0, -2), 1 }, HIT_CLOSEST, 0, &n);
	ck_assert_uint_eq(n, 1);
	mesh_unref(m);
}
END_TEST

START_TEST(edge_invalid_rays)
{
	struct mesh *m = one_triangle(0, 0, 0);
	struct query_opts o = { .mode = HIT_CLOSEST, .max_hits = 1 };
	struct hit h;
	uint32_t n;
	struct ray bad[] = {
		{ v3(0, 0, 1), v3(0, 0, 0), INFINITY },
		{ v3(0, 0, 1), v3(0, 0, -1), 0 },
		{ v3(0, 0, 1), v3(0, 0, -1), -1 },
		{ v3(0, 0, 1), v3(0, 0, -1), NAN },
		{ v3(NAN, 0, 1), v3(0, 0, -1), 1 },
		{ v3(0, 0, 1), v3(INFINITY, 0, -1), 1 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(mesh_raycast(m, &bad[i], &o, &h, &n, NULL), CORE_EINVAL);
	o.mode = HIT_ALL;
	o.max_hits = 0;
	ck_assert_int_eq(mesh_raycast(m, &(struct ray){ v3(0, 0, 1), v3(0, 0, -1), 2 }, &o, &h, &n,
				      NULL), CORE_EINVAL);
	mesh_unref(m);
}
END_TEST

/* Random rays of special components (zeros of both signs, subnormals,
 * FLT_MAX, infinities, NaN): mesh_raycast and mesh_raycast_batch refuse
 * exactly those the rule refuses (finite origin and direction, a direction
 * not zero, tmax > 0). */
START_TEST(ray_validity_by_definition)
{
	static const float vals[] = { 0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -FLT_MAX, FLT_MAX,
				      INFINITY, -INFINITY, NAN };
	struct mesh *m = one_triangle(0, 0, 0);
	struct query_opts o = { .mode = HIT_CLOSEST, .max_hits = 1 };
	struct rng r = { 4242 };
	struct ray rays[64];
	struct hit hits[64];
	uint32_t nh[64];
	enum core_result res[64];
	int refused = 0;

	for (int round = 0; round < 400; round++) {
		for (int i = 0; i < 64; i++) {
			float c[7];

			for (int k = 0; k < 7; k++)
				c[k] = rng_next(&r) % 4 ? (float)(rng_next(&r) % 5) - 2.0f
							: vals[rng_next(&r) % 10];
			rays[i] = (struct ray){ v3(c[0], c[1], c[2]), v3(c[3], c[4], c[5]), c[6] };
		}
		ck_assert_int_eq(mesh_raycast_batch(m, rays, 64, &o, hits, nh, res), CORE_OK);
		for (int i = 0; i < 64; i++) {
			const struct ray *q = &rays[i];
			int valid = isfinite(q->origin.x) && isfinite(q->origin.y) &&
				    isfinite(q->origin.z) && isfinite(q->dir.x) && isfinite(q->dir.y) &&
				    isfinite(q->dir.z) && q->tmax > 0 &&
				    (q->dir.x != 0 || q->dir.y != 0 || q->dir.z != 0);
			struct hit h;
			uint32_t n;

			ck_assert_int_eq(res[i], valid ? CORE_OK : CORE_EINVAL);
			ck_assert_int_eq(mesh_raycast(m, q, &o, &h, &n, NULL),
					 valid ? CORE_OK : CORE_EINVAL);
			refused += !valid;
		}
	}
	ck_assert_int_gt(refused, 1000);
	ck_assert_int_lt(refused, 400 * 64 - 1000);
	mesh_unref(m);
}
END_TEST

START_TEST(edge_far_mesh_distance_mm)
{
	/* a 10 km-away mesh: vertices are exact floats; the exact distance is 3 */
	struct rng r = { 7000 };
	struct mesh *m = one_triangle(10000, -8000, 6000);

	for (int i = 0; i < 1000; i++) {
		float x = 10000 + (float)rng_range(&r, 0.01, 0.49), y = -8000 + (float)rng_range(&r, 0.01, 0.49);
		uint32_t n;
		struct hit h = cast1(m, (struct ray){ v3(x, y, 6003), v3(0, 0, -1), INFINITY },
				     HIT_CLOSEST, 0, &n);

		ck_assert_uint_eq(n, 1);
		ck_assert_msg(fabs(h.t - 3.0) <= 1e-3, "distance %.9g", h.t);
	}
	mesh_unref(m);
}
END_TEST

START_TEST(edge_slivers)
{
	/* needle triangles sharing a long edge: rays at the shared edge hit */
	float xyz[12] = { 0, 0, 0, 100, 0, 0, 50, 1e-5f, 0, 50, -1e-5f, 0 };
	uint32_t idx[6] = { 0, 1, 2, 1, 0, 3 };
	struct mesh *m = NULL;
	struct rng r = { 8000 };

	ck_assert_int_eq(mesh_build(xyz, 4, idx, 2, &m, NULL), CORE_OK);
	for (int i = 0; i < 2000; i++) {
		float x = (float)rng_range(&r, 0.001, 99.999), y = (float)rng_range(&r, -1, 1);
		float half_width = 1e-5f * (1 - fabsf(x - 50) / 50);	/* of the needles at x */
		uint32_t n;
		struct hit h;

		/* down the shared edge (y = 0): one of the two needles, never none */
		h = cast1(m, (struct ray){ v3(x, 0, 5), v3(0, 0, -1), INFINITY }, HIT_CLOSEST, 0, &n);
		ck_assert_uint_eq(n, 1);
		ck_assert(h.t == 5);
		/* elsewhere: a hit exactly when |y| is inside the needles */
		cast1(m, (struct ray){ v3(x, y, 5), v3(0, 0, -1), INFINITY }, HIT_CLOSEST, 0, &n);
		if (fabsf(y) > 2 * half_width)
			ck_assert_uint_eq(n, 0);
	}
	mesh_unref(m);
}
END_TEST

START_TEST(transform_non_uniform_scale)
{
	/* querying a placed mesh = querying the mesh with its vertices moved */
	struct rng r = { 9000 + (uint64_t)_i };
	struct tmesh t, tw;
	struct mesh *m, *mw;
	struct xform x;
	double pos[3] = { 3, -2, 7 }, q[4], sc[3] = { 2, 0.5, _i ? -1.5 : 1.5 };
	int compared = 0;

	for (int k = 0; k < 4; k++)
		q[k] = rng_range(&r, -1, 1);
	ck_assert_int_eq(xform_from_trs(pos, q, sc, &x), CORE_OK);
	tmesh_sphere(&t, 4, v3(0, 0, 0), 1);
	tmesh_sphere(&tw, 4, v3(0, 0, 0), 1);
	for (size_t v = 0; v < tw.nvert; v++) {
		vec3 p = xform_point(&x, v3(t.xyz[3 * v], t.xyz[3 * v + 1], t.xyz[3 * v + 2]));

		tw.xyz[3 * v] = p.x;
		tw.xyz[3 * v + 1] = p.y;
		tw.xyz[3 * v + 2] = p.z;
	}
	m = tmesh_build(&t);
	mw = tmesh_build(&tw);
	for (int i = 0; i < 500; i++) {
		struct ray w = { v3_add(v3(3, -2, 7), v3_scale(rng_dir(&r), 6)), rng_dir(&r), INFINITY };
		struct ray l = xform_ray_to_local(&x, &w);
		struct query_opts o = { .mode = HIT_CLOSEST, .flip_winding = x.det < 0, .max_hits = 1 };
		struct hit hl, hw;
		uint32_t nl, nw;
		vec3 nworld;

		w.dir = v3_normalize(v3_sub(v3(3, -2, 7), w.origin));
		w.dir = v3_normalize(v3_add(w.dir, v3_scale(rng_dir(&r), 0.3f)));
		l = xform_ray_to_local(&x, &w);
		ck_assert_int_eq(mesh_raycast(m, &l, &o, &hl, &nl, NULL), CORE_OK);
		hw = cast1(mw, w, HIT_CLOSEST, 0, &nw);
		if (nl != nw)
			continue;	/* grazing: the two meshes differ by rounding */
		if (!nl)
			continue;
		compared++;
		ck_assert_msg(fabs(hl.t - hw.t) <= 1e-4 * (1 + hw.t), "t %.9g vs %.9g", hl.t, hw.t);
		ck_assert_uint_eq(hl.front_face, hw.front_face);
		nworld = xform_normal(&x, hl.normal);
		if (hl.triangle == hw.triangle)
			ck_assert(v3_dot(nworld, hw.normal) > 0.999f);
	}
	ck_assert_int_gt(compared, 100);
	mesh_unref(m);
	mesh_unref(mw);
	tmesh_release(&t);
	tmesh_release(&tw);
}
END_TEST

START_TEST(overlap_matches_brute_force)
{
	struct rng r = { 10000 + (uint64_t)_i };
	struct tmesh t;
	struct mesh *m;
	uint32_t *got;

	tmesh_soup(&t, 800, 10, &r);
	m = tmesh_build(&t);
	got = malloc(sizeof(*got) * t.ntri);
	ck_assert_ptr_nonnull(got);
	for (int i = 0; i < 100; i++) {
		double q[4] = { rng_range(&r, -1, 1), rng_range(&r, -1, 1), rng_range(&r, -1, 1), rng_range(&r, -1, 1) };
		struct obb b;
		size_t count, expect = 0, limit = (size_t)(rng_next(&r) % 50);

		ck_assert_int_eq(obb_from_quat(v3((float)rng_range(&r, -10, 10), (float)rng_range(&r, -10, 10),
						  (float)rng_range(&r, -10, 10)),
					       v3((float)rng_range(&r, 0, 3), (float)rng_range(&r, 0, 3),
						  (float)rng_range(&r, 0, 3)), q, &b), CORE_OK);
		ck_assert_int_eq(mesh_overlap_obb(m, &b, got, limit, &count), CORE_OK);
		for (uint32_t k = 0; k < t.ntri; k++) {
			vec3 a, bb, c;

			mesh_triangle(m, k, &a, &bb, &c);
			if (obb_triangle_overlap(&b, a, bb, c)) {
				if (expect < limit)
					ck_assert_uint_eq(got[expect], k);
				expect++;
			}
		}
		ck_assert_uint_eq(count, expect);
	}
	free(got);
	mesh_unref(m);
	tmesh_release(&t);
}
END_TEST

/*
 * Boxes resting exactly on a floor (y = 0): an integer quaternion q gives
 * the rotation M / N (N = |q|^2, M integer), equal half extents a N / 64
 * put the lowest corner a S / 64 below the centre (S: the sum of |M|'s
 * middle row), so a centre at that height touches the floor exactly, and
 * the floor must be reported (the box's bounds, taken from its float axes,
 * once culled it: a corner rounded 2e-5 above the floor).
 */
START_TEST(overlap_resting_boxes)
{
	static const float xyz[] = { -64, 0, -64, 64, 0, -64, 64, 0, 64, -64, 0, 64 };
	static const uint32_t idx[] = { 0, 2, 1, 0, 3, 2 };
	struct rng r = { 12345 };
	struct mesh *m = NULL;
	uint32_t got[2];
	int n = 0;

	ck_assert_int_eq(mesh_build(xyz, 4, idx, 2, &m, NULL), CORE_OK);
	for (int i = 0; i < 2000; i++) {
		double q[4], w, x, y, z, s, nn, h, cy;
		int a = 1 + (int)(rng_next(&r) % 8);
		struct obb b;
		size_t count;

		for (int k = 0; k < 4; k++)
			q[k] = (double)((int)(rng_next(&r) % 9) - 4);
		w = q[0], x = q[1], y = q[2], z = q[3];
		nn = w * w + x * x + y * y + z * z;
		if (nn == 0)
			continue;
		s = fabs(2 * (x * y + w * z)) + fabs(w * w - x * x + y * y - z * z) + fabs(2 * (y * z - w * x));
		h = a * nn / 64;
		cy = a * s / 64;
		if ((double)(float)h != h || (double)(float)cy != cy)
			continue;
		ck_assert_int_eq(obb_from_quat(v3((float)rng_range(&r, -8, 8), (float)cy, (float)rng_range(&r, -8, 8)),
					       v3((float)h, (float)h, (float)h), q, &b), CORE_OK);
		ck_assert_int_eq(mesh_overlap_obb(m, &b, got, 2, &count), CORE_OK);
		ck_assert_msg(count >= 1, "box %d (q %g %g %g %g, half %g, centre y %g) touches the floor: none reported",
			      i, w, x, y, z, h, cy);
		n++;
	}
	ck_assert_int_gt(n, 1000);
	mesh_unref(m);
}
END_TEST

/* ---- the exact arithmetic itself, against GMP */
START_TEST(exact_matches_rationals)
{
	struct rng r = { 11000 + (uint64_t)_i };
	int hits = 0;

	for (int i = 0; i < 3000; i++) {
		/* tiny triangles at random scales, rays through their edges and
		 * vertices or just next to them */
		double sc = ldexp(1, (int)(rng_next(&r) % 60) - 30);
		vec3 a = v3((float)(rng_range(&r, -1, 1) * sc), (float)(rng_range(&r, -1, 1) * sc), (float)(rng_range(&r, -1, 1) * sc));
		vec3 b = v3((float)(rng_range(&r, -1, 1) * sc), (float)(rng_range(&r, -1, 1) * sc), (float)(rng_range(&r, -1, 1) * sc));
		vec3 c = v3((float)(rng_range(&r, -1, 1) * sc), (float)(rng_range(&r, -1, 1) * sc), (float)(rng_range(&r, -1, 1) * sc));
		float s = i % 2 ? 0.5f : (float)rng_unit(&r);
		vec3 p = v3(a.x + s * (b.x - a.x), a.y + s * (b.y - a.y), a.z + s * (b.z - a.z));
		vec3 o = v3_add(p, v3_scale(rng_dir(&r), (float)(sc * rng_range(&r, 0.5, 4))));
		vec3 d = v3_sub(p, o);
		float tmax = i % 3 ? INFINITY : (float)rng_range(&r, 0.5, 1.5);
		struct exact_hit h;
		double te;
		int want, got;

		if (i % 5 == 0)
			d.x = nextafterf(d.x, INFINITY);
		want = oracle_ray_triangle(o, d, isfinite(tmax) ? tmax : -1, a, b, c, &te);
		got = exact_ray_triangle(o, d, tmax, a, b, c, 0, &h);
		ck_assert_msg(want == got, "case %d: exact %d, rational %d", i, got, want);
		if (got) {
			ck_assert(fabs(h.t - te) <= 1e-12 * (1 + fabs(te)));
			hits++;
		}
	}
	ck_assert_int_gt(hits, 100);
}
END_TEST

START_TEST(exact_accumulator_signs)
{
	/* sum of products whose float evaluation cancels to the wrong sign */
	struct xacc a;

	xacc_init(&a);
	xacc_add4(&a, 1, 1e30f, 1e30f, 1, 1);
	xacc_add4(&a, 1, 1e-40f, 1, 1, 1);	/* a subnormal survives */
	xacc_add4(&a, -1, 1e30f, 1e30f, 1, 1);
	ck_assert_int_eq(xacc_sign(&a), 1);
	xacc_add4(&a, -1, 1e-40f, 1, 1, 1);
	ck_assert_int_eq(xacc_sign(&a), 0);
	xacc_add4(&a, -1, FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX);
	xacc_add4(&a, 1, FLT_MAX, FLT_MAX, FLT_MAX, nextafterf(FLT_MAX, 0));
	ck_assert_int_eq(xacc_sign(&a), -1);
	ck_assert(exact_triangle_degenerate(v3(0, 0, 0), v3(1, 1, 1), v3(3, 3, 3)));
	ck_assert(!exact_triangle_degenerate(v3(0, 0, 0), v3(1, 1, 1), v3(3, 3, nextafterf(3, 4))));
}
END_TEST

static Suite *mesh_suite(void)
{
	Suite *s = suite_create("mesh");
	TCase *tc = tcase_create("build");

	tcase_add_test(tc, build_rejects_bad_input);
	tcase_add_test(tc, build_info_and_degenerates);
	tcase_add_test(tc, refcount_keeps_mesh_alive);
	suite_add_tcase(s, tc);

	tc = tcase_create("bvh_vs_brute_force");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, bvh_matches_brute_force_soup, 0, 3);
	tcase_add_loop_test(tc, bvh_matches_brute_force_closed, 0, 3);
	tcase_add_loop_test(tc, bvh_matches_brute_force_grid, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("watertight");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, watertight_sphere_edges_vertices, 0, 3);
	tcase_add_test(tc, watertight_far_from_origin);
	tcase_add_test(tc, no_hit_where_exact_misses);
	suite_add_tcase(s, tc);

	tc = tcase_create("edge_cases");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, edge_parallel_and_in_plane);
	tcase_add_test(tc, edge_start_on_surface);
	tcase_add_test(tc, edge_max_distance_is_inclusive);
	tcase_add_test(tc, edge_invalid_rays);
	tcase_add_test(tc, ray_validity_by_definition);
	tcase_add_test(tc, edge_far_mesh_distance_mm);
	tcase_add_test(tc, edge_slivers);
	tcase_add_loop_test(tc, transform_non_uniform_scale, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("overlap");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, overlap_matches_brute_force, 0, 2);
	tcase_add_test(tc, overlap_resting_boxes);
	suite_add_tcase(s, tc);

	tc = tcase_create("exact");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, exact_matches_rationals, 0, 3);
	tcase_add_test(tc, exact_accumulator_signs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mesh_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
