/* world_fields.c - the field helpers of the /v1/worlds decoders: paths in
 * messages, strict objects, numbers, vectors, ids, layers, transforms. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "world_decode.h"
#include "world_fields.h"

/* A field path built on the stack while descending: a key or an index. */
static size_t path_fmt(const struct wpath *p, char *out, size_t cap)
{
	size_t n;
	int w;

	if (!p)
		return 0;
	n = path_fmt(p->up, out, cap);
	if (n >= cap)
		return n;
	if (p->key)
		w = snprintf(out + n, cap - n, "%s%.64s", n ? "." : "", p->key);
	else
		w = snprintf(out + n, cap - n, "[%zu]", p->idx);
	return w < 0 ? n : n + (size_t)w;
}

enum api_err wd_fail(struct api_fail *f, enum api_err e, const struct wpath *p,
			 const char *fmt, ...)
{
	char path[200];
	size_t n;
	va_list ap;

	if (path_fmt(p, path, sizeof(path)) == 0)
		snprintf(path, sizeof(path), "body");
	n = (size_t)snprintf(f->msg, sizeof(f->msg), "%s: ", path);
	if (n < sizeof(f->msg)) {
		va_start(ap, fmt);
		vsnprintf(f->msg + n, sizeof(f->msg) - n, fmt, ap);
		va_end(ap);
	}
	f->err = e;
	return e;
}

/* The members of obj among keys[0..nkeys) (nkeys <= 16) into out[] (NULL when
 * absent or null); an unknown or repeated key is an error naming it. */
enum api_err wd_fields(const cJSON *obj, const struct wpath *p, const char *const *keys,
			   size_t nkeys, const cJSON **out, struct api_fail *f)
{
	const cJSON *c;
	unsigned seen = 0;
	size_t k;

	if (!cJSON_IsObject(obj))
		return wd_fail(f, API_INVALID_REQUEST, p, "must be an object");
	for (k = 0; k < nkeys; k++)
		out[k] = NULL;
	for (c = obj->child; c; c = c->next) {
		struct wpath kp = { p, c->string ? c->string : "", 0 };

		for (k = 0; k < nkeys; k++)
			if (c->string && strcmp(c->string, keys[k]) == 0)
				break;
		if (k == nkeys) {
			char list[200];
			size_t n = 0, i;

			list[0] = '\0';
			for (i = 0; i < nkeys && n < sizeof(list); i++)
				n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
						      keys[i]);
			return wd_fail(f, API_INVALID_REQUEST, &kp, "unknown field (expected %s)", list);
		}
		if (seen & (1u << k))
			return wd_fail(f, API_INVALID_REQUEST, &kp, "duplicate key");
		seen |= 1u << k;
		out[k] = cJSON_IsNull(c) ? NULL : c;
	}
	return API_OK;
}

int wd_num(const cJSON *v, double *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return 0;
	*out = v->valuedouble;
	return 1;
}

/* n finite numbers within the float32 range */
int wd_numbers(const cJSON *v, double *out, int n)
{
	const cJSON *c;
	int i = 0;

	if (!cJSON_IsArray(v))
		return 0;
	for (c = v->child; c; c = c->next) {
		if (i == n || !wd_num(c, &out[i]) || fabs(out[i]) > FLT_MAX)
			return 0;
		i++;
	}
	return i == n;
}

enum api_err wd_vec3(const cJSON *v, const struct wpath *p, vec3 *out, struct api_fail *f)
{
	double d[3];

	if (!v)
		return wd_fail(f, API_INVALID_REQUEST, p, "required");
	if (!wd_numbers(v, d, 3))
		return wd_fail(f, API_INVALID_REQUEST, p, "must be 3 finite numbers");
	*out = v3((float)d[0], (float)d[1], (float)d[2]);
	return API_OK;
}

enum api_err wd_quat(const cJSON *v, const struct wpath *p, double q[4], struct api_fail *f)
{
	if (!wd_numbers(v, q, 4))
		return wd_fail(f, API_INVALID_REQUEST, p, "must be 4 finite numbers [w, x, y, z]");
	if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
		return wd_fail(f, API_INVALID_REQUEST, p, "must not be zero");
	return API_OK;
}

enum api_err wd_id(const cJSON *v, const struct wpath *p, const char **out,
			    struct api_fail *f)
{
	size_t n;

	if (!v)
		return wd_fail(f, API_INVALID_REQUEST, p, "required");
	if (!cJSON_IsString(v))
		return wd_fail(f, API_INVALID_REQUEST, p, "must be a string");
	n = strlen(v->valuestring);
	if (n == 0 || n > WORLD_ID_MAX)
		return wd_fail(f, API_INVALID_REQUEST, p, "must be 1 to %d bytes", WORLD_ID_MAX);
	*out = v->valuestring;
	return API_OK;
}

enum api_err wd_mesh_name(const cJSON *v, const struct wpath *p, const char **out,
				   struct api_fail *f)
{
	if (!v)
		return wd_fail(f, API_INVALID_REQUEST, p, "required");
	if (!cJSON_IsString(v) || !store_name_valid(v->valuestring))
		return wd_fail(f, API_INVALID_REQUEST, p,
			    "must be a mesh name ([A-Za-z0-9_.-]{1,64}, not starting with '.')");
	*out = v->valuestring;
	return API_OK;
}

enum api_err wd_layer(const cJSON *v, const struct wpath *p, uint32_t *out,
			       struct api_fail *f)
{
	double d;

	*out = 0;
	if (!v)
		return API_OK;
	if (!wd_num(v, &d) || d != floor(d) || d < 0 || d > 31)
		return wd_fail(f, API_INVALID_REQUEST, p, "must be an integer in [0, 31]");
	*out = (uint32_t)d;
	return API_OK;
}

/* {"position", "rotation", "scale"} each optional, or {"matrix": [16]} when
 * allow_matrix; into the pieces (for hitboxes) and the xform. */
enum api_err wd_xform(const cJSON *v, const struct wpath *p, int allow_matrix,
			       struct xform *xf, vec3 *pos_out, vec3 *scale_out, double rot_out[4],
			       struct api_fail *f)
{
	static const char *const keys[] = { "position", "rotation", "scale", "matrix" };
	const cJSON *fl[4];
	struct wpath pp = { p, "position", 0 }, pr = { p, "rotation", 0 };
	struct wpath ps = { p, "scale", 0 }, pm = { p, "matrix", 0 };
	double pos[3] = { 0, 0, 0 }, q[4] = { 1, 0, 0, 0 }, sc[3] = { 1, 1, 1 }, m[16];
	enum api_err e;

	if (v) {
		e = wd_fields(v, p, keys, 4, fl, f);
		if (e)
			return e;
	} else {
		fl[0] = fl[1] = fl[2] = fl[3] = NULL;
	}
	if (fl[3]) {
		if (!allow_matrix)
			return wd_fail(f, API_INVALID_REQUEST, &pm,
				    "not accepted here: give position, rotation and scale (they are interpolated)");
		if (fl[0] || fl[1] || fl[2])
			return wd_fail(f, API_INVALID_REQUEST, p,
				    "give matrix or position/rotation/scale, not both");
		if (!wd_numbers(fl[3], m, 16))
			return wd_fail(f, API_INVALID_REQUEST, &pm, "must be 16 finite numbers (row-major 4x4)");
		if (m[12] != 0 || m[13] != 0 || m[14] != 0 || m[15] != 1)
			return wd_fail(f, API_INVALID_REQUEST, &pm, "last row must be [0, 0, 0, 1]");
		if (xform_from_matrix(m, xf) != CORE_OK)
			return wd_fail(f, API_INVALID_REQUEST, &pm, "must be invertible");
		return API_OK;
	}
	if (fl[0] && !wd_numbers(fl[0], pos, 3))
		return wd_fail(f, API_INVALID_REQUEST, &pp, "must be 3 finite numbers");
	if (fl[1] && (e = wd_quat(fl[1], &pr, q, f)) != API_OK)
		return e;
	if (fl[2]) {
		if (!wd_numbers(fl[2], sc, 3))
			return wd_fail(f, API_INVALID_REQUEST, &ps, "must be 3 finite numbers");
		if (sc[0] == 0 || sc[1] == 0 || sc[2] == 0)
			return wd_fail(f, API_INVALID_REQUEST, &ps, "components must not be zero");
	}
	if (xform_from_trs(pos, q, sc, xf) != CORE_OK)
		return wd_fail(f, API_INVALID_REQUEST, p, "not a valid placement");
	if (pos_out) {
		*pos_out = v3((float)pos[0], (float)pos[1], (float)pos[2]);
		*scale_out = v3((float)sc[0], (float)sc[1], (float)sc[2]);
		memcpy(rot_out, q, 4 * sizeof(double));
	}
	return API_OK;
}

size_t wd_array_len(const cJSON *v)
{
	size_t n = 0;

	for (v = v->child; v; v = v->next)
		n++;
	return n;
}

