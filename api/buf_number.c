/* buf_number.c - integers and shortest round-tripping floats and doubles
 * into a struct buf, without printf on the hot path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
	UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
	UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
	UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
	UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
	UINT64_C(1000000000000000), UINT64_C(10000000000000000),
	UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
	UINT64_C(10000000000000000000),
};

/* Decimal digits of v, most significant first, into out (>= 20 bytes);
 * returns how many. */
static int u64_digits(uint64_t v, char *out)
{
	int nd = 1, k;

	while (nd < 20 && v >= pow10_u64[nd])
		nd++;
	for (k = nd; k >= 2; k -= 2) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		memcpy(out + k - 2, digit_pairs + 2 * r, 2);
	}
	if (k)
		out[0] = (char)('0' + v);
	return nd;
}

void buf_put_u64(struct buf *b, uint64_t v)
{
	if (buf_make_room(b, 20))
		return;
	b->len += (size_t)u64_digits(v, b->data + b->len);
	b->data[b->len] = '\0';
}

void buf_put_i64(struct buf *b, int64_t v)
{
	if (v < 0) {
		buf_putc(b, '-');
		buf_put_u64(b, (uint64_t)0 - (uint64_t)v);
		return;
	}
	buf_put_u64(b, (uint64_t)v);
}

/* Digits of a decimal: the significant ones first and '0' after them, so
 * that fixed-size copies (no calls) lay them out. */
#define DIG_BUF 64	/* 20 digit places, then '0's */
#define DIG_COPY 24	/* more than the 17 digits a double may need */

/* Two digits of each pair value < 100 at out. */
static inline void put_pair(char *out, uint32_t r)
{
	memcpy(out, digit_pairs + 2 * r, 2);
}

/* The 8 places of x < 10^8 at out. */
static inline void put8(char *out, uint32_t x)
{
	uint32_t a = x / 10000, b = x % 10000;

	put_pair(out, a / 100);
	put_pair(out + 2, a % 100);
	put_pair(out + 4, b / 100);
	put_pair(out + 6, b % 100);
}

/*
 * The nd (<= 17) digits of v (which has exactly nd) in buf (DIG_BUF bytes):
 * the digit places are written right-aligned in buf[0..20) with no branch
 * on nd (a float's digit count varies from number to number, so a loop
 * over them would mispredict its exit), '0' after; returns where the nd
 * significant ones start.
 */
static const char *fill_digits(char *buf, uint64_t v, int nd)
{
	memset(buf + 20, '0', DIG_BUF - 20);
	if (v <= UINT32_MAX) {	/* every float: 32-bit arithmetic, 10 places */
		uint32_t w = (uint32_t)v;

		put_pair(buf + 10, w / 100000000);	/* < 43 */
		put8(buf + 12, w % 100000000);
	} else {
		uint64_t q = v / 100000000;

		put8(buf + 12, (uint32_t)(v % 100000000));
		put8(buf + 4, (uint32_t)(q % 100000000));
		q /= 100000000;	/* < 1845 */
		put_pair(buf, (uint32_t)q / 100);
		put_pair(buf + 2, (uint32_t)q % 100);
	}
	return buf + 20 - nd;
}

/*
 * Lay out nd significant digits (dig as fill_digits leaves it) whose first
 * digit has decimal exponent e10 the way ECMAScript's Number#toString does
 * (plain notation for 1e-7 < |x| < 1e21, else d.ddde[-]x, without a '+').
 * Writes at most BUF_NUMBER_LEN (25) bytes but may touch BUF_NUMBER_ROOM bytes of out;
 * returns the length written.
 */
static size_t format_decimal(char *out, int neg, const char *dig, int nd, int e10)
{
	int n = e10 + 1;	/* digits before the decimal point */
	size_t len = 0;

	out[0] = '-';
	len = neg != 0;	/* no branch: signs are as likely as not */
	if (nd <= n && n <= 21) {
		memcpy(out + len, dig, DIG_COPY);	/* the digits, then '0's (n <= 21) */
		len += (size_t)n;
	} else if (0 < n && n <= 21) {
		memcpy(out + len, dig, DIG_COPY);
		len += (size_t)n;
		out[len++] = '.';
		memcpy(out + len, dig + n, DIG_COPY);
		len += (size_t)(nd - n);
	} else if (-6 < n && n <= 0) {
		memset(out + len, '0', 8);
		out[len + 1] = '.';
		len += (size_t)(2 - n);
		memcpy(out + len, dig, DIG_COPY);
		len += (size_t)nd;
	} else {
		int x = e10;

		out[len++] = dig[0];
		if (nd > 1) {
			out[len++] = '.';
			memcpy(out + len, dig + 1, DIG_COPY);
			len += (size_t)(nd - 1);
		}
		out[len++] = 'e';
		if (x < 0) {
			out[len++] = '-';
			x = -x;
		}
		if (x >= 100)
			out[len++] = (char)('0' + x / 100);
		if (x >= 10)
			out[len++] = (char)('0' + x / 10 % 10);
		out[len++] = (char)('0' + x % 10);
	}
	return len;
}

/* v without its trailing decimal zeros (v != 0); *nd less one per zero. */
static uint64_t strip_zeros(uint64_t v, int *nd)
{
	while (v % 10 == 0) {
		v /= 10;
		(*nd)--;
	}
	return v;
}

/*
 * Slow path (printf + strtod): the shortest of p = pmin..pmax significant
 * digits whose reading by strtod, rounded to float when is_float, gives back
 * v. Returns them as an integer, *nd their count (trailing zeros stripped)
 * and *e10 the exponent of the first.
 */
static uint64_t shortest_printf(double v, int is_float, int pmin, int pmax, int *nd, int *e10)
{
	char tmp[64];
	uint64_t n = 0;
	int p;

	for (p = pmin; p <= pmax; p++) {
		double r;

		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
		r = strtod(tmp, NULL);
		if (is_float ? (float)r == (float)v : r == v)
			break;
	}
	if (p > pmax)
		snprintf(tmp, sizeof(tmp), "%.*e", pmax - 1, v);
	/* tmp is [-]d[.ddd]e[+-]xx */
	{
		const char *s = tmp;

		if (*s == '-')
			s++;
		*nd = 0;
		for (; (*s >= '0' && *s <= '9') || *s == '.'; s++) {
			if (*s != '.') {
				n = n * 10 + (uint64_t)(*s - '0');
				(*nd)++;
			}
		}
		*e10 = (int)strtol(s + 1, NULL, 10);
	}
	return strip_zeros(n, nd);
}

static const double pow10_exact[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* a * 10^k, rounded once (|k| <= 22, so 10^k is exact). */
static inline double scale10(double a, int k)
{
	return k >= 0 ? a * pow10_exact[k] : a / pow10_exact[-k];
}

/* 1 when the decimal n * 10^e (|e| <= 22, n < 2^53) read by strtod and
 * rounded to float is f: n and 10^e are exact doubles, so the one product or
 * quotient is rounded exactly as strtod rounds the decimal. */
static inline int reads_back(uint64_t n, int e, float f)
{
	return (float)scale10((double)n, e) == f;
}

/*
 * reads_back(n, e, f) for a candidate at distance dist from f and lim from
 * the edge of f's rounding interval (both in units of the candidate's last
 * digit scaled as x9 is, see shortest_float_fast), without a division when
 * the candidate is clearly inside or outside: dist and lim are off by less
 * than 3e-7 units (x9 < 1e9 is rounded once: 6e-8; reading the decimal
 * through a double first moves it by under 2^-53 relative: 1.2e-7), so a
 * margin of 1e-6 leaves only candidates at the very edge, which get the
 * exact test (the edge's own rounding rule included).
 */
static inline int reads_back_near(double dist, double lim, uint64_t n, int e, float f)
{
	if (dist < lim - 1e-6)
		return 1;
	if (dist > lim + 1e-6)
		return 0;
	return reads_back(n, e, f);
}

/* n rounded to a multiple of 10^(9 - p), divided by it (constant divisors:
 * the compiler multiplies instead of dividing). */
static inline uint32_t round_to_digits(uint32_t n, int p)
{
	switch (p) {
	case 6: return (n + 500) / 1000;
	case 7: return (n + 50) / 100;
	case 8: return (n + 5) / 10;
	}
	return n;
}

static const uint32_t pow10_u32[10] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
};

/*
 * Fast path for normal floats with 1e-14 <= |f| < 1e28: the nearest decimal
 * of p = 6, 7, 8, 9 significant digits, first that reads back. Six digits
 * are always below float precision (2^-24 relative) so, when any decimal of
 * <= 6 digits reads back, the nearest 6-digit one does too and stripping its
 * zeros finds it. A cheap distance test against the float's rounding
 * interval, scaled to 9-digit units, skips most candidates that cannot read
 * back; the survivors get the exact test. Returns the digits as an integer
 * (trailing zeros stripped), *nd their count, *e10_out the exponent of the
 * first; 0 to ask for the slow path.
 */
static uint32_t shortest_float_fast(float f, int *nd, int *e10_out)
{
	double a = fabs((double)f), x9, half, hx;
	uint32_t bits, hbits, n9;
	float hf;
	int e2, e10, p;

	memcpy(&bits, &f, sizeof(bits));
	e2 = (int)((bits >> 23) & 0xff) - 127;
	/* floor(e2 * log10(2)): floor(log10(a)) or one less */
	e10 = (e2 * 78913) >> 18;
	if (e10 < -14 || e10 > 27)
		return 0;
	x9 = scale10(a, 8 - e10);
	if (x9 >= 999999999.5) {
		if (++e10 > 27)
			return 0;
		x9 = scale10(a, 8 - e10);
	} else if (x9 < 99999999.5) {
		if (--e10 < -14)
			return 0;
		x9 = scale10(a, 8 - e10);
	}
	/* half an ulp above a (the wider side at a power of two), in 9-digit
	 * units, with a margin for the roundings of this estimate */
	hbits = (uint32_t)(e2 - 24 + 127) << 23;
	memcpy(&hf, &hbits, sizeof(hf));
	hx = scale10((double)hf, 8 - e10);
	half = hx * 1.000001 + 1e-6;
	n9 = (uint32_t)x9;
	/* unrolled: constant divisors, no jump table */
#pragma GCC unroll 4
	for (p = 6; p <= 9; p++) {
		uint32_t q = pow10_u32[9 - p];
		uint32_t n = p == 9 ? (uint32_t)(x9 + 0.5) : round_to_digits(n9, p);
		int e = e10 - p + 1;
		double dist = x9 - (double)n * q;

		/* below f at a power of two the interval is half as wide */
		if (fabs(dist) <= half &&
		    reads_back_near(fabs(dist), dist > 0 && !(bits & 0x7fffff) ? hx / 2 : hx, n, e,
				    (float)a))
			goto found;
		/* at a power of two the interval above f is twice as wide as
		 * below: the next decimal up may read back */
		if (p < 9 && !(bits & 0x7fffff) && (double)n * q < x9 &&
		    (double)(n + 1) * q - x9 <= half &&
		    reads_back_near((double)(n + 1) * q - x9, hx, n + 1, e, (float)a)) {
			n++;
			goto found;
		}
		continue;
found:
		if (n >= pow10_u32[p]) {	/* rounded up to 10^p */
			n /= 10;
			e++;
		}
		*nd = p;
		*e10_out = e + p - 1;
		return (uint32_t)strip_zeros(n, nd);
	}
	return 0;
}

/* The shortest decimal of a finite non-zero float into out (see
 * buf_format_float); *nd its digit count. */
static size_t format_float(char *out, float f, int *nd)
{
	char buf[DIG_BUF];
	uint64_t n;
	int e10;

	n = shortest_float_fast(f, nd, &e10);
	if (!n)
		n = shortest_printf((double)f, 1, 1, 9, nd, &e10);
	return format_decimal(out, signbit(f) != 0, fill_digits(buf, n, *nd), *nd, e10);
}

size_t buf_format_float(char *out, float f)
{
	int nd;

	if (!isfinite(f)) {
		memcpy(out, "null", 4);
		return 4;
	}
	if (f == 0) {
		out[0] = '0';
		return 1;
	}
	return format_float(out, f, &nd);
}

/* Append the len (<= 25) bytes of a formatted number of nd digits in tmp
 * (BUF_NUMBER_ROOM bytes). Room for nd + 32 as ever, so that the cap
 * (limit) trips at the same bytes; a fixed-size copy, no call. */
static void put_formatted(struct buf *b, const char *tmp, size_t len, int nd)
{
	if (buf_make_room(b, (size_t)nd + 32))
		return;
	memcpy(b->data + b->len, tmp, 32);
	b->len += len;
	b->data[b->len] = '\0';
}

/* Shortest round-tripping decimal of a float (see buf.h). -0 prints as "0"
 * (answers such as a barycentric -0 read better so; the value compares
 * equal); NaN and infinities as null. */
void buf_put_float(struct buf *b, float f)
{
	char tmp[BUF_NUMBER_ROOM];
	size_t len;
	int nd;

	if (!isfinite(f)) {
		buf_append(b, "null", 4);
		return;
	}
	if (f == 0) {
		buf_putc(b, '0');
		return;
	}
	len = format_float(tmp, f, &nd);
	put_formatted(b, tmp, len, nd);
}

/*
 * The double fast path: 15 significant digits are below double precision
 * (a 15-digit decimal per 10^-14 relative, a double's rounding interval is
 * 2^-52 wide), so at most one 15-digit decimal reads back as d, and when one
 * does it is the nearest, the one printf's "%.14e" prints. With |d| between
 * 1e-8 and 1e37, n = d * 10^(14 - e10) rounded has 15 digits and the test
 * n * 10^(e10 - 14) == d is one correctly rounded operation, exactly
 * strtod's reading (n < 2^53, |e10 - 14| <= 22). Returns n with trailing
 * zeros stripped (*nd digits, *e10_out the first one's exponent), or 0 when
 * no 15-digit decimal is found this way (the printf search decides then).
 */
static uint64_t shortest_double_fast(double d, int *nd, int *e10_out)
{
	double a = fabs(d), x;
	uint64_t n;
	int e2, e10;

	if (!(a >= 1e-8 && a < 1e37))
		return 0;
	e2 = ilogb(a);
	e10 = (e2 * 78913) >> 18;	/* floor(log10(a)) or one less */
	if (14 - e10 > 22 || 14 - e10 < -22)
		return 0;
	x = scale10(a, 14 - e10);
	if (x >= 999999999999999.5) {
		if (14 - ++e10 < -22)
			return 0;
		x = scale10(a, 14 - e10);
	}
	if (x < 99999999999999.5 || x >= 999999999999999.5)
		return 0;
	n = (uint64_t)(x + 0.5);
	if (scale10((double)n, e10 - 14) != a)
		return 0;
	*nd = 15;
	*e10_out = e10;
	return strip_zeros(n, nd);
}

/* The shortest decimal of a finite non-zero double; *nd its digit count. */
static size_t format_double(char *out, double d, int *nd)
{
	char buf[DIG_BUF];
	uint64_t n;
	int e10;

	n = shortest_double_fast(d, nd, &e10);
	/* 15 digits are below double precision: see shortest_float_fast */
	if (!n)
		n = shortest_printf(d, 0, 15, 17, nd, &e10);
	return format_decimal(out, signbit(d) != 0, fill_digits(buf, n, *nd), *nd, e10);
}

size_t buf_format_double(char *out, double d)
{
	int nd;

	if (!isfinite(d)) {
		memcpy(out, "null", 4);
		return 4;
	}
	if (d == 0) {
		out[0] = '0';
		return 1;
	}
	return format_double(out, d, &nd);
}

/* Shortest round-tripping decimal (<= 17 digits) of a double: a 15-digit
 * fast path, else printf's search. -0 prints as "0". */
void buf_put_double(struct buf *b, double d)
{
	char tmp[BUF_NUMBER_ROOM];
	size_t len;
	int nd;

	if (!isfinite(d)) {
		buf_append(b, "null", 4);
		return;
	}
	if (d == 0) {
		buf_putc(b, '0');
		return;
	}
	len = format_double(tmp, d, &nd);
	put_formatted(b, tmp, len, nd);
}
