/* obb.h - oriented bounding boxes: construction, ray casts, and the
 * separating-axis tests against triangles and axis-aligned boxes.
 *
 * A box is a closed solid: points on its faces, edges and corners belong to
 * it. A ray that only touches it (grazes a face, an edge or a corner, or runs
 * along a face) hits it. A half extent may be 0 (a flat box or a segment).
 */
#ifndef CORE_OBB_H
#define CORE_OBB_H

#include <stddef.h>

#include "core.h"
#include "vec.h"

struct obb {
	vec3 center;
	vec3 half;		/* half extents along axis[0..2], each >= 0 */
	vec3 axis[3];		/* orthonormal, right-handed: the box's local x, y, z in world space */
};

/* quat = (w, x, y, z), any non-zero length (normalised here in double).
 * CORE_EINVAL for a zero or non-finite quaternion, negative or non-finite
 * half extents, or a non-finite center. */
enum core_result obb_from_quat(vec3 center, vec3 half, const double quat[4], struct obb *out);

/* axes: three unit vectors, pairwise orthogonal within 1e-4 (else CORE_EINVAL).
 * A left-handed set is accepted (the box is the same solid). */
enum core_result obb_from_axes(vec3 center, vec3 half, const vec3 axes[3], struct obb *out);

struct obb_hit {
	float t;		/* entry distance in units of |ray.dir|; 0 when inside */
	vec3 point;		/* world point o + t*d */
	vec3 normal;		/* unit outward normal of the face entered (world);
				 * when inside: minus the ray direction, normalised */
	int inside;		/* the origin is in the closed box */
};

/* Slab test in the box's frame. 1 and *hit filled when the ray meets the box
 * with 0 <= t <= ray->tmax, else 0. ray->dir must be non-zero. */
int obb_raycast(const struct obb *b, const struct ray *ray, struct obb_hit *hit);

/* The first of n boxes along the ray (the smallest t; ties go to the lower
 * index): 1 and *index, *hit filled on a hit, 0 on a miss. */
int obb_raycast_first(const struct obb *boxes, size_t n, const struct ray *ray,
		      size_t *index, struct obb_hit *hit);

/* 1 when the closed triangle abc and the solid box intersect (13-axis SAT
 * of Akenine-Moller / Gottschalk), conservative by a relative 1e-6 of the
 * box's size so that touching counts. */
int obb_triangle_overlap(const struct obb *b, vec3 a, vec3 bv, vec3 c);

/* 1 when the solid box may touch the axis-aligned box [lo, hi] (15-axis
 * SAT, conservative: never 0 when they intersect). Used to cull BVH nodes. */
int obb_aabb_overlap(const struct obb *b, vec3 lo, vec3 hi);

/* The box's world-space axis-aligned bounds. */
void obb_bounds(const struct obb *b, vec3 *lo, vec3 *hi);

#endif
