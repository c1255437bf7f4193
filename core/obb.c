/* obb.c - oriented boxes: constructors, the slab ray cast and the SAT tests. */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include "obb.h"
#include "xform.h"

/* obb_from_axes accepts |len - 1| and |dot| up to this (header contract). */
#define OBB_AXES_TOL 1e-4
/* Axes this close to orthonormal are stored bit for bit (float rounding). */
#define OBB_AXES_KEEP (4.0 * FLT_EPSILON)
/*
 * SAT slack of the overlap tests: 1e-6 of the largest half extent, plus
 * 1e-12 of the coordinates' magnitude so that a point-sized box still
 * absorbs double rounding. Touching therefore counts, and a triangle or box
 * closer than about this slack may be reported as overlapping.
 */
#define OBB_SAT_REL 1e-6
#define OBB_SAT_ROUND 1e-12

static double dot3(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void to_d3(vec3 v, double out[3])
{
	out[0] = v.x;
	out[1] = v.y;
	out[2] = v.z;
}

static vec3 from_d3(const double v[3])
{
	return v3((float)v[0], (float)v[1], (float)v[2]);
}

static int valid_center_half(vec3 center, vec3 half)
{
	return v3_isfinite(center) && v3_isfinite(half) &&
	       half.x >= 0 && half.y >= 0 && half.z >= 0;
}

/* -0 becomes +0 so that a stored half extent compares and prints as 0. */
static vec3 clean_half(vec3 h)
{
	return v3(h.x + 0.0f, h.y + 0.0f, h.z + 0.0f);
}

/* p - center in the box's frame (double; o - c is exact for nearby floats). */
static void box_local(const struct obb *b, vec3 p, double out[3])
{
	double rel[3] = { (double)p.x - b->center.x, (double)p.y - b->center.y,
			  (double)p.z - b->center.z };
	int i;

	for (i = 0; i < 3; i++) {
		double a[3];

		to_d3(b->axis[i], a);
		out[i] = dot3(rel, a);
	}
}

enum core_result obb_from_quat(vec3 center, vec3 half, const double quat[4], struct obb *out)
{
	double r[9];
	int i;

	if (!quat || !out || !valid_center_half(center, half))
		return CORE_EINVAL;
	if (!xform_quat_matrix(quat, r))
		return CORE_EINVAL;
	out->center = center;
	out->half = clean_half(half);
	for (i = 0; i < 3; i++) {
		double col[3] = { r[i], r[3 + i], r[6 + i] };

		out->axis[i] = from_d3(col);
	}
	return CORE_OK;
}

/* Scale v to unit length in place; 0 when it has no length. */
static int unit3(double v[3])
{
	double l = sqrt(dot3(v, v));

	if (!(l > 0) || !isfinite(l))
		return 0;
	v[0] /= l;
	v[1] /= l;
	v[2] /= l;
	return 1;
}

enum core_result obb_from_axes(vec3 center, vec3 half, const vec3 axes[3], struct obb *out)
{
	double u[3][3], g[3][3], worst = 0, hand[3];
	int i, j;

	if (!axes || !out || !valid_center_half(center, half))
		return CORE_EINVAL;
	for (i = 0; i < 3; i++) {
		if (!v3_isfinite(axes[i]))
			return CORE_EINVAL;
		to_d3(axes[i], u[i]);
	}
	for (i = 0; i < 3; i++) {
		for (j = i; j < 3; j++) {
			double d = dot3(u[i], u[j]);
			/* |len - 1| ~ |len^2 - 1| / 2 near 1 */
			double err = i == j ? fabs(sqrt(d) - 1) : fabs(d);

			if (!(err <= OBB_AXES_TOL))
				return CORE_EINVAL;
			if (err > worst)
				worst = err;
		}
	}
	if (worst <= OBB_AXES_KEEP) {
		for (i = 0; i < 3; i++)
			for (j = 0; j < 3; j++)
				g[i][j] = u[i][j];
	} else {
		/* Gram-Schmidt in double: the first axis keeps its direction. */
		for (i = 0; i < 3; i++) {
			for (j = 0; j < 3; j++)
				g[i][j] = u[i][j];
			for (j = 0; j < i; j++) {
				double d = dot3(g[i], g[j]);

				g[i][0] -= d * g[j][0];
				g[i][1] -= d * g[j][1];
				g[i][2] -= d * g[j][2];
			}
			if (!unit3(g[i]))
				return CORE_EINVAL;
		}
	}
	/* A left-handed set describes the same solid with the third axis flipped. */
	v3d_cross(g[0], g[1], hand);
	if (dot3(hand, g[2]) < 0)
		for (j = 0; j < 3; j++)
			g[2][j] = -g[2][j];
	out->center = center;
	out->half = clean_half(half);
	for (i = 0; i < 3; i++)
		out->axis[i] = from_d3(g[i]);
	return CORE_OK;
}

/*
 * Kay-Kajiya slabs in the box frame, in double. The box is closed, so an
 * entry equal to an exit (a graze) hits, and an axis the ray does not move
 * along (dir component exactly 0) only asks whether the origin lies within
 * that slab, which avoids 0 * inf. When the box-frame coordinates are
 * exact (quarter-turn boxes, nearby floats) the decision is the exact one:
 * rounding of the quotients is monotone and keeps every comparison.
 */
int obb_raycast(const struct obb *b, const struct ray *ray, struct obb_hit *hit)
{
	double lo[3], ld[3], h[3], d[3], tin = -INFINITY, tout = ray->tmax;
	int i, face = -1, inside = 1;

	if (!(tout >= 0))
		return 0;
	box_local(b, ray->origin, lo);
	to_d3(ray->dir, d);
	to_d3(b->half, h);
	for (i = 0; i < 3; i++) {
		double a[3];

		to_d3(b->axis[i], a);
		ld[i] = dot3(d, a);
		if (fabs(lo[i]) > h[i])
			inside = 0;
	}
	if (inside) {
		hit->t = 0;
		hit->point = ray->origin;
		hit->normal = v3_normalize(v3_scale(ray->dir, -1));
		hit->inside = 1;
		return 1;
	}
	for (i = 0; i < 3; i++) {
		double t0, t1;

		if (ld[i] == 0) {
			if (fabs(lo[i]) > h[i])
				return 0;
			continue;
		}
		t0 = (-h[i] - lo[i]) / ld[i];
		t1 = (h[i] - lo[i]) / ld[i];
		if (t0 > t1) {
			double tmp = t0;

			t0 = t1;
			t1 = tmp;
		}
		/* strict: a tie keeps the lower axis */
		if (t0 > tin) {
			tin = t0;
			face = i;
		}
		if (t1 < tout)
			tout = t1;
	}
	/* Outside, so some moving axis has its entry ahead (tin > 0); none at
	 * a distance past the float range (a mesh's rule, mesh.h) */
	if (face < 0 || tin < 0 || tin > tout || !(tin <= FLT_MAX))
		return 0;
	hit->t = (float)tin;
	hit->point = v3((float)(ray->origin.x + tin * d[0]),
			(float)(ray->origin.y + tin * d[1]),
			(float)(ray->origin.z + tin * d[2]));
	/* moving up the axis enters through the face at -half */
	hit->normal = ld[face] > 0 ? v3_scale(b->axis[face], -1) : b->axis[face];
	hit->inside = 0;
	return 1;
}

int obb_raycast_first(const struct obb *boxes, size_t n, const struct ray *ray,
		      size_t *index, struct obb_hit *hit)
{
	struct ray r = *ray;
	struct obb_hit best, h;
	size_t i, best_i = 0;
	int found = 0;

	if (!boxes)
		return 0;
	for (i = 0; i < n; i++) {
		if (!obb_raycast(&boxes[i], &r, &h))
			continue;
		/* strict: an equal t keeps the lower index */
		if (!found || h.t < best.t) {
			best = h;
			best_i = i;
			found = 1;
			r.tmax = h.t;
		}
	}
	if (!found)
		return 0;
	*index = best_i;
	*hit = best;
	return 1;
}

/*
 * 1 when axis L (box frame, any length) separates the triangle v from the
 * box [-h, h] by more than slack * |L|. A zero axis (parallel edges, or a
 * degenerate triangle's normal) separates nothing.
 */
static int sat_separates(const double L[3], const double v[3][3], const double h[3],
			 double slack)
{
	double len2 = dot3(L, L), p0, p1, p2, mn, mx, r;

	if (len2 == 0)
		return 0;
	p0 = dot3(L, v[0]);
	p1 = dot3(L, v[1]);
	p2 = dot3(L, v[2]);
	mn = fmin(p0, fmin(p1, p2));
	mx = fmax(p0, fmax(p1, p2));
	r = h[0] * fabs(L[0]) + h[1] * fabs(L[1]) + h[2] * fabs(L[2]) + slack * sqrt(len2);
	return mn > r || mx < -r;
}

/*
 * Akenine-Moller, "Fast 3D Triangle-Box Overlap Testing" (JGT 2001), with
 * the box as [-h, h] in its own frame: the 3 box axes, the triangle normal
 * and the 9 products e_i x f_j of box axes and triangle edges. These are
 * all the face normals of the Minkowski difference, also for a segment or
 * point triangle (its zero axes are skipped), so the test is exact up to
 * the slack.
 */
int obb_triangle_overlap(const struct obb *b, vec3 a, vec3 bv, vec3 c)
{
	double v[3][3], h[3], f[3][3], L[3], big = 0, slack;
	int i, j, k;

	box_local(b, a, v[0]);
	box_local(b, bv, v[1]);
	box_local(b, c, v[2]);
	to_d3(b->half, h);
	for (k = 0; k < 3; k++)
		for (i = 0; i < 3; i++)
			big = fmax(big, fabs(v[k][i]));
	slack = OBB_SAT_REL * fmax(h[0], fmax(h[1], h[2])) + OBB_SAT_ROUND * big;

	for (i = 0; i < 3; i++) {
		double mn = fmin(v[0][i], fmin(v[1][i], v[2][i]));
		double mx = fmax(v[0][i], fmax(v[1][i], v[2][i]));

		if (mn > h[i] + slack || mx < -h[i] - slack)
			return 0;
	}
	for (j = 0; j < 3; j++)
		for (i = 0; i < 3; i++)
			f[j][i] = v[(j + 1) % 3][i] - v[j][i];
	v3d_cross(f[0], f[1], L);
	if (sat_separates(L, v, h, slack))
		return 0;
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 3; j++) {
			double e[3] = { 0, 0, 0 };

			e[i] = 1;
			v3d_cross(e, f[j], L);
			if (sat_separates(L, v, h, slack))
				return 0;
		}
	}
	return 1;
}

/*
 * Gottschalk's 15 axes (OBBTree, SIGGRAPH 1996): the 3 world axes, the 3
 * box axes and their 9 cross products, each projected directly in double
 * (no orthonormality identities, so a float-rounded axis set is fine).
 * An axis rejects only with a gap above the slack: never a false negative.
 */
int obb_aabb_overlap(const struct obb *b, vec3 lo, vec3 hi)
{
	double ah[3], t[3], bh[3], ax[3][3], big = 0, slack;
	int j, k;

	to_d3(b->half, bh);
	for (k = 0; k < 3; k++) {
		double l = v3_comp(lo, k), u = v3_comp(hi, k);

		if (l > u)
			return 0;	/* an empty box meets nothing */
		ah[k] = 0.5 * (u - l);
		t[k] = 0.5 * (l + u) - v3_comp(b->center, k);
		to_d3(b->axis[k], ax[k]);
		big = fmax(big, fmax(fabs(l), fabs(u)));
		big = fmax(big, fabs(v3_comp(b->center, k)));
	}
	slack = OBB_SAT_REL * fmax(fmax(ah[0], fmax(ah[1], ah[2])),
				   fmax(bh[0], fmax(bh[1], bh[2]))) +
		OBB_SAT_ROUND * big;

	for (k = 0; k < 15; k++) {
		double L[3] = { 0, 0, 0 }, len2, ra, rb = 0;

		if (k < 3) {
			L[k] = 1;
		} else if (k < 6) {
			for (j = 0; j < 3; j++)
				L[j] = ax[k - 3][j];
		} else {
			double e[3] = { 0, 0, 0 };

			e[(k - 6) / 3] = 1;
			v3d_cross(e, ax[(k - 6) % 3], L);
		}
		len2 = dot3(L, L);
		if (len2 == 0)
			continue;
		ra = ah[0] * fabs(L[0]) + ah[1] * fabs(L[1]) + ah[2] * fabs(L[2]);
		for (j = 0; j < 3; j++)
			rb += bh[j] * fabs(dot3(L, ax[j]));
		if (fabs(dot3(t, L)) > ra + rb + slack * sqrt(len2))
			return 0;
	}
	return 1;
}

/*
 * Rounded outwards past the double rounding error, so that the float bounds
 * contain every corner (a bound may be one float step loose).
 */
void obb_bounds(const struct obb *b, vec3 *lo, vec3 *hi)
{
	double l[3], u[3], h[3], pad;
	int i, k;

	to_d3(b->half, h);
	/* the box the rotation describes, not only the one its float axes
	 * span (a corner moves by a few 2^-24 of the extents): the SAT's own
	 * slack, so that culling never drops what the SAT would keep */
	pad = OBB_SAT_REL * fmax(h[0], fmax(h[1], h[2]));
	for (k = 0; k < 3; k++) {
		double c = v3_comp(b->center, k), ext = pad, err;
		float fl, fu;

		for (i = 0; i < 3; i++)
			ext += h[i] * fabs((double)v3_comp(b->axis[i], k));
		/* each product is exact; four sums round by at most this */
		err = 4 * DBL_EPSILON * (fabs(c) + ext);
		l[k] = c - ext;
		u[k] = c + ext;
		fl = (float)l[k];
		fu = (float)u[k];
		if (fl > l[k] - err)
			fl = f_below(fl);
		if (fu < u[k] + err)
			fu = f_above(fu);
		l[k] = fl;
		u[k] = fu;
	}
	*lo = from_d3(l);
	*hi = from_d3(u);
}
