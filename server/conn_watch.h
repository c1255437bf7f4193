/* conn_watch.h - deadlines per connection (header block, body progress)
 * enforced by one watcher thread, for what libmicrohttpd's idle timer cannot
 * see: a client that sends one byte at a time keeps that timer fresh.
 *
 * The transport registers every connection when libmicrohttpd opens it
 * (conn_watch_add) and removes it when libmicrohttpd reports it closed
 * (conn_watch_remove), which happens before libmicrohttpd closes the socket,
 * so the watcher never touches a descriptor that was reused. In between, the
 * connection's own thread arms or clears its deadline (conn_watch_arm, a
 * relaxed atomic store: no lock on the request path). Every WATCH_TICK_MS the
 * watcher shuts down (shutdown(2), both directions) each connection whose
 * deadline has passed; libmicrohttpd then sees the socket fail and closes the
 * connection itself. Each cut is logged once at info level.
 *
 * Lingering close (nginx's lingering_close): a connection answered before
 * its body was read (an early 413, 401, 404 ...) is closed by libmicrohttpd
 * right after the answer, with the body still arriving. Closing a socket
 * with unread data sends a reset, which destroys the answer at a client that
 * sends its whole body before reading (Python's http.client: broken pipe).
 * conn_watch_linger keeps a duplicate of such a socket, whose answer and FIN
 * have gone out, and the watcher reads and drops what still arrives until
 * the client closes, for at most LINGER_SECONDS and LINGER_MAX_BYTES, with
 * at most LINGER_MAX_SOCKETS sockets at once.
 */
#ifndef SERVER_CONN_WATCH_H
#define SERVER_CONN_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct log;

/* What a deadline is for (it names the cut in the log). */
enum watch_reason {
	WATCH_NONE,
	WATCH_HEADERS,		/* request line and headers incomplete */
	WATCH_BODY,		/* body below the progress floor */
	WATCH_DISCARD,		/* lingering discard of a refused body too long */
};

struct watched_conn {
	struct watched_conn *prev, *next;	/* registry list, under the lock */
	int fd;
	_Atomic uint64_t deadline_ns;		/* CLOCK_MONOTONIC; 0 = none */
	atomic_int reason;			/* enum watch_reason */
	int cut;				/* shut down by the watcher (under the lock) */
};

#define LINGER_SECONDS 30
#define LINGER_MAX_BYTES ((uint64_t)1 << 30)
#define LINGER_MAX_SOCKETS 1024

struct lingering {
	int fd;				/* -1: free slot */
	uint64_t until_ns;
	uint64_t bytes;
};

struct conn_watch {
	pthread_mutex_t lock;
	pthread_t thread;
	int epfd, wakefd;		/* lingering sockets; eventfd to stop */
	atomic_int stop;
	struct lingering linger[LINGER_MAX_SOCKETS];	/* slots: taken under the lock */
	unsigned linger_cap;			/* slots in use at most */
	struct watched_conn head;		/* sentinel of a circular list */
	struct log *log;
	atomic_ulong cuts;			/* connections cut so far */
};

/* Nanoseconds on CLOCK_MONOTONIC. */
uint64_t watch_now_ns(void);

/* Initialise w and start its thread, with at most linger_cap sockets
 * lingering at once (<= LINGER_MAX_SOCKETS: the descriptors they hold are
 * reserved out of the connection limit). 0, or -1 (w then owns nothing). */
int conn_watch_start(struct conn_watch *w, struct log *log, unsigned linger_cap);

/* Stop the thread and release w. Connections still registered are left
 * alone (libmicrohttpd closes them). */
void conn_watch_stop(struct conn_watch *w);

/* Register c (caller-owned, zeroed) for socket fd, with no deadline. */
void conn_watch_add(struct conn_watch *w, struct watched_conn *c, int fd);

/* Unregister c; after this the watcher never touches c or its socket. */
void conn_watch_remove(struct conn_watch *w, struct watched_conn *c);

/* Keep a duplicate of socket fd (answered, FIN sent, about to be closed by
 * libmicrohttpd) and drop what it still receives; see above. A no-op when
 * linger_cap sockets are already lingering. */
void conn_watch_linger(struct conn_watch *w, int fd);

/* Set c's deadline (0 = none) and what it is for. Any thread owning c. */
static inline void conn_watch_arm(struct watched_conn *c, uint64_t deadline_ns,
				  enum watch_reason why)
{
	atomic_store_explicit(&c->reason, (int)why, memory_order_relaxed);
	atomic_store_explicit(&c->deadline_ns, deadline_ns, memory_order_relaxed);
}

#endif
