/* decode.c - strict JSON parsing and request decoding with field-path errors. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "store.h"

enum api_err api_fail_set(struct api_fail *f, enum api_err e, const char *fmt, ...)
{
	va_list ap;

	f->err = e;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	return e;
}

/* ---- parsing: api/json.c, with the messages the api answers */

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
		return api_fail_set(f, e, "body: %s at byte %zu", why, off);
	return API_OK;
}

/* ---- paths and field access */

/* A field path, built on the stack while descending: a key or an index. */
struct jpath {
	const struct jpath *up;
	const char *key;	/* NULL: idx names an array element */
	size_t idx;
};

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

/* f->msg = "<path>: <text>" ("body" when p is the root). */
static enum api_err fail_at(struct api_fail *f, enum api_err e, const struct jpath *p,
			    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum api_err fail_at(struct api_fail *f, enum api_err e, const struct jpath *p,
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

/*
 * The members of obj among keys[0..nkeys) into out[] (NULL when absent or
 * null). An unknown key or a key given twice is an error naming it; keys are
 * case-sensitive. nkeys <= 16.
 */
static enum api_err get_fields(const cJSON *obj, const struct jpath *p, const char *const *keys,
			       size_t nkeys, const cJSON **out, struct api_fail *f)
{
	const cJSON *c;
	unsigned seen = 0;
	size_t k;

	if (!cJSON_IsObject(obj))
		return fail_at(f, API_INVALID_REQUEST, p, "must be an object");
	for (k = 0; k < nkeys; k++)
		out[k] = NULL;
	for (c = obj->child; c; c = c->next) {
		struct jpath kp = { p, c->string ? c->string : "", 0 };

		for (k = 0; k < nkeys; k++)
			if (c->string && strcmp(c->string, keys[k]) == 0)
				break;
		if (k == nkeys) {
			char list[160];
			size_t n = 0, i;

			list[0] = '\0';
			for (i = 0; i < nkeys && n < sizeof(list); i++)
				n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", keys[i]);
			return fail_at(f, API_INVALID_REQUEST, &kp, "unknown field (expected %s)", list);
		}
		if (seen & (1u << k))
			return fail_at(f, API_INVALID_REQUEST, &kp, "duplicate key");
		seen |= 1u << k;
		out[k] = cJSON_IsNull(c) ? NULL : c;
	}
	return API_OK;
}

static int num_ok(const cJSON *v, double *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return 0;
	*out = v->valuedouble;
	return 1;
}

/* An array of exactly n finite numbers into out. */
static int read_numbers(const cJSON *v, double *out, int n)
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

static int in_float_range(double d)
{
	return fabs(d) <= FLT_MAX;
}

/* [x, y, z]: three finite numbers within the float32 range. */
static enum api_err read_vec3(const cJSON *v, const struct jpath *p, double out[3], struct api_fail *f)
{
	if (!v)
		return fail_at(f, API_INVALID_REQUEST, p, "required");
	if (!read_numbers(v, out, 3))
		return fail_at(f, API_INVALID_REQUEST, p, "must be 3 finite numbers");
	if (!in_float_range(out[0]) || !in_float_range(out[1]) || !in_float_range(out[2]))
		return fail_at(f, API_INVALID_REQUEST, p, "must be 3 finite numbers within the float32 range");
	return API_OK;
}

static vec3 vec3_from(const double d[3])
{
	return v3((float)d[0], (float)d[1], (float)d[2]);
}

/* [w, x, y, z], finite and not all zero. */
static enum api_err read_quat(const cJSON *v, const struct jpath *p, double q[4], struct api_fail *f)
{
	if (!read_numbers(v, q, 4))
		return fail_at(f, API_INVALID_REQUEST, p, "must be 4 finite numbers [w, x, y, z]");
	if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
		return fail_at(f, API_INVALID_REQUEST, p, "must not be zero");
	return API_OK;
}

/* An integer in [lo, hi] (read from valuedouble: valueint clamps). */
static enum api_err read_uint(const cJSON *v, const struct jpath *p, double lo, double hi,
			      size_t *out, struct api_fail *f)
{
	double d;

	if (!num_ok(v, &d) || d != floor(d) || d < lo || d > hi)
		return fail_at(f, API_INVALID_REQUEST, p, "must be an integer in [%.0f, %.0f]", lo, hi);
	*out = (size_t)d;
	return API_OK;
}

/* One of names[0..n) into *out. */
static enum api_err read_enum(const cJSON *v, const struct jpath *p, const char *const *names,
			      int n, int *out, struct api_fail *f)
{
	int k;

	if (cJSON_IsString(v))
		for (k = 0; k < n; k++)
			if (strcmp(v->valuestring, names[k]) == 0) {
				*out = k;
				return API_OK;
			}
	if (n == 2)
		return fail_at(f, API_INVALID_REQUEST, p, "must be \"%s\" or \"%s\"", names[0], names[1]);
	return fail_at(f, API_INVALID_REQUEST, p, "must be \"%s\", \"%s\" or \"%s\"",
		       names[0], names[1], names[2]);
}

/* max_distance and segment lengths: the float at or above d, so that a hit
 * exactly at the given distance still counts. */
static float tmax_from(double d)
{
	float t;

	if (d > FLT_MAX)
		return INFINITY;
	t = (float)d;
	if ((double)t < d)
		t = nextafterf(t, INFINITY);
	return t;
}

/* Unit direction of d (non-zero, finite) into r. */
static void set_direction(struct qray *r, const double d[3], double len)
{
	int k;

	for (k = 0; k < 3; k++)
		r->dir[k] = d[k] / len;
	r->ray.dir = v3((float)r->dir[0], (float)r->dir[1], (float)r->dir[2]);
}

/* {"origin", "direction", "max_distance"} given as three members (any may be
 * NULL); p is the object holding them. */
static enum api_err decode_ray(const cJSON *origin, const cJSON *direction, const cJSON *maxd,
			       const struct jpath *p, struct qray *r, struct api_fail *f)
{
	struct jpath po = { p, "origin", 0 }, pd = { p, "direction", 0 }, pm = { p, "max_distance", 0 };
	double o[3], d[3], len, m;
	enum api_err e;

	e = read_vec3(origin, &po, o, f);
	if (e)
		return e;
	e = read_vec3(direction, &pd, d, f);
	if (e)
		return e;
	/* scaled by the largest component first: 1e-300 squared would vanish */
	m = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
	if (m == 0)
		return fail_at(f, API_INVALID_REQUEST, &pd, "must not be zero");
	r->ray.origin = vec3_from(o);
	{
		/* a direction that is already a unit float32 vector (to float
		 * precision) is used as sent, so HTTP answers equal the core's
		 * for the same float ray; any other is normalised in double */
		float fd[3] = { (float)d[0], (float)d[1], (float)d[2] };
		double l2 = (double)fd[0] * fd[0] + (double)fd[1] * fd[1] + (double)fd[2] * fd[2];

		if (fabs(l2 - 1) <= 0x1p-22 && fd[0] == d[0] && fd[1] == d[1] && fd[2] == d[2]) {
			r->ray.dir = v3(fd[0], fd[1], fd[2]);
			for (int k = 0; k < 3; k++)
				r->dir[k] = fd[k];
			goto direction_done;
		}
	}
	d[0] /= m;
	d[1] /= m;
	d[2] /= m;
	len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	set_direction(r, d, len);
direction_done:
	r->length = 0;
	r->ray.tmax = INFINITY;
	if (maxd) {
		if (!num_ok(maxd, &m) || !(m > 0))
			return fail_at(f, API_INVALID_REQUEST, &pm, "must be a number > 0");
		r->ray.tmax = tmax_from(m);
	}
	return API_OK;
}

/* {"start", "end"}: a closed segment as a ray with tmax = its length. */
static enum api_err decode_segment(const cJSON *start, const cJSON *end, const struct jpath *p,
				   struct qray *r, struct api_fail *f)
{
	struct jpath ps = { p, "start", 0 }, pe = { p, "end", 0 };
	double s[3], t[3], d[3], len;
	vec3 sf, ef;
	enum api_err e;

	e = read_vec3(start, &ps, s, f);
	if (e)
		return e;
	e = read_vec3(end, &pe, t, f);
	if (e)
		return e;
	/* measured between the float points core sees; float range keeps the
	 * squares inside double's range */
	sf = vec3_from(s);
	ef = vec3_from(t);
	d[0] = (double)ef.x - sf.x;
	d[1] = (double)ef.y - sf.y;
	d[2] = (double)ef.z - sf.z;
	len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	if (len == 0)
		return fail_at(f, API_INVALID_REQUEST, &pe, "must differ from start (zero-length segment)");
	r->ray.origin = sf;
	set_direction(r, d, len);
	r->length = len;
	r->ray.tmax = tmax_from(len);
	return API_OK;
}

/* {"position", "rotation", "scale"} (each optional) or {"matrix": [16]}. */
static enum api_err decode_xform(const cJSON *v, const struct jpath *p, struct xform *xf,
				 struct api_fail *f)
{
	static const char *const keys[] = { "position", "rotation", "scale", "matrix" };
	const cJSON *fl[4];
	struct jpath pp = { p, "position", 0 }, pr = { p, "rotation", 0 };
	struct jpath ps = { p, "scale", 0 }, pm = { p, "matrix", 0 };
	double pos[3] = { 0, 0, 0 }, q[4] = { 1, 0, 0, 0 }, sc[3] = { 1, 1, 1 }, m[16];
	enum api_err e;

	e = get_fields(v, p, keys, 4, fl, f);
	if (e)
		return e;
	if (fl[3]) {
		if (fl[0] || fl[1] || fl[2])
			return fail_at(f, API_INVALID_REQUEST, p,
				       "give matrix or position/rotation/scale, not both");
		if (!read_numbers(fl[3], m, 16))
			return fail_at(f, API_INVALID_REQUEST, &pm,
				       "must be 16 finite numbers (row-major 4x4)");
		if (m[12] != 0 || m[13] != 0 || m[14] != 0 || m[15] != 1)
			return fail_at(f, API_INVALID_REQUEST, &pm, "last row must be [0, 0, 0, 1]");
		if (xform_from_matrix(m, xf) != CORE_OK)
			return fail_at(f, API_INVALID_REQUEST, &pm, "must be invertible");
		return API_OK;
	}
	if (fl[0] && !read_numbers(fl[0], pos, 3))
		return fail_at(f, API_INVALID_REQUEST, &pp, "must be 3 finite numbers");
	if (fl[1]) {
		e = read_quat(fl[1], &pr, q, f);
		if (e)
			return e;
	}
	if (fl[2]) {
		if (!read_numbers(fl[2], sc, 3))
			return fail_at(f, API_INVALID_REQUEST, &ps, "must be 3 finite numbers");
		if (sc[0] == 0 || sc[1] == 0 || sc[2] == 0)
			return fail_at(f, API_INVALID_REQUEST, &ps, "components must not be zero");
	}
	if (xform_from_trs(pos, q, sc, xf) != CORE_OK)
		return fail_at(f, API_INVALID_REQUEST, p, "not a valid placement");
	return API_OK;
}

/* {"id", "center", "half_extents", "rotation" | "axes"}. *id points into v. */
static enum api_err decode_box(const cJSON *v, const struct jpath *p, struct obb *box,
			       const char **id, struct api_fail *f)
{
	static const char *const keys[] = { "id", "center", "half_extents", "rotation", "axes" };
	const cJSON *fl[5], *c;
	struct jpath pi = { p, "id", 0 }, pc = { p, "center", 0 }, ph = { p, "half_extents", 0 };
	struct jpath pr = { p, "rotation", 0 }, pa = { p, "axes", 0 };
	double center[3], half[3], q[4] = { 1, 0, 0, 0 };
	enum api_err e;

	e = get_fields(v, p, keys, 5, fl, f);
	if (e)
		return e;
	*id = NULL;
	if (fl[0]) {
		if (!cJSON_IsString(fl[0]))
			return fail_at(f, API_INVALID_REQUEST, &pi, "must be a string");
		*id = fl[0]->valuestring;
	}
	e = read_vec3(fl[1], &pc, center, f);
	if (e)
		return e;
	e = read_vec3(fl[2], &ph, half, f);
	if (e)
		return e;
	if (half[0] < 0 || half[1] < 0 || half[2] < 0)
		return fail_at(f, API_INVALID_REQUEST, &ph, "components must be >= 0");
	if (fl[3] && fl[4])
		return fail_at(f, API_INVALID_REQUEST, p, "give rotation or axes, not both");
	if (fl[4]) {
		vec3 axes[3];
		size_t k = 0;

		if (!cJSON_IsArray(fl[4]) || cJSON_GetArraySize(fl[4]) != 3)
			return fail_at(f, API_INVALID_REQUEST, &pa, "must be 3 vectors");
		for (c = fl[4]->child; c; c = c->next, k++) {
			struct jpath pk = { &pa, NULL, k };
			double a[3];

			e = read_vec3(c, &pk, a, f);
			if (e)
				return e;
			axes[k] = vec3_from(a);
		}
		if (obb_from_axes(vec3_from(center), vec3_from(half), axes, box) != CORE_OK)
			return fail_at(f, API_INVALID_REQUEST, &pa,
				       "must be 3 orthonormal unit vectors");
		return API_OK;
	}
	if (fl[3]) {
		e = read_quat(fl[3], &pr, q, f);
		if (e)
			return e;
	}
	if (obb_from_quat(vec3_from(center), vec3_from(half), q, box) != CORE_OK)
		return fail_at(f, API_INVALID_REQUEST, p, "not a valid box");
	return API_OK;
}

static void box_list_release(struct box_list *l)
{
	free(l->boxes);
	free(l->ids);
	l->boxes = NULL;
	l->ids = NULL;
	l->n = 0;
}

/* "boxes": [box, ...] (NULL: none). */
static enum api_err decode_boxes(const cJSON *v, const struct api_limits *lim, struct box_list *l,
				 struct api_fail *f)
{
	struct jpath p = { NULL, "boxes", 0 };
	const cJSON *c;
	size_t n, k = 0;
	enum api_err e;

	l->n = 0;
	l->boxes = NULL;
	l->ids = NULL;
	if (!v)
		return API_OK;
	if (!cJSON_IsArray(v))
		return fail_at(f, API_INVALID_REQUEST, &p, "must be an array of boxes");
	n = (size_t)cJSON_GetArraySize(v);
	if (lim->max_boxes && n > lim->max_boxes)
		return fail_at(f, API_PAYLOAD_TOO_LARGE, &p, "%zu boxes, the limit is %zu", n, lim->max_boxes);
	if (n == 0)
		return API_OK;
	l->boxes = calloc(n, sizeof(*l->boxes));
	l->ids = calloc(n, sizeof(*l->ids));
	if (!l->boxes || !l->ids) {
		box_list_release(l);
		return api_fail_set(f, API_INTERNAL, "out of memory");
	}
	for (c = v->child; c; c = c->next, k++) {
		struct jpath pk = { &p, NULL, k };

		e = decode_box(c, &pk, &l->boxes[k], &l->ids[k], f);
		if (e) {
			box_list_release(l);
			return e;
		}
	}
	l->n = n;
	return API_OK;
}

/*
 * The rays of a query: one from the top-level members single[0..2] (origin,
 * direction, max_distance / start, end) or many from batch ("rays",
 * "segments", "shots"), never both. *out is calloc'd (also for one ray).
 */
static enum api_err decode_rays(const cJSON *const *single, const cJSON *batch,
				const char *batch_key, int segments, const struct api_limits *lim,
				int *is_batch, struct qray **out, size_t *nout, struct api_fail *f)
{
	static const char *const ray_keys[] = { "origin", "direction", "max_distance" };
	static const char *const seg_keys[] = { "start", "end" };
	struct jpath pb = { NULL, batch_key, 0 };
	int nsingle = segments ? 2 : 3;
	const cJSON *c;
	struct qray *r;
	size_t n, k = 0;
	enum api_err e;
	int given = 0, i;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < nsingle; i++)
		given |= single[i] != NULL;
	if (batch && given)
		return fail_at(f, API_INVALID_REQUEST, NULL, "give %s or %s, not both",
			       segments ? "start/end" : "origin/direction/max_distance", batch_key);
	*is_batch = batch != NULL;
	if (!batch) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return api_fail_set(f, API_INTERNAL, "out of memory");
		e = segments ? decode_segment(single[0], single[1], NULL, r, f)
			     : decode_ray(single[0], single[1], single[2], NULL, r, f);
		if (e) {
			free(r);
			return e;
		}
		*out = r;
		*nout = 1;
		return API_OK;
	}
	if (!cJSON_IsArray(batch))
		return fail_at(f, API_INVALID_REQUEST, &pb, "must be an array");
	n = (size_t)cJSON_GetArraySize(batch);
	if (lim->max_batch && n > lim->max_batch)
		return fail_at(f, API_PAYLOAD_TOO_LARGE, &pb, "%zu entries, the limit is %zu", n, lim->max_batch);
	if (n == 0)
		return API_OK;
	r = calloc(n, sizeof(*r));
	if (!r)
		return api_fail_set(f, API_INTERNAL, "out of memory");
	for (c = batch->child; c; c = c->next, k++) {
		struct jpath pk = { &pb, NULL, k };
		const cJSON *fl[3];

		e = get_fields(c, &pk, segments ? seg_keys : ray_keys, (size_t)nsingle, fl, f);
		if (!e)
			e = segments ? decode_segment(fl[0], fl[1], &pk, &r[k], f)
				     : decode_ray(fl[0], fl[1], fl[2], &pk, &r[k], f);
		if (e) {
			free(r);
			return e;
		}
	}
	*out = r;
	*nout = n;
	return API_OK;
}

/* ---- the endpoints */

void ray_query_release(struct ray_query *q)
{
	free(q->rays);
	q->rays = NULL;
	q->n = 0;
}

enum api_err decode_ray_query(const cJSON *root, int segments, const struct api_limits *lim,
			      struct ray_query *q, struct api_fail *f)
{
	static const char *const ray_keys[] = {
		"origin", "direction", "max_distance", "rays",
		"mode", "max_hits", "backfaces", "transform",
	};
	static const char *const seg_keys[] = {
		"start", "end", "segments", "mode", "max_hits", "backfaces", "transform",
	};
	static const char *const modes[] = { "closest", "any", "all" };
	static const char *const faces[] = { "hit", "cull" };
	const cJSON *fl[8], *const *opt;
	struct jpath pmode = { NULL, "mode", 0 }, phits = { NULL, "max_hits", 0 };
	struct jpath pface = { NULL, "backfaces", 0 }, pxf = { NULL, "transform", 0 };
	int mode = 0, cull = 0;
	size_t max_hits = RAY_MAX_HITS_DEFAULT;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	e = get_fields(root, NULL, segments ? seg_keys : ray_keys, segments ? 7 : 8, fl, f);
	if (e)
		return e;
	opt = segments ? fl + 3 : fl + 4;	/* mode, max_hits, backfaces, transform */
	if (opt[0]) {
		e = read_enum(opt[0], &pmode, modes, 3, &mode, f);
		if (e)
			return e;
	}
	if (opt[1]) {
		if (mode != HIT_ALL)
			return fail_at(f, API_INVALID_REQUEST, &phits, "only with mode \"all\"");
		e = read_uint(opt[1], &phits, 1, RAY_MAX_HITS_CAP, &max_hits, f);
		if (e)
			return e;
	}
	if (opt[2]) {
		e = read_enum(opt[2], &pface, faces, 2, &cull, f);
		if (e)
			return e;
	}
	if (opt[3]) {
		e = decode_xform(opt[3], &pxf, &q->xf, f);
		if (e)
			return e;
		q->has_xform = 1;
		q->opts.flip_winding = q->xf.det < 0;
	}
	q->opts.mode = (enum hit_mode)mode;
	q->opts.cull_backfaces = cull;
	q->opts.max_hits = mode == HIT_ALL ? (uint32_t)max_hits : 1;
	q->segments = segments;
	e = decode_rays(fl, fl[segments ? 2 : 3], segments ? "segments" : "rays", segments, lim,
			&q->batch, &q->rays, &q->n, f);
	if (e)
		memset(q, 0, sizeof(*q));
	return e;
}

void obb_query_release(struct obb_query *q)
{
	free(q->rays);
	q->rays = NULL;
	q->n = 0;
	box_list_release(&q->boxes);
}

enum api_err decode_obb_query(const cJSON *root, const struct api_limits *lim,
			      struct obb_query *q, struct api_fail *f)
{
	static const char *const keys[] = { "origin", "direction", "max_distance", "rays", "boxes" };
	struct jpath pb = { NULL, "boxes", 0 };
	const cJSON *fl[5];
	enum api_err e;

	memset(q, 0, sizeof(*q));
	e = get_fields(root, NULL, keys, 5, fl, f);
	if (e)
		return e;
	if (!fl[4])
		return fail_at(f, API_INVALID_REQUEST, &pb, "required");
	e = decode_rays(fl, fl[3], "rays", 0, lim, &q->batch, &q->rays, &q->n, f);
	if (e)
		return e;
	e = decode_boxes(fl[4], lim, &q->boxes, f);
	if (e)
		obb_query_release(q);
	return e;
}

enum api_err decode_overlap_query(const cJSON *root, struct overlap_query *q, struct api_fail *f)
{
	static const char *const keys[] = { "box", "limit" };
	struct jpath pb = { NULL, "box", 0 }, pl = { NULL, "limit", 0 };
	const cJSON *fl[2];
	const char *id;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	e = get_fields(root, NULL, keys, 2, fl, f);
	if (e)
		return e;
	if (!fl[0])
		return fail_at(f, API_INVALID_REQUEST, &pb, "required");
	e = decode_box(fl[0], &pb, &q->box, &id, f);
	if (e)
		return e;
	q->limit = OVERLAP_LIMIT_DEFAULT;
	if (fl[1])
		return read_uint(fl[1], &pl, 0, MESH_MAX_TRIANGLES, &q->limit, f);
	return API_OK;
}

void hitscan_query_release(struct hitscan_query *q)
{
	free(q->rays);
	q->rays = NULL;
	q->n = 0;
	box_list_release(&q->boxes);
}

enum api_err decode_hitscan_query(const cJSON *root, const struct api_limits *lim,
				  struct hitscan_query *q, struct api_fail *f)
{
	static const char *const keys[] = {
		"origin", "direction", "max_distance", "shots", "mesh", "transform", "boxes",
	};
	struct jpath pm = { NULL, "mesh", 0 }, pxf = { NULL, "transform", 0 };
	const cJSON *fl[7];
	enum api_err e;

	memset(q, 0, sizeof(*q));
	e = get_fields(root, NULL, keys, 7, fl, f);
	if (e)
		return e;
	if (fl[4]) {
		if (!cJSON_IsString(fl[4]) || !store_name_valid(fl[4]->valuestring))
			return fail_at(f, API_INVALID_REQUEST, &pm,
				       "must be a mesh name ([A-Za-z0-9_.-]{1,64}, not starting with '.')");
		q->mesh = fl[4]->valuestring;
	}
	if (fl[5]) {
		if (!q->mesh)
			return fail_at(f, API_INVALID_REQUEST, &pxf, "only with mesh");
		e = decode_xform(fl[5], &pxf, &q->xf, f);
		if (e)
			return e;
		q->has_xform = 1;
	}
	e = decode_rays(fl, fl[3], "shots", 0, lim, &q->batch, &q->rays, &q->n, f);
	if (e)
		return e;
	e = decode_boxes(fl[6], lim, &q->boxes, f);
	if (e)
		hitscan_query_release(q);
	return e;
}

/* ---- mesh upload */

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

enum api_err decode_mesh_json(const cJSON *root, size_t max_tris, struct mesh_data *out,
			      struct api_fail *f)
{
	static const char *const keys[] = { "vertices", "triangles" };
	struct jpath pv = { NULL, "vertices", 0 }, pt = { NULL, "triangles", 0 };
	const cJSON *fl[2];
	size_t nvert, ntri;
	int vnested, tnested;
	enum api_err e;

	memset(out, 0, sizeof(*out));
	e = get_fields(root, NULL, keys, 2, fl, f);
	if (e)
		return e;
	e = mesh_array_shape(fl[0], &pv, &nvert, &vnested, f);
	if (e)
		return e;
	e = mesh_array_shape(fl[1], &pt, &ntri, &tnested, f);
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
	e = mesh_read_vertices(fl[0], &pv, vnested, out->xyz, f);
	if (e)
		goto out_release;
	e = mesh_read_triangles(fl[1], &pt, tnested, nvert, out->idx, f);
	if (e)
		goto out_release;
	out->nvert = nvert;
	out->ntri = ntri;
	return API_OK;
out_release:
	mesh_data_release(out);
	return e;
}
