/* boxscan.h - many axis-aligned boxes against one ray at once: the boxes
 * kept as six planes of floats (lo x, y, z, hi x, y, z), tested eight at a
 * time with AVX-512 or AVX2 where the CPU has them. Every answer is the one
 * tlas_ray_box gives for that box alone, bit for bit: the same double
 * arithmetic, lane by lane. */
#ifndef CORE_BOXSCAN_H
#define CORE_BOXSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "tlas.h"
#include "vec.h"

/* Most boxes one box_planes_hits call takes (the bits of its answer). */
#define BOXSCAN_MAX 32

struct box_planes {
	float *p;		/* plane j (0..5) of box i at p[j * stride + i] */
	size_t n, stride;	/* stride >= n + 7: a group of eight never reads past */
};

/* n boxes, every one empty (no ray meets it) until set. CORE_ENOMEM. */
enum core_result box_planes_init(struct box_planes *b, size_t n);
void box_planes_set(struct box_planes *b, size_t i, vec3 lo, vec3 hi);
void box_planes_release(struct box_planes *b);	/* b is empty after */
/* The same in memory the caller owns (box_planes_release is not for it):
 * mem holds box_planes_bytes(n) bytes (0: n is too large). */
size_t box_planes_bytes(size_t n);
void box_planes_init_at(struct box_planes *b, size_t n, float *mem);

enum boxscan_isa { BOXSCAN_AUTO, BOXSCAN_SCALAR, BOXSCAN_AVX2, BOXSCAN_AVX512 };
int boxscan_isa_supported(enum boxscan_isa isa);

/*
 * Boxes first .. first + n - 1 (n <= BOXSCAN_MAX, first + n <= b->n)
 * against r within [0, tmax]: bit j of the answer is tlas_ray_box(r, box
 * first + j, tmax). tin[j] (room for BOXSCAN_MAX) gets the box's entry t
 * where bit j is set; then tin[j] <= t' tells, for any t' <= tmax, whether
 * the box is still met within [0, t'] (what tlas_ray_box would answer).
 * An isa the CPU lacks runs the scalar code.
 */
uint32_t box_planes_hits_isa(const struct box_planes *b, const struct tlas_ray *r, size_t first,
			     unsigned n, double tmax, double *tin, enum boxscan_isa isa);

static inline uint32_t box_planes_hits(const struct box_planes *b, const struct tlas_ray *r,
				       size_t first, unsigned n, double tmax, double *tin)
{
	return box_planes_hits_isa(b, r, first, n, tmax, tin, BOXSCAN_AUTO);
}

#endif
