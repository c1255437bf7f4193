/* alloc.h - glibc malloc tuning for a long-running daemon with big, short-lived blocks.
 *
 * Why: mesh uploads and big answers allocate tens of MiB for a moment; with
 * glibc's defaults the mmap threshold then rises (up to 32 MiB, so later
 * big blocks come from the heaps and stay there fragmented), every worker
 * thread may get its own arena (8 per core, each keeping its freed memory),
 * and freed pages inside a heap go back to the kernel only when they are at
 * its top. Under mixed traffic RSS creeps although nothing leaks.
 *
 * alloc_tune() fixes the mmap threshold (blocks of ALLOC_MMAP_THRESHOLD and
 * more are mmapped, and unmapped when freed), bounds the arenas and the
 * trim threshold; alloc_trimmer_start() runs a thread that gives free heap
 * pages back (malloc_trim) every ALLOC_TRIM_PERIOD_MS.
 *
 * Why 1 MiB and not lower: a world snapshot's hitbox array (1280 hitboxes,
 * ~330 KiB) and a 1000-shot batch's blocks must come from the heap, where
 * the next tick reuses them. At 256 KiB each was mmapped fresh and every
 * page faulted in again: 1.8 ms of daemon CPU per 64 x 20 snapshot instead
 * of 1.1 (make bench-worlds). The JSON tree's chunk is kept per thread
 * instead (json_arena.c). The trim threshold stays at 1 MiB: malloc_trim()
 * frees pages inside every arena but not the top of a thread arena's heap,
 * which only a free() past this threshold shrinks (at 8 MiB the bounded
 * soak's RSS grew 40 % across phases).
 */
#ifndef SERVER_ALLOC_H
#define SERVER_ALLOC_H

#define ALLOC_MMAP_THRESHOLD (1u << 20)	/* bytes */
#define ALLOC_TRIM_THRESHOLD (1u << 20)		/* bytes */
#define ALLOC_ARENAS_PER_CPU 2
#define ALLOC_TRIM_PERIOD_MS 2000

struct alloc_trimmer;

/*
 * Set the malloc parameters above (before any thread starts: mallopt is not
 * meant to race allocations). Environment variables MALLOC_ARENA_MAX and
 * GLIBC_TUNABLES, when set, keep priority over the defaults here. Returns 0,
 * or -1 when glibc refused a parameter (the daemon runs anyway).
 */
int alloc_tune(void);

/* Start the trimming thread; *out NULL on failure (then nothing trims). */
int alloc_trimmer_start(struct alloc_trimmer **out);

/* Stop and join it; NULL is fine. */
void alloc_trimmer_stop(struct alloc_trimmer *t);

#endif
