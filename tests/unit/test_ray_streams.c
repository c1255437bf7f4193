/* test_ray_streams.c - ray streams (raycast_stream.h, the AVX-512 kernel)
 * against each ray cast alone, adversarially: random meshes (slivers,
 * exact-only triangles, huge and tiny coordinates, closed meshes), rays
 * from far away, along the axes, grazing triangles, starting on them, at
 * shared edges and vertices, tiny limits; batch sizes around the chunk and
 * stream sizes; arena limits that send lists to walk alone at every depth;
 * threads that start, cast streams and exit. Every answer must be the
 * answer of mesh_raycast_isa for that ray alone, bit for bit. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "raycast_impl.h"
#include "testgeom.h"

static vec3 lerp(vec3 a, vec3 b, float s)
{
	return v3(a.x + s * (b.x - a.x), a.y + s * (b.y - a.y), a.z + s * (b.z - a.z));
}

/* ntri triangles of half-size up to tri, centred in [-s, s]^3 (tri large:
 * big overlapping triangles; tri tiny: slivers and exact-only ones) */
static void soup_sized(struct tmesh *m, size_t ntri, float s, float tri, struct rng *r)
{
	m->nvert = 3 * ntri;
	m->ntri = ntri;
	m->xyz = malloc(sizeof(float) * 9 * ntri);
	m->idx = malloc(sizeof(uint32_t) * 3 * ntri);
	ck_assert(m->xyz && m->idx);
	for (size_t i = 0; i < ntri; i++) {
		double c[3] = { rng_range(r, -s, s), rng_range(r, -s, s), rng_range(r, -s, s) };
		/* a third of them slivers: the third vertex almost on the first edge */
		int sliver = rng_unit(r) < 0.3;

		for (int v = 0; v < 3; v++) {
			for (int a = 0; a < 3; a++)
				m->xyz[9 * i + 3 * v + a] = (float)(c[a] + rng_range(r, -tri, tri));
			m->idx[3 * i + v] = (uint32_t)(3 * i + v);
		}
		if (sliver) {
			float f = (float)rng_unit(r), e = (float)(tri * pow(10, -rng_range(r, 3, 9)));

			for (int a = 0; a < 3; a++)
				m->xyz[9 * i + 6 + a] = m->xyz[9 * i + a] +
							f * (m->xyz[9 * i + 3 + a] - m->xyz[9 * i + a]) +
							(a == 1 ? e : 0);
		}
	}
}

static void scale_mesh(struct tmesh *m, float sc, vec3 off)
{
	for (size_t i = 0; i < m->nvert; i++) {
		m->xyz[3 * i] = m->xyz[3 * i] * sc + off.x;
		m->xyz[3 * i + 1] = m->xyz[3 * i + 1] * sc + off.y;
		m->xyz[3 * i + 2] = m->xyz[3 * i + 2] * sc + off.z;
	}
}

/* A point of t to aim at: a vertex, a point of an edge (its midpoint or
 * anywhere), a point inside a triangle, or anywhere in the box of half-size
 * span around c. */
static vec3 target_of(const struct tmesh *t, struct rng *r, vec3 c, double span)
{
	double kind = rng_unit(r);
	const uint32_t *q = t->idx + 3 * (rng_next(r) % t->ntri);
	vec3 a = tmesh_vertex(t, q[0]), b = tmesh_vertex(t, q[1]), cc = tmesh_vertex(t, q[2]);

	if (kind < 0.3)
		return tmesh_vertex(t, (uint32_t)(rng_next(r) % t->nvert));
	if (kind < 0.55)
		return lerp(a, b, rng_unit(r) < 0.5 ? 0.5f : (float)rng_unit(r));
	if (kind < 0.7) {
		float u = (float)rng_unit(r), v = (float)rng_unit(r) * (1 - u);

		return v3(a.x + u * (b.x - a.x) + v * (cc.x - a.x),
			  a.y + u * (b.y - a.y) + v * (cc.y - a.y),
			  a.z + u * (b.z - a.z) + v * (cc.z - a.z));
	}
	return v3((float)(c.x + rng_range(r, -span, span)), (float)(c.y + rng_range(r, -span, span)),
		  (float)(c.z + rng_range(r, -span, span)));
}

/* An adversarial ray at t: along one or two axes (zero direction
 * components), grazing a triangle's plane, from far away (up to 10^far
 * spans), starting on the target (on a triangle, inside boxes), directions
 * not unit length; limits infinite, tiny or ordinary. */
static struct ray adversarial_ray(const struct tmesh *t, struct rng *r, vec3 c, double span,
				  double far)
{
	struct ray ray;
	vec3 target = target_of(t, r, c, span);
	double kind = rng_unit(r), tk;

	if (kind < 0.15) {
		float d[3] = { 0, 0, 0 };
		uint64_t axis = rng_next(r) % 3;

		d[axis] = rng_unit(r) < 0.5 ? -1.0f : 1.0f;
		if (rng_unit(r) < 0.3)
			d[(axis + 1) % 3] = rng_unit(r) < 0.5 ? -1.0f : 1.0f;
		ray.dir = v3(d[0], d[1], d[2]);
		ray.origin = v3_sub(target, v3_scale(ray.dir, (float)(rng_range(r, 0, 3) * span)));
	} else if (kind < 0.3) {
		const uint32_t *q = t->idx + 3 * (rng_next(r) % t->ntri);
		vec3 a = tmesh_vertex(t, q[0]), b = tmesh_vertex(t, q[1]), cc = tmesh_vertex(t, q[2]);
		vec3 n = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(cc, a)));
		float tilt = (float)(pow(10, -rng_range(r, 0, 7)) * (rng_unit(r) < 0.5 ? -1 : 1));

		ray.dir = v3_normalize(v3_add(v3_normalize(v3_sub(b, a)), v3_scale(n, tilt)));
		ray.origin = v3_sub(target, v3_scale(ray.dir, (float)(rng_range(r, 0, 3) * span)));
	} else if (kind < 0.45) {
		ray.origin = v3_add(target, v3_scale(rng_dir(r),
						     (float)(pow(10, rng_range(r, 0, far)) * span)));
		ray.dir = v3_normalize(v3_sub(target, ray.origin));
	} else if (kind < 0.55) {
		ray.origin = target;
		ray.dir = rng_dir(r);
	} else {
		ray.origin = v3_add(target, v3_scale(rng_dir(r), (float)(rng_range(r, 0.01, 3) * span)));
		ray.dir = v3_normalize(v3_sub(target, ray.origin));
		if (rng_unit(r) < 0.2)
			ray.dir = v3_scale(ray.dir, (float)pow(10, rng_range(r, -3, 3)));
	}
	if (!v3_isfinite(ray.dir) || (ray.dir.x == 0 && ray.dir.y == 0 && ray.dir.z == 0))
		ray.dir = v3(0, 0, 1);
	tk = rng_unit(r);
	ray.tmax = tk < 0.5 ? INFINITY :
		   tk < 0.6 ? (float)(span * pow(10, -rng_range(r, 1, 8))) :
			      (float)(rng_range(r, 0.1, 4) * span);
	return ray;
}

/* Some rays invalid or missing the root box, between the others. */
static void spoil(struct ray *rays, size_t n, struct rng *r, vec3 c, double span)
{
	for (size_t i = 0; i < n; i++) {
		double k = rng_unit(r);

		if (k < 0.02)
			rays[i].dir = v3(0, 0, 0);
		else if (k < 0.04)
			rays[i].tmax = 0;
		else if (k < 0.05)
			rays[i].origin.y = NAN;
		else if (k < 0.06)
			rays[i].tmax = NAN;
		else if (k < 0.08)
			rays[i] = (struct ray){ v3_add(c, v3(0, (float)(10 * span), 0)), v3(0, 1, 0),
						INFINITY };
	}
}

static int same_answer(const struct query_opts *o, const struct hit *a, const struct hit *b)
{
	if (o->bare_hits)
		return a->t == b->t && a->triangle == b->triangle && a->u == b->u && a->v == b->v &&
		       a->front_face == b->front_face;
	return !memcmp(a, b, sizeof(*a));
}

/*
 * rays[0..n) as one batch, through streams (walks RC_WALK_STREAM) or as
 * mesh_raycast_batch picks (walks 0), against each ray alone; returns the
 * number of hits. what names the case in a failure.
 */
static size_t check_streams(const struct mesh *m, const struct ray *rays, size_t n,
			    const struct query_opts *o, int walks, const char *what)
{
	struct hit *hits = malloc((n + 1) * sizeof(*hits));
	uint32_t *nh = malloc((n + 1) * sizeof(*nh));
	enum core_result *res = malloc((n + 1) * sizeof(*res));
	size_t found = 0;

	ck_assert(hits && nh && res);
	memset(hits, 0xa5, (n + 1) * sizeof(*hits));
	ck_assert_int_eq(walks ? mesh_raycast_batch_isa(m, rays, n, o, hits, nh, res,
							RC_ISA_AVX512, walks) :
				 mesh_raycast_batch(m, rays, n, o, hits, nh, res),
			 CORE_OK);
	for (size_t i = 0; i < n; i++) {
		struct hit h;
		uint32_t n1 = 7;
		enum core_result r1 = mesh_raycast_isa(m, &rays[i], o, &h, &n1, NULL, RC_ISA_AVX512);

		ck_assert_msg(res[i] == r1 && nh[i] == (r1 == CORE_OK ? n1 : 0) &&
			      (!nh[i] || same_answer(o, &hits[i], &h)),
			      "%s: mode %d cull %d flip %d bare %d, ray %zu of %zu "
			      "(o %a %a %a d %a %a %a tmax %a): %d/%u t %a tri %u, alone %d/%u t %a tri %u",
			      what, (int)o->mode, o->cull_backfaces, o->flip_winding, o->bare_hits, i, n,
			      rays[i].origin.x, rays[i].origin.y, rays[i].origin.z, rays[i].dir.x,
			      rays[i].dir.y, rays[i].dir.z, rays[i].tmax, (int)res[i], nh[i],
			      nh[i] ? hits[i].t : 0.0f, nh[i] ? hits[i].triangle : 0, (int)r1, n1,
			      n1 ? h.t : 0.0f, n1 ? h.triangle : 0);
		found += nh[i];
	}
	/* nothing written past the batch */
	{
		struct hit pat;

		memset(&pat, 0xa5, sizeof(pat));
		ck_assert(!memcmp(&hits[n], &pat, sizeof(pat)));
	}
	free(hits);
	free(nh);
	free(res);
	return found;
}

/*
 * Closest queries from far away (10^4 - 10^6 spans): a stream meets a ray's
 * leaves in another order than its walk alone, and the answer must not
 * depend on the order. Before, the exact test's double filter gave such
 * rays a distance off by up to ~1e-3 relative (its triple product cancels),
 * so a triangle that the walk had cut off as certainly farther than its
 * closest hit could, met first by the stream, answer instead.
 */
START_TEST(far_rays_answer_as_alone)
{
	struct rng r = { 31000 + (uint64_t)_i };
	size_t n = 16384, found = 0;
	struct ray *rays = malloc(n * sizeof(*rays));
	struct tmesh t;
	struct mesh *m;

	ck_assert(rays);
	if (_i == 0)
		tmesh_soup(&t, 1500, 10, &r);
	else
		soup_sized(&t, 1500, 10, 1, &r);
	m = tmesh_build(&t);
	for (size_t i = 0; i < n; i++) {
		vec3 target = target_of(&t, &r, v3(0, 0, 0), 10);

		rays[i].origin = v3_add(target, v3_scale(rng_dir(&r),
							 (float)(pow(10, rng_range(&r, 4, 6)) * 10)));
		rays[i].dir = v3_normalize(v3_sub(target, rays[i].origin));
		rays[i].tmax = INFINITY;
	}
	for (int c = 0; c < 4; c++) {
		struct query_opts o = { .mode = c & 1 ? HIT_ANY : HIT_CLOSEST,
					.cull_backfaces = c >> 1, .max_hits = 1 };

		found += check_streams(m, rays, n, &o, RC_WALK_STREAM, "far");
	}
	ck_assert_uint_gt(found, n);
	mesh_unref(m);
	tmesh_release(&t);
	free(rays);
}
END_TEST

/*
 * Random meshes and adversarial rays, random batch sizes (1-40, a few
 * thousand, around 2048, 8192 and 16384) and arena limits (lists walking
 * alone at the root, at some depth, or never), every option; streams
 * forced, and as mesh_raycast_batch picks.
 */
START_TEST(random_streams_answer_as_alone)
{
	static const size_t limits[] = { 0, 1, 16, 17, 40, 100, 300, 1000, 3000, 10000, 40000,
					 100000, RC_STREAM_ARENA, RC_STREAM_ARENA + 1 };
	static const size_t sizes[] = { 2047, 2048, 2049, 8191, 8192, 8193, 16383, 16384, 16385 };
	struct rng r = { 32000 + (uint64_t)_i };
	size_t found = 0;

	for (int it = 0; it < 6; it++) {
		struct tmesh t;
		struct mesh *m;
		vec3 c = v3(0, 0, 0);
		double span = 10, nk = rng_unit(&r);
		int kind = (int)(rng_next(&r) % 6);
		size_t n = nk < 0.4 ? 1 + rng_next(&r) % 40 :
			   nk < 0.7 ? 1 + rng_next(&r) % 3000 :
				      sizes[rng_next(&r) % (sizeof(sizes) / sizeof(sizes[0]))];
		struct ray *rays = malloc(n * sizeof(*rays));

		ck_assert(rays);
		switch (kind) {
		case 0:
			tmesh_soup(&t, 50 + rng_next(&r) % 3000, 10, &r);
			break;
		case 1:
			tmesh_sphere(&t, 2 + (int)(rng_next(&r) % 40), v3(1, -2, 0.5f), 3);
			c = v3(1, -2, 0.5f);
			span = 3;
			break;
		case 2:
			tmesh_grid(&t, 4 + (int)(rng_next(&r) % 60), -8, 0.25f, &r,
				   rng_unit(&r) < 0.5 ? 0 : 0.5f);
			span = 8;
			break;
		case 3:
			soup_sized(&t, 5 + rng_next(&r) % 300, 10, 10, &r);
			break;
		case 4:
			soup_sized(&t, 5 + rng_next(&r) % 2000, 10, (float)rng_range(&r, 0.01, 3), &r);
			break;
		default:	/* a root with one to four leaves' worth */
			soup_sized(&t, 1 + rng_next(&r) % 30, 10, (float)rng_range(&r, 0.1, 10), &r);
			break;
		}
		if (rng_unit(&r) < 0.4) {
			/* huge or tiny coordinates, maybe far from the origin */
			float sc = (float)pow(10, rng_range(&r, -25, 25));
			vec3 off = rng_unit(&r) < 0.5 ? v3(0, 0, 0) : v3(sc * 100, -sc * 37, sc * 5);

			scale_mesh(&t, sc, off);
			c = v3(c.x * sc + off.x, c.y * sc + off.y, c.z * sc + off.z);
			span *= sc;
		}
		m = tmesh_build(&t);
		for (size_t i = 0; i < n; i++)
			rays[i] = adversarial_ray(&t, &r, c, span, 6);
		spoil(rays, n, &r, c, span);
		for (int k = 0; k < 4; k++) {
			struct query_opts o = { .mode = rng_unit(&r) < 0.5 ? HIT_ANY : HIT_CLOSEST,
						.cull_backfaces = rng_unit(&r) < 0.3,
						.flip_winding = rng_unit(&r) < 0.3, .max_hits = 1,
						.bare_hits = rng_unit(&r) < 0.3 };
			/* half the time a few times the batch: lists walk alone
			 * below the root, at whatever depth they outgrow it */
			size_t limit = rng_unit(&r) < 0.5 ?
				       limits[rng_next(&r) % (sizeof(limits) / sizeof(limits[0]))] :
				       (size_t)((double)(n < RC_STREAM_RAYS / 2 ? n : RC_STREAM_RAYS / 2) *
						rng_range(&r, 1, 12));
			char what[96];

			snprintf(what, sizeof(what), "iteration %d mesh %d, limit %zu", it, kind, limit);
			rc_stream_arena_limit(limit);
			found += check_streams(m, rays, n, &o, k == 3 ? 0 : RC_WALK_STREAM, what);
		}
		rc_stream_arena_limit(0);
		mesh_unref(m);
		tmesh_release(&t);
		free(rays);
	}
	ck_assert_uint_gt(found, 0);
}
END_TEST

/*
 * A closed mesh is watertight in streams too: from its centre, rays aimed
 * exactly at its shared vertices and at points of its shared edges (and
 * along the axes, through vertices of the cube's seams) all hit, closest
 * and any, whatever the arena; and each answers as alone.
 */
START_TEST(closed_mesh_streams_never_leak)
{
	struct rng r = { 33000 + (uint64_t)_i };
	vec3 c = _i ? v3(1e4f, -3e4f, 2e4f) : v3(0.25f, -0.5f, 0.125f);
	size_t n = 9000;
	const size_t limits[] = { 0, 40, 2 * n, 5 * n };
	struct ray *rays = malloc(n * sizeof(*rays));
	struct hit *hits = malloc(n * sizeof(*hits));
	uint32_t *nh = malloc(n * sizeof(*nh));
	enum core_result *res = malloc(n * sizeof(*res));
	struct tmesh t;
	struct mesh *m;

	ck_assert(rays && hits && nh && res);
	tmesh_sphere(&t, 24, c, _i ? 5000 : 2);
	m = tmesh_build(&t);
	for (size_t i = 0; i < n; i++) {
		const uint32_t *q = t.idx + 3 * (rng_next(&r) % t.ntri);
		vec3 target = i % 3 == 0 ? tmesh_vertex(&t, (uint32_t)(rng_next(&r) % t.nvert)) :
			      i % 3 == 1 ? lerp(tmesh_vertex(&t, q[0]), tmesh_vertex(&t, q[1]), 0.5f) :
					   lerp(tmesh_vertex(&t, q[1]), tmesh_vertex(&t, q[2]), (float)rng_unit(&r));

		rays[i] = (struct ray){ c, v3_sub(target, c), INFINITY };
		if (i % 11 == 0) {
			float d[3] = { 0, 0, 0 };

			d[rng_next(&r) % 3] = rng_unit(&r) < 0.5 ? -1.0f : 1.0f;
			rays[i].dir = v3(d[0], d[1], d[2]);
		}
	}
	for (int k = 0; k < 6; k++) {
		struct query_opts o = { .mode = k & 1 ? HIT_ANY : HIT_CLOSEST, .max_hits = 1,
					.flip_winding = k >> 2 };

		rc_stream_arena_limit(limits[k % 4]);
		ck_assert_int_eq(mesh_raycast_batch_isa(m, rays, n, &o, hits, nh, res,
							RC_ISA_AVX512, RC_WALK_STREAM),
				 CORE_OK);
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(res[i] == CORE_OK && nh[i] == 1,
				      "case %d ray %zu leaked: %d/%u", k, i, (int)res[i], nh[i]);
		check_streams(m, rays, n, &o, RC_WALK_STREAM, "closed");
	}
	rc_stream_arena_limit(0);
	mesh_unref(m);
	tmesh_release(&t);
	free(rays);
	free(hits);
	free(nh);
	free(res);
}
END_TEST

/*
 * Batches with nothing to walk: none at all, only invalid rays, only rays
 * that miss the root box, a mesh without triangles (after one with), and
 * coordinates near FLT_MAX (padded boxes at infinity): the answers of each
 * ray alone, and nothing written past the batch.
 */
START_TEST(empty_and_edge_batches)
{
	struct rng r = { 35000 };
	struct ray rays[40];
	struct tmesh t;
	struct mesh *m;

	tmesh_sphere(&t, 6, v3(0, 0, 0), 1);
	m = tmesh_build(&t);
	for (int k = 0; k < 4; k++) {
		struct query_opts o = { .mode = k & 1 ? HIT_ANY : HIT_CLOSEST, .max_hits = 1,
					.cull_backfaces = k >> 1 };

		check_streams(m, rays, 0, &o, RC_WALK_STREAM, "empty");
		for (int i = 0; i < 40; i++)
			rays[i] = (struct ray){ v3(0, 0, -5), v3(0, 0, 0), INFINITY };
		check_streams(m, rays, 40, &o, RC_WALK_STREAM, "invalid");
		for (int i = 0; i < 40; i++)
			rays[i] = (struct ray){ v3(0, 5, (float)i), v3(1, 0, 0), INFINITY };
		check_streams(m, rays, 40, &o, RC_WALK_STREAM, "outside");
		for (int i = 0; i < 40; i++)
			rays[i] = (struct ray){ v3(0, 0, -5), v3(0, 0, 1), i % 2 ? 4.0f : 0x1p-140f };
		check_streams(m, rays, 40, &o, RC_WALK_STREAM, "short");
	}
	mesh_unref(m);
	tmesh_release(&t);
	/* near the top of the float range */
	tmesh_sphere(&t, 6, v3(0, 0, 0), 1);
	scale_mesh(&t, 0x1p127f, v3(0, 0, 0));
	if (mesh_build(t.xyz, t.nvert, t.idx, t.ntri, &m, NULL) == CORE_OK) {
		for (int k = 0; k < 2; k++) {
			struct query_opts o = { .mode = k ? HIT_ANY : HIT_CLOSEST, .max_hits = 1 };

			for (int i = 0; i < 40; i++)
				rays[i] = adversarial_ray(&t, &r, v3(0, 0, 0), 0x1p127, 0);
			check_streams(m, rays, 40, &o, RC_WALK_STREAM, "huge");
		}
		mesh_unref(m);
	}
	tmesh_release(&t);
}
END_TEST

/*
 * A deep tree (triangles at exponentially spaced scales, depth_is_bounded's
 * mesh in test_raycast_kernels): lists nested as deep as the tree goes,
 * with arenas that run out at every depth; rays at each scale.
 */
START_TEST(deep_tree_streams)
{
	size_t ntri = 3000, n = 6000, found = 0;
	/* at the root, or a few times the batch: deeper as the limit grows */
	const size_t limits[] = { 0, 40, 3 * n / 2, 3 * n, 6 * n, 12 * n };
	struct rng r = { 36000 };
	struct ray *rays = malloc(n * sizeof(*rays));
	struct tmesh t;
	struct mesh *m;

	ck_assert_ptr_nonnull(rays);
	tmesh_deep(&t, ntri);
	m = tmesh_build(&t);
	for (size_t i = 0; i < n; i++) {
		uint32_t tri = (uint32_t)(rng_next(&r) % ntri);
		float x = t.xyz[9 * tri];
		vec3 a = tmesh_vertex(&t, 3 * tri), b = tmesh_vertex(&t, 3 * tri + 1);
		vec3 c = tmesh_vertex(&t, 3 * tri + 2);
		float u = (float)rng_unit(&r), v = (float)rng_unit(&r) * (1 - u);
		vec3 target = i % 4 == 0 ? a :
			      v3(a.x + u * (b.x - a.x) + v * (c.x - a.x),
				 a.y + u * (b.y - a.y) + v * (c.y - a.y), 0);

		if (i % 5 == 0) {	/* down the z axis, onto the plane */
			rays[i] = (struct ray){ v3(target.x, target.y, x), v3(0, 0, -1), INFINITY };
		} else {
			rays[i].origin = v3_add(target, v3_scale(rng_dir(&r),
								 (float)(x * rng_range(&r, 0.1, 10))));
			rays[i].dir = v3_sub(target, rays[i].origin);
			rays[i].tmax = i % 3 ? INFINITY : 2.0f;
		}
	}
	for (int k = 0; k < 14; k++) {
		struct query_opts o = { .mode = k & 1 ? HIT_ANY : HIT_CLOSEST, .max_hits = 1 };
		char what[48];

		snprintf(what, sizeof(what), "deep, limit %zu", limits[(k >> 1) % 6]);
		rc_stream_arena_limit(limits[(k >> 1) % 6]);
		found += check_streams(m, rays, n, &o, k >> 1 == 6 ? 0 : RC_WALK_STREAM, what);
	}
	rc_stream_arena_limit(0);
	ck_assert_uint_gt(found, n);
	mesh_unref(m);
	tmesh_release(&t);
	free(rays);
}
END_TEST

/* Threads that start, cast batches as streams (forced and picked, each
 * its own arena limit) on one mesh, compare with the answers alone and
 * exit, so that their rooms are freed; several rounds of them. */
struct caster {
	const struct mesh *m;
	const struct ray *rays;
	size_t n;
	const struct hit *want;		/* [2][n]: closest, any */
	const uint32_t *want_n;
	size_t limit;
	int bad;
};

static void *caster_run(void *arg)
{
	struct caster *c = arg;
	struct hit *hits = malloc(c->n * sizeof(*hits));
	uint32_t *nh = malloc(c->n * sizeof(*nh));
	enum core_result *res = malloc(c->n * sizeof(*res));

	if (!hits || !nh || !res) {
		c->bad = 1;
		goto out;
	}
	rc_stream_arena_limit(c->limit);
	for (int k = 0; k < 4; k++) {
		struct query_opts o = { .mode = k & 1 ? HIT_ANY : HIT_CLOSEST, .max_hits = 1 };
		const struct hit *want = c->want + (size_t)(k & 1) * c->n;
		const uint32_t *want_n = c->want_n + (size_t)(k & 1) * c->n;

		if ((k < 2 ? mesh_raycast_batch_isa(c->m, c->rays, c->n, &o, hits, nh, res,
						    RC_ISA_AVX512, RC_WALK_STREAM) :
			     mesh_raycast_batch(c->m, c->rays, c->n, &o, hits, nh, res)) != CORE_OK) {
			c->bad = 1;
			break;
		}
		for (size_t i = 0; i < c->n; i++)
			if (nh[i] != want_n[i] || (nh[i] && memcmp(&hits[i], &want[i], sizeof(*hits)))) {
				c->bad = 1;
				break;
			}
	}
out:
	free(hits);
	free(nh);
	free(res);
	return NULL;
}

START_TEST(threads_cast_streams_and_exit)
{
	enum { THREADS = 4, ROUNDS = 3 };
	static const size_t limits[THREADS] = { 0, 40, 3 * 4096, 8 * 4096 };
	struct rng r = { 34000 };
	size_t n = 4096;
	struct ray *rays = malloc(n * sizeof(*rays));
	struct hit *want = malloc(2 * n * sizeof(*want));
	uint32_t *want_n = malloc(2 * n * sizeof(*want_n));
	struct tmesh t;
	struct mesh *m;

	ck_assert(rays && want && want_n);
	tmesh_sphere(&t, 16, v3(0, 0, 0), 2);
	m = tmesh_build(&t);
	for (size_t i = 0; i < n; i++)
		rays[i] = adversarial_ray(&t, &r, v3(0, 0, 0), 2, 2);
	for (int k = 0; k < 2; k++) {
		struct query_opts o = { .mode = k ? HIT_ANY : HIT_CLOSEST, .max_hits = 1 };

		for (size_t i = 0; i < n; i++) {
			ck_assert_int_eq(mesh_raycast_isa(m, &rays[i], &o, &want[k * n + i],
							  &want_n[k * n + i], NULL, RC_ISA_AVX512),
					 CORE_OK);
			if (!want_n[k * n + i])
				memset(&want[k * n + i], 0, sizeof(*want));
		}
	}
	for (int round = 0; round < ROUNDS; round++) {
		struct caster c[THREADS];
		pthread_t tid[THREADS];

		for (int k = 0; k < THREADS; k++) {
			c[k] = (struct caster){ m, rays, n, want, want_n, limits[k], 0 };
			ck_assert_int_eq(pthread_create(&tid[k], NULL, caster_run, &c[k]), 0);
		}
		for (int k = 0; k < THREADS; k++) {
			ck_assert_int_eq(pthread_join(tid[k], NULL), 0);
			ck_assert_msg(!c[k].bad, "round %d thread %d: an answer differs", round, k);
		}
	}
	mesh_unref(m);
	tmesh_release(&t);
	free(rays);
	free(want);
	free(want_n);
}
END_TEST

/*
 * A thread's room is freed by its key's destructor at the thread's exit;
 * another key's destructor that runs after it (a later key) and casts a
 * stream gets a new room, not the freed one, and the new one is freed too.
 */
static pthread_key_t late_key;
static struct mesh *late_mesh;
static int late_bad;

static void late_cast(const struct query_opts *o)
{
	struct ray rays[64];
	struct hit hits[64];
	uint32_t nh[64];
	enum core_result res[64];

	for (int i = 0; i < 64; i++)
		rays[i] = (struct ray){ v3(0, 0, 0), v3(i % 3 == 0, i % 3 == 1, i % 3 == 2), INFINITY };
	if (mesh_raycast_batch_isa(late_mesh, rays, 64, o, hits, nh, res, RC_ISA_AVX512,
				   RC_WALK_STREAM) != CORE_OK)
		late_bad = 1;
	for (int i = 0; i < 64; i++)
		if (res[i] != CORE_OK || nh[i] != 1)
			late_bad = 1;	/* from inside the sphere every ray hits */
}

static void late_destructor(void *p)
{
	struct query_opts o = { .mode = HIT_CLOSEST, .max_hits = 1 };

	(void)p;
	late_cast(&o);
}

static void *late_thread(void *arg)
{
	struct query_opts o = { .mode = HIT_ANY, .max_hits = 1 };

	(void)arg;
	late_cast(&o);		/* this thread's room */
	pthread_setspecific(late_key, &late_key);
	return NULL;
}

START_TEST(room_after_thread_exit)
{
	struct query_opts o = { .mode = HIT_ANY, .max_hits = 1 };
	struct tmesh t;
	pthread_t tid;

	tmesh_sphere(&t, 8, v3(0, 0, 0), 2);
	late_mesh = tmesh_build(&t);
	late_cast(&o);		/* the rooms' key first: its destructor runs first */
	ck_assert_int_eq(pthread_key_create(&late_key, late_destructor), 0);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(pthread_create(&tid, NULL, late_thread, NULL), 0);
		ck_assert_int_eq(pthread_join(tid, NULL), 0);
	}
	ck_assert(!late_bad);
	pthread_key_delete(late_key);
	mesh_unref(late_mesh);
	tmesh_release(&t);
}
END_TEST

static Suite *streams_suite(void)
{
	Suite *s = suite_create("ray_streams");
	TCase *tc = tcase_create("streams");

	tcase_set_timeout(tc, 300);
	/* streams are the AVX-512 kernel's: on another CPU there is nothing
	 * to test (and a test returning early would leave its buffers) */
	if (!rc_isa_supported(RC_ISA_AVX512)) {
		printf("ray streams: this CPU has no AVX-512, nothing to test\n");
		suite_add_tcase(s, tc);
		return s;
	}
	tcase_add_loop_test(tc, far_rays_answer_as_alone, 0, 2);
	tcase_add_loop_test(tc, random_streams_answer_as_alone, 0, 3);
	tcase_add_loop_test(tc, closed_mesh_streams_never_leak, 0, 2);
	tcase_add_test(tc, empty_and_edge_batches);
	tcase_add_test(tc, deep_tree_streams);
	tcase_add_test(tc, threads_cast_streams_and_exit);
	tcase_add_test(tc, room_after_thread_exit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(streams_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
