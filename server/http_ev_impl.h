/* http_ev_impl.h - internal to the epoll engine: its connections
 * (http_ev.c: the per-connection state machine, reading requests and
 * writing answers) and its workers (http_ev_server.c: listening sockets,
 * accept, the epoll loop per thread, idle sweeps, start and graceful stop).
 * Other modules use http.h. */
#ifndef SERVER_HTTP_EV_IMPL_H
#define SERVER_HTTP_EV_IMPL_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <time.h>

#include "http_impl.h"
#include "http_parse.h"

#define EV_IN_MIN 4096			/* input buffer at first: any usual head */
#define EV_IN_MAX (HTTP_HEAD_MAX + 4096)	/* a full head and room for a body behind it */
#define EV_IN_ROOM 1024			/* kept free behind a head for body bytes */
#define EV_HDR_MAX 512			/* the response's status line and headers */

enum ev_state { EV_HEAD, EV_BODY, EV_WRITE };
enum ev_phase { EV_SERVE, EV_DRAIN, EV_STOP };
/* what conn_process did */
enum { EV_NEED_INPUT, EV_PROGRESS, EV_CLOSED };

struct ev_worker;

struct ev_conn {
	struct watched_conn watch;	/* the deadline, as under libmicrohttpd */
	struct ev_worker *w;
	struct ev_conn *prev, *next;	/* the worker's connections */
	int fd;
	enum ev_state state;
	uint64_t active_sec;	/* the worker's clock when bytes last moved */
	int line_seen;		/* the request line is in: header deadline armed */
	int keep_alive;		/* another request may follow this one */
	int closing;		/* close once the answer has gone */
	int linger;		/* answered before its body: linger at close */
	int head_method;	/* HEAD: the answer goes without its body */
	int minor;		/* HTTP/1.minor of the request */
	int drained;		/* the last read left the socket empty: await an edge */
	int peer_done;		/* an edge said the peer closed or failed: read to the end */
	/* input: in[in_off..in_len) is unread; scan is http_head_end's */
	char *in;
	size_t in_cap, in_off, in_len, scan;
	size_t head_end;	/* while a body arrives: the head in in[0..head_end) */
	char *method, *query;	/* in the head, NUL-ended; query NULL: none */
	uint64_t body_left;	/* Content-Length bytes still due */
	int chunked;
	struct http_chunked ch;
	/* the answer: hdr then out_body, out_off bytes of both sent */
	char hdr[EV_HDR_MAX];
	size_t hdr_len;
	const char *out_body;
	size_t out_len, out_off;
	char *out_free;		/* what to free once sent */
	struct sockaddr_storage peer;
	char remote[ACCESS_REMOTE_MAX];	/* "" until first needed */
	struct request req;
};

/* One per thread; aligned so that no two workers share a cache line. */
struct ev_worker {
	struct ev_server *ev;
	struct http_server *s;
	pthread_t thread;
	int started;
	int epfd, lfd, wakefd;
	atomic_int in_flight;		/* written by this worker only */
	struct ev_conn conns;		/* sentinel of a circular list */
	uint64_t now_sec;		/* CLOCK_MONOTONIC_COARSE seconds, read once per wake-up */
	uint64_t swept_sec;		/* the last idle sweep */
	uint64_t accept_resume_ns;	/* out of descriptors: lfd left epoll until then (0: in it) */
	uint64_t fd_warned_sec;		/* the last warning of that, and those since */
	unsigned long fd_refusals;
	time_t date_sec;		/* the Date header, formatted once a second */
	char date[40];
} __attribute__((aligned(64)));

struct ev_server {
	struct http_server *s;
	unsigned nworkers;
	struct ev_worker *workers;
	atomic_int phase;		/* enum ev_phase */
	atomic_uint conns;		/* open connections, counted at accept and close */
	unsigned max_conns;
};

/* http_ev.c: one connection. */

/* Run c as far as its socket allows, for an edge of epoll events (0 for a
 * new connection); c may be closed and freed on return. */
void ev_conn_run(struct ev_conn *c, uint32_t events);

/* Close c: out of its worker's list and epoll, request recorded, lingering
 * when answered before its body; c is freed. */
void ev_conn_close(struct ev_conn *c);

/* 1 when c is between requests (closed at once when draining). */
int ev_conn_idle(const struct ev_conn *c);

#endif
