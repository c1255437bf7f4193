/* par.h - split a loop over a few threads for the build of a large mesh:
 * no pool; the caller's thread takes a share. The CPU count is worked out
 * once (cpus.h). */
#ifndef CORE_PAR_H
#define CORE_PAR_H

#include <stddef.h>

#define PAR_MAX 16
#define PAR_MIN_ITEMS 100000	/* below this, threads cost more than they save */

/* fn(ctx, chunk, begin, end) for one chunk of [0, n). */
typedef void (*par_fn)(void *ctx, int chunk, size_t begin, size_t end);

/* How many threads a loop of n items should use: 1 below PAR_MIN_ITEMS,
 * else the usable CPUs (cpus.h), at most 8. */
int par_threads(size_t n);

/* Bounds of chunk c of nchunks near-equal chunks of [0, n). */
void par_chunk(size_t n, int nchunks, int c, size_t *begin, size_t *end);

/*
 * Run fn on each of nchunks (1 .. PAR_MAX) chunks of [0, n) and return when
 * all are done: chunk 0 on the caller's thread, the others on new threads; a
 * chunk whose thread cannot start runs on the caller's thread afterwards, so
 * this never fails.
 */
void par_for(size_t n, int nchunks, par_fn fn, void *ctx);

#endif
