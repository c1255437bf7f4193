/* test_api_query.c - ray, segment, overlap, OBB and hitscan queries through
 * api_handle against a real store, plus the cost of a 1000-ray batch. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "api.h"
#include "buf.h"
#include "batch.h"
#include "mesh.h"
#include "store.h"

static struct api_ctx ctx;

/* The cube [-1, 1]^3, outward counter-clockwise triangles. */
static const char cube_json[] =
	"{\"vertices\":[[-1,-1,-1],[1,-1,-1],[1,1,-1],[-1,1,-1],[-1,-1,1],[1,-1,1],[1,1,1],[-1,1,1]],"
	"\"triangles\":[[0,2,1],[0,3,2],[4,5,6],[4,6,7],[0,1,5],[0,5,4],[2,3,7],[2,7,6],"
	"[1,2,6],[1,6,5],[0,4,7],[0,7,3]]}";

static void call(const char *method, const char *path, const char *body, struct api_response *r)
{
	struct api_request rq = { method, path, "application/json", body, strlen(body), API_AUTH_READ, NULL, NULL };

	if (method[1] == 'U')
		rq.auth = API_AUTH_WRITE;
	api_handle(&ctx, &rq, r);
}

static void setup(void)
{
	struct api_response r;

	memset(&ctx, 0, sizeof(ctx));
	ck_assert_int_eq(store_new(&ctx.store), CORE_OK);
	ctx.limits = (struct api_limits){ 65536, 16u << 20, 65536, 0, 1u << 28, 1u << 24, 0 };
	call("PUT", "/v1/meshes/cube", cube_json, &r);
	ck_assert_int_eq(r.status, 201);
	api_response_release(&r);
}

static void teardown(void)
{
	store_free(ctx.store);
}

static cJSON *post(const char *path, const char *body, int status)
{
	struct api_response r;
	cJSON *j;

	call("POST", path, body, &r);
	ck_assert_msg(r.status == status, "%s %s: %d %s", path, body, r.status, r.body.data);
	j = cJSON_ParseWithLength(r.body.data, r.body.len);
	ck_assert_msg(j != NULL, "not JSON: %s", r.body.data);
	api_response_release(&r);
	return j;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	ck_assert_msg(v != NULL, "no %s", k);
	return v;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	ck_assert_msg(cJSON_IsNumber(v), "%s is no number", k);
	return v->valuedouble;
}

static void vec_eq(const cJSON *o, const char *k, double x, double y, double z)
{
	const cJSON *v = get(o, k);

	ck_assert_int_eq(cJSON_GetArraySize(v), 3);
	ck_assert_double_eq_tol(cJSON_GetArrayItem(v, 0)->valuedouble, x, 1e-6);
	ck_assert_double_eq_tol(cJSON_GetArrayItem(v, 1)->valuedouble, y, 1e-6);
	ck_assert_double_eq_tol(cJSON_GetArrayItem(v, 2)->valuedouble, z, 1e-6);
}

#define RC "/v1/meshes/cube/raycast"

START_TEST(test_raycast_single_hit)
{
	cJSON *j = post(RC, "{\"origin\":[0.25,0.5,5],\"direction\":[0,0,-2]}", 200);
	const cJSON *bc;

	ck_assert(cJSON_IsTrue(get(j, "hit")));
	ck_assert_double_eq_tol(num(j, "distance"), 4, 1e-6);
	vec_eq(j, "point", 0.25, 0.5, 1);
	vec_eq(j, "normal", 0, 0, 1);
	ck_assert(cJSON_IsTrue(get(j, "front_face")));
	ck_assert(num(j, "triangle") == 2 || num(j, "triangle") == 3);
	bc = get(j, "barycentric");
	ck_assert_int_eq(cJSON_GetArraySize(bc), 2);
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "fraction"));
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_raycast_miss_and_max_distance)
{
	cJSON *j = post(RC, "{\"origin\":[0,5,5],\"direction\":[0,0,-1]}", 200);

	ck_assert(cJSON_IsFalse(get(j, "hit")));
	ck_assert_int_eq(cJSON_GetArraySize(j), 1);
	cJSON_Delete(j);
	j = post(RC, "{\"origin\":[0,0,5],\"direction\":[0,0,-1],\"max_distance\":3.99}", 200);
	ck_assert(cJSON_IsFalse(get(j, "hit")));
	cJSON_Delete(j);
	/* a hit exactly at max_distance counts */
	j = post(RC, "{\"origin\":[0,0,5],\"direction\":[0,0,-1],\"max_distance\":4}", 200);
	ck_assert(cJSON_IsTrue(get(j, "hit")));
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_raycast_batch_order_and_metrics)
{
	struct api_response r;
	cJSON *j, *res;

	call("POST", RC, "{\"rays\":[{\"origin\":[0,0,5],\"direction\":[0,0,-1]},"
	     "{\"origin\":[0,9,5],\"direction\":[0,0,-1]},"
	     "{\"origin\":[5,0,0],\"direction\":[-1,0,0],\"max_distance\":10}]}", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.route_label, "/v1/meshes/{name}/raycast");
	ck_assert_str_eq(r.ray_kind, "mesh_ray");
	ck_assert_uint_eq(r.rays, 3);
	j = cJSON_ParseWithLength(r.body.data, r.body.len);
	api_response_release(&r);
	res = (cJSON *)get(j, "results");
	ck_assert_int_eq(cJSON_GetArraySize(res), 3);
	ck_assert(cJSON_IsTrue(get(cJSON_GetArrayItem(res, 0), "hit")));
	ck_assert(cJSON_IsFalse(get(cJSON_GetArrayItem(res, 1), "hit")));
	vec_eq(cJSON_GetArrayItem(res, 2), "normal", 1, 0, 0);
	cJSON_Delete(j);
	j = post(RC, "{\"rays\":[]}", 200);
	ck_assert_int_eq(cJSON_GetArraySize(get(j, "results")), 0);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_raycast_modes)
{
	cJSON *j, *hits;

	j = post(RC, "{\"origin\":[0.3,0.2,5],\"direction\":[0,0,-1],\"mode\":\"all\"}", 200);
	hits = (cJSON *)get(j, "hits");
	ck_assert_int_eq(cJSON_GetArraySize(hits), 2);
	ck_assert_double_eq_tol(num(cJSON_GetArrayItem(hits, 0), "distance"), 4, 1e-6);
	ck_assert_double_eq_tol(num(cJSON_GetArrayItem(hits, 1), "distance"), 6, 1e-6);
	ck_assert(cJSON_IsFalse(get(cJSON_GetArrayItem(hits, 1), "front_face")));
	ck_assert(cJSON_IsFalse(get(j, "truncated")));
	cJSON_Delete(j);
	j = post(RC, "{\"origin\":[0.3,0.2,5],\"direction\":[0,0,-1],\"mode\":\"all\",\"max_hits\":1}", 200);
	ck_assert_int_eq(cJSON_GetArraySize(get(j, "hits")), 1);
	ck_assert(cJSON_IsTrue(get(j, "truncated")));
	cJSON_Delete(j);
	j = post(RC, "{\"origin\":[0.3,0.2,5],\"direction\":[0,0,-1],\"mode\":\"any\"}", 200);
	ck_assert(cJSON_IsTrue(get(j, "hit")));
	cJSON_Delete(j);
	/* from inside, the only face ahead is seen from behind: culled */
	j = post(RC, "{\"origin\":[0.3,0.2,0],\"direction\":[0,0,-1],\"backfaces\":\"cull\"}", 200);
	ck_assert(cJSON_IsFalse(get(j, "hit")));
	cJSON_Delete(j);
	j = post(RC, "{\"origin\":[0.3,0.2,0],\"direction\":[0,0,-1],\"backfaces\":\"hit\"}", 200);
	ck_assert(cJSON_IsTrue(get(j, "hit")));
	ck_assert(cJSON_IsFalse(get(j, "front_face")));
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_raycast_transform)
{
	cJSON *j;

	/* moved to x = 10, scaled 2: the face x = -1 is now at x = 8 */
	j = post(RC, "{\"origin\":[0,0.5,0.5],\"direction\":[1,0,0],"
		 "\"transform\":{\"position\":[10,0,0],\"scale\":[2,2,2]}}", 200);
	ck_assert_double_eq_tol(num(j, "distance"), 8, 1e-5);
	vec_eq(j, "point", 8, 0.5, 0.5);
	vec_eq(j, "normal", -1, 0, 0);
	cJSON_Delete(j);
	/* rotated 90 degrees about z, as a quaternion and as a matrix */
	j = post(RC, "{\"origin\":[5,0.2,0.3],\"direction\":[-1,0,0],"
		 "\"transform\":{\"rotation\":[0.70710678,0,0,0.70710678],\"scale\":[3,1,1]}}", 200);
	/* local x scaled by 3 now lies along world y: the x faces stay at +-1 */
	ck_assert_double_eq_tol(num(j, "distance"), 4, 1e-5);
	vec_eq(j, "normal", 1, 0, 0);
	cJSON_Delete(j);
	j = post(RC, "{\"origin\":[5,0.2,0.3],\"direction\":[-1,0,0],"
		 "\"transform\":{\"matrix\":[0,-1,0,0, 3,0,0,0, 0,0,1,0, 0,0,0,1]}}", 200);
	ck_assert_double_eq_tol(num(j, "distance"), 4, 1e-5);
	vec_eq(j, "normal", 1, 0, 0);
	cJSON_Delete(j);
	/* a mirror (scale z = -1): the normal is (B-A)x(C-A) of the placed
	 * triangle, which now points inwards, so the face is seen from behind */
	j = post(RC, "{\"origin\":[0.3,0.2,5],\"direction\":[0,0,-1],"
		 "\"transform\":{\"scale\":[1,1,-1]}}", 200);
	ck_assert_double_eq_tol(num(j, "distance"), 4, 1e-6);
	vec_eq(j, "normal", 0, 0, -1);
	ck_assert(cJSON_IsFalse(get(j, "front_face")));
	cJSON_Delete(j);
	j = post(RC, "{\"origin\":[0.3,0.2,5],\"direction\":[0,0,-1],\"backfaces\":\"cull\","
		 "\"transform\":{\"scale\":[1,1,-1]}}", 200);
	ck_assert(cJSON_IsTrue(get(j, "hit")));	/* the far face, z = -1, faces the ray */
	ck_assert_double_eq_tol(num(j, "distance"), 6, 1e-6);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_segment)
{
	struct api_response r;
	cJSON *j, *res;

	j = post("/v1/meshes/cube/segment", "{\"start\":[0.2,0.3,3],\"end\":[0.2,0.3,-1]}", 200);
	ck_assert_double_eq_tol(num(j, "distance"), 2, 1e-6);
	ck_assert_double_eq_tol(num(j, "fraction"), 0.5, 1e-6);
	cJSON_Delete(j);
	/* the end point itself is on the segment: fraction 1 */
	j = post("/v1/meshes/cube/segment", "{\"start\":[0.2,0.3,3],\"end\":[0.2,0.3,1]}", 200);
	ck_assert(cJSON_IsTrue(get(j, "hit")));
	ck_assert_double_eq_tol(num(j, "fraction"), 1, 1e-6);
	cJSON_Delete(j);
	call("POST", "/v1/meshes/cube/segment", "{\"segments\":[{\"start\":[0.2,0.3,3],\"end\":[0.2,0.3,1.5]},"
	     "{\"start\":[0.2,0.3,3],\"end\":[0.2,0.3,-3]}],\"mode\":\"all\"}", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.ray_kind, "mesh_segment");
	ck_assert_uint_eq(r.rays, 2);
	j = cJSON_ParseWithLength(r.body.data, r.body.len);
	api_response_release(&r);
	res = (cJSON *)get(j, "results");
	ck_assert_int_eq(cJSON_GetArraySize(get(cJSON_GetArrayItem(res, 0), "hits")), 0);
	ck_assert_int_eq(cJSON_GetArraySize(get(cJSON_GetArrayItem(res, 1), "hits")), 2);
	ck_assert_double_eq_tol(num(cJSON_GetArrayItem(get(cJSON_GetArrayItem(res, 1), "hits"), 1),
				    "fraction"), 4.0 / 6.0, 1e-6);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_overlap)
{
	cJSON *j, *t;
	int k;

	/* a box around the top face touches its 2 triangles */
	j = post("/v1/meshes/cube/overlap", "{\"box\":{\"center\":[0,0,1.2],\"half_extents\":[0.5,0.5,0.3]}}", 200);
	ck_assert_double_eq(num(j, "count"), 2);
	t = (cJSON *)get(j, "triangles");
	ck_assert_int_eq(cJSON_GetArraySize(t), 2);
	ck_assert_double_eq(cJSON_GetArrayItem(t, 0)->valuedouble, 2);
	ck_assert_double_eq(cJSON_GetArrayItem(t, 1)->valuedouble, 3);
	ck_assert(cJSON_IsFalse(get(j, "truncated")));
	cJSON_Delete(j);
	/* a box holding the whole cube, limited */
	j = post("/v1/meshes/cube/overlap", "{\"box\":{\"center\":[0,0,0],\"half_extents\":[2,2,2],"
		 "\"rotation\":[0.9238795,0.3826834,0,0]},\"limit\":5}", 200);
	ck_assert_double_eq(num(j, "count"), 12);
	t = (cJSON *)get(j, "triangles");
	ck_assert_int_eq(cJSON_GetArraySize(t), 5);
	for (k = 0; k < 5; k++)
		ck_assert_double_eq(cJSON_GetArrayItem(t, k)->valuedouble, k);
	ck_assert(cJSON_IsTrue(get(j, "truncated")));
	cJSON_Delete(j);
	j = post("/v1/meshes/cube/overlap", "{\"box\":{\"center\":[0,0,0],\"half_extents\":[2,2,2]},\"limit\":0}", 200);
	ck_assert_double_eq(num(j, "count"), 12);
	ck_assert_int_eq(cJSON_GetArraySize(get(j, "triangles")), 0);
	cJSON_Delete(j);
	/* strictly inside the cube: touches nothing */
	j = post("/v1/meshes/cube/overlap", "{\"box\":{\"center\":[0,0,0],\"half_extents\":[0.5,0.5,0.5]}}", 200);
	ck_assert_double_eq(num(j, "count"), 0);
	cJSON_Delete(j);
	cJSON_Delete(post("/v1/meshes/nope/overlap", "{\"box\":{\"center\":[0,0,0],\"half_extents\":[1,1,1]}}", 404));
}
END_TEST

#define BOXES "\"boxes\":[{\"id\":\"far\",\"center\":[0,0,-10],\"half_extents\":[1,1,1]}," \
	"{\"center\":[0,0,0],\"half_extents\":[1,1,1],\"axes\":[[0,1,0],[-1,0,0],[0,0,1]]}]"

START_TEST(test_obb_raycast)
{
	cJSON *j, *res;

	j = post("/v1/obb/raycast", "{\"origin\":[0,0,5],\"direction\":[0,0,-1]," BOXES "}", 200);
	ck_assert(cJSON_IsTrue(get(j, "hit")));
	ck_assert_double_eq(num(j, "box"), 1);
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "id"));
	ck_assert_double_eq_tol(num(j, "distance"), 4, 1e-6);
	vec_eq(j, "point", 0, 0, 1);
	vec_eq(j, "normal", 0, 0, 1);
	ck_assert(cJSON_IsFalse(get(j, "inside")));
	cJSON_Delete(j);
	j = post("/v1/obb/raycast", "{\"rays\":[{\"origin\":[0,0,-5],\"direction\":[0,0,-1]},"
		 "{\"origin\":[0,0,0.5],\"direction\":[1,0,0]},{\"origin\":[5,5,5],\"direction\":[1,0,0]}]," BOXES "}", 200);
	res = (cJSON *)get(j, "results");
	ck_assert_str_eq(get(cJSON_GetArrayItem(res, 0), "id")->valuestring, "far");
	ck_assert_double_eq_tol(num(cJSON_GetArrayItem(res, 0), "distance"), 4, 1e-6);
	ck_assert(cJSON_IsTrue(get(cJSON_GetArrayItem(res, 1), "inside")));
	ck_assert_double_eq(num(cJSON_GetArrayItem(res, 1), "distance"), 0);
	ck_assert(cJSON_IsFalse(get(cJSON_GetArrayItem(res, 2), "hit")));
	cJSON_Delete(j);
	j = post("/v1/obb/raycast", "{\"origin\":[0,0,5],\"direction\":[0,0,-1],\"boxes\":[]}", 200);
	ck_assert(cJSON_IsFalse(get(j, "hit")));
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_hitscan)
{
	struct api_response r;
	cJSON *j, *res;

	/* the box stands in front of the wall */
	j = post("/v1/hitscan", "{\"mesh\":\"cube\",\"origin\":[0,0,5],\"direction\":[0,0,-1],"
		 "\"boxes\":[{\"id\":\"p\",\"center\":[0,0,2],\"half_extents\":[0.5,0.5,0.5]}]}", 200);
	ck_assert_str_eq(get(j, "hit")->valuestring, "box");
	ck_assert_str_eq(get(j, "id")->valuestring, "p");
	ck_assert_double_eq(num(j, "box"), 0);
	ck_assert_double_eq_tol(num(j, "distance"), 2.5, 1e-6);
	vec_eq(j, "normal", 0, 0, 1);
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "triangle"));
	cJSON_Delete(j);
	/* behind the wall: the wall blocks */
	j = post("/v1/hitscan", "{\"mesh\":\"cube\",\"origin\":[0.1,0.2,5],\"direction\":[0,0,-1],"
		 "\"boxes\":[{\"center\":[0,0,-3],\"half_extents\":[0.5,0.5,0.5]}]}", 200);
	ck_assert_str_eq(get(j, "hit")->valuestring, "mesh");
	ck_assert_double_eq_tol(num(j, "distance"), 4, 1e-6);
	ck_assert(num(j, "triangle") == 2 || num(j, "triangle") == 3);
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "box"));
	cJSON_Delete(j);
	/* flush with the wall (equal distance): the mesh wins */
	j = post("/v1/hitscan", "{\"mesh\":\"cube\",\"origin\":[0.1,0.2,5],\"direction\":[0,0,-1],"
		 "\"boxes\":[{\"center\":[0,0,1.5],\"half_extents\":[0.5,0.5,0.5]}]}", 200);
	ck_assert_str_eq(get(j, "hit")->valuestring, "box");	/* box face at z = 2: in front */
	cJSON_Delete(j);
	j = post("/v1/hitscan", "{\"mesh\":\"cube\",\"origin\":[0.1,0.2,5],\"direction\":[0,0,-1],"
		 "\"boxes\":[{\"center\":[0,0,0.5],\"half_extents\":[0.5,0.5,0.5]}]}", 200);
	ck_assert_str_eq(get(j, "hit")->valuestring, "mesh");	/* box face at z = 1, like the wall */
	cJSON_Delete(j);
	/* shooter inside a box (t = 0) and the mesh far ahead: the box */
	j = post("/v1/hitscan", "{\"mesh\":\"cube\",\"origin\":[0,0,5],\"direction\":[0,0,-1],"
		 "\"boxes\":[{\"center\":[0,0,5],\"half_extents\":[0.5,0.5,0.5]}]}", 200);
	ck_assert_str_eq(get(j, "hit")->valuestring, "box");
	ck_assert_double_eq(num(j, "distance"), 0);
	cJSON_Delete(j);
	/* batch, boxes only, and a placed mesh */
	call("POST", "/v1/hitscan", "{\"shots\":[{\"origin\":[0,0,5],\"direction\":[0,0,-1]},"
	     "{\"origin\":[0,0,5],\"direction\":[0,0,1]}],"
	     "\"boxes\":[{\"center\":[0,0,0],\"half_extents\":[1,1,1]}]}", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.ray_kind, "hitscan");
	ck_assert_uint_eq(r.rays, 2);
	j = cJSON_ParseWithLength(r.body.data, r.body.len);
	api_response_release(&r);
	res = (cJSON *)get(j, "results");
	ck_assert_str_eq(get(cJSON_GetArrayItem(res, 0), "hit")->valuestring, "box");
	ck_assert(cJSON_IsNull(get(cJSON_GetArrayItem(res, 1), "hit")));
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetArrayItem(res, 1)), 1);
	cJSON_Delete(j);
	j = post("/v1/hitscan", "{\"mesh\":\"cube\",\"transform\":{\"position\":[0,0,-5]},"
		 "\"origin\":[0.1,0.2,5],\"direction\":[0,0,-1]}", 200);
	ck_assert_str_eq(get(j, "hit")->valuestring, "mesh");
	ck_assert_double_eq_tol(num(j, "distance"), 9, 1e-6);
	vec_eq(j, "point", 0.1, 0.2, -4);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_query_unknown_mesh)
{
	cJSON *j = post("/v1/meshes/ghost/raycast", "{\"origin\":[0,0,5],\"direction\":[0,0,-1]}", 404);

	ck_assert_str_eq(get(get(j, "error"), "code")->valuestring, "mesh_not_found");
	cJSON_Delete(j);
	/* validation comes first: a bad body on an unknown mesh is a 400 */
	cJSON_Delete(post("/v1/meshes/ghost/raycast", "{\"origin\":[0,0,5]}", 400));
}
END_TEST

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Prints the cost per ray of a 1000-ray batch (decode + query + encode),
 * and of a miss-only batch (decode + encode of misses). Not an assertion. */
START_TEST(test_batch_cost)
{
	struct buf body, body_miss;
	struct api_response r;
	double t0, t1, best = 1e30, best_miss = 1e30;
	int k, rep;

	buf_init(&body);
	buf_init(&body_miss);
	buf_puts(&body, "{\"rays\":[");
	buf_puts(&body_miss, "{\"rays\":[");
	for (k = 0; k < 1000; k++) {
		double x = (k % 37) / 40.0 - 0.45, y = (k % 41) / 45.0 - 0.45;

		buf_printf(&body, "%s{\"origin\":[%.6f,%.6f,5.123457],\"direction\":[0.01,-0.02,-1]}",
			   k ? "," : "", x, y);
		buf_printf(&body_miss, "%s{\"origin\":[%.6f,%.6f,5.123457],\"direction\":[0.01,-0.02,1]}",
			   k ? "," : "", x, y);
	}
	buf_puts(&body, "]}");
	buf_puts(&body_miss, "]}");
	for (rep = 0; rep < 20; rep++) {
		t0 = now_ns();
		call("POST", RC, body.data, &r);
		t1 = now_ns();
		ck_assert_int_eq(r.status, 200);
		ck_assert_ptr_null(strstr(r.body.data, "\"hit\":false"));
		api_response_release(&r);
		if (t1 - t0 < best)
			best = t1 - t0;
		t0 = now_ns();
		call("POST", RC, body_miss.data, &r);
		t1 = now_ns();
		api_response_release(&r);
		if (t1 - t0 < best_miss)
			best_miss = t1 - t0;
	}
	printf("1000-ray batch: %.2f us per ray with hits, %.2f us per ray missing (best of 20)\n",
	       best / 1000 / 1000, best_miss / 1000 / 1000);
	buf_release(&body);
	buf_release(&body_miss);
}
END_TEST

/* POST body (content type ct) to path; the answer's body, which the caller
 * frees, and its status in *status. */
static char *post_raw(const char *path, const char *ct, const char *body, size_t len,
		      int *status, size_t *out_len)
{
	struct api_request rq = { "POST", path, ct, body, len, API_AUTH_READ, NULL, NULL };
	struct api_response r;
	char *copy;

	api_handle(&ctx, &rq, &r);
	*status = r.status;
	*out_len = r.body.len;
	copy = malloc(r.body.len + 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, r.body.data ? r.body.data : "", r.body.len);
	copy[r.body.len] = 0;
	api_response_release(&r);
	return copy;
}

/* The items of a JSON batch answer: the text between {"results":[ and ]}. */
static void results_of(const char *body, size_t len, struct buf *to)
{
	static const char head[] = "{\"results\":[";

	ck_assert_msg(len >= sizeof(head) + 1 && !memcmp(body, head, sizeof(head) - 1),
		      "not a batch answer: %.200s", body);
	if (to->len)
		buf_putc(to, ',');
	buf_append(to, body + sizeof(head) - 1, len - (sizeof(head) - 1) - 2);
}

/*
 * A batch against a mesh larger than MESH_BATCH_WALK_BYTES is cast in
 * groups with the rays' walks interleaved (query_handlers.c): its answers
 * are the bytes the same rays get in batches too small for that (15 rays),
 * for every option that reaches the cast, JSON and binary, on one thread
 * and split across a pool. A ray that a transform makes invalid in mesh
 * space is named by its index either way.
 */
START_TEST(test_grouped_batch_same_bytes)
{
	static const char *opts[] = {
		"", ",\"mode\":\"any\"", ",\"backfaces\":\"cull\"",
		",\"transform\":{\"position\":[3,-1,2],\"rotation\":[0.9,0.1,0.3,0.3],\"scale\":[1,-2,1.5]}",
	};
	enum { GRID = 300, NRAYS = 700, SMALL = 15 };
	struct buf mesh, big, small, got, want, rec;
	struct api_response r;
	struct rng { uint64_t s; } g = { 99 };
	float (*ray)[7] = malloc(NRAYS * sizeof(*ray));
	int status;
	size_t len;
	char *ans;
	cJSON *info;

	ck_assert_ptr_nonnull(ray);
#define NEXT() (g.s = g.s * 6364136223846793005ULL + 1442695040888963407ULL, \
		(double)(g.s >> 11) / 9007199254740992.0)
	/* a bumpy GRID x GRID height field: 180 000 triangles, 12 MB */
	buf_init(&mesh);
	buf_puts(&mesh, "{\"vertices\":[");
	for (int i = 0; i <= GRID; i++)
		for (int k = 0; k <= GRID; k++)
			buf_printf(&mesh, "%s[%d,%.3f,%d]", i || k ? "," : "", i - GRID / 2,
				   0.7 * sin(i * 0.37) * cos(k * 0.23) + 0.2 * NEXT(), k - GRID / 2);
	buf_puts(&mesh, "],\"triangles\":[");
	for (int i = 0; i < GRID; i++)
		for (int k = 0; k < GRID; k++) {
			int a = i * (GRID + 1) + k, c = a + GRID + 1;

			buf_printf(&mesh, "%s[%d,%d,%d],[%d,%d,%d]", i || k ? "," : "", a, a + 1,
				   c + 1, a, c + 1, c);
		}
	buf_puts(&mesh, "]}");
	call("PUT", "/v1/meshes/grid", mesh.data, &r);
	ck_assert_int_eq(r.status, 201);
	info = cJSON_ParseWithLength(r.body.data, r.body.len);
	api_response_release(&r);
	buf_release(&mesh);
	ck_assert_double_ge(num(info, "memory_bytes"), MESH_BATCH_WALK_BYTES);
	cJSON_Delete(info);
	/* rays from above at random points, some level, some limited */
	for (int i = 0; i < NRAYS; i++) {
		double dx = NEXT() - 0.5, dy = -NEXT(), dz = NEXT() - 0.5, n;

		if (i % 7 == 3)
			dy = 0.02 * (NEXT() - 0.5);
		n = sqrt(dx * dx + dy * dy + dz * dz);
		ray[i][0] = (float)(NEXT() * 150 - 75);
		ray[i][1] = (float)(i % 7 == 3 ? 0.3 : 1 + 10 * NEXT());
		ray[i][2] = (float)(NEXT() * 150 - 75);
		ray[i][3] = (float)(dx / n);
		ray[i][4] = (float)(dy / n);
		ray[i][5] = (float)(dz / n);
		ray[i][6] = i % 5 == 0 ? (float)(5 + 20 * NEXT()) : 3.4e38f;
	}
	ctx.pool = _i ? batch_pool_create(2) : NULL;
	for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
		for (int seg = 0; seg < 2; seg++) {
			const char *path = seg ? "/v1/meshes/grid/segment" : "/v1/meshes/grid/raycast";

			buf_init(&got);
			buf_init(&want);
			for (int from = 0; from < NRAYS; from += SMALL) {
				int to = from + SMALL < NRAYS ? from + SMALL : NRAYS;

				buf_init(&small);
				buf_puts(&small, seg ? "{\"segments\":[" : "{\"rays\":[");
				for (int i = from; i < to; i++) {
					const float *q = ray[i];
					float l = q[6] < 1e38f ? q[6] : 40;

					if (seg)
						buf_printf(&small, "%s{\"start\":[%.9g,%.9g,%.9g],\"end\":[%.9g,%.9g,%.9g]}",
							   i > from ? "," : "", q[0], q[1], q[2],
							   q[0] + l * q[3], q[1] + l * q[4], q[2] + l * q[5]);
					else
						buf_printf(&small, "%s{\"origin\":[%.9g,%.9g,%.9g],\"direction\":[%.9g,%.9g,%.9g]%s",
							   i > from ? "," : "", q[0], q[1], q[2], q[3], q[4], q[5],
							   q[6] < 1e38f ? "" : "}");
					if (!seg && q[6] < 1e38f)
						buf_printf(&small, ",\"max_distance\":%.9g}", q[6]);
				}
				buf_printf(&small, "]%s}", opts[o]);
				ans = post_raw(path, "application/json", small.data, small.len, &status, &len);
				ck_assert_msg(status == 200, "%s: %s", small.data, ans);
				results_of(ans, len, &want);
				free(ans);
				/* the same rays, one batch: the items of small.data */
				if (from == 0) {
					buf_init(&big);
					buf_append(&big, small.data, small.len - strlen(opts[o]) - 2);
				} else {
					const char *items = strchr(small.data, '[') + 1;

					buf_putc(&big, ',');
					buf_append(&big, items, small.len - (size_t)(items - small.data) -
								strlen(opts[o]) - 2);
				}
				buf_release(&small);
			}
			buf_printf(&big, "]%s}", opts[o]);
			ans = post_raw(path, "application/json", big.data, big.len, &status, &len);
			ck_assert_msg(status == 200, "%s", ans);
			results_of(ans, len, &got);
			free(ans);
			ck_assert_msg(got.len == want.len && !memcmp(got.data, want.data, got.len),
				      "options %zu segments %d: the batch differs from small ones", o, seg);
			buf_release(&big);
			buf_release(&got);
			buf_release(&want);
		}
	}
	/* hitscan: the same rays as shots among boxes standing on the grid,
	 * in one batch and 15 at a time (placed and not) */
	for (int placed = 0; placed < 2; placed++) {
		struct buf boxes;

		buf_init(&boxes);
		buf_puts(&boxes, "],\"boxes\":[");
		for (int b = 0; b < 60; b++) {
			double c[3], h[3];

			for (int a = 0; a < 3; a++) {
				c[a] = a == 1 ? 1 + NEXT() : NEXT() * 150 - 75;
				h[a] = a == 1 ? 0.5 + 2 * NEXT() : 0.5 + NEXT();
			}
			buf_printf(&boxes, "%s{\"id\":\"b%d\",\"center\":[%.3f,%.3f,%.3f],"
				   "\"half_extents\":[%.2f,%.2f,%.2f]}", b ? "," : "", b, c[0], c[1],
				   c[2], h[0], h[1], h[2]);
		}
		buf_printf(&boxes, "]%s}", placed ? opts[3] : "");
		buf_init(&got);
		buf_init(&want);
		buf_init(&big);
		buf_puts(&big, "{\"mesh\":\"grid\",\"shots\":[");
		for (int from = 0; from < NRAYS; from += SMALL) {
			int to = from + SMALL < NRAYS ? from + SMALL : NRAYS;

			buf_init(&small);
			buf_puts(&small, "{\"mesh\":\"grid\",\"shots\":[");
			for (int i = from; i < to; i++) {
				const float *q = ray[i];
				char one[256];

				snprintf(one, sizeof(one), "%s{\"origin\":[%.9g,%.9g,%.9g],"
					 "\"direction\":[%.9g,%.9g,%.9g]}", i > from ? "," : "", q[0],
					 q[1], q[2], q[3], q[4], q[5]);
				buf_puts(&small, one);
				buf_puts(&big, i == from && from ? "," : "");
				buf_puts(&big, one);
			}
			buf_append(&small, boxes.data, boxes.len);
			ans = post_raw("/v1/hitscan", "application/json", small.data, small.len,
				       &status, &len);
			ck_assert_msg(status == 200, "%s", ans);
			results_of(ans, len, &want);
			free(ans);
			buf_release(&small);
		}
		buf_append(&big, boxes.data, boxes.len);
		ans = post_raw("/v1/hitscan", "application/json", big.data, big.len, &status, &len);
		ck_assert_msg(status == 200, "%s", ans);
		results_of(ans, len, &got);
		free(ans);
		ck_assert_msg(got.len == want.len && !memcmp(got.data, want.data, got.len),
			      "hitscan (placed %d): the batch differs from small ones", placed);
		ck_assert(strstr(got.data, "\"hit\":\"box\"") && strstr(got.data, "\"hit\":\"mesh\""));
		buf_release(&boxes);
		buf_release(&big);
		buf_release(&got);
		buf_release(&want);
	}
	/* binary: the records in one batch, and 15 at a time */
	buf_init(&rec);
	buf_append(&rec, (const char *)ray, NRAYS * sizeof(*ray));
	buf_init(&want);
	for (int from = 0; from < NRAYS; from += SMALL) {
		int to = from + SMALL < NRAYS ? from + SMALL : NRAYS;

		ans = post_raw("/v1/meshes/grid/raycast", "application/octet-stream",
			       rec.data + from * sizeof(*ray), (size_t)(to - from) * sizeof(*ray),
			       &status, &len);
		ck_assert_int_eq(status, 200);
		buf_append(&want, ans, len);
		free(ans);
	}
	ans = post_raw("/v1/meshes/grid/raycast", "application/octet-stream", rec.data, rec.len,
		       &status, &len);
	ck_assert_int_eq(status, 200);
	ck_assert(len == want.len && !memcmp(ans, want.data, len));
	free(ans);
	buf_release(&want);
	buf_release(&rec);
	/* a transform that moves ray 300's origin out of float range in mesh
	 * space (1e20 / 1e-20): named, as one by one */
	buf_init(&big);
	buf_puts(&big, "{\"rays\":[");
	for (int i = 0; i < 400; i++)
		buf_printf(&big, "%s{\"origin\":[%s,5,1],\"direction\":[0,-1,0]}", i ? "," : "",
			   i == 300 ? "1e20" : "1");
	buf_puts(&big, "],\"transform\":{\"scale\":[1e-20,1,1]}}");
	ans = post_raw("/v1/meshes/grid/raycast", "application/json", big.data, big.len, &status,
		       &len);
	ck_assert_int_eq(status, 400);
	ck_assert_msg(strstr(ans, "rays[300]: not a valid ray once moved into mesh space") != NULL,
		      "%s", ans);
	free(ans);
	buf_release(&big);
	batch_pool_destroy(ctx.pool);
	ctx.pool = NULL;
	free(ray);
#undef NEXT
}
END_TEST

static Suite *query_suite(void)
{
	Suite *s = suite_create("api_query");
	TCase *tc = tcase_create("query");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_raycast_single_hit);
	tcase_add_test(tc, test_raycast_miss_and_max_distance);
	tcase_add_test(tc, test_raycast_batch_order_and_metrics);
	tcase_add_test(tc, test_raycast_modes);
	tcase_add_test(tc, test_raycast_transform);
	tcase_add_test(tc, test_segment);
	tcase_add_test(tc, test_overlap);
	tcase_add_test(tc, test_obb_raycast);
	tcase_add_test(tc, test_hitscan);
	tcase_add_test(tc, test_query_unknown_mesh);
	tcase_add_test(tc, test_batch_cost);
	tcase_add_loop_test(tc, test_grouped_batch_same_bytes, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(query_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
