/* handlers.c - api_handle: route, access, content type, dispatch; error bodies. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "encode.h"
#include "handlers.h"
#include "response_cap.h"

/* Sent when not even an error body can be allocated. */
static const char oom_body[] =
	"{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";

static void resp_init(struct api_response *resp)
{
	resp->status = 200;
	resp->content_type = "application/json";
	buf_init(&resp->body);
	resp->allow[0] = '\0';
	resp->www_authenticate = 0;
	resp->route_label = "unmatched";
	resp->ray_kind = NULL;
	resp->rays = 0;
}

/* The static out-of-memory answer. The body's cap stays 0: release knows
 * not to free it. */
static void respond_oom(struct api_response *resp)
{
	buf_release(&resp->body);
	resp->status = 500;
	resp->content_type = "application/json";
	resp->body.data = (char *)oom_body;
	resp->body.len = sizeof(oom_body) - 1;
	resp->body.cap = 0;
}

void api_respond_error(struct api_response *resp, enum api_err e, const char *msg)
{
	const struct api_err_info *info = api_err_info(e);

	if (resp->body.cap)
		buf_release(&resp->body);
	else
		buf_init(&resp->body);
	resp->status = info->status;
	resp->content_type = "application/json";
	encode_error(&resp->body, info->code, msg);
	if (resp->body.oom)
		respond_oom(resp);
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

/* Frees the body (unless it is the static out-of-memory one). */
void api_response_release(struct api_response *resp)
{
	if (resp->body.cap)
		buf_release(&resp->body);
	else
		buf_init(&resp->body);
}

int api_media_type_is(const char *content_type, const char *const *types)
{
	const char *s = content_type, *e;
	size_t n;

	if (!s)
		return 0;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strcspn(s, ";");
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	n = (size_t)(e - s);
	for (; *types; types++)
		if (strlen(*types) == n && strncasecmp(s, *types, n) == 0)
			return 1;
	return 0;
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
};

static int op_takes_json_body(enum api_op op)
{
	return op == OP_MESH_RAYCAST || op == OP_MESH_SEGMENT || op == OP_MESH_OVERLAP ||
	       op == OP_OBB_RAYCAST || op == OP_HITSCAN;
}

/* 401/403 when auth does not grant access; 0 when it does. */
static int check_access(enum api_access access, enum api_auth auth, struct api_response *resp)
{
	if (access == API_ACCESS_OPEN)
		return 0;
	if (auth == API_AUTH_NONE) {
		resp->www_authenticate = 1;
		api_respond_error(resp, API_UNAUTHORIZED,
				  "missing or wrong bearer key (send Authorization: Bearer KEY)");
		return -1;
	}
	if (access == API_ACCESS_WRITE && auth != API_AUTH_WRITE) {
		api_respond_error(resp, API_FORBIDDEN,
				  "this key may only query; uploading and deleting meshes needs the write key");
		return -1;
	}
	return 0;
}

/*
 * Order of checks: a key for any /v1 path (401), route (404, 405), access
 * (403), the {name} in the
 * path (400), body size (413), content type (415), then the handler, which
 * validates the body before it looks the mesh up (400 before 404).
 */
void api_handle(const struct api_ctx *ctx, const struct api_request *req, struct api_response *resp)
{
	static const char *const json_types[] = { "application/json", NULL };
	struct api_route_info info;
	struct api_match m;
	enum api_err e;
	size_t limit;
	char msg[160];

	resp_init(resp);
	e = api_route_match(req->method, req->path, &info, &m);
	resp->route_label = info.label;
	if (api_path_needs_key(req->path) && check_access(API_ACCESS_READ, req->auth, resp))
		return;
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
	if (check_access(info.access, req->auth, resp))
		return;
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
	if (op_takes_json_body(m.op) && req->content_type && req->content_type[0] &&
	    !api_media_type_is(req->content_type, json_types)) {
		snprintf(msg, sizeof(msg),
			 "Content-Type %.60s is not accepted: send application/json", req->content_type);
		api_respond_error(resp, API_UNSUPPORTED_MEDIA_TYPE, msg);
		return;
	}
	buf_set_limit(&resp->body, ctx->limits.max_response_bytes);	/* see buf.h */
	handlers[m.op](ctx, req, &m, resp);
	if (resp->body.over)
		api_respond_over_cap(resp, ctx->limits.max_response_bytes);
	else if (resp->body.oom)
		respond_oom(resp);
}
