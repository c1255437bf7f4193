/* test_xform.c - Check suite for core/xform.c: TRS and matrix placements,
 * their inverses, and moving points, normals and rays (randomised checks
 * against independent double-precision formulas). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testgeom.h"
#include "xform.h"

/*
 * Tolerances (double inside, float in and out): a float result is compared
 * within XF_TOL relative to the magnitudes involved; m * inv = I within
 * 1e-12. Random placements keep scales in [0.25, 4] (condition <= 16), so
 * float rounding of inputs stays far below XF_TOL after the map.
 */
#define XF_TOL 1e-5
#define INV_TOL 1e-12

static vec3 rng_vec(struct rng *r, double lo, double hi)
{
	return v3((float)rng_range(r, lo, hi), (float)rng_range(r, lo, hi),
		  (float)rng_range(r, lo, hi));
}

static double dist3(const double a[3], const double b[3])
{
	return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
		    (a[2] - b[2]) * (a[2] - b[2]));
}

static double norm3(const double a[3])
{
	return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

static void vd(vec3 v, double out[3])
{
	out[0] = v.x;
	out[1] = v.y;
	out[2] = v.z;
}

/* rows 0..2 of a 3x4 matrix times (p, w) */
static void mul34(const double m[12], const double p[3], double w, double out[3])
{
	int r;

	for (r = 0; r < 3; r++)
		out[r] = m[r * 4] * p[0] + m[r * 4 + 1] * p[1] + m[r * 4 + 2] * p[2] + m[r * 4 + 3] * w;
}

/* v rotated by the unit quaternion q: v + 2w (u x v) + 2 u x (u x v) */
static void quat_rotate(const double q[4], const double v[3], double out[3])
{
	const double u[3] = { q[1], q[2], q[3] };
	double c1[3], c2[3];
	int k;

	c1[0] = u[1] * v[2] - u[2] * v[1];
	c1[1] = u[2] * v[0] - u[0] * v[2];
	c1[2] = u[0] * v[1] - u[1] * v[0];
	c2[0] = u[1] * c1[2] - u[2] * c1[1];
	c2[1] = u[2] * c1[0] - u[0] * c1[2];
	c2[2] = u[0] * c1[1] - u[1] * c1[0];
	for (k = 0; k < 3; k++)
		out[k] = v[k] + 2 * q[0] * c1[k] + 2 * c2[k];
}

/* A random TRS with non-uniform scale, each component mirrored at random;
 * q is stored unnormalised in quat and normalised in unit. */
static void rng_trs(struct rng *r, double pos[3], double quat[4], double unit[4], double scale[3])
{
	double len = 0;
	int i;

	for (i = 0; i < 3; i++) {
		pos[i] = rng_range(r, -10, 10);
		scale[i] = rng_range(r, 0.25, 4) * (rng_next(r) & 1 ? -1 : 1);
	}
	for (i = 0; i < 4; i++) {
		quat[i] = rng_range(r, -3, 3);
		len += quat[i] * quat[i];
	}
	len = sqrt(len);
	for (i = 0; i < 4; i++)
		unit[i] = quat[i] / len;
}

/* A random placement: a TRS, or a general matrix (shear too) built as
 * rotation * (scale + small shear), either sign of det. */
static void rng_xform(struct rng *r, struct xform *x)
{
	double pos[3], quat[4], unit[4], scale[3];

	rng_trs(r, pos, quat, unit, scale);
	if (rng_next(r) & 1) {
		ck_assert_int_eq(xform_from_trs(pos, quat, scale, x), CORE_OK);
	} else {
		double m16[16] = { 0 };
		int i, j;

		for (i = 0; i < 3; i++) {
			for (j = 0; j < 3; j++)
				m16[i * 4 + j] = (i == j ? scale[i] : rng_range(r, -0.2, 0.2));
			m16[i * 4 + 3] = pos[i];
		}
		m16[15] = 1;
		ck_assert_int_eq(xform_from_matrix(m16, x), CORE_OK);
	}
}

static double det3(const double m[12])
{
	return m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
	       m[2] * (m[4] * m[9] - m[5] * m[8]);
}

/* max |(m * inv) - I| over the 3x4 composition (translation included) */
static double inverse_error(const struct xform *x)
{
	double worst = 0;
	int r, c, k;

	for (r = 0; r < 3; r++)
		for (c = 0; c < 4; c++) {
			double s = c == 3 ? x->m[r * 4 + 3] : 0;

			for (k = 0; k < 3; k++)
				s += x->m[r * 4 + k] * x->inv[k * 4 + c];
			worst = fmax(worst, fabs(s - (r == c)));
		}
	return worst;
}

/* ---- identity */

/* vec.h's f_below/f_above are nextafterf towards -inf/+inf, bit for bit:
 * random bit patterns (every exponent, subnormals, NaNs) and the edges. */
START_TEST(test_float_steps_match_nextafterf)
{
	static const float edge[] = { 0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1p-126f,
				      1.0f, -1.0f, 3.4028235e38f, -3.4028235e38f, INFINITY, -INFINITY };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t k, bad = 0;
	float first = 0;

	/* one assertion at the end: Check records every ck_assert */
	for (k = 0; k < 2000000 + sizeof(edge) / sizeof(edge[0]); k++) {
		float f, a, b, c, d;
		uint32_t bits, ba, bb, bc, bd;

		if (k < sizeof(edge) / sizeof(edge[0])) {
			f = edge[k];
		} else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			bits = (uint32_t)x;
			memcpy(&f, &bits, sizeof(f));
		}
		a = f_below(f);
		b = nextafterf(f, -INFINITY);
		c = f_above(f);
		d = nextafterf(f, INFINITY);
		memcpy(&ba, &a, 4);
		memcpy(&bb, &b, 4);
		memcpy(&bc, &c, 4);
		memcpy(&bd, &d, 4);
		if (isnan(f) ? !(isnan(a) && isnan(c)) : ba != bb || bc != bd) {
			if (!bad++)
				first = f;
		}
	}
	ck_assert_msg(bad == 0, "%zu floats differ from nextafterf, the first %a", bad, (double)first);
}
END_TEST

START_TEST(test_identity)
{
	struct xform x;
	struct ray w = { { 1, -2, 3 }, { 0.5f, 0, -4 }, 7 }, l;
	vec3 p = v3(1.5f, -2.25f, 1e30f), n;
	int i;

	memset(&x, 0x5a, sizeof(x));
	xform_identity(&x);
	ck_assert(x.det == 1);
	for (i = 0; i < 12; i++) {
		ck_assert(x.m[i] == (i % 5 == 0));
		ck_assert(x.inv[i] == (i % 5 == 0));
	}
	n = xform_point(&x, p);
	ck_assert(n.x == p.x && n.y == p.y && n.z == p.z);
	n = xform_normal(&x, v3(0, 3, 4));
	ck_assert(n.x == 0 && fabsf(n.y - 0.6f) < 1e-7f && fabsf(n.z - 0.8f) < 1e-7f);
	l = xform_ray_to_local(&x, &w);
	ck_assert(memcmp(&l, &w, sizeof(l)) == 0);
}
END_TEST

/* ---- TRS */

/* A quarter turn with mirrored, non-uniform scale is exact. */
START_TEST(test_trs_exact_quarter_turn)
{
	const double pos[3] = { 1, 2, 3 }, q[4] = { 1, 0, 0, 1 }, s[3] = { 2, -1, 3 };
	/* R(z, 90) = [0 -1 0; 1 0 0; 0 0 1], times diag(2, -1, 3) */
	const double want[12] = { 0, 1, 0, 1, 2, 0, 0, 2, 0, 0, 3, 3 };
	struct xform x;
	vec3 p;
	int i;

	ck_assert_int_eq(xform_from_trs(pos, q, s, &x), CORE_OK);
	for (i = 0; i < 12; i++)
		ck_assert_msg(x.m[i] == want[i], "m[%d] = %.17g", i, x.m[i]);
	ck_assert(x.det == -6);
	p = xform_point(&x, v3(1, 1, 1));
	ck_assert(p.x == 2 && p.y == 4 && p.z == 6);
	ck_assert_double_le(inverse_error(&x), INV_TOL);
}
END_TEST

/* world = pos + R(q) (scale * p), checked with q v q* (not a matrix). */
START_TEST(test_trs_random)
{
	struct rng r = { 1 };
	int n;

	for (n = 0; n < 5000; n++) {
		double pos[3], quat[4], unit[4], scale[3], pl[3], sp[3], want[3], got[3];
		struct xform x;
		vec3 p = rng_vec(&r, -5, 5);
		int i;

		rng_trs(&r, pos, quat, unit, scale);
		ck_assert_int_eq(xform_from_trs(pos, quat, scale, &x), CORE_OK);
		vd(p, pl);
		for (i = 0; i < 3; i++)
			sp[i] = scale[i] * pl[i];
		quat_rotate(unit, sp, want);
		for (i = 0; i < 3; i++)
			want[i] += pos[i];
		vd(xform_point(&x, p), got);
		ck_assert_double_le(dist3(got, want), XF_TOL * (1 + norm3(want)));
		ck_assert_double_le(fabs(x.det - scale[0] * scale[1] * scale[2]),
				    1e-12 * fabs(x.det));
		ck_assert_double_le(inverse_error(&x), INV_TOL);
	}
}
END_TEST

/* ---- matrix */

/* m is the matrix's top three rows; det and inverse agree with it, also for
 * entries far from 1 (the singular test is relative). */
START_TEST(test_matrix_random)
{
	struct rng r = { 2 };
	int n;

	for (n = 0; n < 5000; n++) {
		double m16[16], mag = pow(10, rng_range(&r, -6, 6));
		struct xform x;
		int i, j;

		for (i = 0; i < 3; i++) {
			for (j = 0; j < 3; j++)
				m16[i * 4 + j] = mag * (rng_range(&r, -1, 1) + (i == j ? 2.5 : 0) *
							(n & 1 ? -1 : 1));
			m16[i * 4 + 3] = rng_range(&r, -100, 100);
		}
		m16[12] = m16[13] = m16[14] = 0;
		m16[15] = 1;
		ck_assert_int_eq(xform_from_matrix(m16, &x), CORE_OK);
		ck_assert(memcmp(x.m, m16, sizeof(x.m)) == 0);
		ck_assert_double_le(fabs(x.det - det3(x.m)), 1e-12 * fabs(x.det));
		/* m*inv: the 3x3 part is relative; the translation scales with it */
		ck_assert_double_le(inverse_error(&x), INV_TOL * 100);
	}
}
END_TEST

/* xform_point then the inverse (as a ray origin) returns the point. */
START_TEST(test_inverse_round_trip)
{
	struct rng r = { 3 };
	int n;

	for (n = 0; n < 5000; n++) {
		struct xform x;
		struct ray w, l;
		vec3 p = rng_vec(&r, -5, 5);
		double a[3], b[3];

		rng_xform(&r, &x);
		w.origin = xform_point(&x, p);
		w.dir = v3(1, 0, 0);
		w.tmax = INFINITY;
		l = xform_ray_to_local(&x, &w);
		vd(l.origin, a);
		vd(p, b);
		ck_assert_double_le(dist3(a, b), XF_TOL * (1 + norm3(b)) * 16);
		ck_assert(isinf(l.tmax));
	}
}
END_TEST

/* ---- normals */

/*
 * For random triangles and placements (mirrors included), xform_normal of
 * the local (b-a)x(c-a) is the unit (B-A)x(C-A) of the placed triangle
 * (placed in double with x->m). Sliver triangles are skipped: their
 * normal is ill-conditioned in float.
 */
START_TEST(test_normal_matches_placed_triangle)
{
	struct rng r = { 4 };
	int n, tested = 0, mirrored = 0;

	for (n = 0; n < 5000; n++) {
		struct xform x;
		vec3 a = rng_vec(&r, -3, 3), b = rng_vec(&r, -3, 3), c = rng_vec(&r, -3, 3);
		vec3 nl = v3_cross(v3_sub(b, a), v3_sub(c, a)), got;
		double pa[3], pb[3], pc[3], wa[3], wb[3], wc[3], e1[3], e2[3], want[3], g[3], len;
		double la = v3_dot(v3_sub(b, a), v3_sub(b, a)), lc = v3_dot(v3_sub(c, a), v3_sub(c, a));
		int i;

		if (sqrt(v3_dot(nl, nl)) < 0.1 * (la + lc))
			continue;
		rng_xform(&r, &x);
		vd(a, pa);
		vd(b, pb);
		vd(c, pc);
		mul34(x.m, pa, 1, wa);
		mul34(x.m, pb, 1, wb);
		mul34(x.m, pc, 1, wc);
		for (i = 0; i < 3; i++) {
			e1[i] = wb[i] - wa[i];
			e2[i] = wc[i] - wa[i];
		}
		want[0] = e1[1] * e2[2] - e1[2] * e2[1];
		want[1] = e1[2] * e2[0] - e1[0] * e2[2];
		want[2] = e1[0] * e2[1] - e1[1] * e2[0];
		len = norm3(want);
		for (i = 0; i < 3; i++)
			want[i] /= len;
		got = xform_normal(&x, nl);
		vd(got, g);
		ck_assert_msg(dist3(g, want) <= 1e-4, "#%d: det %g, got (%g %g %g) want (%g %g %g)",
			      n, x.det, g[0], g[1], g[2], want[0], want[1], want[2]);
		ck_assert_double_le(fabs(norm3(g) - 1), 1e-6);
		tested++;
		mirrored += x.det < 0;
	}
	ck_assert_int_gt(tested, 1000);
	ck_assert_int_gt(mirrored, 300);
}
END_TEST

/* A mirror flips the normal with the winding: (b-a)x(c-a) of the mirrored
 * triangle; the zero vector stays zero. */
START_TEST(test_normal_mirror_named)
{
	const double pos[3] = { 5, 5, 5 }, q[4] = { 1, 0, 0, 0 }, s[3] = { -1, 2, 2 };
	struct xform x;
	vec3 nn;

	ck_assert_int_eq(xform_from_trs(pos, q, s, &x), CORE_OK);
	/* triangle (0,0,0) (1,0,0) (0,1,0): normal +z; mirrored in x its
	 * winding seen from +z is reversed, so the world normal is -z */
	nn = xform_normal(&x, v3(0, 0, 1));
	ck_assert(nn.x == 0 && nn.y == 0 && nn.z == -1);
	/* a face normal along the mirrored axis stays put: (b-a)x(c-a) of
	 * (0,0,0) (0,1,0) (0,0,1) is +x; mirrored: (0,0,0) (0,2,0) (0,0,2) in
	 * x-mirrored space gives +x again */
	nn = xform_normal(&x, v3(1, 0, 0));
	ck_assert(nn.x == 1 && nn.y == 0 && nn.z == 0);
	nn = xform_normal(&x, v3(0, 0, 0));
	ck_assert(nn.x == 0 && nn.y == 0 && nn.z == 0);
}
END_TEST

/* ---- rays */

/*
 * The local ray keeps the parameter: o + t d in world is
 * xform_point(local o + t local d), for any t; tmax is unchanged and the
 * direction is not renormalised.
 */
START_TEST(test_ray_keeps_t)
{
	struct rng r = { 5 };
	int n;

	for (n = 0; n < 5000; n++) {
		struct xform x;
		struct ray w, l;
		double t = rng_range(&r, 0, 10), wp[3], lp[3], got[3];
		int i;

		rng_xform(&r, &x);
		w.origin = rng_vec(&r, -10, 10);
		w.dir = rng_vec(&r, -2, 2);
		w.tmax = (float)rng_range(&r, 0, 100);
		l = xform_ray_to_local(&x, &w);
		ck_assert(l.tmax == w.tmax);
		for (i = 0; i < 3; i++) {
			wp[i] = v3_comp(w.origin, i) + t * v3_comp(w.dir, i);
			lp[i] = v3_comp(l.origin, i) + t * v3_comp(l.dir, i);
		}
		mul34(x.m, lp, 1, got);
		ck_assert_double_le(dist3(got, wp), XF_TOL * 16 * (1 + norm3(wp) + t));
	}
}
END_TEST

START_TEST(test_ray_scale_named)
{
	const double pos[3] = { 10, 0, 0 }, q[4] = { 1, 0, 0, 0 }, s[3] = { 2, 2, 2 };
	struct xform x;
	struct ray w = { { 0, 0, 0 }, { 1, 0, 0 }, INFINITY }, l;

	ck_assert_int_eq(xform_from_trs(pos, q, s, &x), CORE_OK);
	l = xform_ray_to_local(&x, &w);
	/* world origin 0 is local -5; a unit world step is half a local step */
	ck_assert(l.origin.x == -5 && l.origin.y == 0 && l.origin.z == 0);
	ck_assert(l.dir.x == 0.5f && l.dir.y == 0 && l.dir.z == 0);
	ck_assert(isinf(l.tmax));
}
END_TEST

/* ---- invalid arguments */

struct bad_trs {
	const char *what;
	double pos[3], q[4], s[3];
};

static const struct bad_trs bad_trs_cases[] = {
	{ "zero quaternion", { 0, 0, 0 }, { 0, 0, 0, 0 }, { 1, 1, 1 } },
	{ "NaN quaternion", { 0, 0, 0 }, { 1, NAN, 0, 0 }, { 1, 1, 1 } },
	{ "infinite quaternion", { 0, 0, 0 }, { INFINITY, 0, 0, 0 }, { 1, 1, 1 } },
	{ "zero scale", { 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 0, 1 } },
	{ "negative zero scale", { 0, 0, 0 }, { 1, 0, 0, 0 }, { -0.0, 1, 1 } },
	{ "infinite scale", { 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 1, INFINITY } },
	{ "NaN scale", { 0, 0, 0 }, { 1, 0, 0, 0 }, { NAN, 1, 1 } },
	{ "NaN position", { 0, NAN, 0 }, { 1, 0, 0, 0 }, { 1, 1, 1 } },
	{ "infinite position", { -INFINITY, 0, 0 }, { 1, 0, 0, 0 }, { 1, 1, 1 } },
};

/* CORE_EINVAL and *out untouched */
START_TEST(test_trs_invalid)
{
	const struct bad_trs *c = &bad_trs_cases[_i];
	struct xform x, before;

	memset(&x, 0x5a, sizeof(x));
	before = x;
	ck_assert_msg(xform_from_trs(c->pos, c->q, c->s, &x) == CORE_EINVAL, "%s accepted", c->what);
	ck_assert_msg(memcmp(&x, &before, sizeof(x)) == 0, "%s: out changed", c->what);
}
END_TEST

struct matrix_case {
	const char *what;
	double m[16];
	enum core_result want;
};

static const struct matrix_case matrix_cases[] = {
	{ "last row 0 0 0 2", { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2 }, CORE_EINVAL },
	{ "last row 1 0 0 1", { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1 }, CORE_EINVAL },
	{ "last row all zero", { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0 }, CORE_EINVAL },
	{ "NaN entry", { 1, 0, 0, 0, 0, NAN, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 }, CORE_EINVAL },
	{ "infinite translation", { 1, 0, 0, INFINITY, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 },
	  CORE_EINVAL },
	{ "zero 3x3", { 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1 }, CORE_EINVAL },
	{ "rank 2 (row 3 = row 1 + row 2)", { 1, 2, 3, 0, 4, 5, 6, 0, 5, 7, 9, 0, 0, 0, 0, 1 },
	  CORE_EINVAL },
	{ "flat scale (0 on z)", { 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 }, CORE_EINVAL },
	{ "det 1e-13 of unit entries", { 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1e-13, 0, 0, 0, 0, 1 },
	  CORE_EINVAL },
	{ "det 1e-14 relative at 1e6", { 1e6, 0, 0, 0, 0, 1e6, 0, 0, 0, 0, 1e-8, 0, 0, 0, 0, 1 },
	  CORE_EINVAL },
	{ "ok: det 1e-11 of unit entries", { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1e-11, 0, 0, 0, 0, 1 },
	  CORE_OK },
	{ "ok: tiny uniform scale 1e-100", { 1e-100, 0, 0, 0, 0, 1e-100, 0, 0, 0, 0, 1e-100, 0, 0, 0, 0, 1 },
	  CORE_OK },
	{ "ok: large uniform scale 1e100", { 0, 1e100, 0, 5, -1e100, 0, 0, 6, 0, 0, 1e100, 7, 0, 0, 0, 1 },
	  CORE_OK },
	{ "ok: mirror", { -1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 }, CORE_OK },
	{ "ok: shear", { 1, 5, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 }, CORE_OK },
};

/* Each case: the expected result; on failure *out untouched, on success a
 * working inverse. */
START_TEST(test_matrix_cases)
{
	const struct matrix_case *c = &matrix_cases[_i];
	struct xform x, before;
	enum core_result got;

	memset(&x, 0x5a, sizeof(x));
	before = x;
	got = xform_from_matrix(c->m, &x);
	ck_assert_msg(got == c->want, "%s: %d, want %d", c->what, got, c->want);
	if (got != CORE_OK) {
		ck_assert_msg(memcmp(&x, &before, sizeof(x)) == 0, "%s: out changed", c->what);
		return;
	}
	ck_assert_double_le(inverse_error(&x), INV_TOL);
	ck_assert(x.det == det3(x.m) || fabs(x.det - det3(x.m)) <= 1e-12 * fabs(x.det));
}
END_TEST

START_TEST(test_null_arguments)
{
	const double pos[3] = { 0, 0, 0 }, q[4] = { 1, 0, 0, 0 }, s[3] = { 1, 1, 1 };
	const double m16[16] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 };
	struct xform x;

	ck_assert_int_eq(xform_from_trs(NULL, q, s, &x), CORE_EINVAL);
	ck_assert_int_eq(xform_from_trs(pos, NULL, s, &x), CORE_EINVAL);
	ck_assert_int_eq(xform_from_trs(pos, q, NULL, &x), CORE_EINVAL);
	ck_assert_int_eq(xform_from_trs(pos, q, s, NULL), CORE_EINVAL);
	ck_assert_int_eq(xform_from_matrix(NULL, &x), CORE_EINVAL);
	ck_assert_int_eq(xform_from_matrix(m16, NULL), CORE_EINVAL);
}
END_TEST

/* A quaternion of any non-zero length gives the same placement. */
START_TEST(test_trs_quaternion_scale)
{
	const double pos[3] = { 1, 2, 3 }, s[3] = { 1, -2, 0.5 };
	const double q1[4] = { 0.5, -1, 2, 0.25 };
	double q2[4];
	struct xform a, b;
	int i, k;

	ck_assert_int_eq(xform_from_trs(pos, q1, s, &a), CORE_OK);
	for (k = -300; k <= 300; k += 150) {
		for (i = 0; i < 4; i++)
			q2[i] = ldexp(q1[i], k);
		ck_assert_int_eq(xform_from_trs(pos, q2, s, &b), CORE_OK);
		for (i = 0; i < 12; i++)
			ck_assert_double_le(fabs(a.m[i] - b.m[i]), 1e-15 * 4);
	}
}
END_TEST

static Suite *xform_suite(void)
{
	Suite *s = suite_create("xform");
	TCase *tc = tcase_create("contracts");

	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_trs_exact_quarter_turn);
	tcase_add_test(tc, test_trs_random);
	tcase_add_test(tc, test_trs_quaternion_scale);
	tcase_add_test(tc, test_float_steps_match_nextafterf);
	tcase_add_test(tc, test_matrix_random);
	tcase_add_test(tc, test_inverse_round_trip);
	tcase_add_test(tc, test_normal_matches_placed_triangle);
	tcase_add_test(tc, test_normal_mirror_named);
	tcase_add_test(tc, test_ray_keeps_t);
	tcase_add_test(tc, test_ray_scale_named);
	tcase_add_loop_test(tc, test_trs_invalid, 0, sizeof(bad_trs_cases) / sizeof(bad_trs_cases[0]));
	tcase_add_loop_test(tc, test_matrix_cases, 0, sizeof(matrix_cases) / sizeof(matrix_cases[0]));
	tcase_add_test(tc, test_null_arguments);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(xform_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
