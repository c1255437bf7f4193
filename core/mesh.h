/* mesh.h - immutable triangle meshes with per-triangle collision matrices,
 * indexed by a BVH, and the queries against them.
 *
 * Ownership: mesh_build() returns a mesh with one reference. A mesh is never
 * changed after it is built, so any number of threads may query it at once.
 * mesh_ref() adds a reference, mesh_unref() drops one and frees the mesh with
 * the last; both are atomic. A caller holding a reference may query for as
 * long as it holds it, whatever the store does meanwhile.
 *
 * Coordinates are float32. Hit/miss decisions are exact for the float ray and
 * the float vertices (closed triangles; see mesh.c), so a ray aimed at an
 * edge or vertex shared by triangles of the mesh always hits one of them.
 */
#ifndef CORE_MESH_H
#define CORE_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "vec.h"

struct mesh;

/* Largest triangle count a mesh can hold (index bits left beside the flags). */
#define MESH_MAX_TRIANGLES (1u << 28)

struct mesh_info {
	size_t vertices;
	size_t triangles;	/* as uploaded, degenerate ones included */
	size_t degenerate;	/* zero-area triangles: numbered, never hit */
	vec3 min, max;		/* bounds of the vertices */
	size_t memory_bytes;	/* everything the mesh holds, struct included */
	double build_ms;	/* wall time mesh_build took */
};

/*
 * Build a mesh from nvert vertices (xyz, 3 floats each) and ntri triangles
 * (3 vertex indices each, 0-based). Copies the arrays.
 * Fails with CORE_EEMPTY (no vertex or no triangle), CORE_ENONFINITE,
 * CORE_EINDEX (*bad_index = the first offending triangle), CORE_ETOOBIG
 * (ntri > MESH_MAX_TRIANGLES or a size overflow), CORE_ENOSPACE (the
 * memory budget, membudget.h, has no room for memory_bytes; the mesh holds
 * them from here until it is freed) or CORE_ENOMEM. bad_index may be NULL.
 */
enum core_result mesh_build(const float *xyz, size_t nvert, const uint32_t *idx,
			    size_t ntri, struct mesh **out, size_t *bad_index);

struct mesh *mesh_ref(struct mesh *m);
void mesh_unref(struct mesh *m);	/* NULL is fine */

void mesh_get_info(const struct mesh *m, struct mesh_info *info);

/* The vertices of triangle tri (as uploaded); tri < info.triangles. */
void mesh_triangle(const struct mesh *m, uint32_t tri, vec3 *a, vec3 *b, vec3 *c);

enum hit_mode { HIT_CLOSEST, HIT_ANY, HIT_ALL };

struct query_opts {
	enum hit_mode mode;
	int cull_backfaces;	/* skip triangles with dot(n, dir) >= 0 */
	int flip_winding;	/* the world placement mirrors (det < 0): flips front/back */
	uint32_t max_hits;	/* HIT_ALL: capacity of the hits array, >= 1 */
	/* HIT_ALL only, optional: MESH_ALL_SCRATCH_BYTES(max_hits) bytes of
	 * caller memory (4-byte aligned) for the candidates, so a batch
	 * allocates nothing per ray; NULL (or too small): the call allocates. */
	void *scratch;
	size_t scratch_bytes;
	/* hits carry t, triangle, u, v and front_face only; point and normal
	 * are left unwritten (binary batches answer a triangle and a
	 * distance: the unit normal's square root and the point's double
	 * arithmetic are 4-8 % of a ray's time, measured on bunny and level) */
	int bare_hits;
};

/* Bytes of candidate scratch a HIT_ALL query of max_hits hits uses. */
#define MESH_CAND_BYTES 24
#define MESH_ALL_SCRATCH_BYTES(max_hits) ((size_t)(max_hits) * MESH_CAND_BYTES)

/* One intersection, in the mesh's own space. t is in units of |ray.dir|.
 * normal is the unit geometric normal (b-a)x(c-a) of the uploaded triangle in
 * mesh space (never flipped: xform_normal maps it to the world); (u, v) are
 * the barycentrics of b and c; front_face is dot(n, dir) < 0, inverted when
 * opts->flip_winding. */
struct hit {
	float t;
	vec3 point;
	vec3 normal;
	uint32_t triangle;
	float u, v;
	int front_face;
};

/*
 * Cast a ray: hits with 0 <= t <= ray->tmax. ray->dir must be non-zero and
 * finite, tmax > 0 (INFINITY allowed), else CORE_EINVAL.
 * HIT_CLOSEST / HIT_ANY write at most one hit to hits[0]; HIT_ALL writes up to
 * opts->max_hits hits sorted by t (then by triangle). *nhits is the number
 * written; *total (may be NULL) the number found, which for HIT_ALL may exceed
 * max_hits. A ray starting on a triangle hits it at t = 0 unless culled.
 * Every reported hit has finite t, point, normal, u and v, whatever the
 * coordinates (all of float's range); a hit farther than FLT_MAX units of
 * |dir| (only possible with a tiny dir) has no float t and is not reported.
 */
enum core_result mesh_raycast(const struct mesh *m, const struct ray *ray,
			      const struct query_opts *opts, struct hit *hits,
			      uint32_t *nhits, uint32_t *total);

/*
 * Cast rays[0..n), closest or any hit (opts->mode; CORE_EINVAL for
 * HIT_ALL): hits[i], nhits[i] (0 or 1) and res[i] are what mesh_raycast
 * answers for rays[i] alone, bit for bit (res[i] CORE_EINVAL for an invalid
 * ray, which is skipped). On a mesh larger than the caches
 * (MESH_BATCH_WALK_BYTES) several rays' walks through the BVH are
 * interleaved, so that one waits on memory while the others compute:
 * 1.2-1.7x the rays a second of one-by-one casts on the harness's level
 * and bunny_sub4 (README, Performance); smaller meshes are cast one ray at
 * a time, which is faster there (below), or, with AVX-512, a batch of
 * enough rays on a mesh of a few MiB at most walks as ray streams (many
 * rays through each node at once: raycast.c has where). Returns CORE_OK
 * unless the mode is HIT_ALL.
 */
enum core_result mesh_raycast_batch(const struct mesh *m, const struct ray *rays, size_t n,
				    const struct query_opts *opts, struct hit *hits,
				    uint32_t *nhits, enum core_result *res);
/* Meshes holding less than this are batch-cast one ray at a time: on the
 * development machine (2 MiB of L2 a core) interleaved walks ran 0.75-0.95x
 * one at a time up to 8.8 MB and 1.09-1.29x from 12.8 MB (README,
 * Performance, has each size). */
#define MESH_BATCH_WALK_BYTES (10u << 20)

struct obb;
/*
 * Every triangle that intersects the solid box b (separating-axis test),
 * ascending. Writes up to limit indices to out (out may be NULL when limit is
 * 0) and the full count to *count. CORE_ENOMEM possible.
 */
enum core_result mesh_overlap_obb(const struct mesh *m, const struct obb *b,
				  uint32_t *out, size_t limit, size_t *count);

#endif
