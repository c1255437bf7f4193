/* conn_watch.c - one thread that cuts connections past their deadline and
 * drains lingering sockets (see conn_watch.h). */
#include "conn_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define WATCH_TICK_MS 200

uint64_t watch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *reason_text(int why)
{
	switch (why) {
	case WATCH_HEADERS:
		return "request line and headers not complete within --header-timeout";
	case WATCH_BODY:
		return "body slower than --body-timeout and --min-body-rate allow";
	case WATCH_DISCARD:
		return "discarding a refused body for too long";
	default:
		return "deadline passed";
	}
}

/* Cut every connection past its deadline; end lingering past theirs.
 * Caller holds w->lock. */
static void sweep_locked(struct conn_watch *w, uint64_t now)
{
	struct watched_conn *c;
	size_t i;

	for (c = w->head.next; c != &w->head; c = c->next) {
		uint64_t d = atomic_load_explicit(&c->deadline_ns, memory_order_relaxed);

		if (c->cut || d == 0 || now < d)
			continue;
		c->cut = 1;
		shutdown(c->fd, SHUT_RDWR);
		atomic_fetch_add_explicit(&w->cuts, 1, memory_order_relaxed);
		log_msg(w->log, LOG_INFO, "closing connection: %s",
			reason_text(atomic_load_explicit(&c->reason, memory_order_relaxed)));
	}
	for (i = 0; i < LINGER_MAX_SOCKETS; i++) {
		if (w->linger[i].fd >= 0 && now >= w->linger[i].until_ns) {
			close(w->linger[i].fd);
			w->linger[i].fd = -1;
		}
	}
}

/* Read and drop what a lingering socket holds; close it at EOF, on an
 * error or past LINGER_MAX_BYTES. Only the watcher thread frees a slot; the
 * slot's fields are read and written under the lock, the reads are not. */
static void drain(struct conn_watch *w, struct lingering *l)
{
	static char sink[65536];	/* written only by the watcher thread */
	uint64_t bytes;
	ssize_t n;
	int fd, done = 0;

	pthread_mutex_lock(&w->lock);
	fd = l->fd;
	bytes = l->bytes;
	pthread_mutex_unlock(&w->lock);
	if (fd < 0)
		return;
	for (;;) {
		n = recv(fd, sink, sizeof(sink), 0);
		if (n > 0) {
			bytes += (uint64_t)n;
			if (bytes <= LINGER_MAX_BYTES)
				continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			break;
		} else if (n < 0 && errno == EINTR) {
			continue;
		}
		done = 1;
		break;
	}
	pthread_mutex_lock(&w->lock);
	l->bytes = bytes;
	if (done) {
		close(l->fd);
		l->fd = -1;
	}
	pthread_mutex_unlock(&w->lock);
}

static void *watch_main(void *arg)
{
	struct conn_watch *w = arg;
	struct epoll_event ev[64];
	uint64_t next = watch_now_ns();
	int i, n;

	while (!atomic_load(&w->stop)) {
		n = epoll_wait(w->epfd, ev, 64, WATCH_TICK_MS);
		for (i = 0; i < n; i++)
			if (ev[i].data.ptr)
				drain(w, ev[i].data.ptr);
		if (watch_now_ns() >= next) {
			pthread_mutex_lock(&w->lock);
			sweep_locked(w, watch_now_ns());
			pthread_mutex_unlock(&w->lock);
			next = watch_now_ns() + (uint64_t)WATCH_TICK_MS * 1000000u;
		}
	}
	return NULL;
}

int conn_watch_start(struct conn_watch *w, struct log *log, unsigned linger_cap)
{
	struct epoll_event ev;
	size_t i;

	memset(w, 0, sizeof(*w));
	w->log = log;
	w->linger_cap = linger_cap < LINGER_MAX_SOCKETS ? linger_cap : LINGER_MAX_SOCKETS;
	w->head.next = w->head.prev = &w->head;
	atomic_init(&w->cuts, 0);
	atomic_init(&w->stop, 0);
	for (i = 0; i < LINGER_MAX_SOCKETS; i++)
		w->linger[i].fd = -1;
	if (pthread_mutex_init(&w->lock, NULL))
		return -1;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		goto out_destroy_lock;
	w->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->wakefd < 0)
		goto out_close_epoll;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wakefd, &ev))
		goto out_close_wake;
	if (pthread_create(&w->thread, NULL, watch_main, w))
		goto out_close_wake;
	return 0;

out_close_wake:
	close(w->wakefd);
out_close_epoll:
	close(w->epfd);
out_destroy_lock:
	pthread_mutex_destroy(&w->lock);
	return -1;
}

void conn_watch_stop(struct conn_watch *w)
{
	uint64_t one = 1;
	size_t i;

	atomic_store(&w->stop, 1);
	if (write(w->wakefd, &one, sizeof(one)) < 0) {
		/* the thread still sees stop within WATCH_TICK_MS */
	}
	pthread_join(w->thread, NULL);
	for (i = 0; i < LINGER_MAX_SOCKETS; i++)
		if (w->linger[i].fd >= 0)
			close(w->linger[i].fd);
	close(w->wakefd);
	close(w->epfd);
	pthread_mutex_destroy(&w->lock);
}

void conn_watch_add(struct conn_watch *w, struct watched_conn *c, int fd)
{
	c->fd = fd;
	c->cut = 0;
	atomic_init(&c->deadline_ns, 0);
	atomic_init(&c->reason, WATCH_NONE);
	pthread_mutex_lock(&w->lock);
	c->prev = &w->head;
	c->next = w->head.next;
	w->head.next->prev = c;
	w->head.next = c;
	pthread_mutex_unlock(&w->lock);
}

void conn_watch_remove(struct conn_watch *w, struct watched_conn *c)
{
	pthread_mutex_lock(&w->lock);
	c->prev->next = c->next;
	c->next->prev = c->prev;
	c->prev = c->next = c;
	pthread_mutex_unlock(&w->lock);
}

void conn_watch_linger(struct conn_watch *w, int fd)
{
	struct epoll_event ev;
	struct lingering *l = NULL;
	size_t i;
	int dupfd;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < w->linger_cap && !l; i++)
		if (w->linger[i].fd < 0)
			l = &w->linger[i];
	if (!l)
		goto out_unlock;
	dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dupfd < 0)
		goto out_unlock;
	if (fcntl(dupfd, F_SETFL, fcntl(dupfd, F_GETFL) | O_NONBLOCK) < 0)
		goto out_close;
	l->fd = dupfd;
	l->bytes = 0;
	l->until_ns = watch_now_ns() + (uint64_t)LINGER_SECONDS * 1000000000u;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.ptr = l;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, dupfd, &ev)) {
		l->fd = -1;
		goto out_close;
	}
	pthread_mutex_unlock(&w->lock);
	return;

out_close:
	close(dupfd);
out_unlock:
	pthread_mutex_unlock(&w->lock);
}
