/* shapes.h - ray casts against spheres and capsules as closed solids.
 *
 * A sphere is every point within radius of its centre; a capsule every point
 * within radius of the segment a-b (a == b is a sphere). Both are closed:
 * a ray that only touches the surface hits it, and a ray that starts inside
 * or on the surface hits at t = 0 with inside set.
 *
 * Boundary contract (tests/unit/test_shapes.c checks it against exact
 * rational arithmetic): a ray whose exact closest approach to the solid is
 * within the radius is always reported (no false negatives, grazing rays
 * included), and a reported ray passes within r^2 + 1e-12 (|o - c|^2 + r^2)
 * in squared distance (for a capsule's body divided by sin^2 of the angle
 * between ray and axis: near-axis rays are ill-conditioned). The arithmetic is
 * double over the float inputs; o - c must be exact in double, which holds
 * when the coordinates are within a factor 2^29 of each other.
 */
#ifndef CORE_SHAPES_H
#define CORE_SHAPES_H

#include "vec.h"

struct shape_hit {
	float t;		/* entry distance in units of |ray.dir|; 0 when inside */
	vec3 point;		/* o + t d */
	vec3 normal;		/* unit outward normal at point; inside: -dir, normalised */
	int inside;		/* the origin is in the closed solid */
};

/* 1 and *hit filled when the ray meets the closed ball (centre c, radius
 * r >= 0) at some 0 <= t <= ray->tmax, else 0. ray->dir must be non-zero. */
int sphere_raycast(vec3 c, float r, const struct ray *ray, struct shape_hit *hit);

/* The same for the closed capsule around segment a-b with radius r >= 0. */
int capsule_raycast(vec3 a, vec3 b, float r, const struct ray *ray, struct shape_hit *hit);

#endif
