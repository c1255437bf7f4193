/* decode.h - request bodies to plain C structs: strict JSON, then validation.
 *
 * Decoders live by resource: decode_query.c (rays, segments, options,
 * boxes, transforms, shots; binary ray records; rays_direct.c its tree-free
 * fast path for ray and segment batches), decode_mesh.c (mesh
 * uploads: JSON here, OBJ and STL in obj.c / stl.c, one error convention:
 * struct api_fail). World decoders go in their own decode_world*.c on the
 * same pieces (decode_fields.h).
 *
 * Every decoder takes a parsed cJSON tree (api_json_parse_in) and either
 * fills its struct and returns API_OK, or returns an error with a message
 * that names the offending field by path ("rays[3].direction: must be 3
 * finite numbers") and leaves the struct empty (its release is then a no-op).
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
#include "query.h"
#include "xform.h"

/* Defaults and caps of the query options. */
#define RAY_MAX_HITS_DEFAULT 64
#define RAY_MAX_HITS_CAP 65536
#define OVERLAP_LIMIT_DEFAULT 1000

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

struct box_list {
	size_t n;
	struct obb *boxes;
	const char **ids;	/* NULL entries for boxes without an id */
};

/*
 * A decoded ray query, whichever endpoint: the rays (one or a batch) and
 * what they are cast against.
 *   raycast/segment: opts, xform; segments set for /segment
 *   obb/raycast:     boxes
 *   hitscan:         mesh (NULL: boxes only), xform, boxes
 */
struct query {
	struct query_opts opts;	/* mode, cull, max_hits (1 unless HIT_ALL) */
	int has_xform;
	struct xform xf;
	int segments;		/* segment query: answers carry "fraction" */
	int batch;		/* "rays"/"segments"/"shots" given: answer {"results": [...]} */
	const char *items;	/* that key, for messages naming an item */
	size_t n;
	struct qray *rays;
	const unsigned char *records;	/* binary batches: the body's records, rays NULL */
	struct box_list boxes;
	const char *mesh;	/* hitscan's mesh name, pointing into the tree */
};

void query_release(struct query *q);

/* POST /v1/meshes/{name}/raycast (JSON) and /segment. */
enum api_err decode_ray_query(const cJSON *root, const struct api_limits *lim,
			      struct query *q, struct api_fail *f);
enum api_err decode_segment_query(const cJSON *root, const struct api_limits *lim,
				  struct query *q, struct api_fail *f);
/*
 * The fast path of decode_ray_query / decode_segment_query: a batch body
 * (top-level "rays" / "segments" with optional "mode", "max_hits",
 * "backfaces" and "transform") read straight from its text body[0..len)
 * into q, with no tree (rays_direct.c). Returns 1 when decoded: q is then
 * what api_json_parse_in + the tree decoder would give (the same numbers,
 * bit for bit); release it with query_release. Returns 0, q left empty,
 * whenever anything is not plainly valid (a syntax error, an unknown,
 * repeated or null member, an escaped key, a wrong type, a value or limit
 * refused, an empty batch, both forms at once): the caller then takes the
 * tree path, which answers the exact error. The single form (one ray's or
 * segment's members at the top level) is taken like a batch of one, with
 * q->batch 0 as the tree path sets it.
 */
int decode_ray_query_direct(const char *body, size_t len, const struct api_limits *lim,
			    struct query *q);
int decode_segment_query_direct(const char *body, size_t len, const struct api_limits *lim,
				struct query *q);
/* POST /v1/obb/raycast. */
enum api_err decode_obb_query(const cJSON *root, const struct api_limits *lim,
			      struct query *q, struct api_fail *f);
/* Its fast path (rays_direct.c), as decode_hitscan_query_direct below: the
 * rays from the text, "boxes" through decode_obb_targets. */
int decode_obb_query_direct(const char *body, size_t len, const struct api_limits *lim,
			    struct json_arena *a, struct query *q);
/* decode_obb_query's reading of "boxes" (required) into q, from root, an
 * object of only that member. On failure q may hold boxes: query_release it. */
enum api_err decode_obb_targets(const cJSON *root, const struct api_limits *lim,
				struct query *q, struct api_fail *f);
/* POST /v1/hitscan. */
enum api_err decode_hitscan_query(const cJSON *root, const struct api_limits *lim,
				  struct query *q, struct api_fail *f);
/*
 * The fast path of decode_hitscan_query (rays_direct.c), as
 * decode_ray_query_direct: the shots (or the single shot's members) read
 * straight from the text; "mesh", "transform" and "boxes", a few members,
 * through the tree path's readers on a tree of only them, parsed into a
 * (q->mesh and the box ids point into it: release a after q).
 */
int decode_hitscan_query_direct(const char *body, size_t len, const struct api_limits *lim,
				struct json_arena *a, struct query *q);
/* decode_hitscan_query's reading of "mesh", "transform" and "boxes" into q
 * (its defaults included), from root, an object of only those members:
 * the tree half of decode_hitscan_query_direct. On failure q may hold
 * boxes: query_release it. */
enum api_err decode_hitscan_targets(const cJSON *root, const struct api_limits *lim,
				    struct query *q, struct api_fail *f);

/*
 * POST /v1/meshes/{name}/raycast with Content-Type application/octet-stream
 * (API.md "Binary batches"): len bytes of 28-byte records, 7 little-endian
 * float32 [ox, oy, oz, dx, dy, dz, max_distance] (max_distance +inf or
 * >= 3.4e38: unbounded); options from the query string (args: NULL-
 * terminated key/value pairs, "mode" = closest|any, "backfaces" = hit|cull).
 * Errors name the record: "rays[3].direction: must not be zero".
 * Every record is checked here but q->rays stays NULL: q->records points
 * into body (which must outlive q) and binary_ray() makes ray k.
 */
enum api_err decode_binary_rays(const void *body, size_t len, const struct api_arg *args,
				const struct api_limits *lim, struct query *q, struct api_fail *f);
/* Ray k (< q->n) of a decoded binary batch, as the JSON decoder would make
 * it from the same float numbers. */
void binary_ray(const struct query *q, size_t k, struct qray *r);

/* POST /v1/meshes/{name}/overlap. */
struct overlap_query {
	struct obb box;
	size_t limit;
};

enum api_err decode_overlap_query(const cJSON *root, struct overlap_query *q, struct api_fail *f);

/*
 * A mesh upload by content type (decode_mesh.c): application/json
 * {"vertices": [[x,y,z],...] or [x,y,z,...], "triangles": [[a,b,c],...] or
 * [a,b,c,...]}, model/obj, model/stl. Into out (malloc'd arrays: free with
 * mesh_data_release). Index range and finiteness are checked here so that
 * messages can name triangles[i] / vertices[i] (API_INVALID_MESH); more
 * than max_tris triangles is API_PAYLOAD_TOO_LARGE, checked before
 * allocating; another type is API_UNSUPPORTED_MEDIA_TYPE.
 */
enum api_err decode_mesh_upload(const char *content_type, const char *body, size_t len,
				size_t max_tris, struct mesh_data *out, struct api_fail *f);
enum api_err decode_mesh_json(const cJSON *root, size_t max_tris, struct mesh_data *out,
			      struct api_fail *f);

#endif
