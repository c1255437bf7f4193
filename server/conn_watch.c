/* conn_watch.c - one thread that cuts connections past their deadline (see
 * conn_watch.h). */
#include "conn_watch.h"

#include <string.h>
#include <sys/socket.h>
#include <time.h>

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

/* Cut every connection past its deadline. Caller holds w->lock. */
static void sweep_locked(struct conn_watch *w, uint64_t now)
{
	struct watched_conn *c;

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
}

static void *watch_main(void *arg)
{
	struct conn_watch *w = arg;
	struct timespec until;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += WATCH_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->wake, &w->lock, &until);
		if (!w->stop)
			sweep_locked(w, watch_now_ns());
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int conn_watch_start(struct conn_watch *w, struct log *log)
{
	pthread_condattr_t ca;

	memset(w, 0, sizeof(*w));
	w->log = log;
	w->head.next = w->head.prev = &w->head;
	atomic_init(&w->cuts, 0);
	if (pthread_mutex_init(&w->lock, NULL))
		return -1;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_cond_init(&w->wake, &ca)) {
		pthread_condattr_destroy(&ca);
		goto out_destroy_lock;
	}
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thread, NULL, watch_main, w))
		goto out_destroy_cond;
	return 0;

out_destroy_cond:
	pthread_cond_destroy(&w->wake);
out_destroy_lock:
	pthread_mutex_destroy(&w->lock);
	return -1;
}

void conn_watch_stop(struct conn_watch *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->wake);
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
