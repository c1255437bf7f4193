/* xform.c - affine instance placements: TRS and matrix constructors, the
 * inverse by adjugate, and moving rays, points and normals between spaces. */
#include <math.h>
#include <string.h>

#include "xform.h"

/* xform_from_matrix: singular when |det| <= this * (largest |entry|)^3. */
#define XFORM_SINGULAR_REL 1e-12

void xform_identity(struct xform *x)
{
	static const double id[12] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0 };

	memcpy(x->m, id, sizeof(id));
	memcpy(x->inv, id, sizeof(id));
	x->det = 1;
}

/*
 * Fill x->inv and x->det from x->m. The 3x3 part is first scaled by a power
 * of two (exact) so that its largest entry is in [0.5, 1): the determinant
 * and cofactors then neither overflow nor underflow, and the singularity
 * test (when asked for) is relative to the entries. The inverse's 3x3 part
 * is adj(A) / det(A), its translation -A^-1 t. CORE_EINVAL when singular or
 * when a result is not finite.
 */
static enum core_result xform_invert(struct xform *x, int check_relative)
{
	double a[9], adj[9], big = 0, det_s;
	int i, r, e;

	for (r = 0; r < 3; r++)
		for (i = 0; i < 3; i++) {
			a[r * 3 + i] = x->m[r * 4 + i];
			big = fmax(big, fabs(a[r * 3 + i]));
		}
	if (!(big > 0) || !isfinite(big))
		return CORE_EINVAL;
	frexp(big, &e);
	for (i = 0; i < 9; i++)
		a[i] = ldexp(a[i], -e);
	big = ldexp(big, -e);
	adj[0] = a[4] * a[8] - a[5] * a[7];
	adj[1] = a[2] * a[7] - a[1] * a[8];
	adj[2] = a[1] * a[5] - a[2] * a[4];
	adj[3] = a[5] * a[6] - a[3] * a[8];
	adj[4] = a[0] * a[8] - a[2] * a[6];
	adj[5] = a[2] * a[3] - a[0] * a[5];
	adj[6] = a[3] * a[7] - a[4] * a[6];
	adj[7] = a[1] * a[6] - a[0] * a[7];
	adj[8] = a[0] * a[4] - a[1] * a[3];
	det_s = a[0] * adj[0] + a[1] * adj[3] + a[2] * adj[6];
	if (det_s == 0 || !isfinite(det_s))
		return CORE_EINVAL;
	if (check_relative && fabs(det_s) <= XFORM_SINGULAR_REL * big * big * big)
		return CORE_EINVAL;
	/* A = 2^e A_s, so A^-1 = 2^-e adj(A_s) / det(A_s) and det A = 2^3e det_s */
	for (r = 0; r < 3; r++)
		for (i = 0; i < 3; i++)
			x->inv[r * 4 + i] = ldexp(adj[r * 3 + i] / det_s, -e);
	for (r = 0; r < 3; r++)
		x->inv[r * 4 + 3] = -(x->inv[r * 4] * x->m[3] + x->inv[r * 4 + 1] * x->m[7] +
				      x->inv[r * 4 + 2] * x->m[11]);
	x->det = ldexp(det_s, 3 * e);
	for (i = 0; i < 12; i++)
		if (!isfinite(x->inv[i]))
			return CORE_EINVAL;
	if (!isfinite(x->det) || x->det == 0)
		return CORE_EINVAL;
	return CORE_OK;
}

/*
 * R(q) with s = 2/|q|^2 (q scaled by a power of two first), so integer
 * quaternions give exact quarter turns. Row-major r. 0 for a zero or
 * non-finite q.
 */
int xform_quat_matrix(const double quat[4], double r[9])
{
	double q[4], big = 0, s, w, x, y, z;
	int i, e;

	for (i = 0; i < 4; i++) {
		if (!isfinite(quat[i]))
			return 0;
		big = fmax(big, fabs(quat[i]));
	}
	if (big == 0)
		return 0;
	frexp(big, &e);
	for (i = 0; i < 4; i++)
		q[i] = ldexp(quat[i], -e);
	s = 2.0 / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	w = q[0];
	x = q[1];
	y = q[2];
	z = q[3];
	r[0] = 1 - s * (y * y + z * z);
	r[1] = s * (x * y - w * z);
	r[2] = s * (x * z + w * y);
	r[3] = s * (x * y + w * z);
	r[4] = 1 - s * (x * x + z * z);
	r[5] = s * (y * z - w * x);
	r[6] = s * (x * z - w * y);
	r[7] = s * (y * z + w * x);
	r[8] = 1 - s * (x * x + y * y);
	return 1;
}

enum core_result xform_from_trs(const double pos[3], const double quat[4],
				const double scale[3], struct xform *out)
{
	struct xform x;
	double rot[9];
	int i, j;

	if (!pos || !quat || !scale || !out)
		return CORE_EINVAL;
	for (i = 0; i < 3; i++)
		if (!isfinite(pos[i]) || !isfinite(scale[i]) || scale[i] == 0)
			return CORE_EINVAL;
	if (!xform_quat_matrix(quat, rot))
		return CORE_EINVAL;
	/* T R S: column j of the 3x3 part is R's column j times scale[j] */
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 3; j++)
			x.m[i * 4 + j] = rot[i * 3 + j] * scale[j];
		x.m[i * 4 + 3] = pos[i];
	}
	if (xform_invert(&x, 0) != CORE_OK)
		return CORE_EINVAL;
	*out = x;
	return CORE_OK;
}

enum core_result xform_from_matrix(const double m16[16], struct xform *out)
{
	struct xform x;
	int i;

	if (!m16 || !out)
		return CORE_EINVAL;
	for (i = 0; i < 16; i++)
		if (!isfinite(m16[i]))
			return CORE_EINVAL;
	if (m16[12] != 0 || m16[13] != 0 || m16[14] != 0 || m16[15] != 1)
		return CORE_EINVAL;
	memcpy(x.m, m16, sizeof(x.m));
	if (xform_invert(&x, 1) != CORE_OK)
		return CORE_EINVAL;
	*out = x;
	return CORE_OK;
}

/* Rows 0..2 of the 3x4 matrix m times (v, w). */
static void apply(const double m[12], vec3 v, double w, double out[3])
{
	int r;

	for (r = 0; r < 3; r++)
		out[r] = m[r * 4] * v.x + m[r * 4 + 1] * v.y + m[r * 4 + 2] * v.z +
			 m[r * 4 + 3] * w;
}

struct ray xform_ray_to_local(const struct xform *x, const struct ray *world)
{
	struct ray r;
	double o[3], d[3];

	apply(x->inv, world->origin, 1, o);
	apply(x->inv, world->dir, 0, d);
	r.origin = v3((float)o[0], (float)o[1], (float)o[2]);
	r.dir = v3((float)d[0], (float)d[1], (float)d[2]);
	r.tmax = world->tmax;
	return r;
}

vec3 xform_point(const struct xform *x, vec3 p_local)
{
	double p[3];

	apply(x->m, p_local, 1, p);
	return v3((float)p[0], (float)p[1], (float)p[2]);
}

/*
 * (A u) x (A v) = det(A) A^-T (u x v), so the world normal of a triangle is
 * sign(det) A^-T n_local: a mirroring placement keeps (b-a)x(c-a) of the
 * world triangle. The zero vector stays zero.
 */
vec3 xform_normal(const struct xform *x, vec3 n_local)
{
	double n[3], l, s = x->det < 0 ? -1 : 1;
	int r;

	for (r = 0; r < 3; r++)
		n[r] = x->inv[r] * n_local.x + x->inv[4 + r] * n_local.y +
		       x->inv[8 + r] * n_local.z;
	l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
	if (!(l > 0))
		return v3(0, 0, 0);
	s /= l;
	return v3((float)(n[0] * s), (float)(n[1] * s), (float)(n[2] * s));
}
