/* world_fields.h - api/-internal: the values only the /v1/worlds bodies have,
 * read with decode_fields.h's paths and messages (each failing reader fills f
 * with "<path>: <what is wrong>" via fail_at and returns its error). */
#ifndef API_WORLD_FIELDS_H
#define API_WORLD_FIELDS_H

#include <stdint.h>

#include <cJSON.h>

#include "decode_fields.h"
#include "world.h"
#include "xform.h"

/* Required string of 1..WORLD_ID_MAX bytes (points into the tree). */
enum api_err wf_id(const cJSON *v, const struct jpath *p, const char **out, struct api_fail *f);
/* Optional layer, an integer in [0, 31] (absent: 0). */
enum api_err wf_layer(const cJSON *v, const struct jpath *p, uint32_t *out, struct api_fail *f);
/* The required store name in the member "mesh" of obj (obj at p). */
enum api_err wf_mesh(const cJSON *obj, const struct jpath *p, const char **out,
		     struct api_fail *f);
/* Required [x, y, z] (read_vec3) as floats. */
enum api_err wf_vec3f(const cJSON *v, const struct jpath *p, vec3 *out, struct api_fail *f);
/* [w, x, y, z] (read_quat), each within the float32 range. */
enum api_err wf_quat(const cJSON *v, const struct jpath *p, double q[4], struct api_fail *f);
/* Required radius: a finite number >= 0 within the float32 range. */
enum api_err wf_radius(const cJSON *v, const struct jpath *p, float *out, struct api_fail *f);
/* An optional placement {"position", "rotation", "scale"} (absent: the
 * identity), every number within the float32 range; when allow_matrix (an
 * instance) also {"matrix"}, read by decode_xform. h, when not NULL (a mesh
 * hitbox, interpolated piecewise, so never a matrix), gets the pieces. */
enum api_err wf_placement(const cJSON *v, const struct jpath *p, int allow_matrix,
			  struct xform *xf, struct hitbox_in *h, struct api_fail *f);

/* A hitbox's members, in the order of wf_hb_rows (each a FIELD_RAW row
 * whose struct fval is the k-th of an array of HB_NKEYS). */
enum wf_hb_key { HB_ID, HB_SHAPE, HB_CENTER, HB_RADIUS, HB_A, HB_B, HB_HALF, HB_ROT, HB_MESH,
		 HB_XFORM, HB_NKEYS };
extern const struct field wf_hb_rows[HB_NKEYS];
/* The shapes' names in enum hitbox_shape order, NULL-terminated (read_enum). */
extern const char *const wf_shape_names[];
/* The members each shape takes besides id and shape (bits 1u << HB_x), by shape. */
extern const unsigned wf_shape_fields[];
/* Of those, the ones a shape may leave out (a box's rotation, a mesh's transform). */
#define WF_HB_OPTIONAL (1u << HB_ROT | 1u << HB_XFORM)
/* A snapshot's tick: an integer in [0, 2^53 - 1] (1), else 0. */
int wf_tick_ok(double tick);
/* A box's half extents, once floats: each >= 0 (1), else 0. */
int wf_half_extents_ok(vec3 s);

/* A shot's ray (s->ray, s->unit) from its origin and direction
 * (read_vec3's values) and max_distance (> 0; NULL: none, tmax INFINITY),
 * cast as qray_init casts a mesh ray. 0, or -1 when the direction is zero. */
int wf_shot_ray(const double o[3], const double d[3], const double *max_distance,
		struct world_shot *s);
/* The top level's "mode" (NULL: absent, "closest") and "max_hits" (NULL:
 * absent, RAY_MAX_HITS_DEFAULT; only with mode "all"); static_only
 * (/raycast) also allows "any". */
enum api_err wf_mode(const cJSON *mode, const cJSON *max_hits, int static_only,
		     enum hit_mode *out, uint32_t *out_max_hits, struct api_fail *f);

#endif
