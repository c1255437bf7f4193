/* world_fields.c - the values only the /v1/worlds bodies have (ids, layers,
 * radii, float32 placements), read with the shared helpers of decode_fields.h. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "decode.h"
#include "decode_fields.h"
#include "query.h"
#include "world_decode.h"
#include "world_fields.h"
#include "xform.h"

#define HB_ROW(k, key) { key, FIELD_RAW, 0, (k) * sizeof(struct fval), NULL }
const struct field wf_hb_rows[HB_NKEYS] = {
	HB_ROW(HB_ID, "id"), HB_ROW(HB_SHAPE, "shape"), HB_ROW(HB_CENTER, "center"),
	HB_ROW(HB_RADIUS, "radius"), HB_ROW(HB_A, "a"), HB_ROW(HB_B, "b"),
	HB_ROW(HB_HALF, "half_extents"), HB_ROW(HB_ROT, "rotation"), HB_ROW(HB_MESH, "mesh"),
	HB_ROW(HB_XFORM, "transform"),
};
const char *const wf_shape_names[] = { "sphere", "capsule", "box", "mesh", NULL };
const unsigned wf_shape_fields[] = {
	[HITBOX_SPHERE] = 1u << HB_CENTER | 1u << HB_RADIUS,
	[HITBOX_CAPSULE] = 1u << HB_A | 1u << HB_B | 1u << HB_RADIUS,
	[HITBOX_BOX] = 1u << HB_CENTER | 1u << HB_HALF | 1u << HB_ROT,
	[HITBOX_MESH] = 1u << HB_MESH | 1u << HB_XFORM,
};

int wf_tick_ok(double tick)
{
	/* 2^53 - 1 (JavaScript's MAX_SAFE_INTEGER): every larger integer
	 * sent reads as 2^53 or more (2^53 + 1 rounds to 2^53), so none is
	 * taken as another number than the one sent */
	return tick == floor(tick) && tick >= 0 && tick <= 9007199254740991.0;
}

int wf_half_extents_ok(vec3 s)
{
	return !(s.x < 0 || s.y < 0 || s.z < 0);
}

/* Required string of 1..WORLD_ID_MAX bytes (points into the tree). */
enum api_err wf_id(const cJSON *v, const struct jpath *p, const char **out, struct api_fail *f)
{
	size_t n;

	if (!v)
		return fail_at(f, API_INVALID_REQUEST, p, "required");
	if (!cJSON_IsString(v))
		return fail_at(f, API_INVALID_REQUEST, p, "must be a string");
	n = strlen(v->valuestring);
	if (n == 0 || n > WORLD_ID_MAX)
		return fail_at(f, API_INVALID_REQUEST, p, "must be 1 to %d bytes", WORLD_ID_MAX);
	*out = v->valuestring;
	return API_OK;
}

/* Optional layer 0..31 (absent: 0). */
enum api_err wf_layer(const cJSON *v, const struct jpath *p, uint32_t *out, struct api_fail *f)
{
	size_t l = 0;
	enum api_err e;

	*out = 0;
	if (v && (e = read_uint(v, p, 0, 31, &l, f)))
		return e;
	*out = (uint32_t)l;
	return API_OK;
}

/* The required store name in obj's member "mesh" (obj at p). */
enum api_err wf_mesh(const cJSON *obj, const struct jpath *p, const char **out, struct api_fail *f)
{
	static const struct field mesh_row[] = { { "mesh", FIELD_NAME, 1, 0, NULL } };
	struct fval m;
	enum api_err e;

	if ((e = fields_read(obj, p, mesh_row, 1, &m, f)))
		return e;
	*out = m.s;
	return API_OK;
}

/* read_numbers, each within the float32 range (the worlds keep floats). */
static int wf_numbers(const cJSON *v, double *out, int n)
{
	int k;

	if (!read_numbers(v, out, n))
		return 0;
	for (k = 0; k < n; k++)
		if (!in_float_range(out[k]))
			return 0;
	return 1;
}

/* read_quat within the float32 range. */
enum api_err wf_quat(const cJSON *v, const struct jpath *p, double q[4], struct api_fail *f)
{
	if (!wf_numbers(v, q, 4))
		return fail_at(f, API_INVALID_REQUEST, p, "must be 4 finite numbers [w, x, y, z]");
	return read_quat(v, p, q, f);
}

/* read_vec3 into a float vector. */
enum api_err wf_vec3f(const cJSON *v, const struct jpath *p, vec3 *out, struct api_fail *f)
{
	double d[3];
	enum api_err e;

	if ((e = read_vec3(v, p, d, f)))
		return e;
	*out = vec3_from(d);
	return API_OK;
}

struct trs_fields {
	struct fval position, rotation, scale, matrix;
};
static const struct field trs_rows[] = {
	{ "position", FIELD_RAW, 0, offsetof(struct trs_fields, position), NULL },
	{ "rotation", FIELD_RAW, 0, offsetof(struct trs_fields, rotation), NULL },
	{ "scale", FIELD_RAW, 0, offsetof(struct trs_fields, scale), NULL },
	{ "matrix", FIELD_RAW, 0, offsetof(struct trs_fields, matrix), NULL },
};

/* An optional placement {"position", "rotation", "scale"} (absent: the
 * identity), every number within the float32 range; when allow_matrix (an
 * instance), {"matrix"} as decode_xform reads it. h (a mesh hitbox, whose
 * placement is interpolated piecewise, so no matrix) gets the pieces. */
enum api_err wf_placement(const cJSON *v, const struct jpath *p, int allow_matrix,
			  struct xform *xf, struct hitbox_in *h, struct api_fail *f)
{
	struct jpath pp = { p, "position", 0 }, pr = { p, "rotation", 0 };
	struct jpath ps = { p, "scale", 0 }, pm = { p, "matrix", 0 };
	double pos[3] = { 0, 0, 0 }, q[4] = { 1, 0, 0, 0 }, sc[3] = { 1, 1, 1 }, m[16];
	struct trs_fields x;
	enum api_err e;

	memset(&x, 0, sizeof(x));
	if (v && (e = fields_decode(v, p, trs_rows, FIELD_COUNT(trs_rows), &x, f)))
		return e;
	if (x.matrix.given) {
		if (!allow_matrix)
			return fail_at(f, API_INVALID_REQUEST, &pm,
				       "not accepted here: give position, rotation and scale (they are interpolated)");
		if (x.position.given || x.rotation.given || x.scale.given ||
		    wf_numbers(x.matrix.raw, m, 16))
			return decode_xform(v, p, xf, f);
		return fail_at(f, API_INVALID_REQUEST, &pm, "must be 16 finite numbers (row-major 4x4)");
	}
	if (x.position.given && !wf_numbers(x.position.raw, pos, 3))
		return fail_at(f, API_INVALID_REQUEST, &pp, "must be 3 finite numbers");
	if (x.rotation.given && (e = wf_quat(x.rotation.raw, &pr, q, f)))
		return e;
	if (x.scale.given) {
		if (!wf_numbers(x.scale.raw, sc, 3))
			return fail_at(f, API_INVALID_REQUEST, &ps, "must be 3 finite numbers");
		if (sc[0] == 0 || sc[1] == 0 || sc[2] == 0)
			return fail_at(f, API_INVALID_REQUEST, &ps, "components must not be zero");
		/* a mesh hitbox keeps its scale as floats (snapshot.c) */
		if (h && ((float)sc[0] == 0 || (float)sc[1] == 0 || (float)sc[2] == 0))
			return fail_at(f, API_INVALID_REQUEST, &ps,
				       "components must not be zero (nor round to zero as float32)");
	}
	if (xform_from_trs(pos, q, sc, xf) != CORE_OK)
		return fail_at(f, API_INVALID_REQUEST, p, "not a valid placement");
	if (h) {
		h->a = vec3_from(pos);
		h->size = vec3_from(sc);
		memcpy(h->rot, q, sizeof(q));
	}
	return API_OK;
}

enum api_err wf_radius(const cJSON *v, const struct jpath *p, float *out, struct api_fail *f)
{
	double d;

	if (!v)
		return fail_at(f, API_INVALID_REQUEST, p, "required");
	if (!num_ok(v, &d) || d < 0 || d > FLT_MAX)
		return fail_at(f, API_INVALID_REQUEST, p, "must be a finite number >= 0");
	*out = (float)d;
	return API_OK;
}

/* A shot's ray: origin and direction as read_vec3 gives them, cast as
 * qray_init casts a mesh ray (a float direction as given, any other
 * normalised); max_distance (> 0) by tmax_from. */
int wf_shot_ray(const double o[3], const double d[3], const double *max_distance,
		struct world_shot *s)
{
	double m = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
	struct qray q;

	if (!(m > 0) || !isfinite(m))	/* zero, or not finite */
		return -1;
	qray_init(&q, vec3_from(o), d, max_distance ? tmax_from(*max_distance) : INFINITY);
	s->ray = q.ray;
	s->unit = q.unit;
	return 0;
}

/* The top level's "mode" and "max_hits" (each NULL when absent). */
enum api_err wf_mode(const cJSON *mode, const cJSON *max_hits, int static_only,
		     enum hit_mode *out, uint32_t *out_max_hits, struct api_fail *f)
{
	static const char *const hitscan_modes[] = { "closest", "all", NULL };
	static const char *const raycast_modes[] = { "closest", "any", "all", NULL };
	static const enum hit_mode hitscan_as[] = { HIT_CLOSEST, HIT_ALL };
	static const enum hit_mode raycast_as[] = { HIT_CLOSEST, HIT_ANY, HIT_ALL };
	struct jpath pm = { NULL, "mode", 0 }, ph = { NULL, "max_hits", 0 };
	size_t mh = RAY_MAX_HITS_DEFAULT;
	enum api_err e;
	int m = 0;

	if (mode && (e = read_enum(mode, &pm, static_only ? raycast_modes : hitscan_modes, &m, f)))
		return e;
	*out = static_only ? raycast_as[m] : hitscan_as[m];
	if (max_hits && *out != HIT_ALL)	/* as on the mesh queries */
		return fail_at(f, API_INVALID_REQUEST, &ph, "only with mode \"all\"");
	if (max_hits && (e = read_uint(max_hits, &ph, 1, RAY_MAX_HITS_CAP, &mh, f)))
		return e;
	*out_max_hits = (uint32_t)mh;
	return API_OK;
}
