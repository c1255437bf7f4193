/* tlas.h - a small binary BVH over the world bounds of placed items (the
 * top level of a world: one box per static instance).
 *
 * Built once per resolved static scene and never changed after, so any
 * number of threads may traverse it. Boxes are padded outwards at build (a
 * relative 2^-20 plus a tiny absolute margin) so that the double slab test
 * can never cull a box that a ray touches.
 */
#ifndef CORE_TLAS_H
#define CORE_TLAS_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "vec.h"

struct tlas_node {
	float lo[3], hi[3];
	uint32_t first;		/* inner: left child (right = first + 1); leaf: first item slot */
	uint32_t count;		/* 0 for an inner node */
};

struct tlas {
	struct tlas_node *nodes;	/* node 0 is the root; NULL when empty */
	size_t nnodes;
	uint32_t *items;		/* item indices in leaf order */
	size_t n;
};

/* Build over n >= 0 boxes (lo[i], hi[i]); an empty tlas for n == 0.
 * CORE_ENOMEM, or CORE_ETOOBIG for n >= 2^31. */
enum core_result tlas_build(const vec3 *lo, const vec3 *hi, size_t n, struct tlas *out);
void tlas_release(struct tlas *t);	/* frees the contents; t is empty after */

/* Called for each item whose box the ray may touch at some t in [0, *tmax];
 * may lower *tmax (closest-hit queries), returns non-zero to stop. */
typedef int (*tlas_visit_fn)(void *cls, uint32_t item, float *tmax);

/* Visit items along the ray, nearer boxes first. *tmax in units of |dir|. */
void tlas_traverse(const struct tlas *t, const struct ray *ray, float *tmax, tlas_visit_fn fn,
		   void *cls);

/* A ray prepared for many box tests: origin and reciprocal direction in
 * double (a zero component is tested by containment instead). */
struct tlas_ray {
	double o[3], inv[3];
	int zero[3], neg[3];	/* d[k] == 0; inv[k] < 0 */
};
void tlas_ray_init(struct tlas_ray *r, const struct ray *ray);

/* 1 when the ray may touch the box [lo, hi] at some t in [0, tmax]
 * (conservative on padded boxes: never 0 when it touches; the reciprocal's
 * rounding is far inside the padding). */
int tlas_ray_box(const struct tlas_ray *r, const float lo[3], const float hi[3], double tmax);
/* The same test, answering the entry t (>= 0) or -1 when the ray misses. */
double tlas_box_entry(const struct tlas_ray *r, const float lo[3], const float hi[3], double tmax);
int tlas_box_hit(const float lo[3], const float hi[3], const struct ray *ray, float tmax);

/* The box [lo, hi] grown outwards by the padding the traversal relies on. */
void tlas_pad(vec3 *lo, vec3 *hi);

#endif
