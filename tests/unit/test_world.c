/* test_world.c - Check suite for core/world*.c, snapshot.c and tlas.c:
 * the TLAS against brute force over instances, rewind between ticks,
 * existence and teleport rules, filters, the static/entity merge, ingest
 * errors, history bounds, mesh replacement, and a reader racing a writer. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "membudget.h"
#include "obb.h"
#include "shapes.h"
#include "store.h"
#include "testgeom.h"
#include "world.h"

static struct mesh *mesh_from(struct tmesh *t)
{
	struct mesh *m = NULL;

	ck_assert_int_eq(mesh_build(t->xyz, t->nvert, t->idx, t->ntri, &m, NULL), CORE_OK);
	tmesh_release(t);
	return m;
}

/* An axis-aligned cube [-h, h]^3, 12 triangles wound outwards. */
static struct mesh *cube_mesh(float h)
{
	static const uint32_t idx[36] = { 0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
					  2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3 };
	float xyz[24];
	struct mesh *m = NULL;
	int i;

	for (i = 0; i < 8; i++) {
		xyz[3 * i] = (i == 1 || i == 2 || i == 5 || i == 6) ? h : -h;
		xyz[3 * i + 1] = (i == 2 || i == 3 || i == 6 || i == 7) ? h : -h;
		xyz[3 * i + 2] = i >= 4 ? h : -h;
	}
	ck_assert_int_eq(mesh_build(xyz, 8, idx, 12, &m, NULL), CORE_OK);
	return m;
}

static void put(struct store *s, const char *name, struct mesh *m)
{
	ck_assert_int_eq(store_put(s, name, m, 0, NULL, NULL), CORE_OK);
}

static const struct world_opts default_opts = { 1000, 64, 256 };

static struct world *new_world(struct store *s, const struct world_instance_in *in, size_t n,
			       const struct world_opts *o)
{
	struct world *w = NULL;
	struct world_fail f;

	ck_assert_int_eq(world_new(s, in, n, o ? o : &default_opts, &w, &f), CORE_OK);
	return w;
}

static struct world_shot shot_at(float x, float y, float z, float dx, float dy, float dz)
{
	struct world_shot s;

	memset(&s, 0, sizeof(s));
	s.ray.origin = v3(x, y, z);
	s.ray.dir = v3_normalize(v3(dx, dy, dz));
	s.ray.tmax = INFINITY;
	s.unit = 1;
	s.layers = WORLD_LAYERS_ALL;
	return s;
}

/* closest hitscan; returns 1 on a hit (*h filled) */
static int shoot(struct world *w, struct world_shot *s, struct world_shot_hit *h, double *used)
{
	struct world_view *v = NULL;
	uint32_t n = 0, total = 0;
	int has = 0;
	size_t bad;
	double u = -1;

	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	ck_assert_int_eq(world_hitscan(v, s, HIT_CLOSEST, 1, h, &n, &total, &u, &has, NULL), CORE_OK);
	if (used)
		*used = has ? u : NAN;
	world_view_release(v);
	return (int)n;
}

/* ---- the TLAS against brute force over every instance */

#define NINST 200

START_TEST(test_tlas_vs_brute_force)
{
	struct rng g = { 0x71a5u };
	struct store *s;
	struct world *w;
	struct world_view *v;
	struct world_instance_in in[NINST];
	char ids[NINST][16];
	struct mesh *meshes[2];
	struct tmesh t;
	struct world_stats st = { 0, 0 };
	size_t i, bad;
	int n, hits = 0;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	tmesh_sphere(&t, 3, v3(0.2f, 0, 0), 1);
	meshes[0] = mesh_from(&t);
	meshes[1] = cube_mesh(0.8f);
	put(s, "ball", mesh_ref(meshes[0]));
	put(s, "cube", mesh_ref(meshes[1]));
	for (i = 0; i < NINST; i++) {
		double pos[3] = { rng_range(&g, -60, 60), rng_range(&g, -60, 60), rng_range(&g, -60, 60) };
		double q[4] = { rng_range(&g, -1, 1), rng_range(&g, -1, 1), rng_range(&g, -1, 1),
				rng_range(&g, -1, 1) };
		double sc[3];
		int k;

		for (k = 0; k < 3; k++)	/* non-uniform, and mirrored about half the time */
			sc[k] = rng_range(&g, 0.3, 3) * (rng_next(&g) & 1 ? -1 : 1);
		ck_assert_int_eq(xform_from_trs(pos, q, sc, &in[i].xf), CORE_OK);
		snprintf(ids[i], sizeof(ids[i]), "prop-%zu", i);
		in[i].id = ids[i];
		in[i].mesh = i & 1 ? "cube" : "ball";
		in[i].layer = (uint32_t)(rng_next(&g) % 4);
	}
	w = new_world(s, in, NINST, NULL);
	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	for (n = 0; n < 3000; n++) {
		struct world_shot sh = shot_at((float)rng_range(&g, -70, 70), (float)rng_range(&g, -70, 70),
					       (float)rng_range(&g, -70, 70), 0, 0, 1);
		struct world_shot_hit got, all[64];
		struct hit bh, ball[64];
		uint32_t nh, tot, bn, btot, sum = 0;
		int found = 0;
		size_t best = 0;
		float best_t = INFINITY;

		sh.ray.dir = rng_dir(&g);
		if (n % 5 == 0)	/* aim at an instance */
			sh.ray.dir = v3_normalize(v3_sub(v3((float)in[n % NINST].xf.m[3], (float)in[n % NINST].xf.m[7],
							    (float)in[n % NINST].xf.m[11]), sh.ray.origin));
		sh.ray.tmax = n % 3 ? INFINITY : (float)rng_range(&g, 10, 150);
		sh.layers = n % 4 ? WORLD_LAYERS_ALL : 0x5u;
		for (i = 0; i < NINST; i++) {
			struct query_opts o = { .mode = HIT_CLOSEST, .flip_winding = in[i].xf.det < 0, .max_hits = 1 };
			struct query_opts oa = { .mode = HIT_ALL, .flip_winding = in[i].xf.det < 0, .max_hits = 64 };
			struct ray local = xform_ray_to_local(&in[i].xf, &sh.ray);

			if (!((sh.layers >> in[i].layer) & 1))
				continue;
			ck_assert_int_eq(mesh_raycast(meshes[i & 1], &local, &o, &bh, &bn, NULL), CORE_OK);
			if (bn && (!found || bh.t < best_t)) {
				found = 1;
				best = i;
				best_t = bh.t;
			}
			ck_assert_int_eq(mesh_raycast(meshes[i & 1], &local, &oa, ball, &bn, &btot), CORE_OK);
			sum += btot;
		}
		ck_assert_int_eq(world_raycast(v, &sh, HIT_CLOSEST, 1, &got, &nh, &tot, &st), CORE_OK);
		ck_assert_int_eq((int)nh, found);
		if (found) {
			ck_assert(got.kind == WORLD_HIT_STATIC);
			ck_assert_msg(got.t == best_t, "ray %d: t %.9g brute %.9g", n, got.t, best_t);
			ck_assert_str_eq(got.instance, ids[best]);
			hits++;
		}
		ck_assert_int_eq(world_raycast(v, &sh, HIT_ANY, 1, &got, &nh, &tot, NULL), CORE_OK);
		ck_assert_int_eq((int)nh, found);
		ck_assert_int_eq(world_raycast(v, &sh, HIT_ALL, 64, all, &nh, &tot, NULL), CORE_OK);
		ck_assert_uint_eq(tot, sum);
		for (i = 1; i < nh; i++)
			ck_assert(all[i - 1].t <= all[i].t);
		if (found)
			ck_assert(all[0].t == best_t);
	}
	ck_assert_int_gt(hits, 300);
	/* a ray visits about one mesh (3394 for 3000 rays when written), not 200 */
	ck_assert_msg(st.meshes_tested < 3000u * 3, "meshes tested %u for 3000 rays", st.meshes_tested);
	world_view_release(v);
	world_unref(w);
	mesh_unref(meshes[0]);
	mesh_unref(meshes[1]);
	store_free(s);
}
END_TEST

/* ---- rewind */

static struct hitbox_in hb_sphere(const char *id, vec3 c, float r)
{
	struct hitbox_in h;

	memset(&h, 0, sizeof(h));
	h.id = id;
	h.shape = HITBOX_SPHERE;
	h.a = c;
	h.radius = r;
	return h;
}

static struct hitbox_in hb_capsule(const char *id, vec3 a, vec3 b, float r)
{
	struct hitbox_in h = hb_sphere(id, a, r);

	h.shape = HITBOX_CAPSULE;
	h.b = b;
	return h;
}

static struct hitbox_in hb_box(const char *id, vec3 c, vec3 half, double w, double x, double y,
			       double z)
{
	struct hitbox_in h = hb_sphere(id, c, 0);

	h.shape = HITBOX_BOX;
	h.size = half;
	h.rot[0] = w;
	h.rot[1] = x;
	h.rot[2] = y;
	h.rot[3] = z;
	return h;
}

static struct hitbox_in hb_mesh(const char *id, const char *mesh, vec3 pos)
{
	struct hitbox_in h = hb_box(id, pos, v3(1, 1, 1), 1, 0, 0, 0);

	h.shape = HITBOX_MESH;
	h.mesh = mesh;
	return h;
}

static void ingest1(struct world *w, uint64_t tick, double t, const struct entity_in *e, size_t n)
{
	struct world_fail f;

	ck_assert_int_eq(world_ingest(w, tick, t, e, n, &f), CORE_OK);
}

/* One player moving +10 in x over 100 ms, with every hitbox shape. */
static struct world *moving_world(struct store **sp)
{
	const double c45 = cos(M_PI / 4), s45 = sin(M_PI / 4);
	struct hitbox_in h0[4], h1[4];
	struct entity_in e0 = { "p", 1, h0, 4 }, e1 = { "p", 1, h1, 4 };
	struct world *w;

	ck_assert_int_eq(store_new(sp), CORE_OK);
	put(*sp, "crate", cube_mesh(1));
	w = new_world(*sp, NULL, 0, NULL);
	h0[0] = hb_sphere("head", v3(0, 0, 0), 1);
	h0[1] = hb_capsule("body", v3(0, -3, 0), v3(0, -1.5f, 0), 0.5f);
	h0[2] = hb_box("plank", v3(0, 5, 0), v3(2, 0.5f, 1), 1, 0, 0, 0);
	h0[3] = hb_mesh("crate", "crate", v3(0, 10, 0));
	h1[0] = hb_sphere("head", v3(10, 0, 0), 1);
	h1[1] = hb_capsule("body", v3(10, -3, 0), v3(10, -1.5f, 0), 0.5f);
	/* +90 degrees about z, given as the negated quaternion: nlerp must take
	 * the shorter arc */
	h1[2] = hb_box("plank", v3(10, 5, 0), v3(2, 0.5f, 1), -c45, 0, 0, -s45);
	h1[3] = hb_mesh("crate", "crate", v3(10, 10, 0));
	ingest1(w, 1, 1000, &e0, 1);
	ingest1(w, 2, 1100, &e1, 1);
	return w;
}

struct rewind_case {
	double time;
	float x, y;		/* the shot goes along +z from (x, y, -10) */
	const char *hitbox;	/* NULL: a miss */
	float t;
	double used;
};

static const struct rewind_case rewind_cases[] = {
	{ 1000, 0, 0, "head", 9, 1000 },		/* at a tick */
	{ 1000, 5, 0, NULL, 0, 1000 },
	{ 1050, 5, 0, "head", 9, 1050 },		/* between: linear centre */
	{ 1050, 0, 0, NULL, 0, 1050 },
	{ 1025, 3.49f, 0, "head", 0, 1025 },		/* centre 2.5, r 1 */
	{ 1025, 3.51f, 0, NULL, 0, 1025 },
	{ 1050, 5, -2, "body", 9.5f, 1050 },		/* capsule ends linear */
	{ 1050, 5.4f, -3.2f, "body", 0, 1050 },
	{ 1100, 10, 0, "head", 9, 1100 },		/* at the newest */
	{ 5000, 10, 0, "head", 9, 1100 },		/* past it: the newest */
	{ 5000, 0, 0, NULL, 0, 1100 },
	/* plank at 1025: centre (2.5, 5), rotated 22.5 degrees (the long way
	 * round would be -34.3 degrees, and this point misses that pose) */
	{ 1025, 2.5f + 1.663f, 5 + 0.689f, "plank", 9, 1025 },
	{ 1025, 2.5f + 0.2f, 5 + 1.0f, NULL, 0, 1025 },
	{ 1050, 5, 10, "crate", 9, 1050 },		/* mesh hitbox moved by position */
	{ 1050, 6.5f, 10, NULL, 0, 1050 },
};

START_TEST(test_rewind)
{
	const struct rewind_case *c = &rewind_cases[_i];
	struct store *s;
	struct world *w = moving_world(&s);
	struct world_shot sh = shot_at(c->x, c->y, -10, 0, 0, 1);
	struct world_shot_hit h;
	double used;
	int got;

	sh.has_time = 1;
	sh.time_ms = c->time;
	got = shoot(w, &sh, &h, &used);
	ck_assert_msg(got == (c->hitbox != NULL), "case %d: got %d", _i, got);
	ck_assert_msg(used == c->used, "case %d: used %g", _i, used);
	if (got) {
		ck_assert(h.kind == WORLD_HIT_ENTITY);
		ck_assert_str_eq(h.entity, "p");
		ck_assert_str_eq(h.hitbox, c->hitbox);
		if (c->t)
			ck_assert_msg(fabsf(h.t - c->t) < 1e-4f, "case %d: t %g", _i, h.t);
		ck_assert(!h.inside);
		if (strcmp(c->hitbox, "crate") == 0)
			ck_assert_uint_lt(h.triangle, 12);
		else
			ck_assert_uint_eq(h.triangle, WORLD_NONE);
	}
	world_unref(w);
	store_free(s);
}
END_TEST

/* Every shape at 5 units across at 1000 ms and 0.1 at 1100 ms, moving +10
 * in x: rewound to 1099 ms it keeps the earlier size around x 9.9, so
 * reaching x 14 (the later tick's own bounds end near 10.2). One entity a
 * shape, 30 apart in y. */
START_TEST(test_rewind_shrinking)
{
	static const char *const ids[4] = { "sphere", "capsule", "box", "mesh" };
	struct hitbox_in h0[4], h1[4];
	struct entity_in e0[4], e1[4];
	struct store *s;
	struct world *w;
	int k;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	put(s, "crate", cube_mesh(1));
	w = new_world(s, NULL, 0, NULL);
	h0[0] = hb_sphere("s", v3(0, 0, 0), 5);
	h1[0] = hb_sphere("s", v3(10, 0, 0), 0.1f);
	h0[1] = hb_capsule("s", v3(0, 30, 0), v3(0, 31, 0), 5);
	h1[1] = hb_capsule("s", v3(10, 30, 0), v3(10, 31, 0), 0.1f);
	h0[2] = hb_box("s", v3(0, 60, 0), v3(5, 5, 5), 1, 0, 0, 0);
	h1[2] = hb_box("s", v3(10, 60, 0), v3(0.1f, 0.1f, 0.1f), 1, 0, 0, 0);
	h0[3] = hb_mesh("s", "crate", v3(0, 90, 0));
	h0[3].size = v3(5, 5, 5);
	h1[3] = hb_mesh("s", "crate", v3(10, 90, 0));
	h1[3].size = v3(0.1f, 0.1f, 0.1f);
	for (k = 0; k < 4; k++) {
		e0[k] = (struct entity_in){ ids[k], 0, &h0[k], 1 };
		e1[k] = (struct entity_in){ ids[k], 0, &h1[k], 1 };
	}
	ingest1(w, 1, 1000, e0, 4);
	ingest1(w, 2, 1100, e1, 4);
	for (k = 0; k < 4; k++) {
		struct world_shot sh = shot_at(14, 30.0f * (float)k, -100, 0, 0, 1);
		struct world_shot_hit h;
		double used;

		sh.has_time = 1;
		sh.time_ms = 1099;
		ck_assert_msg(shoot(w, &sh, &h, &used) == 1, "%s: missed at x 14", ids[k]);
		ck_assert_str_eq(h.entity, ids[k]);
		ck_assert_msg(h.t > 90 && h.t < 100, "%s: t %g", ids[k], h.t);
		sh = shot_at(15.5f, 30.0f * (float)k, -100, 0, 0, 1);
		sh.has_time = 1;
		sh.time_ms = 1099;
		ck_assert_msg(shoot(w, &sh, &h, &used) == 0, "%s: hit at x 15.5", ids[k]);
	}
	world_unref(w);
	store_free(s);
}
END_TEST

/* Two entities hit at the same distance: the first in id order wins,
 * whichever of them is a mesh hitbox (a mesh hitbox's hit once kept the
 * lead whatever the order). */
START_TEST(test_tie_with_mesh_hitbox)
{
	struct store *s;
	struct world *w;
	struct hitbox_in sphere = hb_sphere("ball", v3(0, 0, 0), 1);
	struct hitbox_in mesh = hb_mesh("crate", "crate", v3(0, 0, 0));
	struct entity_in e[2] = { { "a", 0, _i ? &mesh : &sphere, 1 },
				  { "b", 0, _i ? &sphere : &mesh, 1 } };
	struct world_shot sh = shot_at(-10, 0, 0, 1, 0, 0);
	struct world_shot_hit h;
	double used;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	put(s, "crate", cube_mesh(1));
	w = new_world(s, NULL, 0, NULL);
	ingest1(w, 1, 1000, e, 2);
	ck_assert_int_eq(shoot(w, &sh, &h, &used), 1);
	ck_assert(h.t == 9);
	ck_assert_str_eq(h.entity, "a");
	ck_assert_str_eq(h.hitbox, _i ? "crate" : "ball");
	world_unref(w);
	store_free(s);
}
END_TEST

START_TEST(test_time_range)
{
	struct store *s;
	struct world *w = moving_world(&s);
	struct world *empty = new_world(s, NULL, 0, NULL);
	struct world_view *v;
	struct world_shot sh = shot_at(0, 0, -10, 0, 0, 1);
	struct world_shot_hit h;
	uint32_t n, tot;
	double used;
	int has;
	size_t bad;

	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	sh.has_time = 1;
	sh.time_ms = 999.999;
	ck_assert_int_eq(world_hitscan(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, &used, &has, NULL), CORE_ERANGE);
	world_view_release(v);
	/* no snapshot held: static only without a time, an error with one */
	ck_assert_int_eq(world_view_acquire(empty, &v, &bad), CORE_OK);
	ck_assert_int_eq(world_hitscan(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, &used, &has, NULL), CORE_ERANGE);
	sh.has_time = 0;
	ck_assert_int_eq(world_hitscan(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, &used, &has, NULL), CORE_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(has, 0);
	world_view_release(v);
	world_unref(empty);
	world_unref(w);
	store_free(s);
}
END_TEST

/* The earlier snapshot decides existence; teleports hold the earlier pose. */
START_TEST(test_existence_and_teleport)
{
	struct store *s;
	struct world *w;
	struct hitbox_in ha = hb_sphere("h", v3(0, 0, 0), 1), hb = hb_sphere("h", v3(20, 0, 0), 1);
	struct hitbox_in hc = hb_sphere("h", v3(40, 0, 0), 1);
	struct hitbox_in ht0 = hb_sphere("h", v3(60, 0, 0), 1), ht1 = hb_sphere("h", v3(160, 0, 0), 1);
	struct entity_in t0[3] = { { "a", 0, &ha, 1 }, { "b", 0, &hb, 1 }, { "t", 0, &ht0, 1 } };
	struct entity_in t1[3] = { { "b", 0, &hb, 1 }, { "c", 0, &hc, 1 }, { "t", 0, &ht1, 1 } };
	struct world_shot sh;
	struct world_shot_hit h;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	w = new_world(s, NULL, 0, NULL);
	ingest1(w, 10, 0, t0, 3);
	ingest1(w, 11, 100, t1, 3);
	sh = shot_at(0, 0, -10, 0, 0, 1);
	sh.has_time = 1;
	sh.time_ms = 90;
	ck_assert(shoot(w, &sh, &h, NULL));	/* "a" only in the earlier: holds its pose */
	ck_assert_str_eq(h.entity, "a");
	sh.ray.origin.x = 40;
	ck_assert(!shoot(w, &sh, &h, NULL));	/* "c" only in the later: not there yet */
	sh.time_ms = 100;
	ck_assert(shoot(w, &sh, &h, NULL));
	ck_assert_str_eq(h.entity, "c");
	sh.ray.origin.x = 0;
	ck_assert(!shoot(w, &sh, &h, NULL));
	/* "t" moved 100 > 64: at 90 ms still at 60, not at 150 */
	sh.time_ms = 90;
	sh.ray.origin.x = 60;
	ck_assert(shoot(w, &sh, &h, NULL));
	ck_assert_str_eq(h.entity, "t");
	sh.ray.origin.x = 150;
	ck_assert(!shoot(w, &sh, &h, NULL));
	sh.time_ms = 100;
	sh.ray.origin.x = 160;
	ck_assert(shoot(w, &sh, &h, NULL));
	world_unref(w);
	store_free(s);
}
END_TEST

/* ---- filters and the merge */

START_TEST(test_filters_and_merge)
{
	struct store *s;
	struct world *w;
	struct world_view *v;
	struct world_instance_in wall;
	double pos[3] = { 0, 0, 5 }, q[4] = { 1, 0, 0, 0 }, sc[3] = { 1, 1, 1 };
	struct hitbox_in flush = hb_box("chest", v3(0, 0, 5), v3(1, 1, 1), 1, 0, 0, 0);
	struct hitbox_in nearer = hb_box("chest", v3(0, 0, 4.99f), v3(1, 1, 1), 1, 0, 0, 0);
	struct hitbox_in other = hb_sphere("head", v3(0, 0, -5), 1);
	struct entity_in e1[2] = { { "target", 1, &flush, 1 }, { "shooter", 2, &other, 1 } };
	struct entity_in e2[2] = { { "target", 1, &nearer, 1 }, { "shooter", 2, &other, 1 } };
	const char *ign[1] = { "shooter" };
	struct world_shot sh = shot_at(0, 0, -10, 0, 0, 1);
	struct world_shot_hit h, all[8];
	uint32_t n, tot;
	double used;
	int has;
	size_t bad;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	put(s, "wall", cube_mesh(1));
	ck_assert_int_eq(xform_from_trs(pos, q, sc, &wall.xf), CORE_OK);
	wall.id = "wall-1";
	wall.mesh = "wall";
	wall.layer = 0;
	w = new_world(s, &wall, 1, NULL);
	ingest1(w, 1, 0, e1, 2);

	/* the shooter's own head is first along the ray: ignore skips it */
	ck_assert(shoot(w, &sh, &h, NULL));
	ck_assert_str_eq(h.entity, "shooter");
	ck_assert(h.inside == 0 && fabsf(h.t - 4) < 1e-5f);
	sh.ignore = ign;
	sh.nignore = 1;
	/* a wall flush with the chest: static wins the tie */
	ck_assert(shoot(w, &sh, &h, NULL));
	ck_assert(h.kind == WORLD_HIT_STATIC);
	ck_assert_str_eq(h.instance, "wall-1");
	ck_assert_str_eq(h.mesh, "wall");
	ck_assert(h.t == 14);
	ck_assert(h.normal.z == -1);
	/* layers: without layer 0 the wall is not there */
	sh.layers = 1u << 1;
	ck_assert(shoot(w, &sh, &h, NULL));
	ck_assert_str_eq(h.entity, "target");
	ck_assert(h.t == 14);
	sh.layers = 1u << 2;
	ck_assert(!shoot(w, &sh, &h, NULL) || strcmp(h.entity, "target") != 0);
	sh.layers = WORLD_LAYERS_ALL;

	/* mode all: wall entry (static first at the tie), chest, wall exit
	 * (off the faces' diagonals, so each face is one triangle hit) */
	sh.ray.origin = v3(0.3f, 0.1f, -10);
	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	ck_assert_int_eq(world_hitscan(v, &sh, HIT_ALL, 8, all, &n, &tot, &used, &has, NULL), CORE_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(tot, 3);
	ck_assert(all[0].kind == WORLD_HIT_STATIC && all[0].t == 14);
	ck_assert(all[1].kind == WORLD_HIT_ENTITY && all[1].t == 14);
	ck_assert(all[2].kind == WORLD_HIT_STATIC && all[2].t == 16);
	/* capped */
	ck_assert_int_eq(world_hitscan(v, &sh, HIT_ALL, 2, all, &n, &tot, &used, &has, NULL), CORE_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(tot, 3);
	world_view_release(v);

	/* one hundredth nearer than the wall: the chest wins */
	ingest1(w, 2, 10, e2, 2);
	ck_assert(shoot(w, &sh, &h, NULL));
	ck_assert(h.kind == WORLD_HIT_ENTITY);
	ck_assert_str_eq(h.hitbox, "chest");
	/* a shot starting inside a hitbox: distance 0, inside */
	sh = shot_at(0, 0, -5.5f, 1, 0, 0);
	ck_assert(shoot(w, &sh, &h, NULL));
	ck_assert(h.inside && h.t == 0);
	ck_assert_str_eq(h.entity, "shooter");
	world_unref(w);
	store_free(s);
}
END_TEST

/* ---- ingest rules */

/* K squares across the x axis at x = 1..K (two triangles each). */
#define STACK_K 40
static struct mesh *stack_mesh(void)
{
	float xyz[STACK_K * 12];
	uint32_t idx[STACK_K * 6];
	struct mesh *m = NULL;
	int k, c;

	for (k = 0; k < STACK_K; k++) {
		for (c = 0; c < 4; c++) {
			xyz[12 * k + 3 * c] = (float)(k + 1);
			xyz[12 * k + 3 * c + 1] = c == 1 || c == 2 ? 1 : -1;
			xyz[12 * k + 3 * c + 2] = c >= 2 ? 1 : -1;
		}
		for (c = 0; c < 6; c++)
			idx[6 * k + c] = (uint32_t)(4 * k) + (uint32_t[]){ 0, 1, 2, 0, 2, 3 }[c];
	}
	ck_assert_int_eq(mesh_build(xyz, 4 * STACK_K, idx, 2 * STACK_K, &m, NULL), CORE_OK);
	return m;
}

/* Mode all with more hits on one mesh than a shot's first room for them
 * (world_query.c's hitroom grows and casts the mesh again): every max_hits
 * gives the nearest min(max_hits, found) of the static stack (x = 1..40)
 * and of an entity's mesh hitbox stack 50 further on (x = 51..90), in
 * order, and the total found. */
START_TEST(test_all_many_hits)
{
	static const uint32_t caps[] = { 1, 2, 15, 16, 17, 33, 39, 40, 41, 79, 80, 81, 65536 };
	struct store *s;
	struct world *w;
	struct world_view *v;
	struct world_instance_in in;
	double pos[3] = { 0, 0, 0 }, q[4] = { 1, 0, 0, 0 }, sc[3] = { 1, 1, 1 };
	struct hitbox_in hb = hb_mesh("stack", "stack", v3(50, 0, 0));
	struct entity_in e = { "e", 0, &hb, 1 };
	struct world_shot sh = shot_at(0, 0.3f, 0.2f, 1, 0, 0);
	struct world_shot_hit *all = malloc(2 * STACK_K * sizeof(*all));
	uint32_t n, tot, j;
	size_t bad, c;
	double used;
	int has;

	ck_assert_ptr_nonnull(all);
	ck_assert_int_eq(store_new(&s), CORE_OK);
	put(s, "stack", stack_mesh());
	ck_assert_int_eq(xform_from_trs(pos, q, sc, &in.xf), CORE_OK);
	in.id = "st";
	in.mesh = "stack";
	in.layer = 0;
	w = new_world(s, &in, 1, NULL);
	ingest1(w, 1, 0, &e, 1);
	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	for (c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		uint32_t want = caps[c] < 2 * STACK_K ? caps[c] : 2 * STACK_K;

		/* a buffer of max_hits answers is the caller's: at most 80 written */
		ck_assert_int_eq(world_hitscan(v, &sh, HIT_ALL, caps[c], all, &n, &tot, &used, &has,
					       NULL), CORE_OK);
		ck_assert_uint_eq(n, want);
		ck_assert_uint_eq(tot, 2 * STACK_K);
		for (j = 0; j < n; j++) {
			int st = j < STACK_K;
			float x = (float)(st ? j + 1 : 50 + j + 1 - STACK_K);

			ck_assert_int_eq(all[j].kind, st ? WORLD_HIT_STATIC : WORLD_HIT_ENTITY);
			ck_assert_msg(fabsf(all[j].t - x) <= 1e-6f * x, "max_hits %u, hit %u at %.9g",
				      caps[c], j, all[j].t);
			ck_assert_uint_eq(all[j].triangle / 2, st ? j : j - STACK_K);
		}
		ck_assert_int_eq(world_raycast(v, &sh, HIT_ALL, caps[c], all, &n, &tot, NULL), CORE_OK);
		ck_assert_uint_eq(n, caps[c] < STACK_K ? caps[c] : STACK_K);
		ck_assert_uint_eq(tot, STACK_K);
		for (j = 0; j < n; j++)
			ck_assert(all[j].kind == WORLD_HIT_STATIC &&
				  fabsf(all[j].t - (float)(j + 1)) <= 1e-6f * (float)(j + 1));
	}
	world_view_release(v);
	world_unref(w);
	store_free(s);
	free(all);
}
END_TEST

START_TEST(test_ingest_errors)
{
	struct store *s;
	struct world *w;
	struct world_info info;
	struct world_fail f;
	struct hitbox_in h[2] = { hb_sphere("x", v3(0, 0, 0), 1), hb_sphere("x", v3(1, 0, 0), 1) };
	struct hitbox_in m = hb_mesh("door", "no-such-mesh", v3(0, 0, 0));
	struct entity_in dup_ent[2] = { { "a", 0, h, 1 }, { "a", 0, h, 1 } };
	struct entity_in dup_hb[2] = { { "a", 0, h, 1 }, { "b", 0, h, 2 } };
	struct entity_in missing[2] = { { "a", 0, h, 1 }, { "b", 0, &m, 1 } };
	struct entity_in bad_layer = { "a", 32, h, 1 };
	struct entity_in ok = { "a", 0, h, 1 };

	ck_assert_int_eq(store_new(&s), CORE_OK);
	w = new_world(s, NULL, 0, NULL);
	ck_assert_int_eq(world_ingest(w, 5, 100, dup_ent, 2, &f), CORE_EINVAL);
	ck_assert_uint_eq(f.item, 1);
	ck_assert_int_eq(world_ingest(w, 5, 100, dup_hb, 2, &f), CORE_EINVAL);
	ck_assert_uint_eq(f.item, 1);
	ck_assert_uint_eq(f.hitbox, 1);
	ck_assert_int_eq(world_ingest(w, 5, 100, missing, 2, &f), CORE_ENOTFOUND);
	ck_assert_uint_eq(f.item, 1);
	ck_assert_uint_eq(f.hitbox, 0);
	ck_assert_int_eq(world_ingest(w, 5, 100, &bad_layer, 1, &f), CORE_EINVAL);
	world_get_info(w, &info);
	ck_assert_uint_eq(info.ticks, 0);
	ck_assert_int_eq(world_ingest(w, 5, 100, &ok, 1, &f), CORE_OK);
	ck_assert_int_eq(world_ingest(w, 5, 200, &ok, 1, &f), CORE_ECONFLICT);	/* same tick */
	ck_assert_int_eq(world_ingest(w, 4, 200, &ok, 1, &f), CORE_ECONFLICT);	/* older tick */
	ck_assert_int_eq(world_ingest(w, 6, 100, &ok, 1, &f), CORE_ECONFLICT);	/* same time */
	ck_assert_int_eq(world_ingest(w, 6, 100.5, &ok, 1, &f), CORE_OK);
	world_get_info(w, &info);
	ck_assert_uint_eq(info.ticks, 2);
	ck_assert_uint_eq(info.newest_tick, 6);
	ck_assert_uint_eq(info.entities, 1);
	ck_assert_uint_eq(info.snapshots_ingested, 2);
	world_unref(w);
	store_free(s);
}
END_TEST

/* A rotation is any non-zero quaternion, however small its components
 * (API.md's conventions): a plank turned 90 degrees about z, as a box and as
 * a mesh hitbox, given at unit length and scaled down until the squares of
 * its components underflow. Each is taken (one of 1e-200 was refused as
 * invalid: its length was taken without scaling, and came to 0) and answers
 * exactly as at unit length. */
START_TEST(test_tiny_quaternions)
{
	static const double scales[] = { 1, 1e-100, 1e-160, 1e-200, 1e-300 };
	const double c45 = cos(M_PI / 4), s45 = sin(M_PI / 4);
	/* along +z from (x, y, -10): the turned plank reaches y 1.5, not x 1.5 */
	static const float xy[4][2] = { { 0, 1.5f }, { 1.5f, 0 }, { 0, 11.5f }, { 1.5f, 10 } };
	float t_unit[4] = { 0 };
	struct store *s;
	size_t k, j;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	put(s, "crate", cube_mesh(1));
	for (k = 0; k < sizeof(scales) / sizeof(scales[0]); k++) {
		double q = scales[k];
		struct hitbox_in h[2] = { hb_box("plank", v3(0, 0, 0), v3(2, 0.5f, 1), c45 * q, 0, 0,
						 s45 * q),
					  hb_mesh("door", "crate", v3(0, 10, 0)) };
		struct entity_in e = { "p", 0, h, 2 };
		struct world *w = new_world(s, NULL, 0, NULL);
		struct world_fail f;

		h[1].size = v3(2, 0.5f, 1);
		h[1].rot[0] = c45 * q;
		h[1].rot[3] = s45 * q;
		ck_assert_msg(world_ingest(w, 1, 0, &e, 1, &f) == CORE_OK, "scale %g refused", q);
		for (j = 0; j < 4; j++) {
			struct world_shot sh = shot_at(xy[j][0], xy[j][1], -10, 0, 0, 1);
			struct world_shot_hit hit;
			int got = shoot(w, &sh, &hit, NULL);

			ck_assert_msg(got == (j % 2 == 0), "scale %g, shot %zu: got %d", q, j, got);
			if (!got)
				continue;
			ck_assert_str_eq(hit.hitbox, j < 2 ? "plank" : "door");
			if (k == 0)
				t_unit[j] = hit.t;
			ck_assert_msg(hit.t == t_unit[j], "scale %g, shot %zu: t %.9g, not %.9g", q, j,
				      hit.t, t_unit[j]);
		}
		world_unref(w);
	}
	ck_assert_float_eq_tol(t_unit[0], 9, 1e-5);
	ck_assert_float_eq_tol(t_unit[2], 9, 1e-5);
	store_free(s);
}
END_TEST

/* Duplicate hitbox ids, found pair by pair (up to 64) or by sorting: the
 * reported hitbox is the second index of the smallest duplicated id,
 * checked against a plain quadratic oracle for random entities of 2 to 150
 * hitboxes drawn from a small set of ids. */
START_TEST(test_duplicate_hitbox_ids)
{
	static char names[40][4];
	static struct hitbox_in h[150];
	struct rng g = { 0xd0b1u };
	struct store *s;
	struct world *w;
	struct world_fail f;
	int round, k, j, dups = 0;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	w = new_world(s, NULL, 0, NULL);
	for (k = 0; k < 40; k++)
		snprintf(names[k], sizeof(names[k]), "%c%d", 'a' + k % 7, k);
	for (round = 0; round < 400; round++) {
		int n = 2 + (int)(rng_next(&g) % (round % 2 ? 149 : 63));
		int pool = n < 40 ? n + (int)(rng_next(&g) % 8) : 40;
		size_t want = WORLD_NONE;
		struct entity_in e = { "e", 0, h, (size_t)n };
		static char uniq[150][8];

		for (k = 0; k < n; k++) {
			int pick = (int)(rng_next(&g) % (size_t)(pool > 40 ? 40 : pool));

			if (n > 40 && rng_next(&g) % 4) {	/* mostly distinct ids */
				snprintf(uniq[k], sizeof(uniq[k]), "u%03d", k);
				h[k] = hb_sphere(uniq[k], v3((float)k, 0, 0), 0.5f);
			} else {
				h[k] = hb_sphere(names[pick], v3((float)k, 0, 0), 0.5f);
			}
		}
		/* oracle: of the ids seen twice, the smallest; its second index */
		for (k = 1; k < n; k++)
			for (j = 0; j < k; j++)
				if (strcmp(h[j].id, h[k].id) == 0) {
					if (want == WORLD_NONE || strcmp(h[k].id, h[want].id) < 0)
						want = (size_t)k;
					break;
				}
		if (want == WORLD_NONE) {
			ck_assert_int_eq(world_ingest(w, (uint64_t)round + 1, round + 1.0, &e, 1, &f), CORE_OK);
			continue;
		}
		dups++;
		ck_assert_int_eq(world_ingest(w, (uint64_t)round + 1, round + 1.0, &e, 1, &f), CORE_EINVAL);
		ck_assert_uint_eq(f.item, 0);
		ck_assert_msg(f.hitbox == want, "round %d (%d hitboxes): hitbox %zu, want %zu", round, n,
			      f.hitbox, want);
	}
	ck_assert_int_gt(dups, 200);
	world_unref(w);
	store_free(s);
}
END_TEST

START_TEST(test_history_bounds)
{
	struct store *s;
	struct world *w;
	struct world_info info;
	struct world_opts o = { 100, 64, 256 };
	struct hitbox_in h = hb_sphere("x", v3(0, 0, 0), 1);
	struct entity_in e = { "a", 0, &h, 1 };
	int i;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	w = new_world(s, NULL, 0, &o);
	for (i = 0; i <= 10; i++)
		ingest1(w, (uint64_t)i, 50.0 * i, &e, 1);
	world_get_info(w, &info);
	/* newest 500: 400, 450, 500 (400 is the last at or before 500 - 100) */
	ck_assert_uint_eq(info.ticks, 3);
	ck_assert(info.oldest_time_ms == 400);
	ck_assert_uint_eq(info.oldest_tick, 8);
	world_unref(w);
	o.history_ms = 1e6;
	o.max_snapshots = 4;
	w = new_world(s, NULL, 0, &o);
	for (i = 0; i <= 10; i++)
		ingest1(w, (uint64_t)i, 50.0 * i, &e, 1);
	world_get_info(w, &info);
	ck_assert_uint_eq(info.ticks, 4);
	ck_assert_uint_eq(info.oldest_tick, 7);
	world_unref(w);
	store_free(s);
}
END_TEST

START_TEST(test_world_new_errors)
{
	struct store *s;
	struct world *w = NULL;
	struct world_fail f;
	struct world_instance_in in[3];
	struct world_opts bad = { 0, 64, 256 };
	int i;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	put(s, "m", cube_mesh(1));
	for (i = 0; i < 3; i++) {
		xform_identity(&in[i].xf);
		in[i].mesh = "m";
		in[i].layer = 0;
	}
	in[0].id = "a";
	in[1].id = "b";
	in[2].id = "a";
	ck_assert_int_eq(world_new(s, in, 3, &default_opts, &w, &f), CORE_EINVAL);
	ck_assert_uint_eq(f.item, 2);
	in[2].id = "c";
	in[1].mesh = "gone";
	ck_assert_int_eq(world_new(s, in, 3, &default_opts, &w, &f), CORE_ENOTFOUND);
	ck_assert_uint_eq(f.item, 1);
	in[1].mesh = "m";
	in[2].layer = 32;
	ck_assert_int_eq(world_new(s, in, 3, &default_opts, &w, &f), CORE_EINVAL);
	ck_assert_uint_eq(f.item, 2);
	in[2].layer = 31;
	ck_assert_int_eq(world_new(s, in, 3, &bad, &w, &f), CORE_EINVAL);
	ck_assert_int_eq(world_new(s, in, 3, &default_opts, &w, &f), CORE_OK);
	world_unref(w);
	store_free(s);
}
END_TEST

/* A replaced mesh is seen by the next view; a deleted one is an error. */
START_TEST(test_mesh_replace_and_delete)
{
	struct store *s;
	struct world *w;
	struct world_view *v;
	struct world_instance_in in[2];
	struct world_shot sh = shot_at(0, 0, -10, 0, 0, 1);
	struct world_shot_hit h;
	uint32_t n, tot;
	size_t bad = 99;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	put(s, "floor", cube_mesh(100));
	put(s, "wall", cube_mesh(1));
	xform_identity(&in[0].xf);
	xform_identity(&in[1].xf);
	in[0].xf.m[7] = -200;	/* the floor, far below */
	in[0].xf.inv[7] = 200;
	in[0] = (struct world_instance_in){ "floor-1", "floor", in[0].xf, 0 };
	in[1] = (struct world_instance_in){ "wall-1", "wall", in[1].xf, 0 };
	w = new_world(s, in, 2, NULL);
	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	ck_assert_int_eq(world_raycast(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, NULL), CORE_OK);
	ck_assert(n == 1 && h.t == 9);
	put(s, "wall", cube_mesh(2));
	/* the view in hand keeps the old version ... */
	ck_assert_int_eq(world_raycast(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, NULL), CORE_OK);
	ck_assert(n == 1 && h.t == 9);
	world_view_release(v);
	/* ... the next one sees the new */
	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	ck_assert_int_eq(world_raycast(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, NULL), CORE_OK);
	ck_assert(n == 1 && h.t == 8);
	ck_assert_int_eq(store_delete(s, "wall"), CORE_OK);
	ck_assert_int_eq(world_raycast(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, NULL), CORE_OK);
	world_view_release(v);
	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_ENOTFOUND);
	ck_assert_uint_eq(bad, 1);
	world_unref(w);
	store_free(s);
}
END_TEST


/* ---- entity culling against brute force: random moving spheres,
 * capsules and boxes whose radius or size changes from tick to tick,
 * random rewound shots; the culled answer must be the one found by
 * interpolating and casting every hitbox of every entity (a rewound pose
 * keeps the earlier tick's size, so a hitbox that shrinks reaches past the
 * later tick's own bounds). */

#define CE_MAX 200	/* entities: 16, scanned flat, or 200 (some absent), through the tree */
#define CH 37		/* hitboxes each: more than a visit takes per pass (32) */
#define CT 3		/* ticks */

static vec3 lerp_v(vec3 a, vec3 b, double f)	/* the documented linear rule */
{
	return v3((float)(a.x + f * ((double)b.x - a.x)), (float)(a.y + f * ((double)b.y - a.y)),
		  (float)(a.z + f * ((double)b.z - a.z)));
}

START_TEST(test_culling_vs_brute_force)
{
	const int CE = _i ? CE_MAX : 16, shots = _i ? 600 : 4000;
	struct rng g = { 0xc011u + (uint64_t)_i };
	struct store *s;
	struct world *w;
	struct world_view *v;
	static struct hitbox_in hb[CT][CE_MAX][CH];
	static struct entity_in ents[CT][CE_MAX];
	char ids[CE_MAX][8], hids[CH][4];
	int present[CT][CE_MAX];
	int t, e, k, n, hits = 0;
	size_t bad;
	struct world_opts o = { 1000, 3, 256 };	/* teleport 3: some entities jump */

	ck_assert_int_eq(store_new(&s), CORE_OK);
	w = new_world(s, NULL, 0, &o);
	for (k = 0; k < CH; k++)
		snprintf(hids[k], sizeof(hids[k]), "h%d", k);
	for (e = 0; e < CE; e++)
		snprintf(ids[e], sizeof(ids[e]), "e%03d", e);
	for (t = 0; t < CT; t++) {
		int m = 0;

		for (e = 0; e < CE; e++) {
			present[t][e] = rng_next(&g) % 8 != 0;	/* some come and go */
			for (k = 0; k < CH; k++) {
				vec3 base = t ? hb[t - 1][e][k].a : v3((float)rng_range(&g, -10, 10),
									(float)rng_range(&g, -10, 10),
									(float)rng_range(&g, -10, 10));
				vec3 step = v3((float)rng_range(&g, -2, 2), (float)rng_range(&g, -2, 2),
					       (float)rng_range(&g, -2, 2));

				float r = (float)rng_range(&g, 0.1, 1.2);

				if (k % 3 == 1)
					hb[t][e][k] = hb_capsule(hids[k], v3_add(base, step),
								 v3_add(base, v3(0, 1.5f, 0.3f)), r);
				else if (k % 3 == 2)
					hb[t][e][k] = hb_box(hids[k], v3_add(base, step),
							     v3(r, (float)rng_range(&g, 0.1, 1.2),
								(float)rng_range(&g, 0.1, 1.2)), 1, 0, 0, 0);
				else
					hb[t][e][k] = hb_sphere(hids[k], v3_add(base, step), r);
			}
			if (present[t][e])
				ents[t][m++] = (struct entity_in){ ids[e], (uint32_t)(e % 3), hb[t][e], CH };
		}
		ingest1(w, (uint64_t)t + 1, 100.0 * t, ents[t], (size_t)m);
	}
	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	for (n = 0; n < shots; n++) {
		struct world_shot sh = shot_at((float)rng_range(&g, -15, 15), (float)rng_range(&g, -15, 15),
					       (float)rng_range(&g, -15, 15), 0, 0, 1);
		struct world_shot_hit got;
		uint32_t nh, tot;
		double used, f, time = rng_range(&g, 0, 230);
		int has, t0, found = 0, best_e = -1, best_k = -1, ig[3];
		float best_t = INFINITY;
		const char *ign[3];
		char absent[8];

		sh.ray.dir = v3_normalize(v3_sub(v3((float)rng_range(&g, -8, 8), (float)rng_range(&g, -8, 8),
						    (float)rng_range(&g, -8, 8)), sh.ray.origin));
		sh.has_time = 1;
		sh.time_ms = time;
		sh.layers = n % 5 ? WORLD_LAYERS_ALL : 0x3u;
		/* ignore up to three entities, some absent at that tick, and a
		 * name no entity has (looked up by the snapshot's id index) */
		snprintf(absent, sizeof(absent), "x%02d", n % 100);
		for (k = 0; k < 3; k++) {
			ig[k] = (int)(rng_next(&g) % CE);
			ign[k] = ids[ig[k]];
		}
		if (n % 7 == 0)
			ign[2] = absent;
		sh.ignore = ign;
		sh.nignore = (size_t)(n % 4);
		ck_assert_int_eq(world_hitscan(v, &sh, HIT_CLOSEST, 1, &got, &nh, &tot, &used, &has, NULL), CORE_OK);
		/* brute force */
		t0 = time >= 200 ? 2 : (int)(time / 100);
		f = t0 == 2 ? 0 : (time - 100.0 * t0) / 100.0;
		for (e = 0; e < CE; e++) {
			int interp, moved = 0;

			if (!present[t0][e] || !((sh.layers >> (e % 3)) & 1))
				continue;
			for (k = 0; k < (int)sh.nignore; k++)
				if (ign[k] == ids[e])
					break;
			if (k < (int)sh.nignore)
				continue;
			interp = f > 0 && present[t0 + 1][e];
			for (k = 0; interp && k < CH; k++) {
				vec3 a0 = hb[t0][e][k].shape == HITBOX_CAPSULE
						  ? v3_scale(v3_add(hb[t0][e][k].a, hb[t0][e][k].b), 0.5f)
						  : hb[t0][e][k].a;
				vec3 a1 = hb[t0 + 1][e][k].shape == HITBOX_CAPSULE
						  ? v3_scale(v3_add(hb[t0 + 1][e][k].a, hb[t0 + 1][e][k].b), 0.5f)
						  : hb[t0 + 1][e][k].a;
				vec3 dd = v3_sub(a1, a0);

				if ((double)dd.x * dd.x + (double)dd.y * dd.y + (double)dd.z * dd.z > 9)
					moved = 1;
			}
			interp = interp && !moved;
			for (k = 0; k < CH; k++) {
				const struct hitbox_in *h0 = &hb[t0][e][k], *h1 = interp ? &hb[t0 + 1][e][k] : h0;
				vec3 a = interp ? lerp_v(h0->a, h1->a, f) : h0->a;
				struct shape_hit r;
				struct ray ray = sh.ray;
				int hit;

				ray.tmax = best_t;
				if (h0->shape == HITBOX_SPHERE) {
					hit = sphere_raycast(a, h0->radius, &ray, &r);
				} else if (h0->shape == HITBOX_CAPSULE) {
					hit = capsule_raycast(a, interp ? lerp_v(h0->b, h1->b, f) : h0->b,
							      h0->radius, &ray, &r);
				} else {
					struct obb box;
					struct obb_hit oh;

					ck_assert_int_eq(obb_from_quat(a, h0->size, h0->rot, &box), CORE_OK);
					hit = obb_raycast(&box, &ray, &oh);
					r.t = oh.t;
				}
				if (hit && (!found || r.t < best_t)) {
					found = 1;
					best_t = r.t;
					best_e = e;
					best_k = k;
				}
			}
		}
		ck_assert_msg((int)nh == found, "shot %d at %g: got %u, brute force %d", n, time, nh, found);
		if (found) {
			ck_assert_msg(got.t == best_t, "shot %d: t %.9g, brute force %.9g", n, got.t, best_t);
			ck_assert_str_eq(got.entity, ids[best_e]);
			ck_assert_str_eq(got.hitbox, hids[best_k]);
			hits++;
		}
	}
	ck_assert_int_gt(hits, shots / 5);
	world_view_release(v);
	world_unref(w);
	store_free(s);
}
END_TEST

/* ---- a reader racing a writer: views stay valid while ticks go by */

struct race {
	struct world *w;
	atomic_int done;
	int errors;
};

static void *reader(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->done)) {
		struct world_view *v;
		struct world_shot sh = shot_at(0, 0, -10, 0, 0, 1);
		struct world_shot_hit h;
		uint32_t n, tot;
		double used;
		int has, k;
		size_t bad;

		if (world_view_acquire(r->w, &v, &bad) != CORE_OK) {
			r->errors++;
			continue;
		}
		for (k = 0; k < 20; k++) {
			/* the target always stands at x = 0 */
			if (world_hitscan(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, &used, &has, NULL) != CORE_OK ||
			    (has && n != 1))
				r->errors++;
		}
		world_view_release(v);
	}
	return NULL;
}

START_TEST(test_reader_races_writer)
{
	struct store *s;
	struct race r;
	pthread_t th;
	struct world_opts o = { 50, 64, 8 };
	struct hitbox_in h[20];
	struct entity_in e[8];
	char names[8][8];
	int i, k;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	r.w = new_world(s, NULL, 0, &o);
	atomic_init(&r.done, 0);
	r.errors = 0;
	for (k = 0; k < 20; k++)
		h[k] = hb_sphere("x", v3(0, 0, 0), 1);
	for (i = 0; i < 8; i++) {
		snprintf(names[i], sizeof(names[i]), "e%d", i);
		e[i] = (struct entity_in){ names[i], 0, &h[i], 1 };
	}
	ck_assert_int_eq(pthread_create(&th, NULL, reader, &r), 0);
	for (i = 0; i < 2000; i++)
		ingest1(r.w, (uint64_t)i + 1, 8.0 * i, e, 8);
	atomic_store(&r.done, 1);
	pthread_join(th, NULL);
	ck_assert_int_eq(r.errors, 0);
	world_unref(r.w);
	store_free(s);
}
END_TEST

/* ---- a mesh replaced while a view is acquired: the scene resolves every
 * instance from one version of the store (a world whose instances all name
 * one mesh never mixes its old and new versions) */

#define SV_INST 2000

struct replacer {
	struct store *s;
	atomic_int done;
};

static void *replace_wall(void *arg)
{
	struct replacer *r = arg;
	int i;

	for (i = 0; !atomic_load(&r->done); i++)
		put(r->s, "wall", cube_mesh(i % 2 ? 2 : 1));
	return NULL;
}

/* The wall at the first and the last of the SV_INST places (z = 10 k) met
 * at the same distance: 4 (cube 1) or 3 (cube 2), one version of the wall;
 * by world_hitscan (entities) or world_raycast (static instances). */
static int first_and_last_agree(struct world_view *v, int entities)
{
	float t[2];
	int k;

	for (k = 0; k < 2; k++) {
		struct world_shot sh = shot_at(0, 0, 10.0f * (k ? SV_INST - 1 : 0) - 5, 0, 0, 1);
		struct world_shot_hit h;
		uint32_t n, tot;
		double used;
		int has;

		sh.ray.tmax = 4.5f;
		ck_assert_int_eq(entities ? world_hitscan(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, &used,
							  &has, NULL)
					  : world_raycast(v, &sh, HIT_CLOSEST, 1, &h, &n, &tot, NULL),
				 CORE_OK);
		ck_assert_uint_eq(n, 1);
		t[k] = h.t;
	}
	return t[0] == t[1];
}

/* A second of views of w while r's thread replaces the wall, each view
 * built anew: with e, after ingesting a snapshot of SV_INST entities e.
 * How many of the *rounds views mixed two versions. */
static int mixed_views(struct world *w, struct replacer *r, const struct entity_in *e, int *rounds)
{
	struct timespec t0, now;
	pthread_t th;
	int i, mixed = 0;

	atomic_init(&r->done, 0);
	ck_assert_int_eq(pthread_create(&th, NULL, replace_wall, r), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0, now = t0; now.tv_sec - t0.tv_sec + (now.tv_nsec - t0.tv_nsec) * 1e-9 < 1; i++) {
		struct world_view *v;
		size_t bad;

		if (e)
			ingest1(w, (uint64_t)i + 1, 8.0 * i, e, SV_INST);
		ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
		mixed += !first_and_last_agree(v, e != NULL);
		world_view_release(v);
		clock_gettime(CLOCK_MONOTONIC, &now);
	}
	atomic_store(&r->done, 1);
	pthread_join(th, NULL);
	*rounds = i;
	return mixed;
}

START_TEST(test_scene_one_version)
{
	struct world_instance_in *in = calloc(SV_INST, sizeof(*in));
	char (*ids)[8] = calloc(SV_INST, sizeof(*ids));
	struct replacer r;
	struct world *w;
	int i, k, mixed;

	ck_assert(in && ids);
	ck_assert_int_eq(store_new(&r.s), CORE_OK);
	put(r.s, "wall", cube_mesh(1));
	for (k = 0; k < SV_INST; k++) {
		snprintf(ids[k], sizeof(ids[k]), "i%d", k);
		in[k].id = ids[k];
		in[k].mesh = "wall";
		xform_identity(&in[k].xf);
		in[k].xf.m[11] = 10.0f * (float)k;	/* instance k at z = 10 k */
		in[k].xf.inv[11] = -10.0f * (float)k;
	}
	w = new_world(r.s, in, SV_INST, NULL);
	/* a second of views, each built anew (the store changed meanwhile) */
	mixed = mixed_views(w, &r, NULL, &i);
	ck_assert_msg(mixed == 0, "%d of %d views mixed two versions of one mesh", mixed, i);
	world_unref(w);
	store_free(r.s);
	free(ids);
	free(in);
}
END_TEST

/* ... and a snapshot its mesh hitboxes: every one from one version */
START_TEST(test_snapshot_one_version)
{
	struct hitbox_in *h = calloc(SV_INST, sizeof(*h));
	struct entity_in *e = calloc(SV_INST, sizeof(*e));
	char (*ids)[8] = calloc(SV_INST, sizeof(*ids));
	struct replacer r;
	struct world *w;
	int i, k, mixed;

	ck_assert(h && e && ids);
	ck_assert_int_eq(store_new(&r.s), CORE_OK);
	put(r.s, "wall", cube_mesh(1));
	for (k = 0; k < SV_INST; k++) {
		snprintf(ids[k], sizeof(ids[k]), "e%d", k);
		h[k] = hb_mesh("h", "wall", v3(0, 0, 10.0f * (float)k));	/* entity k at z = 10 k */
		e[k] = (struct entity_in){ ids[k], 0, &h[k], 1 };
	}
	w = new_world(r.s, NULL, 0, NULL);
	mixed = mixed_views(w, &r, e, &i);
	ck_assert_msg(mixed == 0, "%d of %d snapshots mixed two versions of one mesh", mixed, i);
	world_unref(w);
	store_free(r.s);
	free(ids);
	free(e);
	free(h);
}
END_TEST

/* Every mesh and snapshot a test made is freed by its end: what they took
 * from the memory budget (--max-memory, membudget.h) is all given back. */
static void budget_given_back(void)
{
	ck_assert_uint_eq(membudget_held(), 0);
}

static Suite *world_suite(void)
{
	Suite *s = suite_create("world");
	TCase *tc = tcase_create("world");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, budget_given_back);
	tcase_add_test(tc, test_tlas_vs_brute_force);
	tcase_add_loop_test(tc, test_rewind, 0, sizeof(rewind_cases) / sizeof(rewind_cases[0]));
	tcase_add_test(tc, test_rewind_shrinking);
	tcase_add_loop_test(tc, test_tie_with_mesh_hitbox, 0, 2);
	tcase_add_test(tc, test_time_range);
	tcase_add_test(tc, test_existence_and_teleport);
	tcase_add_test(tc, test_filters_and_merge);
	tcase_add_test(tc, test_all_many_hits);
	tcase_add_test(tc, test_ingest_errors);
	tcase_add_test(tc, test_tiny_quaternions);
	tcase_add_test(tc, test_history_bounds);
	tcase_add_test(tc, test_world_new_errors);
	tcase_add_test(tc, test_mesh_replace_and_delete);
	tcase_add_loop_test(tc, test_culling_vs_brute_force, 0, 2);
	tcase_add_test(tc, test_duplicate_hitbox_ids);
	tcase_add_test(tc, test_reader_races_writer);
	tcase_add_test(tc, test_scene_one_version);
	tcase_add_test(tc, test_snapshot_one_version);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(world_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
