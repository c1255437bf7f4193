/* raygen.h - random bodies of POST /v1/meshes/{name}/raycast and /segment
 * (the batch and the single form) for the suites: members in random order, random
 * whitespace and number spellings, every option now and then; the random
 * sequence is shotgen's (the same every run). */
#ifndef TESTS_RAYGEN_H
#define TESTS_RAYGEN_H

#include <stddef.h>

#include "teststr.h"

/* A batch body of 1..70 rays (segments: segments) with random options;
 * !bad: valid but for the rare zero direction, zero-length segment or
 * singular transform a spelling rounds to, and at most max_batch items;
 * bad: now and then a value, type or limit refused. */
void raygen_body(struct sb *b, size_t max_batch, int segments, int bad);

/* The single form: one ray's (segment's) members at the top level beside
 * the same random options; bad as above, and now and then a batch beside
 * them (refused). */
void raygen_single_body(struct sb *b, int segments, int bad);

#endif
