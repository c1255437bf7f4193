/* test_shapes.c - Check suite for core/shapes.c: ray vs closed sphere and
 * capsule, cross-checked against exact rational arithmetic (GMP). */
#include <check.h>
#include <float.h>
#include <gmp.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "shapes.h"
#include "testgeom.h"

/*
 * The oracle: the squared distance from the ray's points o + t d,
 * t in [0, T] (T = tmax, or unbounded), to the segment a + s (b - a),
 * s in [0, 1], minimised exactly. f(t, s) = |w + t d - s e|^2 is a convex
 * quadratic, so its minimum over the (half-)strip is at the interior
 * critical point when that lies inside, else on an edge, where it is a
 * one-dimensional clamped quadratic. Every step is rational, so the oracle
 * decides "the ray meets the closed solid" (min <= r^2) exactly; a sphere is
 * the case a == b.
 */
struct oracle {
	int hit;		/* exact: min dist^2 <= r^2 */
	double dmin2;		/* the minimum, rounded */
	double t_star;		/* where it is attained (rounded) */
};

static void q_dot(mpq_t out, mpq_t a[3], mpq_t b[3])
{
	mpq_t p;
	int i;

	mpq_init(p);
	mpq_set_ui(out, 0, 1);
	for (i = 0; i < 3; i++) {
		mpq_mul(p, a[i], b[i]);
		mpq_add(out, out, p);
	}
	mpq_clear(p);
}

/* f(t, s) for rational t, s into out */
static void q_eval(mpq_t out, mpq_t w[3], mpq_t d[3], mpq_t e[3], mpq_t t, mpq_t s)
{
	mpq_t v[3], p;
	int i;

	mpq_init(p);
	for (i = 0; i < 3; i++) {
		mpq_init(v[i]);
		mpq_mul(p, t, d[i]);
		mpq_add(v[i], w[i], p);
		mpq_mul(p, s, e[i]);
		mpq_sub(v[i], v[i], p);
	}
	q_dot(out, v, v);
	for (i = 0; i < 3; i++)
		mpq_clear(v[i]);
	mpq_clear(p);
}

/* clamp x to [lo, hi]; hi NULL: no upper bound */
static void q_clamp(mpq_t x, mpq_t lo, mpq_t hi)
{
	if (mpq_cmp(x, lo) < 0)
		mpq_set(x, lo);
	if (hi && mpq_cmp(x, hi) > 0)
		mpq_set(x, hi);
}

static void oracle_run(vec3 o, vec3 dir, double tmax, vec3 a, vec3 b, double r, struct oracle *out)
{
	mpq_t w[3], d[3], e[3], we, wd, dd, ee, de, t, s, f, best, best_t, zero, one, T, tmp, det, r2;
	int i, bounded = isfinite(tmax), k;
	double ov[3] = { o.x, o.y, o.z }, dv[3] = { dir.x, dir.y, dir.z };
	double av[3] = { a.x, a.y, a.z }, bv[3] = { b.x, b.y, b.z };

	for (i = 0; i < 3; i++) {
		mpq_inits(w[i], d[i], e[i], NULL);
		mpq_set_d(w[i], ov[i]);
	}
	mpq_inits(we, wd, dd, ee, de, t, s, f, best, best_t, zero, one, T, tmp, det, r2, NULL);
	for (i = 0; i < 3; i++) {
		mpq_set_d(tmp, av[i]);
		mpq_sub(w[i], w[i], tmp);
		mpq_set_d(d[i], dv[i]);
		mpq_set_d(e[i], bv[i]);
		mpq_sub(e[i], e[i], tmp);
	}
	mpq_set_ui(zero, 0, 1);
	mpq_set_ui(one, 1, 1);
	if (bounded)
		mpq_set_d(T, tmax);
	q_dot(we, w, e);
	q_dot(wd, w, d);
	q_dot(dd, d, d);
	q_dot(ee, e, e);
	q_dot(de, d, e);
	mpq_set_d(r2, r);
	mpq_mul(r2, r2, r2);

	/* edges: k = 0 (t = 0), 1 (s = 0), 2 (s = 1), 3 (t = T) */
	for (k = 0; k < 4; k++) {
		if (k == 3 && !bounded)
			break;
		if (k == 0 || k == 3) {
			mpq_set(t, k == 0 ? zero : T);
			/* s = clamp((w + t d).e / e.e) */
			if (mpq_sgn(ee) == 0) {
				mpq_set_ui(s, 0, 1);
			} else {
				mpq_mul(s, t, de);
				mpq_add(s, s, we);
				mpq_div(s, s, ee);
				q_clamp(s, zero, one);
			}
		} else {
			mpq_set(s, k == 1 ? zero : one);
			/* t = clamp(-(w - s e).d / d.d) */
			mpq_mul(t, s, de);
			mpq_sub(t, t, wd);
			mpq_div(t, t, dd);
			q_clamp(t, zero, bounded ? T : NULL);
		}
		q_eval(f, w, d, e, t, s);
		if (k == 0 || mpq_cmp(f, best) < 0) {
			mpq_set(best, f);
			mpq_set(best_t, t);
		}
	}
	/* interior critical point: dd t - de s = -wd, de t - ee s = -we */
	mpq_mul(det, de, de);
	mpq_mul(tmp, dd, ee);
	mpq_sub(det, det, tmp);
	if (mpq_sgn(det) != 0) {
		mpq_mul(t, wd, ee);
		mpq_mul(tmp, de, we);
		mpq_sub(t, t, tmp);
		mpq_div(t, t, det);
		mpq_mul(s, de, wd);
		mpq_mul(tmp, dd, we);
		mpq_sub(s, s, tmp);
		mpq_div(s, s, det);
		if (mpq_sgn(t) >= 0 && (!bounded || mpq_cmp(t, T) <= 0) && mpq_sgn(s) >= 0 &&
		    mpq_cmp(s, one) <= 0) {
			q_eval(f, w, d, e, t, s);
			if (mpq_cmp(f, best) < 0) {
				mpq_set(best, f);
				mpq_set(best_t, t);
			}
		}
	}
	out->hit = mpq_cmp(best, r2) <= 0;
	out->dmin2 = mpq_get_d(best);
	out->t_star = mpq_get_d(best_t);
	for (i = 0; i < 3; i++)
		mpq_clears(w[i], d[i], e[i], NULL);
	mpq_clears(we, wd, dd, ee, de, t, s, f, best, best_t, zero, one, T, tmp, det, r2, NULL);
}

/* distance^2 from p to the segment a-b in long double (for the entry t) */
static long double ld_dist2(const long double p[3], vec3 a, vec3 b)
{
	long double e[3] = { (long double)b.x - a.x, (long double)b.y - a.y, (long double)b.z - a.z };
	long double w[3] = { p[0] - a.x, p[1] - a.y, p[2] - a.z }, ee = 0, we = 0, s, r = 0;
	int i;

	for (i = 0; i < 3; i++) {
		ee += e[i] * e[i];
		we += w[i] * e[i];
	}
	s = ee > 0 ? we / ee : 0;
	s = s < 0 ? 0 : s > 1 ? 1 : s;
	for (i = 0; i < 3; i++) {
		long double q = w[i] - s * e[i];

		r += q * q;
	}
	return r;
}

/* The entry t by bisection on [0, t_star] (the distance along a line to a
 * convex set is convex, so there is one crossing). */
static double entry_t(vec3 o, vec3 d, vec3 a, vec3 b, double r, double t_star)
{
	long double lo = 0, hi = t_star, r2 = (long double)r * r;
	int it;

	for (it = 0; it < 200; it++) {
		long double mid = (lo + hi) / 2, p[3] = { o.x + mid * d.x, o.y + mid * d.y, o.z + mid * d.z };

		if (ld_dist2(p, a, b) <= r2)
			hi = mid;
		else
			lo = mid;
	}
	return (double)hi;
}

static int cast(int capsule, vec3 a, vec3 b, float r, const struct ray *ray, struct shape_hit *h)
{
	return capsule ? capsule_raycast(a, b, r, ray, h) : sphere_raycast(a, r, ray, h);
}

static float quarter(struct rng *g, int lo, int hi)
{
	return (float)((lo * 4 + (int)(rng_next(g) % (uint64_t)((hi - lo) * 4 + 1))) / 4.0);
}

static vec3 grid_point(struct rng *g, int lim)
{
	return v3(quarter(g, -lim, lim), quarter(g, -lim, lim), quarter(g, -lim, lim));
}

/* ---- grid cases: small quarter-grid numbers, so many rays touch exactly;
 * hit/miss must equal the exact answer on every one of them. */
START_TEST(test_grid_exact)
{
	int capsule = _i;
	struct rng g = { 0x5eed0000u + (uint64_t)_i };
	int n, hits = 0, touches = 0;

	for (n = 0; n < 40000; n++) {
		vec3 a = grid_point(&g, 3), b = capsule ? grid_point(&g, 3) : a;
		float r = quarter(&g, 0, 2);
		struct ray ray;
		struct shape_hit h;
		struct oracle x;
		int got;

		ray.origin = grid_point(&g, 6);
		do {
			ray.dir = v3((float)((int)(rng_next(&g) % 5) - 2), (float)((int)(rng_next(&g) % 5) - 2),
				     (float)((int)(rng_next(&g) % 5) - 2));
		} while (ray.dir.x == 0 && ray.dir.y == 0 && ray.dir.z == 0);
		ray.tmax = (n & 1) ? INFINITY : quarter(&g, 0, 4);
		oracle_run(ray.origin, ray.dir, ray.tmax, a, b, r, &x);
		got = cast(capsule, a, b, r, &ray, &h);
		ck_assert_msg(got == x.hit,
			      "case %d: got %d, exact %d (dmin2 %.17g r %g) o (%g %g %g) d (%g %g %g) tmax %g a (%g %g %g) b (%g %g %g)",
			      n, got, x.hit, x.dmin2, r, ray.origin.x, ray.origin.y, ray.origin.z, ray.dir.x,
			      ray.dir.y, ray.dir.z, ray.tmax, a.x, a.y, a.z, b.x, b.y, b.z);
		hits += got;
		touches += x.hit && x.dmin2 == (double)r * r;
		if (got) {
			ck_assert(h.t >= 0 && h.t <= ray.tmax);
			/* inside exactly when the origin is in the closed solid */
			oracle_run(ray.origin, ray.dir, 0, a, b, r, &x);
			ck_assert_int_eq(h.inside, x.hit);
		}
	}
	/* the grid must exercise both answers and exact touching */
	ck_assert_int_gt(hits, 500);
	ck_assert_int_gt(touches, 10);
}
END_TEST

static float frand(struct rng *g, double lo, double hi)
{
	return (float)rng_range(g, lo, hi);
}

static vec3 rand_point(struct rng *g, double s)
{
	return v3(frand(g, -s, s), frand(g, -s, s), frand(g, -s, s));
}

/*
 * The contract on arbitrary float input: every exact hit is reported, and a
 * reported miss-by-exact-arithmetic lies within the documented slack; a
 * robust hit's t is the exact entry within float rounding.
 */
static void check_contract(int capsule, vec3 a, vec3 b, float r, const struct ray *ray, int *nhit,
			   int *nrobust_t)
{
	struct shape_hit h;
	struct oracle x;
	int got = cast(capsule, a, b, r, ray, &h);
	double ox = ray->origin.x - (double)a.x, oy = ray->origin.y - (double)a.y,
	       oz = ray->origin.z - (double)a.z;
	double px = ray->origin.x - (double)b.x, py = ray->origin.y - (double)b.y,
	       pz = ray->origin.z - (double)b.z;
	double far2 = fmax(ox * ox + oy * oy + oz * oz, px * px + py * py + pz * pz);
	double slack = 1e-12 * (far2 + (double)r * r + 1e-30);

	if (capsule) {
		/* near-axis rays: the body test is conditioned by 1 / sin^2 of the
		 * angle between ray and axis (shapes.h) */
		double ex = (double)b.x - a.x, ey = (double)b.y - a.y, ez = (double)b.z - a.z;
		double L = ex * ex + ey * ey + ez * ez, dd = v3_dot(ray->dir, ray->dir);
		double bd = ex * ray->dir.x + ey * ray->dir.y + ez * ray->dir.z;
		double sin2 = L > 0 ? (L * dd - bd * bd) / (L * dd) : 1;

		slack /= fmax(sin2, 1e-12);
	}

	oracle_run(ray->origin, ray->dir, ray->tmax, a, b, r, &x);
	if (x.hit)
		ck_assert_msg(got, "false negative: dmin2 %.17g <= r2 %.17g", x.dmin2, (double)r * r);
	else if (got)
		ck_assert_msg(x.dmin2 - (double)r * r <= slack,
			      "false positive beyond slack: dmin2 %.17g r2 %.17g t %g tstar %g o (%a %a %a) d (%a %a %a) a (%a %a %a) b (%a %a %a) r %a", x.dmin2, (double)r * r, h.t, x.t_star,
			      ray->origin.x, ray->origin.y, ray->origin.z, ray->dir.x, ray->dir.y, ray->dir.z, a.x, a.y, a.z, b.x, b.y, b.z, r);
	*nhit += got;
	if (got && x.dmin2 < (double)r * r * (1 - 1e-3) && !h.inside) {
		double te = entry_t(ray->origin, ray->dir, a, b, r, x.t_star);

		ck_assert_msg(fabs(h.t - te) <= 1e-5 * (te + r), "t %.9g, exact entry %.9g", h.t, te);
		/* the point is on the surface and the normal points outwards */
		{
			long double p[3] = { h.point.x, h.point.y, h.point.z };
			double dist = sqrt((double)ld_dist2(p, a, b));

			ck_assert_msg(fabs(dist - r) <= 1e-4 * (r + h.t), "surface distance %g r %g", dist, r);
			ck_assert(v3_dot(h.normal, ray->dir) <= 1e-6f);
			ck_assert(fabsf(v3_dot(h.normal, h.normal) - 1) < 1e-5f);
		}
		(*nrobust_t)++;
	}
	if (got && h.inside)
		ck_assert(h.t == 0);
}

START_TEST(test_random_rays)
{
	int capsule = _i;
	struct rng g = { 0xabc00000u + (uint64_t)_i };
	int n, hits = 0, tchecked = 0;

	for (n = 0; n < 20000; n++) {
		vec3 a = rand_point(&g, 10), b = capsule ? v3_add(a, rand_point(&g, 3)) : a;
		float r = frand(&g, 0.05, 2);
		struct ray ray;

		/* aim near the shape half of the time */
		ray.origin = rand_point(&g, 20);
		if (n & 1)
			ray.dir = v3_normalize(v3_sub(v3_add(a, rand_point(&g, 2.5)), ray.origin));
		else
			ray.dir = v3_scale(rng_dir(&g), frand(&g, 0.5, 3));
		if (ray.dir.x == 0 && ray.dir.y == 0 && ray.dir.z == 0)
			continue;
		ray.tmax = (n % 3 == 0) ? frand(&g, 1, 30) : INFINITY;
		check_contract(capsule, a, b, r, &ray, &hits, &tchecked);
	}
	ck_assert_int_gt(hits, 1000);
	ck_assert_int_gt(tchecked, 800);
}
END_TEST

/* Rays built to graze: through a point of the surface, perpendicular to the
 * surface normal there, then rounded to float (so about half of them miss
 * by a rounding error, and every exact touch must still hit). */
START_TEST(test_grazing_rays)
{
	int capsule = _i;
	struct rng g = { 0x67a2e000u + (uint64_t)_i };
	int n, hits = 0, tchecked = 0;

	for (n = 0; n < 20000; n++) {
		vec3 a = rand_point(&g, 10), e = capsule ? rand_point(&g, 3) : v3(0, 0, 0);
		vec3 b = v3_add(a, e), d = rng_dir(&g), nrm, p;
		float r = frand(&g, 0.05, 2), s = capsule ? frand(&g, -0.2, 1.2) : 0;
		struct ray ray;
		double sc;

		if (capsule && s > 0 && s < 1) {
			/* the body: normal perpendicular to both the axis and the ray */
			nrm = v3_normalize(v3_cross(e, d));
		} else {
			nrm = v3_normalize(v3_cross(d, rng_dir(&g)));	/* any normal perpendicular to d */
		}
		if (v3_dot(nrm, nrm) < 0.5f)
			continue;
		sc = s < 0 ? 0 : s > 1 ? 1 : s;
		p = v3_add(v3_add(a, v3_scale(e, (float)sc)), v3_scale(nrm, r));
		ray.origin = v3_sub(p, v3_scale(d, frand(&g, 0.5, 20)));
		ray.dir = d;
		ray.tmax = INFINITY;
		check_contract(capsule, a, b, r, &ray, &hits, &tchecked);
	}
	ck_assert_int_gt(hits, 1000);
}
END_TEST

/* A ray starting inside (or on the surface) hits at t = 0, inside. */
START_TEST(test_start_inside)
{
	int capsule = _i;
	struct rng g = { 0x1751de00u + (uint64_t)_i };
	int n;

	for (n = 0; n < 5000; n++) {
		vec3 a = rand_point(&g, 10), e = capsule ? rand_point(&g, 3) : v3(0, 0, 0);
		vec3 b = v3_add(a, e), c;
		float r = frand(&g, 0.1, 2);
		struct ray ray;
		struct shape_hit h;

		c = v3_add(a, v3_scale(e, (float)rng_unit(&g)));
		ray.origin = v3_add(c, v3_scale(rng_dir(&g), r * 0.99f * (float)rng_unit(&g)));
		ray.dir = v3_scale(rng_dir(&g), frand(&g, 0.5, 2));
		ray.tmax = (n & 1) ? 0.0f : INFINITY;	/* t = 0 is in range even for tmax 0 */
		ck_assert(cast(capsule, a, b, r, &ray, &h));
		ck_assert(h.inside);
		ck_assert(h.t == 0);
		ck_assert(h.point.x == ray.origin.x && h.point.y == ray.origin.y && h.point.z == ray.origin.z);
	}
}
END_TEST

/* An origin outside a sphere by less than rounding (at (r, y, 0) with y^2
 * a few units in the last place of r^2, where the entry is taken at 0):
 * inside, as a capsule says of the same start (once: inside false). */
START_TEST(test_sphere_surface_start)
{
	struct rng g = { 0x5afe5u };
	int n, found = 0;

	for (n = 0; n < 2000; n++) {
		float r = frand(&g, 0.1, 100), y = r * frand(&g, 4.3e-8, 8.3e-8);
		double mm = (double)r * r + (double)y * y, r2 = (double)r * r, cc = mm - r2;
		struct ray ray;
		struct shape_hit h, hc;

		if (!(cc > 4 * DBL_EPSILON * (mm + r2) && cc <= 16 * DBL_EPSILON * (mm + r2)))
			continue;
		found++;
		ray.origin = v3(r, y, 0);
		ray.dir = v3_normalize(v3(-r, frand(&g, -1, 1) * r, frand(&g, -1, 1) * r));
		ray.tmax = INFINITY;
		ck_assert(sphere_raycast(v3(0, 0, 0), r, &ray, &h));
		ck_assert(h.t == 0);
		ck_assert_msg(h.inside, "r %.9g y %.9g: t 0, not inside", r, y);
		ck_assert(capsule_raycast(v3(0, 0, 0), v3(0, 0, -5 * r), r, &ray, &hc));
		ck_assert(hc.t == 0 && hc.inside);
	}
	ck_assert_int_gt(found, 1000);
}
END_TEST

/* a == b: the capsule answers exactly as the sphere. */
START_TEST(test_degenerate_capsule)
{
	struct rng g = { 0xde6e0000u };
	int n, hits = 0;

	for (n = 0; n < 20000; n++) {
		vec3 c = rand_point(&g, 5);
		float r = frand(&g, 0, 2);
		struct ray ray;
		struct shape_hit hs, hc;
		int s, k;

		ray.origin = rand_point(&g, 10);
		ray.dir = v3_normalize(v3_sub(v3_add(c, rand_point(&g, 2)), ray.origin));
		ray.tmax = INFINITY;
		s = sphere_raycast(c, r, &ray, &hs);
		k = capsule_raycast(c, c, r, &ray, &hc);
		ck_assert_int_eq(s, k);
		if (s) {
			ck_assert(hs.t == hc.t && hs.inside == hc.inside);
			ck_assert(hs.normal.x == hc.normal.x && hs.normal.y == hc.normal.y &&
				  hs.normal.z == hc.normal.z);
		}
		hits += s;
	}
	ck_assert_int_gt(hits, 1000);
}
END_TEST

/* Named boundary cases (what counts as touching). */
struct named {
	const char *what;
	int capsule;
	vec3 a, b;
	float r;
	vec3 o, d;
	float tmax;
	int hit, inside;
	float t;
	vec3 normal;
};

static const struct named named_cases[] = {
	{ "sphere head-on", 0, { 0, 0, 0 }, { 0, 0, 0 }, 1, { -5, 0, 0 }, { 1, 0, 0 }, INFINITY, 1, 0, 4, { -1, 0, 0 } },
	{ "sphere tangent (touch)", 0, { 0, 0, 0 }, { 0, 0, 0 }, 1, { -5, 1, 0 }, { 1, 0, 0 }, INFINITY, 1, 0, 5, { 0, 1, 0 } },
	{ "sphere just past tangent", 0, { 0, 0, 0 }, { 0, 0, 0 }, 1, { -5, 1.0000001f, 0 }, { 1, 0, 0 }, INFINITY, 0, 0, 0, { 0, 0, 0 } },
	{ "sphere behind the origin", 0, { 0, 0, 0 }, { 0, 0, 0 }, 1, { 5, 0, 0 }, { 1, 0, 0 }, INFINITY, 0, 0, 0, { 0, 0, 0 } },
	{ "sphere: segment ends on the surface", 0, { 0, 0, 0 }, { 0, 0, 0 }, 1, { -5, 0, 0 }, { 1, 0, 0 }, 4, 1, 0, 4, { -1, 0, 0 } },
	{ "sphere: segment ends short", 0, { 0, 0, 0 }, { 0, 0, 0 }, 1, { -5, 0, 0 }, { 1, 0, 0 }, 3.99f, 0, 0, 0, { 0, 0, 0 } },
	{ "sphere: start on the surface", 0, { 0, 0, 0 }, { 0, 0, 0 }, 1, { 1, 0, 0 }, { 1, 0, 0 }, INFINITY, 1, 1, 0, { -1, 0, 0 } },
	{ "sphere radius 0 is a point", 0, { 1, 1, 1 }, { 1, 1, 1 }, 0, { 1, 1, -3 }, { 0, 0, 2 }, INFINITY, 1, 0, 2, { 0, 0, -1 } },
	{ "capsule side", 1, { 0, 0, 0 }, { 4, 0, 0 }, 1, { 2, 5, 0 }, { 0, -1, 0 }, INFINITY, 1, 0, 4, { 0, 1, 0 } },
	{ "capsule body tangent", 1, { 0, 0, 0 }, { 4, 0, 0 }, 1, { 2, 5, 1 }, { 0, -1, 0 }, INFINITY, 1, 0, 5, { 0, 0, 1 } },
	{ "capsule along the axis into the cap", 1, { 0, 0, 0 }, { 4, 0, 0 }, 1, { -3, 0, 0 }, { 1, 0, 0 }, INFINITY, 1, 0, 2, { -1, 0, 0 } },
	{ "capsule along its surface line", 1, { 0, 0, 0 }, { 4, 0, 0 }, 1, { -3, 1, 0 }, { 1, 0, 0 }, INFINITY, 1, 0, 3, { 0, 1, 0 } },
	{ "capsule cap tangent", 1, { 0, 0, 0 }, { 4, 0, 0 }, 1, { 5, 5, 0 }, { 0, -1, 0 }, INFINITY, 1, 0, 5, { 1, 0, 0 } },
	{ "capsule misses past the cap", 1, { 0, 0, 0 }, { 4, 0, 0 }, 1, { 5.01f, 5, 0 }, { 0, -1, 0 }, INFINITY, 0, 0, 0, { 0, 0, 0 } },
	{ "capsule from inside the body", 1, { 0, 0, 0 }, { 4, 0, 0 }, 1, { 2, 0.5f, 0 }, { 0, 1, 0 }, INFINITY, 1, 1, 0, { 0, -1, 0 } },
	{ "capsule, slanted side hit", 1, { 0, 0, 0 }, { 0, 0, 4 }, 0.5f, { 3, 0, 2 }, { -1, 0, 0 }, INFINITY, 1, 0, 2.5f, { 1, 0, 0 } },
};

START_TEST(test_named)
{
	const struct named *c = &named_cases[_i];
	struct ray ray = { c->o, c->d, c->tmax };
	struct shape_hit h;
	int got = cast(c->capsule, c->a, c->b, c->r, &ray, &h);
	struct oracle x;

	oracle_run(c->o, c->d, c->tmax, c->a, c->capsule ? c->b : c->a, c->r, &x);
	ck_assert_msg(got == c->hit, "%s: got %d", c->what, got);
	ck_assert_msg(x.hit == c->hit, "%s: the oracle disagrees with the table", c->what);
	if (!got)
		return;
	ck_assert_msg(h.inside == c->inside, "%s: inside %d", c->what, h.inside);
	ck_assert_msg(fabsf(h.t - c->t) <= 1e-6f * (1 + c->t), "%s: t %.9g", c->what, h.t);
	ck_assert_msg(fabsf(h.normal.x - c->normal.x) < 1e-6f && fabsf(h.normal.y - c->normal.y) < 1e-6f &&
			      fabsf(h.normal.z - c->normal.z) < 1e-6f,
		      "%s: normal (%g %g %g)", c->what, h.normal.x, h.normal.y, h.normal.z);
}
END_TEST

/* Invalid radii and ranges miss rather than misbehave. */
START_TEST(test_invalid)
{
	struct ray ray = { { -5, 0, 0 }, { 1, 0, 0 }, INFINITY };
	struct shape_hit h;

	ck_assert(!sphere_raycast(v3(0, 0, 0), -1, &ray, &h));
	ck_assert(!sphere_raycast(v3(0, 0, 0), NAN, &ray, &h));
	ck_assert(!capsule_raycast(v3(0, 0, 0), v3(1, 0, 0), -1, &ray, &h));
	ray.tmax = -1;
	ck_assert(!sphere_raycast(v3(0, 0, 0), 1, &ray, &h));
	ck_assert(!capsule_raycast(v3(0, 0, 0), v3(1, 0, 0), 1, &ray, &h));
}
END_TEST

static Suite *shapes_suite(void)
{
	Suite *s = suite_create("shapes");
	TCase *tc = tcase_create("shapes");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_named, 0, sizeof(named_cases) / sizeof(named_cases[0]));
	tcase_add_test(tc, test_invalid);
	tcase_add_loop_test(tc, test_grid_exact, 0, 2);
	tcase_add_loop_test(tc, test_random_rays, 0, 2);
	tcase_add_loop_test(tc, test_grazing_rays, 0, 2);
	tcase_add_loop_test(tc, test_start_inside, 0, 2);
	tcase_add_test(tc, test_sphere_surface_start);
	tcase_add_test(tc, test_degenerate_capsule);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(shapes_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
