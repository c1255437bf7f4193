/* world_registry.c - named worlds: a sorted table under a reader-writer lock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nametab.h"
#include "world_registry.h"

/* tab[0..n) sorted by name, each holding one reference; worlds are freed
 * after the unlock, never under it. */
struct world_registry {
	pthread_rwlock_t lock;
	struct world_entry *tab;
	size_t n, cap;
};

enum core_result world_registry_new(struct world_registry **out)
{
	struct world_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return CORE_ENOMEM;
	if (pthread_rwlock_init(&r->lock, NULL)) {
		free(r);
		return CORE_ENOMEM;
	}
	*out = r;
	return CORE_OK;
}

void world_registry_free(struct world_registry *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		world_unref(r->tab[i].world);
	free(r->tab);
	pthread_rwlock_destroy(&r->lock);
	free(r);
}

enum core_result world_registry_put(struct world_registry *r, const char *name, struct world *w,
				    size_t max_worlds, int *created)
{
	struct world *drop = NULL;
	enum core_result res = CORE_OK;
	size_t i;
	int found;

	if (!store_name_valid(name)) {
		world_unref(w);
		return CORE_EINVAL;
	}
	pthread_rwlock_wrlock(&r->lock);
	i = nametab_find(r->tab, r->n, sizeof(*r->tab), name, &found);
	if (found) {
		drop = r->tab[i].world;
		r->tab[i].world = w;
	} else if (max_worlds && r->n >= max_worlds) {
		res = CORE_ETOOBIG;
	} else {
		void *tab = r->tab;
		struct world_entry *e = nametab_insert(&tab, &r->n, &r->cap, sizeof(*r->tab), i, name);

		r->tab = tab;
		if (e)
			e->world = w;
		else
			res = CORE_ENOMEM;
	}
	pthread_rwlock_unlock(&r->lock);
	if (res != CORE_OK)
		world_unref(w);
	world_unref(drop);
	if (res == CORE_OK && created)
		*created = !found;
	return res;
}

struct world *world_registry_get(struct world_registry *r, const char *name)
{
	struct world *w = NULL;
	size_t i;
	int found;

	pthread_rwlock_rdlock(&r->lock);
	i = nametab_find(r->tab, r->n, sizeof(*r->tab), name, &found);
	if (found)
		w = world_ref(r->tab[i].world);
	pthread_rwlock_unlock(&r->lock);
	return w;
}

enum core_result world_registry_delete(struct world_registry *r, const char *name)
{
	struct world *drop = NULL;
	size_t i;
	int found;

	pthread_rwlock_wrlock(&r->lock);
	i = nametab_find(r->tab, r->n, sizeof(*r->tab), name, &found);
	if (found) {
		drop = r->tab[i].world;
		nametab_remove(r->tab, &r->n, sizeof(*r->tab), i);
	}
	pthread_rwlock_unlock(&r->lock);
	world_unref(drop);
	return found ? CORE_OK : CORE_ENOTFOUND;
}

enum core_result world_registry_list(struct world_registry *r, struct world_entry **out,
				     size_t *n)
{
	struct world_entry *e = NULL;
	size_t i;

	pthread_rwlock_rdlock(&r->lock);
	if (r->n) {
		e = malloc(r->n * sizeof(*e));
		if (!e) {
			pthread_rwlock_unlock(&r->lock);
			return CORE_ENOMEM;
		}
		memcpy(e, r->tab, r->n * sizeof(*e));
		for (i = 0; i < r->n; i++)
			world_ref(e[i].world);
	}
	*n = r->n;
	pthread_rwlock_unlock(&r->lock);
	*out = e;
	return CORE_OK;
}

void world_registry_list_free(struct world_entry *e, size_t n)
{
	size_t i;

	for (i = 0; e && i < n; i++)
		world_unref(e[i].world);
	free(e);
}

size_t world_registry_count(struct world_registry *r)
{
	size_t n;

	pthread_rwlock_rdlock(&r->lock);
	n = r->n;
	pthread_rwlock_unlock(&r->lock);
	return n;
}
