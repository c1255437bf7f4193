/* store_versions.c - name -> last applied version (store_versions.h). */
#include "store_versions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The slot of name, or the empty slot where it belongs (n a power of two,
 * at most half full, so an empty slot exists). */
static struct store_version_slot *slot_find(struct store_version_slot *slots, size_t n,
					    const char *name)
{
	size_t i = name_hash(name) & (n - 1);

	while (slots[i].name[0] && strcmp(slots[i].name, name) != 0)
		i = (i + 1) & (n - 1);
	return &slots[i];
}

int store_versions_init(struct store_versions *t)
{
	memset(t, 0, sizeof(*t));
	return pthread_mutex_init(&t->lock, NULL) ? -1 : 0;
}

void store_versions_release(struct store_versions *t)
{
	pthread_mutex_destroy(&t->lock);
	free(t->slots);
	t->slots = NULL;
	t->nslots = t->nused = 0;
}

uint64_t store_versions_max(struct store_versions *t)
{
	uint64_t v;

	pthread_mutex_lock(&t->lock);
	v = t->max;
	pthread_mutex_unlock(&t->lock);
	return v;
}

void store_versions_clear(struct store_versions *t)
{
	pthread_mutex_lock(&t->lock);
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	t->nused = 0;
	t->max = 0;
	pthread_mutex_unlock(&t->lock);
}

uint64_t store_versions_get(struct store_versions *t, const char *name, int *known)
{
	struct store_version_slot *s = NULL;
	uint64_t v = 0;

	pthread_mutex_lock(&t->lock);
	if (t->nslots)
		s = slot_find(t->slots, t->nslots, name);
	if (s && s->name[0])
		v = s->version;
	if (known)
		*known = s && s->name[0];
	pthread_mutex_unlock(&t->lock);
	return v;
}

int store_versions_set(struct store_versions *t, const char *name, uint64_t v)
{
	struct store_version_slot *s, *grown;
	size_t i, n;
	int rc = 0;

	pthread_mutex_lock(&t->lock);
	if ((t->nused + 1) * 2 > t->nslots) {
		n = t->nslots ? t->nslots * 2 : 256;
		grown = n <= SIZE_MAX / 2 / sizeof(*grown) ? calloc(n, sizeof(*grown)) : NULL;
		if (!grown) {
			rc = -1;
			goto out_unlock;
		}
		for (i = 0; i < t->nslots; i++)
			if (t->slots[i].name[0])
				*slot_find(grown, n, t->slots[i].name) = t->slots[i];
		free(t->slots);
		t->slots = grown;
		t->nslots = n;
	}
	s = slot_find(t->slots, t->nslots, name);
	if (!s->name[0]) {
		snprintf(s->name, sizeof(s->name), "%s", name);
		t->nused++;
	}
	s->version = v;
	if (v > t->max)
		t->max = v;
out_unlock:
	pthread_mutex_unlock(&t->lock);
	return rc;
}
