/* xform.h - affine placements of a mesh in the world (instance transforms).
 *
 * A query against a placed mesh moves the ray into mesh space by the inverse
 * placement and never moves the triangles. An affine map keeps the ray
 * parameter: the mesh-space ray (W^-1 o, W^-1 d) at parameter t is the world
 * point o + t d, so t, max_distance and distances stay in world units.
 */
#ifndef CORE_XFORM_H
#define CORE_XFORM_H

#include "core.h"
#include "vec.h"

/* world = m * [mesh; 1], m row-major 3x4 (the last row of the 4x4 is 0 0 0 1),
 * in double; inv is its inverse, det the determinant of the 3x3 part. */
struct xform {
	double m[12];
	double inv[12];
	double det;
};

void xform_identity(struct xform *x);

/* The rotation matrix (row-major) of the quaternion q = (w, x, y, z), of any
 * non-zero length: R(q) with s = 2/|q|^2 after an exact power-of-two scaling,
 * so integer quaternions give exact quarter turns. 0 for a zero or non-finite
 * q, else 1. Its columns are the rotated x, y, z axes. */
int xform_quat_matrix(const double quat[4], double r[9]);

/* Translation, then rotation by the unit quaternion q = (w, x, y, z)
 * (normalised here), then scale: world = T * R * S * p. scale components must
 * be non-zero and finite (negative mirrors). CORE_EINVAL otherwise, or for a
 * zero quaternion. */
enum core_result xform_from_trs(const double pos[3], const double quat[4],
				const double scale[3], struct xform *out);

/* From a row-major 4x4 affine matrix (16 numbers). CORE_EINVAL when the last
 * row is not 0 0 0 1, a number is not finite, or the 3x3 part is singular
 * (|det| tiny relative to its entries). */
enum core_result xform_from_matrix(const double m16[16], struct xform *out);

/* The world ray moved into mesh space: origin by inv, direction by inv's 3x3
 * (not renormalised), tmax unchanged. */
struct ray xform_ray_to_local(const struct xform *x, const struct ray *world);

vec3 xform_point(const struct xform *x, vec3 p_local);	/* mesh -> world */
/* A mesh-space normal to world: inverse transpose, times sign(det), unit. */
vec3 xform_normal(const struct xform *x, vec3 n_local);

#endif
