/* query.h - ray queries answered in world space: a world ray against a mesh
 * placed by an optional transform, hits back as world points and unit
 * normals, so that no caller recomputes geometry from the triangles.
 */
#ifndef CORE_QUERY_H
#define CORE_QUERY_H

#include <stdint.h>

#include "core.h"
#include "mesh.h"
#include "vec.h"
#include "xform.h"

/*
 * One world-space ray of a query. The cast ray (ray) is the caller's as
 * exactly as a float ray can be: its direction is the one given, scaled by a
 * power of two (exact), so that a ray aimed at a point (a shared vertex, a
 * point of an edge) still passes through it; t along it is then in units of
 * |ray.dir| (unit), and world distances are t * unit.
 */
struct qray {
	struct ray ray;		/* world origin, direction as cast, tmax in units of |dir| */
	double dir[3];		/* ray.dir in double (normalised: before its rounding) */
	double unit;		/* |ray.dir|: world distance per unit of t (1: t is the distance) */
	double length;		/* segments: |end - start| in double; rays: 0 */
};

/* A hit in world space. */
struct world_hit {
	float distance;		/* world units along the ray (the core's t) */
	vec3 point;		/* o + t d of the world ray, in double, rounded once */
	vec3 normal;		/* unit (B-A)x(C-A) of the placed triangle */
	uint32_t triangle;
	float u, v;		/* barycentrics of b and c */
	int front_face;		/* mirroring placements accounted for */
	float fraction;		/* segments (length > 0): t / length in [0, 1]; else 0 */
};

/* d at unit length, in double, into u: scaled by its largest component
 * first (1e-300 squared would vanish). 0 when d is zero or not finite. */
int dir_unit(const double d[3], double u[3]);

/*
 * Set r's direction from d (finite, not all zero), its origin and its limit
 * tmax (world units; INFINITY for none). A d that is already a unit float32
 * vector (every component exactly a float, length 1 within 2^-22) is cast as
 * given with t the distance (unit 1), so a float ray answers exactly as the
 * core does for it; so is a d along an axis, as the unit vector of its
 * axis (the same line). Any other d whose components are floats is cast as
 * given too, scaled by the power of two that brings its largest component
 * into [1, 2) (qray_as_given). A d that is not float (or whose scaling would round
 * a tiny component) is normalised in double (scaled by its largest component
 * first) and rounded once: unit 1. length = 0.
 */
void qray_init(struct qray *r, vec3 origin, const double d[3], float tmax);

/* The middle case of qray_init: 1 and r set when d is along an axis (cast
 * as its unit vector, unit 1, tmax as given) or every component of d is a
 * float and d scaled so is exact, else 0 (r unchanged). */
int qray_as_given(struct qray *r, vec3 origin, const double d[3], float tmax);

/* The world distance of the point at t along a ray cast with unit as a
 * qray's: t * unit rounded once (t <= ray.tmax keeps it within the limit
 * and finite). */
static inline float ray_distance(float t, double unit)
{
	return (float)((double)t * unit);
}

static inline float qray_distance(const struct qray *r, float t)
{
	return ray_distance(t, r->unit);
}

/* The world point o + t*d of r, in double, rounded once. */
vec3 qray_point(const struct qray *r, float t);

/*
 * Cast r against m placed in the world by xf (NULL: mesh space is world
 * space). The ray is moved into mesh space (the triangles never move) and
 * the answers back: out[0..*n) are world hits in the order of
 * mesh_raycast. opts as for mesh_raycast (bare_hits: no point or normal
 * in out); flip_winding is ignored and taken from xf. scratch and out hold
 * at least opts->max_hits entries (1 unless HIT_ALL) and belong to the
 * caller: nothing is allocated per ray here. *total may be NULL.
 * CORE_EINVAL when the moved ray is not a valid ray (a transform pushing
 * it out of the float range).
 */
enum core_result mesh_query(const struct mesh *m, const struct xform *xf, const struct qray *r,
			    const struct query_opts *opts, struct hit *scratch,
			    struct world_hit *out, uint32_t *n, uint32_t *total);

/* Room for mesh_query_batch: n mesh-space rays and hits (the caller's, so
 * that nothing is allocated per batch). */
struct mesh_query_room {
	struct ray *local;
	struct hit *hits;
};

/*
 * mesh_query for r[0..n) at once, closest or any hit (CORE_EINVAL for
 * HIT_ALL): out[i], nh[i] (0 or 1) and res[i] are what mesh_query answers
 * for r[i] alone, bit for bit (out[i] written only for a hit). The rays'
 * walks through the BVH are interleaved on large meshes (mesh_raycast_batch).
 */
enum core_result mesh_query_batch(const struct mesh *m, const struct xform *xf,
				  const struct qray *r, size_t n, const struct query_opts *opts,
				  struct mesh_query_room *room, struct world_hit *out, uint32_t *nh,
				  enum core_result *res);

#endif
