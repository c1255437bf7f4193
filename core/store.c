/* store.c - the named-mesh store: a sorted table under a reader-writer lock. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nametab.h"
#include "store.h"

/*
 * Invariants, whenever the lock is not held for writing:
 * - tab[0..n) holds valid, distinct names in strcmp (byte) order, so a lookup
 *   is a binary search and store_list needs no sort;
 * - every tab[i].mesh is one reference owned by the table, never NULL;
 * - n <= cap, and tab is NULL exactly when cap is 0.
 * Only pointer swaps and the table's own bookkeeping happen under the write
 * lock: mesh builds happen before store_put and mesh frees after the unlock,
 * so neither a huge upload nor a huge free ever blocks a reader.
 */
struct store {
	pthread_rwlock_t lock;
	struct store_entry *tab;
	size_t n;
	size_t cap;
	atomic_uint_fast64_t generation;	/* +1 on every put and delete (worlds) */
};

enum core_result store_new(struct store **out)
{
	pthread_rwlockattr_t attr;
	struct store *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return CORE_ENOMEM;
	if (pthread_rwlockattr_init(&attr))
		goto out_free_store;
	/*
	 * glibc's default rwlock lets a steady stream of readers starve a
	 * writer; under query load a replace or delete would never land.
	 * Readers here never take the lock recursively, which this kind needs.
	 */
	pthread_rwlockattr_setkind_np(&attr,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	err = pthread_rwlock_init(&s->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	if (err)
		goto out_free_store;
	*out = s;
	return CORE_OK;

out_free_store:
	free(s);
	return CORE_ENOMEM;
}

void store_free(struct store *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		mesh_unref(s->tab[i].mesh);
	free(s->tab);
	pthread_rwlock_destroy(&s->lock);
	free(s);
}

/* Byte classes, not <ctype.h>: the answer must not depend on the locale. */
static int name_char_ok(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

int store_name_valid(const char *name)
{
	size_t i;

	if (!name || name[0] == '\0' || name[0] == '.')
		return 0;
	for (i = 0; name[i] != '\0'; i++) {
		if (i == STORE_NAME_MAX || !name_char_ok((unsigned char)name[i]))
			return 0;
	}
	return 1;
}

enum core_result store_put(struct store *s, const char *name, struct mesh *m,
			   size_t max_meshes, uint64_t *version, int *created)
{
	struct mesh *drop = NULL;	/* unreferenced after the unlock */
	struct store_entry *e;
	enum core_result r = CORE_OK;
	uint64_t v;
	size_t i;
	int found;

	if (!m)
		return CORE_EINVAL;
	if (!store_name_valid(name)) {
		mesh_unref(m);
		return CORE_EINVAL;
	}

	pthread_rwlock_wrlock(&s->lock);
	i = nametab_find(s->tab, s->n, sizeof(*s->tab), name, &found);
	if (found) {
		e = &s->tab[i];
		drop = e->mesh;
		e->mesh = m;
		v = ++e->version;
	} else {
		if (max_meshes && s->n >= max_meshes) {
			r = CORE_ETOOBIG;
			goto out_unlock;
		}
		void *tab = s->tab;

		e = nametab_insert(&tab, &s->n, &s->cap, sizeof(*s->tab), i, name);
		s->tab = tab;
		if (!e) {
			r = CORE_ENOMEM;
			goto out_unlock;
		}
		e->mesh = m;
		v = e->version = 1;
	}
	atomic_fetch_add(&s->generation, 1);
	pthread_rwlock_unlock(&s->lock);

	mesh_unref(drop);
	if (version)
		*version = v;
	if (created)
		*created = !found;
	return CORE_OK;

out_unlock:
	pthread_rwlock_unlock(&s->lock);
	mesh_unref(m);
	return r;
}

struct mesh *store_get(struct store *s, const char *name, uint64_t *version)
{
	struct mesh *m = NULL;
	size_t i;
	int found;

	if (!store_name_valid(name))
		return NULL;

	pthread_rwlock_rdlock(&s->lock);
	i = nametab_find(s->tab, s->n, sizeof(*s->tab), name, &found);
	if (found) {
		m = mesh_ref(s->tab[i].mesh);
		if (version)
			*version = s->tab[i].version;
	}
	pthread_rwlock_unlock(&s->lock);
	return m;
}

enum core_result store_delete(struct store *s, const char *name)
{
	struct mesh *drop = NULL;
	size_t i;
	int found;

	if (!store_name_valid(name))
		return CORE_ENOTFOUND;

	pthread_rwlock_wrlock(&s->lock);
	i = nametab_find(s->tab, s->n, sizeof(*s->tab), name, &found);
	if (found) {
		drop = s->tab[i].mesh;
		nametab_remove(s->tab, &s->n, sizeof(*s->tab), i);
		atomic_fetch_add(&s->generation, 1);
	}
	pthread_rwlock_unlock(&s->lock);

	if (!found)
		return CORE_ENOTFOUND;
	mesh_unref(drop);
	return CORE_OK;
}

enum core_result store_list(struct store *s, struct store_entry **out, size_t *n)
{
	struct store_entry *e = NULL;
	size_t i, count;

	pthread_rwlock_rdlock(&s->lock);
	count = s->n;
	if (count) {
		/* n * sizeof cannot overflow: tab already holds that many */
		e = malloc(count * sizeof(*e));
		if (!e) {
			pthread_rwlock_unlock(&s->lock);
			return CORE_ENOMEM;
		}
		memcpy(e, s->tab, count * sizeof(*e));
		for (i = 0; i < count; i++)
			mesh_ref(e[i].mesh);
	}
	pthread_rwlock_unlock(&s->lock);

	*out = e;
	*n = count;
	return CORE_OK;
}

void store_list_free(struct store_entry *e, size_t n)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < n; i++)
		mesh_unref(e[i].mesh);
	free(e);
}

void store_totals(struct store *s, size_t *meshes, size_t *triangles, size_t *bytes)
{
	struct mesh_info info;
	size_t i, tris = 0, mem = 0;
	size_t count;

	pthread_rwlock_rdlock(&s->lock);
	count = s->n;
	for (i = 0; i < count; i++) {
		mesh_get_info(s->tab[i].mesh, &info);
		tris += info.triangles;
		mem += info.memory_bytes;
	}
	pthread_rwlock_unlock(&s->lock);

	if (meshes)
		*meshes = count;
	if (triangles)
		*triangles = tris;
	if (bytes)
		*bytes = mem;
}

uint64_t store_generation(struct store *s)
{
	return atomic_load(&s->generation);
}
