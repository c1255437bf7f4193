/* handlers.c - api_handle: route, access, content type, dispatch; error bodies. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "handlers.h"
#include "membudget.h"
#include "response_cap.h"

/* Sent when not even an error body can be allocated. */
static const char oom_body[] =
	"{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";

static void resp_init(struct api_response *resp)
{
	resp->status = 200;
	resp->content_type = "application/json";
	buf_init(&resp->body);
	resp->static_body = NULL;
	resp->allow[0] = '\0';
	resp->www_authenticate = 0;
	resp->route_label = "unmatched";
	resp->ray_kind = NULL;
	resp->rays = 0;
	memset(resp->world_shots, 0, sizeof(resp->world_shots));
	resp->world_snapshots = 0;
}

/* The static out-of-memory answer, in static_body (body left empty). */
static void respond_oom(struct api_response *resp)
{
	buf_release(&resp->body);
	buf_init(&resp->body);
	resp->status = 500;
	resp->content_type = "application/json";
	resp->static_body = oom_body;
}

void api_respond_error(struct api_response *resp, enum api_err e, const char *msg)
{
	const struct api_err_info *info = api_err_info(e);

	buf_release(&resp->body);
	buf_init(&resp->body);
	resp->static_body = NULL;
	resp->status = info->status;
	resp->content_type = "application/json";
	encode_error(&resp->body, info->code, msg);
	if (resp->body.oom)
		respond_oom(resp);
}

void api_respond_memory_full(struct api_response *resp, const char *what)
{
	char msg[200];

	snprintf(msg, sizeof(msg),
		 "memory: no room for this %s under --max-memory (%zu bytes; meshes and snapshots hold %zu)",
		 what, membudget_limit(), membudget_held());
	api_respond_error(resp, API_INSUFFICIENT_STORAGE, msg);
}

void api_respond_fail(struct api_response *resp, const struct api_fail *f)
{
	api_respond_error(resp, f->err, f->msg);
}

/*
 * See api.h. resp may be uninitialised: every field is set (route_label
 * "unmatched", no Allow, WWW-Authenticate for API_UNAUTHORIZED); a body it
 * held before is not freed, so release it first.
 */
void api_error(struct api_response *resp, enum api_err e, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	resp_init(resp);
	resp->www_authenticate = e == API_UNAUTHORIZED;
	api_respond_error(resp, e, msg);
}

void api_response_release(struct api_response *resp)
{
	buf_release(&resp->body);
	buf_init(&resp->body);
	resp->static_body = NULL;
}

const char *api_response_body(const struct api_response *resp, size_t *len)
{
	if (resp->static_body) {
		*len = strlen(resp->static_body);
		return resp->static_body;
	}
	*len = resp->body.len;
	return resp->body.data;
}

/* c in lower case when it is an ASCII letter (the C locale's tolower). */
static inline unsigned char lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c;
}

const char *api_media_type_match(const char *content_type, const char *const *types)
{
	const char *s = content_type;

	if (!s)
		return NULL;
	/* most clients send the type as registered, alone */
	for (size_t k = 0; types[k]; k++)
		if (strcmp(s, types[k]) == 0)
			return types[k];
	while (*s == ' ' || *s == '\t')
		s++;
	/* else each type in one pass, any case, until the first difference */
	for (; *types; types++) {
		const char *t = *types, *r;
		size_t i;

		for (i = 0; t[i] && lower((unsigned char)s[i]) == (unsigned char)t[i]; i++)
			;
		if (t[i])
			continue;
		/* then only blanks before the parameters or the end */
		for (r = s + i; *r == ' ' || *r == '\t'; r++)
			;
		if (*r == '\0' || *r == ';')
			return *types;
	}
	return NULL;
}

int api_media_type_is(const char *content_type, const char *const *types)
{
	return api_media_type_match(content_type, types) != NULL;
}

typedef void (*handler_fn)(const struct api_ctx *ctx, const struct api_request *req,
			   const struct api_match *m, struct api_response *resp);

static const handler_fn handlers[] = {
	[OP_OPENAPI] = handle_openapi,
	[OP_MESH_LIST] = handle_mesh_list,
	[OP_MESH_PUT] = handle_mesh_put,
	[OP_MESH_GET] = handle_mesh_get,
	[OP_MESH_DELETE] = handle_mesh_delete,
	[OP_MESH_RAYCAST] = handle_mesh_raycast,
	[OP_MESH_SEGMENT] = handle_mesh_segment,
	[OP_MESH_OVERLAP] = handle_mesh_overlap,
	[OP_OBB_RAYCAST] = handle_obb_raycast,
	[OP_HITSCAN] = handle_hitscan,
	[OP_WORLD_LIST] = handle_world_list,
	[OP_WORLD_PUT] = handle_world_put,
	[OP_WORLD_GET] = handle_world_get,
	[OP_WORLD_DELETE] = handle_world_delete,
	[OP_WORLD_SNAPSHOT] = handle_world_snapshot,
	[OP_WORLD_HITSCAN] = handle_world_hitscan,
	[OP_WORLD_RAYCAST] = handle_world_raycast,
};

/* The body types an operation accepts besides JSON, NULL-terminated (NULL:
 * JSON only); ops without a query body are not checked here. */
static const char *const raycast_types[] = { "application/json", "application/octet-stream", NULL };
static const char *const json_types[] = { "application/json", NULL };

static const char *const *op_body_types(enum api_op op)
{
	switch (op) {
	case OP_MESH_RAYCAST:
		return raycast_types;
	case OP_MESH_SEGMENT:
	case OP_MESH_OVERLAP:
	case OP_OBB_RAYCAST:
	case OP_HITSCAN:
	case OP_WORLD_PUT:
	case OP_WORLD_SNAPSHOT:
	case OP_WORLD_HITSCAN:
	case OP_WORLD_RAYCAST:
		return json_types;
	default:
		return NULL;
	}
}

enum api_err api_access(const char *path, enum api_access access, enum api_auth auth,
			const char **msg)
{
	if (api_path_needs_key(path) && access == API_ACCESS_OPEN)
		access = API_ACCESS_READ;
	if (access == API_ACCESS_OPEN)
		return API_OK;
	if (auth == API_AUTH_NONE) {
		*msg = "missing or wrong bearer key (send Authorization: Bearer KEY)";
		return API_UNAUTHORIZED;
	}
	if (access == API_ACCESS_WRITE && auth != API_AUTH_WRITE) {
		*msg = "this key may only query; PUT, DELETE and world snapshots need the write key";
		return API_FORBIDDEN;
	}
	return API_OK;
}

/*
 * Order of checks: access (api_access: 401 for any /v1 path without a key,
 * 403 for a write with a read key), route (404, 405), the {name} in the
 * path (400), body size (413), content type (415), then the handler, which
 * validates the body before it looks the mesh up (400 before 404).
 */
void api_handle(const struct api_ctx *ctx, const struct api_request *req, struct api_response *resp)
{
	const char *const *types;
	struct api_route_info info;
	struct api_match m;
	const char *why;
	enum api_err e, ae;
	size_t limit;
	char msg[160];

	resp_init(resp);
	if (req->route)
		info = *req->route;
	else
		api_route(req->method, req->path, &info);
	e = info.err;
	m.op = (enum api_op)info.op;
	m.name[0] = '\0';
	m.name_raw = info.name_raw;
	m.name_raw_len = info.name_raw_len;
	resp->route_label = info.label;
	ae = api_access(req->path, e == API_OK ? info.access : API_ACCESS_OPEN, req->auth, &why);
	if (ae) {
		resp->www_authenticate = ae == API_UNAUTHORIZED;
		api_respond_error(resp, ae, why);
		return;
	}
	if (e == API_NOT_FOUND) {
		api_respond_error(resp, API_NOT_FOUND, "no such path");
		return;
	}
	if (e == API_METHOD_NOT_ALLOWED) {
		memcpy(resp->allow, info.allow, sizeof(resp->allow));
		snprintf(msg, sizeof(msg), "method %.16s not allowed here; allowed: %s",
			 req->method, info.allow);
		api_respond_error(resp, API_METHOD_NOT_ALLOWED, msg);
		return;
	}
	if (m.name_raw_len) {
		if (m.name_raw_len <= STORE_NAME_MAX)
			memcpy(m.name, m.name_raw, m.name_raw_len);
		m.name[m.name_raw_len <= STORE_NAME_MAX ? m.name_raw_len : 0] = '\0';
		if (m.name_raw_len > STORE_NAME_MAX || !store_name_valid(m.name)) {
			api_respond_error(resp, API_INVALID_REQUEST,
					  "name: must match [A-Za-z0-9_.-]{1,64} and not start with '.'");
			return;
		}
	}
	limit = info.mesh_upload ? ctx->limits.max_body_mesh : ctx->limits.max_body_query;
	if (limit && req->body_len > limit) {
		snprintf(msg, sizeof(msg), "body: %zu bytes, the limit is %zu", req->body_len, limit);
		api_respond_error(resp, API_PAYLOAD_TOO_LARGE, msg);
		return;
	}
	types = op_body_types(m.op);
	m.media = NULL;
	if (types && req->content_type && req->content_type[0] &&
	    !(m.media = api_media_type_match(req->content_type, types))) {
		size_t n = (size_t)snprintf(msg, sizeof(msg), "Content-Type %.60s is not accepted: send ",
					    req->content_type);

		for (size_t k = 0; types[k] && n < sizeof(msg); k++)
			n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s%s", k ? " or " : "", types[k]);
		api_respond_error(resp, API_UNSUPPORTED_MEDIA_TYPE, msg);
		return;
	}
	buf_set_limit(&resp->body, ctx->limits.max_response_bytes);	/* see buf.h */
	handlers[m.op](ctx, req, &m, resp);
	if (resp->body.over || resp->body.oom) {
		/* not answered: nothing of it is counted as answered */
		resp->rays = 0;
		memset(resp->world_shots, 0, sizeof(resp->world_shots));
	}
	if (resp->body.over)
		api_respond_over_cap(resp, ctx->limits.max_response_bytes);
	else if (resp->body.oom)
		respond_oom(resp);
}
