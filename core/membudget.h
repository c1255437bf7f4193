/* membudget.h - the process's memory budget for what it holds: meshes (what
 * `memory_bytes` reports, BVH included) and world snapshots (each one's
 * block). Both take their bytes once built (and found valid), and
 * both give them back when freed (the last reference dropped), so a mesh
 * replaced while queries still read the old one counts twice until they
 * finish. Requests' transient memory (bodies, parse trees, build arrays,
 * answers) is not counted: its bounds are the request limits.
 *
 * One budget per process (the daemon's --max-memory); thread-safe, no lock.
 */
#ifndef CORE_MEMBUDGET_H
#define CORE_MEMBUDGET_H

#include <stddef.h>

/* The limit in bytes; 0 = none (the default). Raising or lowering it never
 * frees anything: a lower limit refuses what would pass it from now on. */
void membudget_set_limit(size_t limit);
size_t membudget_limit(void);

/* Take bytes when they fit under the limit (held + bytes <= limit): 0, or
 * -1 with nothing taken. */
int membudget_take(size_t bytes);
/* The same for what replaces `replaced` bytes held now, which the caller
 * gives back once the new one is in place (a world's snapshot dropping the
 * oldest): held + bytes <= limit + replaced. Until they are given back
 * (a reader still holds the old one) held may pass the limit by as much. */
int membudget_take_replacing(size_t bytes, size_t replaced);
/* Give back bytes taken before. */
void membudget_give(size_t bytes);
/* 1 when bytes would fit now (a check before work that would be wasted). */
int membudget_fits(size_t bytes);

/* Bytes taken and not given back. */
size_t membudget_held(void);

#endif
