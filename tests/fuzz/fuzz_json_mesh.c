/* fuzz_json_mesh.c - libFuzzer target for the streaming JSON mesh decoder
 * (api/json_mesh.c), checked against the tree decoder (json_parse +
 * decode_mesh_json) on every input: same error and message, or the same
 * arrays. Seeds in seeds/json_mesh/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decode.h"
#include "json.h"
#include "json_mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_arena arena = JSON_ARENA_INIT;
	struct mesh_data a = { 0 }, b;
	struct api_fail fa, fb;
	enum api_err ea, eb;
	cJSON *root;
	size_t max_tris = size && data[0] == '{' ? 1000 : 2;

	ea = api_json_parse_in((const char *)data, size, &arena, &root, &fa);
	if (!ea)
		ea = decode_mesh_json(root, max_tris, &a, &fa);
	json_arena_release(&arena);
	eb = json_mesh_decode((const char *)data, size, max_tris, &b, &fb);
	if (ea != eb || (ea && strcmp(fa.msg, fb.msg) != 0))
		__builtin_trap();
	if (!ea && (a.nvert != b.nvert || a.ntri != b.ntri ||
		    memcmp(a.xyz, b.xyz, 3 * a.nvert * sizeof(float)) != 0 ||
		    memcmp(a.idx, b.idx, 3 * a.ntri * sizeof(uint32_t)) != 0))
		__builtin_trap();
	mesh_data_release(&a);
	mesh_data_release(&b);
	return 0;
}
