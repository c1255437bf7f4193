/* store_backend.h - where meshes are kept besides memory: one small interface
 * (put, delete, load all, watch for changes) with the data directory
 * (store_dir.c) and Redis (store_redis.c) behind it.
 *
 * The memory store (core/store.h) answers every query; a backend is the
 * durable copy and, for Redis, the channel through which replicas learn of
 * each other's writes. The api calls the hooks below (api_ctx.persist_*):
 *
 *   PUT:    build aside, lock(name), put, store_put, unlock(name)
 *   DELETE: lock(name), exists?, delete, store_delete, unlock(name)
 *
 * Invariant: writes of one name are serialised from the durable write to
 * the swap in memory, so the durable order of a name's writes is the order
 * in which memory saw them, and after any restart the backend equals the
 * last acknowledged state of every name. Loaders and watchers take the same
 * lock to swap. Names hash onto STORE_BACKEND_LOCKS mutexes: two names may
 * share one (they then wait for each other), one name never has two.
 *
 * Ownership: the backend borrows the store, log and metrics (they must
 * outlive it); store_backend_close stops its threads before freeing.
 */
#ifndef SERVER_STORE_BACKEND_H
#define SERVER_STORE_BACKEND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct log;
struct mesh;
struct metrics;
struct store;

#define STORE_BACKEND_LOCKS 64

/* The hooks' results (the values of api.h's API_PERSIST_*). */
enum sb_result {
	SB_OK = 0,
	SB_FAILED = -1,		/* 500: the write failed (logged) */
	SB_UNAVAILABLE = -2,	/* 503 store_unavailable: not written (or, after a write
				 * timeout, not known to be) */
	SB_FULL = -3,		/* 413: a new name, the shared store at max_meshes; nothing written */
	SB_NO_SPACE = -4,	/* 507: no space left on the store's disk; nothing written */
	SB_ABSENT = 1,		/* del: the store held no such name; nothing done */
	/* put, from a store shared by replicas, which decides what the write
	 * was (SB_OK: written, this process's memory decides) */
	SB_CREATED = 2,		/* the store held no such name */
	SB_REPLACED = 3,	/* the store held the name */
};

struct store_backend;

struct store_backend_ops {
	const char *kind;	/* "dir" or "redis", for logs */
	/* Write name's mesh durably; called under the name's lock. */
	enum sb_result (*put)(struct store_backend *b, const char *name, const float *xyz,
			      size_t nvert, const uint32_t *idx, size_t ntri, uint64_t version);
	/* Remove name durably: SB_OK, or SB_ABSENT when the store (not this
	 * process's memory) held no such name; called under the name's lock. */
	enum sb_result (*del)(struct store_backend *b, const char *name);
	/* Start loading everything into b->store in a thread, then watch for
	 * changes (if the backend has any); set *b->ready = 1 once loaded (and
	 * subscribed). 0, or -1 when the thread cannot start. */
	int (*start)(struct store_backend *b);
	/* Stop and join the thread (b->cancel is already set); free impl. */
	void (*close)(struct store_backend *b);
};

struct store_backend {
	const struct store_backend_ops *ops;
	void *impl;

	struct store *store;		/* borrowed: where meshes are swapped in */
	size_t max_triangles, max_meshes;
	struct log *log;		/* may be NULL: no messages */
	struct metrics *metrics;	/* may be NULL: no store metrics */
	atomic_int *ready;		/* set to 1 when loaded; may be NULL */
	atomic_int cancel;		/* set by store_backend_close */
	atomic_int failed;		/* set by store_backend_fail */
	atomic_int stopping;		/* set by the owner once it stops for a signal */
	pthread_mutex_t locks[STORE_BACKEND_LOCKS];
};

/* Fill the common part (no backend yet: ops NULL). 0, or -1 (mutexes). */
int store_backend_init(struct store_backend *b, struct store *store, size_t max_triangles,
		       size_t max_meshes, struct log *log, struct metrics *metrics,
		       atomic_int *ready);

/* Stop the backend's thread (loading ends after the mesh it is on), close it
 * and destroy the locks. Safe on an initialised backend with no ops. */
void store_backend_close(struct store_backend *b);

/* Start loading (ops->start). 0, or -1. */
int store_backend_start(struct store_backend *b);

/* api_ctx hooks; cls is the struct store_backend. */
void store_backend_lock(void *cls, const char *name);
void store_backend_unlock(void *cls, const char *name);
int store_backend_put(void *cls, const char *name, const float *xyz, size_t nvert,
		      const uint32_t *idx, size_t ntri, uint64_t version);
int store_backend_delete(void *cls, const char *name);

/*
 * For loaders and watchers: build xyz/idx into a mesh (outside any lock) and
 * return it in *out (CORE_OK, 0), or log why not (prefix names the source)
 * and return mesh_build's result (CORE_ENOSPACE: --max-memory has no room).
 * The caller then swaps it in with store_backend_swap.
 */
enum core_result store_backend_build(struct store_backend *b, const char *name, const char *source,
			const float *xyz, size_t nvert, const uint32_t *idx, size_t ntri,
			struct mesh **out);

/* store_put of a built mesh (takes the reference) with its version (0: the
 * next one), logged on failure (max_meshes, memory). 1 when stored. The
 * caller holds name's lock when writers may race it. */
int store_backend_swap(struct store_backend *b, const char *name, const char *source,
		       struct mesh *m, uint64_t version);

/* Sleep up to ms, in slices, returning early (1) when b->cancel is set. */
int store_backend_sleep(struct store_backend *b, unsigned ms);

/*
 * For a backend's thread that cannot start, and would not by retrying (its
 * store refused the settings it was given: a wrong password, no such
 * database), once it has logged why: set b->failed and send the process
 * SIGTERM. The owner blocks SIGTERM in every thread and waits for it
 * (main.c's sigwait), then stops as for any SIGTERM and, seeing b->failed,
 * exits with status 2. No signal when the owner is already stopping
 * (b->stopping): it would read as an operator's second one. The calling
 * thread then ends.
 */
void store_backend_fail(struct store_backend *b);

#endif
