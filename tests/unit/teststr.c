/* teststr.c - shared helpers for the JSON suites (teststr.h). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "teststr.h"

uint64_t xs_next(struct xs *x)
{
	x->s ^= x->s >> 12;
	x->s ^= x->s << 25;
	x->s ^= x->s >> 27;
	return x->s * 0x2545f4914f6cdd1dull;
}

void sb_putn(struct sb *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = realloc(b->p, cap);
		ck_assert_ptr_nonnull(b->p);
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sb_puts(struct sb *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

void sb_putc(struct sb *b, char c)
{
	sb_putn(b, &c, 1);
}
