/* http.c - libmicrohttpd transport for collisiond (see http.h): per-request
 * state lives in req_cls and is freed in the completed callback, as in
 * libmicrohttpd's doc/examples/largepost.c. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "access_log.h"
#include "api.h"
#include "config.h"
#include "conn_watch.h"
#include "http_check.h"
#include "log.h"
#include "metrics.h"

#define LOG_PATH_MAX 192	/* bytes of the (escaped) path kept for the access log */
#define OPS_ALLOW "GET, HEAD"

/*
 * A request refused from its headers (413 by Content-Length, 401, 404, ...)
 * is answered at once; libmicrohttpd then sends FIN and closes, and the
 * deadline watcher keeps reading and dropping the rest of the body (lingering
 * close, see conn_watch.h) so that a client that sends its whole body before
 * reading (Python's http.client, requests) still reads the answer.
 *
 * A body found over its limit while it arrives (chunked) cannot be answered
 * before its end (libmicrohttpd 0.9.75 refuses MHD_queue_response until the
 * body has been read): it is read and dropped, not buffered, and the 413 goes
 * out at its end, for at most DISCARD_MAX bytes and DISCARD_SECONDS seconds
 * (nginx's lingering_time) besides the body deadline; past that the
 * connection is closed without an answer.
 */
#define DISCARD_MAX ((uint64_t)1 << 30)
#define DISCARD_SECONDS 30
#define RAW_PATH_INLINE 256	/* longer raw paths are copied to the heap */

struct http_server {
	struct http_params p;
	struct MHD_Daemon *daemon;
	unsigned port;
	const char *api_key, *read_key;
	size_t api_key_len, read_key_len;
	atomic_int in_flight;		/* requests between first callback and completion */
	atomic_int draining;		/* set by http_stop: answer with Connection: close */
	struct MHD_Response *healthz;	/* shared, immutable */
	uint64_t header_ns;		/* --header-timeout */
	uint64_t idle_header_ns;	/* max(--header-timeout, --connection-timeout) */
	uint64_t body_ns;		/* --body-timeout */
	uint64_t body_rate;		/* --min-body-rate, bytes/s; 0 = none */
	struct conn_watch watch;
};

#ifndef CONNECTION_POOL_BYTES
#define CONNECTION_POOL_BYTES (16 * 1024)
#endif

struct request {
	struct http_server *srv;
	struct watched_conn *watch;	/* the connection's deadline */
	int started;			/* the access handler has seen the headers */
	char *raw;			/* the path exactly as sent (no query), NUL-ended */
	size_t raw_len;
	uint64_t t0_ns;
	const char *route_label;	/* static; NULL = "unmatched" */
	const char *ray_kind;
	uint64_t rays;
	int status;			/* 0 until a response is queued */
	size_t bytes;			/* response body bytes */
	enum api_auth auth;
	struct http_head head;		/* the headers used here, from http_check_head */
	size_t limit;			/* body bytes allowed */
	int ops;			/* /healthz, /readyz or /metrics */
	enum api_err verdict;		/* a refusal decided from the headers */
	char allow[64];
	char msg[128];
	int discarding;			/* the body is read and dropped */
	uint64_t discarded;
	uint64_t body_t0_ns, body_bytes;	/* for the body deadline */
	uint64_t discard_t0_ns;
	char *body;
	size_t len, cap;
	char method[12];
	size_t path_len;
	char path[LOG_PATH_MAX];	/* escaped for the log */
	char raw_inline[RAW_PATH_INLINE];
};

/* One per connection (libmicrohttpd's socket context): the request in
 * progress is reused by each request of a keep-alive connection. */
struct conn {
	struct watched_conn watch;
	int linger;		/* answered before its body: linger at close */
	char remote[ACCESS_REMOTE_MAX];	/* for the access log; "" until first needed */
	struct request req;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Equal in time that depends only on the length of key, not on where the
 * first difference lies. */
static int key_equal(const char *given, size_t glen, const char *key, size_t klen)
{
	unsigned char diff = glen != klen;
	size_t i;

	for (i = 0; i < klen; i++)
		diff |= (unsigned char)key[i] ^ (unsigned char)(i < glen ? given[i] : 0);
	return diff == 0;
}

static enum api_auth request_auth(const struct http_server *s, struct MHD_Connection *c)
{
	const char *h, *tok;
	size_t n;
	int w, rd;

	if (!s->api_key)
		return API_AUTH_WRITE;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || strncasecmp(h, "Bearer ", 7) != 0)
		return API_AUTH_NONE;
	for (tok = h + 7; *tok == ' '; tok++)
		;
	n = strlen(tok);
	while (n > 0 && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
		n--;
	w = key_equal(tok, n, s->api_key, s->api_key_len);
	rd = s->read_key ? key_equal(tok, n, s->read_key, s->read_key_len) : 0;
	return w ? API_AUTH_WRITE : rd ? API_AUTH_READ : API_AUTH_NONE;
}

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
static enum MHD_Result send_error(struct MHD_Connection *c, struct request *r, enum api_err e,
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

/* GET /healthz, /readyz, /metrics; 1 when url is one of them. */
static int ops_route(const char *url, const char **label)
{
	if (strcmp(url, "/healthz") == 0)
		*label = "/healthz";
	else if (strcmp(url, "/readyz") == 0)
		*label = "/readyz";
	else if (strcmp(url, "/metrics") == 0)
		*label = "/metrics";
	else
		return 0;
	return 1;
}

static enum MHD_Result serve_ops(struct http_server *s, struct MHD_Connection *c,
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
			return send_error(c, r, API_NOT_READY, NULL,
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
		return send_error(c, r, API_INTERNAL, NULL, "out of memory");
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
static enum MHD_Result serve_api(struct http_server *s, struct MHD_Connection *c,
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

/* 1 when the request announces a body (Content-Length > 0 or chunked). */
static int has_body(const struct http_head *head, uint64_t *content_length, int *known)
{
	const char *cl = head->content_length;
	const char *te = head->transfer_encoding;

	*known = 0;
	*content_length = 0;
	if (cl) {
		/* MHD has already rejected a malformed Content-Length. */
		*content_length = strtoull(cl, NULL, 10);
		*known = 1;
	}
	return (cl && *content_length > 0) || te;
}

/* Note a refusal to send once libmicrohttpd allows it without closing. */
static void refuse(struct request *r, enum api_err e, const char *allow, const char *msg)
{
	r->verdict = e;
	snprintf(r->allow, sizeof(r->allow), "%s", allow ? allow : "");
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
}

/*
 * Decide from the headers alone what can be decided: ops endpoint, route
 * (404/405), access (401/403), readiness (503), announced size (413).
 */
static void classify(struct http_server *s, struct MHD_Connection *c, struct request *r,
		     const char *url, const char *method, uint64_t clen, int known)
{
	struct api_route_info info;
	const char *why;
	enum api_err e, ae;

	if (ops_route(url, &r->route_label)) {
		r->ops = 1;
		r->limit = s->p.api->limits.max_body_query;
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			refuse(r, API_METHOD_NOT_ALLOWED, OPS_ALLOW, "this path only answers GET and HEAD");
		return;
	}
	memset(&info, 0, sizeof(info));
	/* HEAD is GET without the body (libmicrohttpd drops it). */
	e = api_route(strcmp(method, "HEAD") == 0 ? "GET" : method, url, &info);
	r->route_label = info.label;
	r->auth = request_auth(s, c);
	/* the api's access policy, applied before the body is read */
	ae = api_access(url, e == API_OK ? info.access : API_ACCESS_OPEN, r->auth, &why);
	if (ae) {
		refuse(r, ae, NULL, why);
		return;
	}
	if (e == API_NOT_FOUND) {
		refuse(r, e, NULL, "no such path");
		return;
	}
	if (e == API_METHOD_NOT_ALLOWED) {
		refuse(r, e, info.allow, "method not allowed on this path");
		return;
	}
	if (e != API_OK) {
		refuse(r, API_INTERNAL, NULL, "routing failed");
		return;
	}
	if (!atomic_load_explicit(s->p.ready, memory_order_acquire)) {
		refuse(r, API_NOT_READY, NULL, "still loading stored meshes");
		return;
	}
	r->limit = info.mesh_upload ? s->p.api->limits.max_body_mesh :
				      s->p.api->limits.max_body_query;
	if (known && clen > r->limit) {
		char msg[96];

		snprintf(msg, sizeof(msg), "body of %llu bytes is over the limit of %zu bytes",
			 (unsigned long long)clen, r->limit);
		refuse(r, API_PAYLOAD_TOO_LARGE, NULL, msg);
	}
}

/* The body's deadline: --body-timeout, plus one second per --min-body-rate
 * bytes received (Apache's mod_reqtimeout MinRate); while discarding, at
 * most DISCARD_SECONDS after the discard began. */
static void arm_body_deadline(const struct http_server *s, struct request *r)
{
	uint64_t d = r->body_t0_ns + s->body_ns;

	if (s->body_rate) {
		uint64_t earned = r->body_bytes / s->body_rate;

		d += earned > UINT64_MAX / 4 / 1000000000u ? UINT64_MAX / 4 :
			earned * 1000000000u +
			(r->body_bytes % s->body_rate) * 1000000000u / s->body_rate;
	}
	if (r->discarding && r->discard_t0_ns + (uint64_t)DISCARD_SECONDS * 1000000000u < d) {
		conn_watch_arm(r->watch, r->discard_t0_ns + (uint64_t)DISCARD_SECONDS * 1000000000u,
			       WATCH_DISCARD);
		return;
	}
	conn_watch_arm(r->watch, d, WATCH_BODY);
}

/* From now on the body is read and dropped; the refusal goes out at its end. */
static void start_discard(struct http_server *s, struct request *r)
{
	r->discarding = 1;
	r->discard_t0_ns = now_ns();
	free(r->body);
	r->body = NULL;
	r->len = r->cap = 0;
	arm_body_deadline(s, r);
}

/* The connection r belongs to. */
static struct conn *request_conn(struct request *r)
{
	return (struct conn *)(void *)((char *)r - offsetof(struct conn, req));
}

/* Answer r now, before its body: libmicrohttpd closes the connection after
 * the answer, and the watcher lingers on it (see DISCARD_MAX). */
static enum MHD_Result answer_before_body(struct MHD_Connection *c, struct request *r)
{
	conn_watch_arm(r->watch, 0, WATCH_NONE);
	request_conn(r)->linger = 1;
	return send_error(c, r, r->verdict, r->allow, r->msg);
}

/*
 * The first call, headers only. A refusal of a request with a body is sent
 * now, so that the body is never read (answer_before_body); everything else
 * is answered on the last call, because a response queued on the first call
 * always closes the connection.
 */
static enum MHD_Result begin_request(struct http_server *s, struct MHD_Connection *c,
				     struct request *r, const char *method, const char *version)
{
	uint64_t clen;
	size_t n;
	int known, body, close_now;

	r->started = 1;
	r->t0_ns = now_ns();
	n = strlen(method);
	if (n >= sizeof(r->method))
		n = sizeof(r->method) - 1;
	memcpy(r->method, method, n);
	r->method[n] = '\0';
	atomic_fetch_add_explicit(&s->in_flight, 1, memory_order_relaxed);

	r->verdict = http_check_head(c, version, &r->head, r->msg, sizeof(r->msg), &close_now);
	body = has_body(&r->head, &clen, &known);
	if (close_now)
		return answer_before_body(c, r);
	if (r->verdict == API_OK)
		classify(s, c, r, r->raw, method, clen, known);
	if (!body) {
		conn_watch_arm(r->watch, 0, WATCH_NONE);
		return MHD_YES;
	}
	r->body_t0_ns = r->t0_ns;
	if (r->verdict != API_OK)
		return answer_before_body(c, r);
	arm_body_deadline(s, r);
	if (known && !r->ops) {
		/* One allocation for the announced body, plus a NUL for parsers. */
		r->body = malloc((size_t)clen + 1);
		if (!r->body) {
			refuse(r, API_INTERNAL, NULL, "out of memory");
			return answer_before_body(c, r);
		}
		r->cap = (size_t)clen + 1;
	}
	return MHD_YES;
}

/* Append a body chunk, or count it as discarded once refused. */
static enum MHD_Result on_body(struct http_server *s, struct request *r, const char *data,
			       size_t n)
{
	r->body_bytes += n;
	arm_body_deadline(s, r);
	if (r->discarding) {
		r->discarded += n;
		if (r->discarded <= DISCARD_MAX)
			return MHD_YES;
		log_msg(s->p.log, LOG_INFO,
			"closing connection: discarded more than %llu bytes of a refused body",
			(unsigned long long)DISCARD_MAX);
		return MHD_NO;
	}
	if (n > r->limit - r->len) {
		char msg[96];

		snprintf(msg, sizeof(msg), "body is over the limit of %zu bytes", r->limit);
		refuse(r, API_PAYLOAD_TOO_LARGE, NULL, msg);
		start_discard(s, r);
		r->discarded = n;
		return MHD_YES;
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *nb;

		while (cap < r->len + n + 1)
			cap = cap > SIZE_MAX / 2 ? r->len + n + 1 : cap * 2;
		if (cap > r->limit + 1)
			cap = r->limit + 1;
		nb = realloc(r->body, cap);
		if (!nb)
			return MHD_NO;
		r->body = nb;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = '\0';
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	struct http_server *s = cls;
	struct request *r = *req_cls;
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;	/* no memory for it when the request line came */
	if (!r->started)
		return begin_request(s, c, r, method, version);
	if (r->status) {
		/* answered early; MHD is discarding the rest */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size) {
		ret = on_body(s, r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return ret;
	}
	conn_watch_arm(r->watch, 0, WATCH_NONE);
	if (r->verdict != API_OK)
		return send_error(c, r, r->verdict, r->allow, r->msg);
	if (r->ops)
		return serve_ops(s, c, r);
	return serve_api(s, c, r, method);
}

/* Free what a request holds; the struct itself may be reused. */
static void request_release(struct request *r)
{
	free(r->body);
	r->body = NULL;
	if (r->raw != r->raw_inline)
		free(r->raw);
	r->raw = NULL;
}

/*
 * libmicrohttpd's URI log callback: the request line has arrived and its
 * path is still exactly as sent (libmicrohttpd percent-decodes it in place
 * afterwards). Start the request here: what it returns is the request's
 * *req_cls. The raw path is what gets routed, so a name is used exactly as
 * the client sent it: "a%00b" is refused as a name, never cut to "a".
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct http_server *s = cls;
	const union MHD_ConnectionInfo *ci;
	struct conn *conn;
	struct request *r;
	size_t n = strcspn(uri, "?");

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	conn = ci ? ci->socket_context : NULL;
	if (!conn)
		return NULL;
	r = &conn->req;
	request_release(r);
	memset(r, 0, offsetof(struct request, raw_inline));
	r->srv = s;
	r->watch = &conn->watch;
	conn_watch_arm(r->watch, now_ns() + s->header_ns, WATCH_HEADERS);
	if (n < sizeof(r->raw_inline)) {
		r->raw = r->raw_inline;
	} else {
		r->raw = malloc(n + 1);
		if (!r->raw)
			return NULL;
	}
	memcpy(r->raw, uri, n);
	r->raw[n] = '\0';
	r->raw_len = n;
	r->path_len = access_escape_path(r->path, sizeof(r->path), r->raw);
	return r;
}

/* Connections open and close: register them with the deadline watcher. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct conn *conn = *socket_context;
	const union MHD_ConnectionInfo *ci;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		conn = calloc(1, sizeof(*conn));
		if (!conn || !ci) {
			free(conn);
			return;	/* the request then finds no context and is closed */
		}
		conn_watch_add(&s->watch, &conn->watch, ci->connect_fd);
		conn_watch_arm(&conn->watch, now_ns() + s->idle_header_ns, WATCH_HEADERS);
		*socket_context = conn;
		return;
	}
	if (!conn)
		return;
	conn_watch_remove(&s->watch, &conn->watch);
	/* libmicrohttpd closes the socket after this call */
	if (conn->linger)
		conn_watch_linger(&s->watch, conn->watch.fd);
	request_release(&conn->req);
	free(conn);
	*socket_context = NULL;
}

/* One access line: method, path, status, bytes, duration, remote address;
 * the remote address is formatted once per connection. */
static void log_request(struct http_server *s, struct MHD_Connection *c, struct request *r,
			uint64_t us)
{
	struct conn *conn = request_conn(r);
	struct access_fields f;
	char line[LOG_PATH_MAX + 160];

	if (!conn->remote[0]) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		access_remote(ci ? ci->client_addr : NULL, conn->remote);
	}
	f = (struct access_fields){ r->method, r->path, r->path_len, r->status, r->bytes, us,
				    conn->remote };
	log_access(s->p.log, line, access_format(line, sizeof(line), &f));
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct request *r = *req_cls;
	uint64_t us;

	if (!r)
		return;
	*req_cls = NULL;
	/* the next request line is due within the header (or idle) timeout */
	conn_watch_arm(r->watch, now_ns() + s->idle_header_ns, WATCH_HEADERS);
	if (!r->started) {
		/* libmicrohttpd answered it (431, 400) or it was cut before its headers */
		request_release(r);
		return;
	}
	us = (now_ns() - r->t0_ns) / 1000;
	if (r->status)
		metrics_record(s->p.metrics, r->route_label, r->method, r->status, us, r->ray_kind,
			       r->rays);
	if (log_enabled(s->p.log, LOG_INFO))
		log_request(s, c, r, us);
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && log_enabled(s->p.log, LOG_DEBUG))
		log_msg(s->p.log, LOG_DEBUG, "request %s %.*s ended early (code %d)", r->method,
			(int)r->path_len, r->path, (int)toe);
	request_release(r);
	r->started = 0;
	atomic_fetch_sub_explicit(&s->in_flight, 1, memory_order_release);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_msg(s->p.log, LOG_WARN, "libmicrohttpd: %s", msg);
}

/* A connection limit the descriptor limit can carry, with room for the
 * listen socket, epoll and ITC descriptors, data files and logs. */
static unsigned connection_limit(unsigned threads)
{
	struct rlimit rl;
	rlim_t n = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur;
	else if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		n = 65536;
	n = n > 64 + 4 * (rlim_t)threads ? n - 64 - 4 * (rlim_t)threads : 16;
	return n > 65536 ? 65536 : (unsigned)n;
}

/* Resolve cfg->bind/port to a socket address. 0 or -1. */
static int bind_address(const struct config *cfg, struct sockaddr_storage *ss, int *ipv6)
{
	struct addrinfo hints, *ai;
	char port[8];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | (strcmp(cfg->bind, "localhost") ? AI_NUMERICHOST : 0);
	snprintf(port, sizeof(port), "%u", cfg->port);
	if (getaddrinfo(cfg->bind, port, &hints, &ai) != 0)
		return -1;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*ipv6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	return 0;
}

int http_start(const struct http_params *p, struct http_server **out, char *err, size_t errlen)
{
	static const char healthz_body[] = "{\"status\":\"ok\"}";
	const struct config *cfg = p->cfg;
	struct sockaddr_storage ss;
	struct http_server *s;
	const union MHD_DaemonInfo *di;
	struct MHD_OptionItem ops[16];
	unsigned flags, n = 0;
	int ipv6 = 0;

	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->p = *p;
	atomic_init(&s->in_flight, 0);
	atomic_init(&s->draining, 0);
	s->api_key = cfg->api_key;
	s->api_key_len = cfg->api_key ? strlen(cfg->api_key) : 0;
	s->read_key = cfg->read_key;
	s->read_key_len = cfg->read_key ? strlen(cfg->read_key) : 0;
	s->header_ns = (uint64_t)cfg->header_timeout * 1000000000u;
	s->idle_header_ns = (uint64_t)(cfg->header_timeout > cfg->connection_timeout ?
				       cfg->header_timeout : cfg->connection_timeout) * 1000000000u;
	s->body_ns = (uint64_t)cfg->body_timeout * 1000000000u;
	s->body_rate = cfg->min_body_rate;
	if (conn_watch_start(&s->watch, p->log)) {
		snprintf(err, errlen, "cannot start the connection deadline thread");
		free(s);
		return -1;
	}

	s->healthz = MHD_create_response_from_buffer(sizeof(healthz_body) - 1,
						     (void *)healthz_body,
						     MHD_RESPMEM_PERSISTENT);
	if (!s->healthz ||
	    MHD_add_response_header(s->healthz, MHD_HTTP_HEADER_CONTENT_TYPE,
				    "application/json") != MHD_YES) {
		snprintf(err, errlen, "out of memory");
		goto out_free_server;
	}
	if (bind_address(cfg, &ss, &ipv6)) {
		snprintf(err, errlen, "--bind: cannot use address '%s'", cfg->bind);
		goto out_free_response;
	}

	flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (ipv6)
		flags |= MHD_USE_IPv6;
	if (cfg->tls_cert_pem)
		flags |= MHD_USE_TLS;

	/* the logger first, so that no message goes to MHD's own */
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, s };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &ss };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED,
					    (intptr_t)on_completed, s };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION,
					    (intptr_t)on_connection, s };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, s };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT,
					    (intptr_t)cfg->connection_timeout, NULL };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT,
					    (intptr_t)connection_limit(cfg->threads), NULL };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL };
	/* libmicrohttpd zeroes a connection's whole pool between keep-alive
	 * requests: at its 32 KiB default that memset was half of the CPU of a
	 * one-ray request (callgrind). 16 KiB holds any sane header block;
	 * bodies stream through our own buffer. */
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT,
					    CONNECTION_POOL_BYTES, NULL };
	if (cfg->threads > 1)
		ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE,
						    (intptr_t)cfg->threads, NULL };
	if (cfg->tls_cert_pem) {
		ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						    cfg->tls_cert_pem };
		ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
						    cfg->tls_key_pem };
	}
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

	errno = 0;
	s->daemon = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_request, s,
				     MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
	if (!s->daemon) {
		int e = errno;
		int sock_err = e == EADDRINUSE || e == EACCES || e == EADDRNOTAVAIL;

		snprintf(err, errlen, "cannot start serving on %s port %u%s%s (see any message above)",
			 cfg->bind, cfg->port, sock_err ? ": " : "", sock_err ? strerror(e) : "");
		goto out_free_response;
	}
	di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di && di->port ? di->port : cfg->port;
	*out = s;
	return 0;

out_free_response:
	if (s->healthz)
		MHD_destroy_response(s->healthz);
out_free_server:
	conn_watch_stop(&s->watch);
	free(s);
	return -1;
}

unsigned http_port(const struct http_server *s)
{
	return s->port;
}

void http_stop(struct http_server *s, unsigned grace_ms)
{
	MHD_socket lsock;
	uint64_t deadline;
	struct timespec nap = { 0, 10 * 1000000L };

	atomic_store(&s->draining, 1);
	lsock = MHD_quiesce_daemon(s->daemon);
	deadline = now_ns() + (uint64_t)grace_ms * 1000000u;
	while (atomic_load_explicit(&s->in_flight, memory_order_acquire) > 0 &&
	       now_ns() < deadline)
		nanosleep(&nap, NULL);
	if (atomic_load(&s->in_flight) > 0)
		log_msg(s->p.log, LOG_WARN, "stopping with %d requests still in flight",
			atomic_load(&s->in_flight));
	MHD_stop_daemon(s->daemon);
	if (lsock != MHD_INVALID_SOCKET)
		close(lsock);
	MHD_destroy_response(s->healthz);
	conn_watch_stop(&s->watch);
	free(s);
}
