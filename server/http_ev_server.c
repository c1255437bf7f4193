/* http_ev_server.c - the epoll engine's workers (see http_ev.c for the
 * engine as a whole and its connections): per thread a listening socket
 * (SO_REUSEPORT) and an epoll loop, accept, the idle sweep of
 * --connection-timeout, and start and graceful stop behind http.h. */
#include "http_ev_impl.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

#define EV_EVENTS 64
/* Out of descriptors (EMFILE, ENFILE): the listening socket leaves epoll for
 * this long, as nginx stops accepting for a while, instead of waking the
 * worker at once again (it is level-triggered) to fail the same accept; and
 * one warning at most every FD_WARN_SEC, counting the refusals between. */
#define ACCEPT_PAUSE_NS (100 * 1000 * 1000)
#define FD_WARN_SEC 10

static void listen_on(struct ev_worker *w)
{
	struct epoll_event e;

	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	e.data.ptr = &w->lfd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->lfd, &e) == 0)
		w->accept_resume_ns = 0;
	else
		w->accept_resume_ns = now_ns() + ACCEPT_PAUSE_NS;	/* try again then */
}

static void accept_pause(struct ev_worker *w, int err)
{
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->lfd, NULL);
	w->accept_resume_ns = now_ns() + ACCEPT_PAUSE_NS;
	w->fd_refusals++;
	if (w->fd_warned_sec && w->now_sec - w->fd_warned_sec < FD_WARN_SEC)
		return;
	log_msg(w->s->p.log, LOG_WARN,
		"accept: %s: new connections wait, 100 ms at a time (%lu refused since the last such warning); raise the descriptor limit (ulimit -n)",
		strerror(err), w->fd_refusals);
	w->fd_warned_sec = w->now_sec ? w->now_sec : 1;
	w->fd_refusals = 0;
}

static void accept_all(struct ev_worker *w)
{
	struct http_server *s = w->s;
	struct ev_server *ev = w->ev;

	for (;;) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		struct epoll_event e;
		struct ev_conn *c;
		int fd, one = 1;

		fd = accept4(w->lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE)
				accept_pause(w, errno);
			else if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_msg(s->p.log, LOG_WARN, "accept: %s", strerror(errno));
			return;
		}
		if (atomic_fetch_add_explicit(&ev->conns, 1, memory_order_relaxed) >= ev->max_conns) {
			atomic_fetch_sub_explicit(&ev->conns, 1, memory_order_relaxed);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			atomic_fetch_sub_explicit(&ev->conns, 1, memory_order_relaxed);
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->w = w;
		c->fd = fd;
		c->peer = peer;
		c->state = EV_HEAD;
		c->active_sec = w->now_sec;
		c->next = w->conns.next;
		c->prev = &w->conns;
		w->conns.next->prev = c;
		w->conns.next = c;
		conn_watch_add(&s->watch, &c->watch, fd);
		conn_watch_arm(&c->watch, now_ns() + s->idle_header_ns, WATCH_HEADERS);
		memset(&e, 0, sizeof(e));
		e.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
		e.data.ptr = c;
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &e)) {
			ev_conn_close(c);
			continue;
		}
		/* its first bytes may be there already: no wait for an edge */
		ev_conn_run(c, 0);
	}
}

/* Draining: no more connections, and the idle ones are closed now. */
static void worker_drain(struct ev_worker *w)
{
	struct ev_conn *c, *next;

	if (w->lfd >= 0) {
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->lfd, NULL);
		close(w->lfd);
		w->lfd = -1;
		w->accept_resume_ns = 0;
	}
	for (c = w->conns.next; c != &w->conns; c = next) {
		next = c->next;
		if (ev_conn_idle(c))
			ev_conn_close(c);
	}
}

static uint64_t coarse_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec;
}

/*
 * libmicrohttpd's --connection-timeout: a connection on which no byte has
 * moved for that many seconds is closed, whatever it was doing. Checked
 * once a second over this worker's connections, with its coarse clock.
 */
static void worker_sweep(struct ev_worker *w)
{
	uint64_t timeout = w->s->p.cfg->connection_timeout;
	struct ev_conn *c, *next;

	if (w->now_sec == w->swept_sec)
		return;
	w->swept_sec = w->now_sec;
	for (c = w->conns.next; c != &w->conns; c = next) {
		next = c->next;
		if (timeout && w->now_sec - c->active_sec > timeout)
			ev_conn_close(c);
	}
}

static void *worker_main(void *arg)
{
	struct ev_worker *w = arg;
	struct epoll_event evs[EV_EVENTS];
	int phase = EV_SERVE;

	while (phase != EV_STOP) {
		int i, n, woken = 0;

		n = epoll_wait(w->epfd, evs, EV_EVENTS, w->accept_resume_ns ? 20 : 1000);
		w->now_sec = coarse_sec();
		if (w->accept_resume_ns && w->lfd >= 0 && now_ns() >= w->accept_resume_ns)
			listen_on(w);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &w->lfd)
				accept_all(w);
			else if (p == &w->wakefd)
				woken = 1;
			else
				ev_conn_run(p, evs[i].events);
		}
		/* after the batch: its events may name connections closed here */
		worker_sweep(w);
		if (!woken)
			continue;
		{
			uint64_t v;

			if (read(w->wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
		}
		phase = atomic_load(&w->ev->phase);
		worker_drain(w);
	}
	while (w->conns.next != &w->conns)
		ev_conn_close(w->conns.next);
	return NULL;
}

static void wake_all(struct ev_server *ev)
{
	uint64_t one = 1;
	unsigned i;

	for (i = 0; i < ev->nworkers; i++)
		if (ev->workers[i].wakefd >= 0 && write(ev->workers[i].wakefd, &one, sizeof(one)) < 0)
			log_msg(ev->s->p.log, LOG_WARN, "waking a worker: %s", strerror(errno));
}

static void ev_free(struct ev_server *ev)
{
	unsigned i;

	for (i = 0; i < ev->nworkers; i++) {
		struct ev_worker *w = &ev->workers[i];

		if (w->lfd >= 0)
			close(w->lfd);
		if (w->epfd >= 0)
			close(w->epfd);
		if (w->wakefd >= 0)
			close(w->wakefd);
	}
	free(ev->workers);
	free(ev);
}

/*
 * A worker's listening socket bound to ss (for all but the first, with the
 * port the first got); reuseport 0: a probe, bound and not listening.
 * SO_REUSEPORT would let a second daemon on the same port share it
 * silently, so the port is first probed without it: in use, the start
 * fails as libmicrohttpd's does.
 */
static int listen_socket(const struct sockaddr_storage *ss, int ipv6, int reuseport, char *err,
			 size_t errlen, const struct config *cfg)
{
	socklen_t len = ipv6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int fd, one = 1, zero = 0;

	fd = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* "::" takes IPv4 clients too, whatever net.ipv6.bindv6only says, as
	 * on the libmicrohttpd engine (MHD_USE_DUAL_STACK) */
	if (ipv6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if ((reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) ||
	    bind(fd, (const struct sockaddr *)ss, len) || (reuseport && listen(fd, 1024))) {
		snprintf(err, errlen, "cannot start serving on %s port %u: %s", cfg->bind, cfg->port,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int worker_init(struct ev_server *ev, struct ev_worker *w, int lfd, char *err,
		       size_t errlen)
{
	struct epoll_event e;

	w->ev = ev;
	w->s = ev->s;
	w->lfd = lfd;
	w->conns.next = w->conns.prev = &w->conns;
	atomic_init(&w->in_flight, 0);
	w->now_sec = w->swept_sec = coarse_sec();
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->epfd < 0 || w->wakefd < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		return -1;
	}
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	e.data.ptr = &w->lfd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, lfd, &e))
		goto out_err;
	e.data.ptr = &w->wakefd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wakefd, &e))
		goto out_err;
	return 0;
out_err:
	snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
	return -1;
}

static void ev_join(struct ev_server *ev)
{
	unsigned i;

	atomic_store(&ev->phase, EV_STOP);
	wake_all(ev);
	for (i = 0; i < ev->nworkers; i++)
		if (ev->workers[i].started)
			pthread_join(ev->workers[i].thread, NULL);
}

int http_ev_start(struct http_server *s, char *err, size_t errlen)
{
	const struct config *cfg = s->p.cfg;
	struct sockaddr_storage ss;
	struct ev_server *ev;
	unsigned i;
	int ipv6 = 0;

	if (http_bind_address(cfg, &ss, &ipv6)) {
		snprintf(err, errlen, "--bind: cannot use address '%s'", cfg->bind);
		return -1;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ev->s = s;
	ev->nworkers = cfg->threads ? cfg->threads : 1;
	ev->max_conns = http_connection_limit(cfg->threads);
	atomic_init(&ev->phase, EV_SERVE);
	atomic_init(&ev->conns, 0);
	ev->workers = aligned_alloc(64, sizeof(*ev->workers) * ev->nworkers);
	if (!ev->workers) {
		free(ev);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(ev->workers, 0, sizeof(*ev->workers) * ev->nworkers);
	for (i = 0; i < ev->nworkers; i++)
		ev->workers[i].lfd = ev->workers[i].epfd = ev->workers[i].wakefd = -1;
	if (cfg->port) {
		int probe = listen_socket(&ss, ipv6, 0, err, errlen, cfg);

		if (probe < 0)
			goto out_free;
		close(probe);
	}
	for (i = 0; i < ev->nworkers; i++) {
		int lfd = listen_socket(&ss, ipv6, 1, err, errlen, cfg);

		if (lfd < 0 || worker_init(ev, &ev->workers[i], lfd, err, errlen))
			goto out_free;
		if (i == 0) {
			/* --port 0: the others bind to the port the first one got */
			socklen_t len = sizeof(ss);

			if (getsockname(lfd, (struct sockaddr *)&ss, &len)) {
				snprintf(err, errlen, "getsockname: %s", strerror(errno));
				goto out_free;
			}
			s->port = ntohs(ipv6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
					       ((struct sockaddr_in *)&ss)->sin_port);
		}
	}
	for (i = 0; i < ev->nworkers; i++) {
		if (pthread_create(&ev->workers[i].thread, NULL, worker_main, &ev->workers[i])) {
			snprintf(err, errlen, "cannot start worker threads");
			ev_join(ev);
			goto out_free;
		}
		ev->workers[i].started = 1;
	}
	s->ev = ev;
	return 0;

out_free:
	ev_free(ev);
	return -1;
}

static int in_flight(struct ev_server *ev)
{
	unsigned i;
	int n = 0;

	for (i = 0; i < ev->nworkers; i++)
		n += atomic_load_explicit(&ev->workers[i].in_flight, memory_order_acquire);
	return n;
}

void http_ev_stop(struct http_server *s, unsigned grace_ms)
{
	struct ev_server *ev = s->ev;
	struct timespec nap = { 0, 10 * 1000000L };
	uint64_t deadline = now_ns() + (uint64_t)grace_ms * 1000000u;

	atomic_store(&ev->phase, EV_DRAIN);
	wake_all(ev);
	while (in_flight(ev) > 0 && now_ns() < deadline)
		nanosleep(&nap, NULL);
	if (in_flight(ev) > 0)
		log_msg(s->p.log, LOG_WARN, "stopping with %d requests still in flight", in_flight(ev));
	ev_join(ev);
	ev_free(ev);
	s->ev = NULL;
}
