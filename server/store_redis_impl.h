/* store_redis_impl.h - what store_redis.c and store_redis_sync.c share
 * (internal to the Redis backend; the contract is store_redis.h). */
#ifndef SERVER_STORE_REDIS_IMPL_H
#define SERVER_STORE_REDIS_IMPL_H

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "store_redis.h"
#include "store_versions.h"

struct store_backend;

#define KEY_SEQ "collisiond:seq"
#define KEY_NAMES "collisiond:names"
#define KEY_MESH "collisiond:mesh:"
#define CHANNEL "collisiond:events"

struct store_redis {
	struct store_redis_url url;
	char where[300];		/* redis://HOST:PORT/DB, for logs */
	const char *who;		/* what gave the URL ("--store"), borrowed */
	pthread_t watcher;
	int watcher_running;
	atomic_int up;

	pthread_mutex_t wlock;		/* guards wconn */
	redisContext *wconn;		/* the writers' connection */

	struct store_versions versions;	/* name -> last version applied here */
};

/* Connect, authenticate, select the database. NULL with why filled, and
 * *refused (when not NULL) set to 1 if Redis answered AUTH or SELECT with
 * an error that waiting will not end (not a connection that failed). */
redisContext *store_redis_connect(struct store_redis *r, char *why, size_t len, int *refused);

/* Bring memory up to Redis on c: newer meshes in (built by up to one worker
 * per CPU, each on its own connection), names deleted since dropped. 0, or
 * -1 on a connection error or cancel. *loaded: meshes fetched, *dropped:
 * names removed. */
int store_redis_resync(struct store_backend *b, redisContext *c, size_t *loaded,
		       size_t *dropped);

/* Apply one pub/sub message ("p V NAME" or "d V NAME"; anything else is
 * ignored), fetching on sync. -1 on a connection error. */
int store_redis_event(struct store_backend *b, redisContext *sync, redisReply *msg);

#endif
