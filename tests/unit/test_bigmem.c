/* test_bigmem.c - Check suite for core/bigmem.c: the alignment asked for
 * below BIGMEM_MIN and a page from there on, every byte writable, sizes
 * that cannot be allocated refused, and a large block's pages present
 * before anything is written to it (where the kernel has
 * MADV_POPULATE_WRITE). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bigmem.h"

static int aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

START_TEST(alignment_and_every_byte)
{
	static const size_t sizes[] = { 0, 1, 15, 16, 100, 4095, BIGMEM_MIN - 1, BIGMEM_MIN,
					BIGMEM_MIN + 1, 3 * BIGMEM_MIN + 17 };
	static const size_t aligns[] = { 16, 64 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (size_t k = 0; k < 2; k++) {
			unsigned char *p = bigmem_alloc(sizes[i], aligns[k]);

			ck_assert_msg(p != NULL, "size %zu", sizes[i]);
			ck_assert_msg(aligned(p, aligns[k]), "size %zu align %zu", sizes[i], aligns[k]);
			if (sizes[i] >= BIGMEM_MIN)
				ck_assert_msg(aligned(p, 4096), "size %zu: not page-aligned", sizes[i]);
			memset(p, 0xa5, sizes[i]);
			if (sizes[i])
				ck_assert_uint_eq(p[sizes[i] - 1], 0xa5);
			free(p);
		}
	}
}
END_TEST

START_TEST(impossible_sizes_are_refused)
{
	/* sizes whose rounding up would wrap (refused before any allocator
	 * sees them, so that a sanitizer's allocator does not abort) */
	ck_assert_ptr_null(bigmem_alloc(SIZE_MAX, 64));
	ck_assert_ptr_null(bigmem_alloc(SIZE_MAX - 10, 16));
	ck_assert_ptr_null(bigmem_alloc(SIZE_MAX - 4000, 16));	/* page rounding */
}
END_TEST

/* Pages of [p, p + len) resident, counted by mincore. */
static size_t resident(void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (len + (size_t)page - 1) / (size_t)page, count = 0;
	unsigned char *vec = malloc(n);

	ck_assert_ptr_nonnull(vec);
	ck_assert_int_eq(mincore(p, len, vec), 0);
	for (size_t i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}

START_TEST(large_blocks_are_present_before_use)
{
	size_t len = 16 * BIGMEM_MIN, page = (size_t)sysconf(_SC_PAGESIZE);
	void *probe = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *p;

	ck_assert_ptr_ne(probe, MAP_FAILED);
	if (madvise(probe, page, MADV_POPULATE_WRITE) != 0) {
		/* a kernel before 5.14: the advice is ignored, nothing to check */
		ck_assert_int_eq(errno, EINVAL);
		munmap(probe, page);
		return;
	}
	munmap(probe, page);
	p = bigmem_alloc(len, 64);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(resident(p, len), len / page);
	free(p);
}
END_TEST

static Suite *bigmem_suite(void)
{
	Suite *s = suite_create("bigmem");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, alignment_and_every_byte);
	tcase_add_test(tc, impossible_sizes_are_refused);
	tcase_add_test(tc, large_blocks_are_present_before_use);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(bigmem_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
