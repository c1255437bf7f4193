/* fuzz_boxes_direct.c - libFuzzer target for decode_hitscan_query_direct and
 * decode_obb_query_direct (the tree-free decoders of POST /v1/hitscan and
 * /v1/obb/raycast bodies), checked against the tree path (json_parse +
 * decode_hitscan_query / decode_obb_query) on every input: whatever the fast
 * path takes, the tree path takes too, into the same struct (rays or shots,
 * mesh name, transform, boxes and their ids). The last byte's low bit picks
 * the endpoint: a body ending in "}" is read as a hitscan, one ending in a
 * newline as an OBB raycast. Seeds in seeds/boxes_direct/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decode.h"
#include "fuzz_query.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct api_limits lim = { 8, 0, 4, 0, 0, 0, 0 };
	struct json_arena arena = JSON_ARENA_INIT, mine = JSON_ARENA_INIT;
	struct query a, b;
	struct api_fail f;
	enum api_err e;
	cJSON *root;
	int obb = size && !(data[size - 1] & 1), taken;
	size_t i;

	taken = obb ? decode_obb_query_direct((const char *)data, size, &lim, &mine, &a) :
		      decode_hitscan_query_direct((const char *)data, size, &lim, &mine, &a);
	memset(&b, 0, sizeof(b));
	e = api_json_parse_in((const char *)data, size, &arena, &root, &f);
	if (!e)
		e = obb ? decode_obb_query(root, &lim, &b, &f) : decode_hitscan_query(root, &lim, &b, &f);
	if (taken) {
		if (e || !fuzz_same_query(&a, &b) || !same_str(a.mesh, b.mesh) || a.boxes.n != b.boxes.n)
			__builtin_trap();
		for (i = 0; i < a.boxes.n; i++)
			if (memcmp(&a.boxes.boxes[i], &b.boxes.boxes[i], sizeof(a.boxes.boxes[i])) ||
			    !same_str(a.boxes.ids[i], b.boxes.ids[i]))
				__builtin_trap();
	} else if (a.rays || a.n || a.batch || a.has_xform || a.mesh || a.boxes.n) {
		__builtin_trap();	/* declined: left empty */
	}
	query_release(&a);
	if (!e)
		query_release(&b);
	json_arena_release(&arena);
	json_arena_release(&mine);
	return 0;
}
