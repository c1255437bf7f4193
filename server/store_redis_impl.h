/* store_redis_impl.h - what store_redis.c and store_redis_sync.c share
 * (internal to the Redis backend; the contract is store_redis.h). */
#ifndef SERVER_STORE_REDIS_IMPL_H
#define SERVER_STORE_REDIS_IMPL_H

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "store.h"
#include "store_redis.h"
#include "store_versions.h"

struct store_backend;

#define KEY_SEQ "collisiond:seq"
#define KEY_NAMES "collisiond:names"
#define KEY_MESH "collisiond:mesh:"
#define CHANNEL "collisiond:events"
/* Which history of the store: set (from Redis's clock) by the first script
 * that finds it missing, so a Redis emptied (FLUSHALL, restarted without
 * persistence) has another one as soon as anything reads or writes it. */
#define KEY_EPOCH "collisiond:epoch"
/* Lua: create KEYS[n]'s epoch when missing (n the key's index). */
#define EPOCH_LUA(n) \
	"if redis.call('EXISTS', KEYS[" #n "]) == 0 then local t = redis.call('TIME') " \
	"redis.call('SET', KEYS[" #n "], t[1] .. '.' .. t[2]) end\n"

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
	/* the watcher's: the epoch of the last resync done ("" before the
	 * first), and a reset decided but not yet done (a resync that failed
	 * half way must not forget it) */
	char epoch[64];
	int reset_pending;

	/* Names whose newer version in Redis this replica had no room for
	 * (--max-memory; its worlds share the budget): fetched again by the
	 * watcher once it might fit, not only at the next resync. */
	pthread_mutex_t skip_lock;
	struct skipped_mesh *skipped;
	size_t nskipped, skip_cap;
};

/* A mesh refused for the memory budget, and when to try it again: less
 * held than at its refusal, and room for at least need (a lower bound on
 * what it takes: its vertices and indices), so that a world's snapshots
 * going up and down by a few hundred KiB do not fetch and build a mesh of
 * 100 MiB every 2 s. */
struct skipped_mesh {
	char name[STORE_NAME_MAX + 1];
	size_t held, need;
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

/* What listen_events checks every PING_EVERY_MS on c: 0 while Redis holds
 * the epoch of the last resync, 1 when it holds another or none (emptied
 * behind the replicas' backs: resync), -1 on a connection error. */
int store_redis_check_epoch(struct store_backend *b, redisContext *c);

/* Fetch the skipped names again when memory was freed since (every
 * PING_EVERY_MS, from listen_events): 0, or -1 on a connection error (the
 * names not tried stay skipped). */
int store_redis_retry_skipped(struct store_backend *b, redisContext *c);

/* Version v of name is applied here (written through this replica, fetched
 * or deleted): recorded, and the name skipped no more. Every such place
 * calls this, so that none records one without the other. */
void store_redis_applied(struct store_backend *b, const char *name, uint64_t v);

/* Apply one pub/sub message ("p V NAME" or "d V NAME"; anything else is
 * ignored), fetching on sync. -1 on a connection error. */
int store_redis_event(struct store_backend *b, redisContext *sync, redisReply *msg);

#endif
