/* test_api_aimed.c - rays, segments, hitscan shots and box rays aimed
 * exactly at a point (a vertex of a closed mesh, a corner of a box), with
 * directions of any length, through api_handle. Cast as given, each passes
 * through its point, which the closed triangles at the vertex (the closed box
 * at its corner) hold: each must hit, never farther than the point, many of
 * them only grazing it. The triangle answered is hit by the exact rational
 * oracle at the distance answered, and the same directions times a power of
 * two answer the same bytes.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "api.h"
#include "buf.h"
#include "store.h"
#include "testgeom.h"
#include "world_registry.h"

#define NAIM 2048

/* A ray through p: origin o, direction d, p at o + k d; e = o + 2k d, the
 * end of a segment with p half way. */
struct aim {
	float o[3], d[3], e[3];
	double reach;		/* |p - o| = k |d| */
};

static struct api_ctx ctx;
static struct tmesh sph;
static const vec3 sph_center = { 0.3f, -11.1f, 5.9f };

static void call(const char *method, const char *path, const char *body, size_t len,
		 struct api_response *r)
{
	struct api_request rq = { method, path, "application/json", body, len, API_AUTH_WRITE, NULL, NULL };

	api_handle(&ctx, &rq, r);
}

/* A call that must answer status. */
static void call_ok(const char *method, const char *path, const char *body, int status)
{
	struct api_response r;

	call(method, path, body, strlen(body), &r);
	ck_assert_msg(r.status == status, "%s %s: %d %s", method, path, r.status, r.body.data);
	api_response_release(&r);
}

static void setup(void)
{
	struct buf b;

	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ck_assert_int_eq(world_registry_new(&ctx.worlds), CORE_OK);
	ctx.limits = (struct api_limits){ 65536, 16u << 20, 65536, 0, 1u << 28, 1u << 24, 0 };
	tmesh_sphere(&sph, 6, sph_center, 3.7f);
	buf_init(&b);
	buf_puts(&b, "{\"vertices\":[");
	for (size_t i = 0; i < sph.nvert; i++)
		buf_printf(&b, "%s[%.9g,%.9g,%.9g]", i ? "," : "", sph.xyz[3 * i], sph.xyz[3 * i + 1],
			   sph.xyz[3 * i + 2]);
	buf_puts(&b, "],\"triangles\":[");
	for (size_t i = 0; i < sph.ntri; i++)
		buf_printf(&b, "%s[%u,%u,%u]", i ? "," : "", sph.idx[3 * i], sph.idx[3 * i + 1],
			   sph.idx[3 * i + 2]);
	buf_puts(&b, "]}");
	call_ok("PUT", "/v1/meshes/s", b.data, 201);
	buf_release(&b);
}

static void teardown(void)
{
	tmesh_release(&sph);
	world_registry_free(ctx.worlds);
	store_free(ctx.store);
}

static double len3(const double v[3])
{
	return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* o = p - k d and e = p + k d when both are exact in float (then the float
 * ray and segment pass through p); 1 and *a set, else 0. */
static int aim_at(const double p[3], const double d[3], double k, struct aim *a)
{
	for (int j = 0; j < 3; j++) {
		double o = p[j] - k * d[j], e = p[j] + k * d[j];

		if ((double)(float)o != o || (double)(float)e != e || (double)(float)d[j] != d[j])
			return 0;
		a->o[j] = (float)o;
		a->e[j] = (float)e;
		a->d[j] = (float)d[j];
	}
	a->reach = k * len3(d);
	return a->reach > 0;
}

/* A direction of sixteenths near the plane through p with normal n: mostly
 * tangent (a ray that grazes p), tilted inwards by up to tilt. */
static void near_tangent(struct rng *g, const double n[3], double tilt, double d[3])
{
	for (int j = 0; j < 3; j++)
		d[j] = rng_range(g, -1, 1);
	double dn = d[0] * n[0] + d[1] * n[1] + d[2] * n[2], w = rng_range(g, 0, tilt);

	for (int j = 0; j < 3; j++)
		d[j] = round(16 * (d[j] - dn * n[j] - w * n[j])) / 16;
}

/* Rays through the sphere mesh's vertices: from 2p towards the origin of
 * coordinates (p at k = 1), and near-tangent ones of sixteenths (k = 4). */
static size_t sphere_aims(struct aim *a, size_t cap)
{
	struct rng g = { 0x5eedf00dULL };
	size_t n = 0;

	for (size_t i = 0; i < sph.nvert && n + 4 <= cap; i++) {
		double p[3], nr[3], d[3], l;

		for (int j = 0; j < 3; j++)
			p[j] = sph.xyz[3 * i + j];
		nr[0] = p[0] - sph_center.x;
		nr[1] = p[1] - sph_center.y;
		nr[2] = p[2] - sph_center.z;
		l = len3(nr);
		for (int j = 0; j < 3; j++) {
			nr[j] /= l;
			d[j] = -p[j];
		}
		n += aim_at(p, d, 1, &a[n]);
		for (int k = 0; k < 3; k++) {
			near_tangent(&g, nr, 0.4, d);
			n += aim_at(p, d, 4, &a[n]);
		}
	}
	return n;
}

static void put_vec(struct buf *b, const char *key, const float v[3], double scale)
{
	buf_printf(b, "\"%s\":[%.17g,%.17g,%.17g]", key, v[0] * scale, v[1] * scale, v[2] * scale);
}

/* The body of a batch of the aims as rays (key "rays" or "shots") or as
 * segments from o to e (the point half way), directions times scale. */
static void batch_body(struct buf *b, const char *head, const char *key, const struct aim *a,
		       size_t n, double scale, int segments)
{
	buf_init(b);
	buf_printf(b, "{%s\"%s\":[", head, key);
	for (size_t i = 0; i < n; i++) {
		buf_puts(b, i ? ",{" : "{");
		put_vec(b, segments ? "start" : "origin", a[i].o, 1);
		buf_putc(b, ',');
		if (segments)
			put_vec(b, "end", a[i].e, 1);
		else
			put_vec(b, "direction", a[i].d, scale);
		buf_putc(b, '}');
	}
	buf_puts(b, "]}");
}

static cJSON *post_batch(const char *path, const struct buf *body, struct buf *raw)
{
	struct api_response r;
	cJSON *j;

	call("POST", path, body->data, body->len, &r);
	ck_assert_msg(r.status == 200, "%s: %d %s", path, r.status, r.body.data);
	j = cJSON_ParseWithLength(r.body.data, r.body.len);
	ck_assert_ptr_nonnull(j);
	if (raw) {
		buf_init(raw);
		buf_append(raw, r.body.data, r.body.len);
	}
	api_response_release(&r);
	return j;
}

/* The aims as one batch (batch_body, directions as given) to path: the
 * parsed answer, its "results" (one per aim) in *res. */
static cJSON *post_aims(const char *path, const char *head, const char *key, const struct aim *a,
			size_t n, int segments, const cJSON **res)
{
	struct buf body;
	cJSON *j;

	batch_body(&body, head, key, a, n, 1, segments);
	j = post_batch(path, &body, NULL);
	buf_release(&body);
	*res = cJSON_GetObjectItemCaseSensitive(j, "results");
	ck_assert_int_eq(cJSON_GetArraySize(*res), (int)n);
	return j;
}

/* Answer h of aim a (number i) is a hit of kind want ("mesh", "box",
 * "static", "entity"). */
static void check_kind(const cJSON *h, const char *want, const struct aim *a, size_t i)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(h, "hit");

	ck_assert_msg(cJSON_IsString(kind) && strcmp(kind->valuestring, want) == 0,
		      "aim %zu (origin %.9g %.9g %.9g direction %.9g %.9g %.9g): %s, not %s", i,
		      a->o[0], a->o[1], a->o[2], a->d[0], a->d[1], a->d[2],
		      cJSON_IsString(kind) ? kind->valuestring : "no hit", want);
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	ck_assert_msg(cJSON_IsNumber(v), "%s is no number", k);
	return v->valuedouble;
}

/* The answer to a: a hit no farther than the point aimed at, on a triangle
 * that the exact oracle says the float ray meets there. */
static void check_mesh_hit(const cJSON *res, const struct aim *a, size_t i)
{
	const float *x;
	vec3 o = v3(a->o[0], a->o[1], a->o[2]), d = v3(a->d[0], a->d[1], a->d[2]);
	double dist = num(res, "distance"), t, tol = 1e-5 * fmax(dist, 1e-3);
	uint32_t tri = (uint32_t)num(res, "triangle"), *v = &sph.idx[3 * tri];
	vec3 c[3];

	ck_assert_msg(dist <= a->reach + tol, "aim %zu: distance %.9g past the point (%.9g)", i,
		      dist, a->reach);
	for (int k = 0; k < 3; k++) {
		x = &sph.xyz[3 * v[k]];
		c[k] = v3(x[0], x[1], x[2]);
	}
	ck_assert_msg(oracle_ray_triangle(o, d, -1, c[0], c[1], c[2], &t),
		      "aim %zu: triangle %u is not on the ray", i, tri);
	t *= sqrt((double)d.x * d.x + (double)d.y * d.y + (double)d.z * d.z);
	ck_assert_msg(fabs(t - dist) <= tol, "aim %zu: distance %.9g, exact %.9g", i, dist, t);
}

START_TEST(test_rays_at_vertices)
{
	static struct aim a[NAIM];
	size_t n = sphere_aims(a, NAIM);
	struct buf body, raw, again;
	const cJSON *res;
	cJSON *j, *k;

	ck_assert_uint_ge(n, 400);
	batch_body(&body, "", "rays", a, n, 1, 0);
	j = post_batch("/v1/meshes/s/raycast", &body, &raw);
	buf_release(&body);
	res = cJSON_GetObjectItemCaseSensitive(j, "results");
	ck_assert_int_eq(cJSON_GetArraySize(res), (int)n);
	for (size_t i = 0; i < n; i++) {
		const cJSON *h = cJSON_GetArrayItem(res, (int)i);

		ck_assert_msg(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "hit")),
			      "aim %zu missed: origin %.9g %.9g %.9g direction %.9g %.9g %.9g", i,
			      a[i].o[0], a[i].o[1], a[i].o[2], a[i].d[0], a[i].d[1], a[i].d[2]);
		check_mesh_hit(h, &a[i], i);
	}
	/* the same rays with their directions times 8 and times 1/4 */
	for (int s = 0; s < 2; s++) {
		batch_body(&body, "", "rays", a, n, s ? 8 : 0.25, 0);
		k = post_batch("/v1/meshes/s/raycast", &body, &again);
		ck_assert_uint_eq(again.len, raw.len);
		ck_assert(memcmp(again.data, raw.data, raw.len) == 0);
		cJSON_Delete(k);
		buf_release(&body);
		buf_release(&again);
	}
	buf_release(&raw);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_segments_and_shots_at_vertices)
{
	static struct aim a[NAIM];
	size_t n = sphere_aims(a, NAIM), hit = 0;
	struct buf body;
	const cJSON *res;
	cJSON *j;

	/* segments from o to o + 2k d: the vertex half way */
	batch_body(&body, "", "segments", a, n, 1, 1);
	j = post_batch("/v1/meshes/s/segment", &body, NULL);
	buf_release(&body);
	res = cJSON_GetObjectItemCaseSensitive(j, "results");
	for (size_t i = 0; i < n; i++) {
		const cJSON *h = cJSON_GetArrayItem(res, (int)i);

		ck_assert_msg(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "hit")),
			      "segment %zu missed", i);
		check_mesh_hit(h, &a[i], i);
		ck_assert_double_le(num(h, "fraction"), 0.5 + 1e-5);
		hit++;
	}
	cJSON_Delete(j);
	ck_assert_uint_eq(hit, n);
	/* hitscan shots, no boxes */
	j = post_aims("/v1/hitscan", "\"mesh\":\"s\",", "shots", a, n, 0, &res);
	for (size_t i = 0; i < n; i++) {
		check_kind(cJSON_GetArrayItem(res, (int)i), "mesh", &a[i], i);
		check_mesh_hit(cJSON_GetArrayItem(res, (int)i), &a[i], i);
	}
	cJSON_Delete(j);
}
END_TEST

/* Rays through the corners of the box BOX_JSON, most of them touching it
 * only there (a component of d leaves the box, another enters it). */
#define BOX_JSON "\"center\":[0.5,-1.25,2],\"half_extents\":[1,0.75,0.5]"

static size_t corner_aims(struct aim *a)
{
	static const float c[3] = { 0.5f, -1.25f, 2 }, h[3] = { 1, 0.75f, 0.5f };
	struct rng g = { 0xc0511deULL };
	size_t n = 0;

	for (int corner = 0; corner < 8; corner++)
		for (int k = 0; k < 64; k++) {
			double p[3], d[3];

			for (int x = 0; x < 3; x++) {
				p[x] = c[x] + ((corner >> x & 1) ? h[x] : -h[x]);
				d[x] = round(16 * rng_range(&g, -1, 1)) / 16;
			}
			n += aim_at(p, d, 3, &a[n]);
		}
	ck_assert_uint_ge(n, 400);
	return n;
}

START_TEST(test_box_corners)
{
	static struct aim a[NAIM];
	size_t n = corner_aims(a);
	struct buf body, hs;
	const cJSON *res, *res2;
	cJSON *j, *j2;

	batch_body(&body, "\"boxes\":[{" BOX_JSON "}],", "rays", a, n, 1, 0);
	j = post_batch("/v1/obb/raycast", &body, NULL);
	buf_release(&body);
	batch_body(&hs, "\"boxes\":[{" BOX_JSON "}],", "shots", a, n, 1, 0);
	j2 = post_batch("/v1/hitscan", &hs, NULL);
	buf_release(&hs);
	res = cJSON_GetObjectItemCaseSensitive(j, "results");
	res2 = cJSON_GetObjectItemCaseSensitive(j2, "results");
	for (size_t i = 0; i < n; i++) {
		const cJSON *r1 = cJSON_GetArrayItem(res, (int)i), *r2 = cJSON_GetArrayItem(res2, (int)i);

		ck_assert_msg(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r1, "hit")),
			      "box ray %zu missed: direction %g %g %g", i, a[i].d[0], a[i].d[1], a[i].d[2]);
		ck_assert_double_le(num(r1, "distance"), a[i].reach * (1 + 1e-6));
		check_kind(r2, "box", &a[i], i);
		ck_assert(num(r2, "distance") == num(r1, "distance"));
	}
	cJSON_Delete(j);
	cJSON_Delete(j2);
}
END_TEST

/* A world holding the sphere as a static instance and the box as an
 * entity's hitbox: shots at the sphere's vertices hit the instance, shots at
 * the box's corners the entity. */
START_TEST(test_world_shots)
{
	static struct aim a[NAIM];
	static const char snap[] = "{\"tick\":1,\"time_ms\":0,\"entities\":[{\"id\":\"e\","
				   "\"hitboxes\":[{\"id\":\"b\",\"shape\":\"box\"," BOX_JSON "}]}]}";
	static const char world[] = "{\"static\":[{\"id\":\"lvl\",\"mesh\":\"s\"}]}";
	const cJSON *res;
	cJSON *j;
	size_t n;

	call_ok("PUT", "/v1/worlds/w", world, 201);
	call_ok("POST", "/v1/worlds/w/snapshots", snap, 204);
	n = sphere_aims(a, NAIM);
	for (int hitscan = 0; hitscan < 2; hitscan++) {
		j = post_aims(hitscan ? "/v1/worlds/w/hitscan" : "/v1/worlds/w/raycast", "", "shots", a,
			      n, 0, &res);
		for (size_t i = 0; i < n; i++) {
			check_kind(cJSON_GetArrayItem(res, (int)i), "static", &a[i], i);
			check_mesh_hit(cJSON_GetArrayItem(res, (int)i), &a[i], i);
		}
		cJSON_Delete(j);
	}
	n = corner_aims(a);
	j = post_aims("/v1/worlds/w/hitscan", "", "shots", a, n, 0, &res);
	for (size_t i = 0; i < n; i++) {
		check_kind(cJSON_GetArrayItem(res, (int)i), "entity", &a[i], i);
		ck_assert_double_le(num(cJSON_GetArrayItem(res, (int)i), "distance"),
				    a[i].reach * (1 + 1e-6));
	}
	cJSON_Delete(j);
}
END_TEST

/*
 * Rays down onto a floor (z = 0) whose direction has an integer length
 * (2, 3, 6: 7): the hit lies exactly at k |d| for integer k, so
 * max_distance exactly there must hit, at exactly that distance, and the
 * float below it must miss, in every mode; a box flush with the floor there
 * ties (the mesh wins a hitscan) and is hit exactly at its limit too.
 */
static const int pyth[][4] = {
	{ 1, 2, 2, 3 }, { 2, 3, 6, 7 }, { 1, 4, 8, 9 }, { 4, 4, 7, 9 }, { 2, 6, 9, 11 },
	{ 6, 6, 7, 11 }, { 3, 4, 12, 13 }, { 2, 10, 11, 15 }, { 1, 12, 12, 17 }, { 12, 12, 1, 17 },
};

static int hits_at(const char *path, const char *extra, const int *o, const double *d, double md,
		   double *dist)
{
	char body[512];
	struct api_response r;
	const cJSON *h;
	cJSON *j;
	int hit;

	snprintf(body, sizeof(body), "{%s\"origin\":[%d,%d,%d],\"direction\":[%.17g,%.17g,%.17g],"
		 "\"max_distance\":%.17g}", extra, o[0], o[1], o[2], d[0], d[1], d[2], md);
	call("POST", path, body, strlen(body), &r);
	ck_assert_msg(r.status == 200, "%s %s: %d %s", path, body, r.status, r.body.data);
	j = cJSON_ParseWithLength(r.body.data, r.body.len);
	api_response_release(&r);
	h = cJSON_GetObjectItemCaseSensitive(j, "hits");
	if (h) {		/* mode all: the last hit */
		hit = cJSON_GetArraySize(h) > 0;
		if (hit)
			*dist = num(cJSON_GetArrayItem(h, cJSON_GetArraySize(h) - 1), "distance");
	} else {
		h = cJSON_GetObjectItemCaseSensitive(j, "hit");
		hit = cJSON_IsTrue(h) || cJSON_IsString(h);
		if (hit && cJSON_GetObjectItemCaseSensitive(j, "distance"))
			*dist = num(j, "distance");
		if (cJSON_IsString(h))
			hit = strcmp(h->valuestring, "mesh") == 0 ? 1 : 2;
	}
	cJSON_Delete(j);
	return hit;
}

START_TEST(test_exact_limits)
{
	static const char floor_json[] = "{\"vertices\":[[-65536,-65536,0],[65536,-65536,0],[0,65536,0]],"
					 "\"triangles\":[[0,1,2]]}";
	static const char *modes[] = { "", "\"mode\":\"any\",", "\"mode\":\"all\"," };
	struct rng g = { 0xf1005eedULL };
	char box[256];
	int n = 0;

	static const char world[] = "{\"static\":[{\"id\":\"f\",\"mesh\":\"floor\"}]}";
	static const char snap[] = "{\"tick\":1,\"time_ms\":0,\"entities\":[{\"id\":\"e\",\"hitboxes\":"
				   "[{\"id\":\"b\",\"shape\":\"sphere\",\"center\":[0,0,-50],\"radius\":1}]}]}";

	call_ok("PUT", "/v1/meshes/floor", floor_json, 201);
	call_ok("PUT", "/v1/worlds/fl", world, 201);
	call_ok("POST", "/v1/worlds/fl/snapshots", snap, 204);
	for (int i = 0; i < 300; i++) {
		const int *p = pyth[i % 10];
		int k = 1 + (int)(rng_next(&g) % 300), o[3], s[3] = { 0, 1, 2 };
		double d[3], len = p[3], dist = 0, below;

		/* the three components in any order, x and y of either sign, z down */
		for (int a = 2; a > 0; a--) {
			int b = (int)(rng_next(&g) % (uint64_t)(a + 1)), t = s[a];

			s[a] = s[b];
			s[b] = t;
		}
		d[0] = (rng_next(&g) & 1 ? -1 : 1) * p[s[0]];
		d[1] = (rng_next(&g) & 1 ? -1 : 1) * p[s[1]];
		d[2] = -p[s[2]];
		o[0] = (int)(rng_next(&g) % 2001) - 1000;
		o[1] = (int)(rng_next(&g) % 2001) - 1000;
		o[2] = (int)-d[2] * k;
		ck_assert_double_eq(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], len * len);
		below = nextafterf((float)(k * len), 0);
		for (int m = 0; m < 3; m++) {
			ck_assert_msg(hits_at("/v1/meshes/floor/raycast", modes[m], o, d, k * len, &dist) &&
				      dist == k * len, "ray %d mode %d: no hit at exactly max_distance %g (%g): "
				      "origin %d %d %d direction %g %g %g", i, m, k * len, dist, o[0], o[1], o[2],
				      d[0], d[1], d[2]);
			ck_assert_msg(!hits_at("/v1/meshes/floor/raycast", modes[m], o, d, below, &dist),
				      "ray %d mode %d: a hit at %g past max_distance %.9g", i, m, dist, below);
		}
		for (int w = 0; w < 2; w++) {
			const char *path = w ? "/v1/worlds/fl/hitscan" : "/v1/worlds/fl/raycast";

			ck_assert_msg(hits_at(path, "", o, d, k * len, &dist) && dist == k * len,
				      "world shot %d (%s): no hit at exactly max_distance", i, path);
			ck_assert_msg(!hits_at(path, "", o, d, below, &dist),
				      "world shot %d (%s): a hit past max_distance", i, path);
		}
		/* a box whose top face is the floor under the hit point */
		snprintf(box, sizeof(box), "\"mesh\":\"floor\",\"boxes\":[{\"center\":[%g,%g,-1],"
			 "\"half_extents\":[1,1,1]}],", o[0] + d[0] * k, o[1] + d[1] * k);
		ck_assert_msg(hits_at("/v1/hitscan", box, o, d, k * len, &dist) == 1 && dist == k * len,
			      "shot %d: the floor does not win the tie with the box", i);
		ck_assert_msg(hits_at("/v1/obb/raycast", box + strlen("\"mesh\":\"floor\","), o, d,
				      k * len, &dist) && dist == k * len, "box ray %d: missed at its limit", i);
		ck_assert(!hits_at("/v1/obb/raycast", box + strlen("\"mesh\":\"floor\","), o, d, below,
				   &dist));
		n++;
	}
	ck_assert_int_eq(n, 300);
}
END_TEST

/*
 * A wall exactly flush with a box's face (x = 1): every shot at it is the
 * wall's, in a hitscan (mesh against boxes) and in a world (static against
 * a box hitbox), whichever way the box's entry rounds (the shots start at
 * random floats: 0.1 once rounded the box's entry below the wall's).
 */
START_TEST(test_flush_ties)
{
	static const char wall[] = "{\"vertices\":[[1,-100,-100],[1,100,-100],[1,0,100]],\"triangles\":[[0,1,2]]}";
	static const char world[] = "{\"static\":[{\"id\":\"w\",\"mesh\":\"wall\"}]}";
	static const char snap[] = "{\"tick\":1,\"time_ms\":0,\"entities\":[{\"id\":\"e\",\"hitboxes\":"
				   "[{\"id\":\"b\",\"shape\":\"box\",\"center\":[1.5,0,0],\"half_extents\":[0.5,50,50]}]}]}";
	static struct aim a[NAIM];
	struct rng g = { 0x71e5ULL };
	size_t n = 1000;

	call_ok("PUT", "/v1/meshes/wall", wall, 201);
	call_ok("PUT", "/v1/worlds/tie", world, 201);
	call_ok("POST", "/v1/worlds/tie/snapshots", snap, 204);
	for (size_t i = 0; i < n; i++) {
		a[i].o[0] = (float)rng_range(&g, -10, 0.95);
		a[i].o[1] = (float)rng_range(&g, -1, 1);
		a[i].o[2] = (float)rng_range(&g, -1, 1);
		a[i].d[0] = i % 2 ? 1 : (float)rng_range(&g, 0.5, 3);
		a[i].d[1] = (float)rng_range(&g, -0.5, 0.5);
		a[i].d[2] = (float)rng_range(&g, -0.5, 0.5);
	}
	for (int w = 0; w < 2; w++) {
		const cJSON *res;
		cJSON *j;

		j = post_aims(w ? "/v1/worlds/tie/hitscan" : "/v1/hitscan",
			      w ? "" : "\"mesh\":\"wall\",\"boxes\":[{\"center\":[1.5,0,0],"
				       "\"half_extents\":[0.5,50,50]}],", "shots", a, n, 0, &res);
		for (size_t i = 0; i < n; i++)
			check_kind(cJSON_GetArrayItem(res, (int)i), w ? "static" : "mesh", &a[i], i);
		cJSON_Delete(j);
	}
}
END_TEST

/* A hit whose distance is past the float range is no hit (mesh.h's rule),
 * whatever the direction's length: never a distance of null. */
START_TEST(test_distance_past_floats)
{
	static const char tri[] = "{\"vertices\":[[1e38,-1e38,-1e38],[-1e38,1e38,-1e38],[-1e38,-1e38,1e38]],"
				  "\"triangles\":[[0,1,2]]}";
	static const char *bodies[][2] = {
		{ "/v1/meshes/far/raycast", "{\"origin\":[-2.3e38,-2.3e38,-2.3e38],\"direction\":[1,1,1]}" },
		{ "/v1/meshes/far/raycast", "{\"origin\":[-2.3e38,-2.3e38,-2.3e38],\"direction\":[1,1,1],"
					    "\"mode\":\"all\"}" },
		{ "/v1/obb/raycast", "{\"origin\":[-3e38,0,0],\"direction\":[1,0,0],\"boxes\":"
				     "[{\"center\":[3e38,0,0],\"half_extents\":[1,1,1]}]}" },
		{ "/v1/obb/raycast", "{\"origin\":[-3e38,0,0],\"direction\":[2,0,0],\"boxes\":"
				     "[{\"center\":[3e38,0,0],\"half_extents\":[1,1,1]}]}" },
	};
	struct api_response r;

	call_ok("PUT", "/v1/meshes/far", tri, 201);
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		call("POST", bodies[i][0], bodies[i][1], strlen(bodies[i][1]), &r);
		ck_assert_int_eq(r.status, 200);
		ck_assert_msg((strstr(r.body.data, "\"hit\":false") || strstr(r.body.data, "\"hits\":[]")) &&
			      !strstr(r.body.data, "null"),
			      "%s %s: %s", bodies[i][0], bodies[i][1], r.body.data);
		api_response_release(&r);
	}
}
END_TEST

/* max_distance with a direction of any length: world units all the same. */
START_TEST(test_max_distance_any_length)
{
	static const char *fmt = "{\"origin\":[0.25,-11.1,%d],\"direction\":[0,0,%s],\"max_distance\":%.9g}";
	char body[256];
	struct api_response r;
	double dist;
	cJSON *j;

	snprintf(body, sizeof(body), fmt, 20, "-3", 100.0);
	call("POST", "/v1/meshes/s/raycast", body, strlen(body), &r);
	j = cJSON_ParseWithLength(r.body.data, r.body.len);
	api_response_release(&r);
	dist = num(j, "distance");
	cJSON_Delete(j);
	for (int s = 0; s < 4; s++) {
		/* floats cast as given, and two that are not (normalised) */
		const char *dz[] = { "-3", "-7.8886090522101181e-31", "-1e-30", "-3.3e30" };

		for (int below = 0; below < 2; below++) {
			snprintf(body, sizeof(body), fmt, 20, dz[s],
				 below ? dist * (1 - 1e-6) : dist);
			call("POST", "/v1/meshes/s/raycast", body, strlen(body), &r);
			ck_assert_int_eq(r.status, 200);
			j = cJSON_ParseWithLength(r.body.data, r.body.len);
			api_response_release(&r);
			ck_assert_msg(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "hit")) == !below,
				      "direction z %s, max_distance %s the hit's distance", dz[s],
				      below ? "below" : "at");
			if (!below)
				ck_assert_double_eq(num(j, "distance"), dist);
			cJSON_Delete(j);
		}
		/* a limit under the float step once gave 400 (a zero limit) */
		snprintf(body, sizeof(body), fmt, 20, dz[s], 1e-45);
		call("POST", "/v1/meshes/s/raycast", body, strlen(body), &r);
		ck_assert_msg(r.status == 200 && strstr(r.body.data, "\"hit\":false"), "%s: %d %s", body,
			      r.status, r.body.data);
		api_response_release(&r);
	}
}
END_TEST

/* The answer's body to body at path, whole (status 200). */
static char *answer(const char *path, const char *body)
{
	struct api_response r;
	char *out;

	call("POST", path, body, strlen(body), &r);
	ck_assert_msg(r.status == 200, "%s: %d %s", body, r.status, r.body.data);
	out = strdup(r.body.data);
	api_response_release(&r);
	return out;
}

/* A direction along an axis is its axis's unit vector, whatever its length:
 * rays (and segments, the ray to their end) answer the bytes the unit
 * direction answers. Cast as given, [0, -1.25, 0] put a floor 10 away at
 * 9.999999 (its box slabs divided by 1.25). */
START_TEST(test_axis_directions)
{
	static const char *const mag[] = { "1.25", "20", "3", "0.1", "1e-30", "3.3e30", "1" };
	struct rng g = { 0xa715u };
	char body[256], *unit, *other;
	int n, misses = 0;

	for (n = 0; n < 300; n++) {
		int a = n % 3, sgn = n / 3 % 2 ? 1 : -1;
		float o[3];
		size_t k;

		/* through the sphere's disc across axis a, from 20 away */
		for (int c = 0; c < 3; c++)
			o[c] = (&sph_center.x)[c] + (c == a ? (float)(-sgn * 20)
							  : (float)rng_range(&g, -3.8, 3.8));
		for (k = 0; k < sizeof(mag) / sizeof(mag[0]); k++) {
			char d[3][24] = { "0", "0", "0" };
			const char *m = k + 1 < sizeof(mag) / sizeof(mag[0]) ? mag[k] : "1";
			double len = 20 + (double)(n % 7) * 2.5;

			snprintf(d[a], sizeof(d[a]), "%s%s", sgn < 0 ? "-" : "", m);
			snprintf(body, sizeof(body),
				 "{\"origin\":[%.17g,%.17g,%.17g],\"direction\":[%s,%s,%s],\"max_distance\":%g}",
				 o[0], o[1], o[2], d[0], d[1], d[2], len);
			if (k + 1 == sizeof(mag) / sizeof(mag[0])) {
				/* a segment, against the unit ray limited to its
				 * length (in double, as the segment takes it) */
				float e[3] = { o[0], o[1], o[2] };

				e[a] += (float)(sgn * len);
				snprintf(body, sizeof(body),
					 "{\"origin\":[%.17g,%.17g,%.17g],\"direction\":[%s,%s,%s],"
					 "\"max_distance\":%.17g}",
					 o[0], o[1], o[2], d[0], d[1], d[2], fabs((double)e[a] - o[a]));
				unit = answer("/v1/meshes/s/raycast", body);
				snprintf(body, sizeof(body),
					 "{\"start\":[%.17g,%.17g,%.17g],\"end\":[%.17g,%.17g,%.17g]}", o[0],
					 o[1], o[2], e[0], e[1], e[2]);
				other = answer("/v1/meshes/s/segment", body);
				/* the segment adds its fraction at the end */
				if (strstr(unit, "\"hit\":true")) {
					ck_assert_msg(strncmp(other, unit, strlen(unit) - 1) == 0,
						      "%s:\n%s\nagainst the ray's\n%s", body, other, unit);
				} else {
					misses++;
					ck_assert_str_eq(other, unit);
				}
				free(unit);
				free(other);
				continue;
			}
			other = answer("/v1/meshes/s/raycast", body);
			snprintf(d[a], sizeof(d[a]), "%s1", sgn < 0 ? "-" : "");
			snprintf(body, sizeof(body),
				 "{\"origin\":[%.17g,%.17g,%.17g],\"direction\":[%s,%s,%s],\"max_distance\":%g}",
				 o[0], o[1], o[2], d[0], d[1], d[2], len);
			unit = answer("/v1/meshes/s/raycast", body);
			ck_assert_msg(strcmp(other, unit) == 0, "direction length %s:\n%s\nagainst\n%s",
				      m, other, unit);
			free(unit);
			free(other);
		}
	}
	/* most of them hit (the disc's corners miss) */
	ck_assert_int_lt(misses, 150);
}
END_TEST

static Suite *aimed_suite(void)
{
	Suite *s = suite_create("api_aimed");
	TCase *tc = tcase_create("aimed");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_rays_at_vertices);
	tcase_add_test(tc, test_segments_and_shots_at_vertices);
	tcase_add_test(tc, test_box_corners);
	tcase_add_test(tc, test_world_shots);
	tcase_add_test(tc, test_exact_limits);
	tcase_add_test(tc, test_distance_past_floats);
	tcase_add_test(tc, test_flush_ties);
	tcase_add_test(tc, test_max_distance_any_length);
	tcase_add_test(tc, test_axis_directions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(aimed_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
