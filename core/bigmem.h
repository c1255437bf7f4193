/* bigmem.h - the large arrays of a mesh build, their pages faulted in by
 * one system call instead of one trap per page. */
#ifndef CORE_BIGMEM_H
#define CORE_BIGMEM_H

#include <stddef.h>

/* From this size on an array is prefaulted (smaller ones gain nothing). */
#define BIGMEM_MIN ((size_t)1 << 20)

/*
 * bytes of memory aligned to align (a power of two, at most 4096), freed
 * with free(); NULL when out of memory. From BIGMEM_MIN bytes on, the block
 * is page-aligned and its pages are made present and writable at once
 * (madvise MADV_POPULATE_WRITE, Linux 5.14; older kernels ignore it and
 * fault the pages in as they are first written, as plain malloc does).
 */
void *bigmem_alloc(size_t bytes, size_t align);

#endif
