/* json_mesh.c - streaming decoder of JSON mesh uploads (no tree, numbers straight to arrays). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_mesh.h"
#include "json_path.h"

/*
 * Faults are not reported as they are met: decode_mesh_json() sees the whole
 * tree before it checks anything, so its order is syntax, then the keys of
 * the root object, then the shapes of the two arrays, then their counts,
 * then the vertices' values, then the triangles' values, each in document
 * order. The reader keeps the first fault of each kind and picks at the end.
 */

/* A fault of an element, kept until the end. */
enum elem_fault {
	EF_NONE,
	EF_V_MIX_NESTED,	/* vertices[k]: not [x,y,z] in the nested form */
	EF_V_MIX_FLAT,		/* vertices[k]: not a number in the flat form */
	EF_V_NONFINITE,		/* vertices[k]: a non-finite number in a triple */
	EF_V_NOT3,		/* vertices[k]: not 3 finite numbers */
	EF_V_RANGE_NESTED,	/* vertices[k]: outside the float32 range */
	EF_V_RANGE_FLAT,	/* vertices[k/3]: non-finite or outside the float32 range */
	EF_T_MIX,		/* triangles[k]: an array in the flat form */
	EF_T_NOT3,		/* triangles[k]: not an array of 3 */
	EF_T_INT,		/* triangles[k]: not an integer */
	EF_T_RANGE,		/* triangles[k]: negative or >= 2^32 (value in d) */
};

/* One of the two arrays. */
struct marray {
	int seen;		/* the key was given (also as null) */
	int present;		/* ... with a value other than null */
	int is_array;
	int nested;		/* judged by the first element */
	size_t count;		/* elements of the outer array */
	size_t limit;		/* numbers stored at most (3 * max_tris for triangles) */
	void *data;		/* float (vertices) or uint32_t (triangles) */
	size_t stored, cap;	/* numbers */
	int storing;		/* 0 after the first fault or past the limit */
	enum elem_fault fault;	/* the first, in document order */
	size_t fault_k;		/* the element (vertices) or number position (triangles) */
	double fault_d;
};

struct mreader {
	struct json_cursor c;
	struct marray v, t;
	int fields_fault;	/* a key fault is kept in fields */
	struct api_fail fields;
	size_t max_tris;
};

static int in_float_range(double d)
{
	return fabs(d) <= FLT_MAX;
}

/* f->msg = "<name>[k]: <text>" or "<name>: <text>" (k == SIZE_MAX). */
static enum api_err fail_field(struct api_fail *f, enum api_err e, const char *name, size_t k,
			       const char *text)
{
	if (k == SIZE_MAX)
		return api_fail_set(f, e, "%s: %s", name, text);
	return api_fail_set(f, e, "%s[%zu]: %s", name, k, text);
}

/* Room for one more number; 0, or -1 with the cursor failed (out of memory). */
static int marray_room(struct json_cursor *c, struct marray *a, size_t elem)
{
	size_t cap;
	void *p;

	if (a->stored < a->cap)
		return 0;
	cap = a->cap ? a->cap : 3 * 1024;
	while (cap <= a->stored) {
		if (cap > SIZE_MAX / 2 / elem)
			return json_cursor_fail(c, API_INTERNAL, "out of memory");
		cap *= 2;
	}
	p = realloc(a->data, cap * elem);
	if (!p)
		return json_cursor_fail(c, API_INTERNAL, "out of memory");
	a->data = p;
	a->cap = cap;
	return 0;
}

static int put_float(struct json_cursor *c, struct marray *a, float x)
{
	if (marray_room(c, a, sizeof(float)))
		return -1;
	((float *)a->data)[a->stored++] = x;
	return 0;
}

static int put_index(struct json_cursor *c, struct marray *a, uint32_t x)
{
	if (marray_room(c, a, sizeof(uint32_t)))
		return -1;
	((uint32_t *)a->data)[a->stored++] = x;
	return 0;
}

/* Keep the first element fault; storing stops with it. */
static void set_fault(struct marray *a, enum elem_fault ef, size_t k, double d)
{
	if (a->fault != EF_NONE)
		return;
	a->fault = ef;
	a->fault_k = k;
	a->fault_d = d;
	a->storing = 0;
}

static int is_number_start(int ch)
{
	return ch == '-' || (ch >= '0' && ch <= '9');
}

/*
 * The inner array at c->i ('['), depth its nesting depth: its first three
 * elements' numbers into d[] (isnum[] says which were numbers), how many
 * elements in *m, whether any is not a number (*nonnum) or is a non-finite
 * number (*nonfinite).
 */
static int read_triple(struct json_cursor *c, int depth, double d[3], int isnum[3], size_t *m,
		       int *nonnum, int *nonfinite)
{
	int ch, r;

	*m = 0;
	*nonnum = 0;
	*nonfinite = 0;
	if (depth >= JSON_MAX_DEPTH)
		return json_cursor_fail(c, API_INVALID_REQUEST, "nested deeper than 64 levels");
	c->i++;
	ch = json_cursor_next(c);
	if (ch == ']') {
		c->i++;
		return 0;
	}
	for (;;) {
		double x = 0;
		int num;

		ch = json_cursor_next(c);
		if (ch < 0)
			return -1;
		num = is_number_start(ch);
		if (num) {
			if (json_cursor_number(c, &x))
				return -1;
			if (!isfinite(x))
				*nonfinite = 1;
		} else {
			if (json_cursor_skip(c, depth + 1))
				return -1;
			*nonnum = 1;
		}
		if (*m < 3) {
			d[*m] = x;
			isnum[*m] = num;
		}
		if (*m < SIZE_MAX)
			(*m)++;
		r = json_cursor_end_member(c, ']');
		if (r < 0)
			return -1;
		if (r)
			return 0;
	}
}

/* One element k of "vertices" (at depth 2), its first byte ch. */
static int vertex_element(struct json_cursor *c, struct marray *a, size_t k, int ch)
{
	double d[3];
	size_t m, j;
	int isnum[3], nonnum, nonfinite;

	if (!a->nested) {
		if (!is_number_start(ch)) {
			set_fault(a, EF_V_MIX_FLAT, k, 0);
			return json_cursor_skip(c, 2);
		}
		if (json_cursor_number(c, &d[0]))
			return -1;
		if (!isfinite(d[0]) || !in_float_range(d[0]))
			set_fault(a, EF_V_RANGE_FLAT, k / 3, 0);
		return a->storing ? put_float(c, a, (float)d[0]) : 0;
	}
	if (ch != '[') {
		set_fault(a, EF_V_MIX_NESTED, k, 0);
		return json_cursor_skip(c, 2);
	}
	if (read_triple(c, 2, d, isnum, &m, &nonnum, &nonfinite))
		return -1;
	if (m != 3 || nonnum || nonfinite) {
		set_fault(a, m == 3 && nonfinite ? EF_V_NONFINITE : EF_V_NOT3, k, 0);
		return 0;
	}
	if (!in_float_range(d[0]) || !in_float_range(d[1]) || !in_float_range(d[2]))
		set_fault(a, EF_V_RANGE_NESTED, k, 0);
	for (j = 0; j < 3 && a->storing; j++)
		if (put_float(c, a, (float)d[j]))
			return -1;
	return 0;
}

/* The fault of index value x (EF_NONE when it is a uint32). */
static enum elem_fault index_fault(double x)
{
	if (!isfinite(x) || x != floor(x))
		return EF_T_INT;
	if (x < 0 || x > (double)UINT32_MAX)
		return EF_T_RANGE;
	return EF_NONE;
}

/* One element k of "triangles" (at depth 2), its first byte ch. */
static int triangle_element(struct json_cursor *c, struct marray *a, size_t k, int ch)
{
	double d[3], x;
	size_t m, j;
	int isnum[3], nonnum, nonfinite;
	enum elem_fault ef;

	if (a->storing && a->stored >= a->limit)
		a->storing = 0;	/* over max_tris: reported from the count */
	if (!a->nested) {
		if (ch == '[') {
			set_fault(a, EF_T_MIX, k, 0);
			return json_cursor_skip(c, 2);
		}
		if (!is_number_start(ch)) {
			set_fault(a, EF_T_INT, k, 0);
			return json_cursor_skip(c, 2);
		}
		if (json_cursor_number(c, &x))
			return -1;
		ef = index_fault(x);
		if (ef != EF_NONE)
			set_fault(a, ef, k, x);
		return a->storing ? put_index(c, a, (uint32_t)x) : 0;
	}
	if (ch != '[') {
		set_fault(a, EF_T_NOT3, 3 * k, 0);
		return json_cursor_skip(c, 2);
	}
	if (read_triple(c, 2, d, isnum, &m, &nonnum, &nonfinite))
		return -1;
	if (m != 3) {
		set_fault(a, EF_T_NOT3, 3 * k, 0);
		return 0;
	}
	/* [a, b, c]: a non-number inner element reads as a non-integer */
	for (j = 0; j < 3; j++) {
		ef = isnum[j] ? index_fault(d[j]) : EF_T_INT;
		if (ef != EF_NONE) {
			set_fault(a, ef, 3 * k + j, d[j]);
			return 0;
		}
		if (a->storing && put_index(c, a, (uint32_t)d[j]))
			return -1;
	}
	return 0;
}

/* The array value of a mesh key at c->i ('['), at depth 1. */
static int read_array(struct mreader *r, struct marray *a)
{
	struct json_cursor *c = &r->c;
	int ch, e;

	a->is_array = 1;
	a->storing = !r->fields_fault;
	c->i++;
	ch = json_cursor_next(c);
	if (ch == ']') {
		c->i++;
		return 0;
	}
	for (;;) {
		ch = json_cursor_next(c);
		if (ch < 0)
			return -1;
		if (a->count == 0)
			a->nested = ch == '[';
		if (a == &r->v ? vertex_element(c, a, a->count, ch) : triangle_element(c, a, a->count, ch))
			return -1;
		a->count++;
		e = json_cursor_end_member(c, ']');
		if (e < 0)
			return -1;
		if (e)
			return 0;
	}
}

/* A key fault "<key>: text" (only the first is kept); "body" for the empty key. */
static void fields_fault(struct mreader *r, const char *key, const char *text)
{
	if (r->fields_fault)
		return;
	r->fields_fault = 1;
	r->v.storing = 0;
	r->t.storing = 0;
	api_fail_set(&r->fields, API_INVALID_REQUEST, "%.64s: %s", key[0] ? key : "body", text);
}

/* The value of root member key at c->i. */
static int read_member(struct mreader *r, const char *key)
{
	struct json_cursor *c = &r->c;
	struct marray *a = NULL;
	int ch;

	if (strcmp(key, "vertices") == 0)
		a = &r->v;
	else if (strcmp(key, "triangles") == 0)
		a = &r->t;
	if (!a) {
		fields_fault(r, key, "unknown field (expected vertices, triangles)");
		return json_cursor_skip(c, 1);
	}
	if (a->seen) {
		fields_fault(r, key, "duplicate key");
		return json_cursor_skip(c, 1);
	}
	a->seen = 1;
	ch = json_cursor_next(c);
	if (ch < 0)
		return -1;
	if (ch == '[') {
		a->present = 1;
		return read_array(r, a);
	}
	if (json_cursor_skip(c, 1))
		return -1;
	a->present = ch != 'n';	/* null is absent */
	return 0;
}

/* The root value: an object is read member by member, anything else skipped. */
static int read_root(struct mreader *r)
{
	struct json_cursor *c = &r->c;
	char keybuf[80], *key;
	size_t klen;
	int ch, e;

	ch = json_cursor_next(c);
	if (ch < 0)
		return -1;
	if (ch != '{') {
		if (json_cursor_skip(c, 0))
			return -1;
		fields_fault(r, "", "must be an object");
		return 0;
	}
	c->i++;
	ch = json_cursor_next(c);
	if (ch == '}') {
		c->i++;
		return 0;
	}
	for (;;) {
		ch = json_cursor_next(c);
		if (ch != '"')
			return json_cursor_fail(c, API_INVALID_JSON, "expected a key string");
		if (json_cursor_string(c, keybuf, sizeof(keybuf), &key, &klen))
			return -1;
		ch = json_cursor_next(c);
		e = ch == ':' ? (c->i++, read_member(r, key)) :
				json_cursor_fail(c, API_INVALID_JSON, "expected ':'");
		if (key != keybuf)
			free(key);
		if (e)
			return -1;
		e = json_cursor_end_member(c, '}');
		if (e < 0)
			return -1;
		if (e)
			return 0;
	}
}

/* "required", "must be an array", the flat form's multiple of 3. */
static enum api_err check_shape(const struct marray *a, const char *name, size_t *groups,
				struct api_fail *f)
{
	if (!a->present)
		return fail_field(f, API_INVALID_REQUEST, name, SIZE_MAX, "required");
	if (!a->is_array)
		return fail_field(f, API_INVALID_REQUEST, name, SIZE_MAX, "must be an array");
	if (!a->nested && a->count % 3)
		return api_fail_set(f, API_INVALID_REQUEST,
				    "%s: flat form needs a multiple of 3 numbers, got %zu", name, a->count);
	*groups = a->nested ? a->count : a->count / 3;
	return API_OK;
}

static enum api_err vertex_verdict(const struct marray *v, struct api_fail *f)
{
	static const struct {
		enum api_err err;
		const char *text;
	} msg[] = {
		[EF_V_MIX_NESTED] = { API_INVALID_REQUEST, "must be [x, y, z] like the first vertex (do not mix forms)" },
		[EF_V_MIX_FLAT] = { API_INVALID_REQUEST, "must be a number like the first element (do not mix forms)" },
		[EF_V_NONFINITE] = { API_INVALID_MESH, "non-finite coordinate" },
		[EF_V_NOT3] = { API_INVALID_REQUEST, "must be 3 finite numbers" },
		[EF_V_RANGE_NESTED] = { API_INVALID_MESH, "coordinate outside the float32 range" },
		[EF_V_RANGE_FLAT] = { API_INVALID_MESH, "non-finite or outside the float32 range" },
	};

	if (v->fault == EF_NONE)
		return API_OK;
	return fail_field(f, msg[v->fault].err, "vertices", v->fault_k, msg[v->fault].text);
}

/* The first fault of the triangles, the index range against nvert included. */
static enum api_err triangle_verdict(const struct marray *t, size_t nvert, struct api_fail *f)
{
	const uint32_t *idx = t->data;
	size_t end = t->fault == EF_NONE ? t->stored : t->fault_k, p;
	char text[sizeof(f->msg)];	/* an index of 1e300 prints 301 digits, cut where the tree decoder cuts */

	if (end > t->stored)
		end = t->stored;
	for (p = 0; p < end; p++) {
		if (idx[p] >= nvert) {
			snprintf(text, sizeof(text), "index %.0f out of range (%zu vertices)",
				 (double)idx[p], nvert);
			return fail_field(f, API_INVALID_MESH, "triangles", p / 3, text);
		}
	}
	switch (t->fault) {
	case EF_NONE:
		return API_OK;
	case EF_T_MIX:
		return fail_field(f, API_INVALID_REQUEST, "triangles", t->fault_k / 3,
				  "must be a number like the first element (do not mix forms)");
	case EF_T_NOT3:
		return fail_field(f, API_INVALID_REQUEST, "triangles", t->fault_k / 3,
				  "must be 3 integer indices [a, b, c]");
	case EF_T_RANGE:
		snprintf(text, sizeof(text), "index %.0f out of range (%zu vertices)", t->fault_d, nvert);
		return fail_field(f, API_INVALID_MESH, "triangles", t->fault_k / 3, text);
	default:
		return fail_field(f, API_INVALID_REQUEST, "triangles", t->fault_k / 3,
				  "indices must be integers");
	}
}

/* The faults in decode_mesh_json()'s order; on success the arrays move to out. */
static enum api_err verdict(struct mreader *r, struct mesh_data *out, struct api_fail *f)
{
	size_t nvert, ntri;
	enum api_err e;
	void *p;

	if (r->fields_fault) {
		*f = r->fields;
		return f->err;
	}
	e = check_shape(&r->v, "vertices", &nvert, f);
	if (!e)
		e = check_shape(&r->t, "triangles", &ntri, f);
	if (e)
		return e;
	if (nvert == 0)
		return fail_field(f, API_INVALID_MESH, "vertices", SIZE_MAX, "no vertices");
	if (ntri == 0)
		return fail_field(f, API_INVALID_MESH, "triangles", SIZE_MAX, "no triangles");
	if (ntri > r->max_tris)
		return api_fail_set(f, API_PAYLOAD_TOO_LARGE, "triangles: %zu triangles, the limit is %zu",
				    ntri, r->max_tris);
	if (nvert > UINT32_MAX)
		return fail_field(f, API_PAYLOAD_TOO_LARGE, "vertices", SIZE_MAX, "too many vertices");
	e = vertex_verdict(&r->v, f);
	if (!e)
		e = triangle_verdict(&r->t, nvert, f);
	if (e)
		return e;
	/* give back the unused tail of the doubling growth */
	p = realloc(r->v.data, 3 * nvert * sizeof(float));
	if (p)
		r->v.data = p;
	p = realloc(r->t.data, 3 * ntri * sizeof(uint32_t));
	if (p)
		r->t.data = p;
	out->xyz = r->v.data;
	out->nvert = nvert;
	out->idx = r->t.data;
	out->ntri = ntri;
	r->v.data = NULL;
	r->t.data = NULL;
	return API_OK;
}

enum api_err json_mesh_decode(const char *body, size_t len, size_t max_tris,
			      struct mesh_data *out, struct api_fail *f)
{
	struct mreader r;
	enum api_err e;

	memset(out, 0, sizeof(*out));
	if (!body || len == 0)
		return api_fail_set(f, API_INVALID_JSON, "body: empty, expected a JSON object");
	memset(&r, 0, sizeof(r));
	json_cursor_init(&r.c, body, len);
	r.max_tris = max_tris;
	r.v.limit = SIZE_MAX;
	r.t.limit = max_tris <= SIZE_MAX / 3 ? 3 * max_tris : SIZE_MAX;
	if (read_root(&r) || json_cursor_finish(&r.c)) {
		if (r.c.err == API_INTERNAL)
			e = api_fail_set(f, API_INTERNAL, "out of memory parsing the body");
		else
			e = json_fail_at_byte(f, r.c.err, body, len, r.c.i, r.c.why);
	} else {
		e = verdict(&r, out, f);
	}
	free(r.v.data);
	free(r.t.data);
	return e;
}
