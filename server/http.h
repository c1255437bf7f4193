/* http.h - the HTTP transport: connections, TLS, early refusals
 * (404/405/401/403/413/503 before any body is read), bounded bodies, the ops
 * endpoints (/healthz, /readyz, /metrics), access log and metrics, and a
 * graceful stop. Two engines behind one API (cfg->http_engine): libmicrohttpd
 * (http_mhd.c, the default and the only one with TLS) and an own epoll
 * HTTP/1.1 server (http_ev.c).
 *
 * Everything a request needs comes from struct http_params, which must
 * outlive the server; nothing here is global.
 */
#ifndef SERVER_HTTP_H
#define SERVER_HTTP_H

#include <stdatomic.h>
#include <stddef.h>

struct api_ctx;
struct config;
struct log;
struct metrics;

struct http_params {
	const struct config *cfg;	/* bind, port, threads, keys, limits, TLS PEMs */
	const struct api_ctx *api;	/* limits in api->limits are the ones applied */
	struct metrics *metrics;
	struct log *log;
	atomic_int *ready;		/* 0 while stored meshes load: /readyz and /v1 answer 503 */
};

struct http_server;

/*
 * Start listening and serving with cfg->threads threads. Returns 0 with
 * *out set, or -1 with err saying why (address in use, bad TLS key, ...).
 */
int http_start(const struct http_params *p, struct http_server **out, char *err, size_t errlen);

/*
 * Whether libmicrohttpd can serve TLS with cfg's certificate and key
 * (cfg->tls_cert_pem, tls_key_pem; nothing to check without them): a key
 * not the certificate's, an encrypted key, the two swapped. It starts no
 * thread and binds nothing. Returns 0, or -1 with err naming --tls-cert
 * and --tls-key and saying why.
 */
int http_tls_check(const struct config *cfg, char *err, size_t errlen);

/* The port actually bound (useful with --port 0). */
unsigned http_port(const struct http_server *s);

/* The engine serving: "epoll" or "libmicrohttpd". */
const char *http_engine_name(const struct http_server *s);

/*
 * Stop gracefully and free s: stop accepting, answer requests in flight
 * (their responses say Connection: close) for at most grace_ms, then close
 * every connection and join the threads.
 */
void http_stop(struct http_server *s, unsigned grace_ms);

#endif
