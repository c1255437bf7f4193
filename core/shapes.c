/* shapes.c - ray casts against closed spheres and capsules, in double. */
#include <float.h>
#include <math.h>

#include "shapes.h"

/*
 * Error bounds. Inputs are floats, so o - c, r*r and every difference of
 * two input points are exact in double (shapes.h). A dot product of exact
 * vectors has a relative error of at most 3 eps of the sum of the absolute
 * products; the bounds below add those up with a factor ~2 to spare, so a
 * computed quantity that falls short of the exact one by more than the
 * tolerance is impossible. Every test then accepts "within tolerance", which
 * is why touching (exact value 0) always counts.
 */
#define EPS DBL_EPSILON
#define TOL_INSIDE (16 * EPS)	/* of |o - c|^2 + r^2 */
#define TOL_SPHERE (32 * EPS)	/* of a (|m|^2 + r^2) */
#define TOL_BODY (128 * EPS)	/* of L^2 a (|m|^2 + r^2) */
#define TOL_TMAX (8 * EPS)	/* relative slack on the far end of a bounded ray */

static double dot3(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void sub3(vec3 a, vec3 b, double out[3])
{
	out[0] = (double)a.x - b.x;
	out[1] = (double)a.y - b.y;
	out[2] = (double)a.z - b.z;
}

static void to_d3(vec3 v, double out[3])
{
	out[0] = v.x;
	out[1] = v.y;
	out[2] = v.z;
}

/*
 * Entry t of the ray o + t d (m = o - c, a = d.d) into the ball of radius^2
 * r2, for an origin already known to be outside. 0 when it misses. The
 * smaller root is taken as cc / (-b + sqrt(disc)), free of cancellation.
 */
static int sphere_entry(const double m[3], const double d[3], double a, double r2, double *t)
{
	double mm = dot3(m, m), b = dot3(m, d), cc = mm - r2, disc;

	if (cc <= TOL_INSIDE * (mm + r2)) {
		*t = 0;		/* on the surface within rounding: touching at once */
		return 1;
	}
	if (b >= 0)
		return 0;	/* outside and not approaching */
	disc = b * b - a * cc;
	if (disc < -TOL_SPHERE * a * (mm + r2))
		return 0;
	*t = cc / (-b + sqrt(fmax(disc, 0)));
	return 1;
}

/* Fill *hit for entry t along the ray; normal from the surface point p to
 * its closest point q on the core (centre or segment). */
static void fill_hit(const struct ray *ray, const double d[3], double t, const double q[3],
		     struct shape_hit *hit)
{
	double p[3], n[3], l;
	int i;

	to_d3(ray->origin, p);
	for (i = 0; i < 3; i++) {
		p[i] += t * d[i];
		n[i] = p[i] - q[i];
	}
	l = sqrt(dot3(n, n));
	hit->t = (float)t;
	hit->point = v3((float)p[0], (float)p[1], (float)p[2]);
	hit->inside = 0;
	if (l > 0)
		hit->normal = v3((float)(n[0] / l), (float)(n[1] / l), (float)(n[2] / l));
	else
		hit->normal = v3_normalize(v3_scale(ray->dir, -1));
}

static void fill_inside(const struct ray *ray, struct shape_hit *hit)
{
	hit->t = 0;
	hit->point = ray->origin;
	hit->normal = v3_normalize(v3_scale(ray->dir, -1));
	hit->inside = 1;
}

/* t within the ray's range (a tiny relative slack past a finite tmax), and
 * a float (none past the float range, as a mesh's rule, mesh.h). */
static int within(const struct ray *ray, double *t)
{
	double tmax = ray->tmax;

	if (!(tmax >= 0) || !(*t <= FLT_MAX))
		return 0;
	if (*t <= tmax)
		return 1;
	if (*t <= tmax * (1 + TOL_TMAX)) {
		*t = tmax;
		return 1;
	}
	return 0;
}

int sphere_raycast(vec3 c, float r, const struct ray *ray, struct shape_hit *hit)
{
	double m[3], d[3], q[3], r2 = (double)r * r, mm, a, t;

	if (!(r >= 0) || !(ray->tmax >= 0))
		return 0;
	sub3(ray->origin, c, m);
	to_d3(ray->dir, d);
	mm = dot3(m, m);
	if (mm - r2 <= TOL_INSIDE * 0.25 * (mm + r2)) {
		fill_inside(ray, hit);
		return 1;
	}
	a = dot3(d, d);
	if (!sphere_entry(m, d, a, r2, &t) || !within(ray, &t))
		return 0;
	to_d3(c, q);
	fill_hit(ray, d, t, q, hit);
	/* on the surface within rounding: in the closed solid, as a capsule
	 * says of its own (an entry at 0 is a start inside) */
	if (t == 0)
		hit->inside = 1;
	return 1;
}

/* The point of segment a + s ba (s in [0, 1]) closest to a + m. */
static double seg_param(const double m[3], const double ba[3], double L)
{
	double s;

	if (L == 0)
		return 0;
	s = dot3(m, ba) / L;
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

/*
 * The capsule is the union of the two end balls and the body (points within
 * r of the axis line whose projection lies on the segment). Each is convex,
 * so the entry into the union is the smallest of the three entries, and the
 * body only needs its lateral entry: entering the body through an end disc
 * is entering that end's ball no later (the disc lies in the ball).
 */
int capsule_raycast(vec3 a, vec3 b, float r, const struct ray *ray, struct shape_hit *hit)
{
	double ba[3], m[3], mb[3], d[3], q[3], r2 = (double)r * r, L, mm, dd, s, best = INFINITY, t;
	int i;

	if (!(r >= 0) || !(ray->tmax >= 0))
		return 0;
	sub3(b, a, ba);
	L = dot3(ba, ba);
	if (L == 0)
		return sphere_raycast(a, r, ray, hit);
	sub3(ray->origin, a, m);
	to_d3(ray->dir, d);
	mm = dot3(m, m);
	s = seg_param(m, ba, L);
	for (i = 0; i < 3; i++)
		q[i] = m[i] - s * ba[i];
	if (dot3(q, q) - r2 <= TOL_INSIDE * (mm + r2)) {
		fill_inside(ray, hit);
		return 1;
	}
	dd = dot3(d, d);
	if (sphere_entry(m, d, dd, r2, &t))
		best = t;
	sub3(ray->origin, b, mb);
	if (sphere_entry(mb, d, dd, r2, &t) && t < best)
		best = t;
	{
		/* |ba x (m + t d)|^2 <= r^2 L, i.e. A t^2 + 2 B t + C <= 0 */
		double bd = dot3(ba, d), bm = dot3(ba, m);
		double A = L * dd - bd * bd, B = L * dot3(m, d) - bm * bd;
		double C = L * (mm - r2) - bm * bm, disc = B * B - A * C;

		if (A > 0 && C > 0 && B < 0 && disc >= -TOL_BODY * L * L * dd * (mm + r2)) {
			t = C / (-B + sqrt(fmax(disc, 0)));
			s = (bm + t * bd) / L;
			if (s >= 0 && s <= 1 && t < best)
				best = t;
		}
	}
	if (best == INFINITY || !within(ray, &best))
		return 0;
	/* normal: from the closest point of the segment to the surface point */
	{
		double p[3], base[3];

		for (i = 0; i < 3; i++)
			p[i] = m[i] + best * d[i];
		s = seg_param(p, ba, L);
		to_d3(a, base);
		for (i = 0; i < 3; i++)
			q[i] = base[i] + s * ba[i];
	}
	fill_hit(ray, d, best, q, hit);
	if (best == 0)
		hit->inside = 1;
	return 1;
}
