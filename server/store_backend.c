/* store_backend.c - what every store backend shares: the per-name write
 * locks, the api hooks, and building/swapping loaded meshes (contracts in
 * store_backend.h). */
#include "store_backend.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "log.h"
#include "mesh.h"
#include "store.h"

/* FNV-1a of the name: which lock guards it. */
static pthread_mutex_t *name_lock(struct store_backend *b, const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return &b->locks[h % STORE_BACKEND_LOCKS];
}

int store_backend_init(struct store_backend *b, struct store *store, size_t max_triangles,
		       size_t max_meshes, struct log *log, struct metrics *metrics,
		       atomic_int *ready)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	atomic_init(&b->cancel, 0);
	atomic_init(&b->failed, 0);
	atomic_init(&b->stopping, 0);
	b->store = store;
	b->max_triangles = max_triangles;
	b->max_meshes = max_meshes;
	b->log = log;
	b->metrics = metrics;
	b->ready = ready;
	for (i = 0; i < STORE_BACKEND_LOCKS; i++) {
		if (pthread_mutex_init(&b->locks[i], NULL)) {
			while (i-- > 0)
				pthread_mutex_destroy(&b->locks[i]);
			return -1;
		}
	}
	return 0;
}

void store_backend_close(struct store_backend *b)
{
	size_t i;

	atomic_store(&b->cancel, 1);
	if (b->ops)
		b->ops->close(b);
	b->ops = NULL;
	b->impl = NULL;
	for (i = 0; i < STORE_BACKEND_LOCKS; i++)
		pthread_mutex_destroy(&b->locks[i]);
}

int store_backend_start(struct store_backend *b)
{
	return b->ops->start(b);
}

void store_backend_lock(void *cls, const char *name)
{
	pthread_mutex_lock(name_lock(cls, name));
}

void store_backend_unlock(void *cls, const char *name)
{
	pthread_mutex_unlock(name_lock(cls, name));
}

/* the api's codes are the backends' results */
_Static_assert(API_PERSIST_OK == SB_OK && API_PERSIST_FAILED == SB_FAILED &&
	       API_PERSIST_UNAVAILABLE == SB_UNAVAILABLE && API_PERSIST_FULL == SB_FULL &&
	       API_PERSIST_ABSENT == SB_ABSENT && API_PERSIST_CREATED == SB_CREATED &&
	       API_PERSIST_REPLACED == SB_REPLACED && API_PERSIST_NO_SPACE == SB_NO_SPACE,
	       "API_PERSIST_* (api.h) and enum sb_result agree");

int store_backend_put(void *cls, const char *name, const float *xyz, size_t nvert,
		      const uint32_t *idx, size_t ntri, uint64_t version)
{
	struct store_backend *b = cls;

	return (int)b->ops->put(b, name, xyz, nvert, idx, ntri, version);
}

int store_backend_delete(void *cls, const char *name)
{
	struct store_backend *b = cls;

	return (int)b->ops->del(b, name);
}

enum core_result store_backend_build(struct store_backend *b, const char *name,
				     const char *source, const float *xyz, size_t nvert,
				     const uint32_t *idx, size_t ntri, struct mesh **out)
{
	enum core_result r;

	r = mesh_build(xyz, nvert, idx, ntri, out, NULL);
	if (r != CORE_OK && b->log)
		log_msg(b->log, LOG_WARN, "store: skipping %s (%s): %s", name, source,
			r == CORE_ENOSPACE ? "--max-memory reached" : core_result_str(r));
	return r;
}

int store_backend_swap(struct store_backend *b, const char *name, const char *source,
		       struct mesh *m, uint64_t version)
{
	enum core_result r;

	r = store_put_version(b->store, name, m, b->max_meshes, version, NULL, NULL);
	if (r != CORE_OK) {
		if (b->log)
			log_msg(b->log, LOG_WARN, "store: skipping %s (%s): %s", name, source,
				r == CORE_ETOOBIG ? "--max-meshes reached" : core_result_str(r));
		return 0;
	}
	return 1;
}

int store_backend_sleep(struct store_backend *b, unsigned ms)
{
	struct timespec slice = { 0, 20 * 1000 * 1000 };

	while (ms > 0) {
		if (atomic_load(&b->cancel))
			return 1;
		if (ms < 20)
			slice.tv_nsec = (long)ms * 1000 * 1000;
		nanosleep(&slice, NULL);
		ms = ms < 20 ? 0 : ms - 20;
	}
	return atomic_load(&b->cancel) != 0;
}

void store_backend_fail(struct store_backend *b)
{
	atomic_store(&b->failed, 1);
	if (!atomic_load(&b->stopping))
		kill(getpid(), SIGTERM);
}
