/* shotgen.h - random bodies of POST /v1/worlds/{world}/hitscan and /raycast
 * for the suites: the batch form, members in random order, random whitespace
 * and number spellings; one seeded sequence (the same every run). */
#ifndef TESTS_SHOTGEN_H
#define TESTS_SHOTGEN_H

#include <stddef.h>

#include "teststr.h"

unsigned shotgen_below(unsigned n);	/* [0, n) */
double shotgen_unit(void);		/* [0, 1) */
/* order[0..n) put in a random order (Fisher-Yates, n - 1 draws). */
void shotgen_shuffle(int *order, int n);
/* v spelt one of many ways (%.17g, %.3f, exponents, integers, 25 digits...). */
void shotgen_num(struct sb *b, double v);
/* A number: usually shotgen_num's v, now and then (bad) an odd spelling the
 * tree path reads as a number (-0, 1e400, 30 digits...). */
void shotgen_num_bad(struct sb *b, double v, int bad);
/* A float32-range value of some magnitude (1e-38 to 1e38, small integers...). */
double shotgen_value(void);
/* [v0, v1, v2]: base's values, else random ones (shotgen_value); nonzero:
 * v0 never zero (unless bad); bad: now and then an odd spelling. */
void shotgen_vec(struct sb *b, const double *base, int nonzero, int bad);
/* An id string: n 'x's when n >= 128, else n random pieces (JSON-spelt). */
void shotgen_id(struct sb *b, unsigned n, const char *const *pieces, size_t npieces);
/* Random JSON whitespace, often none. */
void shotgen_ws(struct sb *b);
/* A batch body of 1..70 shots for static_only (/raycast) or not; !bad: valid
 * but for the rare zero max_distance or direction a spelling rounds to, and
 * at most max_batch shots; bad: now and then a value or limit refused. */
void shotgen_body(struct sb *b, size_t max_batch, int static_only, int bad);

#endif
