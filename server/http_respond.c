/* http_respond.c - queueing answers: api responses, errors, and the ops
 * endpoints /healthz, /readyz and /metrics (see http_impl.h). */
#include "http_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "metrics.h"

/* Queue resp's body and headers. Takes the body out of resp. */
static enum MHD_Result send_response(struct MHD_Connection *c, struct request *r,
				     struct api_response *resp)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;
	size_t len = 0;
	char *data = buf_detach(&resp->body, &len);

	if (resp->static_body) {
		/* the api's static answer (out of memory): never freed, never written */
		api_response_body(resp, &len);
		mr = MHD_create_response_from_buffer(len, (void *)resp->static_body,
						     MHD_RESPMEM_PERSISTENT);
	} else if (data)
		mr = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	else
		mr = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!mr) {
		free(data);
		return MHD_NO;
	}
	if (resp->content_type && len)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
	if (resp->allow[0])
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, resp->allow);
	if (resp->www_authenticate)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (atomic_load_explicit(&r->srv->draining, memory_order_relaxed))
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(c, (unsigned)resp->status, mr);
	MHD_destroy_response(mr);
	if (ret == MHD_YES) {
		r->status = resp->status;
		r->bytes = len;
	}
	return ret;
}

/* Answer with an error of the api's table, e.g. an early 413. */
enum MHD_Result http_send_error(struct MHD_Connection *c, struct request *r, enum api_err e,
				const char *allow, const char *msg)
{
	struct api_response resp;
	enum MHD_Result ret;

	memset(&resp, 0, sizeof(resp));
	buf_init(&resp.body);
	api_error(&resp, e, "%s", msg);
	if (allow)
		snprintf(resp.allow, sizeof(resp.allow), "%s", allow);
	if (e == API_UNAUTHORIZED)
		resp.www_authenticate = 1;
	ret = send_response(c, r, &resp);
	api_response_release(&resp);
	return ret;
}

static enum MHD_Result send_static(struct MHD_Connection *c, struct request *r, int status,
				   const char *type, const char *body)
{
	struct api_response resp;
	enum MHD_Result ret;

	memset(&resp, 0, sizeof(resp));
	buf_init(&resp.body);
	resp.status = status;
	resp.content_type = type;
	buf_puts(&resp.body, body);
	if (resp.body.oom) {
		buf_release(&resp.body);
		return MHD_NO;
	}
	ret = send_response(c, r, &resp);
	api_response_release(&resp);
	return ret;
}

enum MHD_Result http_serve_ops(struct http_server *s, struct MHD_Connection *c,
			       struct request *r)
{
	struct api_response resp;
	enum MHD_Result ret;

	if (strcmp(r->route_label, "/healthz") == 0) {
		if (!atomic_load_explicit(&s->draining, memory_order_relaxed)) {
			ret = MHD_queue_response(c, MHD_HTTP_OK, s->healthz);
			if (ret == MHD_YES) {
				r->status = MHD_HTTP_OK;
				r->bytes = sizeof("{\"status\":\"ok\"}") - 1;
			}
			return ret;
		}
		return send_static(c, r, MHD_HTTP_OK, "application/json", "{\"status\":\"ok\"}");
	}
	if (strcmp(r->route_label, "/readyz") == 0) {
		if (!atomic_load(s->p.ready))
			return http_send_error(c, r, API_NOT_READY, NULL,
					  "still loading stored meshes");
		return send_static(c, r, MHD_HTTP_OK, "application/json", "{\"status\":\"ready\"}");
	}
	memset(&resp, 0, sizeof(resp));
	buf_init(&resp.body);
	resp.status = MHD_HTTP_OK;
	resp.content_type = METRICS_CONTENT_TYPE;
	metrics_render(s->p.metrics, s->p.api->store, COLLISIOND_VERSION, &resp.body);
	metrics_render_worlds(s->p.metrics, s->p.api->worlds, &resp.body);
	if (resp.body.oom) {
		buf_release(&resp.body);
		return http_send_error(c, r, API_INTERNAL, NULL, "out of memory");
	}
	ret = send_response(c, r, &resp);
	api_response_release(&resp);
	return ret;
}

/* Query-string parameters for the api: at most QUERY_ARGS_MAX are kept. */
#define QUERY_ARGS_MAX 8
struct query_args {
	struct api_arg a[QUERY_ARGS_MAX + 1];	/* ended by a NULL key */
	size_t n;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct query_args *qa = cls;

	if (qa->n == QUERY_ARGS_MAX)
		return MHD_NO;
	qa->a[qa->n].key = key;
	qa->a[qa->n].value = value ? value : "";
	qa->n++;
	return MHD_YES;
}

/* Hand the whole request to the api layer and queue its answer. */
enum MHD_Result http_serve_api(struct http_server *s, struct MHD_Connection *c,
			       struct request *r, const char *method)
{
	struct query_args qa;
	struct api_request req;
	struct api_response resp;
	enum MHD_Result ret;

	memset(&qa, 0, sizeof(qa));
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &qa);
	memset(&req, 0, sizeof(req));
	req.args = qa.a;
	req.method = strcmp(method, "HEAD") == 0 ? "GET" : method;
	req.path = r->raw;	/* exactly as sent: see on_uri */
	req.content_type = r->head.content_type;
	req.body = r->body;
	req.body_len = r->len;
	req.auth = r->auth;
	memset(&resp, 0, sizeof(resp));
	api_handle(s->p.api, &req, &resp);
	if (resp.route_label)
		r->route_label = resp.route_label;
	r->ray_kind = resp.ray_kind;
	r->rays = resp.rays;
	metrics_record_worlds(s->p.metrics, resp.world_shots, resp.world_snapshots);
	ret = send_response(c, r, &resp);
	api_response_release(&resp);
	free(r->body);
	r->body = NULL;
	r->len = r->cap = 0;
	return ret;
}
