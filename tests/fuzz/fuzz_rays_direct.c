/* fuzz_rays_direct.c - libFuzzer target for decode_ray_query_direct and
 * decode_segment_query_direct (the tree-free decoder of mesh ray and segment
 * batches), checked against the tree path (json_parse + decode_ray_query /
 * decode_segment_query) on every input: whatever the fast path takes, the
 * tree path takes too, into the same struct. The last byte's low bit picks
 * segments: a body ending in "}" is read as segments, one ending in a newline
 * as rays. Seeds in seeds/rays_direct/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decode.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_ray(const struct qray *r, const struct qray *s)
{
	return !memcmp(&r->ray.origin, &s->ray.origin, sizeof(r->ray.origin)) &&
	       !memcmp(&r->ray.dir, &s->ray.dir, sizeof(r->ray.dir)) &&
	       !memcmp(&r->ray.tmax, &s->ray.tmax, sizeof(r->ray.tmax)) &&
	       !memcmp(r->dir, s->dir, sizeof(r->dir)) &&
	       !memcmp(&r->length, &s->length, sizeof(r->length));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct api_limits lim = { 8, 0, 0, 0, 0, 0, 0 };
	struct json_arena arena = JSON_ARENA_INIT;
	struct query a, b;
	struct api_fail f;
	int segments = size && (data[size - 1] & 1), taken;
	enum api_err e;
	cJSON *root;
	size_t i;

	taken = segments ? decode_segment_query_direct((const char *)data, size, &lim, &a)
			 : decode_ray_query_direct((const char *)data, size, &lim, &a);
	memset(&b, 0, sizeof(b));
	e = api_json_parse_in((const char *)data, size, &arena, &root, &f);
	if (!e)
		e = segments ? decode_segment_query(root, &lim, &b, &f)
			     : decode_ray_query(root, &lim, &b, &f);
	if (taken) {
		if (e || a.batch != b.batch || a.n != b.n || a.segments != b.segments ||
		    strcmp(a.items, b.items) || memcmp(&a.opts, &b.opts, sizeof(a.opts)) ||
		    a.has_xform != b.has_xform || memcmp(&a.xf, &b.xf, sizeof(a.xf)))
			__builtin_trap();
		for (i = 0; i < a.n; i++)
			if (!same_ray(&a.rays[i], &b.rays[i]))
				__builtin_trap();
	} else if (a.rays || a.n || a.batch || a.has_xform) {
		__builtin_trap();	/* declined: left empty */
	}
	query_release(&a);
	if (!e)
		query_release(&b);
	json_arena_release(&arena);
	return 0;
}
