/* formats.h - mesh upload formats: Wavefront OBJ and STL (binary, ASCII).
 * Used by PUT /v1/meshes/{name} and by the benchmark, which reads the
 * harness's OBJ files with the same code.
 */
#ifndef API_FORMATS_H
#define API_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"

/* Plain arrays ready for mesh_build(). Owned by the struct. */
struct mesh_data {
	float *xyz;		/* 3 per vertex */
	size_t nvert;
	uint32_t *idx;		/* 3 per triangle, 0-based */
	size_t ntri;
};

void mesh_data_release(struct mesh_data *d);

/*
 * OBJ: `v x y z [w]`, `f` with v, v/vt, v//vn, v/vt/vn and negative
 * (relative) indices; polygons fan-triangulated in file order; other
 * statements ignored. STL: binary (80-byte header + count) or ASCII
 * ("solid ... facet ... endsolid"); vertices are not merged.
 * On failure returns API_INVALID_MESH (msg says what and on which line or
 * facet), API_PAYLOAD_TOO_LARGE (more than max_tris triangles), or
 * API_INTERNAL (out of memory); *out is then empty, and f (may be NULL)
 * holds the result and the message: the one failure convention of every
 * mesh decoder (decode.h).
 */
enum api_err obj_parse(const char *text, size_t len, size_t max_tris,
		       struct mesh_data *out, struct api_fail *f);
enum api_err stl_parse(const void *data, size_t len, size_t max_tris,
		       struct mesh_data *out, struct api_fail *f);

/*
 * For the two readers above (defined in obj.c): parses the decimal number
 * s[0..n), which need not be NUL-terminated, into *out rounded correctly to
 * float32. Syntax [+-]digits[.digits][(e|E)[+-]digits] (digits on at least
 * one side of the point); no hex, inf or nan; independent of the locale.
 * Returns API_OK, API_INVALID_MESH (not such a number, or its value does not
 * fit a finite float; underflow to zero or a subnormal is fine) or
 * API_INTERNAL (out of memory). *out is untouched on failure.
 */
enum api_err formats_parse_float(const char *s, size_t n, float *out);

#endif
