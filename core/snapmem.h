/* snapmem.h - where a world's snapshots live.
 *
 * Each snapshot is one block, carved in order from 2 MiB chunks (transparent
 * huge pages where the kernel gives them on madvise; a small world's
 * snapshots come from malloc). A chunk goes when the
 * last block in it is released: back to a small process-wide set of spare
 * chunks, or unmapped when that set is full. Snapshots are released about
 * in the order they were taken (the oldest leaves the history first), so
 * the chunks drain in order, and the next snapshots reuse pages that are
 * already mapped. With malloc, a history filling up (the first second of a
 * match) faulted in every page of every new snapshot: 4 KiB at a time,
 * about 10 us each on a virtual machine, 1.1 ms of a 400 KiB snapshot.
 *
 * A block never moves and stays valid until released, whatever happens to
 * the snapmem it came from.
 */
#ifndef CORE_SNAPMEM_H
#define CORE_SNAPMEM_H

#include <stddef.h>

/* The chunks a block may share, and the spares kept for the process. */
#define SNAPMEM_CHUNK ((size_t)2 << 20)
#define SNAPMEM_SPARES 8
/* Blocks below this come from malloc: the snapshots of a small world (under
 * ~400 hitboxes) would leave most of a chunk empty, and a chunk is resident
 * as one huge page. */
#define SNAPMEM_SMALL ((size_t)128 << 10)

/* One per writer: the chunk being filled. */
struct snapmem;

struct snapmem *snapmem_new(void);	/* NULL when out of memory */
/* Gives up the chunk being filled; blocks carved from it stay valid. */
void snapmem_free(struct snapmem *m);

/*
 * A block of bytes (> 0), aligned to 64 bytes, with undefined contents.
 * Not thread-safe for one m (a world's ingest lock serialises its calls);
 * blocks of different snapmems never share a chunk. A block over half a
 * chunk gets a mapping of its own, one under SNAPMEM_SMALL comes from
 * malloc. NULL when out of memory.
 */
void *snapmem_alloc(struct snapmem *m, size_t bytes);
/* Releases a block from snapmem_alloc (NULL: nothing); any thread. */
void snapmem_release(void *block);

/* Chunks mapped now (in use or spare), of them the spares, and mappings
 * made since the process started; for tests. */
void snapmem_counts(size_t *mapped, size_t *spare, size_t *maps);
/* Bytes of the chunks mapped now (a gauge for /metrics). */
size_t snapmem_mapped_bytes(void);

#endif
