/* test_api_mesh.c - mesh resources through api_handle: upload (JSON nested
 * and flat, OBJ, STL), replace, list, get, delete, persistence hooks, limits. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "api.h"
#include "store.h"

static struct api_ctx ctx;

struct persist_log {
	int puts, deletes, fail_put, fail_delete;
	char last[80];
	size_t nvert, ntri;
	uint64_t version;	/* the last put's */
	const char *only_stored;	/* a name the durable store holds, memory not */
};

static int fake_put(void *cls, const char *name, const float *xyz, size_t nvert,
		    const uint32_t *idx, size_t ntri, uint64_t version)
{
	struct persist_log *l = cls;

	l->puts++;
	l->version = version;
	snprintf(l->last, sizeof(l->last), "%s", name);
	l->nvert = nvert;
	l->ntri = ntri;
	return l->fail_put;
}

/* The durable store holds what memory holds, and only_stored. */
static int fake_delete(void *cls, const char *name)
{
	struct persist_log *l = cls;
	struct mesh *m;

	l->deletes++;
	snprintf(l->last, sizeof(l->last), "%s", name);
	if (l->fail_delete)
		return l->fail_delete;
	m = store_get(ctx.store, name, NULL);
	mesh_unref(m);
	if (!m && !(l->only_stored && strcmp(l->only_stored, name) == 0))
		return API_PERSIST_ABSENT;
	if (!m)
		l->only_stored = NULL;
	return API_PERSIST_OK;
}

static struct persist_log plog;

/* Lock hooks that record nesting: a persist call outside the lock, or an
 * unbalanced pair, shows up in the counts. */
static int locked, lock_calls, unlocked_persist;

static void fake_lock(void *cls, const char *name)
{
	ck_assert_int_eq(locked, 0);
	locked = 1;
	lock_calls++;
}

static void fake_unlock(void *cls, const char *name)
{
	ck_assert_int_eq(locked, 1);
	locked = 0;
}

static int locked_put(void *cls, const char *name, const float *xyz, size_t nvert,
		      const uint32_t *idx, size_t ntri, uint64_t version)
{
	if (!locked)
		unlocked_persist++;
	return fake_put(cls, name, xyz, nvert, idx, ntri, version);
}

static int locked_delete(void *cls, const char *name)
{
	if (!locked)
		unlocked_persist++;
	return fake_delete(cls, name);
}

static void setup(void)
{
	memset(&ctx, 0, sizeof(ctx));
	memset(&plog, 0, sizeof(plog));
	locked = lock_calls = unlocked_persist = 0;
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ctx.limits = (struct api_limits){ 65536, 16u << 20, 65536, 0, 1u << 28, 1u << 24, 0 };
}

static void teardown(void)
{
	store_free(ctx.store);
}

static void call_n(const char *method, const char *path, const char *ctype, const void *body,
		   size_t len, enum api_auth auth, struct api_response *resp)
{
	struct api_request rq = { method, path, ctype, body, len, auth, NULL, NULL };

	api_handle(&ctx, &rq, resp);
}

/* Call, check the status, parse the JSON answer (NULL for an empty body). */
static cJSON *call_json(const char *method, const char *path, const char *ctype, const char *body,
			int status)
{
	struct api_response r;
	cJSON *j = NULL;

	call_n(method, path, ctype, body, body ? strlen(body) : 0, API_AUTH_WRITE, &r);
	ck_assert_msg(r.status == status, "%s %s: %d, want %d: %s", method, path, r.status, status,
		      r.body.data ? r.body.data : "");
	if (r.body.len) {
		j = cJSON_ParseWithLength(r.body.data, r.body.len);
		ck_assert_msg(j != NULL, "not JSON: %s", r.body.data);
	}
	api_response_release(&r);
	return j;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	ck_assert_msg(cJSON_IsNumber(v), "no number %s", k);
	return v->valuedouble;
}

static const char tet_nested[] =
	"{\"vertices\":[[0,0,0],[1,0,0],[0,1,0],[0,0,1]],"
	"\"triangles\":[[0,2,1],[0,1,3],[0,3,2],[1,2,3]]}";
static const char tet_flat[] =
	"{\"vertices\":[0,0,0, 1,0,0, 0,1,0, 0,0,2],\"triangles\":[0,2,1, 0,1,3, 0,3,2, 1,2,3, 0,0,0]}";

START_TEST(test_put_json_nested_then_replace)
{
	cJSON *j, *b;

	ctx.persist_cls = &plog;
	ctx.persist_put = fake_put;
	j = call_json("PUT", "/v1/meshes/tet", "application/json", tet_nested, 201);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring, "tet");
	ck_assert_double_eq(num(j, "version"), 1);
	ck_assert_double_eq(num(j, "vertices"), 4);
	ck_assert_double_eq(num(j, "triangles"), 4);
	ck_assert_double_eq(num(j, "degenerate_triangles"), 0);
	ck_assert_double_ge(num(j, "build_ms"), 0);
	ck_assert_double_gt(num(j, "memory_bytes"), 0);
	b = cJSON_GetObjectItemCaseSensitive(j, "bounds");
	ck_assert_double_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(b, "max"), 2)->valuedouble, 1);
	cJSON_Delete(j);
	ck_assert_int_eq(plog.puts, 1);
	ck_assert_uint_eq(plog.ntri, 4);
	/* flat form, a degenerate triangle, replaces: 200 and version 2 */
	j = call_json("PUT", "/v1/meshes/tet", "application/json", tet_flat, 200);
	ck_assert_double_eq(num(j, "version"), 2);
	ck_assert_double_eq(num(j, "triangles"), 5);
	ck_assert_double_eq(num(j, "degenerate_triangles"), 1);
	cJSON_Delete(j);
	ck_assert_int_eq(plog.puts, 2);
}
END_TEST

START_TEST(test_put_obj_and_stl)
{
	static const char obj[] = "# quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 4//1\n";
	static const char stl[] =
		"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
		"endloop\nendfacet\nendsolid t\n";
	unsigned char bin[84 + 50];
	struct api_response r;
	float v[12] = { 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0 };
	uint32_t one = 1;
	cJSON *j;

	j = call_json("PUT", "/v1/meshes/quad", "model/obj", obj, 201);
	ck_assert_double_eq(num(j, "triangles"), 2);	/* fan-triangulated */
	cJSON_Delete(j);
	j = call_json("PUT", "/v1/meshes/s1", "model/stl", stl, 201);
	ck_assert_double_eq(num(j, "triangles"), 1);
	cJSON_Delete(j);
	memset(bin, 0, sizeof(bin));
	memcpy(bin + 80, &one, 4);
	memcpy(bin + 84, v, sizeof(v));
	call_n("PUT", "/v1/meshes/s2", "application/sla", bin, sizeof(bin), API_AUTH_WRITE, &r);
	ck_assert_msg(r.status == 201, "%d %s", r.status, r.body.data);
	api_response_release(&r);
	/* unparsable OBJ: invalid_mesh with the parser's message */
	j = call_json("PUT", "/v1/meshes/bad", "model/obj", "v 0 0 0\nf 1 2 3\n", 400);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"),
							  "code")->valuestring, "invalid_mesh");
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_list_get_delete)
{
	cJSON *j, *arr;

	ctx.persist_cls = &plog;
	ctx.persist_delete = fake_delete;
	cJSON_Delete(call_json("PUT", "/v1/meshes/b", "application/json", tet_nested, 201));
	cJSON_Delete(call_json("PUT", "/v1/meshes/a", "application/json", tet_flat, 201));
	j = call_json("GET", "/v1/meshes", NULL, NULL, 200);
	arr = cJSON_GetObjectItemCaseSensitive(j, "meshes");
	ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, 0), "name")->valuestring, "a");
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, 1), "name")->valuestring, "b");
	cJSON_Delete(j);
	j = call_json("GET", "/v1/meshes/b", NULL, NULL, 200);
	ck_assert_double_eq(num(j, "triangles"), 4);
	cJSON_Delete(j);
	ck_assert_ptr_null(call_json("DELETE", "/v1/meshes/b", NULL, NULL, 204));
	ck_assert_int_eq(plog.deletes, 1);
	ck_assert_str_eq(plog.last, "b");
	/* gone: the store is asked (it decides) and held nothing */
	cJSON_Delete(call_json("DELETE", "/v1/meshes/b", NULL, NULL, 404));
	cJSON_Delete(call_json("GET", "/v1/meshes/b", NULL, NULL, 404));
	ck_assert_int_eq(plog.deletes, 2);
	/* a name the store holds and this process has not got (a replica
	 * behind a PUT made on another): removed, 204 */
	plog.only_stored = "lag";
	ck_assert_ptr_null(call_json("DELETE", "/v1/meshes/lag", NULL, NULL, 204));
	ck_assert_ptr_null(plog.only_stored);
	cJSON_Delete(call_json("DELETE", "/v1/meshes/lag", NULL, NULL, 404));
	/* a re-created name starts at version 1 */
	j = call_json("PUT", "/v1/meshes/b", "application/json", tet_nested, 201);
	ck_assert_double_eq(num(j, "version"), 1);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_delete_response_shape)
{
	struct api_response r;

	cJSON_Delete(call_json("PUT", "/v1/meshes/x", "application/json", tet_nested, 201));
	call_n("DELETE", "/v1/meshes/x", NULL, NULL, 0, API_AUTH_WRITE, &r);
	ck_assert_int_eq(r.status, 204);
	ck_assert_uint_eq(r.body.len, 0);
	ck_assert_ptr_null(r.content_type);
	ck_assert_str_eq(r.route_label, "/v1/meshes/{name}");
	api_response_release(&r);
}
END_TEST

START_TEST(test_persist_failure_keeps_store)
{
	cJSON *j;

	ctx.persist_cls = &plog;
	ctx.persist_put = fake_put;
	cJSON_Delete(call_json("PUT", "/v1/meshes/p", "application/json", tet_nested, 201));
	plog.fail_put = 1;
	j = call_json("PUT", "/v1/meshes/p", "application/json", tet_flat, 500);
	cJSON_Delete(j);
	j = call_json("GET", "/v1/meshes/p", NULL, NULL, 200);
	ck_assert_double_eq(num(j, "version"), 1);
	ck_assert_double_eq(num(j, "triangles"), 4);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_limits)
{
	cJSON *j;

	ctx.limits.max_triangles = 4;
	cJSON_Delete(call_json("PUT", "/v1/meshes/ok", "application/json", tet_nested, 201));
	j = call_json("PUT", "/v1/meshes/big", "application/json", tet_flat, 413);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"),
							  "code")->valuestring, "payload_too_large");
	cJSON_Delete(j);
	cJSON_Delete(call_json("PUT", "/v1/meshes/big", "model/obj",
			       "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 1 1\nv 2 2 2\nf 1 2 3 4 5 6 7\n", 413));
	ctx.limits.max_triangles = 100;
	ctx.limits.max_meshes = 1;
	ctx.persist_cls = &plog;
	ctx.persist_put = fake_put;
	ctx.persist_delete = fake_delete;
	cJSON_Delete(call_json("PUT", "/v1/meshes/ok", "application/json", tet_flat, 200));
	ck_assert_int_eq(plog.puts, 1);
	/* a new name over the limit: refused before the store is written,
	 * so that nothing has to be undone (an undo once deleted what the
	 * store held under that name: a mesh over the limit, never loaded) */
	cJSON_Delete(call_json("PUT", "/v1/meshes/second", "application/json", tet_nested, 413));
	ck_assert_int_eq(plog.puts, 1);
	ck_assert_int_eq(plog.deletes, 0);
	ck_assert_str_eq(plog.last, "ok");
	/* a shared store's own limit (Redis: the names of every replica) */
	ctx.limits.max_meshes = 2;
	plog.fail_put = API_PERSIST_FULL;
	j = call_json("PUT", "/v1/meshes/third", "application/json", tet_nested, 413);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"),
							  "code")->valuestring, "payload_too_large");
	cJSON_Delete(j);
	ck_assert_int_eq(plog.puts, 2);
	ck_assert_int_eq(plog.deletes, 0);
	cJSON_Delete(call_json("GET", "/v1/meshes/third", NULL, NULL, 404));
}
END_TEST

/* Every write runs its persist hook inside the name's lock, and every exit
 * (success, 404, persist failure, store refusal) releases it. */
START_TEST(test_persist_under_lock)
{
	cJSON *j;

	ctx.persist_cls = &plog;
	ctx.persist_put = locked_put;
	ctx.persist_delete = locked_delete;
	ctx.persist_lock = fake_lock;
	ctx.persist_unlock = fake_unlock;
	cJSON_Delete(call_json("PUT", "/v1/meshes/l", "application/json", tet_nested, 201));
	ck_assert_uint_eq(plog.version, 1);	/* persisted with the version it gets */
	j = call_json("PUT", "/v1/meshes/l", "application/json", tet_flat, 200);
	ck_assert_uint_eq(plog.version, 2);
	ck_assert_double_eq(num(j, "version"), 2);
	cJSON_Delete(j);
	cJSON_Delete(call_json("DELETE", "/v1/meshes/l", NULL, NULL, 204));
	cJSON_Delete(call_json("DELETE", "/v1/meshes/l", NULL, NULL, 404));
	plog.fail_put = API_PERSIST_FAILED;
	cJSON_Delete(call_json("PUT", "/v1/meshes/l", "application/json", tet_flat, 500));
	plog.fail_put = 0;
	ctx.limits.max_meshes = 1;
	cJSON_Delete(call_json("PUT", "/v1/meshes/m", "application/json", tet_flat, 201));
	cJSON_Delete(call_json("PUT", "/v1/meshes/n", "application/json", tet_flat, 413));
	ck_assert_int_eq(lock_calls, 7);
	ck_assert_int_eq(locked, 0);
	ck_assert_int_eq(unlocked_persist, 0);
	ck_assert_int_eq(plog.puts, 4);		/* n, over the limit, never reached it */
	ck_assert_int_eq(plog.deletes, 2);	/* the 404 asked it too */
}
END_TEST

/* A store that cannot be reached: 503 store_unavailable, memory unchanged. */
START_TEST(test_store_unavailable)
{
	cJSON *j;

	ctx.persist_cls = &plog;
	ctx.persist_put = fake_put;
	ctx.persist_delete = fake_delete;
	cJSON_Delete(call_json("PUT", "/v1/meshes/u", "application/json", tet_nested, 201));
	plog.fail_put = API_PERSIST_UNAVAILABLE;
	plog.fail_delete = API_PERSIST_UNAVAILABLE;
	j = call_json("PUT", "/v1/meshes/u", "application/json", tet_flat, 503);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"),
							  "code")->valuestring, "store_unavailable");
	cJSON_Delete(j);
	j = call_json("DELETE", "/v1/meshes/u", NULL, NULL, 503);
	ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"),
							  "code")->valuestring, "store_unavailable");
	cJSON_Delete(j);
	/* a failed (not unavailable) delete is a 500, and the mesh stays */
	plog.fail_delete = API_PERSIST_FAILED;
	cJSON_Delete(call_json("DELETE", "/v1/meshes/u", NULL, NULL, 500));
	j = call_json("GET", "/v1/meshes/u", NULL, NULL, 200);
	ck_assert_double_eq(num(j, "version"), 1);
	ck_assert_double_eq(num(j, "triangles"), 4);
	cJSON_Delete(j);
}
END_TEST

static Suite *mesh_suite(void)
{
	Suite *s = suite_create("api_mesh");
	TCase *tc = tcase_create("mesh");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_put_json_nested_then_replace);
	tcase_add_test(tc, test_put_obj_and_stl);
	tcase_add_test(tc, test_list_get_delete);
	tcase_add_test(tc, test_delete_response_shape);
	tcase_add_test(tc, test_persist_failure_keeps_store);
	tcase_add_test(tc, test_persist_under_lock);
	tcase_add_test(tc, test_store_unavailable);
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mesh_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
