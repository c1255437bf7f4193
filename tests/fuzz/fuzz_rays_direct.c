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
#include "fuzz_query.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct api_limits lim = { 8, 0, 0, 0, 0, 0, 0 };
	struct json_arena arena = JSON_ARENA_INIT;
	struct query a, b;
	struct api_fail f;
	int segments = size && (data[size - 1] & 1), taken;
	enum api_err e;
	cJSON *root;

	taken = segments ? decode_segment_query_direct((const char *)data, size, &lim, &a)
			 : decode_ray_query_direct((const char *)data, size, &lim, &a);
	memset(&b, 0, sizeof(b));
	e = api_json_parse_in((const char *)data, size, &arena, &root, &f);
	if (!e)
		e = segments ? decode_segment_query(root, &lim, &b, &f)
			     : decode_ray_query(root, &lim, &b, &f);
	if (taken) {
		if (e || !fuzz_same_query(&a, &b))
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
