/* http_impl.h - internal to server/http*.c: the server and per-request state
 * shared by the transport (http.c), request intake (http_request.c) and
 * responses (http_respond.c). Other modules use http.h. */
#ifndef SERVER_HTTP_IMPL_H
#define SERVER_HTTP_IMPL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "access_log.h"
#include "api.h"
#include "conn_watch.h"
#include "http.h"
#include "http_check.h"

#define LOG_PATH_MAX 192	/* bytes of the (escaped) path kept for the access log */
#define RAW_PATH_INLINE 256	/* longer raw paths are copied to the heap */

/* Requests in flight are counted per thread (summed by http_stop): one
 * shared counter was two contended atomic writes per request. */
#define IN_FLIGHT_SHARDS 16

struct in_flight_shard {
	_Alignas(64) atomic_int n;
};

/* Allocated cache-line aligned (http_start). */
struct http_server {
	struct in_flight_shard in_flight[IN_FLIGHT_SHARDS];
	struct http_params p;
	struct MHD_Daemon *daemon;
	unsigned port;
	const char *api_key, *read_key;
	size_t api_key_len, read_key_len;
	atomic_int draining;		/* set by http_stop: answer with Connection: close */
	struct MHD_Response *healthz;	/* shared, immutable */
	uint64_t header_ns;		/* --header-timeout */
	uint64_t idle_header_ns;	/* max(--header-timeout, --connection-timeout) */
	uint64_t body_ns;		/* --body-timeout */
	uint64_t body_rate;		/* --min-body-rate, bytes/s; 0 = none */
	struct conn_watch watch;
};

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

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Count a request in (+1) or out (-1) of flight on the calling thread's
 * shard (http.c). */
void http_in_flight_add(struct http_server *s, int d);

/* The connection r belongs to. */
static inline struct conn *request_conn(struct request *r)
{
	return (struct conn *)(void *)((char *)r - offsetof(struct conn, req));
}

/* http_request.c: the headers and body of a request, before its answer. */

/*
 * The first call of the access handler for r, headers only (method and
 * version as libmicrohttpd gives them). Decides what the headers alone
 * decide (see classify there); a refusal of a request with a body is queued
 * now and the connection marked to linger. Returns MHD_NO to close the
 * connection.
 */
enum MHD_Result http_begin_request(struct http_server *s, struct MHD_Connection *c,
				   struct request *r, const char *method, const char *version);

/*
 * Append n bytes of r's body, or count them as discarded once r is refused
 * (a body over its limit starts the discard). Returns MHD_NO to close the
 * connection: out of memory, or more than the discard allowance.
 */
enum MHD_Result http_on_body(struct http_server *s, struct request *r, const char *data,
			     size_t n);

/* http_respond.c: queueing answers on the connection. */

/*
 * Answer r with error e of the api's table and msg (allow: the Allow header,
 * or NULL); a 401 carries WWW-Authenticate. On success r->status and
 * r->bytes are set; MHD_NO when it could not be queued.
 */
enum MHD_Result http_send_error(struct MHD_Connection *c, struct request *r, enum api_err e,
				const char *allow, const char *msg);

/*
 * Answer r, whose r->route_label is /healthz, /readyz or /metrics (set by
 * http_begin_request). MHD_NO when no answer could be queued.
 */
enum MHD_Result http_serve_ops(struct http_server *s, struct MHD_Connection *c,
			       struct request *r);

/*
 * Hand r, headers and whole body, to the api layer and queue its answer;
 * r's body is freed. MHD_NO when no answer could be queued.
 */
enum MHD_Result http_serve_api(struct http_server *s, struct MHD_Connection *c,
			       struct request *r, const char *method);

#endif
