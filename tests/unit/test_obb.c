/* test_obb.c - Check suite for core/obb.c: constructors, ray casts and the
 * SAT overlap tests, cross-checked against exact rational arithmetic (GMP). */
#include <check.h>
#include <float.h>
#include <gmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obb.h"
#include "testgeom.h"

/*
 * Tolerances.
 * - Grid cases (quarter-grid coordinates, quarter-turn boxes): every double
 *   operation of the code is exact or order-preserving, so hit/miss and
 *   overlap must agree with the exact answer 100%, and a ray's t is the
 *   exact t rounded to float (within T_GRID_REL relative).
 * - Rotated boxes: a case must agree when the exact answer is the same for
 *   the box shrunk and grown by RAY_MARGIN (ray), or when the triangle / box
 *   misses the box grown by SAT_MARGIN; otherwise either answer is allowed.
 *   An exact overlap must always be reported (no false negatives).
 */
#define T_GRID_REL (1.0 / (1 << 23))
#define T_ROT_REL 1e-5
#define RAY_MARGIN 1e-5
#define SAT_MARGIN 1e-3

/* uniform in [lo, hi] (inclusive) */
static int rng_int(struct rng *r, int lo, int hi)
{
	return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* a multiple of 1/4 in [lo, hi] */
static float rng_quarter(struct rng *r, double lo, double hi)
{
	return (float)(rng_int(r, (int)ceil(lo * 4), (int)floor(hi * 4)) / 4.0);
}

static float comp(vec3 v, int i)
{
	return v3_comp(v, i);
}

static vec3 vset(vec3 v, int i, float x)
{
	if (i == 0)
		v.x = x;
	else if (i == 1)
		v.y = x;
	else
		v.z = x;
	return v;
}

static int veq(vec3 a, vec3 b)
{
	return a.x == b.x && a.y == b.y && a.z == b.z;
}

static double vdist(vec3 a, vec3 b)
{
	double dx = (double)a.x - b.x, dy = (double)a.y - b.y, dz = (double)a.z - b.z;

	return sqrt(dx * dx + dy * dy + dz * dz);
}

/* ---- boxes */

/* The 24 proper quarter-turn rotations as integer quaternions (w, x, y, z). */
static const double quarter_turns[24][4] = {
	{ 1, 0, 0, 0 },
	{ 1, 1, 0, 0 }, { 1, -1, 0, 0 }, { 1, 0, 1, 0 }, { 1, 0, -1, 0 }, { 1, 0, 0, 1 }, { 1, 0, 0, -1 },
	{ 0, 1, 0, 0 }, { 0, 0, 1, 0 }, { 0, 0, 0, 1 },
	{ 0, 1, 1, 0 }, { 0, 1, -1, 0 }, { 0, 1, 0, 1 }, { 0, 1, 0, -1 }, { 0, 0, 1, 1 }, { 0, 0, 1, -1 },
	{ 1, 1, 1, 1 }, { 1, 1, 1, -1 }, { 1, 1, -1, 1 }, { 1, 1, -1, -1 },
	{ 1, -1, 1, 1 }, { 1, -1, 1, -1 }, { 1, -1, -1, 1 }, { 1, -1, -1, -1 },
};

/* local point l of box b in world: c + sum l_i axis_i (double, then float) */
static vec3 box_world(const struct obb *b, const double l[3])
{
	double p[3];
	int k, i;

	for (k = 0; k < 3; k++) {
		p[k] = comp(b->center, k);
		for (i = 0; i < 3; i++)
			p[k] += l[i] * comp(b->axis[i], k);
	}
	return v3((float)p[0], (float)p[1], (float)p[2]);
}

/*
 * A quarter-grid box in a quarter-turn orientation, built through either
 * constructor (from_axes with a signed permutation, possibly left-handed).
 * flat > 0 forces that many zero half extents.
 */
static struct obb grid_box(struct rng *r, int flat)
{
	struct obb b;
	vec3 c = v3(rng_quarter(r, -4, 4), rng_quarter(r, -4, 4), rng_quarter(r, -4, 4));
	vec3 h = v3(rng_quarter(r, 0, 3), rng_quarter(r, 0, 3), rng_quarter(r, 0, 3));
	int i;

	for (i = 0; i < 3; i++)
		if (rng_int(r, 0, 9) == 0)
			h = vset(h, i, 0);
	for (i = 0; i < flat; i++)
		h = vset(h, rng_int(r, 0, 2), 0);
	if (rng_int(r, 0, 1)) {
		ck_assert_int_eq(obb_from_quat(c, h, quarter_turns[rng_int(r, 0, 23)], &b), CORE_OK);
	} else {
		static const int perms[6][3] = {
			{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
		};
		const int *p = perms[rng_int(r, 0, 5)];
		vec3 ax[3];

		for (i = 0; i < 3; i++)
			ax[i] = vset(v3(0, 0, 0), p[i], rng_int(r, 0, 1) ? 1.0f : -1.0f);
		ck_assert_int_eq(obb_from_axes(c, h, ax, &b), CORE_OK);
	}
	return b;
}

/* A random rotated box with float coordinates (some zero half extents). */
static struct obb rot_box(struct rng *r)
{
	struct obb b;
	double q[4];
	vec3 c = v3((float)rng_range(r, -5, 5), (float)rng_range(r, -5, 5), (float)rng_range(r, -5, 5));
	vec3 h = v3((float)rng_range(r, 0, 3), (float)rng_range(r, 0, 3), (float)rng_range(r, 0, 3));
	int i;

	for (i = 0; i < 3; i++)
		if (rng_int(r, 0, 9) == 0)
			h = vset(h, i, 0);
	for (i = 0; i < 4; i++)
		q[i] = rng_range(r, -1, 1);
	ck_assert_int_eq(obb_from_quat(c, h, q, &b), CORE_OK);
	return b;
}

/* ---- exact arithmetic on the stored box: the solid |(p - c) . axis_i| <= half_i */

/* out[i] = (p - c) . axis_i exactly; for a direction, p . axis_i */
static void exact_local(const struct obb *b, vec3 p, int is_dir, mpq_t out[3])
{
	mpq_t t, u;
	int i, k;

	mpq_inits(t, u, NULL);
	for (i = 0; i < 3; i++) {
		mpq_set_ui(out[i], 0, 1);
		for (k = 0; k < 3; k++) {
			mpq_set_d(t, comp(p, k));
			if (!is_dir) {
				mpq_set_d(u, comp(b->center, k));
				mpq_sub(t, t, u);
			}
			mpq_set_d(u, comp(b->axis[i], k));
			mpq_mul(t, t, u);
			mpq_add(out[i], out[i], t);
		}
	}
	mpq_clears(t, u, NULL);
}

/*
 * Half extent i + grow, exactly. Shrinking stops at 0, so that a flat box
 * shrunk is its own inner part; always returns 1 (there is a box).
 */
static int exact_half(const struct obb *b, int i, double grow, mpq_t h)
{
	mpq_t g;

	mpq_init(g);
	mpq_set_d(h, comp(b->half, i));
	mpq_set_d(g, grow);
	mpq_add(h, h, g);
	mpq_clear(g);
	if (mpq_sgn(h) < 0)
		mpq_set_ui(h, 0, 1);
	return 1;
}

struct xray {
	int hit, inside, graze;	/* graze: entry == exit, the ray only touches */
	double t;		/* exact entry, rounded */
	int nfaces;
	vec3 normals[3];	/* outward normals of every face entered at t */
};

/* The exact slab test on box b with half extents grown by grow. */
static void exact_raycast(const struct obb *b, const struct ray *r, double grow, struct xray *out)
{
	mpq_t lo[3], ld[3], h[3], t0[3], t1[3], tin, tout, tmp;
	int i, tout_inf = isinf(r->tmax), par[3], empty = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < 3; i++)
		mpq_inits(lo[i], ld[i], h[i], t0[i], t1[i], NULL);
	mpq_inits(tin, tout, tmp, NULL);
	exact_local(b, r->origin, 0, lo);
	exact_local(b, r->dir, 1, ld);
	for (i = 0; i < 3; i++)
		if (!exact_half(b, i, grow, h[i]))
			empty = 1;
	if (empty)
		goto out_clear;
	out->inside = 1;
	for (i = 0; i < 3; i++) {
		mpq_abs(tmp, lo[i]);
		if (mpq_cmp(tmp, h[i]) > 0)
			out->inside = 0;
	}
	if (out->inside) {
		out->hit = 1;
		goto out_clear;
	}
	mpq_set_ui(tin, 0, 1);
	if (!tout_inf)
		mpq_set_d(tout, r->tmax);
	for (i = 0; i < 3; i++) {
		par[i] = mpq_sgn(ld[i]) == 0;
		if (par[i]) {
			mpq_abs(tmp, lo[i]);
			if (mpq_cmp(tmp, h[i]) > 0)
				goto out_clear;
			continue;
		}
		mpq_neg(t0[i], h[i]);
		mpq_sub(t0[i], t0[i], lo[i]);
		mpq_div(t0[i], t0[i], ld[i]);
		mpq_sub(t1[i], h[i], lo[i]);
		mpq_div(t1[i], t1[i], ld[i]);
		if (mpq_cmp(t0[i], t1[i]) > 0)
			mpq_swap(t0[i], t1[i]);
		if (mpq_cmp(t0[i], tin) > 0)
			mpq_set(tin, t0[i]);
		if (tout_inf || mpq_cmp(t1[i], tout) < 0) {
			mpq_set(tout, t1[i]);
			tout_inf = 0;
		}
	}
	if (!tout_inf && mpq_cmp(tin, tout) > 0)
		goto out_clear;
	out->hit = 1;
	out->graze = !tout_inf && mpq_equal(tin, tout);
	out->t = mpq_get_d(tin);
	for (i = 0; i < 3; i++)
		if (!par[i] && mpq_equal(t0[i], tin))
			out->normals[out->nfaces++] = mpq_sgn(ld[i]) > 0 ?
				v3_scale(b->axis[i], -1) : b->axis[i];
out_clear:
	for (i = 0; i < 3; i++)
		mpq_clears(lo[i], ld[i], h[i], t0[i], t1[i], NULL);
	mpq_clears(tin, tout, tmp, NULL);
}

#define POLY_MAX 16

struct qpoly {
	int n;
	mpq_t v[POLY_MAX][3];
};

static void qpoly_init(struct qpoly *p)
{
	int i;

	p->n = 0;
	for (i = 0; i < POLY_MAX; i++)
		mpq_inits(p->v[i][0], p->v[i][1], p->v[i][2], NULL);
}

static void qpoly_clear(struct qpoly *p)
{
	int i;

	for (i = 0; i < POLY_MAX; i++)
		mpq_clears(p->v[i][0], p->v[i][1], p->v[i][2], NULL);
}

/*
 * Exactly: does the convex polygon pts[0..n-1] (a triangle, a quad, or a
 * degenerate one: a segment or a point) meet the box grown by grow?
 * Sutherland-Hodgman clipping against the six closed half-spaces
 * +-x_i <= h_i in the box frame; the intersection is empty iff nothing is
 * left.
 */
static int exact_poly_box(const struct obb *b, const vec3 *pts, int n, double grow)
{
	struct qpoly pa, pb, *cur = &pa, *nxt = &pb;
	mpq_t h, fp, fq, s, tmp;
	int i, k, j, sg, ok = 1;

	qpoly_init(&pa);
	qpoly_init(&pb);
	mpq_inits(h, fp, fq, s, tmp, NULL);
	for (k = 0; k < n; k++)
		exact_local(b, pts[k], 0, cur->v[k]);
	cur->n = n;
	for (i = 0; i < 3 && ok; i++) {
		if (!exact_half(b, i, grow, h)) {
			ok = 0;
			break;
		}
		for (sg = -1; sg <= 1 && ok; sg += 2) {
			nxt->n = 0;
			for (k = 0; k < cur->n; k++) {
				mpq_t *p = cur->v[k], *q = cur->v[(k + 1) % cur->n];
				int cp, cq;

				/* f = h - sg * x_i >= 0 inside */
				mpq_set(fp, p[i]);
				mpq_set(fq, q[i]);
				if (sg > 0) {
					mpq_neg(fp, fp);
					mpq_neg(fq, fq);
				}
				mpq_add(fp, fp, h);
				mpq_add(fq, fq, h);
				cp = mpq_sgn(fp);
				cq = mpq_sgn(fq);
				if (cp >= 0) {
					ck_assert_int_lt(nxt->n, POLY_MAX);
					for (j = 0; j < 3; j++)
						mpq_set(nxt->v[nxt->n][j], p[j]);
					nxt->n++;
				}
				if ((cp > 0 && cq < 0) || (cp < 0 && cq > 0)) {
					ck_assert_int_lt(nxt->n, POLY_MAX);
					mpq_sub(s, fp, fq);
					mpq_div(s, fp, s);
					for (j = 0; j < 3; j++) {
						mpq_sub(tmp, q[j], p[j]);
						mpq_mul(tmp, tmp, s);
						mpq_add(nxt->v[nxt->n][j], p[j], tmp);
					}
					nxt->n++;
				}
			}
			if (nxt->n == 0)
				ok = 0;
			{
				struct qpoly *t = cur;

				cur = nxt;
				nxt = t;
			}
		}
	}
	mpq_clears(h, fp, fq, s, tmp, NULL);
	qpoly_clear(&pa);
	qpoly_clear(&pb);
	return ok;
}

static int exact_tri_box(const struct obb *b, vec3 a, vec3 bv, vec3 c, double grow)
{
	vec3 t[3] = { a, bv, c };

	return exact_poly_box(b, t, 3, grow);
}

/*
 * Exactly: does the box (grown by grow) meet [lo, hi]? They meet iff the
 * box's center lies in [lo, hi] or a face of [lo, hi] meets the box: when
 * no face does, the (connected) box lies either inside [lo, hi], and then
 * so does its center, or wholly outside it.
 */
static int exact_aabb_box(const struct obb *b, vec3 lo, vec3 hi, double grow)
{
	int k, f;
	int in = 1;

	for (k = 0; k < 3; k++)
		if (comp(b->center, k) < comp(lo, k) || comp(b->center, k) > comp(hi, k))
			in = 0;
	if (in)
		return 1;
	for (k = 0; k < 3; k++) {
		for (f = 0; f < 2; f++) {
			int u = (k + 1) % 3, w = (k + 2) % 3;
			float fk = f ? comp(hi, k) : comp(lo, k);
			vec3 q[4];

			q[0] = vset(vset(vset(v3(0, 0, 0), k, fk), u, comp(lo, u)), w, comp(lo, w));
			q[1] = vset(vset(vset(v3(0, 0, 0), k, fk), u, comp(hi, u)), w, comp(lo, w));
			q[2] = vset(vset(vset(v3(0, 0, 0), k, fk), u, comp(hi, u)), w, comp(hi, w));
			q[3] = vset(vset(vset(v3(0, 0, 0), k, fk), u, comp(lo, u)), w, comp(hi, w));
			if (exact_poly_box(b, q, 4, grow))
				return 1;
		}
	}
	return 0;
}

/* ---- constructors */

static const vec3 good_c = { 1, 2, 3 };
static const vec3 good_h = { 1, 0.5f, 0 };

struct bad_quat {
	const char *what;
	vec3 c, h;
	double q[4];
};

static const struct bad_quat bad_quats[] = {
	{ "zero quaternion", { 1, 2, 3 }, { 1, 1, 1 }, { 0, 0, 0, 0 } },
	{ "NaN quaternion", { 1, 2, 3 }, { 1, 1, 1 }, { NAN, 0, 0, 1 } },
	{ "infinite quaternion", { 1, 2, 3 }, { 1, 1, 1 }, { 1, INFINITY, 0, 0 } },
	{ "negative half", { 1, 2, 3 }, { 1, -0.5f, 1 }, { 1, 0, 0, 0 } },
	{ "NaN half", { 1, 2, 3 }, { 1, NAN, 1 }, { 1, 0, 0, 0 } },
	{ "infinite half", { 1, 2, 3 }, { INFINITY, 1, 1 }, { 1, 0, 0, 0 } },
	{ "NaN center", { NAN, 2, 3 }, { 1, 1, 1 }, { 1, 0, 0, 0 } },
	{ "infinite center", { 1, 2, -INFINITY }, { 1, 1, 1 }, { 1, 0, 0, 0 } },
};

/* CORE_EINVAL, and *out untouched. */
START_TEST(test_from_quat_invalid)
{
	const struct bad_quat *c = &bad_quats[_i];
	struct obb b, before;

	memset(&b, 0x5a, sizeof(b));
	before = b;
	ck_assert_msg(obb_from_quat(c->c, c->h, c->q, &b) == CORE_EINVAL, "%s accepted", c->what);
	ck_assert_msg(memcmp(&b, &before, sizeof(b)) == 0, "%s: out changed", c->what);
}
END_TEST

struct bad_axes {
	const char *what;
	vec3 c, h;
	vec3 ax[3];
};

static const struct bad_axes bad_axes_cases[] = {
	{ "too long (1 + 2e-4)", { 0, 0, 0 }, { 1, 1, 1 },
	  { { 1.0002f, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } } },
	{ "too short (1 - 2e-4)", { 0, 0, 0 }, { 1, 1, 1 },
	  { { 1, 0, 0 }, { 0, 0.9998f, 0 }, { 0, 0, 1 } } },
	{ "not orthogonal (dot 2e-4)", { 0, 0, 0 }, { 1, 1, 1 },
	  { { 1, 0, 0 }, { 2e-4f, 1, 0 }, { 0, 0, 1 } } },
	{ "parallel", { 0, 0, 0 }, { 1, 1, 1 },
	  { { 1, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 } } },
	{ "zero axis", { 0, 0, 0 }, { 1, 1, 1 },
	  { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 0 } } },
	{ "NaN axis", { 0, 0, 0 }, { 1, 1, 1 },
	  { { 1, 0, 0 }, { 0, NAN, 0 }, { 0, 0, 1 } } },
	{ "infinite axis", { 0, 0, 0 }, { 1, 1, 1 },
	  { { INFINITY, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } } },
	{ "negative half", { 0, 0, 0 }, { 1, 1, -1 },
	  { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } } },
	{ "NaN center", { 0, NAN, 0 }, { 1, 1, 1 },
	  { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } } },
	{ "infinite half", { 0, 0, 0 }, { 1, INFINITY, 1 },
	  { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } } },
};

START_TEST(test_from_axes_invalid)
{
	const struct bad_axes *c = &bad_axes_cases[_i];
	struct obb b, before;

	memset(&b, 0x5a, sizeof(b));
	before = b;
	ck_assert_msg(obb_from_axes(c->c, c->h, c->ax, &b) == CORE_EINVAL, "%s accepted", c->what);
	ck_assert_msg(memcmp(&b, &before, sizeof(b)) == 0, "%s: out changed", c->what);
}
END_TEST

static double ortho_error(const struct obb *b)
{
	double worst = 0;
	int i, j;

	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++) {
			double d = v3_dot(b->axis[i], b->axis[j]);

			worst = fmax(worst, fabs(d - (i == j)));
		}
	return worst;
}

static double handedness(const struct obb *b)
{
	return v3_dot(v3_cross(b->axis[0], b->axis[1]), b->axis[2]);
}

/* The 24 integer quarter-turn quaternions give exact, distinct, right-handed
 * signed-permutation axes (what the grid tests rely on). */
START_TEST(test_from_quat_quarter_turns_exact)
{
	struct obb b[24];
	int i, j, k, m;

	for (i = 0; i < 24; i++) {
		ck_assert_int_eq(obb_from_quat(good_c, good_h, quarter_turns[i], &b[i]), CORE_OK);
		for (j = 0; j < 3; j++) {
			int nonzero = 0;

			for (k = 0; k < 3; k++) {
				float a = comp(b[i].axis[j], k);

				ck_assert(a == 0 || a == 1 || a == -1);
				nonzero += a != 0;
			}
			ck_assert_int_eq(nonzero, 1);
		}
		ck_assert(handedness(&b[i]) == 1);
		for (m = 0; m < i; m++)
			ck_assert(!(veq(b[i].axis[0], b[m].axis[0]) && veq(b[i].axis[1], b[m].axis[1])));
	}
}
END_TEST

/* Any non-zero scale of q gives the same box; the axes are R(q)'s columns
 * (checked by rotating the unit vectors with q v q*, a separate formula). */
START_TEST(test_from_quat_random)
{
	struct rng r = { 11 };
	int n;

	for (n = 0; n < 2000; n++) {
		double q[4], len = 0, s = ldexp(1.0, rng_int(&r, -900, 900));
		struct obb a, b;
		int i;

		for (i = 0; i < 4; i++)
			q[i] = rng_range(&r, -1, 1);
		ck_assert_int_eq(obb_from_quat(good_c, good_h, q, &a), CORE_OK);
		for (i = 0; i < 4; i++)
			len += q[i] * q[i];
		len = sqrt(len);
		for (i = 0; i < 4; i++)
			q[i] *= s;
		ck_assert_int_eq(obb_from_quat(good_c, good_h, q, &b), CORE_OK);
		for (i = 0; i < 3; i++)
			ck_assert_double_le(vdist(a.axis[i], b.axis[i]), 1e-6);
		ck_assert_double_le(ortho_error(&a), 1e-6);
		ck_assert_double_ge(handedness(&a), 1 - 1e-6);
		for (i = 0; i < 4; i++)
			q[i] /= s * len;
		/* v' = v + 2w (u x v) + 2 u x (u x v), u = (x, y, z) */
		for (i = 0; i < 3; i++) {
			double v[3] = { i == 0, i == 1, i == 2 }, u[3] = { q[1], q[2], q[3] };
			double c1[3], c2[3], e[3];
			int k;

			c1[0] = u[1] * v[2] - u[2] * v[1];
			c1[1] = u[2] * v[0] - u[0] * v[2];
			c1[2] = u[0] * v[1] - u[1] * v[0];
			c2[0] = u[1] * c1[2] - u[2] * c1[1];
			c2[1] = u[2] * c1[0] - u[0] * c1[2];
			c2[2] = u[0] * c1[1] - u[1] * c1[0];
			for (k = 0; k < 3; k++)
				e[k] = v[k] + 2 * q[0] * c1[k] + 2 * c2[k];
			ck_assert_double_le(vdist(a.axis[i], v3((float)e[0], (float)e[1], (float)e[2])), 1e-6);
		}
		ck_assert(veq(a.center, good_c) && veq(a.half, good_h));
	}
}
END_TEST

/* Axes within 1e-4 are accepted and stored orthonormal; exact ones are kept
 * bit for bit; a left-handed set becomes right-handed (same solid). */
START_TEST(test_from_axes_valid)
{
	struct rng r = { 12 };
	const vec3 exact[3] = { { 0, 0, -1 }, { 1, 0, 0 }, { 0, -1, 0 } };
	const vec3 left[3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, -1 } };
	struct obb b, q;
	int n, i;

	ck_assert_int_eq(obb_from_axes(good_c, good_h, exact, &b), CORE_OK);
	for (i = 0; i < 3; i++)
		ck_assert(veq(b.axis[i], exact[i]));
	ck_assert_int_eq(obb_from_axes(good_c, good_h, left, &b), CORE_OK);
	ck_assert(veq(b.axis[0], left[0]) && veq(b.axis[1], left[1]));
	ck_assert(veq(b.axis[2], v3(0, 0, 1)));

	for (n = 0; n < 2000; n++) {
		double qd[4];
		vec3 ax[3];

		for (i = 0; i < 4; i++)
			qd[i] = rng_range(&r, -1, 1);
		ck_assert_int_eq(obb_from_quat(good_c, good_h, qd, &q), CORE_OK);
		/* perturb each component by up to 3e-5 (stays within 1e-4) */
		for (i = 0; i < 3; i++)
			ax[i] = v3_add(q.axis[i], v3((float)rng_range(&r, -3e-5, 3e-5),
						     (float)rng_range(&r, -3e-5, 3e-5),
						     (float)rng_range(&r, -3e-5, 3e-5)));
		if (n & 1)
			ax[2] = v3_scale(ax[2], -1);
		ck_assert_int_eq(obb_from_axes(good_c, good_h, ax, &b), CORE_OK);
		ck_assert_double_le(ortho_error(&b), 1e-6);
		ck_assert_double_ge(handedness(&b), 1 - 1e-6);
		for (i = 0; i < 3; i++)
			ck_assert_double_le(vdist(b.axis[i], q.axis[i]), 3e-4);
	}
}
END_TEST

/* ---- ray casts: named cases (unit box at the origin unless said) */

struct ray_case {
	const char *what;
	vec3 half;
	double quat[4];
	vec3 o, d;
	float tmax;
	int hit, inside;
	float t;
	vec3 normal;
};

static const struct ray_case ray_cases[] = {
	{ "head-on face", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -3, 0, 0 }, { 1, 0, 0 }, INFINITY,
	  1, 0, 2, { -1, 0, 0 } },
	{ "t in units of |dir|", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -3, 0, 0 }, { 2, 0, 0 }, INFINITY,
	  1, 0, 1, { -1, 0, 0 } },
	{ "runs along a face", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -3, 1, 0 }, { 1, 0, 0 }, INFINITY,
	  1, 0, 2, { -1, 0, 0 } },
	{ "runs along an edge", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -3, 1, -1 }, { 1, 0, 0 }, INFINITY,
	  1, 0, 2, { -1, 0, 0 } },
	{ "grazes a corner only", { 1, 1, 1 }, { 1, 0, 0, 0 }, { 2, 0, 1 }, { -1, 1, 0 }, INFINITY,
	  1, 0, 1, { 1, 0, 0 } },
	{ "grazes an edge only", { 1, 1, 1 }, { 1, 0, 0, 0 }, { 2, 0, 0.5f }, { -1, 1, 0 }, INFINITY,
	  1, 0, 1, { 1, 0, 0 } },
	{ "misses a face by one float step", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -3, 1.0000001f, 0 },
	  { 1, 0, 0 }, INFINITY, 0, 0, 0, { 0, 0, 0 } },
	{ "misses a corner", { 1, 1, 1 }, { 1, 0, 0, 0 }, { 2.125f, 0, 1 }, { -1, 1, 0 }, INFINITY,
	  0, 0, 0, { 0, 0, 0 } },
	{ "origin inside", { 1, 1, 1 }, { 1, 0, 0, 0 }, { 0.5f, 0, 0 }, { 0, 0, 2 }, INFINITY,
	  1, 1, 0, { 0, 0, -1 } },
	{ "origin on a face, leaving", { 1, 1, 1 }, { 1, 0, 0, 0 }, { 1, 0, 0 }, { 1, 0, 0 }, INFINITY,
	  1, 1, 0, { -1, 0, 0 } },
	{ "origin on a corner", { 1, 1, 1 }, { 1, 0, 0, 0 }, { 1, -1, 1 }, { 0, 3, 4 }, INFINITY,
	  1, 1, 0, { 0, -0.6f, -0.8f } },
	{ "pointing away", { 1, 1, 1 }, { 1, 0, 0, 0 }, { 3, 0, 0 }, { 1, 0, 0 }, INFINITY,
	  0, 0, 0, { 0, 0, 0 } },
	{ "parallel outside the slab", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -3, 0, 2 }, { 1, 0, 0 }, INFINITY,
	  0, 0, 0, { 0, 0, 0 } },
	{ "tmax just short", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -3, 0, 0 }, { 1, 0, 0 }, 1.9999999f,
	  0, 0, 0, { 0, 0, 0 } },
	{ "tmax exactly at entry", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -3, 0, 0 }, { 1, 0, 0 }, 2,
	  1, 0, 2, { -1, 0, 0 } },
	{ "tmax 0, origin on the surface", { 1, 1, 1 }, { 1, 0, 0, 0 }, { -1, 0, 0 }, { 1, 0, 0 }, 0,
	  1, 1, 0, { -1, 0, 0 } },
	{ "flat box, through", { 1, 0, 1 }, { 1, 0, 0, 0 }, { 0, -2, 0 }, { 0, 1, 0 }, INFINITY,
	  1, 0, 2, { 0, -1, 0 } },
	{ "flat box, in its plane", { 1, 0, 1 }, { 1, 0, 0, 0 }, { -3, 0, 0.5f }, { 1, 0, 0 }, INFINITY,
	  1, 0, 2, { -1, 0, 0 } },
	{ "segment box (two zero halves)", { 0, 0, 2 }, { 1, 0, 0, 0 }, { -1, -1, 1 }, { 1, 1, 0 },
	  INFINITY, 1, 0, 1, { -1, 0, 0 } },
	{ "point box", { 0, 0, 0 }, { 1, 0, 0, 0 }, { -1, -2, -3 }, { 1, 2, 3 }, INFINITY,
	  1, 0, 1, { -1, 0, 0 } },
	{ "quarter turn about z, enters the local +y face", { 2, 1, 1 }, { 1, 0, 0, 1 },
	  { -3, 0, 0 }, { 1, 0, 0 }, INFINITY, 1, 0, 2, { -1, 0, 0 } },
};

START_TEST(test_raycast_named)
{
	const struct ray_case *c = &ray_cases[_i];
	struct obb b;
	struct ray r = { c->o, c->d, c->tmax };
	struct obb_hit h;
	int got;

	ck_assert_int_eq(obb_from_quat(v3(0, 0, 0), c->half, c->quat, &b), CORE_OK);
	memset(&h, 0, sizeof(h));
	got = obb_raycast(&b, &r, &h);
	ck_assert_msg(got == c->hit, "%s: hit %d, want %d", c->what, got, c->hit);
	if (!got)
		return;
	ck_assert_msg(h.inside == c->inside, "%s: inside %d", c->what, h.inside);
	ck_assert_msg(h.t == c->t, "%s: t %.9g, want %.9g", c->what, h.t, c->t);
	ck_assert_msg(vdist(h.normal, c->normal) <= 1e-6, "%s: normal (%g %g %g)", c->what,
		      h.normal.x, h.normal.y, h.normal.z);
	ck_assert_msg(vdist(h.point, v3_add(c->o, v3_scale(c->d, c->t))) <= 1e-6, "%s: point",
		      c->what);
}
END_TEST

/* A rotated box: 45 degrees about z, the ray along x meets the vertical edge. */
START_TEST(test_raycast_rotated_edge)
{
	double q[4] = { cos(M_PI / 8), 0, 0, sin(M_PI / 8) };
	struct obb b;
	struct ray r = { { -3, 0, 0 }, { 1, 0, 0 }, INFINITY };
	struct obb_hit h;

	ck_assert_int_eq(obb_from_quat(v3(0, 0, 0), v3(1, 1, 1), q, &b), CORE_OK);
	ck_assert(obb_raycast(&b, &r, &h));
	ck_assert_double_le(fabs(h.t - (3 - M_SQRT2)), 1e-6);
	ck_assert(!h.inside);
	ck_assert_double_le(fabs(v3_dot(h.normal, h.normal) - 1), 1e-6);
	ck_assert_float_lt(h.normal.x, -0.7f);
}
END_TEST

/* ---- ray casts against the exact answer, quarter grid */

struct grid_ray_kind {
	const char *what;
	int pinned;		/* local coordinates of the target on +-half (-1: 1..3 at random) */
	int along;		/* the direction has no component on the pinned axes */
	int at_origin;		/* the origin is the target */
	int inside;		/* the origin is anywhere in the closed box */
	int flat;		/* number of half extents forced to 0 */
	int world;		/* origin and direction at random in world space */
};

static const struct grid_ray_kind grid_kinds[] = {
	{ "random", 0, 0, 0, 0, 0, 1 },
	{ "through a face point", 1, 0, 0, 0, 0, 0 },
	{ "through an edge point", 2, 0, 0, 0, 0, 0 },
	{ "through a corner", 3, 0, 0, 0, 0, 0 },
	{ "along a face", 1, 1, 0, 0, 0, 0 },
	{ "along an edge", 2, 1, 0, 0, 0, 0 },
	{ "origin inside", 0, 0, 1, 1, 0, 0 },
	{ "origin on the surface", -1, 0, 1, 0, 0, 0 },
	{ "flat box", -1, 0, 0, 0, 1, 0 },
	{ "segment or point box", -1, 0, 0, 0, 3, 0 },
};

#define GRID_RAYS 10000

START_TEST(test_raycast_grid_exact)
{
	const struct grid_ray_kind *kind = &grid_kinds[_i];
	struct rng r = { 100 + (uint64_t)_i };
	int n, nhit = 0, nmiss = 0, ngraze = 0, ninside = 0;

	for (n = 0; n < GRID_RAYS; n++) {
		struct obb b = grid_box(&r, kind->flat);
		struct ray ray;
		struct obb_hit h;
		struct xray x;
		double l[3], ld[3], k = 0;
		int pinned = kind->pinned < 0 ? rng_int(&r, 1, 3) : kind->pinned;
		int first = rng_int(&r, 0, 2), i, j, got, ok;

		if (kind->world) {
			/* from anywhere towards a point near the box */
			ray.origin = v3(rng_quarter(&r, -8, 8), rng_quarter(&r, -8, 8),
					rng_quarter(&r, -8, 8));
			for (i = 0; i < 3; i++)
				l[i] = rng_quarter(&r, -comp(b.half, i) - 1, comp(b.half, i) + 1);
			ray.dir = v3_sub(box_world(&b, l), ray.origin);
			if (veq(ray.dir, v3(0, 0, 0))) {
				n--;
				continue;
			}
		} else {
			vec3 target, dw;

			for (i = 0; i < 3; i++) {
				double hh = comp(b.half, i);
				int is_pinned = (i - first + 3) % 3 < pinned;

				if (is_pinned)
					l[i] = rng_int(&r, 0, 1) ? hh : -hh;
				else
					l[i] = rng_quarter(&r, -hh, hh);
				ld[i] = is_pinned && kind->along ? 0 : rng_int(&r, -3, 3);
			}
			if (ld[0] == 0 && ld[1] == 0 && ld[2] == 0) {
				n--;
				continue;
			}
			target = box_world(&b, l);
			/* the axes are signed unit vectors: this is exact */
			dw = box_world(&b, ld);
			dw = v3_sub(dw, b.center);
			ray.dir = dw;
			if (!kind->at_origin)
				k = rng_int(&r, 1, 16) / 4.0;
			ray.origin = v3_sub(target, v3_scale(dw, (float)k));
		}
		switch (rng_int(&r, 0, 4)) {
		case 0: ray.tmax = (float)k; break;
		case 1: ray.tmax = (float)(k + 0.25); break;
		case 2: ray.tmax = k >= 0.25 ? (float)(k - 0.25) : 0; break;
		case 3: ray.tmax = rng_quarter(&r, 0, 8); break;
		default: ray.tmax = INFINITY; break;
		}

		exact_raycast(&b, &ray, 0, &x);
		memset(&h, 0, sizeof(h));
		got = obb_raycast(&b, &ray, &h);
		ck_assert_msg(got == x.hit,
			      "%s #%d: hit %d, exact %d; o (%g %g %g) d (%g %g %g) tmax %g",
			      kind->what, n, got, x.hit, ray.origin.x, ray.origin.y, ray.origin.z,
			      ray.dir.x, ray.dir.y, ray.dir.z, ray.tmax);
		if (!got) {
			nmiss++;
			continue;
		}
		nhit++;
		ngraze += x.graze;
		ck_assert_int_eq(h.inside, x.inside);
		if (x.inside) {
			ninside++;
			ck_assert(h.t == 0 && veq(h.point, ray.origin));
			ck_assert(veq(h.normal, v3_normalize(v3_scale(ray.dir, -1))));
			continue;
		}
		ck_assert_msg(fabs(h.t - x.t) <= T_GRID_REL * x.t, "%s #%d: t %.9g, exact %.17g",
			      kind->what, n, h.t, x.t);
		ck_assert(h.t <= ray.tmax);
		ok = 0;
		for (j = 0; j < x.nfaces; j++)
			ok |= veq(h.normal, x.normals[j]);
		ck_assert_msg(ok, "%s #%d: normal not of an entered face", kind->what, n);
		ck_assert_double_le(vdist(h.point, v3_add(ray.origin, v3_scale(ray.dir, h.t))),
				    1e-5 * (1 + h.t));
	}
	/* the kind was exercised: hits, and misses / touches where they exist */
	ck_assert_int_gt(nhit, GRID_RAYS / 20);
	if (!kind->inside && !kind->at_origin)
		ck_assert_int_gt(nmiss, GRID_RAYS / 100);
	if (kind->pinned >= 2 && !kind->along)
		ck_assert_int_gt(ngraze, GRID_RAYS / 100);
	if (kind->inside || kind->at_origin)
		ck_assert_int_gt(ninside, GRID_RAYS / 20);
}
END_TEST

/*
 * Rotated boxes with float coordinates, rays at random and rays aimed at
 * surface points (even n): must agree with the exact answer whenever the exact
 * answer is the same for the box shrunk and grown by RAY_MARGIN, and t
 * within T_ROT_REL; a ray whose exact hit is clear (the shrunk box is hit)
 * is never missed.
 */
START_TEST(test_raycast_rotated_exact)
{
	struct rng r = { 7 };
	int n, nambiguous = 0, nhit = 0, nmiss = 0;

	for (n = 0; n < 10000; n++) {
		struct obb b = rot_box(&r);
		struct ray ray;
		struct obb_hit h;
		struct xray xs, xg, x;
		int i, got;

		ray.dir = v3((float)rng_range(&r, -1, 1), (float)rng_range(&r, -1, 1),
			     (float)rng_range(&r, -1, 1));
		if (n & 1) {
			ray.origin = v3((float)rng_range(&r, -10, 10), (float)rng_range(&r, -10, 10),
					(float)rng_range(&r, -10, 10));
		} else {
			double l[3];

			for (i = 0; i < 3; i++)
				l[i] = rng_range(&r, -1, 1) * comp(b.half, i);
			i = rng_int(&r, 0, 2);
			l[i] = rng_int(&r, 0, 1) ? comp(b.half, i) : -comp(b.half, i);
			ray.origin = v3_sub(box_world(&b, l), v3_scale(ray.dir, (float)rng_range(&r, 0, 5)));
		}
		ray.tmax = rng_int(&r, 0, 1) ? INFINITY : (float)rng_range(&r, 0, 20);
		exact_raycast(&b, &ray, -RAY_MARGIN, &xs);
		exact_raycast(&b, &ray, RAY_MARGIN, &xg);
		exact_raycast(&b, &ray, 0, &x);
		got = obb_raycast(&b, &ray, &h);
		if (xs.hit != xg.hit) {
			/* rays aimed at the surface are near it by design */
			nambiguous += n & 1;
		} else {
			ck_assert_msg(got == x.hit, "#%d: hit %d, exact %d", n, got, x.hit);
		}
		if (got && x.hit) {
			ck_assert_int_eq(h.inside, x.inside);
			ck_assert_msg(fabs(h.t - x.t) <= T_ROT_REL * fmax(1, x.t),
				      "#%d: t %.9g, exact %.17g", n, h.t, x.t);
			ck_assert_double_le(fabs(v3_dot(h.normal, h.normal) - 1), 1e-6);
		}
		nhit += got;
		nmiss += !got;
	}
	ck_assert_int_gt(nhit, 1000);
	ck_assert_int_gt(nmiss, 1000);
	ck_assert_int_lt(nambiguous, 50);
}
END_TEST

/* ---- first box along a ray */

START_TEST(test_raycast_first_named)
{
	struct obb bx[4];
	struct ray ray = { { -10, 0, 0 }, { 1, 0, 0 }, INFINITY };
	struct obb_hit h;
	size_t idx = 99;
	const double id[4] = { 1, 0, 0, 0 };

	memset(bx, 0, sizeof(bx));
	/* no boxes */
	ck_assert(!obb_raycast_first(bx, 0, &ray, &idx, &h));
	ck_assert(!obb_raycast_first(NULL, 0, &ray, &idx, &h));
	ck_assert_uint_eq(idx, 99);
	/* same box twice: the lower index wins the tie */
	ck_assert_int_eq(obb_from_quat(v3(0, 0, 0), v3(1, 1, 1), id, &bx[0]), CORE_OK);
	bx[1] = bx[0];
	ck_assert(obb_raycast_first(bx, 2, &ray, &idx, &h));
	ck_assert_uint_eq(idx, 0);
	ck_assert_float_eq(h.t, 9);
	/* a nearer box later in the list wins */
	ck_assert_int_eq(obb_from_quat(v3(-5, 0, 0), v3(1, 1, 1), id, &bx[2]), CORE_OK);
	ck_assert(obb_raycast_first(bx, 3, &ray, &idx, &h));
	ck_assert_uint_eq(idx, 2);
	ck_assert_float_eq(h.t, 4);
	/* a box the origin is in: t = 0 */
	ck_assert_int_eq(obb_from_quat(v3(-10, 0, 0), v3(0, 0, 0), id, &bx[3]), CORE_OK);
	ck_assert(obb_raycast_first(bx, 4, &ray, &idx, &h));
	ck_assert_uint_eq(idx, 3);
	ck_assert(h.inside && h.t == 0);
	/* touching boxes sharing the entry plane: lower index */
	ck_assert_int_eq(obb_from_quat(v3(-5, 1, 0), v3(1, 1, 1), id, &bx[3]), CORE_OK);
	ck_assert(obb_raycast_first(bx, 4, &ray, &idx, &h));
	ck_assert_uint_eq(idx, 2);
	/* all miss */
	ray.dir = v3(-1, 0, 0);
	ray.origin = v3(-20, 0, 0);
	ck_assert(!obb_raycast_first(bx, 4, &ray, &idx, &h));
}
END_TEST

/* Against obb_raycast over the list: the smallest t, ties to the lower index. */
START_TEST(test_raycast_first_random)
{
	struct rng r = { 21 };
	int n;

	for (n = 0; n < 3000; n++) {
		struct obb bx[8];
		size_t cnt = (size_t)rng_int(&r, 1, 8), i, idx = 0, want = 0;
		struct ray ray;
		struct obb_hit h, hi, best;
		int any = 0, got;

		memset(&best, 0, sizeof(best));
		for (i = 0; i < cnt; i++)
			bx[i] = (n & 1) ? grid_box(&r, 0) : rot_box(&r);
		if (rng_int(&r, 0, 3) == 0)
			bx[cnt - 1] = bx[0];
		ray.origin = v3(rng_quarter(&r, -8, 8), rng_quarter(&r, -8, 8), rng_quarter(&r, -8, 8));
		do
			ray.dir = v3(rng_int(&r, -3, 3), rng_int(&r, -3, 3), rng_int(&r, -3, 3));
		while (veq(ray.dir, v3(0, 0, 0)));
		ray.tmax = rng_int(&r, 0, 1) ? INFINITY : rng_quarter(&r, 0, 8);
		for (i = 0; i < cnt; i++) {
			if (!obb_raycast(&bx[i], &ray, &hi))
				continue;
			if (!any || hi.t < best.t) {
				best = hi;
				want = i;
			}
			any = 1;
		}
		got = obb_raycast_first(bx, cnt, &ray, &idx, &h);
		ck_assert_int_eq(got, any);
		if (got) {
			ck_assert_uint_eq(idx, want);
			ck_assert(h.t == best.t && veq(h.normal, best.normal));
		}
	}
}
END_TEST

/* ---- triangle overlap */

struct tri_case {
	const char *what;
	vec3 a, b, c;
	int want;
};

/* the unit box [-1, 1]^3 at the origin */
static const struct tri_case tri_cases[] = {
	{ "vertex on a face, rest outside", { 1, 0, 0 }, { 3, 1, 0 }, { 3, -1, 2 }, 1 },
	{ "vertex on a corner", { 1, 1, 1 }, { 3, 1, 1 }, { 2, 3, 2 }, 1 },
	{ "edge along a box edge", { 1, 1, -3 }, { 1, 1, 3 }, { 3, 3, 0 }, 1 },
	{ "lies in a face plane, overlapping", { 1, -3, -3 }, { 1, 3, 0 }, { 1, 0, 3 }, 1 },
	{ "inside", { 0.1f, 0, 0 }, { 0, 0.1f, 0 }, { 0, 0, 0.1f }, 1 },
	{ "contains the box (big)", { -10, -10, 0 }, { 10, -10, 0 }, { 0, 10, 0 }, 1 },
	{ "1e-7 outside a face (within the slack)", { 1.0000001f, 0, 0 }, { 3, 1, 0 }, { 3, -1, 2 }, 1 },
	{ "1e-3 outside a face", { 1.001f, 0, 0 }, { 3, 1, 0 }, { 3, -1, 2 }, 0 },
	{ "separated by its normal only", { 4, 0, 0 }, { 0, 4, 0 }, { 0, 0, 4 }, 0 },
	{ "touching a corner with its plane", { 3, 0, 0 }, { 0, 3, 0 }, { 0, 0, 3 }, 1 },
	{ "separated by an edge axis only", { 2, 0, 3 }, { 2, -1, 0 }, { 1, 0, 1.5f }, 0 },
	{ "edge passes a box edge by 7e-4", { 1.001f, 1, -1 }, { 1, 1.001f, 1 }, { 3, 3, 3 }, 0 },
	{ "segment through the box", { -3, 0.5f, 0 }, { 3, 0.5f, 0 }, { 0, 0.5f, 0 }, 1 },
	{ "segment past a corner", { 2, 1, 0 }, { 1, 2, 0 }, { 1.5f, 1.5f, 0 }, 0 },
	{ "segment touching a corner", { 2, 0, 1 }, { 0, 2, 1 }, { 1, 1, 1 }, 1 },
	{ "point on a corner", { -1, -1, -1 }, { -1, -1, -1 }, { -1, -1, -1 }, 1 },
	{ "point outside", { 0, 0, 1.5f }, { 0, 0, 1.5f }, { 0, 0, 1.5f }, 0 },
	{ "two equal vertices, touching", { 1, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, 1 },
};

START_TEST(test_triangle_named)
{
	const struct tri_case *c = &tri_cases[_i];
	const double id[4] = { 1, 0, 0, 0 };
	struct obb b;
	int got;

	ck_assert_int_eq(obb_from_quat(v3(0, 0, 0), v3(1, 1, 1), id, &b), CORE_OK);
	got = obb_triangle_overlap(&b, c->a, c->b, c->c);
	ck_assert_msg(got == c->want, "%s: %d", c->what, got);
	/* the order of the vertices does not matter */
	ck_assert_int_eq(obb_triangle_overlap(&b, c->c, c->a, c->b), got);
	ck_assert_int_eq(obb_triangle_overlap(&b, c->b, c->a, c->c), got);
}
END_TEST

/* separated by a box axis or the triangle normal (no slack, double: exact on the grid) */
static int sep_by_face_axes(const struct obb *b, vec3 a, vec3 bv, vec3 c)
{
	vec3 p[3] = { a, bv, c };
	double v[3][3], n[3], f0[3], f1[3], pr[3], rad = 0;
	int i, k;

	for (k = 0; k < 3; k++)
		for (i = 0; i < 3; i++) {
			vec3 rel = v3_sub(p[k], b->center);

			v[k][i] = v3_dot(rel, b->axis[i]);
		}
	for (i = 0; i < 3; i++) {
		double mn = fmin(v[0][i], fmin(v[1][i], v[2][i]));
		double mx = fmax(v[0][i], fmax(v[1][i], v[2][i]));

		if (mn > comp(b->half, i) || mx < -comp(b->half, i))
			return 1;
	}
	for (i = 0; i < 3; i++) {
		f0[i] = v[1][i] - v[0][i];
		f1[i] = v[2][i] - v[0][i];
	}
	n[0] = f0[1] * f1[2] - f0[2] * f1[1];
	n[1] = f0[2] * f1[0] - f0[0] * f1[2];
	n[2] = f0[0] * f1[1] - f0[1] * f1[0];
	for (k = 0; k < 3; k++)
		pr[k] = n[0] * v[k][0] + n[1] * v[k][1] + n[2] * v[k][2];
	for (i = 0; i < 3; i++)
		rad += comp(b->half, i) * fabs(n[i]);
	return fmin(pr[0], fmin(pr[1], pr[2])) > rad || fmax(pr[0], fmax(pr[1], pr[2])) < -rad;
}

struct grid_tri_kind {
	const char *what;
	int mode;
};

enum { TK_RANDOM, TK_VERTEX_ON_FACE, TK_EDGE_ON_EDGE, TK_NEAR_EDGE, TK_SEGMENT, TK_POINT,
       TK_FLAT_BOX };

static const struct grid_tri_kind tri_kinds[] = {
	{ "random", TK_RANDOM },
	{ "vertex on a face, rest beyond it", TK_VERTEX_ON_FACE },
	{ "edge on a box edge line", TK_EDGE_ON_EDGE },
	{ "near a box edge (edge axes)", TK_NEAR_EDGE },
	{ "segment triangles", TK_SEGMENT },
	{ "point and two-vertex triangles", TK_POINT },
	{ "flat and segment boxes", TK_FLAT_BOX },
};

#define GRID_TRIS 6000

/* Quarter-grid triangles and boxes: the SAT must equal the exact answer. */
START_TEST(test_triangle_grid_exact)
{
	const struct grid_tri_kind *kind = &tri_kinds[_i];
	struct rng r = { 200 + (uint64_t)_i };
	int n, nover = 0, nsep = 0, nedge = 0;

	for (n = 0; n < GRID_TRIS; n++) {
		struct obb b = grid_box(&r, kind->mode == TK_FLAT_BOX ? rng_int(&r, 1, 3) : 0);
		double l[3][3], h[3];
		vec3 p[3];
		int i, k, s, ax, ax2, got, want;

		for (i = 0; i < 3; i++)
			h[i] = comp(b.half, i);
		for (k = 0; k < 3; k++)
			for (i = 0; i < 3; i++)
				l[k][i] = rng_quarter(&r, -h[i] - 3, h[i] + 3);
		ax = rng_int(&r, 0, 2);
		ax2 = (ax + 1) % 3;
		s = rng_int(&r, 0, 1) ? 1 : -1;
		switch (kind->mode) {
		case TK_VERTEX_ON_FACE:
			for (i = 0; i < 3; i++)
				l[0][i] = rng_quarter(&r, -h[i], h[i]);
			l[0][ax] = s * h[ax];
			for (k = 1; k < 3; k++)
				l[k][ax] = s * (h[ax] + rng_quarter(&r, 0, 3));
			break;
		case TK_EDGE_ON_EDGE:
			for (k = 0; k < 2; k++) {
				l[k][ax] = s * h[ax];
				l[k][ax2] = h[ax2];
			}
			l[2][ax] = s * (h[ax] + rng_quarter(&r, 0, 3));
			l[2][ax2] = h[ax2] + rng_quarter(&r, 0, 3);
			break;
		case TK_NEAR_EDGE:
			for (k = 0; k < 3; k++) {
				l[k][ax] = s * rng_quarter(&r, h[ax] - 1, h[ax] + 3);
				l[k][ax2] = rng_quarter(&r, h[ax2] - 1, h[ax2] + 3);
			}
			break;
		case TK_SEGMENT: {
			static const double m[] = { -1, 0, 0.5, 1, 2 };
			double mm = m[rng_int(&r, 0, 4)];

			if (rng_int(&r, 0, 1))	/* an end on the surface */
				l[0][ax] = s * h[ax];
			for (i = 0; i < 3; i++)
				l[2][i] = l[0][i] + mm * (l[1][i] - l[0][i]);
			break;
		}
		case TK_POINT:
			if (rng_int(&r, 0, 1))
				l[0][ax] = s * h[ax];
			for (i = 0; i < 3; i++) {
				l[1][i] = l[0][i];
				if (n & 1)
					l[2][i] = l[0][i];
			}
			break;
		case TK_FLAT_BOX:
			if (rng_int(&r, 0, 1)) {
				for (i = 0; i < 3; i++)
					l[0][i] = rng_quarter(&r, -h[i], h[i]);
				for (k = 1; k < 3; k++)
					l[k][ax] = s * (h[ax] + rng_quarter(&r, 0, 3));
			}
			break;
		default:
			break;
		}
		for (k = 0; k < 3; k++)
			p[k] = box_world(&b, l[k]);
		want = exact_tri_box(&b, p[0], p[1], p[2], 0);
		got = obb_triangle_overlap(&b, p[0], p[1], p[2]);
		ck_assert_msg(got == want, "%s #%d: %d, exact %d; (%g %g %g) (%g %g %g) (%g %g %g)",
			      kind->what, n, got, want, p[0].x, p[0].y, p[0].z, p[1].x, p[1].y,
			      p[1].z, p[2].x, p[2].y, p[2].z);
		nover += want;
		nsep += !want;
		if (!want && !sep_by_face_axes(&b, p[0], p[1], p[2]))
			nedge++;
	}
	if (kind->mode == TK_VERTEX_ON_FACE)
		ck_assert_int_eq(nover, GRID_TRIS);
	else
		ck_assert_int_gt(nsep, GRID_TRIS / 50);
	ck_assert_int_gt(nover, GRID_TRIS / 20);
	if (kind->mode == TK_NEAR_EDGE)
		ck_assert_int_gt(nedge, 50);
}
END_TEST

/*
 * Rotated boxes, float triangles (random, and with vertices on the
 * surface): an exact overlap is always reported; a triangle missing the
 * box grown by SAT_MARGIN * size is always rejected.
 */
START_TEST(test_triangle_rotated)
{
	struct rng r = { 31 };
	int n, nover = 0, nclear = 0, nmid = 0;

	for (n = 0; n < 6000; n++) {
		struct obb b = rot_box(&r);
		double size = fmax(1, fmax(b.half.x, fmax(b.half.y, b.half.z)));
		vec3 p[3];
		int k, i, got, exact, grown;

		for (k = 0; k < 3; k++) {
			double l[3];

			for (i = 0; i < 3; i++)
				l[i] = rng_range(&r, -1.5, 1.5) * comp(b.half, i) + rng_range(&r, -1, 1);
			if (n % 3 == 0 && k == 0) {
				for (i = 0; i < 3; i++)
					l[i] = rng_range(&r, -1, 1) * comp(b.half, i);
				i = rng_int(&r, 0, 2);
				l[i] = rng_int(&r, 0, 1) ? comp(b.half, i) : -comp(b.half, i);
			}
			p[k] = box_world(&b, l);
		}
		if (n % 7 == 0)
			p[2] = p[1];
		got = obb_triangle_overlap(&b, p[0], p[1], p[2]);
		exact = exact_tri_box(&b, p[0], p[1], p[2], 0);
		if (exact) {
			ck_assert_msg(got, "#%d: exact overlap missed", n);
			nover++;
			continue;
		}
		grown = exact_tri_box(&b, p[0], p[1], p[2], SAT_MARGIN * size);
		if (!grown) {
			ck_assert_msg(!got, "#%d: clear miss reported", n);
			nclear++;
		} else {
			nmid++;
		}
	}
	ck_assert_int_gt(nover, 600);
	ck_assert_int_gt(nclear, 600);
}
END_TEST

/* ---- box against axis-aligned box */

START_TEST(test_aabb_named)
{
	const double id[4] = { 1, 0, 0, 0 };
	const double turn45[4] = { cos(M_PI / 8), 0, 0, sin(M_PI / 8) };
	struct obb b, rb;

	ck_assert_int_eq(obb_from_quat(v3(0, 0, 0), v3(1, 1, 1), id, &b), CORE_OK);
	ck_assert(obb_aabb_overlap(&b, v3(1, -5, -5), v3(2, 5, 5)));	/* face contact */
	ck_assert(obb_aabb_overlap(&b, v3(1, 1, 1), v3(2, 2, 2)));	/* corner contact */
	ck_assert(obb_aabb_overlap(&b, v3(-0.5f, -0.5f, -0.5f), v3(0.5f, 0.5f, 0.5f)));
	ck_assert(obb_aabb_overlap(&b, v3(-9, -9, -9), v3(9, 9, 9)));
	ck_assert(obb_aabb_overlap(&b, v3(0, 0, 0), v3(0, 0, 0)));	/* a point */
	ck_assert(!obb_aabb_overlap(&b, v3(1.01f, -5, -5), v3(2, 5, 5)));
	ck_assert(!obb_aabb_overlap(&b, v3(0, 0, 0), v3(-1, 1, 1)));	/* empty */
	/* rotated: the AABB sits in the corner region cut off by the turn */
	ck_assert_int_eq(obb_from_quat(v3(0, 0, 0), v3(1, 1, 1), turn45, &rb), CORE_OK);
	ck_assert(!obb_aabb_overlap(&rb, v3(0.9f, 0.9f, -1), v3(2, 2, 1)));
	ck_assert(obb_aabb_overlap(&rb, v3(0.7f, 0.7f, -1), v3(2, 2, 1)));
	/* a thin rotated stick, separated by one of its own axes */
	ck_assert_int_eq(obb_from_quat(v3(0, 0, 0), v3(2, 0.25f, 0.25f), turn45, &rb), CORE_OK);
	ck_assert(!obb_aabb_overlap(&rb, v3(0.9f, 1.9f, -1), v3(3, 3, 1)));
}
END_TEST

struct aabb_kind {
	const char *what;
	int grid, touch, near;
};

static const struct aabb_kind aabb_kinds[] = {
	{ "grid", 1, 0, 0 },
	{ "grid, touching", 1, 1, 0 },
	{ "rotated", 0, 0, 0 },
	{ "rotated, corner contact", 0, 1, 0 },
	{ "rotated, small boxes around the surface", 0, 0, 1 },
};

/*
 * Never 0 for an exact overlap. On the quarter grid the test is exact (no
 * margin is near the slack); for rotated boxes a miss of the box grown by
 * SAT_MARGIN * size must be rejected.
 */
START_TEST(test_aabb_random)
{
	const struct aabb_kind *kind = &aabb_kinds[_i];
	struct rng r = { 300 + (uint64_t)_i };
	int n, nover = 0, nclear = 0;

	for (n = 0; n < 3000; n++) {
		struct obb b = kind->grid ? grid_box(&r, rng_int(&r, 0, 9) == 0) : rot_box(&r);
		double size = fmax(1, fmax(b.half.x, fmax(b.half.y, b.half.z)));
		vec3 lo, hi;
		int k, got, exact;

		if (kind->grid) {
			lo = v3(rng_quarter(&r, -7, 5), rng_quarter(&r, -7, 5), rng_quarter(&r, -7, 5));
			hi = v3_add(lo, v3(rng_quarter(&r, 0, 3), rng_quarter(&r, 0, 3),
					   rng_quarter(&r, 0, 3)));
			if (kind->touch) {
				/* the box's exact extent on world axis k (quarter turns) */
				float ext = 0, e;
				int i;

				k = rng_int(&r, 0, 2);
				for (i = 0; i < 3; i++)
					ext += comp(b.half, i) * fabsf(comp(b.axis[i], k));
				if (rng_int(&r, 0, 1)) {
					e = comp(b.center, k) + ext;
					lo = vset(lo, k, e);
					hi = vset(hi, k, e + rng_quarter(&r, 0, 2));
				} else {
					e = comp(b.center, k) - ext;
					hi = vset(hi, k, e);
					lo = vset(lo, k, e - rng_quarter(&r, 0, 2));
				}
			}
		} else {
			double l[3];
			vec3 corner;

			for (k = 0; k < 3; k++)
				l[k] = rng_int(&r, 0, 1) ? comp(b.half, k) : -comp(b.half, k);
			corner = box_world(&b, l);
			lo = v3((float)rng_range(&r, -8, 6), (float)rng_range(&r, -8, 6),
				(float)rng_range(&r, -8, 6));
			hi = v3_add(lo, v3((float)rng_range(&r, 0, 3), (float)rng_range(&r, 0, 3),
					   (float)rng_range(&r, 0, 3)));
			if (kind->near) {
				for (k = 0; k < 3; k++)
					l[k] = rng_range(&r, -1.2, 1.2) * comp(b.half, k) +
					       rng_range(&r, -0.5, 0.5);
				corner = box_world(&b, l);
				for (k = 0; k < 3; k++) {
					float e = (float)rng_range(&r, 0, 0.5);

					lo = vset(lo, k, comp(corner, k) - e);
					hi = vset(hi, k, comp(corner, k) + e);
				}
			}
			if (kind->touch) {
				/* an AABB corner at a box corner */
				for (k = 0; k < 3; k++) {
					float ext = comp(hi, k) - comp(lo, k);

					if (rng_int(&r, 0, 1)) {
						lo = vset(lo, k, comp(corner, k));
						hi = vset(hi, k, comp(corner, k) + ext);
					} else {
						hi = vset(hi, k, comp(corner, k));
						lo = vset(lo, k, comp(corner, k) - ext);
					}
				}
			}
		}
		exact = exact_aabb_box(&b, lo, hi, 0);
		got = obb_aabb_overlap(&b, lo, hi);
		if (exact) {
			ck_assert_msg(got, "%s #%d: exact overlap missed", kind->what, n);
			nover++;
		} else if (kind->grid) {
			ck_assert_msg(!got, "%s #%d: exact miss reported", kind->what, n);
			nclear++;
		} else if (!exact_aabb_box(&b, lo, hi, SAT_MARGIN * size)) {
			ck_assert_msg(!got, "%s #%d: clear miss reported", kind->what, n);
			nclear++;
		}
	}
	ck_assert_int_gt(nover, 50);
	if (!(kind->touch && !kind->grid))	/* corner contacts are never clear */
		ck_assert_int_gt(nclear, 50);
}
END_TEST

/* ---- bounds */

/* Every corner (exact) lies in the bounds; each bound is within a few float
 * steps of the extreme corner. */
START_TEST(test_bounds)
{
	struct rng r = { 41 };
	mpq_t x, t, u;
	int n;

	mpq_inits(x, t, u, NULL);
	for (n = 0; n < 3000; n++) {
		struct obb b = (n & 1) ? grid_box(&r, 0) : rot_box(&r);
		vec3 lo, hi;
		int corner, k, i;

		obb_bounds(&b, &lo, &hi);
		for (k = 0; k < 3; k++) {
			double mn = INFINITY, mx = -INFINITY, ulp;

			for (corner = 0; corner < 8; corner++) {
				mpq_set_d(x, comp(b.center, k));
				for (i = 0; i < 3; i++) {
					mpq_set_d(t, comp(b.half, i));
					mpq_set_d(u, comp(b.axis[i], k));
					mpq_mul(t, t, u);
					if (corner & (1 << i))
						mpq_add(x, x, t);
					else
						mpq_sub(x, x, t);
				}
				mpq_set_d(t, comp(lo, k));
				ck_assert(mpq_cmp(t, x) <= 0);
				mpq_set_d(t, comp(hi, k));
				ck_assert(mpq_cmp(t, x) >= 0);
				mn = fmin(mn, mpq_get_d(x));
				mx = fmax(mx, mpq_get_d(x));
			}
			/* tight but for the SAT's slack (obb_bounds: the box the
			 * rotation describes, a few 2^-24 off its float axes) */
			ulp = 2 * FLT_EPSILON * fmax(fabs(mn), fabs(mx)) + FLT_MIN +
			      1e-6 * fmax(comp(b.half, 0), fmax(comp(b.half, 1), comp(b.half, 2)));
			ck_assert_double_ge(comp(lo, k), mn - 2 * ulp);
			ck_assert_double_le(comp(hi, k), mx + 2 * ulp);
		}
	}
	mpq_clears(x, t, u, NULL);
}
END_TEST

static Suite *obb_suite(void)
{
	Suite *s = suite_create("obb");
	TCase *tc = tcase_create("constructors");
	TCase *tr = tcase_create("raycast");
	TCase *tt = tcase_create("overlap");

	tcase_add_loop_test(tc, test_from_quat_invalid, 0, sizeof(bad_quats) / sizeof(bad_quats[0]));
	tcase_add_loop_test(tc, test_from_axes_invalid, 0,
			    sizeof(bad_axes_cases) / sizeof(bad_axes_cases[0]));
	tcase_add_test(tc, test_from_quat_quarter_turns_exact);
	tcase_add_test(tc, test_from_quat_random);
	tcase_add_test(tc, test_from_axes_valid);
	suite_add_tcase(s, tc);

	tcase_set_timeout(tr, 120);
	tcase_add_loop_test(tr, test_raycast_named, 0, sizeof(ray_cases) / sizeof(ray_cases[0]));
	tcase_add_test(tr, test_raycast_rotated_edge);
	tcase_add_loop_test(tr, test_raycast_grid_exact, 0, sizeof(grid_kinds) / sizeof(grid_kinds[0]));
	tcase_add_test(tr, test_raycast_rotated_exact);
	tcase_add_test(tr, test_raycast_first_named);
	tcase_add_test(tr, test_raycast_first_random);
	suite_add_tcase(s, tr);

	tcase_set_timeout(tt, 120);
	tcase_add_loop_test(tt, test_triangle_named, 0, sizeof(tri_cases) / sizeof(tri_cases[0]));
	tcase_add_loop_test(tt, test_triangle_grid_exact, 0, sizeof(tri_kinds) / sizeof(tri_kinds[0]));
	tcase_add_test(tt, test_triangle_rotated);
	tcase_add_test(tt, test_aabb_named);
	tcase_add_loop_test(tt, test_aabb_random, 0, sizeof(aabb_kinds) / sizeof(aabb_kinds[0]));
	tcase_add_test(tt, test_bounds);
	suite_add_tcase(s, tt);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(obb_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
