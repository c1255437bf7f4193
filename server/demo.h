/* demo.h - the built-in demo mesh "demo": a small closed game arena.
 *
 * Layout (world units, y up; every part is a closed box, wound
 * counter-clockwise seen from outside, vertices shared within each box):
 *
 *   floor     slab x,z in [-20, 20], y in [-1, 0]; its top (y = 0) is an
 *             8 x 8 grid of 5-unit quads: triangles 0..127
 *   walls     4 units high standing on the floor at its rim:
 *               west  x [-20, -19]  z [-20, 20]   y [0, 4]
 *               east  x [ 19,  20]  z [-20, 20]   y [0, 4]
 *               south x [-19,  19]  z [-20, -19]  y [0, 4]
 *               north x [-19,  19]  z [ 19,  20]  y [0, 4]
 *   crate A   x [-1, 1]   z [-1, 1]   y [0, 2]    (centre (0, 1, 0))
 *   crate B   x [ 8, 10]  z [-6, -4]  y [0, 2]    (centre (9, 1, -5))
 *   crate C   x [-10, -7] z [ 6, 9]   y [0, 3]    (centre (-8.5, 1.5, 7.5))
 *
 * Triangles are numbered in that order: floor 0..319 (top 0..127, bottom
 * 128..255, sides 256..319), walls 320..367 (12 each, west, east, south,
 * north), crates 368..403 (A, B, C). Within a box the faces come in the
 * order +y, -y, -x, +x, -z, +z, two triangles per quad.
 *
 * Examples: a ray from (0, 10, 0) straight down (0, -1, 0) hits crate A's
 * top at (0, 2, 0), distance 8; a ray from (-15, 1, 0) along +x hits crate
 * A's west face at (-1, 1, 0), distance 14; one from (0, 1, -15) along +z
 * hits it at (0, 1, -1), distance 14; one from (0, 1, 5) along +z hits the
 * north wall at (0, 1, 19), distance 14.
 */
#ifndef SERVER_DEMO_H
#define SERVER_DEMO_H

#include <stddef.h>
#include <stdint.h>

#define DEMO_MESH_NAME "demo"

struct demo_mesh {
	float *xyz;		/* 3 per vertex */
	size_t nvert;
	uint32_t *idx;		/* 3 per triangle */
	size_t ntri;
};

/* Generate the arrays (malloc'd; release with demo_mesh_release).
 * 0, or -1 when out of memory (d then owns nothing). */
int demo_mesh_make(struct demo_mesh *d);
void demo_mesh_release(struct demo_mesh *d);

struct store;
/* Build the demo mesh and store it as "demo". CORE_OK or the failing
 * core_result (ENOMEM, or ETOOBIG when max_meshes is reached). */
int demo_store(struct store *store, size_t max_meshes);

#endif
