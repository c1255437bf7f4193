/* teststr.h - shared helpers for the JSON suites: a seeded xorshift64*
 * generator (the same sequence for the same seed, every run) and a growable
 * NUL-terminated string for building bodies. */
#ifndef TESTS_TESTSTR_H
#define TESTS_TESTSTR_H

#include <stddef.h>
#include <stdint.h>

struct xs {
	uint64_t s;	/* non-zero seed */
};

uint64_t xs_next(struct xs *x);

/* A string grown by sb_put*; p is NUL-terminated once anything was put.
 * Start from {0}; free(p) when done. Out of memory fails the Check test. */
struct sb {
	char *p;
	size_t len, cap;
};

void sb_putn(struct sb *b, const char *s, size_t n);
void sb_puts(struct sb *b, const char *s);
void sb_putc(struct sb *b, char c);

#endif
