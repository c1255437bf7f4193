/* bigmem.c - prefaulted allocation of a build's large arrays (bigmem.h).
 *
 * Measured on this project's 2-core VM: a build of the harness's level
 * (528 k triangles) or bunny_sub4 (1 M) spent a fifth of its time taking
 * page faults on freshly allocated arrays, each fault a trap into the
 * kernel. One MADV_POPULATE_WRITE per array does the same zeroing without
 * the traps. Huge pages (MADV_HUGEPAGE) were tried too: the build gained
 * as much, but rays through the mesh were 5-15 % slower on this VM, so the
 * pages stay the kernel's default size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bigmem.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14: for older headers */
#endif

#define PAGE 4096	/* the alignment asked for; madvise needs only a page start */

void *bigmem_alloc(size_t bytes, size_t align)
{
	size_t a = bytes >= BIGMEM_MIN ? PAGE : align, rounded;
	void *p;

	if (bytes > SIZE_MAX - a)
		return NULL;
	rounded = (bytes + a - 1) / a * a;	/* aligned_alloc wants a multiple */
	p = aligned_alloc(a, rounded ? rounded : a);
	if (p && bytes >= BIGMEM_MIN)
		(void)madvise(p, rounded, MADV_POPULATE_WRITE);	/* advice: may fail */
	return p;
}
