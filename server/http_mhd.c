/* http_mhd.c - the libmicrohttpd engine (--http-engine mhd, and every TLS
 * server): daemon lifecycle and its callbacks; per-request state lives in
 * req_cls and is freed in the completed callback, as in libmicrohttpd's
 * doc/examples/largepost.c. Request intake (http_request.c) and the answers
 * (http_respond.c) are shared with the epoll engine. */
#include "http_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "access_log.h"
#include "config.h"
#include "log.h"

#ifndef CONNECTION_POOL_BYTES
#define CONNECTION_POOL_BYTES (16 * 1024)
#endif

/* One per connection (libmicrohttpd's socket context): the request in
 * progress is reused by each request of a keep-alive connection. */
struct conn {
	struct watched_conn watch;
	int linger;		/* answered before its body: linger at close */
	char remote[ACCESS_REMOTE_MAX];	/* for the access log; "" until first needed */
	struct request req;
};

/* The connection r belongs to. */
static inline struct conn *request_conn(struct request *r)
{
	return (struct conn *)(void *)((char *)r - offsetof(struct conn, req));
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
	if (resp->status == 503)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_RETRY_AFTER, HTTP_RETRY_AFTER);
	if (r->rid_len) {
		char rid[HTTP_REQUEST_ID_MAX + 1];

		memcpy(rid, r->rid, r->rid_len);
		rid[r->rid_len] = '\0';
		MHD_add_response_header(mr, HTTP_HEADER_REQUEST_ID, rid);
	}
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

/* Send resp (built by http_respond.c) and release it. */
static enum MHD_Result send_and_release(struct MHD_Connection *c, struct request *r,
					struct api_response *resp)
{
	enum MHD_Result ret = send_response(c, r, resp);

	api_response_release(resp);
	return ret;
}

/* Answer with an error of the api's table, e.g. an early 413. */
static enum MHD_Result send_error(struct MHD_Connection *c, struct request *r, enum api_err e,
				  const char *allow, const char *msg)
{
	struct api_response resp;

	http_error_response(&resp, e, allow, msg);
	return send_and_release(c, r, &resp);
}

/* /healthz (one shared response while not draining, for a request without
 * an X-Request-Id), /readyz, /metrics. */
static enum MHD_Result serve_ops(struct http_server *s, struct MHD_Connection *c,
				 struct request *r)
{
	struct api_response resp;
	enum MHD_Result ret;

	/* the shared response has no X-Request-Id: a request that names
	 * itself gets its own */
	if (strcmp(r->route_label, "/healthz") == 0 && !r->rid_len &&
	    !atomic_load_explicit(&s->draining, memory_order_relaxed)) {
		ret = MHD_queue_response(c, MHD_HTTP_OK, s->healthz);
		if (ret == MHD_YES) {
			r->status = MHD_HTTP_OK;
			r->bytes = sizeof("{\"status\":\"ok\"}") - 1;
		}
		return ret;
	}
	if (http_ops_response(s, r, &resp))
		return MHD_NO;
	return send_and_release(c, r, &resp);
}

/* Query-string parameters for the api: more than QUERY_ARGS_MAX is a 400. */
struct query_args {
	struct api_arg a[QUERY_ARGS_MAX + 1];	/* ended by a NULL key */
	size_t n;
	int over;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct query_args *qa = cls;

	/* an empty piece ("?&mode=any", "a&&b") is no parameter, as in the
	 * epoll engine's http_parse_query: libmicrohttpd hands it over as an
	 * empty key without a value ("?=" has a value: a parameter) */
	if (!key[0] && !value)
		return MHD_YES;
	if (qa->n == QUERY_ARGS_MAX) {
		qa->over = 1;
		return MHD_NO;
	}
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
	struct api_response resp;

	memset(&qa, 0, sizeof(qa));
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &qa);
	if (qa.over)
		return send_error(c, r, API_INVALID_REQUEST, NULL, QUERY_ARGS_MSG);
	http_api_response(s, r, method, qa.a, &resp);
	return send_and_release(c, r, &resp);
}

/* Answer r now, before its body: libmicrohttpd closes the connection after
 * the answer, and the watcher lingers on it (see http_request.c). */
static enum MHD_Result answer_before_body(struct MHD_Connection *c, struct request *r)
{
	request_conn(r)->linger = 1;
	return send_error(c, r, r->verdict, r->allow, r->msg);
}

/*
 * The first call, headers only. A refusal of a request with a body is sent
 * now (answer_before_body); everything else is answered on the last call,
 * because a response queued on the first call always closes the connection.
 */
static enum MHD_Result begin_request(struct http_server *s, struct MHD_Connection *c,
				     struct request *r, const char *method, const char *version)
{
	int close_now;
	const char *m;

	http_request_start(r, method);
	http_in_flight_add(s, 1);
	r->verdict = http_check_head(c, version, &r->head, r->msg, sizeof(r->msg), &close_now);
	/* libmicrohttpd takes any bytes for a method (ESC, CR, DEL): refused
	 * as the epoll engine's parser refuses them, and closed */
	for (m = method; *m && http_is_tchar((unsigned char)*m); m++)
		;
	if (*m || m == method) {
		r->verdict = API_INVALID_REQUEST;
		snprintf(r->msg, sizeof(r->msg), "request line: the method is not a token");
		close_now = 1;
	}
	switch (http_request_head(s, r, method, close_now)) {
	case HTTP_NEXT_REFUSE:
		return answer_before_body(c, r);
	case HTTP_NEXT_ANSWER:
	case HTTP_NEXT_BODY:
		break;
	}
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
		ret = http_on_body(s, r, upload_data, *upload_data_size) ? MHD_NO : MHD_YES;
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
	http_body_release(r);
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
	size_t n;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	conn = ci ? ci->socket_context : NULL;
	if (!conn)
		return NULL;
	uri = http_origin_form(uri, strlen(uri));
	n = strcspn(uri, "?");
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

/* The remote address for the access log, formatted once per connection. */
static const char *conn_remote(struct MHD_Connection *c, struct conn *conn)
{
	if (!conn->remote[0]) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		access_remote(ci ? ci->client_addr : NULL, conn->remote);
	}
	return conn->remote;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct request *r = *req_cls;

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
	http_request_record(s, r,
			    log_enabled(s->p.log, LOG_INFO) ? conn_remote(c, request_conn(r)) : NULL);
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && log_enabled(s->p.log, LOG_DEBUG)) {
		char path[ACCESS_PATH_MAX];

		log_msg(s->p.log, LOG_DEBUG, "request %s %.*s ended early (code %d)", r->method,
			(int)access_escape_path(path, sizeof(path), r->raw), path, (int)toe);
	}
	request_release(r);
	r->started = 0;
	http_in_flight_add(s, -1);
}

/* libmicrohttpd's messages let through per MHD_LOG_WINDOW_NS: a client
 * speaking plain HTTP to the TLS port, or leaving mid-request, is one each,
 * so a flood of them must not become a flood of log lines */
#define MHD_LOG_BURST 20
#define MHD_LOG_WINDOW_NS (10 * 1000000000ull)

/* 1 when this message may be written; *dropped: those held back in the
 * window that just ended (to be said once). */
static int mhd_log_allowed(struct http_server *s, unsigned *dropped)
{
	uint64_t now = now_ns();
	int ok;

	pthread_mutex_lock(&s->mhd_log_lock);
	*dropped = 0;
	if (now - s->mhd_log_window >= MHD_LOG_WINDOW_NS) {
		*dropped = s->mhd_log_dropped;
		s->mhd_log_window = now;
		s->mhd_log_count = 0;
		s->mhd_log_dropped = 0;
	}
	ok = s->mhd_log_count < MHD_LOG_BURST;
	if (ok)
		s->mhd_log_count++;
	else
		s->mhd_log_dropped++;
	pthread_mutex_unlock(&s->mhd_log_lock);
	return ok;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	unsigned dropped;
	char msg[512];
	size_t n;

	if (!mhd_log_allowed(s, &dropped))
		return;
	if (dropped)	/* the window before: said with the next message */
		log_msg(s->p.log, LOG_WARN, "libmicrohttpd: %u more messages in the last %llu s not shown",
			dropped, MHD_LOG_WINDOW_NS / 1000000000ull);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_msg(s->p.log, LOG_WARN, "libmicrohttpd: %s", msg);
}

/* What libmicrohttpd says while http_tls_check runs: its first message. */
#define TLS_CHECK_MSG_MAX 160

static void on_tls_check_log(void *cls, const char *fmt, va_list ap)
{
	char *said = cls;

	if (!said[0])
		vsnprintf(said, TLS_CHECK_MSG_MAX, fmt, ap);
}

int http_tls_check(const struct config *cfg, char *err, size_t errlen)
{
	char said[TLS_CHECK_MSG_MAX] = "";
	const char *why;
	struct MHD_Daemon *d;
	size_t n;

	if (!cfg->tls_cert_pem)
		return 0;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(err, errlen, "--tls-cert: this libmicrohttpd is built without TLS");
		return -1;
	}
	/* a daemon without a socket or thread: only the certificate and key
	 * are loaded, as MHD_start_daemon loads them for serving; the logger
	 * first, so that no message goes to MHD's own */
	d = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_USE_TLS | MHD_USE_ERROR_LOG, 0, NULL,
			     NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER, on_tls_check_log,
			     said, MHD_OPTION_HTTPS_MEM_CERT, cfg->tls_cert_pem,
			     MHD_OPTION_HTTPS_MEM_KEY, cfg->tls_key_pem, MHD_OPTION_END);
	if (d) {
		MHD_stop_daemon(d);
		return 0;
	}
	/* "GnuTLS failed to setup x509 certificate/key: REASON\n": the reason */
	n = strlen(said);
	while (n > 0 && (said[n - 1] == '\n' || said[n - 1] == '\r'))
		said[--n] = '\0';
	why = strstr(said, ": ");
	why = why ? why + 2 : said;
	snprintf(err, errlen, "--tls-cert / --tls-key: libmicrohttpd could not start TLS with this "
		 "certificate and key (do they match? is the key encrypted?)%s%s",
		 *why ? ": " : "", why);
	return -1;
}

int http_mhd_start(struct http_server *s, char *err, size_t errlen)
{
	static const char healthz_body[] = "{\"status\":\"ok\"}";
	const struct config *cfg = s->p.cfg;
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *di;
	struct MHD_OptionItem ops[16];
	unsigned flags, n = 0;
	int ipv6 = 0;

	s->healthz = MHD_create_response_from_buffer(sizeof(healthz_body) - 1,
						     (void *)healthz_body,
						     MHD_RESPMEM_PERSISTENT);
	if (!s->healthz ||
	    MHD_add_response_header(s->healthz, MHD_HTTP_HEADER_CONTENT_TYPE,
				    "application/json") != MHD_YES) {
		snprintf(err, errlen, "out of memory");
		goto out_free_response;
	}
	if (http_bind_address(cfg, &ss, &ipv6)) {
		snprintf(err, errlen, "--bind: cannot use address '%s'", cfg->bind);
		goto out_free_response;
	}

	flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	/* IPv4 clients too on "::", as on the epoll engine's socket: MHD_USE_IPv6
	 * alone binds IPv6 only (IPV6_V6ONLY) */
	if (ipv6)
		flags |= MHD_USE_DUAL_STACK;
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
					    (intptr_t)http_connection_limit(cfg->threads), NULL };
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
	return 0;

out_free_response:
	if (s->healthz)
		MHD_destroy_response(s->healthz);
	s->healthz = NULL;
	return -1;
}

void http_mhd_stop(struct http_server *s, unsigned grace_ms)
{
	MHD_socket lsock;
	uint64_t deadline;
	struct timespec nap = { 0, 10 * 1000000L };

	lsock = MHD_quiesce_daemon(s->daemon);
	/* Refuse new clients now, as the epoll engine does: the quiesced socket
	 * still listened, the kernel queued them unanswered until the drain
	 * ended (up to grace_ms), then they were reset. shutdown, not close:
	 * libmicrohttpd's threads may use the descriptor until MHD_stop_daemon
	 * (microhttpd.h, MHD_quiesce_daemon); on Linux shutdown stops
	 * a listening socket and resets what it had queued. */
	if (lsock != MHD_INVALID_SOCKET)
		shutdown(lsock, SHUT_RDWR);
	deadline = now_ns() + (uint64_t)grace_ms * 1000000u;
	while (http_in_flight(s) > 0 && now_ns() < deadline)
		nanosleep(&nap, NULL);
	if (http_in_flight(s) > 0)
		log_msg(s->p.log, LOG_WARN, "stopping with %d requests still in flight",
			http_in_flight(s));
	MHD_stop_daemon(s->daemon);
	if (lsock != MHD_INVALID_SOCKET)
		close(lsock);
	MHD_destroy_response(s->healthz);
}
