/* testgeom.h - shared helpers for the geometry suites: a seeded RNG,
 * generated meshes, and an exact rational (GMP) ray/triangle oracle. */
#ifndef TESTS_TESTGEOM_H
#define TESTS_TESTGEOM_H

#include <stddef.h>
#include <stdint.h>

#include "vec.h"

struct rng {
	uint64_t s;
};

uint64_t rng_next(struct rng *r);
double rng_unit(struct rng *r);			/* [0, 1) */
double rng_range(struct rng *r, double lo, double hi);
vec3 rng_dir(struct rng *r);			/* unit, float */

struct tmesh {
	float *xyz;
	size_t nvert;
	uint32_t *idx;
	size_t ntri;
};

void tmesh_release(struct tmesh *m);
struct mesh;
/* t built into a mesh (mesh_build); the test fails when it cannot be. */
struct mesh *tmesh_build(const struct tmesh *t);
/* Vertex v of t. */
vec3 tmesh_vertex(const struct tmesh *t, uint32_t v);
/* A closed, consistently oriented (CCW from outside) sphere: a cube's faces
 * subdivided n x n and pushed onto the sphere, shared vertices. */
void tmesh_sphere(struct tmesh *m, int n, vec3 center, float radius);
/* An open n x n height-field grid in the xz plane over [x0, x0+n*cell], normals +y. */
void tmesh_grid(struct tmesh *m, int n, float x0, float cell, struct rng *r, float amp);
/* ntri random triangles inside the box [-s, s]^3. */
void tmesh_soup(struct tmesh *m, size_t ntri, float s, struct rng *r);
/* ntri separate triangles in the plane z = 0, sizes and places spaced
 * exponentially (2^-100 to 2^99, 200 scales): a BVH as deep as the builder
 * allows. */
void tmesh_deep(struct tmesh *m, size_t ntri);

struct bvh_prim;
/* n builder primitives (bvh.h), ids 0 .. n-1: boxes of varied sizes, 30 %
 * of them clustered in a unit square (leaves of every count from 1 to 8
 * come out). malloc'd. */
struct bvh_prim *random_prims(size_t n, uint64_t seed);

/* Exact rational test of the float ray against the closed float triangle:
 * 1 when o + t d, 0 <= t <= tmax (tmax < 0: unbounded), meets it with d.n != 0;
 * *t_out gets t as a double. */
int oracle_ray_triangle(vec3 o, vec3 d, double tmax, vec3 a, vec3 b, vec3 c, double *t_out);

#endif
