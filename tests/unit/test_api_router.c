/* test_api_router.c - the error table, routing (404/405/labels), access
 * checks (401/403), path names, body limits and content types. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "store.h"

static struct api_ctx ctx;

static void setup(void)
{
	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ctx.limits = (struct api_limits){ 65536, 16u << 20, 65536, 0, 1000, 500, 0 };
	ctx.openapi_yaml = "openapi: 3.1.0\n";
	ctx.openapi_len = strlen(ctx.openapi_yaml);
}

static void teardown(void)
{
	store_free(ctx.store);
}

/* api_handle, once routing itself and once handed api_route's answer (as
 * the server does): both answers must be the same; the first is kept. PUT
 * and DELETE change the store, so they run once, with the route handed
 * over, and the callers' expectations check that answer. */
static void call(const char *method, const char *path, const char *ctype, const char *body,
		 enum api_auth auth, struct api_response *resp)
{
	struct api_request rq = { method, path, ctype, body, body ? strlen(body) : 0, auth, NULL,
				  NULL };
	struct api_route_info route;
	struct api_response again;
	size_t n1, n2;
	const char *b1, *b2;

	ck_assert_int_eq(api_route(method, path, &route), route.err);
	if (strcmp(method, "PUT") == 0 || strcmp(method, "DELETE") == 0) {
		rq.route = &route;
		api_handle(&ctx, &rq, resp);
		return;
	}
	api_handle(&ctx, &rq, resp);
	rq.route = &route;
	api_handle(&ctx, &rq, &again);
	b1 = api_response_body(resp, &n1);
	b2 = api_response_body(&again, &n2);
	ck_assert_int_eq(again.status, resp->status);
	ck_assert_uint_eq(n1, n2);
	ck_assert(n1 == 0 || memcmp(b1, b2, n1) == 0);
	ck_assert_str_eq(again.allow, resp->allow);
	ck_assert_int_eq(again.www_authenticate, resp->www_authenticate);
	ck_assert_str_eq(again.route_label ? again.route_label : "-",
			 resp->route_label ? resp->route_label : "-");
	api_response_release(&again);
}

/* status, error code (NULL: no error body expected) and a message part */
static void expect(struct api_response *r, int status, const char *code, const char *part)
{
	char want[96];

	ck_assert_msg(r->status == status, "status %d, want %d: %s", r->status, status,
		      r->body.data ? r->body.data : "");
	if (code) {
		snprintf(want, sizeof(want), "\"code\":\"%s\"", code);
		ck_assert_ptr_nonnull(r->body.data);
		ck_assert_msg(strstr(r->body.data, want), "%s lacks %s", r->body.data, want);
	}
	if (part)
		ck_assert_msg(r->body.data && strstr(r->body.data, part), "%s lacks %s",
			      r->body.data ? r->body.data : "(null)", part);
}

struct err_row {
	enum api_err e;
	int status;
	const char *code;
};

static const struct err_row err_rows[] = {
	{ API_INVALID_JSON, 400, "invalid_json" },
	{ API_INVALID_REQUEST, 400, "invalid_request" },
	{ API_INVALID_MESH, 400, "invalid_mesh" },
	{ API_UNAUTHORIZED, 401, "unauthorized" },
	{ API_FORBIDDEN, 403, "forbidden" },
	{ API_MESH_NOT_FOUND, 404, "mesh_not_found" },
	{ API_NOT_FOUND, 404, "not_found" },
	{ API_METHOD_NOT_ALLOWED, 405, "method_not_allowed" },
	{ API_PAYLOAD_TOO_LARGE, 413, "payload_too_large" },
	{ API_UNSUPPORTED_MEDIA_TYPE, 415, "unsupported_media_type" },
	{ API_NOT_READY, 503, "not_ready" },
	{ API_INTERNAL, 500, "internal" },
};

START_TEST(test_err_table)
{
	const struct err_row *row = &err_rows[_i];
	const struct api_err_info *info = api_err_info(row->e);

	ck_assert_int_eq(info->status, row->status);
	ck_assert_str_eq(info->code, row->code);
}
END_TEST

START_TEST(test_err_table_out_of_range)
{
	ck_assert_int_eq(api_err_info(API_ERR_COUNT)->status, 500);
	ck_assert_int_eq(api_err_info((enum api_err)-1)->status, 500);
	ck_assert_int_eq(api_err_info(API_OK)->status, 200);
}
END_TEST

START_TEST(test_api_error_body)
{
	struct api_response r;

	api_error(&r, API_PAYLOAD_TOO_LARGE, "body: %d bytes", 12);
	ck_assert_int_eq(r.status, 413);
	ck_assert_str_eq(r.body.data,
			 "{\"error\":{\"code\":\"payload_too_large\",\"message\":\"body: 12 bytes\"}}");
	ck_assert_str_eq(r.content_type, "application/json");
	ck_assert_str_eq(r.route_label, "unmatched");
	ck_assert_int_eq(r.www_authenticate, 0);
	api_response_release(&r);
	api_error(&r, API_UNAUTHORIZED, "who \"are\" you");
	ck_assert_int_eq(r.www_authenticate, 1);
	ck_assert_ptr_nonnull(strstr(r.body.data, "who \\\"are\\\" you"));
	api_response_release(&r);
}
END_TEST

struct route_row {
	const char *method, *path;
	enum api_err want;
	const char *label;
	enum api_access access;
	int upload;
	const char *allow;
};

static const struct route_row route_rows[] = {
	{ "GET", "/v1/openapi.yaml", API_OK, "/v1/openapi.yaml", API_ACCESS_READ, 0, "" },
	{ "GET", "/v1/meshes", API_OK, "/v1/meshes", API_ACCESS_READ, 0, "" },
	{ "PUT", "/v1/meshes/a", API_OK, "/v1/meshes/{name}", API_ACCESS_WRITE, 1, "" },
	{ "GET", "/v1/meshes/a", API_OK, "/v1/meshes/{name}", API_ACCESS_READ, 0, "" },
	{ "DELETE", "/v1/meshes/a", API_OK, "/v1/meshes/{name}", API_ACCESS_WRITE, 0, "" },
	{ "POST", "/v1/meshes/a/raycast", API_OK, "/v1/meshes/{name}/raycast", API_ACCESS_READ, 0, "" },
	{ "POST", "/v1/meshes/a/segment", API_OK, "/v1/meshes/{name}/segment", API_ACCESS_READ, 0, "" },
	{ "POST", "/v1/meshes/a/overlap", API_OK, "/v1/meshes/{name}/overlap", API_ACCESS_READ, 0, "" },
	{ "POST", "/v1/obb/raycast", API_OK, "/v1/obb/raycast", API_ACCESS_READ, 0, "" },
	{ "POST", "/v1/hitscan", API_OK, "/v1/hitscan", API_ACCESS_READ, 0, "" },
	/* world routes are labelled with the spec's own placeholder */
	{ "GET", "/v1/worlds", API_OK, "/v1/worlds", API_ACCESS_READ, 0, "" },
	{ "PUT", "/v1/worlds/m1", API_OK, "/v1/worlds/{world}", API_ACCESS_WRITE, 0, "" },
	{ "POST", "/v1/worlds/m1/snapshots", API_OK, "/v1/worlds/{world}/snapshots", API_ACCESS_WRITE, 0, "" },
	{ "POST", "/v1/worlds/m1/hitscan", API_OK, "/v1/worlds/{world}/hitscan", API_ACCESS_READ, 0, "" },
	{ "GET", "/v1/worlds/m1/raycast", API_METHOD_NOT_ALLOWED, "/v1/worlds/{world}/raycast", 0, 0, "POST" },
	{ "GET", "/v1/worlds//hitscan", API_NOT_FOUND, "unmatched", 0, 0, "" },
	{ "POST", "/v1/meshes/a", API_METHOD_NOT_ALLOWED, "/v1/meshes/{name}", 0, 0, "GET, HEAD, PUT, DELETE" },
	{ "GET", "/v1/meshes/a/raycast", API_METHOD_NOT_ALLOWED, "/v1/meshes/{name}/raycast", 0, 0, "POST" },
	{ "DELETE", "/v1/meshes", API_METHOD_NOT_ALLOWED, "/v1/meshes", 0, 0, "GET, HEAD" },
	{ "POST", "/v1/openapi.yaml", API_METHOD_NOT_ALLOWED, "/v1/openapi.yaml", 0, 0, "GET, HEAD" },
	{ "GET", "/v1/hitscan", API_METHOD_NOT_ALLOWED, "/v1/hitscan", 0, 0, "POST" },
	{ "get", "/v1/meshes", API_METHOD_NOT_ALLOWED, "/v1/meshes", 0, 0, "GET, HEAD" },
	{ "GET", "/v1/meshes/", API_NOT_FOUND, "unmatched", 0, 0, "" },
	{ "GET", "/v1/meshes/a/", API_NOT_FOUND, "unmatched", 0, 0, "" },
	{ "POST", "/v1/meshes/a/b/raycast", API_NOT_FOUND, "unmatched", 0, 0, "" },
	{ "GET", "/healthz", API_NOT_FOUND, "unmatched", 0, 0, "" },
	{ "GET", "/metrics", API_NOT_FOUND, "unmatched", 0, 0, "" },
	{ "GET", "/", API_NOT_FOUND, "unmatched", 0, 0, "" },
	{ "GET", "/V1/meshes", API_NOT_FOUND, "unmatched", 0, 0, "" },
	{ "GET", "", API_NOT_FOUND, "unmatched", 0, 0, "" },
};

START_TEST(test_route)
{
	const struct route_row *row = &route_rows[_i];
	struct api_route_info info;

	ck_assert_int_eq(api_route(row->method, row->path, &info), row->want);
	ck_assert_str_eq(info.label, row->label);
	ck_assert_str_eq(info.allow, row->allow);
	if (row->want == API_OK) {
		ck_assert_int_eq(info.access, row->access);
		ck_assert_int_eq(info.mesh_upload, row->upload);
	}
}
END_TEST

/* The patterns, as the contract names them (openapi.yaml's paths). */
static const char *const patterns[] = {
	"/v1/openapi.yaml", "/v1/meshes", "/v1/meshes/{name}", "/v1/meshes/{name}/raycast",
	"/v1/meshes/{name}/segment", "/v1/meshes/{name}/overlap", "/v1/obb/raycast",
	"/v1/hitscan", "/v1/worlds", "/v1/worlds/{world}", "/v1/worlds/{world}/snapshots",
	"/v1/worlds/{world}/hitscan", "/v1/worlds/{world}/raycast",
};

/* Reference matcher, byte by byte: a "{...}" matches one non-empty run of
 * bytes other than '/'. */
static int ref_match(const char *pattern, const char *path)
{
	while (*pattern) {
		if (*pattern == '{') {
			size_t n = strcspn(path, "/");

			if (n == 0)
				return 0;
			path += n;
			pattern = strchr(pattern, '}') + 1;
			continue;
		}
		if (*pattern++ != *path++)
			return 0;
	}
	return *path == '\0';
}

/* Random paths built from the patterns' pieces, stray slashes and bytes:
 * the router finds the pattern the reference finds, or none. */
START_TEST(test_route_matches_reference)
{
	static const char *const pieces[] = {
		"/", "/", "/", "v1", "meshes", "worlds", "openapi.yaml", "obb", "raycast",
		"segment", "overlap", "hitscan", "snapshots", "lvl", "a.b-c_1", "", "//", "v2",
		"{name}", "%00", "meshes/", "x",
	};
	unsigned seed = 4242;
	int i, matched = 0;

	for (i = 0; i < 50000; i++) {
		char path[160] = "";
		struct api_route_info info;
		const char *want = "unmatched";
		size_t k, np = 1 + (size_t)(rand_r(&seed) % 9);

		if (rand_r(&seed) % 2) {
			/* a pattern with its placeholder filled, now and then bent */
			const char *pt = patterns[rand_r(&seed) % (sizeof(patterns) / sizeof(patterns[0]))];
			const char *open = strchr(pt, '{');
			const char *fill = rand_r(&seed) % 4 ? "lvl" :
				pieces[rand_r(&seed) % (sizeof(pieces) / sizeof(pieces[0]))];

			if (open) {
				strncat(path, pt, (size_t)(open - pt));
				strcat(path, fill);
				strcat(path, strchr(open, '}') + 1);
			} else {
				strcat(path, pt);
			}
			if (rand_r(&seed) % 4 == 0)
				strcat(path, pieces[rand_r(&seed) % (sizeof(pieces) / sizeof(pieces[0]))]);
			np = 0;
		} else if (rand_r(&seed) % 2) {
			strcat(path, "/v1");
		}
		for (k = 0; k < np; k++)
			strcat(path, pieces[rand_r(&seed) % (sizeof(pieces) / sizeof(pieces[0]))]);
		for (k = 0; k < sizeof(patterns) / sizeof(patterns[0]); k++)
			if (ref_match(patterns[k], path)) {
				want = patterns[k];
				break;
			}
		api_route("GET", path, &info);
		ck_assert_msg(strcmp(info.label, want) == 0, "%s: got %s, want %s", path,
			      info.label, want);
		matched += strcmp(want, "unmatched") != 0;
	}
	ck_assert_int_gt(matched, 2000);
}
END_TEST

START_TEST(test_handle_404_405)
{
	struct api_response r;

	call("GET", "/v2/x", NULL, NULL, API_AUTH_WRITE, &r);
	expect(&r, 404, "not_found", NULL);
	ck_assert_str_eq(r.route_label, "unmatched");
	api_response_release(&r);
	call("PATCH", "/v1/meshes/a", NULL, NULL, API_AUTH_WRITE, &r);
	expect(&r, 405, "method_not_allowed", "GET, HEAD, PUT, DELETE");
	ck_assert_str_eq(r.allow, "GET, HEAD, PUT, DELETE");
	ck_assert_str_eq(r.route_label, "/v1/meshes/{name}");
	api_response_release(&r);
}
END_TEST

START_TEST(test_auth)
{
	struct api_response r;

	call("GET", "/v1/meshes", NULL, NULL, API_AUTH_NONE, &r);
	expect(&r, 401, "unauthorized", NULL);
	ck_assert_int_eq(r.www_authenticate, 1);
	api_response_release(&r);
	call("GET", "/v1/meshes", NULL, NULL, API_AUTH_READ, &r);
	expect(&r, 200, NULL, "{\"meshes\":[]}");
	ck_assert_int_eq(r.www_authenticate, 0);
	api_response_release(&r);
	call("PUT", "/v1/meshes/a", "model/obj", "v 0 0 0\n", API_AUTH_READ, &r);
	expect(&r, 403, "forbidden", NULL);
	api_response_release(&r);
	call("DELETE", "/v1/meshes/a", NULL, NULL, API_AUTH_READ, &r);
	expect(&r, 403, "forbidden", NULL);
	api_response_release(&r);
	call("DELETE", "/v1/meshes/a", NULL, NULL, API_AUTH_NONE, &r);
	expect(&r, 401, "unauthorized", NULL);
	api_response_release(&r);
	call("POST", "/v1/hitscan", NULL, "{}", API_AUTH_NONE, &r);
	expect(&r, 401, "unauthorized", NULL);
	api_response_release(&r);
	/* the spec itself needs a key too (every /v1 route does) */
	call("GET", "/v1/openapi.yaml", NULL, NULL, API_AUTH_NONE, &r);
	expect(&r, 401, "unauthorized", NULL);
	api_response_release(&r);
	/* unknown /v1 paths and wrong methods too: no route probing without a key */
	call("GET", "/v1/nope", NULL, NULL, API_AUTH_NONE, &r);
	expect(&r, 401, "unauthorized", NULL);
	ck_assert(r.www_authenticate);
	api_response_release(&r);
	call("PATCH", "/v1/meshes/a", NULL, NULL, API_AUTH_NONE, &r);
	expect(&r, 401, "unauthorized", NULL);
	api_response_release(&r);
	/* with a key the same paths are 404 and 405 */
	call("GET", "/v1/nope", NULL, NULL, API_AUTH_READ, &r);
	expect(&r, 404, "not_found", NULL);
	api_response_release(&r);
	call("PATCH", "/v1/meshes/a", NULL, NULL, API_AUTH_READ, &r);
	expect(&r, 405, "method_not_allowed", NULL);
	api_response_release(&r);
}
END_TEST

/* api_access, the policy the server applies before reading a body: every
 * path x route access x credentials against the rule written out here. */
START_TEST(test_access_policy)
{
	static const char *const paths[] = { "/v1", "/v1/", "/v1/meshes", "/v1/nope", "/healthz",
					     "/v1x", "/" };
	static const enum api_access accs[] = { API_ACCESS_OPEN, API_ACCESS_READ, API_ACCESS_WRITE };
	static const enum api_auth auths[] = { API_AUTH_NONE, API_AUTH_READ, API_AUTH_WRITE };
	size_t p, a, u;

	for (p = 0; p < sizeof(paths) / sizeof(paths[0]); p++)
		for (a = 0; a < 3; a++)
			for (u = 0; u < 3; u++) {
				int v1 = strcmp(paths[p], "/v1") == 0 || strncmp(paths[p], "/v1/", 4) == 0;
				enum api_access need = accs[a] == API_ACCESS_OPEN && v1 ? API_ACCESS_READ : accs[a];
				enum api_err want = API_OK, got;
				const char *msg = NULL;

				if (need != API_ACCESS_OPEN && auths[u] == API_AUTH_NONE)
					want = API_UNAUTHORIZED;
				else if (need == API_ACCESS_WRITE && auths[u] != API_AUTH_WRITE)
					want = API_FORBIDDEN;
				got = api_access(paths[p], accs[a], auths[u], &msg);
				ck_assert_msg(got == want, "%s access %d auth %d: %d, want %d", paths[p],
					      accs[a], auths[u], got, want);
				if (want)
					ck_assert(msg && strstr(msg, want == API_UNAUTHORIZED ?
								"bearer key" : "may only query"));
			}
}
END_TEST

START_TEST(test_openapi)
{
	struct api_response r;

	call("GET", "/v1/openapi.yaml", NULL, NULL, API_AUTH_READ, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.content_type, "application/yaml");
	ck_assert_str_eq(r.body.data, "openapi: 3.1.0\n");
	api_response_release(&r);
}
END_TEST

static const char *const bad_names[] = {
	".hidden", "a%20b", "a b", "caf\xc3\xa9", "a*",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",	/* 65 */
};

START_TEST(test_bad_name)
{
	struct api_response r;
	char path[128];

	snprintf(path, sizeof(path), "/v1/meshes/%s", bad_names[_i]);
	call("GET", path, NULL, NULL, API_AUTH_WRITE, &r);
	expect(&r, 400, "invalid_request", "name:");
	api_response_release(&r);
	snprintf(path, sizeof(path), "/v1/meshes/%s/raycast", bad_names[_i]);
	call("POST", path, NULL, "{}", API_AUTH_WRITE, &r);
	expect(&r, 400, "invalid_request", "name:");
	api_response_release(&r);
}
END_TEST

START_TEST(test_good_names)
{
	struct api_response r;

	call("GET", "/v1/meshes/a.b-c_D9", NULL, NULL, API_AUTH_WRITE, &r);
	expect(&r, 404, "mesh_not_found", "a.b-c_D9");
	api_response_release(&r);
	call("GET", "/v1/meshes/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL, NULL,
	     API_AUTH_WRITE, &r);
	expect(&r, 404, "mesh_not_found", NULL);
	api_response_release(&r);
}
END_TEST

START_TEST(test_body_limits)
{
	struct api_response r;
	char big[700];

	memset(big, ' ', sizeof(big) - 1);
	big[0] = '{';
	big[sizeof(big) - 2] = '}';
	big[sizeof(big) - 1] = '\0';
	call("POST", "/v1/hitscan", NULL, big, API_AUTH_WRITE, &r);	/* query limit 500 */
	expect(&r, 413, "payload_too_large", "limit is 500");
	api_response_release(&r);
	/* the same size is fine for an upload (limit 1000): it fails later */
	call("PUT", "/v1/meshes/a", "application/json", big, API_AUTH_WRITE, &r);
	expect(&r, 400, "invalid_request", "vertices: required");
	api_response_release(&r);
}
END_TEST

struct ct_row {
	const char *method, *path, *ctype;
	int status;
};

static const struct ct_row ct_rows[] = {
	{ "POST", "/v1/hitscan", "application/x-www-form-urlencoded", 415 },
	{ "POST", "/v1/hitscan", "text/plain", 415 },
	{ "POST", "/v1/hitscan", "application/jsonx", 415 },
	{ "POST", "/v1/hitscan", "application/jso", 415 },
	{ "POST", "/v1/hitscan", "application/json\t", 200 },
	{ "POST", "/v1/hitscan", "application/json", 200 },
	{ "POST", "/v1/hitscan", "Application/JSON; charset=utf-8", 200 },
	{ "POST", "/v1/hitscan", " application/json ;charset=UTF-8", 200 },
	{ "POST", "/v1/hitscan", NULL, 200 },
	{ "POST", "/v1/hitscan", "", 200 },
	/* raycast takes binary rays too: a JSON body sent as them is refused */
	{ "POST", "/v1/meshes/t/raycast", "application/json", 404 },
	{ "POST", "/v1/meshes/t/raycast", "application/octet-stream", 400 },
	{ "POST", "/v1/meshes/t/raycast", "Application/Octet-Stream ; x=1", 400 },
	{ "POST", "/v1/meshes/t/raycast", "application/octet-streamx", 415 },
	{ "PUT", "/v1/meshes/t", NULL, 415 },
	{ "PUT", "/v1/meshes/t", "text/plain", 415 },
	{ "PUT", "/v1/meshes/t", "application/octet-stream", 415 },
	{ "PUT", "/v1/meshes/t", "model/obj", 201 },
	{ "PUT", "/v1/meshes/t", "MODEL/OBJ; charset=utf-8", 201 },
};

START_TEST(test_content_type)
{
	const struct ct_row *row = &ct_rows[_i];
	struct api_response r;
	const char *body = row->method[1] == 'U' ? "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
						 : "{\"origin\":[0,0,0],\"direction\":[1,0,0]}";

	call(row->method, row->path, row->ctype, body, API_AUTH_WRITE, &r);
	expect(&r, row->status, row->status == 415 ? "unsupported_media_type" : NULL, NULL);
	if (row->status == 415 && row->method[1] == 'O')
		expect(&r, 415, NULL, "application/json");
	if (row->status == 415 && row->method[1] == 'U')
		expect(&r, 415, NULL, "model/obj");
	api_response_release(&r);
}
END_TEST

/* api_path_needs_key against its definition ("/v1" or under "/v1/") on
 * every string of up to five bytes from a small alphabet. */
START_TEST(test_path_needs_key)
{
	static const char alpha[] = "/v1xV";
	char path[6];
	int len, k, idx, total = 1;

	for (len = 0; len <= 5; len++, total *= 5) {
		for (idx = 0; idx < total; idx++) {
			int x = idx;

			for (k = 0; k < len; k++, x /= 5)
				path[k] = alpha[x % 5];
			path[len] = '\0';
			ck_assert_int_eq(api_path_needs_key(path),
					 strcmp(path, "/v1") == 0 || strncmp(path, "/v1/", 4) == 0);
		}
	}
}
END_TEST

static Suite *router_suite(void)
{
	Suite *s = suite_create("api_router");
	TCase *tc = tcase_create("router");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_err_table, 0, (int)(sizeof(err_rows) / sizeof(err_rows[0])));
	tcase_add_test(tc, test_err_table_out_of_range);
	tcase_add_test(tc, test_route_matches_reference);
	tcase_add_test(tc, test_api_error_body);
	tcase_add_loop_test(tc, test_route, 0, (int)(sizeof(route_rows) / sizeof(route_rows[0])));
	tcase_add_test(tc, test_handle_404_405);
	tcase_add_test(tc, test_access_policy);
	tcase_add_test(tc, test_path_needs_key);
	tcase_add_test(tc, test_auth);
	tcase_add_test(tc, test_openapi);
	tcase_add_loop_test(tc, test_bad_name, 0, (int)(sizeof(bad_names) / sizeof(bad_names[0])));
	tcase_add_test(tc, test_good_names);
	tcase_add_test(tc, test_body_limits);
	tcase_add_loop_test(tc, test_content_type, 0, (int)(sizeof(ct_rows) / sizeof(ct_rows[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(router_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
