/* exact.h - exact signs of sums of products of floats, and the exact
 * ray/triangle test built on them (the slow path of the watertight test).
 *
 * Every float is m * 2^e with a 24-bit integer m, so a product of up to four
 * floats is a 96-bit integer times a power of two, and a sum of such products
 * fits a fixed 1280-bit two's-complement accumulator: no rounding at all, no
 * allocation. Used only when the fast float test cannot decide (rays within a
 * few ulps of an edge, a vertex or the plane), so its cost does not matter.
 */
#ifndef CORE_EXACT_H
#define CORE_EXACT_H

#include <stdint.h>

#include "vec.h"

#define XACC_WORDS 20

struct xacc {
	uint64_t w[XACC_WORDS];	/* little-endian words; bit 0 weighs 2^XACC_LSB */
};

void xacc_init(struct xacc *a);
/* a += sign * f1 * f2 * f3 * f4 (sign is +1 or -1; all finite). */
void xacc_add4(struct xacc *a, int sign, float f1, float f2, float f3, float f4);
void xacc_add(struct xacc *a, const struct xacc *b);	/* a += b */
int xacc_sign(const struct xacc *a);			/* -1, 0 or +1 */

/* a += sign * s * det[p; q; r] (rows), s a float factor (1 for none). */
void xacc_add_det3(struct xacc *a, int sign, float s, vec3 p, vec3 q, vec3 r);

/* 1 when (b-a)x(c-a) is exactly the zero vector. */
int exact_triangle_degenerate(vec3 a, vec3 b, vec3 c);

struct exact_hit {
	double t, u, v;		/* t in units of |d|; (u, v) barycentrics of b, c */
	int front;		/* dot((b-a)x(c-a), d) < 0 */
};

/*
 * Exact test of the segment o + t d, 0 <= t <= tmax (tmax may be INFINITY),
 * against the closed triangle abc, all in float as given. A hit needs
 * dot(n, d) != 0 (a ray in the triangle's plane or parallel to it misses).
 * cull: only front faces (dot(n, d) < 0) can be hit. Returns 1 and fills *h
 * (t, u, v rounded from exact quantities) on a hit, else 0.
 */
int exact_ray_triangle(vec3 o, vec3 d, float tmax, vec3 a, vec3 b, vec3 c, int cull,
		       struct exact_hit *h);

#endif
