/* mesh_impl.h - the layout of struct mesh, shared by mesh.c (build) and
 * raycast.c / overlap.c (queries). Internal to core/.
 *
 * Triangles that can be hit ("primitives": all but the degenerate ones) are
 * stored in BVH leaf order. Each has a 9-float collision matrix: the world
 * -> triangle-local map of Baldwin and Weber (JCGT 2016), in its 37-byte form
 * whose third basis vector is the unit axis k of the normal's largest
 * component, so column k of the 3x3 part is (0, 0, 1) and is not stored.
 * With i = (k+1)%3, j = (k+2)%3 and p relative to mesh->center:
 *   u = mat[0] p_i + mat[1] p_j + mat[2]          (barycentric of b)
 *   v = mat[3] p_i + mat[4] p_j + mat[5]          (barycentric of c)
 *   z = mat[6] p_i + mat[7] p_j + p_k + mat[8]    (= n.(p - a) / n_k)
 * id packs the uploaded triangle index (<< PRIM_SHIFT) and the flags.
 *
 * The records are stored in blocks of four, structure-of-arrays (160 bytes:
 * mat[q][lane], then id[lane]), so the leaf test runs on four or eight
 * triangles at once: primitive i is lane i % 4 of block i / 4. A leaf is a
 * range of primitives that may start anywhere in a block; the test masks the
 * lanes outside it, and the leaves are placed (bvh_layout_leaves) so that few
 * take more eight-lane passes than their count needs. One zeroed block more
 * than needed ends the array, so an eight-lane load from the last block
 * stays inside it.
 */
#ifndef CORE_MESH_IMPL_H
#define CORE_MESH_IMPL_H

#include <stdatomic.h>

#include "bvh.h"
#include "mesh.h"

#define PRIM_AXIS_MASK 3u	/* k, the dominant normal axis */
#define PRIM_NEG_NK 4u		/* n_k < 0 */
#define PRIM_EXACT 8u		/* too thin for the float matrix: exact test only */
#define PRIM_SHIFT 4

#define PRIM_LANES 4

struct prim_block {
	float mat[9][PRIM_LANES];
	uint32_t id[PRIM_LANES];
};

_Static_assert(sizeof(struct prim_block) == 40 * PRIM_LANES, "40 bytes per triangle");

struct mesh {
	atomic_size_t refs;
	size_t nvert, ntri, ndegen, nprim;
	float *xyz;		/* 3 per vertex, as uploaded */
	uint32_t *idx;		/* 3 per triangle, as uploaded */
	struct prim_block *prims;	/* leaf order, nprim / 4 + 2 blocks */
	struct bvh bvh;
	vec3 center;		/* the matrices act on p - center */
	vec3 min, max;
	size_t memory_bytes;
	size_t budget_bytes;	/* taken from membudget.h: given back when freed */
	double build_ms;
};

static inline vec3 mesh_vertex(const struct mesh *m, uint32_t v)
{
	const float *p = m->xyz + 3 * (size_t)v;

	return v3(p[0], p[1], p[2]);
}

static inline uint32_t prim_id(const struct mesh *m, uint32_t i)
{
	return m->prims[i / PRIM_LANES].id[i % PRIM_LANES];
}

static inline float prim_mat(const struct mesh *m, uint32_t i, int q)
{
	return m->prims[i / PRIM_LANES].mat[q][i % PRIM_LANES];
}

#endif
