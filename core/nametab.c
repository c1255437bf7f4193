/* nametab.c - sorted tables of fixed-size entries keyed by name (nametab.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nametab.h"

size_t nametab_find(const void *tab, size_t n, size_t stride, const char *name, int *found)
{
	const char *base = tab;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, base + mid * stride);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*found = 0;
	return lo;
}

void *nametab_insert(void **tab, size_t *n, size_t *cap, size_t stride, size_t at,
		     const char *name)
{
	char *base = *tab, *e;

	if (*n == *cap) {
		size_t c = *cap ? *cap : 8;

		if (*cap) {
			if (c > SIZE_MAX / 2 / stride)
				return NULL;
			c *= 2;
		}
		base = realloc(*tab, c * stride);
		if (!base)
			return NULL;
		*tab = base;
		*cap = c;
	}
	e = base + at * stride;
	memmove(e + stride, e, (*n - at) * stride);
	memset(e, 0, stride);
	memcpy(e, name, strlen(name));
	(*n)++;
	return e;
}

void nametab_remove(void *tab, size_t *n, size_t stride, size_t at)
{
	char *e = (char *)tab + at * stride;

	memmove(e, e + stride, (*n - at - 1) * stride);
	(*n)--;
}
