/* store_versions.h - the last store version a replica applied per name
 * (deletes included), for store_redis.c's compare-and-set: a mesh is swapped
 * in only when its version is newer than the one recorded here.
 *
 * An open-addressing table that only grows: a deleted name keeps its
 * version, so a late event for an older put cannot bring it back. About 80
 * bytes per name ever seen. Thread-safe (one mutex, held briefly).
 */
#ifndef SERVER_STORE_VERSIONS_H
#define SERVER_STORE_VERSIONS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store_version_slot {
	char name[STORE_NAME_MAX + 1];	/* "" = empty slot */
	uint64_t version;
};

struct store_versions {
	pthread_mutex_t lock;
	struct store_version_slot *slots;
	size_t nslots, nused;		/* nslots 0 or a power of two */
	uint64_t max;			/* the highest version recorded */
};

/* An empty table. 0, or -1 (mutex). */
int store_versions_init(struct store_versions *t);
void store_versions_release(struct store_versions *t);

/* name's version, 0 when never recorded; *known (may be NULL) says which. */
uint64_t store_versions_get(struct store_versions *t, const char *name, int *known);

/* Record name's version. 0, or -1 when out of memory (nothing recorded:
 * the next event for the name is then applied again, which is harmless). */
int store_versions_set(struct store_versions *t, const char *name, uint64_t v);

/* The highest version recorded (0: none): a store whose sequence is below
 * it has gone back (restored, emptied, failed over). */
uint64_t store_versions_max(struct store_versions *t);

/* Forget every version (the store went back: they name writes it no
 * longer has). */
void store_versions_clear(struct store_versions *t);

#endif
