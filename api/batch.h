/* batch.h - the one batch driver every query endpoint answers through: N
 * items (rays, segments, shots), one callback per item that appends its
 * answer, the framing of the answers in one place, and big batches split
 * across a small pool of worker threads with the answers kept in order.
 *
 * A new endpoint is a decoder (decode.h), an item callback and an encoder
 * (encode.h); the driver does the rest.
 */
#ifndef API_BATCH_H
#define API_BATCH_H

#include <stddef.h>

#include "buf.h"
#include "core.h"

/*
 * Answer item i of the batch described by cls: append exactly one answer to
 * out. scratch is job->scratch_bytes of memory owned by the calling thread
 * (aligned for any type), reused from item to item: nothing is allocated
 * per item. Called from several threads at once for one batch, so cls must
 * be read-only. CORE_OK, or a core error that stops the batch.
 */
typedef enum core_result (*batch_item_fn)(const void *cls, size_t i, void *scratch,
					   struct buf *out);

enum batch_framing {
	BATCH_ONE,	/* one item, its answer alone (a JSON body without a batch key) */
	BATCH_JSON,	/* {"results":[a0,a1,...]} */
	BATCH_BINARY,	/* the answers back to back (fixed-size records) */
};

/* Room reserved beyond n * answer_bytes: an encoder writes an answer in
 * place only with its worst case ahead (encode.c's HIT_ROOM, 473 bytes),
 * so that a one-ray answer, or a chunk's last, is not written piecewise. */
#define BATCH_ITEM_ROOM 512

struct batch_job {
	size_t n;			/* items */
	enum batch_framing framing;
	size_t answer_bytes;		/* about one answer's size, to reserve room */
	size_t scratch_bytes;		/* per thread for item */
	batch_item_fn item;
	const void *cls;
	/* Batches of fewer items than this stay on the calling thread (0:
	 * BATCH_SPLIT_MIN); a split cuts chunks of at least a quarter of it.
	 * Items far dearer than a mesh ray (a world shot) set it lower, so
	 * that a batch of a few hundred already uses the pool. */
	size_t split_min;
	/* Nonzero (batch_pair): the caller, its chunks done, spins a while for
	 * the workers' instead of sleeping at once; 1: a worker that ran one
	 * of them spins afterwards too, as batch_pool_warm leaves it, ready for
	 * the next batch's chunks (2: it sleeps again at once) */
	int warm_after;
	/* Nonzero: a split cuts chunks at multiples of group, so that an item
	 * callback answering items in groups (the group's first item casts
	 * them all into its scratch) meets each group whole in one chunk. */
	size_t group;
};

/* The default split_min: about a millisecond of mesh rays. */
#define BATCH_SPLIT_MIN 4096

struct batch_pool;

/* A pool of `threads` worker threads (0: NULL, no pool, not an error);
 * NULL also when a thread or memory cannot be had. */
struct batch_pool *batch_pool_create(unsigned threads);
/* Stops and joins the workers; no batch may be running. NULL is fine. */
void batch_pool_destroy(struct batch_pool *p);
/* A batch of about `items` items (with that job's split_min; 0: the
 * default) is coming, its request still being parsed: wake as many workers
 * as its split will use, so that they spin, for up to a millisecond, ready
 * for its chunks (not one that finds itself on the caller's CPU: it
 * sleeps again). Nothing when it will not be split. Waking a sleeping
 * thread takes hundreds of microseconds on some virtual machines, as long
 * as a thread's share of a 1000-shot batch. A hint: the answers do not
 * depend on it. NULL is fine. */
void batch_pool_warm(struct batch_pool *p, size_t items, size_t split_min);

/*
 * Answer every item of job into out, framed, in item order. With a pool and
 * at least job->split_min items, the items are cut into contiguous chunks
 * run by the pool's workers and the calling thread (which also runs queued
 * chunks while it waits); the bytes are the same whatever the split.
 * Returns CORE_OK, or the error of the first failing item (*failed = its
 * index; out is then partial: the caller answers with an error instead).
 * CORE_ENOMEM when scratch cannot be had; out's oom flag for the answers.
 */
enum core_result batch_run(struct batch_pool *pool, const struct batch_job *job, struct buf *out,
			   size_t *failed);

/*
 * fn(arg0) on the calling thread and fn(arg1) on a worker (or on the
 * calling thread after arg0, when no worker has taken it); returns when
 * both have run. fn must not touch what the other call does. The worker
 * then spins for the next batch's chunks, as batch_pool_warm leaves it: a
 * decoder halving its parse this way, with the batch after it, does not pay
 * a sleeping worker's wake-up twice. Without a pool, both in order here.
 */
void batch_pair(struct batch_pool *pool, void (*fn)(void *), void *arg0, void *arg1);
/* batch_pair when no batch follows: the worker sleeps again at once. */
void batch_pair_rest(struct batch_pool *pool, void (*fn)(void *), void *arg0, void *arg1);

#endif
