/* router.c - the route table: (method, path) to an operation, access and label. */
#include <pthread.h>
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

/*
 * Paths are compared segment by segment: the path is cut at its slashes
 * once, and each pattern's segments were cut once (patterns_cut), so most
 * patterns are passed over on their segment count alone.
 */
#define SEG_MAX 4

struct segs {
	unsigned n;
	const char *p[SEG_MAX];
	size_t len[SEG_MAX];
};

/* Cut path ("/a/b/c") into its segments; 0 when it does not start with '/'
 * or has more than SEG_MAX of them (no route has). Empty segments are kept:
 * they match nothing. */
static int cut(const char *path, struct segs *sg)
{
	sg->n = 0;
	if (*path != '/')
		return 0;
	while (*path == '/') {
		const char *start = ++path;

		while (*path && *path != '/')
			path++;
		if (sg->n == SEG_MAX)
			return 0;
		sg->p[sg->n] = start;
		sg->len[sg->n] = (size_t)(path - start);
		sg->n++;
	}
	return 1;
}

static struct segs pattern_segs[sizeof(paths) / sizeof(paths[0])];
static pthread_once_t patterns_once = PTHREAD_ONCE_INIT;

static void patterns_cut(void)
{
	size_t k;

	for (k = 0; k < sizeof(paths) / sizeof(paths[0]); k++)
		cut(paths[k].pattern, &pattern_segs[k]);
}

/* 1 when the path's segments match pattern k's: literals byte for byte, a
 * "{...}" any non-empty segment, whose place goes to *seg and *seg_len. */
static int segs_match(size_t k, const struct segs *path, const char **seg, size_t *seg_len)
{
	const struct segs *pat = &pattern_segs[k];
	unsigned i;

	if (pat->n != path->n)
		return 0;
	*seg = NULL;
	*seg_len = 0;
	for (i = 0; i < pat->n; i++) {
		if (pat->p[i][0] == '{') {
			if (!path->len[i])
				return 0;
			*seg = path->p[i];
			*seg_len = path->len[i];
		} else if (pat->len[i] != path->len[i] ||
			   memcmp(pat->p[i], path->p[i], pat->len[i]) != 0) {
			return 0;
		}
	}
	return 1;
}

/*
 * See api.h. Paths are matched exactly (no trailing slash, no
 * percent-decoding: the server hands the decoded path). API_OK: info filled,
 * its name_raw unvalidated (api_handle checks it). API_METHOD_NOT_ALLOWED:
 * the path exists with other methods; info->label and info->allow filled.
 * API_NOT_FOUND otherwise (info->label = "unmatched").
 */
enum api_err api_route(const char *method, const char *path, struct api_route_info *info)
{
	const struct route_path *rp = NULL;
	struct segs sg;
	const char *seg = NULL;
	size_t k, seg_len = 0, alen = 0;

	info->label = "unmatched";
	info->access = API_ACCESS_OPEN;
	info->mesh_upload = 0;
	info->allow[0] = '\0';
	info->err = API_NOT_FOUND;
	info->op = 0;
	info->name_raw = NULL;
	info->name_raw_len = 0;
	if (!method || !path || !cut(path, &sg))
		return API_NOT_FOUND;
	pthread_once(&patterns_once, patterns_cut);
	for (k = 0; k < NPATHS && !rp; k++)
		if (segs_match(k, &sg, &seg, &seg_len))
			rp = &paths[k];
	if (!rp)
		return API_NOT_FOUND;
	info->label = rp->pattern;
	for (k = 0; k < NMETHODS && rp->methods[k].method; k++) {
		const struct route *r = &rp->methods[k];

		if (strcmp(r->method, method) == 0) {
			info->access = r->access;
			info->mesh_upload = r->mesh_upload;
			info->err = API_OK;
			info->op = (int)r->op;
			info->name_raw = seg;
			info->name_raw_len = seg_len;
			return API_OK;
		}
	}
	/* none matched: Allow lists the path's methods, and HEAD wherever GET
	 * is (the server answers it as GET without the body) */
	for (k = 0; k < NMETHODS && rp->methods[k].method; k++) {
		const char *m = rp->methods[k].method;

		alen += (size_t)snprintf(info->allow + alen, sizeof(info->allow) - alen, "%s%s%s",
					 alen ? ", " : "", m, strcmp(m, "GET") == 0 ? ", HEAD" : "");
		if (alen >= sizeof(info->allow))
			alen = sizeof(info->allow) - 1;
	}
	info->err = API_METHOD_NOT_ALLOWED;
	return API_METHOD_NOT_ALLOWED;
}

int api_path_needs_key(const char *path)
{
	/* "/v1" or "/v1/...", byte by byte (two strcmp calls per request were
	 * most of a routed request's string compares) */
	return path[0] == '/' && path[1] == 'v' && path[2] == '1' && (path[3] == '\0' || path[3] == '/');
}
