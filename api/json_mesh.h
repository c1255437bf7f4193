/* json_mesh.h - mesh uploads in JSON, streamed straight into float/uint32 arrays.
 *
 * The same contract as decode_mesh_json() on a json_parse() tree, with the
 * same answers and messages for every body, but without the tree: the body
 * is read once with a json_cursor (api/json.h) and the numbers go straight
 * into the arrays of a struct mesh_data. Memory: the two arrays (4 bytes per
 * number, at most 2 bytes of body per number, so at most twice the body)
 * and a few hundred bytes; nothing per JSON value.
 */
#ifndef API_JSON_MESH_H
#define API_JSON_MESH_H

#include <stddef.h>

#include "decode.h"
#include "formats.h"

/*
 * body[0..len) is {"vertices": [[x,y,z],...] or [x,y,z,...], "triangles":
 * [[a,b,c],...] or [a,b,c,...]} (strict JSON, API.md). On success returns
 * API_OK and fills out (free with mesh_data_release). Otherwise *out is
 * empty and f holds the error: API_INVALID_JSON (syntax, with the byte
 * offset), API_INVALID_REQUEST (wrong shape or type, unknown or duplicate
 * key, naming the field), API_INVALID_MESH (index out of range, non-finite
 * or out-of-float32-range coordinate, no vertices or no triangles),
 * API_PAYLOAD_TOO_LARGE (more than max_tris triangles: nothing past the limit
 * is stored) or API_INTERNAL (out of memory). When a body has several
 * faults the one reported is the one decode_mesh_json() would report.
 */
enum api_err json_mesh_decode(const char *body, size_t len, size_t max_tris,
			      struct mesh_data *out, struct api_fail *f);

#endif
