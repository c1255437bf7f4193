/* snapmem.c - snapshot blocks carved in order from 2 MiB chunks (snapmem.h).
 *
 * A chunk is one aligned mapping: its header, then blocks, each a 64-byte
 * head (which chunk) and the bytes asked for, rounded up to 64. The chunk
 * counts its blocks not yet released, plus one while a snapmem fills it;
 * the count reaching zero gives the chunk to the spares or unmaps it.
 * Under AddressSanitizer every byte outside a live block is poisoned, so a
 * snapshot read after its release is reported as with malloc.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "snapmem.h"

#if defined(__SANITIZE_ADDRESS__)
#define SNAPMEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SNAPMEM_ASAN 1
#endif
#endif
#ifdef SNAPMEM_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define LINE ((size_t)64)

struct chunk {
	atomic_size_t live;	/* blocks not released, + 1 while being filled */
	size_t size;		/* of the mapping, this header included */
	size_t used;		/* bytes carved so far, this header included */
};

/* Before each block, in a line of its own. */
struct block_head {
	struct chunk *chunk;	/* NULL: a small block from malloc */
	size_t bytes;		/* the block's, rounded up to LINE */
};

_Static_assert(sizeof(struct chunk) <= LINE && sizeof(struct block_head) <= LINE,
	       "a chunk's header and a block's head take one line each");

struct snapmem {
	struct chunk *cur;	/* being filled, or NULL */
};

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk *spares[SNAPMEM_SPARES];
static size_t nspare;
static atomic_size_t nmapped, nmaps, nbytes;

/* A mapping of size bytes (a multiple of SNAPMEM_CHUNK) aligned to
 * SNAPMEM_CHUNK, so that the kernel can back it with huge pages. */
static struct chunk *chunk_map(size_t size)
{
	size_t span = size + SNAPMEM_CHUNK;
	char *p, *a;
	struct chunk *c;

	p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + SNAPMEM_CHUNK - 1) & ~(uintptr_t)(SNAPMEM_CHUNK - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (p + span > a + size)
		munmap(a + size, (size_t)(p + span - (a + size)));
	(void)madvise(a, size, MADV_HUGEPAGE);	/* a hint: 4 KiB pages without it */
	c = (struct chunk *)a;
	c->size = size;
	atomic_fetch_add(&nmapped, 1);
	atomic_fetch_add(&nmaps, 1);
	atomic_fetch_add(&nbytes, size);
	POISON(a + LINE, size - LINE);
	return c;
}

static void chunk_unmap(struct chunk *c)
{
	UNPOISON((char *)c, c->size);	/* the next mapping here starts clean */
	atomic_fetch_sub(&nmapped, 1);
	atomic_fetch_sub(&nbytes, c->size);
	munmap(c, c->size);
}

/* An empty chunk of SNAPMEM_CHUNK bytes, counted as being filled. */
static struct chunk *chunk_get(void)
{
	struct chunk *c = NULL;

	pthread_mutex_lock(&spare_lock);
	if (nspare)
		c = spares[--nspare];
	pthread_mutex_unlock(&spare_lock);
	if (!c && !(c = chunk_map(SNAPMEM_CHUNK)))
		return NULL;
	c->used = LINE;
	atomic_store(&c->live, 1);
	return c;
}

/* c's count reached zero: nothing in it is used any more. */
static void chunk_drop(struct chunk *c)
{
	if (c->size == SNAPMEM_CHUNK) {
		pthread_mutex_lock(&spare_lock);
		if (nspare < SNAPMEM_SPARES) {
			POISON((char *)c + LINE, c->size - LINE);	/* the old heads too */
			spares[nspare++] = c;
			pthread_mutex_unlock(&spare_lock);
			return;
		}
		pthread_mutex_unlock(&spare_lock);
	}
	chunk_unmap(c);
}

static void chunk_put(struct chunk *c)
{
	if (atomic_fetch_sub(&c->live, 1) == 1)
		chunk_drop(c);
}

struct snapmem *snapmem_new(void)
{
	return calloc(1, sizeof(struct snapmem));
}

void snapmem_free(struct snapmem *m)
{
	if (!m)
		return;
	if (m->cur)
		chunk_put(m->cur);
	free(m);
}

/* Carve need bytes (a head and a block, a multiple of LINE) from c. */
static void *carve(struct chunk *c, size_t need)
{
	struct block_head *h = (struct block_head *)((char *)c + c->used);

	c->used += need;
	atomic_fetch_add(&c->live, 1);
	UNPOISON(h, need);
	h->chunk = c;
	h->bytes = need - LINE;
	return (char *)h + LINE;
}

void *snapmem_alloc(struct snapmem *m, size_t bytes)
{
	size_t need;
	struct chunk *c;

	if (bytes == 0 || bytes > SIZE_MAX / 4)
		return NULL;
	need = LINE + (bytes + LINE - 1) / LINE * LINE;
	if (need < SNAPMEM_SMALL) {
		/* a small world's snapshots: a chunk would be mostly empty */
		struct block_head *h = aligned_alloc(LINE, need);

		if (!h)
			return NULL;
		h->chunk = NULL;
		h->bytes = need - LINE;
		return (char *)h + LINE;
	}
	if (need > SNAPMEM_CHUNK / 2) {
		/* a mapping of its own, released with its block */
		c = chunk_map((LINE + need + SNAPMEM_CHUNK - 1) / SNAPMEM_CHUNK * SNAPMEM_CHUNK);
		if (!c)
			return NULL;
		c->used = LINE;
		atomic_store(&c->live, 0);
		return carve(c, need);
	}
	if (!m->cur || m->cur->used + need > m->cur->size) {
		if (!(c = chunk_get()))
			return NULL;
		if (m->cur)
			chunk_put(m->cur);
		m->cur = c;
	}
	return carve(m->cur, need);
}

void snapmem_release(void *block)
{
	struct block_head *h;

	if (!block)
		return;
	h = (struct block_head *)((char *)block - LINE);
	if (!h->chunk) {
		free(h);
		return;
	}
	POISON(block, h->bytes);
	chunk_put(h->chunk);
}

void snapmem_counts(size_t *mapped, size_t *spare, size_t *maps)
{
	pthread_mutex_lock(&spare_lock);
	*spare = nspare;
	pthread_mutex_unlock(&spare_lock);
	*mapped = atomic_load(&nmapped);
	*maps = atomic_load(&nmaps);
}

size_t snapmem_mapped_bytes(void)
{
	return atomic_load(&nbytes);
}
