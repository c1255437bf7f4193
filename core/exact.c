/* exact.c - exact float arithmetic for the watertight ray/triangle decision.
 *
 * The Plucker-style edge functions of Woop, Benthin and Wald (JCGT 2013,
 * "Watertight Ray/Triangle Intersection") are evaluated here without any
 * rounding: with a = A-O, b = B-O, c = C-O,
 *   E_ab = d . (a x b) = det[d; A; B] - det[d; A; O] - det[d; O; B]
 * (and cyclically), so each is a sum of 18 signed products of three input
 * floats. The line o + t d meets the closed triangle iff the three have one
 * sign (zeros allowed) and their sum d . n is not zero. Because the same
 * exact E_ab is used (negated) by the two triangles sharing edge AB, no ray
 * can pass between them: watertight by construction.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exact.h"

/* The lowest bit a product of four floats can carry: 4 * (-149 - 23). */
#define XACC_LSB (-688)
/* Room for the largest product (below 2^512, so bit 1200) plus carries of a
 * few hundred terms, under the sign bit. */
_Static_assert(XACC_WORDS * 64 >= 512 - XACC_LSB + 16, "exact accumulator too narrow");

void xacc_init(struct xacc *a)
{
	memset(a, 0, sizeof(*a));
}

/* f = m * 2^e, m a signed integer of at most 24 bits, from the IEEE bits. */
static void split_float(float f, int64_t *m, int *e)
{
	uint32_t bits;
	int be;
	int64_t mant;

	memcpy(&bits, &f, sizeof(bits));
	be = (int)((bits >> 23) & 0xff);
	mant = bits & 0x7fffff;
	if (be) {
		mant |= 0x800000;	/* normal: implicit leading one */
		*e = be - 150;
	} else {
		*e = -149;		/* subnormal */
	}
	*m = bits >> 31 ? -mant : mant;
}

/* Add (or subtract) the 128-bit magnitude v shifted left by bit. */
static void xacc_addmag(struct xacc *a, int neg, unsigned __int128 v, int bit)
{
	int q = bit / 64, r = bit % 64, i;
	uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);
	uint64_t part[3];

	part[0] = lo << r;
	part[1] = r ? (lo >> (64 - r)) | (hi << r) : hi;
	part[2] = r ? hi >> (64 - r) : 0;
	if (!neg) {
		uint64_t carry = 0;

		for (i = q; i < XACC_WORDS; i++) {
			uint64_t add = i - q < 3 ? part[i - q] : 0;
			uint64_t s = a->w[i] + add;
			uint64_t c1 = s < add;
			uint64_t s2 = s + carry;

			c1 |= s2 < s;
			a->w[i] = s2;
			carry = c1;
			if (i - q >= 2 && !carry)
				break;
		}
	} else {
		uint64_t borrow = 0;

		for (i = q; i < XACC_WORDS; i++) {
			uint64_t sub = i - q < 3 ? part[i - q] : 0;
			uint64_t d1 = a->w[i] - sub;
			uint64_t b1 = a->w[i] < sub;
			uint64_t d2 = d1 - borrow;

			b1 |= d1 < borrow;
			a->w[i] = d2;
			borrow = b1;
			if (i - q >= 2 && !borrow)
				break;
		}
	}
}

void xacc_add4(struct xacc *a, int sign, float f1, float f2, float f3, float f4)
{
	int64_t m1, m2, m3, m4;
	int e1, e2, e3, e4, neg;
	unsigned __int128 p;
	uint64_t p12, p34;

	if (f1 == 0 || f2 == 0 || f3 == 0 || f4 == 0)
		return;
	split_float(f1, &m1, &e1);
	split_float(f2, &m2, &e2);
	split_float(f3, &m3, &e3);
	split_float(f4, &m4, &e4);
	neg = (sign < 0) ^ (m1 < 0) ^ (m2 < 0) ^ (m3 < 0) ^ (m4 < 0);
	p12 = (uint64_t)llabs(m1) * (uint64_t)llabs(m2);
	p34 = (uint64_t)llabs(m3) * (uint64_t)llabs(m4);
	p = (unsigned __int128)p12 * p34;
	xacc_addmag(a, neg, p, e1 + e2 + e3 + e4 - XACC_LSB);
}

void xacc_add(struct xacc *a, const struct xacc *b)
{
	uint64_t carry = 0;

	for (int i = 0; i < XACC_WORDS; i++) {
		uint64_t s = a->w[i] + b->w[i];
		uint64_t c1 = s < b->w[i];
		uint64_t s2 = s + carry;

		c1 |= s2 < s;
		a->w[i] = s2;
		carry = c1;
	}
}

int xacc_sign(const struct xacc *a)
{
	if (a->w[XACC_WORDS - 1] >> 63)
		return -1;
	for (int i = 0; i < XACC_WORDS; i++)
		if (a->w[i])
			return 1;
	return 0;
}

void xacc_add_det3(struct xacc *a, int sign, float s, vec3 p, vec3 q, vec3 r)
{
	/* p . (q x r) */
	xacc_add4(a, sign, s, p.x, q.y, r.z);
	xacc_add4(a, -sign, s, p.x, q.z, r.y);
	xacc_add4(a, sign, s, p.y, q.z, r.x);
	xacc_add4(a, -sign, s, p.y, q.x, r.z);
	xacc_add4(a, sign, s, p.z, q.x, r.y);
	xacc_add4(a, -sign, s, p.z, q.y, r.x);
}

int exact_triangle_degenerate(vec3 a, vec3 b, vec3 c)
{
	/* n = a x b + b x c + c x a; each component is 6 products of two floats. */
	float pa[3] = { a.x, a.y, a.z }, pb[3] = { b.x, b.y, b.z }, pc[3] = { c.x, c.y, c.z };

	for (int k = 0; k < 3; k++) {
		int i = (k + 1) % 3, j = (k + 2) % 3;
		struct xacc acc;

		xacc_init(&acc);
		xacc_add4(&acc, 1, pa[i], pb[j], 1, 1);
		xacc_add4(&acc, -1, pa[j], pb[i], 1, 1);
		xacc_add4(&acc, 1, pb[i], pc[j], 1, 1);
		xacc_add4(&acc, -1, pb[j], pc[i], 1, 1);
		xacc_add4(&acc, 1, pc[i], pa[j], 1, 1);
		xacc_add4(&acc, -1, pc[j], pa[i], 1, 1);
		if (xacc_sign(&acc))
			return 0;
	}
	return 1;
}

/* E_pq = d . ((P-O) x (Q-O)), scaled by s. */
static void edge_function(struct xacc *acc, float s, vec3 o, vec3 d, vec3 p, vec3 q)
{
	xacc_add_det3(acc, 1, s, d, p, q);
	xacc_add_det3(acc, -1, s, d, p, o);
	xacc_add_det3(acc, -1, s, d, o, q);
}

/* Approximate value of an accumulator (for t and the barycentrics): the top
 * three non-zero words, scaled once. Summing every word before scaling would
 * overflow a double for products near the top of the float range (values up
 * to 2^512 sit at bit 1200 of the accumulator, far past 2^1024 before the
 * 2^XACC_LSB scale). The words below the top three change the result by less
 * than 2^-128 relative. */
static double xacc_value(const struct xacc *a)
{
	struct xacc m = *a;
	int neg = xacc_sign(a) < 0, top = XACC_WORDS - 1, lo;
	double v = 0;

	if (neg) {	/* two's complement negate */
		uint64_t carry = 1;

		for (int i = 0; i < XACC_WORDS; i++) {
			uint64_t x = ~m.w[i] + carry;

			carry = carry && x == 0;
			m.w[i] = x;
		}
	}
	while (top > 0 && m.w[top] == 0)
		top--;
	lo = top >= 2 ? top - 2 : 0;
	for (int i = top; i >= lo; i--)
		v = v * 18446744073709551616.0 + (double)m.w[i];
	v = ldexp(v, XACC_LSB + 64 * lo);
	return neg ? -v : v;
}

/*
 * The double-precision filter in front of the exact test. Each quantity is
 * evaluated in double with a bound on its rounding error; a sign is certain
 * when the value exceeds its bound. Inputs are floats, so A-O is exact or
 * off by one double rounding; each product or sum adds at most one more
 * (Shewchuk, "Adaptive Precision Floating-Point Arithmetic", 1997, gives
 * bounds of this form). FILTER_EPS is 16 units of 2^-53, more than the
 * first-order count (at most 8) for every quantity below.
 */
#define FILTER_EPS (16 * 0x1p-53)

struct dvec {
	double x, y, z;
};

static struct dvec dsub(vec3 p, vec3 q)
{
	struct dvec r = { (double)p.x - q.x, (double)p.y - q.y, (double)p.z - q.z };

	return r;
}

/* v = d . (p x q) and its permanent |d| . (|p| x |q|) */
static double dtriple(struct dvec d, struct dvec p, struct dvec q, double *perm)
{
	double cx = p.y * q.z - p.z * q.y, cy = p.z * q.x - p.x * q.z, cz = p.x * q.y - p.y * q.x;
	double px = fabs(p.y * q.z) + fabs(p.z * q.y), py = fabs(p.z * q.x) + fabs(p.x * q.z);
	double pz = fabs(p.x * q.y) + fabs(p.y * q.x);

	*perm = fabs(d.x) * px + fabs(d.y) * py + fabs(d.z) * pz;
	return d.x * cx + d.y * cy + d.z * cz;
}

static int dsign(double v, double bound)
{
	return v > bound ? 1 : v < -bound ? -1 : 0;	/* 0: not certain */
}

/* 1 hit, 0 miss, -1 when the filter cannot decide. */
static int filtered_ray_triangle(vec3 o, vec3 d, float tmax, vec3 a, vec3 b, vec3 c, int cull,
				 struct exact_hit *h)
{
	struct dvec dd = { d.x, d.y, d.z }, pa = dsub(a, o), pb = dsub(b, o), pc = dsub(c, o);
	double perm_ab, perm_bc, perm_ca, perm_g, eab, ebc, eca, dn, bdn, g, bg;
	int sab, sbc, sca, sdn, sg;

	eab = dtriple(dd, pa, pb, &perm_ab);
	ebc = dtriple(dd, pb, pc, &perm_bc);
	eca = dtriple(dd, pc, pa, &perm_ca);
	sab = dsign(eab, FILTER_EPS * perm_ab);
	sbc = dsign(ebc, FILTER_EPS * perm_bc);
	sca = dsign(eca, FILTER_EPS * perm_ca);
	if ((sab < 0 || sbc < 0 || sca < 0) && (sab > 0 || sbc > 0 || sca > 0))
		return 0;	/* two certain, opposite signs: outside */
	if (!sab || !sbc || !sca)
		return -1;
	dn = eab + ebc + eca;	/* all one sign: no cancellation */
	bdn = FILTER_EPS * (perm_ab + perm_bc + perm_ca);
	sdn = dsign(dn, bdn);
	if (!sdn)
		return -1;
	if (cull && sdn > 0)
		return 0;
	g = dtriple(pa, pb, pc, &perm_g);	/* (A-O) . ((B-O) x (C-O)) */
	bg = FILTER_EPS * perm_g;
	sg = dsign(g, bg);
	if (!sg)
		return -1;
	if (sg != sdn)
		return 0;	/* behind the origin */
	if (isfinite(tmax)) {
		/* t <= tmax  <=>  |g| <= tmax |dn| */
		double lim = (double)tmax * fabs(dn) - fabs(g);
		double blim = (double)tmax * bdn + bg + FILTER_EPS * ((double)tmax * fabs(dn) + fabs(g));
		int sl = dsign(lim, blim);

		if (!sl)
			return -1;
		if (sl < 0)
			return 0;
	}
	/* t = g / dn only when both are known to 2^-23 of their value: far
	 * from the triangle (10^4 of its sizes and more) or grazing it, g
	 * cancels and its bound dwarfs it (t off by 1e-3 relative), and a
	 * closest answer then depended on the order the walk met the leaves:
	 * a hit the walk had cut off as certainly farther than its closest
	 * could, met earlier (a ray stream, raycast_stream.h), answer instead.
	 * Within 2^-23, a hit certainly past a limit (the leaf test's 2^-20
	 * slacks) stays past it. Otherwise the exact sums below give t. */
	if (bg > fabs(g) * 0x1p-23 || bdn > fabs(dn) * 0x1p-23)
		return -1;
	h->t = g / dn;
	h->u = eca / dn;
	h->v = eab / dn;
	h->front = sdn < 0;
	return 1;
}

int exact_ray_triangle(vec3 o, vec3 d, float tmax, vec3 a, vec3 b, vec3 c, int cull,
		       struct exact_hit *h)
{
	struct xacc eab, ebc, eca, dn, g;
	int sab, sbc, sca, sdn, sg, f;

	f = filtered_ray_triangle(o, d, tmax, a, b, c, cull, h);
	if (f >= 0)
		return f;

	xacc_init(&eab);
	xacc_init(&ebc);
	xacc_init(&eca);
	edge_function(&eab, 1, o, d, a, b);
	edge_function(&ebc, 1, o, d, b, c);
	sab = xacc_sign(&eab);
	sbc = xacc_sign(&ebc);
	if (sab * sbc < 0)
		return 0;	/* outside, whatever the third says */
	edge_function(&eca, 1, o, d, c, a);
	sca = xacc_sign(&eca);
	if ((sab < 0 || sbc < 0 || sca < 0) && (sab > 0 || sbc > 0 || sca > 0))
		return 0;	/* the line passes outside */
	dn = eab;
	xacc_add(&dn, &ebc);
	xacc_add(&dn, &eca);
	sdn = xacc_sign(&dn);	/* sign of d . n */
	if (sdn == 0 || (cull && sdn > 0))
		return 0;
	/* g = (A-O) . n = det[A;B;C] - det[O;B;C] - det[A;O;C] - det[A;B;O]; t = g / (d.n) */
	xacc_init(&g);
	xacc_add_det3(&g, 1, 1, a, b, c);
	xacc_add_det3(&g, -1, 1, o, b, c);
	xacc_add_det3(&g, -1, 1, a, o, c);
	xacc_add_det3(&g, -1, 1, a, b, o);
	sg = xacc_sign(&g);
	if (sg * sdn < 0)
		return 0;	/* behind the origin */
	if (isfinite(tmax)) {
		/* t <= tmax  <=>  sdn * (tmax * (d.n) - g) >= 0 */
		struct xacc lim;

		xacc_init(&lim);
		edge_function(&lim, tmax, o, d, a, b);
		edge_function(&lim, tmax, o, d, b, c);
		edge_function(&lim, tmax, o, d, c, a);
		xacc_add_det3(&lim, -1, 1, a, b, c);
		xacc_add_det3(&lim, 1, 1, o, b, c);
		xacc_add_det3(&lim, 1, 1, a, o, c);
		xacc_add_det3(&lim, 1, 1, a, b, o);
		if (xacc_sign(&lim) * sdn < 0)
			return 0;
	}
	{
		double vdn = xacc_value(&dn);

		h->t = xacc_value(&g) / vdn;
		h->u = xacc_value(&eca) / vdn;
		h->v = xacc_value(&eab) / vdn;
		if (h->t < 0)
			h->t = 0;
		h->front = sdn < 0;
	}
	return 1;
}
