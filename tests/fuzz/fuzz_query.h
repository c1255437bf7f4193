/* fuzz_query.h - what the tree-free decoders' targets (fuzz_rays_direct.c,
 * fuzz_boxes_direct.c) compare: two decoded queries' header and rays, floats
 * bitwise. */
#ifndef TESTS_FUZZ_QUERY_H
#define TESTS_FUZZ_QUERY_H

#include <string.h>

#include "decode.h"

static inline int fuzz_same_ray(const struct qray *r, const struct qray *s)
{
	return !memcmp(&r->ray.origin, &s->ray.origin, sizeof(r->ray.origin)) &&
	       !memcmp(&r->ray.dir, &s->ray.dir, sizeof(r->ray.dir)) &&
	       !memcmp(&r->ray.tmax, &s->ray.tmax, sizeof(r->ray.tmax)) &&
	       !memcmp(r->dir, s->dir, sizeof(r->dir)) &&
	       !memcmp(&r->length, &s->length, sizeof(r->length)) &&
	       !memcmp(&r->unit, &s->unit, sizeof(r->unit));
}

/* 1 when a and b have the same form, options, transform and rays. */
static inline int fuzz_same_query(const struct query *a, const struct query *b)
{
	if (a->batch != b->batch || a->n != b->n || a->segments != b->segments ||
	    strcmp(a->items, b->items) || memcmp(&a->opts, &b->opts, sizeof(a->opts)) ||
	    a->has_xform != b->has_xform || memcmp(&a->xf, &b->xf, sizeof(a->xf)))
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!fuzz_same_ray(&a->rays[i], &b->rays[i]))
			return 0;
	return 1;
}

#endif
