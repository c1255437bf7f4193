/* http_impl.h - internal to server/http*.c: the server and per-request state
 * shared by the two engines (http_mhd.c: libmicrohttpd; http_ev.c: own
 * epoll HTTP/1.1 server), request intake (http_request.c) and responses
 * (http_respond.c); http.c picks the engine. Other modules use http.h. */
#ifndef SERVER_HTTP_IMPL_H
#define SERVER_HTTP_IMPL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "access_log.h"
#include "api.h"
#include "conn_watch.h"
#include "http.h"
#include "http_check.h"

#define RAW_PATH_INLINE 256	/* longer raw paths are copied to the heap */
/* query-string parameters a request may carry; more is a 400, never a
 * parameter dropped unread (a typo must not pass unseen) */
#define QUERY_ARGS_MAX 8
#define QUERY_ARGS_MSG "query string: more than 8 parameters"
/* Every 503 (not ready, the --store Redis unavailable, a write queued too
 * long) says when to try again: seconds, RFC 9110 10.2.3. A replica waits
 * at least this long between reconnections; a client retrying sooner only
 * adds load. */
#define HTTP_RETRY_AFTER "1"
/* announced bodies under this (a ray's, a segment's query) are read in place */
#define BODY_INLINE 512

struct ev_server;

/* The server: what both engines share, then each engine's own part. */
/* libmicrohttpd's requests in flight are counted per thread (summed by
 * http_mhd.c's stop): one shared counter was two contended atomic writes
 * per request. The epoll engine counts per worker. */
#define IN_FLIGHT_SHARDS 16

struct in_flight_shard {
	_Alignas(64) atomic_int n;
};

/* Allocated cache-line aligned (http_start). */
struct http_server {
	struct in_flight_shard in_flight[IN_FLIGHT_SHARDS];	/* mhd */
	struct http_params p;
	struct ev_server *ev;		/* --http-engine epoll; else libmicrohttpd's: */
	struct MHD_Daemon *daemon;
	unsigned port;
	const char *api_key, *read_key;
	size_t api_key_len, read_key_len;
	atomic_int draining;		/* set by http_stop: answer with Connection: close */
	struct MHD_Response *healthz;	/* shared, immutable (mhd only) */
	uint64_t header_ns;		/* --header-timeout */
	uint64_t idle_header_ns;	/* max(--header-timeout, --connection-timeout) */
	uint64_t body_ns;		/* --body-timeout */
	uint64_t body_rate;		/* --min-body-rate, bytes/s; 0 = none */
	struct conn_watch watch;
	/* libmicrohttpd's messages (one per plain-HTTP client on the TLS port,
	 * per client gone mid-request): at most MHD_LOG_BURST a window */
	pthread_mutex_t mhd_log_lock;
	uint64_t mhd_log_window;	/* start of the window, ns */
	unsigned mhd_log_count, mhd_log_dropped;
};

struct request {
	struct http_server *srv;
	struct watched_conn *watch;	/* the connection's deadline */
	int started;			/* the access handler has seen the headers */
	char *raw;			/* the path exactly as sent (no query), NUL-ended */
	size_t raw_len;
	uint64_t t0_ns;
	const char *route_label;	/* static; NULL = "unmatched" */
	int routed;			/* route holds api_route's answer (classify) */
	struct api_route_info route;
	const char *ray_kind;
	uint64_t rays;
	int status;			/* 0 until a response is queued */
	size_t rid_len;			/* rid's bytes; 0: no X-Request-Id taken */
	size_t bytes;			/* response body bytes */
	enum api_auth auth;
	struct http_head head;		/* the headers used here, from http_check_head */
	size_t limit;			/* body bytes allowed */
	uint64_t content_length;	/* as the header announces it; 0: none */
	int ops;			/* /healthz, /readyz or /metrics */
	enum api_err verdict;		/* a refusal decided from the headers */
	char allow[64];
	char msg[128];
	int discarding;			/* the body is read and dropped */
	uint64_t discarded;
	uint64_t body_t0_ns, body_bytes;	/* for the body deadline */
	uint64_t discard_t0_ns;
	char *body;			/* body_inline or the heap's */
	size_t len, cap;
	char method[12];
	char raw_inline[RAW_PATH_INLINE];	/* from here on not cleared per request */
	char body_inline[BODY_INLINE];
	char rid[HTTP_REQUEST_ID_MAX];	/* the X-Request-Id echoed and logged */
};


/* Count a request in (+1) or out (-1) of flight on the calling thread's
 * shard (mhd engine; http.c). http_in_flight sums them. */
void http_in_flight_add(struct http_server *s, int d);
int http_in_flight(struct http_server *s);

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The same clock to a few milliseconds (the kernel's tick), without reading
 * the TSC: for deadlines, which count whole seconds. */
static inline uint64_t now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* http_request.c: a request's intake, shared by both engines. */

/* What the engine does after the head (http_request_head). */
enum http_next {
	HTTP_NEXT_ANSWER,	/* no body: answer now (r->verdict, r->ops or the api) */
	HTTP_NEXT_BODY,		/* read the body (http_on_body), then answer */
	HTTP_NEXT_REFUSE,	/* answer r->verdict now, before the body; then close and linger */
};

/* Free r's body (unless it is r->body_inline); r->body NULL, len and cap 0. */
void http_body_release(struct request *r);

/* The request's head has arrived: note its start time and method. The
 * engine counts it in flight. */
void http_request_start(struct request *r, const char *method);

/*
 * Decide from r->head (filled by the header checks, with verdict their
 * result and close_now set when the body cannot be delimited) and r->raw
 * what the headers alone decide: ops endpoint, route (404/405), access
 * (401/403), readiness (503), announced size (413). Arms the body deadline
 * and allocates a Content-Length body when one is to be read.
 */
enum http_next http_request_head(struct http_server *s, struct request *r, const char *method,
				 int close_now);

/*
 * Append n bytes of r's body, or count them as discarded once r is refused
 * (a body over its limit starts the discard: r->verdict is then set).
 * 0, or -1 to close the connection: out of memory, or more than the
 * discard allowance.
 */
int http_on_body(struct http_server *s, struct request *r, const char *data, size_t n);

/* A chunk of size bytes announced (its size line read): one that would take
 * the body over its limit is refused now, before its data arrives, as an
 * announced Content-Length is (r->discarding is then set). */
void http_on_chunk_size(struct http_server *s, struct request *r, uint64_t size);

/* n bytes were written straight at r->body + r->len (room for them and a NUL
 * was there: a Content-Length body, not discarding). */
void http_on_body_direct(struct http_server *s, struct request *r, size_t n);

/* http_respond.c: answers as api responses, shared by both engines; the
 * engine sends resp and releases it. */

/* Error e of the api's table with msg (allow: the Allow header, or NULL);
 * a 401 carries WWW-Authenticate. */
void http_error_response(struct api_response *resp, enum api_err e, const char *allow,
			 const char *msg);

/* The answer of /healthz, /readyz or /metrics (r->route_label). 0, or -1
 * when out of memory (no answer: close). */
int http_ops_response(struct http_server *s, struct request *r, struct api_response *resp);

/* Hand r, headers and whole body, to the api layer (args: the query string,
 * percent-decoded, NULL-key ended); r's body is freed. */
void http_api_response(struct http_server *s, struct request *r, const char *method,
		       const struct api_arg *args, struct api_response *resp);

/* The request is over (answered, or cut after its head): its metrics and,
 * when remote is not NULL, its access line. */
void http_request_record(struct http_server *s, struct request *r, const char *remote);

/* http_mhd.c and http_ev_server.c: the engines; 0 or -1 with err, as http_start. */
int http_mhd_start(struct http_server *s, char *err, size_t errlen);
void http_mhd_stop(struct http_server *s, unsigned grace_ms);
int http_ev_start(struct http_server *s, char *err, size_t errlen);
void http_ev_stop(struct http_server *s, unsigned grace_ms);

/* Resolve cfg->bind/port to a socket address. 0 or -1. */
int http_bind_address(const struct config *cfg, struct sockaddr_storage *ss, int *ipv6);

/* A connection limit the descriptor limit can carry. */
unsigned http_connection_limit(unsigned threads);

/* How many sockets may linger at once (conn_watch_linger): a quarter of the
 * descriptor limit, at most LINGER_MAX_SOCKETS. */
unsigned http_linger_limit(void);

#endif
