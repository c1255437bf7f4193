/* http.c - the transport's public face (see http.h): the state both engines
 * share, and the choice of engine (--http-engine: libmicrohttpd in
 * http_mhd.c, or the own epoll server in http_ev.c). */
#include "http_impl.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "config.h"

static rlim_t fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	return rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 65536;
}

unsigned http_linger_limit(void)
{
	rlim_t n = fd_limit() / 4;

	return n < LINGER_MAX_SOCKETS ? (unsigned)n : LINGER_MAX_SOCKETS;
}

/* A connection limit the descriptor limit can carry, with room for the
 * listen sockets, epoll and wake-up descriptors, data files and logs, and
 * the sockets lingering after an early answer (http_linger_limit: they hold
 * a descriptor of their own once their connection has closed; counted
 * apart, they once took the daemon past its limit). */
unsigned http_connection_limit(unsigned threads)
{
	rlim_t n = fd_limit(), keep = 64 + 4 * (rlim_t)threads + http_linger_limit();

	n = n > keep + 16 ? n - keep : 16;
	return n > 65536 ? 65536 : (unsigned)n;
}

int http_bind_address(const struct config *cfg, struct sockaddr_storage *ss, int *ipv6)
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

/* The epoll engine serves plain HTTP, unless --http-engine mhd; TLS is
 * always libmicrohttpd's (config refuses epoll with TLS). */
static int use_epoll(const struct config *cfg)
{
	return cfg->http_engine && strcmp(cfg->http_engine, "mhd") != 0 && !cfg->tls_cert_pem;
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

/* A shard may be negative: a request may end on another thread than it
 * began on; the sum is right. */
int http_in_flight(struct http_server *s)
{
	int i, n = 0;

	for (i = 0; i < IN_FLIGHT_SHARDS; i++)
		n += atomic_load_explicit(&s->in_flight[i].n, memory_order_acquire);
	return n;
}

int http_start(const struct http_params *p, struct http_server **out, char *err, size_t errlen)
{
	const struct config *cfg = p->cfg;
	struct http_server *s;
	int rc;

	s = aligned_alloc(64, (sizeof(*s) + 63) / 64 * 64);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(s, 0, sizeof(*s));
	s->p = *p;
	atomic_init(&s->draining, 0);
	pthread_mutex_init(&s->mhd_log_lock, NULL);
	s->api_key = cfg->api_key;
	s->api_key_len = cfg->api_key ? strlen(cfg->api_key) : 0;
	s->read_key = cfg->read_key;
	s->read_key_len = cfg->read_key ? strlen(cfg->read_key) : 0;
	s->header_ns = (uint64_t)cfg->header_timeout * 1000000000u;
	s->idle_header_ns = (uint64_t)(cfg->header_timeout > cfg->connection_timeout ?
				       cfg->header_timeout : cfg->connection_timeout) * 1000000000u;
	s->body_ns = (uint64_t)cfg->body_timeout * 1000000000u;
	s->body_rate = cfg->min_body_rate;
	if (conn_watch_start(&s->watch, p->log, http_linger_limit())) {
		snprintf(err, errlen, "cannot start the connection deadline thread");
		pthread_mutex_destroy(&s->mhd_log_lock);
		free(s);
		return -1;
	}
	rc = use_epoll(cfg) ? http_ev_start(s, err, errlen) : http_mhd_start(s, err, errlen);
	if (rc) {
		conn_watch_stop(&s->watch);
		pthread_mutex_destroy(&s->mhd_log_lock);
		free(s);
		return -1;
	}
	*out = s;
	return 0;
}

const char *http_engine_name(const struct http_server *s)
{
	return s->ev ? "epoll" : "libmicrohttpd";
}

unsigned http_port(const struct http_server *s)
{
	return s->port;
}

void http_stop(struct http_server *s, unsigned grace_ms)
{
	atomic_store(&s->draining, 1);
	if (s->ev)
		http_ev_stop(s, grace_ms);
	else
		http_mhd_stop(s, grace_ms);
	conn_watch_stop(&s->watch);
	pthread_mutex_destroy(&s->mhd_log_lock);
	free(s);
}
