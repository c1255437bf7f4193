/* json_arena.c - the chunked arena that holds a parsed JSON tree (json.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "json.h"

struct json_chunk {
	struct json_chunk *next;
	size_t cap;
	unsigned char data[];
};

#define CHUNK_MIN ((size_t)4096)
#define CHUNK_MAX ((size_t)64 << 20)	/* bigger requests grow by chunks of this */
#define NODES_PER_BYTE 8		/* first chunk: body length times this */

/*
 * Each thread keeps one released chunk of at most CACHE_MAX bytes for its
 * next arena. A 1000-shot batch or a 64-entity snapshot parses into about
 * 1 MiB of tree; a fresh chunk that size is mmapped by malloc and every page
 * faulted in again per request, which cost more than the parse itself. The
 * cost is bounded: one chunk per thread that parses (the worker threads),
 * and only its pages that a request touched are resident.
 */
#define CACHE_MAX ((size_t)2 << 20)

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_ok;

static void cache_init(void)
{
	cache_ok = pthread_key_create(&cache_key, free) == 0;
}

/* The calling thread's cached chunk, taken out of the cache (NULL if none). */
static struct json_chunk *cache_take(void)
{
	struct json_chunk *c;

	pthread_once(&cache_once, cache_init);
	if (!cache_ok || !(c = pthread_getspecific(cache_key)))
		return NULL;
	pthread_setspecific(cache_key, NULL);
	return c;
}

/* Keep c as the thread's cached chunk if it fits and is the bigger one;
 * free whichever is not kept. */
static void cache_put(struct json_chunk *c)
{
	struct json_chunk *old;

	pthread_once(&cache_once, cache_init);
	if (!cache_ok || c->cap > CACHE_MAX) {
		free(c);
		return;
	}
	old = pthread_getspecific(cache_key);
	if (old && old->cap >= c->cap) {
		free(c);
		return;
	}
	if (pthread_setspecific(cache_key, c)) {
		free(c);
		return;
	}
	free(old);
}

void json_arena_release(struct json_arena *a)
{
	struct json_chunk *c = a->head, *next;

	while (c) {
		next = c->next;
		cache_put(c);
		c = next;
	}
	a->head = NULL;
	a->next = a->end = NULL;
}

size_t json_arena_chunks(const struct json_arena *a)
{
	const struct json_chunk *c;
	size_t n = 0;

	for (c = a->head; c; c = c->next)
		n++;
	return n;
}

/* A new chunk of at least need bytes (plus align slack) in front of a->head. */
static int arena_grow(struct json_arena *a, size_t need, size_t align, size_t hint)
{
	struct json_chunk *c;
	size_t cap;

	if (need > SIZE_MAX - align - sizeof(*c))
		return -1;
	need += align;
	if (a->head)
		cap = a->head->cap <= CHUNK_MAX / 2 ? a->head->cap * 2 : CHUNK_MAX;
	else
		cap = hint;
	if (cap < CHUNK_MIN)
		cap = CHUNK_MIN;
	if (cap < need)
		cap = need;
	if (cap > SIZE_MAX - sizeof(*c))
		return -1;
	/* the cached chunk if it is big enough: for a first chunk, as big as
	 * the hint asks (up to what the cache can hold) */
	c = cache_take();
	if (c && c->cap < (a->head || cap > CACHE_MAX ? need : cap)) {
		cache_put(c);
		c = NULL;
	}
	if (c)
		cap = c->cap;
	else if (!(c = malloc(sizeof(*c) + cap)))
		return -1;
	c->next = a->head;
	c->cap = cap;
	a->head = c;
	a->next = c->data;
	a->end = c->data + cap;
	return 0;
}

void *json_arena_alloc(struct json_arena *a, size_t size, size_t align, size_t hint)
{
	void *p = json_arena_bump(a, size, align);

	if (p)
		return p;
	if (arena_grow(a, size, align, hint))
		return NULL;
	return json_arena_bump(a, size, align);
}

size_t json_arena_hint(size_t body_len)
{
	if (body_len <= (CHUNK_MAX - CHUNK_MIN) / NODES_PER_BYTE)
		return body_len * NODES_PER_BYTE + CHUNK_MIN;
	return CHUNK_MAX;
}
