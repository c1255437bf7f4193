/* http.c - libmicrohttpd transport for collisiond (see http.h): daemon
 * lifecycle and its callbacks; per-request state lives in req_cls and is
 * freed in the completed callback, as in libmicrohttpd's
 * doc/examples/largepost.c. Request intake is in http_request.c, answers in
 * http_respond.c. */
#include "http_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "access_log.h"
#include "config.h"
#include "log.h"
#include "metrics.h"

#ifndef CONNECTION_POOL_BYTES
#define CONNECTION_POOL_BYTES (16 * 1024)
#endif

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
		return http_begin_request(s, c, r, method, version);
	if (r->status) {
		/* answered early; MHD is discarding the rest */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size) {
		ret = http_on_body(s, r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return ret;
	}
	conn_watch_arm(r->watch, 0, WATCH_NONE);
	if (r->verdict != API_OK)
		return http_send_error(c, r, r->verdict, r->allow, r->msg);
	if (r->ops)
		return http_serve_ops(s, c, r);
	return http_serve_api(s, c, r, method);
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
	http_in_flight_add(s, -1);
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

	s = aligned_alloc(64, (sizeof(*s) + 63) / 64 * 64);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(s, 0, sizeof(*s));
	s->p = *p;
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

void http_in_flight_add(struct http_server *s, int d)
{
	static atomic_uint next;
	static _Thread_local unsigned mine;	/* shard + 1; 0 = not picked yet */

	if (!mine)
		mine = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) %
			       IN_FLIGHT_SHARDS + 1;
	atomic_fetch_add_explicit(&s->in_flight[mine - 1].n, d, memory_order_release);
}

/* Requests in flight, all threads (a shard may be negative: a request may
 * end on another thread than it began on). */
static int in_flight(struct http_server *s)
{
	int i, n = 0;

	for (i = 0; i < IN_FLIGHT_SHARDS; i++)
		n += atomic_load_explicit(&s->in_flight[i].n, memory_order_acquire);
	return n;
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
	while (in_flight(s) > 0 && now_ns() < deadline)
		nanosleep(&nap, NULL);
	if (in_flight(s) > 0)
		log_msg(s->p.log, LOG_WARN, "stopping with %d requests still in flight",
			in_flight(s));
	MHD_stop_daemon(s->daemon);
	if (lsock != MHD_INVALID_SOCKET)
		close(lsock);
	MHD_destroy_response(s->healthz);
	conn_watch_stop(&s->watch);
	free(s);
}
