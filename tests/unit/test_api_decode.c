/* test_api_decode.c - every malformed body gets the exact status, code and a
 * message naming the field path; strict JSON; api_json_parse_in directly. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "decode.h"
#include "store.h"

static struct api_ctx ctx;

static const char cube_json[] =
	"{\"vertices\":[[-1,-1,-1],[1,-1,-1],[1,1,-1],[-1,1,-1],[-1,-1,1],[1,-1,1],[1,1,1],[-1,1,1]],"
	"\"triangles\":[[0,2,1],[0,3,2],[4,5,6],[4,6,7],[0,1,5],[0,5,4],[2,3,7],[2,7,6],"
	"[1,2,6],[1,6,5],[0,4,7],[0,7,3]]}";

static void call_n(const char *method, const char *path, const char *ctype, const char *body,
		   size_t len, struct api_response *resp)
{
	struct api_request rq = { method, path, ctype, body, len, API_AUTH_WRITE, NULL, NULL };

	api_handle(&ctx, &rq, resp);
}

static void setup(void)
{
	struct api_response r;

	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ctx.limits = (struct api_limits){ 4, 100, 3, 0, 1 << 20, 1 << 20, 0 };
	call_n("PUT", "/v1/meshes/cube", "application/json", cube_json, strlen(cube_json), &r);
	ck_assert_int_eq(r.status, 201);
	api_response_release(&r);
}

static void teardown(void)
{
	store_free(ctx.store);
}

struct bad_row {
	const char *path;	/* POST unless it is a mesh path (PUT) */
	const char *body;
	int status;
	const char *code;
	const char *part;	/* must appear in the message */
};

#define RC "/v1/meshes/cube/raycast"
#define SG "/v1/meshes/cube/segment"
#define OV "/v1/meshes/cube/overlap"
#define OB "/v1/obb/raycast"
#define HS "/v1/hitscan"
#define PUT "/v1/meshes/m"
#define RAY "\"origin\":[0,0,5],\"direction\":[0,0,-1]"
#define BOX "{\"center\":[0,0,0],\"half_extents\":[1,1,1]}"

static const struct bad_row bad_rows[] = {
	/* JSON syntax */
	{ RC, "", 400, "invalid_json", "empty" },
	{ RC, "{", 400, "invalid_json", "byte 1" },
	{ RC, "{\"origin\":[01,0,5]}", 400, "invalid_json", "leading zero" },
	{ RC, "{\"origin\":[1.,0,5]}", 400, "invalid_json", "decimal point" },
	{ RC, "{\"origin\":[-,0,5]}", 400, "invalid_json", "byte 12" },
	{ RC, "{\"origin\":[1e,0,5]}", 400, "invalid_json", "exponent" },
	{ RC, "{\"origin\":[.5,0,5]}", 400, "invalid_json", NULL },
	{ RC, "{\"origin\":[+1,0,5]}", 400, "invalid_json", NULL },
	{ RC, "{\"a\":\"x\ty\"}", 400, "invalid_json", "control character" },
	{ RC, "{\"a\":\"\xff\"}", 400, "invalid_json", "UTF-8" },
	{ RC, "{\"a\":\"\xc0\xaf\"}", 400, "invalid_json", "UTF-8" },
	{ RC, "{\"a\":\"\xed\xa0\x80\"}", 400, "invalid_json", "UTF-8" },
	{ RC, "{\"a\":\"\\ud800\"}", 400, "invalid_json", "surrogate" },
	{ RC, "{\"a\":\"\\udc00x\"}", 400, "invalid_json", "surrogate" },
	{ RC, "{\"a\":\"\\x\"}", 400, "invalid_json", "escape" },
	{ RC, "{\"a\":\"\\u12g4\"}", 400, "invalid_json", "escape" },
	{ RC, "{\"a\":\"\\u0000\"}", 400, "invalid_request", "\\\\u0000" },
	{ RC, "{\"a\":1,}", 400, "invalid_json", NULL },
	{ RC, "[1,]", 400, "invalid_json", NULL },
	{ RC, "{'a':1}", 400, "invalid_json", NULL },
	{ RC, "{\"a\":1} x", 400, "invalid_json", "after the JSON value" },
	{ RC, "{\"a\":1}{}", 400, "invalid_json", "byte 7" },
	{ RC, "{\"a\":tru}", 400, "invalid_json", NULL },
	{ RC, "{\"a\":NaN}", 400, "invalid_json", NULL },
	{ RC, "\xef\xbb\xbf{}", 400, "invalid_json", NULL },
	{ RC, "{\"a\":1/*c*/}", 400, "invalid_json", NULL },
	{ RC, "{\"origin\":[0.00000000000000000000000000000000000000000000000000000000000000000000001,0,0]}",
	  400, "invalid_request", "63 characters" },
	{ RC, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	  400, "invalid_request", "nested" },
	/* shape: the body */
	{ RC, "[]", 400, "invalid_request", "body: must be an object" },
	{ RC, "null", 400, "invalid_request", "body: must be an object" },
	{ RC, "{}", 400, "invalid_request", "origin: required" },
	/* unknown, duplicate, case */
	{ RC, "{" RAY ",\"max_distnace\":3}", 400, "invalid_request", "max_distnace: unknown field" },
	{ RC, "{" RAY ",\"Origin\":[0,0,0]}", 400, "invalid_request", "Origin: unknown field" },
	{ RC, "{" RAY ",\"origin\":[0,0,1]}", 400, "invalid_request", "origin: duplicate key" },
	{ RC, "{\"rays\":[{" RAY ",\"mode\":\"all\"}]}", 400, "invalid_request", "rays[0].mode: unknown field" },
	{ RC, "{\"rays\":[{" RAY "},{" RAY ",\"x\":1}]}", 400, "invalid_request", "rays[1].x: unknown field" },
	/* vectors and numbers */
	{ RC, "{\"origin\":[0,0],\"direction\":[0,0,1]}", 400, "invalid_request", "origin: must be 3 finite numbers" },
	{ RC, "{\"origin\":[0,0,0,0],\"direction\":[0,0,1]}", 400, "invalid_request", "origin: must be 3 finite numbers" },
	{ RC, "{\"origin\":[0,\"1\",0],\"direction\":[0,0,1]}", 400, "invalid_request", "origin: must be 3 finite numbers" },
	{ RC, "{\"origin\":[0,1e400,0],\"direction\":[0,0,1]}", 400, "invalid_request", "origin: must be 3 finite numbers" },
	{ RC, "{\"origin\":[0,1e39,0],\"direction\":[0,0,1]}", 400, "invalid_request", "origin: must be 3 finite numbers within the float32" },
	{ RC, "{\"origin\":{\"x\":0},\"direction\":[0,0,1]}", 400, "invalid_request", "origin: must be 3" },
	{ RC, "{\"origin\":[0,0,0],\"direction\":[0,0,0]}", 400, "invalid_request", "direction: must not be zero" },
	{ RC, "{\"origin\":[0,0,0]}", 400, "invalid_request", "direction: required" },
	{ RC, "{" RAY ",\"max_distance\":0}", 400, "invalid_request", "max_distance: must be a number > 0" },
	{ RC, "{" RAY ",\"max_distance\":-1}", 400, "invalid_request", "max_distance: must be a number > 0" },
	{ RC, "{" RAY ",\"max_distance\":\"5\"}", 400, "invalid_request", "max_distance: must be a number > 0" },
	{ RC, "{\"rays\":[{" RAY "},{\"origin\":[0,0,5],\"direction\":[0,0,0]}]}", 400, "invalid_request", "rays[1].direction: must not be zero" },
	{ RC, "{\"rays\":[{" RAY "},{" RAY "},{" RAY "},{\"origin\":[0,0,5],\"direction\":[0,\"a\",0]}]}", 400, "invalid_request", "rays[3].direction: must be 3 finite numbers" },
	/* forms and options */
	{ RC, "{" RAY ",\"rays\":[]}", 400, "invalid_request", "not both" },
	{ RC, "{\"rays\":{}}", 400, "invalid_request", "rays: must be an array" },
	{ RC, "{\"rays\":[1]}", 400, "invalid_request", "rays[0]: must be an object" },
	{ RC, "{\"rays\":[{" RAY "},{" RAY "},{" RAY "},{" RAY "},{" RAY "}]}", 413, "payload_too_large", "rays: 5 entries, the limit is 4" },
	{ RC, "{" RAY ",\"mode\":\"first\"}", 400, "invalid_request", "mode: must be \\\"closest\\\", \\\"any\\\" or \\\"all\\\"" },
	{ RC, "{" RAY ",\"mode\":\"Closest\"}", 400, "invalid_request", "mode:" },
	{ RC, "{" RAY ",\"max_hits\":3}", 400, "invalid_request", "max_hits: only with mode" },
	{ RC, "{" RAY ",\"mode\":\"all\",\"max_hits\":0}", 400, "invalid_request", "max_hits: must be an integer in [1, 65536]" },
	{ RC, "{" RAY ",\"mode\":\"all\",\"max_hits\":1.5}", 400, "invalid_request", "max_hits: must be an integer" },
	{ RC, "{" RAY ",\"mode\":\"all\",\"max_hits\":4294967297}", 400, "invalid_request", "max_hits: must be an integer" },
	{ RC, "{" RAY ",\"backfaces\":true}", 400, "invalid_request", "backfaces: must be \\\"hit\\\" or \\\"cull\\\"" },
	/* transform */
	{ RC, "{" RAY ",\"transform\":[]}", 400, "invalid_request", "transform: must be an object" },
	{ RC, "{" RAY ",\"transform\":{\"pos\":[0,0,0]}}", 400, "invalid_request", "transform.pos: unknown field" },
	{ RC, "{" RAY ",\"transform\":{\"position\":[0,0,0],\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}}", 400, "invalid_request", "transform: give matrix or position/rotation/scale, not both" },
	{ RC, "{" RAY ",\"transform\":{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0]}}", 400, "invalid_request", "transform.matrix: must be 16 finite numbers" },
	{ RC, "{" RAY ",\"transform\":{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,1,1]}}", 400, "invalid_request", "transform.matrix: last row" },
	{ RC, "{" RAY ",\"transform\":{\"matrix\":[1,0,0,0,0,0,0,0,0,0,1,0,0,0,0,1]}}", 400, "invalid_request", "transform.matrix: must be invertible" },
	{ RC, "{" RAY ",\"transform\":{\"rotation\":[0,0,0,0]}}", 400, "invalid_request", "transform.rotation: must not be zero" },
	{ RC, "{" RAY ",\"transform\":{\"rotation\":[1,0,0]}}", 400, "invalid_request", "transform.rotation: must be 4 finite numbers" },
	{ RC, "{" RAY ",\"transform\":{\"scale\":[1,0,1]}}", 400, "invalid_request", "transform.scale: components must not be zero" },
	{ RC, "{" RAY ",\"transform\":{\"position\":[1,2]}}", 400, "invalid_request", "transform.position: must be 3 finite numbers" },
	/* segments */
	{ SG, "{\"start\":[0,0,0],\"end\":[0,0,0]}", 400, "invalid_request", "end: must differ from start" },
	{ SG, "{\"segments\":[{\"start\":[0,0,0],\"end\":[0,0,1]},{\"start\":[1,1,1],\"end\":[1,1,1]}]}", 400, "invalid_request", "segments[1].end: must differ" },
	{ SG, "{\"start\":[0,0,0]}", 400, "invalid_request", "end: required" },
	{ SG, "{" RAY "}", 400, "invalid_request", "origin: unknown field" },
	{ SG, "{\"start\":[0,0,0],\"end\":[0,0,1],\"segments\":[]}", 400, "invalid_request", "not both" },
	/* boxes */
	{ OB, "{" RAY "}", 400, "invalid_request", "boxes: required" },
	{ OB, "{" RAY ",\"boxes\":{}}", 400, "invalid_request", "boxes: must be an array" },
	{ OB, "{" RAY ",\"boxes\":[" BOX "," BOX "," BOX "," BOX "]}", 413, "payload_too_large", "boxes: 4 boxes, the limit is 3" },
	{ OB, "{" RAY ",\"boxes\":[" BOX ",{\"center\":[0,0,0]}]}", 400, "invalid_request", "boxes[1].half_extents: required" },
	{ OB, "{" RAY ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,-1,1]}]}", 400, "invalid_request", "boxes[0].half_extents: components must be >= 0" },
	{ OB, "{" RAY ",\"boxes\":[{\"id\":7,\"center\":[0,0,0],\"half_extents\":[1,1,1]}]}", 400, "invalid_request", "boxes[0].id: must be a string" },
	{ OB, "{" RAY ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,1,1],\"rotation\":[1,0,0,0],\"axes\":[[1,0,0],[0,1,0],[0,0,1]]}]}", 400, "invalid_request", "boxes[0]: give rotation or axes, not both" },
	{ OB, "{" RAY ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,1,1],\"axes\":[[1,0,0],[1,0,0],[0,0,1]]}]}", 400, "invalid_request", "boxes[0].axes: must be 3 orthonormal" },
	{ OB, "{" RAY ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,1,1],\"axes\":[[1,0,0],[0,1]]}]}", 400, "invalid_request", "boxes[0].axes: must be 3 vectors" },
	{ OB, "{" RAY ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,1,1],\"axes\":[[1,0,0],[0,1],[0,0,1]]}]}", 400, "invalid_request", "boxes[0].axes[1]: must be 3 finite numbers" },
	{ OB, "{" RAY ",\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,1,1],\"rotation\":[0,0,0,0]}]}", 400, "invalid_request", "boxes[0].rotation: must not be zero" },
	{ OB, "{" RAY ",\"boxes\":[{\"centre\":[0,0,0],\"half_extents\":[1,1,1]}]}", 400, "invalid_request", "boxes[0].centre: unknown field" },
	/* overlap */
	{ OV, "{}", 400, "invalid_request", "box: required" },
	{ OV, "{\"box\":" BOX ",\"limit\":-1}", 400, "invalid_request", "limit: must be an integer" },
	{ OV, "{\"box\":" BOX ",\"transform\":{}}", 400, "invalid_request", "transform: unknown field" },
	{ OV, "{\"box\":{\"center\":[0,0,0]}}", 400, "invalid_request", "box.half_extents: required" },
	/* hitscan */
	{ HS, "{" RAY ",\"mesh\":\"../x\"}", 400, "invalid_request", "mesh: must be a mesh name" },
	{ HS, "{" RAY ",\"mesh\":5}", 400, "invalid_request", "mesh: must be a mesh name" },
	{ HS, "{" RAY ",\"mesh\":\"nope\"}", 404, "mesh_not_found", "nope" },
	{ HS, "{" RAY ",\"transform\":{}}", 400, "invalid_request", "transform: only with mesh" },
	{ HS, "{\"shots\":[{" RAY "},{\"origin\":[0,0,5]}]}", 400, "invalid_request", "shots[1].direction: required" },
	{ HS, "{\"shots\":[{" RAY "}]," RAY "}", 400, "invalid_request", "not both" },
	{ HS, "{" RAY ",\"mode\":\"all\"}", 400, "invalid_request", "mode: unknown field" },
	/* mesh upload (JSON) */
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]]}", 400, "invalid_request", "triangles: required" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[]}", 400, "invalid_mesh", "triangles: no triangles" },
	{ PUT, "{\"vertices\":[],\"triangles\":[[0,1,2]]}", 400, "invalid_mesh", "vertices: no vertices" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2],[0,1,3]]}", 400, "invalid_mesh", "triangles[1]: index 3 out of range" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,-1]]}", 400, "invalid_mesh", "triangles[0]: index -1 out of range" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,1.5]]}", 400, "invalid_request", "triangles[0]: indices must be integers" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1]]}", 400, "invalid_request", "triangles[0]: must be 3 integer indices" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[0,1,2,[0,1,2],0,1]}", 400, "invalid_request", "do not mix" },
	{ PUT, "{\"vertices\":[[0,0,0],1,0,0,[0,1,0]],\"triangles\":[[0,1,2]]}", 400, "invalid_request", "vertices[1]: must be [x, y, z]" },
	{ PUT, "{\"vertices\":[0,0,0,1,0,0,[0,1,0]],\"triangles\":[[0,1,2]]}", 400, "invalid_request", "flat form needs a multiple of 3" },
	{ PUT, "{\"vertices\":[0,0,0,1,0,0,0,1,[0]],\"triangles\":[[0,1,2]]}", 400, "invalid_request", "vertices[8]: must be a number" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,1e400],[0,1,0]],\"triangles\":[[0,1,2]]}", 400, "invalid_mesh", "vertices[1]: non-finite" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,1e39],[0,1,0]],\"triangles\":[[0,1,2]]}", 400, "invalid_mesh", "vertices[1]: coordinate outside" },
	{ PUT, "{\"vertices\":[0,0,0,1,0,0,0,1,1e300],\"triangles\":[0,1,2]}", 400, "invalid_mesh", "vertices[2]" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2]],\"normals\":[]}", 400, "invalid_request", "normals: unknown field" },
	{ PUT, "{\"vertices\":[[0,0,0],[1,0,0],[0,1,0]],\"triangles\":[[0,1,2]],\"vertices\":[]}", 400, "invalid_request", "vertices: duplicate key" },
	{ PUT, "{\"vertices\":\"x\",\"triangles\":[[0,1,2]]}", 400, "invalid_request", "vertices: must be an array" },
};

START_TEST(test_bad_body)
{
	const struct bad_row *row = &bad_rows[_i];
	int put = strcmp(row->path, PUT) == 0;
	struct api_response r;
	char want[64];

	call_n(put ? "PUT" : "POST", row->path, put ? "application/json" : NULL, row->body,
	       strlen(row->body), &r);
	ck_assert_msg(r.status == row->status, "row %d: status %d, want %d: %s", _i, r.status,
		      row->status, r.body.data);
	snprintf(want, sizeof(want), "{\"error\":{\"code\":\"%s\",\"message\":", row->code);
	ck_assert_msg(strncmp(r.body.data, want, strlen(want)) == 0, "row %d: %s", _i, r.body.data);
	if (row->part)
		ck_assert_msg(strstr(r.body.data, row->part), "row %d: %s lacks %s", _i, r.body.data,
			      row->part);
	ck_assert_str_eq(r.content_type, "application/json");
	api_response_release(&r);
}
END_TEST

/* A NUL byte inside the body is not JSON (and not the end of it). */
START_TEST(test_embedded_nul)
{
	struct api_response r;
	static const char body[] = "{\"origin\":[0,0,5],\"direction\":[0,0,-1]}\0{}";

	call_n("POST", RC, NULL, body, sizeof(body) - 1, &r);
	ck_assert_int_eq(r.status, 400);
	ck_assert_ptr_nonnull(strstr(r.body.data, "invalid_json"));
	api_response_release(&r);
}
END_TEST

/* Bodies that are valid and must pass: null options, whitespace, escapes. */
static const char *const good_bodies[] = {
	"{" RAY "}",
	" \t\r\n{" RAY "} \n",
	"{" RAY ",\"max_distance\":null,\"mode\":null,\"transform\":null}",
	"{" RAY ",\"max_distance\":1e300}",
	"{" RAY ",\"max_distance\":1E-3}",
	"{\"origin\":[-0,0.0,5e0],\"direction\":[0,0,-1e-300]}",
	"{\"rays\":[]}",
	"{\"rays\":[{" RAY ",\"max_distance\":2}]}",
	"{" RAY ",\"mode\":\"all\",\"max_hits\":65536}",
	"{" RAY ",\"transform\":{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}}",
	"{" RAY ",\"transform\":{}}",
};

START_TEST(test_good_body)
{
	struct api_response r;

	call_n("POST", RC, "application/json", good_bodies[_i], strlen(good_bodies[_i]), &r);
	ck_assert_msg(r.status == 200, "%s -> %d %s", good_bodies[_i], r.status, r.body.data);
	api_response_release(&r);
}
END_TEST

START_TEST(test_json_parse_direct)
{
	static const char emoji[] = "{\"k\":\"\\ud83d\\ude00 \xf0\x9f\x98\x80\"}";
	struct json_arena a = JSON_ARENA_INIT;
	struct api_fail f;
	cJSON *root;

	ck_assert_int_eq(api_json_parse_in(emoji, strlen(emoji), &a, &root, &f), API_OK);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "k")->valuestring,
			 "\xf0\x9f\x98\x80 \xf0\x9f\x98\x80");
	ck_assert_int_eq(api_json_parse_in("{\"a\":[1,2]}   ", 14, &a, &root, &f), API_OK);
	ck_assert_int_eq(api_json_parse_in("{\"a\":[1,2]} x", 13, &a, &root, &f), API_INVALID_JSON);
	ck_assert_ptr_null(root);
	ck_assert_str_eq(f.msg, "body: unexpected data after the JSON value at byte 12");
	ck_assert_int_eq(api_json_parse_in(NULL, 0, &a, &root, &f), API_INVALID_JSON);
	/* only the first len bytes count */
	ck_assert_int_eq(api_json_parse_in("{}garbage", 2, &a, &root, &f), API_OK);
	json_arena_release(&a);
}
END_TEST

static Suite *decode_suite(void)
{
	Suite *s = suite_create("api_decode");
	TCase *tc = tcase_create("decode");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_bad_body, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	tcase_add_test(tc, test_embedded_nul);
	tcase_add_loop_test(tc, test_good_body, 0, (int)(sizeof(good_bodies) / sizeof(good_bodies[0])));
	tcase_add_test(tc, test_json_parse_direct);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(decode_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
