/* decode_mesh.c - mesh uploads to plain arrays: the JSON form here, OBJ and
 * STL through obj.c / stl.c, all three failing the same way (struct api_fail). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "decode_fields.h"
#include "handlers.h"
#include "json_mesh.h"


/*
 * The length of a vertices/triangles array in groups of 3 and whether it is
 * nested ([[..],..]) or flat, judged by its first element.
 */
static enum api_err mesh_array_shape(const cJSON *v, const struct jpath *p, size_t *groups,
				     int *nested, struct api_fail *f)
{
	size_t n;

	if (!v)
		return fail_at(f, API_INVALID_REQUEST, p, "required");
	if (!cJSON_IsArray(v))
		return fail_at(f, API_INVALID_REQUEST, p, "must be an array");
	n = (size_t)cJSON_GetArraySize(v);
	*nested = v->child && cJSON_IsArray(v->child);
	if (!*nested && n % 3)
		return fail_at(f, API_INVALID_REQUEST, p,
			       "flat form needs a multiple of 3 numbers, got %zu", n);
	*groups = *nested ? n : n / 3;
	return API_OK;
}

/* The numbers of a vertices/triangles array, 3 per group, through put(). */
static enum api_err mesh_read_vertices(const cJSON *v, const struct jpath *p, int nested,
				       float *xyz, struct api_fail *f)
{
	const cJSON *c, *e;
	size_t k = 0;
	double d[3];

	for (c = v->child; c; c = c->next, k++) {
		struct jpath pk = { p, NULL, nested ? k : k / 3 };

		if (nested) {
			if (!read_numbers(c, d, 3)) {
				if (!cJSON_IsArray(c))
					return fail_at(f, API_INVALID_REQUEST, &pk,
						       "must be [x, y, z] like the first vertex (do not mix forms)");
				/* the only non-finite number JSON yields is an overflow */
				for (e = c->child; e; e = e->next)
					if (cJSON_IsNumber(e) && !isfinite(e->valuedouble) &&
					    cJSON_GetArraySize(c) == 3)
						return fail_at(f, API_INVALID_MESH, &pk, "non-finite coordinate");
				return fail_at(f, API_INVALID_REQUEST, &pk, "must be 3 finite numbers");
			}
			if (!in_float_range(d[0]) || !in_float_range(d[1]) || !in_float_range(d[2]))
				return fail_at(f, API_INVALID_MESH, &pk, "coordinate outside the float32 range");
			xyz[3 * k] = (float)d[0];
			xyz[3 * k + 1] = (float)d[1];
			xyz[3 * k + 2] = (float)d[2];
			continue;
		}
		if (!cJSON_IsNumber(c)) {
			struct jpath pe = { p, NULL, k };

			return fail_at(f, API_INVALID_REQUEST, &pe,
				       "must be a number like the first element (do not mix forms)");
		}
		if (!isfinite(c->valuedouble) || !in_float_range(c->valuedouble))
			return fail_at(f, API_INVALID_MESH, &pk, "non-finite or outside the float32 range");
		xyz[k] = (float)c->valuedouble;
	}
	return API_OK;
}

static enum api_err mesh_read_index(const cJSON *c, const struct jpath *p, size_t nvert,
				    uint32_t *out, struct api_fail *f)
{
	double d;

	if (!num_ok(c, &d) || d != floor(d))
		return fail_at(f, API_INVALID_REQUEST, p, "indices must be integers");
	if (d < 0 || d >= (double)nvert)
		return fail_at(f, API_INVALID_MESH, p, "index %.0f out of range (%zu vertices)", d, nvert);
	*out = (uint32_t)d;
	return API_OK;
}

static enum api_err mesh_read_triangles(const cJSON *v, const struct jpath *p, int nested,
					size_t nvert, uint32_t *idx, struct api_fail *f)
{
	const cJSON *c, *e;
	size_t k = 0, j;
	enum api_err err;

	for (c = v->child; c; c = c->next, k++) {
		struct jpath pk = { p, NULL, nested ? k : k / 3 };

		if (!nested) {
			if (cJSON_IsArray(c))
				return fail_at(f, API_INVALID_REQUEST, &pk,
					       "must be a number like the first element (do not mix forms)");
			err = mesh_read_index(c, &pk, nvert, &idx[k], f);
			if (err)
				return err;
			continue;
		}
		if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 3)
			return fail_at(f, API_INVALID_REQUEST, &pk, "must be 3 integer indices [a, b, c]");
		for (e = c->child, j = 0; e; e = e->next, j++) {
			err = mesh_read_index(e, &pk, nvert, &idx[3 * k + j], f);
			if (err)
				return err;
		}
	}
	return API_OK;
}

struct mesh_fields {
	struct fval vertices, triangles;
};
static const struct field mesh_rows[] = {
	{ "vertices", FIELD_RAW, 0, offsetof(struct mesh_fields, vertices), NULL },
	{ "triangles", FIELD_RAW, 0, offsetof(struct mesh_fields, triangles), NULL },
};

enum api_err decode_mesh_json(const cJSON *root, size_t max_tris, struct mesh_data *out,
			      struct api_fail *f)
{
	struct jpath pv = { NULL, "vertices", 0 }, pt = { NULL, "triangles", 0 };
	struct mesh_fields mf;
	size_t nvert, ntri;
	int vnested, tnested;
	enum api_err e;

	memset(out, 0, sizeof(*out));
	e = fields_decode(root, NULL, mesh_rows, FIELD_COUNT(mesh_rows), &mf, f);
	if (e)
		return e;
	e = mesh_array_shape(mf.vertices.raw, &pv, &nvert, &vnested, f);
	if (e)
		return e;
	e = mesh_array_shape(mf.triangles.raw, &pt, &ntri, &tnested, f);
	if (e)
		return e;
	if (nvert == 0)
		return fail_at(f, API_INVALID_MESH, &pv, "no vertices");
	if (ntri == 0)
		return fail_at(f, API_INVALID_MESH, &pt, "no triangles");
	if (ntri > max_tris)
		return fail_at(f, API_PAYLOAD_TOO_LARGE, &pt, "%zu triangles, the limit is %zu", ntri, max_tris);
	if (nvert > UINT32_MAX || nvert > SIZE_MAX / (3 * sizeof(*out->xyz)) ||
	    ntri > SIZE_MAX / (3 * sizeof(*out->idx)))
		return fail_at(f, API_PAYLOAD_TOO_LARGE, &pv, "too many vertices");
	out->xyz = malloc(3 * nvert * sizeof(*out->xyz));
	out->idx = malloc(3 * ntri * sizeof(*out->idx));
	if (!out->xyz || !out->idx) {
		e = api_fail_set(f, API_INTERNAL, "out of memory");
		goto out_release;
	}
	e = mesh_read_vertices(mf.vertices.raw, &pv, vnested, out->xyz, f);
	if (e)
		goto out_release;
	e = mesh_read_triangles(mf.triangles.raw, &pt, tnested, nvert, out->idx, f);
	if (e)
		goto out_release;
	out->nvert = nvert;
	out->ntri = ntri;
	return API_OK;
out_release:
	mesh_data_release(out);
	return e;
}

static const char *const json_types[] = { "application/json", NULL };
static const char *const obj_types[] = { "model/obj", NULL };
/* application/sla and model/x.stl-* are STL's older registrations */
static const char *const stl_types[] = {
	"model/stl", "application/sla", "model/x.stl-binary", "model/x.stl-ascii", NULL,
};

enum api_err decode_mesh_upload(const char *content_type, const char *body, size_t len,
				size_t max_tris, struct mesh_data *out, struct api_fail *f)
{
	enum api_err e;

	memset(out, 0, sizeof(*out));
	if (api_media_type_is(content_type, json_types))
		return json_mesh_decode(body, len, max_tris, out, f);	/* streamed, no tree */
	if (api_media_type_is(content_type, obj_types))
		e = obj_parse(body ? body : "", len, max_tris, out, f);
	else if (api_media_type_is(content_type, stl_types))
		e = stl_parse(body ? body : "", len, max_tris, out, f);
	else
		return api_fail_set(f, API_UNSUPPORTED_MEDIA_TYPE,
			    "Content-Type %.60s is not accepted: send application/json, model/obj or model/stl",
			    content_type ? content_type : "(none)");
	if (e == API_INTERNAL)
		api_fail_set(f, e, "out of memory");
	return e;
}
