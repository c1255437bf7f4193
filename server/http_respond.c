/* http_respond.c - answers as api responses, the same for both engines:
 * errors, the ops endpoints /healthz, /readyz and /metrics, the api's own,
 * and what is recorded once a request is over (see http_impl.h). */
#include "http_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "metrics.h"

void http_error_response(struct api_response *resp, enum api_err e, const char *allow,
			 const char *msg)
{
	memset(resp, 0, sizeof(*resp));
	buf_init(&resp->body);
	api_error(resp, e, "%s", msg);
	if (allow)
		snprintf(resp->allow, sizeof(resp->allow), "%s", allow);
	if (e == API_UNAUTHORIZED)
		resp->www_authenticate = 1;
}

static int static_response(struct api_response *resp, int status, const char *type,
			   const char *body)
{
	memset(resp, 0, sizeof(*resp));
	buf_init(&resp->body);
	resp->status = status;
	resp->content_type = type;
	buf_puts(&resp->body, body);
	if (resp->body.oom) {
		buf_release(&resp->body);
		return -1;
	}
	return 0;
}

int http_ops_response(struct http_server *s, struct request *r, struct api_response *resp)
{
	if (strcmp(r->route_label, "/healthz") == 0)
		return static_response(resp, 200, "application/json", "{\"status\":\"ok\"}");
	if (strcmp(r->route_label, "/readyz") == 0) {
		if (!atomic_load(s->p.ready)) {
			http_error_response(resp, API_NOT_READY, NULL, "still loading stored meshes");
			return 0;
		}
		return static_response(resp, 200, "application/json", "{\"status\":\"ready\"}");
	}
	memset(resp, 0, sizeof(*resp));
	buf_init(&resp->body);
	resp->status = 200;
	resp->content_type = METRICS_CONTENT_TYPE;
	metrics_render(s->p.metrics, s->p.api->store, COLLISIOND_VERSION, &resp->body);
	metrics_render_worlds(s->p.metrics, s->p.api->worlds, &resp->body);
	if (resp->body.oom) {
		buf_release(&resp->body);
		http_error_response(resp, API_INTERNAL, NULL, "out of memory");
	}
	return 0;
}

void http_api_response(struct http_server *s, struct request *r, const char *method,
		       const struct api_arg *args, struct api_response *resp)
{
	struct api_request req;

	memset(&req, 0, sizeof(req));
	req.args = args;
	/* HEAD is GET without the body (the engine drops it) */
	req.method = strcmp(method, "HEAD") == 0 ? "GET" : method;
	req.path = r->raw;	/* exactly as sent */
	req.content_type = r->head.content_type;
	req.body = r->body;
	req.body_len = r->len;
	req.auth = r->auth;
	req.route = r->routed ? &r->route : NULL;
	memset(resp, 0, sizeof(*resp));
	api_handle(s->p.api, &req, resp);
	if (resp->route_label)
		r->route_label = resp->route_label;
	r->ray_kind = resp->ray_kind;
	r->rays = resp->rays;
	metrics_record_worlds(s->p.metrics, resp->world_shots, resp->world_snapshots);
	http_body_release(r);
}

_Static_assert(ACCESS_LINE_MAX <= LOG_LINE_MAX - 64, "an access line fits log_access_begin's room");
_Static_assert(ACCESS_RID_MAX == HTTP_REQUEST_ID_MAX, "an access line holds a whole X-Request-Id");

void http_request_record(struct http_server *s, struct request *r, const char *remote)
{
	uint64_t us = (now_ns() - r->t0_ns) / 1000;
	struct access_fields f;
	struct log_shard *sh;
	char *line;

	if (r->status)
		metrics_record(s->p.metrics, r->route_label, r->method, r->status, us, r->ray_kind,
			       r->rays);
	if (!remote)
		return;
	/* formatted straight into the log's buffer */
	line = log_access_begin(s->p.log, ACCESS_LINE_MAX, &sh);
	if (!line)
		return;
	f = (struct access_fields){ r->method, r->raw, r->status, r->bytes, us, remote, r->rid,
				    r->rid_len };
	log_access_end(s->p.log, sh, line + access_format(line, &f));
}
