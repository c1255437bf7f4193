/* router.c - the route table: (method, path) to an operation, access and label. */
#include <stdio.h>
#include <string.h>

#include "handlers.h"

struct route {
	const char *method;
	enum api_op op;
	enum api_access access;
	int mesh_upload;
};

/* A path and the methods it answers, in the order 405's Allow lists them. */
struct route_path {
	const char *pattern;	/* "{...}" ({name}, {world}) matches one non-empty path segment */
	struct route methods[3];	/* the unused ones: method NULL */
};

static const struct route_path paths[] = {
	{ "/v1/openapi.yaml", { { "GET", OP_OPENAPI, API_ACCESS_READ, 0 } } },
	{ "/v1/meshes", { { "GET", OP_MESH_LIST, API_ACCESS_READ, 0 } } },
	{ "/v1/meshes/{name}", { { "GET", OP_MESH_GET, API_ACCESS_READ, 0 },
				 { "PUT", OP_MESH_PUT, API_ACCESS_WRITE, 1 },
				 { "DELETE", OP_MESH_DELETE, API_ACCESS_WRITE, 0 } } },
	{ "/v1/meshes/{name}/raycast", { { "POST", OP_MESH_RAYCAST, API_ACCESS_READ, 0 } } },
	{ "/v1/meshes/{name}/segment", { { "POST", OP_MESH_SEGMENT, API_ACCESS_READ, 0 } } },
	{ "/v1/meshes/{name}/overlap", { { "POST", OP_MESH_OVERLAP, API_ACCESS_READ, 0 } } },
	{ "/v1/obb/raycast", { { "POST", OP_OBB_RAYCAST, API_ACCESS_READ, 0 } } },
	{ "/v1/hitscan", { { "POST", OP_HITSCAN, API_ACCESS_READ, 0 } } },
	/* worlds: writes (create, delete, snapshots) need the write key */
	{ "/v1/worlds", { { "GET", OP_WORLD_LIST, API_ACCESS_READ, 0 } } },
	{ "/v1/worlds/{world}", { { "GET", OP_WORLD_GET, API_ACCESS_READ, 0 },
				  { "PUT", OP_WORLD_PUT, API_ACCESS_WRITE, 0 },
				  { "DELETE", OP_WORLD_DELETE, API_ACCESS_WRITE, 0 } } },
	{ "/v1/worlds/{world}/snapshots", { { "POST", OP_WORLD_SNAPSHOT, API_ACCESS_WRITE, 0 } } },
	{ "/v1/worlds/{world}/hitscan", { { "POST", OP_WORLD_HITSCAN, API_ACCESS_READ, 0 } } },
	{ "/v1/worlds/{world}/raycast", { { "POST", OP_WORLD_RAYCAST, API_ACCESS_READ, 0 } } },
};

#define NPATHS (sizeof(paths) / sizeof(paths[0]))
#define NMETHODS (sizeof(paths[0].methods) / sizeof(paths[0].methods[0]))

/* 1 when path matches pattern; the placeholder's segment goes to *seg and
 * *seg_len (the label keeps the placeholder's own name: {name}, {world}). */
static int path_match(const char *pattern, const char *path, const char **seg, size_t *seg_len)
{
	*seg = NULL;
	*seg_len = 0;
	while (*pattern) {
		if (*pattern == '{') {
			const char *close = strchr(pattern, '}');
			size_t n = strcspn(path, "/");

			if (!close || n == 0)
				return 0;
			*seg = path;
			*seg_len = n;
			path += n;
			pattern = close + 1;
			continue;
		}
		if (*pattern != *path)
			return 0;
		pattern++;
		path++;
	}
	return *path == '\0';
}

/*
 * Match (method, path) against the table. API_OK: info and m filled (m's
 * name left empty: api_handle validates name_raw). API_METHOD_NOT_ALLOWED:
 * the path exists with other methods; info->label and info->allow filled.
 * API_NOT_FOUND otherwise (info->label = "unmatched").
 */
enum api_err api_route_match(const char *method, const char *path, struct api_route_info *info,
			     struct api_match *m)
{
	const struct route_path *rp = NULL;
	const char *seg = NULL;
	size_t k, seg_len = 0, alen = 0;

	info->label = "unmatched";
	info->access = API_ACCESS_OPEN;
	info->mesh_upload = 0;
	info->allow[0] = '\0';
	m->op = 0;
	m->name[0] = '\0';
	m->name_raw = NULL;
	m->name_raw_len = 0;
	if (!method || !path)
		return API_NOT_FOUND;
	for (k = 0; k < NPATHS && !rp; k++)
		if (path_match(paths[k].pattern, path, &seg, &seg_len))
			rp = &paths[k];
	if (!rp)
		return API_NOT_FOUND;
	info->label = rp->pattern;
	for (k = 0; k < NMETHODS && rp->methods[k].method; k++) {
		const struct route *r = &rp->methods[k];

		if (strcmp(r->method, method) == 0) {
			info->allow[0] = '\0';
			info->access = r->access;
			info->mesh_upload = r->mesh_upload;
			m->op = r->op;
			m->name_raw = seg;
			m->name_raw_len = seg_len;
			return API_OK;
		}
		alen += (size_t)snprintf(info->allow + alen, sizeof(info->allow) - alen, "%s%s",
					 alen ? ", " : "", r->method);
		if (alen >= sizeof(info->allow))
			alen = sizeof(info->allow) - 1;
	}
	return API_METHOD_NOT_ALLOWED;
}

/*
 * See api.h. Paths are matched exactly (no trailing slash, no
 * percent-decoding: the server hands the decoded path).
 */
enum api_err api_route(const char *method, const char *path, struct api_route_info *info)
{
	struct api_match m;

	return api_route_match(method, path, info, &m);
}

int api_path_needs_key(const char *path)
{
	return strcmp(path, "/v1") == 0 || strncmp(path, "/v1/", 4) == 0;
}
