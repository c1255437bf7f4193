/* encode.h - answers to JSON, straight into a struct buf (no cJSON printing).
 *
 * Every function appends one complete JSON value; numbers go through
 * buf_put_float (shortest round-trip) so a 1000-ray batch encodes in well
 * under a millisecond. Allocation failures set the buffer's oom flag.
 */
#ifndef API_ENCODE_H
#define API_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "mesh.h"
#include "query.h"
#include "vec.h"

/* Room for about one answer of each kind, to preallocate from batch sizes. */
#define ENCODE_HIT_BYTES 240
#define ENCODE_MISS_BYTES 16
#define ENCODE_BINARY_HIT_BYTES 8

void encode_vec3(struct buf *b, vec3 v);
/* ,"distance":d,"point":[x,y,z],"normal":[x,y,z] (written in place when the
 * buffer has room: the same bytes). */
void encode_dpn(struct buf *b, float distance, vec3 point, vec3 normal);

/* {"name", "version", "vertices", "triangles", "degenerate_triangles",
 * "bounds": {"min", "max"}, "build_ms", "memory_bytes"} */
void encode_mesh_info(struct buf *b, const char *name, uint64_t version,
		      const struct mesh_info *mi);

/* {"hit": false} */
void encode_miss(struct buf *b);

/* {"hit": true, "distance", "point", "normal", "triangle", "barycentric",
 * "front_face"[, "fraction" when segment]} */
void encode_mesh_hit(struct buf *b, const struct world_hit *h, int segment);

/* mode all: {"hits": [hit, ...], "truncated": bool} */
void encode_mesh_hits(struct buf *b, const struct world_hit *h, size_t n, int truncated,
		      int segment);

/* {"hit": true, "box", ["id",] "distance", "point", "normal", "inside"} */
void encode_obb_hit(struct buf *b, size_t box, const char *id, float distance, vec3 point,
		    vec3 normal, int inside);

/* Hitscan answers: {"hit": "mesh", "distance", "point", "normal", "triangle"},
 * {"hit": "box", "distance", "point", "normal", "box"[, "id"]}, {"hit": null}. */
void encode_hitscan_mesh(struct buf *b, float distance, vec3 point, vec3 normal, uint32_t tri);
void encode_hitscan_box(struct buf *b, float distance, vec3 point, vec3 normal, size_t box,
			const char *id);
void encode_hitscan_miss(struct buf *b);

/* {"count": n, "triangles": [i, ...], "truncated": bool} */
void encode_overlap(struct buf *b, size_t count, const uint32_t *tris, size_t n);

/* A binary batch answer (API.md "Binary batches", the harness's .hits):
 * int32 triangle (-1: miss) and float32 distance, little-endian. */
void encode_binary_hit(struct buf *b, int32_t triangle, float distance);

/* {"error": {"code": "...", "message": "..."}} */
void encode_error(struct buf *b, const char *code, const char *message);

#endif
