/* router.c - the route table: (method, path) to an operation, access and label. */
#include <stdio.h>
#include <string.h>

#include "handlers.h"

struct route {
	const char *method;
	const char *pattern;	/* "{...}" ({name}, {world}) matches one non-empty path segment */
	enum api_op op;
	enum api_access access;
	int mesh_upload;
};

/* Routes of one path are adjacent: 405's Allow lists them in this order. */
static const struct route routes[] = {
	{ "GET", "/v1/openapi.yaml", OP_OPENAPI, API_ACCESS_READ, 0 },
	{ "GET", "/v1/meshes", OP_MESH_LIST, API_ACCESS_READ, 0 },
	{ "GET", "/v1/meshes/{name}", OP_MESH_GET, API_ACCESS_READ, 0 },
	{ "PUT", "/v1/meshes/{name}", OP_MESH_PUT, API_ACCESS_WRITE, 1 },
	{ "DELETE", "/v1/meshes/{name}", OP_MESH_DELETE, API_ACCESS_WRITE, 0 },
	{ "POST", "/v1/meshes/{name}/raycast", OP_MESH_RAYCAST, API_ACCESS_READ, 0 },
	{ "POST", "/v1/meshes/{name}/segment", OP_MESH_SEGMENT, API_ACCESS_READ, 0 },
	{ "POST", "/v1/meshes/{name}/overlap", OP_MESH_OVERLAP, API_ACCESS_READ, 0 },
	{ "POST", "/v1/obb/raycast", OP_OBB_RAYCAST, API_ACCESS_READ, 0 },
	{ "POST", "/v1/hitscan", OP_HITSCAN, API_ACCESS_READ, 0 },
	/* worlds: writes (create, delete, snapshots) need the write key */
	{ "GET", "/v1/worlds", OP_WORLD_LIST, API_ACCESS_READ, 0 },
	{ "GET", "/v1/worlds/{world}", OP_WORLD_GET, API_ACCESS_READ, 0 },
	{ "PUT", "/v1/worlds/{world}", OP_WORLD_PUT, API_ACCESS_WRITE, 0 },
	{ "DELETE", "/v1/worlds/{world}", OP_WORLD_DELETE, API_ACCESS_WRITE, 0 },
	{ "POST", "/v1/worlds/{world}/snapshots", OP_WORLD_SNAPSHOT, API_ACCESS_WRITE, 0 },
	{ "POST", "/v1/worlds/{world}/hitscan", OP_WORLD_HITSCAN, API_ACCESS_READ, 0 },
	{ "POST", "/v1/worlds/{world}/raycast", OP_WORLD_RAYCAST, API_ACCESS_READ, 0 },
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

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
	const struct route *found = NULL;
	size_t k, alen = 0;

	memset(info, 0, sizeof(*info));
	memset(m, 0, sizeof(*m));
	info->label = "unmatched";
	if (!method || !path)
		return API_NOT_FOUND;
	for (k = 0; k < NROUTES; k++) {
		const char *seg;
		size_t seg_len;

		if (!path_match(routes[k].pattern, path, &seg, &seg_len))
			continue;
		info->label = routes[k].pattern;
		if (strcmp(routes[k].method, method) == 0) {
			found = &routes[k];
			m->name_raw = seg;
			m->name_raw_len = seg_len;
			break;
		}
		alen += (size_t)snprintf(info->allow + alen, sizeof(info->allow) - alen, "%s%s",
					 alen ? ", " : "", routes[k].method);
		if (alen >= sizeof(info->allow))
			alen = sizeof(info->allow) - 1;
	}
	if (!found) {
		if (alen == 0)
			return API_NOT_FOUND;
		return API_METHOD_NOT_ALLOWED;
	}
	info->allow[0] = '\0';
	info->access = found->access;
	info->mesh_upload = found->mesh_upload;
	m->op = found->op;
	return API_OK;
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
