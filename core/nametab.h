/* nametab.h - sorted tables of fixed-size entries keyed by name: the mesh
 * store's and the world registry's.
 *
 * An entry is stride bytes and starts with its NUL-terminated name (a
 * `char name[N]` first member, N large enough for every name the caller
 * inserts: callers validate names first). The table is ordered by strcmp of
 * the names. Nothing here locks: callers hold their own lock.
 */
#ifndef CORE_NAMETAB_H
#define CORE_NAMETAB_H

#include <stddef.h>

/* Binary search of tab[0..n). Returns the index of name when *found, else
 * the index where an entry of that name would be inserted. */
size_t nametab_find(const void *tab, size_t n, size_t stride, const char *name, int *found);

/* Insert a zeroed entry holding name at index at (from nametab_find), growing
 * *tab (capacity *cap, doubling from 8) as needed; *n grows by one. Returns
 * the new entry, or NULL when out of memory (the table is unchanged). */
void *nametab_insert(void **tab, size_t *n, size_t *cap, size_t stride, size_t at,
		     const char *name);

/* Remove the entry at index at (< *n); *n shrinks by one. */
void nametab_remove(void *tab, size_t *n, size_t stride, size_t at);

#endif
