/* fuzz_json.c - libFuzzer target for the strict JSON reader (api/json.c) and
 * the request decoders behind it: every body goes through api_handle as a
 * raycast, an OBB cast and a mesh upload against a small store. Seeds in
 * seeds/json/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api.h"
#include "json.h"
#include "mesh.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct store *fuzz_store(void)
{
	static struct store *s;	/* built once: the fuzzer reuses the process */
	static const float xyz[12] = { 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1 };
	static const uint32_t idx[12] = { 0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3 };
	struct mesh *m;

	if (s)
		return s;
	if (store_new(&s) != CORE_OK || mesh_build(xyz, 4, idx, 4, &m, NULL) != CORE_OK)
		__builtin_trap();
	store_put(s, "t", m, 0, NULL, NULL);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/v1/meshes/t/raycast", "/v1/obb/raycast",
					     "/v1/hitscan", "/v1/meshes/t/overlap" };
	struct api_ctx ctx;
	struct json_arena a = JSON_ARENA_INIT;
	cJSON *root;
	size_t off;
	const char *why;

	/* the parser alone: a failure leaves no tree, a success has a root */
	if (json_parse((const char *)data, size, &a, &root, &off, &why) == API_OK && !root)
		__builtin_trap();
	json_arena_release(&a);

	memset(&ctx, 0, sizeof(ctx));
	ctx.store = fuzz_store();
	ctx.limits.max_batch = 64;
	ctx.limits.max_triangles = 64;
	ctx.limits.max_boxes = 64;
	ctx.limits.max_body_mesh = 1 << 20;
	ctx.limits.max_body_query = 1 << 20;
	for (size_t i = 0; i <= sizeof(paths) / sizeof(paths[0]); i++) {
		int put = i == sizeof(paths) / sizeof(paths[0]);	/* last: a mesh upload */
		struct api_request req = { put ? "PUT" : "POST", put ? "/v1/meshes/u" : paths[i],
					   "application/json", (const char *)data, size, API_AUTH_WRITE };
		struct api_response resp;

		api_handle(&ctx, &req, &resp);
		if (resp.status >= 500)
			__builtin_trap();	/* bad input is never a 5xx */
		api_response_release(&resp);
	}
	return 0;
}
