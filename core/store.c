/* store.c - the named-mesh store: sorted tables, copied on write and read
 * in RCU sections (rcu.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nametab.h"
#include "rcu.h"
#include "store.h"

/*
 * A published table is never changed: a writer copies it with its change,
 * publishes the copy, waits for the read sections that may still see the old
 * one (rcu_synchronize) and frees it, and unreferences the mesh it dropped.
 * So a reader takes no lock and writes nothing shared (store_peek), and a
 * writer never blocks a reader; writers take turns on wlock.
 * Invariants of a table: e[0..n) holds valid, distinct names in strcmp
 * (byte) order, so a lookup is a binary search and store_list needs no sort;
 * every e[i].mesh is one reference owned by the store, never NULL.
 */
struct table {
	size_t n;
	struct store_entry e[];
};

struct store {
	pthread_mutex_t wlock;			/* writers */
	_Atomic(struct table *) tab;		/* NULL: empty */
	atomic_uint_fast64_t generation;	/* +1 on every put and delete (worlds) */
};

enum core_result store_new(struct store **out)
{
	struct store *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return CORE_ENOMEM;
	if (pthread_mutex_init(&s->wlock, NULL)) {
		free(s);
		return CORE_ENOMEM;
	}
	atomic_init(&s->tab, NULL);
	*out = s;
	return CORE_OK;
}

void store_free(struct store *s)
{
	struct table *t;
	size_t i;

	if (!s)
		return;
	t = atomic_load(&s->tab);
	for (i = 0; t && i < t->n; i++)
		mesh_unref(t->e[i].mesh);
	free(t);
	pthread_mutex_destroy(&s->wlock);
	free(s);
}

/* A table of n entries, or NULL. */
static struct table *table_alloc(size_t n)
{
	struct table *t;

	if (n > (SIZE_MAX - sizeof(*t)) / sizeof(t->e[0]))
		return NULL;
	t = malloc(sizeof(*t) + n * sizeof(t->e[0]));
	if (t)
		t->n = n;
	return t;
}

/* Publish t in place of old (under wlock), then, with wlock released, wait
 * out the readers of old and free it. */
static void table_swap(struct store *s, struct table *old, struct table *t)
{
	atomic_store(&s->tab, t);
	atomic_fetch_add(&s->generation, 1);
	pthread_mutex_unlock(&s->wlock);
	rcu_synchronize();
	free(old);
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
	return store_put_version(s, name, m, max_meshes, 0, version, created);
}

enum core_result store_put_version(struct store *s, const char *name, struct mesh *m,
				   size_t max_meshes, uint64_t set, uint64_t *version, int *created)
{
	struct mesh *drop = NULL;	/* unreferenced once no reader sees it */
	struct table *old, *t;
	struct store_entry *e;
	size_t i, n;
	uint64_t v;
	int found;

	if (!m)
		return CORE_EINVAL;
	if (!store_name_valid(name)) {
		mesh_unref(m);
		return CORE_EINVAL;
	}

	pthread_mutex_lock(&s->wlock);
	old = atomic_load(&s->tab);
	n = old ? old->n : 0;
	i = nametab_find(old ? old->e : NULL, n, sizeof(old->e[0]), name, &found);
	if (!found && max_meshes && n >= max_meshes) {
		pthread_mutex_unlock(&s->wlock);
		mesh_unref(m);
		return CORE_ETOOBIG;
	}
	t = table_alloc(found ? n : n + 1);
	if (!t) {
		pthread_mutex_unlock(&s->wlock);
		mesh_unref(m);
		return CORE_ENOMEM;
	}
	if (n)
		memcpy(t->e, old->e, i * sizeof(t->e[0]));
	e = &t->e[i];
	if (found) {
		memcpy(t->e + i + 1, old->e + i + 1, (n - i - 1) * sizeof(t->e[0]));
		*e = old->e[i];
		drop = e->mesh;
		v = e->version = set ? set : e->version + 1;
	} else {
		if (n)
			memcpy(t->e + i + 1, old->e + i, (n - i) * sizeof(t->e[0]));
		memset(e, 0, sizeof(*e));
		memcpy(e->name, name, strlen(name));
		v = e->version = set ? set : 1;
	}
	e->mesh = m;
	table_swap(s, old, t);

	mesh_unref(drop);
	if (version)
		*version = v;
	if (created)
		*created = !found;
	return CORE_OK;
}

void store_read_begin(void)
{
	rcu_read_lock();
}

void store_read_end(void)
{
	rcu_read_unlock();
}

struct mesh *store_peek(struct store *s, const char *name, uint64_t *version)
{
	struct table *t;
	size_t i;
	int found;

	if (!store_name_valid(name))
		return NULL;
	t = atomic_load(&s->tab);
	if (!t)
		return NULL;
	i = nametab_find(t->e, t->n, sizeof(t->e[0]), name, &found);
	if (!found)
		return NULL;
	if (version)
		*version = t->e[i].version;
	return t->e[i].mesh;
}

int store_would_refuse(struct store *s, const char *name, size_t max_meshes)
{
	struct table *t;
	size_t n;
	int found = 0;

	if (!max_meshes)
		return 0;
	rcu_read_lock();
	t = atomic_load(&s->tab);
	n = t ? t->n : 0;
	if (n >= max_meshes)
		nametab_find(t->e, n, sizeof(t->e[0]), name, &found);
	rcu_read_unlock();
	return n >= max_meshes && !found;
}

struct mesh *store_get(struct store *s, const char *name, uint64_t *version)
{
	struct mesh *m;

	rcu_read_lock();
	m = store_peek(s, name, version);
	if (m)
		mesh_ref(m);
	rcu_read_unlock();
	return m;
}

size_t store_get_many(struct store *s, const char *const *names, size_t n, struct mesh **out)
{
	struct table *t;
	size_t i, k, missing = 0;
	int found;

	rcu_read_lock();
	t = atomic_load(&s->tab);	/* once: every name from this table */
	for (i = 0; i < n; i++) {
		found = 0;
		k = t && store_name_valid(names[i]) ?
			    nametab_find(t->e, t->n, sizeof(t->e[0]), names[i], &found) : 0;
		out[i] = found ? t->e[k].mesh : NULL;
		if (out[i])
			mesh_ref(out[i]);
		else
			missing++;
	}
	rcu_read_unlock();
	return missing;
}

enum core_result store_delete(struct store *s, const char *name)
{
	struct table *old, *t;
	struct mesh *drop;
	size_t i;
	int found;

	if (!store_name_valid(name))
		return CORE_ENOTFOUND;

	pthread_mutex_lock(&s->wlock);
	old = atomic_load(&s->tab);
	i = old ? nametab_find(old->e, old->n, sizeof(old->e[0]), name, &found) : 0;
	if (!old || !found) {
		pthread_mutex_unlock(&s->wlock);
		return CORE_ENOTFOUND;
	}
	t = old->n > 1 ? table_alloc(old->n - 1) : NULL;
	if (old->n > 1 && !t) {
		pthread_mutex_unlock(&s->wlock);
		return CORE_ENOMEM;
	}
	if (t) {
		memcpy(t->e, old->e, i * sizeof(t->e[0]));
		memcpy(t->e + i, old->e + i + 1, (old->n - i - 1) * sizeof(t->e[0]));
	}
	drop = old->e[i].mesh;
	table_swap(s, old, t);
	mesh_unref(drop);
	return CORE_OK;
}

enum core_result store_list(struct store *s, struct store_entry **out, size_t *n)
{
	struct store_entry *e = NULL;
	struct table *t;
	size_t i, count;

	rcu_read_lock();
	t = atomic_load(&s->tab);
	count = t ? t->n : 0;
	if (count) {
		/* n * sizeof cannot overflow: the table already holds that many */
		e = malloc(count * sizeof(*e));
		if (!e) {
			rcu_read_unlock();
			return CORE_ENOMEM;
		}
		memcpy(e, t->e, count * sizeof(*e));
		for (i = 0; i < count; i++)
			mesh_ref(e[i].mesh);
	}
	rcu_read_unlock();

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
	struct table *t;
	size_t i, tris = 0, mem = 0;
	size_t count;

	rcu_read_lock();
	t = atomic_load(&s->tab);
	count = t ? t->n : 0;
	for (i = 0; i < count; i++) {
		mesh_get_info(t->e[i].mesh, &info);
		tris += info.triangles;
		mem += info.memory_bytes;
	}
	rcu_read_unlock();

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
