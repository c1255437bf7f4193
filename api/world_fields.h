/* world_fields.h - api/-internal: the field helpers shared by the /v1/worlds
 * decoders (world_decode.c). Every failing helper fills f with
 * "<path>: <what is wrong>" (path "body" at the top) and returns its error.
 */
#ifndef API_WORLD_FIELDS_H
#define API_WORLD_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "decode.h"
#include "vec.h"
#include "xform.h"

/* A field path built on the stack while descending: a key or an index. */
struct wpath {
	const struct wpath *up;
	const char *key;	/* NULL: idx names an array element */
	size_t idx;
};

enum api_err wd_fail(struct api_fail *f, enum api_err e, const struct wpath *p, const char *fmt,
		     ...) __attribute__((format(printf, 4, 5)));

/* The members of obj among keys[0..nkeys) (nkeys <= 16) into out[] (NULL when
 * absent or null); an unknown or repeated key is an error naming it. */
enum api_err wd_fields(const cJSON *obj, const struct wpath *p, const char *const *keys,
		       size_t nkeys, const cJSON **out, struct api_fail *f);

/* 1 and *out for a finite number, else 0. */
int wd_num(const cJSON *v, double *out);
/* 1 when v is an array of exactly n finite numbers within the float32 range. */
int wd_numbers(const cJSON *v, double *out, int n);
/* Required [x, y, z]. */
enum api_err wd_vec3(const cJSON *v, const struct wpath *p, vec3 *out, struct api_fail *f);
/* [w, x, y, z], not all zero. */
enum api_err wd_quat(const cJSON *v, const struct wpath *p, double q[4], struct api_fail *f);
/* Required string of 1..WORLD_ID_MAX bytes (points into the tree). */
enum api_err wd_id(const cJSON *v, const struct wpath *p, const char **out, struct api_fail *f);
/* Required valid store name. */
enum api_err wd_mesh_name(const cJSON *v, const struct wpath *p, const char **out,
			  struct api_fail *f);
/* Optional integer 0..31 (absent: 0). */
enum api_err wd_layer(const cJSON *v, const struct wpath *p, uint32_t *out, struct api_fail *f);
/* Optional {"position", "rotation", "scale"} or, when allow_matrix,
 * {"matrix"}; absent is the identity. pos_out, scale_out and rot_out (all
 * or none) get the pieces of the first form. */
enum api_err wd_xform(const cJSON *v, const struct wpath *p, int allow_matrix, struct xform *xf,
		      vec3 *pos_out, vec3 *scale_out, double rot_out[4], struct api_fail *f);
size_t wd_array_len(const cJSON *v);	/* members of an array */

#endif
