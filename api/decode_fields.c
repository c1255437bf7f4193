/* decode_fields.c - field paths, table-driven member checks and the value
 * readers shared by every JSON decoder. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "decode_fields.h"
#include "json_path.h"
#include "store.h"

enum api_err api_json_parse_in(const char *body, size_t len, struct json_arena *a, cJSON **root,
			       struct api_fail *f)
{
	const char *why;
	enum api_err e;
	size_t off;

	*root = NULL;
	if (!body || len == 0)
		return api_fail_set(f, API_INVALID_JSON, "body: empty, expected a JSON object");
	e = json_parse(body, len, a, root, &off, &why);
	if (e == API_INTERNAL)
		return api_fail_set(f, API_INTERNAL, "out of memory parsing the body");
	if (e)
		return json_fail_at_byte(f, e, body, len, off, why);
	return API_OK;
}

static size_t path_fmt(const struct jpath *p, char *out, size_t cap)
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

enum api_err fail_at(struct api_fail *f, enum api_err e, const struct jpath *p,
		     const char *fmt, ...)
{
	char path[160];
	size_t n;
	va_list ap;

	n = path_fmt(p, path, sizeof(path));
	if (n == 0)
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

int num_ok(const cJSON *v, double *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return 0;
	*out = v->valuedouble;
	return 1;
}

int read_numbers(const cJSON *v, double *out, int n)
{
	const cJSON *c;
	int k = 0;

	if (!cJSON_IsArray(v))
		return 0;
	for (c = v->child; c; c = c->next) {
		if (k == n || !num_ok(c, &out[k]))
			return 0;
		k++;
	}
	return k == n;
}

int in_float_range(double d)
{
	return fabs(d) <= FLT_MAX;
}

enum api_err read_vec3(const cJSON *v, const struct jpath *p, double out[3], struct api_fail *f)
{
	if (!v)
		return fail_at(f, API_INVALID_REQUEST, p, "required");
	if (!read_numbers(v, out, 3))
		return fail_at(f, API_INVALID_REQUEST, p, "must be 3 finite numbers");
	if (!in_float_range(out[0]) || !in_float_range(out[1]) || !in_float_range(out[2]))
		return fail_at(f, API_INVALID_REQUEST, p, "must be 3 finite numbers within the float32 range");
	return API_OK;
}

vec3 vec3_from(const double d[3])
{
	return v3((float)d[0], (float)d[1], (float)d[2]);
}

enum api_err read_quat(const cJSON *v, const struct jpath *p, double q[4], struct api_fail *f)
{
	if (!read_numbers(v, q, 4))
		return fail_at(f, API_INVALID_REQUEST, p, "must be 4 finite numbers [w, x, y, z]");
	if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
		return fail_at(f, API_INVALID_REQUEST, p, "must not be zero");
	return API_OK;
}

enum api_err read_uint(const cJSON *v, const struct jpath *p, double lo, double hi,
		       size_t *out, struct api_fail *f)
{
	double d;

	if (!num_ok(v, &d) || d != floor(d) || d < lo || d > hi)
		return fail_at(f, API_INVALID_REQUEST, p, "must be an integer in [%.0f, %.0f]", lo, hi);
	*out = (size_t)d;
	return API_OK;
}

enum api_err read_array(const cJSON *v, const struct jpath *p, const char *what, size_t limit,
			const char *unit, size_t *n, struct api_fail *f)
{
	if (!cJSON_IsArray(v))
		return fail_at(f, API_INVALID_REQUEST, p, "must be %s", what);
	*n = (size_t)cJSON_GetArraySize(v);
	if (limit && *n > limit)
		return fail_at(f, API_PAYLOAD_TOO_LARGE, p, "%zu %s, the limit is %zu", *n, unit, limit);
	return API_OK;
}

enum api_err read_enum(const cJSON *v, const struct jpath *p, const char *const *names,
			      int *out, struct api_fail *f)
{
	char list[160];
	size_t n = 0;
	int k;

	for (k = 0; names[k]; k++)
		if (cJSON_IsString(v) && strcmp(v->valuestring, names[k]) == 0) {
			*out = k;
			return API_OK;
		}
	list[0] = '\0';
	for (k = 0; names[k] && n < sizeof(list); k++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s\"%s\"",
				      k == 0 ? "" : names[k + 1] ? ", " : " or ", names[k]);
	return fail_at(f, API_INVALID_REQUEST, p, "must be %s", list);
}

/* Row r's value v (non-NULL) into *out. */
static enum api_err field_read(const struct field *r, const cJSON *v, const struct jpath *p,
			       struct fval *out, struct api_fail *f)
{
	enum api_err e;

	switch (r->kind) {
	case FIELD_RAW:
		return API_OK;
	case FIELD_VEC3:
		return read_vec3(v, p, out->v, f);
	case FIELD_DIR:
		e = read_vec3(v, p, out->v, f);
		if (!e && out->v[0] == 0 && out->v[1] == 0 && out->v[2] == 0)
			return fail_at(f, API_INVALID_REQUEST, p, "must not be zero");
		return e;
	case FIELD_POSITIVE:
		if (!num_ok(v, &out->v[0]) || !(out->v[0] > 0))
			return fail_at(f, API_INVALID_REQUEST, p, "must be a number > 0");
		return API_OK;
	case FIELD_ENUM:
		return read_enum(v, p, r->names, &out->e, f);
	case FIELD_STRING:
		if (!cJSON_IsString(v))
			return fail_at(f, API_INVALID_REQUEST, p, "must be a string");
		out->s = v->valuestring;
		return API_OK;
	case FIELD_NAME:
		if (!cJSON_IsString(v) || !store_name_valid(v->valuestring))
			return fail_at(f, API_INVALID_REQUEST, p,
				       "must be a mesh name ([A-Za-z0-9_.-]{1,64}, not starting with '.')");
		out->s = v->valuestring;
		return API_OK;
	}
	return fail_at(f, API_INTERNAL, p, "unknown field kind");
}

#define FIELD_ROWS_MAX 64

/* The row of key (n when none): the first character first, as most keys
 * differ there, then the whole key. */
static size_t row_of(const struct field *rows, size_t n, const char *key)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (rows[k].key[0] == key[0] && strcmp(rows[k].key, key) == 0)
			break;
	return k;
}

/* Read the rows in table order from found[] (each row's first member, or
 * NULL when absent). */
static enum api_err read_found(const cJSON *const *found, const struct jpath *p,
			       const struct field *rows, size_t n, void *out, struct api_fail *f)
{
	size_t k;

	for (k = 0; k < n; k++) {
		struct fval *fv = (struct fval *)((char *)out + rows[k].slot);
		struct jpath kp = { p, rows[k].key, 0 };
		const cJSON *v = found[k];
		enum api_err e;

		memset(fv, 0, sizeof(*fv));
		if (!v || cJSON_IsNull(v)) {
			if (rows[k].required)
				return fail_at(f, API_INVALID_REQUEST, &kp, "required");
			continue;
		}
		fv->given = 1;
		fv->raw = v;
		e = field_read(&rows[k], v, &kp, fv, f);
		if (e)
			return e;
	}
	return API_OK;
}

enum api_err fields_read(const cJSON *obj, const struct jpath *p, const struct field *rows,
			 size_t n, void *out, struct api_fail *f)
{
	const cJSON *found[FIELD_ROWS_MAX] = { 0 };
	const cJSON *c;
	size_t k;

	if (n > FIELD_ROWS_MAX)
		return fail_at(f, API_INTERNAL, p, "field table too long");
	/* one walk over the members; the first of a key wins, as with
	 * cJSON_GetObjectItemCaseSensitive */
	for (c = obj ? obj->child : NULL; c; c = c->next)
		if (c->string && (k = row_of(rows, n, c->string)) < n && !found[k])
			found[k] = c;
	return read_found(found, p, rows, n, out, f);
}

enum api_err fields_decode(const cJSON *obj, const struct jpath *p, const struct field *rows,
			   size_t n, void *out, struct api_fail *f)
{
	const cJSON *found[FIELD_ROWS_MAX] = { 0 };
	const cJSON *c;
	size_t k;

	if (!cJSON_IsObject(obj))
		return fail_at(f, API_INVALID_REQUEST, p, "must be an object");
	if (n > FIELD_ROWS_MAX)
		return fail_at(f, API_INTERNAL, p, "field table too long");
	for (c = obj->child; c; c = c->next) {
		struct jpath kp = { p, c->string ? c->string : "", 0 };

		k = c->string ? row_of(rows, n, c->string) : n;
		if (k == n) {
			char list[160];
			size_t len = 0, i;

			list[0] = '\0';
			for (i = 0; i < n && len < sizeof(list); i++)
				len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
							i ? ", " : "", rows[i].key);
			return fail_at(f, API_INVALID_REQUEST, &kp, "unknown field (expected %s)", list);
		}
		if (found[k])
			return fail_at(f, API_INVALID_REQUEST, &kp, "duplicate key");
		found[k] = c;
	}
	return read_found(found, p, rows, n, out, f);
}
