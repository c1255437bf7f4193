/* decode_fields.h - api-internal: the pieces every JSON decoder is built
 * from (decode_query.c, decode_mesh.c, and the world decoders): field paths
 * for messages, a field table read in one call, and the value readers.
 */
#ifndef API_DECODE_FIELDS_H
#define API_DECODE_FIELDS_H

#include <stddef.h>

#include <cJSON.h>

#include "errors.h"
#include "vec.h"

/* A field path, built on the stack while descending: a key or an index. */
struct jpath {
	const struct jpath *up;
	const char *key;	/* NULL: idx names an array element */
	size_t idx;
};

/* f->msg = "<path>: <text>" ("body" when p is NULL, the root). Returns e. */
enum api_err fail_at(struct api_fail *f, enum api_err e, const struct jpath *p,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* How a field table reads a member. */
enum field_kind {
	FIELD_RAW,	/* kept as the cJSON value; the decoder reads it itself */
	FIELD_VEC3,	/* [x, y, z] finite, within the float32 range */
	FIELD_DIR,	/* FIELD_VEC3, not all zero */
	FIELD_POSITIVE,	/* a finite number > 0 */
	FIELD_ENUM,	/* one of field.names, as its index */
	FIELD_STRING,	/* any string */
	FIELD_NAME,	/* a store name ([A-Za-z0-9_.-]{1,64}, no leading '.') */
};

/* A member's value once read: given is 0 when absent or JSON null. */
struct fval {
	int given;
	const cJSON *raw;	/* every kind */
	double v[3];		/* FIELD_VEC3, FIELD_DIR; FIELD_POSITIVE in v[0] */
	int e;			/* FIELD_ENUM */
	const char *s;		/* FIELD_STRING, FIELD_NAME (points into the tree) */
};

/* One row of a field table: the member key, how to read it, whether it
 * must be given, and where its struct fval lies in the decoder's struct. */
struct field {
	const char *key;
	enum field_kind kind;
	int required;
	size_t slot;			/* offsetof(decoder struct, member) */
	const char *const *names;	/* FIELD_ENUM: NULL-terminated */
};

#define FIELD_COUNT(t) (sizeof(t) / sizeof((t)[0]))

/*
 * Check obj's members against the table: obj must be an object, every key
 * a row's key (else "unknown field (expected <keys in table order>)"), none
 * twice ("duplicate key"); keys are case-sensitive. Then read the rows in
 * table order into out (a struct with one struct fval per row at its slot):
 * a missing required row is "required", a value of the wrong kind names the
 * expected form. FIELD_RAW rows are only stored.
 */
enum api_err fields_decode(const cJSON *obj, const struct jpath *p, const struct field *rows,
			   size_t n, void *out, struct api_fail *f);

/* The read half of fields_decode alone, for rows of an object that was
 * already checked against a larger table (a single ray at the top level). */
enum api_err fields_read(const cJSON *obj, const struct jpath *p, const struct field *rows,
			 size_t n, void *out, struct api_fail *f);

/* value readers, each failing with a message at p */
int num_ok(const cJSON *v, double *out);			/* finite number */
int read_numbers(const cJSON *v, double *out, int n);	/* exactly n finite numbers */
int in_float_range(double d);
enum api_err read_vec3(const cJSON *v, const struct jpath *p, double out[3], struct api_fail *f);
enum api_err read_quat(const cJSON *v, const struct jpath *p, double q[4], struct api_fail *f);
/* An integer in [lo, hi] (read from valuedouble: valueint clamps). */
enum api_err read_uint(const cJSON *v, const struct jpath *p, double lo, double hi,
		       size_t *out, struct api_fail *f);
/* One of names (NULL-terminated) into *out, as its index; the message lists
 * them all: "a" or "b", "a", "b" or "c", ... */
enum api_err read_enum(const cJSON *v, const struct jpath *p, const char *const *names,
		       int *out, struct api_fail *f);
vec3 vec3_from(const double d[3]);
/* An array's length into *n: not an array is "must be <what>"; more than
 * limit elements (0: no limit) is 413 "<n> <unit>, the limit is <limit>". */
enum api_err read_array(const cJSON *v, const struct jpath *p, const char *what, size_t limit,
			const char *unit, size_t *n, struct api_fail *f);

/* ---- values several resources share (defined in decode_query.c) */
struct xform;
struct obb;

/* max_distance and segment lengths: the float at or above d, so that a hit
 * exactly at the given distance still counts (INFINITY above FLT_MAX). */
float tmax_from(double d);
/* A transform {"position", "rotation", "scale"} (each optional) or
 * {"matrix": [16 numbers, row-major]} at p. */
enum api_err decode_xform(const cJSON *v, const struct jpath *p, struct xform *xf,
			  struct api_fail *f);
/* A box {"id", "center", "half_extents", "rotation" | "axes"} at p; *id
 * points into v (NULL when absent). */
enum api_err decode_box(const cJSON *v, const struct jpath *p, struct obb *box, const char **id,
			struct api_fail *f);

#endif
