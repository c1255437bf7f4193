/* decode.h - request bodies to plain C structs: strict JSON, then validation.
 *
 * Every decoder takes a parsed cJSON tree (api_json_parse_in) and either fills
 * its struct and returns API_OK, or returns an error with a message that
 * names the offending field by path ("rays[3].direction: must be 3 finite
 * numbers") and leaves the struct empty (its release is then a no-op).
 *
 * Strings in the structs (box ids, the hitscan mesh name) point into the
 * cJSON tree: keep the tree until the answer is encoded.
 *
 * JSON null for an optional field means "absent"; for a required one it is
 * reported as missing.
 */
#ifndef API_DECODE_H
#define API_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "api.h"
#include "errors.h"
#include "formats.h"
#include "json.h"
#include "mesh.h"
#include "obb.h"
#include "xform.h"

/* Defaults and caps of the query options. */
#define RAY_MAX_HITS_DEFAULT 64
#define RAY_MAX_HITS_CAP 65536
#define OVERLAP_LIMIT_DEFAULT 1000

struct api_fail {
	enum api_err err;
	char msg[320];
};

/*
 * Parse body strictly with json_parse() into a tree allocated from a (see
 * json.h). API_INVALID_JSON with the byte offset in the message,
 * API_INVALID_REQUEST for valid JSON we refuse (nesting over JSON_MAX_DEPTH,
 * numbers over JSON_MAX_NUMBER_LEN characters, \u0000 in a string),
 * API_INTERNAL when memory runs out. On success *root is the tree, valid
 * until json_arena_release(a), which the caller does in every case; never
 * cJSON_Delete it.
 */
enum api_err api_json_parse_in(const char *body, size_t len, struct json_arena *a, cJSON **root,
			       struct api_fail *f);

/* One world-space ray of a query, ready for core. */
struct qray {
	struct ray ray;		/* world origin, unit direction (float), tmax */
	double dir[3];		/* the same unit direction in double */
	double length;		/* segments: |end - start| in double; rays: 0 */
};

/* POST /v1/meshes/{name}/raycast and /segment. */
struct ray_query {
	struct query_opts opts;	/* mode, cull, max_hits; flip_winding from the transform */
	int has_xform;
	struct xform xf;
	int segments;		/* segment query: answers carry "fraction" */
	int batch;		/* "rays"/"segments" given: answer {"results": [...]} */
	size_t n;
	struct qray *rays;
};

struct box_list {
	size_t n;
	struct obb *boxes;
	const char **ids;	/* NULL entries for boxes without an id */
};

/* POST /v1/obb/raycast. */
struct obb_query {
	int batch;
	size_t n;
	struct qray *rays;
	struct box_list boxes;
};

/* POST /v1/meshes/{name}/overlap. */
struct overlap_query {
	struct obb box;
	size_t limit;
};

/* POST /v1/hitscan. */
struct hitscan_query {
	const char *mesh;	/* NULL: boxes only */
	int has_xform;
	struct xform xf;
	struct box_list boxes;
	int batch;
	size_t n;
	struct qray *rays;
};

enum api_err decode_ray_query(const cJSON *root, int segments, const struct api_limits *lim,
			      struct ray_query *q, struct api_fail *f);
void ray_query_release(struct ray_query *q);

enum api_err decode_obb_query(const cJSON *root, const struct api_limits *lim,
			      struct obb_query *q, struct api_fail *f);
void obb_query_release(struct obb_query *q);

enum api_err decode_overlap_query(const cJSON *root, struct overlap_query *q, struct api_fail *f);

enum api_err decode_hitscan_query(const cJSON *root, const struct api_limits *lim,
				  struct hitscan_query *q, struct api_fail *f);
void hitscan_query_release(struct hitscan_query *q);

/*
 * {"vertices": [[x,y,z],...] or [x,y,z,...], "triangles": [[a,b,c],...] or
 * [a,b,c,...]} into out (malloc'd arrays: free with mesh_data_release).
 * Index range and finiteness are checked here so that messages can name
 * triangles[i] / vertices[i] (API_INVALID_MESH); more than max_tris
 * triangles is API_PAYLOAD_TOO_LARGE, checked before allocating.
 */
enum api_err decode_mesh_json(const cJSON *root, size_t max_tris, struct mesh_data *out,
			      struct api_fail *f);

/* Fill f (message printf-style) and return e. */
enum api_err api_fail_set(struct api_fail *f, enum api_err e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
