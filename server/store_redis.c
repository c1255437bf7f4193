/* store_redis.c - meshes in Redis, shared by replicas: connections, atomic
 * versioned writes by Lua script, and the watcher that subscribes and
 * reconnects (contracts and key layout in store_redis.h; applying what Redis
 * holds is store_redis_sync.c). */
#include "store_redis.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "log.h"
#include "mesh.h"
#include "metrics.h"
#include "persist.h"
#include "store.h"
#include "store_backend.h"
#include "store_redis_impl.h"
#include "store_versions.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define PING_EVERY_MS 2000
/* A write (PUT, DELETE) waits this long for Redis before its 503: a hung
 * server once held each write for two 30-second command timeouts. Any
 * progress within it continues a large upload. */
#define WRITE_TIMEOUT_S 10
/* A write queued behind another waits this long for its turn before its
 * 503: each waiting write holds an HTTP worker thread, and with a slow
 * Redis (a write taking its whole timeout) two writes on a two-thread
 * replica left none for queries for 10 s and more. */
#define WRITE_QUEUE_MS 1000

/* KEYS: seq, mesh key, names, epoch; ARGV: name, blob, channel, max meshes (0:
 * none). {the new version, 1 when the store held the name (a replace)}, or
 * -1 (nothing written) for a new name when the names already number the
 * max: every replica's --max-meshes holds for the store they share, and
 * 201 or 200 is what the write was there, decided where the writes are
 * ordered. */
static const char put_lua[] =
	EPOCH_LUA(4)
	"local max = tonumber(ARGV[4])\n"
	"local had = redis.call('SISMEMBER', KEYS[3], ARGV[1])\n"
	"if max > 0 and had == 0 and redis.call('SCARD', KEYS[3]) >= max then return -1 end\n"
	"if had == 0 then had = redis.call('EXISTS', KEYS[2]) end\n"
	"local v = redis.call('INCR', KEYS[1])\n"
	"redis.call('HSET', KEYS[2], 'v', v, 'd', ARGV[2])\n"
	"redis.call('SADD', KEYS[3], ARGV[1])\n"
	"redis.call('PUBLISH', ARGV[3], 'p ' .. v .. ' ' .. ARGV[1])\n"
	"return {v, had}\n";
/* KEYS: seq, mesh key, names, epoch; ARGV: name, channel. The delete's version,
 * or -2 (nothing done) when Redis holds no such name: a replica decides a
 * DELETE by what the store holds, not by what it has applied so far. */
static const char del_lua[] =
	EPOCH_LUA(4)
	"if redis.call('SREM', KEYS[3], ARGV[1]) == 0 and\n"
	"   redis.call('EXISTS', KEYS[2]) == 0 then return -2 end\n"
	"local v = redis.call('INCR', KEYS[1])\n"
	"redis.call('DEL', KEYS[2])\n"
	"redis.call('SREM', KEYS[3], ARGV[1])\n"
	"redis.call('PUBLISH', ARGV[2], 'd ' .. v .. ' ' .. ARGV[1])\n"
	"return v\n";

static void set_state(struct store_backend *b, int up)
{
	struct store_redis *r = b->impl;

	atomic_store(&r->up, up);
	if (b->metrics)
		atomic_store(&b->metrics->store_state, up ? 2 : 1);
}

/* An error that retrying cannot mend: a wrong password or user, one with
 * no right to this, a database that does not exist. Anything else (a
 * script past its time limit, the data set loading, all client slots
 * taken, ...) is waited out, as a Redis that is not up is. */
static int reply_refusal(const redisReply *rep)
{
	static const char *const permanent[] = {
		"WRONGPASS", "NOAUTH", "NOPERM", "ERR invalid password", "ERR AUTH",
		"ERR Client sent AUTH", "ERR DB index", "ERR invalid DB index",
	};

	for (size_t i = 0; i < sizeof(permanent) / sizeof(permanent[0]); i++)
		if (strncmp(rep->str, permanent[i], strlen(permanent[i])) == 0)
			return 1;
	return 0;
}

redisContext *store_redis_connect(struct store_redis *r, char *why, size_t len, int *refused)
{
	struct timeval connect_tv = { 1, 0 }, cmd_tv = { 30, 0 };
	redisContext *c;
	redisReply *rep;

	c = redisConnectWithTimeout(r->url.host, (int)r->url.port, connect_tv);
	if (!c || c->err) {
		snprintf(why, len, "%s", c ? c->errstr : "out of memory");
		redisFree(c);
		return NULL;
	}
	redisSetTimeout(c, cmd_tv);
	if (r->url.password[0]) {
		rep = r->url.user[0] ?
			redisCommand(c, "AUTH %s %s", r->url.user, r->url.password) :
			redisCommand(c, "AUTH %s", r->url.password);
		if (!rep || rep->type == REDIS_REPLY_ERROR) {
			snprintf(why, len, "AUTH: %s", rep ? rep->str : c->errstr);
			goto out_fail;
		}
		freeReplyObject(rep);
	}
	if (r->url.db) {
		rep = redisCommand(c, "SELECT %u", r->url.db);
		if (!rep || rep->type == REDIS_REPLY_ERROR) {
			snprintf(why, len, "SELECT %u: %s", r->url.db, rep ? rep->str : c->errstr);
			goto out_fail;
		}
		freeReplyObject(rep);
	}
	return c;

out_fail:
	if (refused && rep && rep->type == REDIS_REPLY_ERROR && reply_refusal(rep))
		*refused = 1;
	if (rep)
		freeReplyObject(rep);
	redisFree(c);
	return NULL;
}

/* Run a write script on the writers' connection (reconnecting once, since a
 * put or delete may be repeated): its version, or 0 when Redis cannot be
 * reached or refused, or the write before it still runs after
 * WRITE_QUEUE_MS (logged), or when the script answered a refusal of its
 * own, -1 or -2 (then in *refused, not logged). had: NULL for a script that
 * answers the version alone, else one that answers {version, flag}: the
 * flag (0 or 1) in *had. */
static uint64_t run_script(struct store_backend *b, const char *name, int argc,
			   const char **argv, const size_t *lens, int *refused, int *had)
{
	struct store_redis *r = b->impl;
	redisReply *rep = NULL;
	uint64_t v = 0;
	char why[160] = "";
	int attempt;
	struct timespec until = deadline_in_ms(CLOCK_REALTIME, WRITE_QUEUE_MS);

	if (pthread_mutex_timedlock(&r->wlock, &until)) {
		if (b->log)
			log_msg(b->log, LOG_WARN,
				"store: write of %s to %s not started: the write before it has taken over %d ms",
				name, r->where, WRITE_QUEUE_MS);
		return 0;
	}
	for (attempt = 0; attempt < 2 && !rep; attempt++) {
		int timed_out;

		if (!r->wconn) {
			r->wconn = store_redis_connect(r, why, sizeof(why), NULL);
			if (r->wconn)
				redisSetTimeout(r->wconn, (struct timeval){ WRITE_TIMEOUT_S, 0 });
		}
		if (!r->wconn)
			break;
		errno = 0;
		rep = redisCommandArgv(r->wconn, argc, argv, lens);
		if (!rep) {
			timed_out = r->wconn->err == REDIS_ERR_IO &&
				    (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT);
			snprintf(why, sizeof(why), "%s", timed_out ? "no answer within the write timeout" :
				 r->wconn->errstr);
			redisFree(r->wconn);
			r->wconn = NULL;
			/* a connection that broke is tried again at once; a server
			 * that does not answer is not waited for twice */
			if (timed_out)
				break;
		}
	}
	if (had && rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
	    rep->element[0]->type == REDIS_REPLY_INTEGER && rep->element[0]->integer > 0 &&
	    rep->element[1]->type == REDIS_REPLY_INTEGER) {
		v = (uint64_t)rep->element[0]->integer;
		*had = rep->element[1]->integer != 0;
	} else if (!had && rep && rep->type == REDIS_REPLY_INTEGER && rep->integer > 0)
		v = (uint64_t)rep->integer;
	else if (rep && rep->type == REDIS_REPLY_INTEGER && (rep->integer == -1 || rep->integer == -2))
		*refused = (int)rep->integer;
	else if (rep)
		snprintf(why, sizeof(why), "%s", rep->type == REDIS_REPLY_ERROR ? rep->str :
				 "unexpected reply");
	pthread_mutex_unlock(&r->wlock);
	if (rep)
		freeReplyObject(rep);
	if (!v && !*refused && b->log)
		log_msg(b->log, LOG_WARN, "store: write of %s to %s failed: %s", name, r->where, why);
	return v;
}

/* version: unused; Redis orders the writes and replicas count their own
 * (README "What is not"). */
static enum sb_result redis_put(struct store_backend *b, const char *name, const float *xyz,
				size_t nvert, const uint32_t *idx, size_t ntri, uint64_t version)
{
	struct store_redis *r = b->impl;
	char key[sizeof(KEY_MESH) + STORE_NAME_MAX];
	const char *argv[11];
	size_t lens[11], len, i;
	char max[24];
	void *blob;
	uint64_t v;
	int refused = 0, had = 0;

	if (!atomic_load(&r->up))
		return SB_UNAVAILABLE;
	if (persist_encode(xyz, nvert, idx, ntri, 0, &blob, &len)) {
		if (b->log)
			log_msg(b->log, LOG_ERROR, "store: cannot encode %s: out of memory", name);
		return SB_FAILED;
	}
	snprintf(key, sizeof(key), KEY_MESH "%s", name);
	argv[0] = "EVAL"; argv[1] = put_lua; argv[2] = "4";
	argv[3] = KEY_SEQ; argv[4] = key; argv[5] = KEY_NAMES; argv[6] = KEY_EPOCH;
	snprintf(max, sizeof(max), "%zu", b->max_meshes);
	argv[7] = name; argv[8] = blob; argv[9] = CHANNEL; argv[10] = max;
	for (i = 0; i < 11; i++)
		lens[i] = i == 8 ? len : strlen(argv[i]);
	v = run_script(b, name, 11, argv, lens, &refused, &had);
	free(blob);
	if (refused == -1)
		return SB_FULL;
	if (!v)
		return SB_UNAVAILABLE;
	store_redis_applied(b, name, v);
	return had ? SB_REPLACED : SB_CREATED;
}

static enum sb_result redis_del(struct store_backend *b, const char *name)
{
	struct store_redis *r = b->impl;
	char key[sizeof(KEY_MESH) + STORE_NAME_MAX];
	const char *argv[9];
	size_t lens[9], i;
	uint64_t v;
	int refused = 0;

	if (!atomic_load(&r->up))
		return SB_UNAVAILABLE;
	snprintf(key, sizeof(key), KEY_MESH "%s", name);
	argv[0] = "EVAL"; argv[1] = del_lua; argv[2] = "4";
	argv[3] = KEY_SEQ; argv[4] = key; argv[5] = KEY_NAMES; argv[6] = KEY_EPOCH;
	argv[7] = name; argv[8] = CHANNEL;
	for (i = 0; i < 9; i++)
		lens[i] = strlen(argv[i]);
	v = run_script(b, name, 9, argv, lens, &refused, NULL);
	if (refused == -2)
		return SB_ABSENT;
	if (!v)
		return SB_UNAVAILABLE;
	store_redis_applied(b, name, v);
	return SB_OK;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Apply events until a connection error (-1), cancel (0) or Redis found
 * emptied behind the replicas' backs (1: resync; no connection breaks,
 * no event says so). */
static int listen_events(struct store_backend *b, redisContext *sub, redisContext *sync)
{
	double last_ping = now_ms();

	for (;;) {
		struct pollfd pfd = { sub->fd, POLLIN, 0 };
		void *reply = NULL;
		int k;

		if (redisGetReplyFromReader(sub, &reply) != REDIS_OK)
			return -1;
		if (reply) {
			k = store_redis_event(b, sync, reply);
			freeReplyObject(reply);
			if (k)
				return -1;
			continue;
		}
		if (atomic_load(&b->cancel))
			return 0;
		k = poll(&pfd, 1, 200);
		if (k < 0 && errno != EINTR)
			return -1;
		if (k > 0 && redisBufferRead(sub) != REDIS_OK)
			return -1;
		if (now_ms() - last_ping > PING_EVERY_MS) {
			k = store_redis_check_epoch(b, sync);
			if (k)
				return k;
			if (store_redis_retry_skipped(b, sync))
				return -1;
			last_ping = now_ms();
		}
	}
}

/* Resync on sync (t0: when it began): up and ready once done, logged as
 * what; 0, or -1 when it failed. */
static int resynced(struct store_backend *b, redisContext *sync, double t0, const char *what)
{
	struct store_redis *r = b->impl;
	size_t loaded, dropped;

	if (store_redis_resync(b, sync, &loaded, &dropped))
		return -1;
	/* the fetched blobs are freed: give their pages back */
	malloc_trim(0);
	set_state(b, 1);
	if (b->metrics)
		atomic_fetch_add(&b->metrics->store_resyncs, 1);
	if (b->ready)
		atomic_store(b->ready, 1);
	if (b->log)
		log_msg(b->log, LOG_INFO,
			"store: %s %s; resync fetched %zu meshes, dropped %zu, in %.0f ms",
			r->where, what, loaded, dropped, now_ms() - t0);
	return 0;
}

static void *watch_main(void *arg)
{
	struct store_backend *b = arg;
	struct store_redis *r = b->impl;
	unsigned backoff = BACKOFF_MIN_MS;
	redisContext *sub, *sync;
	redisReply *rep;
	char why[160];
	int logged_down = 0, loaded_once = 0, refused, k;
	double t0;

	while (!atomic_load(&b->cancel)) {
		t0 = now_ms();
		why[0] = '\0';
		refused = 0;
		sub = store_redis_connect(r, why, sizeof(why), &refused);
		sync = sub ? store_redis_connect(r, why, sizeof(why), &refused) : NULL;
		rep = sync ? redisCommand(sub, "SUBSCRIBE " CHANNEL) : NULL;
		if (rep && rep->type == REDIS_REPLY_ARRAY) {
			if (resynced(b, sync, t0, "connected and subscribed") == 0) {
				logged_down = 0;
				loaded_once = 1;
				backoff = BACKOFF_MIN_MS;
				/* emptied behind the replicas' backs (FLUSHALL): the
				 * connections hold and Redis is up: resync on them,
				 * writes answered all along */
				while ((k = listen_events(b, sub, sync)) == 1 &&
				       resynced(b, sync, now_ms(), "emptied (another epoch)") == 0)
					;
				if (k == 0)
					snprintf(why, sizeof(why), "stopping");
				else
					snprintf(why, sizeof(why), "%s", sub->err ? sub->errstr :
						 sync->err ? sync->errstr :
						 k == 1 ? "resync failed" : "connection lost");
			} else if (!why[0]) {
				snprintf(why, sizeof(why), "resync failed: %s",
					 sync->err ? sync->errstr : "unexpected reply");
			}
		} else if (rep && rep->type == REDIS_REPLY_ERROR) {
			/* with no password, a Redis that wants one says so here */
			snprintf(why, sizeof(why), "SUBSCRIBE: %s", rep->str);
			refused = reply_refusal(rep);
		} else if (sub && !why[0]) {
			snprintf(why, sizeof(why), "SUBSCRIBE: %s", sub->errstr[0] ? sub->errstr :
				 "refused");
		}
		if (rep)
			freeReplyObject(rep);
		redisFree(sub);
		redisFree(sync);
		set_state(b, 0);
		if (atomic_load(&b->cancel))
			break;
		/* Redis is up and refuses the URL's settings: at start-up that is a
		 * mistake in them, which an operator must see and fix (it was one
		 * warn line, none at --log-level error, and /readyz 503 for
		 * ever). Later (a password changed while serving) the replica
		 * goes on answering queries from memory, and waits. */
		if (refused && !loaded_once) {
			if (b->log)
				log_msg(b->log, LOG_ERROR,
					"%s: %s refused (%s); exiting: a wrong password, user or database is not retried at start-up",
					r->who, r->where, why);
			store_backend_fail(b);
			break;
		}
		if (!logged_down && b->log)
			log_msg(b->log, LOG_WARN,
				"store: %s unavailable (%s); queries answer from memory, writes get 503 store_unavailable; reconnecting with backoff",
				r->where, why);
		logged_down = 1;
		store_backend_sleep(b, backoff);
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
	}
	return NULL;
}

static int redis_start(struct store_backend *b)
{
	struct store_redis *r = b->impl;

	if (pthread_create(&r->watcher, NULL, watch_main, b) != 0)
		return -1;
	r->watcher_running = 1;
	return 0;
}

static void redis_close(struct store_backend *b)
{
	struct store_redis *r = b->impl;

	if (!r)
		return;
	if (r->watcher_running)
		pthread_join(r->watcher, NULL);
	redisFree(r->wconn);
	pthread_mutex_destroy(&r->wlock);
	pthread_mutex_destroy(&r->skip_lock);
	free(r->skipped);
	store_versions_release(&r->versions);
	free(r);
}

static const struct store_backend_ops redis_ops = {
	.kind = "redis",
	.put = redis_put,
	.del = redis_del,
	.start = redis_start,
	.close = redis_close,
};

int store_redis_open(struct store_backend *b, const char *url, const char *password,
		     const char *who, char *err, size_t errlen)
{
	struct store_redis *r;
	char why[160];

	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "%s: out of memory", who);
		return -1;
	}
	if (store_redis_parse_url(url, password, &r->url, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", who, why);
		free(r);
		return -1;
	}
	if (pthread_mutex_init(&r->wlock, NULL)) {
		free(r);
		snprintf(err, errlen, "%s: out of resources", who);
		return -1;
	}
	if (pthread_mutex_init(&r->skip_lock, NULL)) {
		pthread_mutex_destroy(&r->wlock);
		free(r);
		snprintf(err, errlen, "%s: out of resources", who);
		return -1;
	}
	if (store_versions_init(&r->versions)) {
		pthread_mutex_destroy(&r->wlock);
		pthread_mutex_destroy(&r->skip_lock);
		free(r);
		snprintf(err, errlen, "%s: out of resources", who);
		return -1;
	}
	r->who = who;
	snprintf(r->where, sizeof(r->where), strchr(r->url.host, ':') ? "redis://[%s]:%u/%u" :
		 "redis://%s:%u/%u", r->url.host, r->url.port, r->url.db);
	atomic_init(&r->up, 0);
	b->impl = r;
	b->ops = &redis_ops;
	if (b->metrics)
		atomic_store(&b->metrics->store_state, 1);
	return 0;
}
