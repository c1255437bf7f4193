/* decode_binary.c - binary ray batches (API.md "Binary batches"): 28-byte
 * little-endian float32 records in, options from the query string. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "decode_fields.h"

#define RAY_RECORD_BYTES 28

/* The float32 at p, little-endian. */
static float get_f32(const unsigned char *p)
{
	uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/* One of names (NULL-terminated) for the query argument key (absent: 0);
 * else an error "query string: <key> must be <expect>". */
static enum api_err arg_enum(const struct api_arg *args, const char *key,
			     const char *const *names, const char *expect, int *out,
			     struct api_fail *f)
{
	const char *v = NULL;
	int k;

	*out = 0;
	for (; args && args->key; args++) {
		if (strcmp(args->key, key) != 0)
			continue;
		/* as a JSON body's key given twice: which one was meant? */
		if (v)
			return api_fail_set(f, API_INVALID_REQUEST,
					    "query string: %s given more than once", key);
		v = args->value ? args->value : "";
	}
	if (!v)
		return API_OK;
	for (k = 0; names[k]; k++)
		if (strcmp(v, names[k]) == 0) {
			*out = k;
			return API_OK;
		}
	return api_fail_set(f, API_INVALID_REQUEST, "query string: %s must be %s", key, expect);
}

/* The query string: mode=closest|any, backfaces=hit|cull, nothing else. */
static enum api_err decode_args(const struct api_arg *args, struct query *q, struct api_fail *f)
{
	static const char *const modes[] = { "closest", "any", NULL };
	static const char *const faces[] = { "hit", "cull", NULL };
	const struct api_arg *a;
	int mode, cull;
	enum api_err e;

	for (a = args; a && a->key; a++)
		if (strcmp(a->key, "mode") != 0 && strcmp(a->key, "backfaces") != 0)
			return api_fail_set(f, API_INVALID_REQUEST,
					    "query string: unknown parameter %.64s (expected mode, backfaces)",
					    a->key);
	e = arg_enum(args, "mode", modes, "closest or any", &mode, f);
	if (!e)
		e = arg_enum(args, "backfaces", faces, "hit or cull", &cull, f);
	if (e)
		return e;
	q->opts.mode = (enum hit_mode)mode;
	q->opts.cull_backfaces = cull;
	q->opts.max_hits = 1;
	q->opts.bare_hits = 1;	/* the answer is a triangle and a distance */
	return API_OK;
}

/* Check record k (28 bytes at p): what the JSON decoder would refuse in
 * the same float numbers. */
static enum api_err check_record(const unsigned char *p, size_t k, struct api_fail *f)
{
	float v[7];
	int i;

	for (i = 0; i < 7; i++)
		v[i] = get_f32(p + 4 * i);
	if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
		return api_fail_set(f, API_INVALID_REQUEST, "rays[%zu].origin: must be 3 finite numbers", k);
	if (!isfinite(v[3]) || !isfinite(v[4]) || !isfinite(v[5]))
		return api_fail_set(f, API_INVALID_REQUEST, "rays[%zu].direction: must be 3 finite numbers", k);
	if (v[3] == 0 && v[4] == 0 && v[5] == 0)
		return api_fail_set(f, API_INVALID_REQUEST, "rays[%zu].direction: must not be zero", k);
	if (isnan(v[6]) || !(v[6] > 0))
		return api_fail_set(f, API_INVALID_REQUEST, "rays[%zu].max_distance: must be a number > 0", k);
	return API_OK;
}

void binary_ray(const struct query *q, size_t k, struct qray *r)
{
	const unsigned char *p = q->records + k * RAY_RECORD_BYTES;
	float v[7];
	double d[3];
	int i;

	for (i = 0; i < 7; i++)
		v[i] = get_f32(p + 4 * i);
	for (i = 0; i < 3; i++)
		d[i] = v[3 + i];
	qray_init(r, v3(v[0], v[1], v[2]), d, v[6] >= 3.4e38f ? INFINITY : v[6]);
}

enum api_err decode_binary_rays(const void *body, size_t len, const struct api_arg *args,
				const struct api_limits *lim, struct query *q, struct api_fail *f)
{
	const unsigned char *p = body;
	enum api_err e;
	size_t n, k;

	memset(q, 0, sizeof(*q));
	q->items = "rays";
	q->batch = 1;
	e = decode_args(args, q, f);
	if (e)
		return e;
	if (len % RAY_RECORD_BYTES)
		return api_fail_set(f, API_INVALID_REQUEST,
				    "body: %zu bytes is not a whole number of 28-byte ray records", len);
	n = len / RAY_RECORD_BYTES;
	if (lim->max_batch && n > lim->max_batch)
		return api_fail_set(f, API_PAYLOAD_TOO_LARGE, "rays: %zu entries, the limit is %zu", n,
				    lim->max_batch);
	if (n == 0)
		return API_OK;
	/* checked here, in order, so that the first bad record is the one
	 * named; each ray is made by the thread that casts it (binary_ray) */
	for (k = 0; k < n; k++) {
		e = check_record(p + k * RAY_RECORD_BYTES, k, f);
		if (e)
			return e;
	}
	q->records = p;
	q->n = n;
	return API_OK;
}
