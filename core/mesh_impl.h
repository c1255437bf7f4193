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
 * id packs the uploaded triangle index (<< PRIM_SHIFT) and the flags. The
 * matrix and the id share one 40-byte record, so a leaf is one memory stream.
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

struct prim_rec {
	float mat[9];
	uint32_t id;
};

struct mesh {
	atomic_size_t refs;
	size_t nvert, ntri, ndegen, nprim;
	float *xyz;		/* 3 per vertex, as uploaded */
	uint32_t *idx;		/* 3 per triangle, as uploaded */
	struct prim_rec *prims;	/* leaf order */
	struct bvh bvh;
	vec3 center;		/* the matrices act on p - center */
	vec3 min, max;
	size_t memory_bytes;
	double build_ms;
};

static inline vec3 mesh_vertex(const struct mesh *m, uint32_t v)
{
	const float *p = m->xyz + 3 * (size_t)v;

	return v3(p[0], p[1], p[2]);
}

#endif
