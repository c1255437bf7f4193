/* store_redis.h - the Redis backend: meshes shared by many replicas.
 *
 * Keys (prefix "collisiond:"):
 *   collisiond:seq          a counter: every write takes the next value
 *   collisiond:mesh:NAME    hash {v: version, d: the mesh in persist.h's form}
 *   collisiond:names        set of stored names
 *   collisiond:events       pub/sub channel: "p VERSION NAME" / "d VERSION NAME"
 *   collisiond:epoch        which history: set from Redis's clock by the first
 *                           script that finds it missing (Redis emptied)
 *
 * A put or delete is one Lua script, so Redis applies it atomically: it takes
 * the next version, writes (or removes) the mesh, and publishes the event.
 * The api acknowledges only after the script's reply. Every replica keeps the
 * last version it applied per name (deletes included) and swaps a mesh in
 * only when its version is newer, under the name's lock (store_backend.h):
 * a compare-and-set on versions, so concurrent writers on two replicas end
 * with the highest version everywhere, whatever order events arrive in.
 *
 * One watcher thread connects, subscribes, then resyncs fully (every stored
 * name whose version is newer is fetched, built aside and swapped in; names
 * deleted meanwhile are dropped), sets *ready and applies events. On any
 * connection error it marks the store down (writes answer 503
 * store_unavailable, queries go on from memory), logs once, and reconnects
 * with backoff (100 ms doubling to 5 s), resyncing again: a missed event
 * never leaves a replica stale. Every 2 s it checks the epoch: another one
 * (Redis emptied behind its back, FLUSHALL) is resynced from scratch too.
 * Metrics: collisiond_store_up and collisiond_store_resyncs_total. Before
 * the first resync, a Redis that
 * answers AUTH or SELECT with an error (or NOAUTH: no password given) is
 * not retried: the watcher logs it at error level and calls
 * store_backend_fail (the daemon exits 2). A Redis not up yet is waited for.
 */
#ifndef SERVER_STORE_REDIS_H
#define SERVER_STORE_REDIS_H

#include <stddef.h>

struct store_backend;

struct store_redis_url {
	char host[256];		/* without brackets for IPv6 */
	unsigned port;		/* 6379 when not given */
	unsigned db;		/* 0 when not given */
	char user[128];		/* "" = the default user */
	char password[257];	/* "" = no AUTH */
};

/*
 * Parse redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (HOST may be [IPv6]).
 * The credentials end at the last '@' before the path and are
 * percent-decoded (%XX; a malformed '%' is refused); a query or fragment
 * (a raw '?' or '#') and rediss:// (TLS) are refused. password, when not
 * NULL, replaces the URL's, as given (not decoded). 0, or -1 with err
 * saying what is wrong (no part of the URL is ever copied into err).
 */
int store_redis_parse_url(const char *url, const char *password, struct store_redis_url *out,
			  char *err, size_t errlen);

/* Back b (store_backend_init'ed) with the Redis at url. who names where
 * url came from in messages ("--store", or "COLLISIOND_STORE (--store)";
 * borrowed for b's life). Nothing connects until store_backend_start. 0, or
 * -1 with err starting with who. */
int store_redis_open(struct store_backend *b, const char *url, const char *password,
		     const char *who, char *err, size_t errlen);

#endif
