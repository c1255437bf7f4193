/* store_redis_sync.c - bring a replica's memory up to Redis: fetch, build
 * aside and swap in newer versions (a resync with one worker per CPU, or one
 * pub/sub event), drop deleted names (store_redis_impl.h). */
#include <hiredis/hiredis.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus.h"
#include "log.h"
#include "membudget.h"
#include "mesh.h"
#include "metrics.h"
#include "persist.h"
#include "store.h"
#include "store_backend.h"
#include "store_redis_impl.h"
#include "store_versions.h"

#define FETCH_WORKERS 8		/* most threads building at a resync */

/* KEYS: seq, names, epoch. {seq, names, epoch} read atomically (the epoch
 * created when missing). */
static const char snapshot_lua[] =
	EPOCH_LUA(3)
	"return {redis.call('GET', KEYS[1]) or '0', redis.call('SMEMBERS', KEYS[2]), "
	"redis.call('GET', KEYS[3])}\n";

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 19)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* The metric of how many are skipped (called under skip_lock). */
static void skipped_gauge(struct store_backend *b, size_t n)
{
	if (b->metrics)
		atomic_store(&b->metrics->store_skipped, n);
}

/* Remember name as refused for the memory budget (once: a refusal again
 * updates it), with how much was held then and need. Out of memory for the
 * list: the next resync fetches it. */
static void skip(struct store_backend *b, const char *name, size_t need)
{
	struct store_redis *r = b->impl;
	size_t i;

	pthread_mutex_lock(&r->skip_lock);
	for (i = 0; i < r->nskipped && strcmp(r->skipped[i].name, name); i++)
		;
	if (i == r->nskipped) {
		if (r->nskipped == r->skip_cap) {
			size_t cap = r->skip_cap ? 2 * r->skip_cap : 8;
			void *p = realloc(r->skipped, cap * sizeof(*r->skipped));

			if (!p)
				goto out;
			r->skipped = p;
			r->skip_cap = cap;
		}
		snprintf(r->skipped[r->nskipped++].name, sizeof(r->skipped[0].name), "%s", name);
	}
	r->skipped[i].held = membudget_held();
	r->skipped[i].need = need;
out:
	skipped_gauge(b, r->nskipped);
	pthread_mutex_unlock(&r->skip_lock);
}

/* name is skipped no more (applied here, or gone from Redis): the next
 * retry must not fetch it, collisiond_store_meshes_skipped not count it. */
static void store_redis_unskip(struct store_backend *b, const char *name)
{
	struct store_redis *r = b->impl;
	size_t i;

	pthread_mutex_lock(&r->skip_lock);
	for (i = 0; i < r->nskipped; i++) {
		if (strcmp(r->skipped[i].name, name) == 0) {
			if (i != --r->nskipped)
				r->skipped[i] = r->skipped[r->nskipped];
			skipped_gauge(b, r->nskipped);
			break;
		}
	}
	pthread_mutex_unlock(&r->skip_lock);
}

void store_redis_applied(struct store_backend *b, const char *name, uint64_t v)
{
	store_versions_set(&((struct store_redis *)b->impl)->versions, name, v);
	store_redis_unskip(b, name);
}

/*
 * Fetch name from Redis on c and swap it in when its version is newer than
 * the one applied here. 0 when done (also when skipped: gone, not newer,
 * not buildable), -1 on a connection error.
 */
static int apply_put(struct store_backend *b, redisContext *c, const char *name)
{
	struct store_redis *r = b->impl;
	redisReply *rep;
	float *xyz;
	uint32_t *idx;
	size_t nvert, ntri;
	uint64_t v;
	struct mesh *m;
	enum core_result built;
	char err[160];
	int rc = 0;

	rep = redisCommand(c, "HMGET " KEY_MESH "%s v d", name);
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "WRONGTYPE", 9) != 0) {
		/* not an answer about the mesh (every client slot taken, a
		 * script past its time limit, a command refused, ...): skipping
		 * it left the name out of a resync that said it was done, or
		 * an event unapplied, until the name's next write. WRONGTYPE is
		 * an answer: no mesh of ours there (skipped, as a bad blob is) */
		if (b->log)
			log_msg(b->log, LOG_WARN, "store: fetching %s from %s: %s", name, r->where,
				rep->str);
		rc = -1;
		goto out_free;
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
	    rep->element[0]->type != REDIS_REPLY_STRING ||
	    rep->element[1]->type != REDIS_REPLY_STRING) {
		/* deleted since: its event follows, but a skipped name gone
		 * from Redis (its event missed) is skipped no more */
		store_redis_unskip(b, name);
		goto out_free;
	}
	if (parse_u64(rep->element[0]->str, rep->element[0]->len, &v) ||
	    v <= store_versions_get(&r->versions, name, NULL))
		goto out_free;
	if (persist_decode(rep->element[1]->str, rep->element[1]->len, b->max_triangles, &xyz,
			   &nvert, &idx, &ntri, NULL, err, sizeof(err))) {
		if (b->log)
			log_msg(b->log, LOG_WARN, "store: skipping %s (%s): %s", name, r->where, err);
		goto out_free;
	}
	freeReplyObject(rep);
	rep = NULL;
	built = store_backend_build(b, name, r->where, xyz, nvert, idx, ntri, &m);
	free(xyz);
	free(idx);
	if (built == CORE_ENOSPACE)
		skip(b, name, 3 * sizeof(float) * nvert + 3 * sizeof(uint32_t) * ntri);
	if (built != CORE_OK)
		return 0;
	store_backend_lock(b, name);
	if (v > store_versions_get(&r->versions, name, NULL)) {
		/* refused here (--max-meshes, memory): not recorded, so the next
		 * resync fetches it again */
		if (store_backend_swap(b, name, r->where, m, 0)) {
			store_redis_applied(b, name, v);
		}
	} else {
		mesh_unref(m);
	}
	store_backend_unlock(b, name);
	return 0;

out_free:
	freeReplyObject(rep);
	return rc;
}

/* A delete at version v: drop name unless something newer is here. */
static void apply_delete(struct store_backend *b, const char *name, uint64_t v)
{
	struct store_redis *r = b->impl;

	store_backend_lock(b, name);
	if (v > store_versions_get(&r->versions, name, NULL)) {
		store_delete(b->store, name);
		store_redis_applied(b, name, v);
	}
	store_backend_unlock(b, name);
}

static int cmp_str(const void *a, const void *c)
{
	return strcmp(*(char *const *)a, *(char *const *)c);
}

/* Meshes to fetch and build at a resync, shared by the fetch workers. */
struct fetch_job {
	struct store_backend *b;
	char **names;
	size_t n;
	atomic_size_t next;
	atomic_int failed;
};

/* One fetch worker: its own connection, names taken in turn. */
static void *fetch_worker(void *arg)
{
	struct fetch_job *j = arg;
	struct store_redis *r = j->b->impl;
	redisContext *c;
	char why[160];
	size_t i;

	c = store_redis_connect(r, why, sizeof(why), NULL);
	if (!c) {
		atomic_store(&j->failed, 1);
		return NULL;
	}
	while ((i = atomic_fetch_add(&j->next, 1)) < j->n && !atomic_load(&j->failed) &&
	       !atomic_load(&j->b->cancel)) {
		if (apply_put(j->b, c, j->names[i]))
			atomic_store(&j->failed, 1);
	}
	redisFree(c);
	return NULL;
}

/* Fetch, build and swap in names[0..n): on c alone, or with one worker per
 * CPU (up to FETCH_WORKERS), since building is what a big resync spends its
 * time on. 0, or -1 on a connection error or cancel. */
static int fetch_all(struct store_backend *b, redisContext *c, char **names, size_t n)
{
	struct fetch_job j = { b, names, n, 0, 0 };
	pthread_t t[FETCH_WORKERS];
	size_t w = cpus_usable(), started = 0, i;

	if (w > FETCH_WORKERS)
		w = FETCH_WORKERS;
	if (w > n)
		w = n;
	if (w <= 1) {
		for (i = 0; i < n; i++)
			if (atomic_load(&b->cancel) || apply_put(b, c, names[i]))
				return -1;
		return 0;
	}
	for (i = 0; i < w; i++)
		if (pthread_create(&t[started], NULL, fetch_worker, &j) == 0)
			started++;
	if (!started)
		fetch_worker(&j);
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	return atomic_load(&j.failed) || atomic_load(&b->cancel) ? -1 : 0;
}

/* Skipped names that Redis no longer holds (sorted[0..n), its names at a
 * resync) are skipped no more: a delete whose event was missed would keep
 * them listed, and counted, for good. */
static void unskip_gone(struct store_backend *b, char **sorted, size_t n)
{
	struct store_redis *r = b->impl;
	size_t i = 0;

	pthread_mutex_lock(&r->skip_lock);
	while (i < r->nskipped) {
		const char *key = r->skipped[i].name;

		if (bsearch(&key, sorted, n, sizeof(*sorted), cmp_str)) {
			i++;
			continue;
		}
		r->skipped[i] = r->skipped[--r->nskipped];
	}
	skipped_gauge(b, r->nskipped);
	pthread_mutex_unlock(&r->skip_lock);
}

int store_redis_resync(struct store_backend *b, redisContext *c, size_t *loaded, size_t *dropped)
{
	struct store_redis *r = b->impl;
	redisReply *snap, *names, *rep;
	struct store_entry *e = NULL;
	char **sorted = NULL, **todo = NULL;
	const char *epoch;
	uint64_t seq, v;
	size_t i, n = 0, ntodo = 0;
	int rc = -1, known, reset;

	*loaded = *dropped = 0;
	snap = redisCommand(c, "EVAL %s 3 %s %s %s", snapshot_lua, KEY_SEQ, KEY_NAMES, KEY_EPOCH);
	if (!snap || snap->type != REDIS_REPLY_ARRAY || snap->elements != 3 ||
	    snap->element[0]->type != REDIS_REPLY_STRING ||
	    snap->element[1]->type != REDIS_REPLY_ARRAY ||
	    snap->element[2]->type != REDIS_REPLY_STRING ||
	    snap->element[2]->len >= sizeof(r->epoch) ||
	    parse_u64(snap->element[0]->str, snap->element[0]->len, &seq))
		goto out_free;
	epoch = snap->element[2]->str;
	/* Redis went back (restarted from an older snapshot or empty, failed
	 * over to a replica behind): the versions applied here name writes it
	 * no longer has, and later writes would reuse their numbers and be
	 * ignored. Start over from what Redis holds: every name fetched, every
	 * name it lacks dropped. Emptied (FLUSHALL, restarted without
	 * persistence), it has another epoch, whatever its sequence has
	 * climbed back to since. A reset stays pending until a resync is done. */
	if (seq < store_versions_max(&r->versions) || (r->epoch[0] && strcmp(epoch, r->epoch))) {
		if (b->log && seq < store_versions_max(&r->versions))
			log_msg(b->log, LOG_WARN,
				"store: %s went back (its sequence %llu is below the %llu applied here): resyncing every mesh",
				r->where, (unsigned long long)seq,
				(unsigned long long)store_versions_max(&r->versions));
		else if (b->log)
			log_msg(b->log, LOG_WARN,
				"store: %s went back (emptied: its epoch is not the last resync's): resyncing every mesh",
				r->where);
		store_versions_clear(&r->versions);
		r->reset_pending = 1;
	}
	reset = r->reset_pending;
	names = snap->element[1];
	sorted = calloc(names->elements + 1, sizeof(*sorted));
	todo = calloc(names->elements + 1, sizeof(*todo));
	if (!sorted || !todo)
		goto out_free;
	for (i = 0; i < names->elements; i++) {
		const char *name = names->element[i]->str;

		if (atomic_load(&b->cancel))
			goto out_free;
		if (names->element[i]->type != REDIS_REPLY_STRING || !store_name_valid(name))
			continue;
		sorted[n++] = names->element[i]->str;
		rep = redisCommand(c, "HGET " KEY_MESH "%s v", name);
		if (!rep)
			goto out_free;
		if (rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "WRONGTYPE", 9) != 0) {
			/* not "no version": fail, and retry */
			freeReplyObject(rep);
			goto out_free;
		}
		v = 0;
		if (rep->type == REDIS_REPLY_STRING)
			parse_u64(rep->str, rep->len, &v);
		freeReplyObject(rep);
		if (v > store_versions_get(&r->versions, name, NULL))
			todo[ntodo++] = names->element[i]->str;
	}
	if (fetch_all(b, c, todo, ntodo))
		goto out_free;
	*loaded = ntodo;
	/* names applied from Redis earlier and gone from it at seq: deleted */
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	unskip_gone(b, sorted, n);
	if (store_list(b->store, &e, &i) == CORE_OK) {
		size_t k, ne = i;

		for (k = 0; k < ne; k++) {
			const char *key = e[k].name;

			if (bsearch(&key, sorted, n, sizeof(*sorted), cmp_str))
				continue;
			v = store_versions_get(&r->versions, e[k].name, &known);
			if (reset && !known) {
				/* not in Redis, not written since the reset began */
				store_backend_lock(b, e[k].name);
				if (!store_versions_get(&r->versions, e[k].name, NULL))
					store_delete(b->store, e[k].name);
				store_backend_unlock(b, e[k].name);
				(*dropped)++;
			} else if (known && v <= seq) {
				apply_delete(b, e[k].name, seq);
				(*dropped)++;
			}
		}
		store_list_free(e, ne);
	}
	snprintf(r->epoch, sizeof(r->epoch), "%s", epoch);
	r->reset_pending = 0;
	rc = 0;
out_free:
	free(sorted);
	free(todo);
	if (snap)
		freeReplyObject(snap);
	return rc;
}

int store_redis_check_epoch(struct store_backend *b, redisContext *c)
{
	struct store_redis *r = b->impl;
	redisReply *rep;
	int rc;

	rep = redisCommand(c, "GET " KEY_EPOCH);
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_STRING)
		rc = strcmp(rep->str, r->epoch) != 0;
	else
		rc = rep->type == REDIS_REPLY_NIL ? 1 : 0;	/* an error: not an answer */
	freeReplyObject(rep);
	return rc;
}

int store_redis_event(struct store_backend *b, redisContext *sync, redisReply *msg)
{
	const char *p, *sp;
	char name[STORE_NAME_MAX + 1];
	uint64_t v;
	size_t nl;

	if (msg->type != REDIS_REPLY_ARRAY || msg->elements != 3 ||
	    msg->element[0]->type != REDIS_REPLY_STRING ||
	    msg->element[2]->type != REDIS_REPLY_STRING ||
	    strcmp(msg->element[0]->str, "message") != 0)
		return 0;
	p = msg->element[2]->str;
	if ((p[0] != 'p' && p[0] != 'd') || p[1] != ' ' || !(sp = strchr(p + 2, ' ')))
		return 0;
	nl = strlen(sp + 1);
	if (parse_u64(p + 2, (size_t)(sp - p - 2), &v) || nl > STORE_NAME_MAX)
		return 0;
	memcpy(name, sp + 1, nl + 1);
	if (!store_name_valid(name))
		return 0;
	if (p[0] == 'd') {
		apply_delete(b, name, v);
		return 0;
	}
	if (v <= store_versions_get(&((struct store_redis *)b->impl)->versions, name, NULL))
		return 0;	/* our own write, or older than what is here */
	return apply_put(b, sync, name);
}

int store_redis_retry_skipped(struct store_backend *b, redisContext *c)
{
	struct store_redis *r = b->impl;
	char (*names)[STORE_NAME_MAX + 1] = NULL;
	size_t n = 0, i;
	int rc = 0;

	/* the names that might fit now; they stay listed (and counted) until
	 * applied, or are refused again with the level of now */
	pthread_mutex_lock(&r->skip_lock);
	for (i = 0; i < r->nskipped; i++) {
		const struct skipped_mesh *e = &r->skipped[i];

		if (membudget_held() >= e->held || !membudget_fits(e->need))
			continue;
		if (!names && !(names = malloc(r->nskipped * sizeof(*names))))
			break;
		memcpy(names[n++], e->name, sizeof(names[0]));
	}
	pthread_mutex_unlock(&r->skip_lock);
	if (!n)
		return 0;
	if (b->log)
		log_msg(b->log, LOG_INFO,
			"store: memory freed: fetching %zu meshes skipped for --max-memory again", n);
	for (i = 0; i < n && !atomic_load(&b->cancel); i++)
		if (apply_put(b, c, names[i])) {
			rc = -1;	/* the rest stay listed for the next retry */
			break;
		}
	free(names);
	return rc;
}
