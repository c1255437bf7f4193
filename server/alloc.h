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
 */
#ifndef SERVER_ALLOC_H
#define SERVER_ALLOC_H

#define ALLOC_MMAP_THRESHOLD (256u << 10)	/* bytes */
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
