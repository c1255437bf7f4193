/* json_number.c - JSON number text to double, bit-identical to strtod (Clinger's fast path,
 * 128-bit integer rounding for 16 to 19 digits, strtod_l beyond); the cursor's number step
 * checks and converts in one pass. */
#include <float.h>
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;	/* written once under c_locale_once, then read-only */

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Powers of ten as integers, up to the eight digits of one SWAR step. */
static const uint64_t pow10_exact_u64[9] = { 1, 10, 100, 1000, 10000, 100000, 1000000,
					     10000000, 100000000 };

/* Exactly representable powers of ten: 10^22 is the last one (5^22 < 2^53). */
static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 u128;

/* 10^k for k <= 22 (10^20 and up are past 64 bits). */
static const u128 pow10_u128[23] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
	UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
	UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
	UINT64_C(10000000000000000), UINT64_C(100000000000000000),
	UINT64_C(1000000000000000000), UINT64_C(10000000000000000000),
	(u128)UINT64_C(10000000000000000000) * 10, (u128)UINT64_C(10000000000000000000) * 100,
	(u128)UINT64_C(10000000000000000000) * 1000,
};

/*
 * The double nearest the exact value (q + f) * 2^e2, where 0 <= f < 1 is
 * above 0 exactly when sticky is set: q's top 53 bits, rounded by the bits
 * below them and the sticky bit, half to even (strtod's rounding). q >= 2^53
 * and the result a normal double, as wide_mantissa's callers ensure.
 */
static double round_wide(u128 q, int sticky, int e2)
{
	uint64_t hi = (uint64_t)(q >> 64), top, bits;
	int width = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)q);
	int drop = width - 53;	/* >= 1: q >= 2^53 */
	u128 rest = q & (((u128)1 << drop) - 1), half = (u128)1 << (drop - 1);
	double d;

	top = (uint64_t)(q >> drop);
	if (rest > half || (rest == half && (sticky || (top & 1))))
		top++;
	e2 += drop;
	if (top == UINT64_C(1) << 53) {	/* rounded up to the next power of two */
		top >>= 1;
		e2++;
	}
	/* top * 2^e2 with 2^52 <= top < 2^53: biased exponent e2 + 52 + 1023 */
	bits = (uint64_t)(e2 + 52 + 1023) << 52 | (top & ((UINT64_C(1) << 52) - 1));
	memcpy(&d, &bits, sizeof(d));
	return d;
}

/*
 * m * 10^e10 for a mantissa past Clinger's 2^53 (the 16 to 19 digits of a
 * float printed as a double, "0.10000000149011612"), correctly rounded in
 * integer arithmetic: for -22 <= e10 < 0 the quotient of m (shifted to the
 * top of 64 bits) times 2^64 by 10^-e10, at least 54 bits since 10^22 <
 * 2^74, with its remainder as the sticky bit; for 0 <= e10 <= 19 the exact
 * 128-bit product. Both values are normal doubles (2^53 / 10^22 is about
 * 9e-7, 2^64 * 10^19 about 2e38). 0, or -1 for other exponents.
 */
static int wide_mantissa(uint64_t m, int e10, int neg, double *out)
{
	double d;

	if (e10 < 0 && e10 >= -22) {
		int lz = __builtin_clzll(m);
		u128 num = (u128)(m << lz) << 64, den = pow10_u128[-e10], q = num / den;

		d = round_wide(q, num - q * den != 0, -64 - lz);
	} else if (e10 >= 0 && e10 <= 19) {
		d = round_wide((u128)m * (uint64_t)pow10_u128[e10], 0, 0);
	} else {
		return -1;
	}
	*out = neg ? -d : d;
	return 0;
}
#else
static int wide_mantissa(uint64_t m, int e10, int neg, double *out)
{
	(void)m;
	(void)e10;
	(void)neg;
	(void)out;
	return -1;
}
#endif

/*
 * The exact m * 10^e10 (negated when neg) into *out when one IEEE operation
 * gives it: m <= 2^53 and |e10| <= 22 (see number_fast), or when m is wider
 * and wide_mantissa's integer arithmetic does. 0, or -1 when the caller must
 * ask strtod.
 */
static inline int clinger(uint64_t m, int e10, int neg, double *out)
{
	double d;

	if (m == 0) {
		*out = neg ? -0.0 : 0.0;
		return 0;
	}
	if (e10 < -22 || e10 > 22)
		return -1;
	if (m > (UINT64_C(1) << 53))
		return wide_mantissa(m, e10, neg, out);
	d = (double)m;
	d = e10 >= 0 ? d * pow10_exact[e10] : d / pow10_exact[-e10];
	*out = neg ? -d : d;
	return 0;
}

/*
 * Clinger's fast path (W. D. Clinger, "How to read floating point numbers
 * accurately", PLDI 1990): with an integer mantissa m <= 2^53 and |e| <= 22
 * both m and 10^|e| are exact doubles, so one IEEE multiplication or division
 * gives the correctly rounded m * 10^e, which is what glibc's strtod returns.
 * Needs double arithmetic without excess precision (FLT_EVAL_METHOD 0) and
 * round-to-nearest (the daemon never changes the rounding mode).
 */
static int number_fast(const char *s, size_t len, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	uint64_t m = 0;
	size_t i = 0;
	int neg = 0, nd = 0, e10 = 0, ex = 0, eneg = 0;

	if (s[i] == '-') {
		neg = 1;
		i++;
	}
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (m || s[i] != '0') {
			if (++nd > 19)
				return -1;
			m = m * 10 + (uint64_t)(s[i] - '0');
		}
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
			if (m || s[i] != '0') {
				if (++nd > 19)
					return -1;
				m = m * 10 + (uint64_t)(s[i] - '0');
			}
			e10--;
		}
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		for (; i < len; i++) {
			if (ex < 100000)
				ex = ex * 10 + (s[i] - '0');
		}
	}
	return clinger(m, e10 + (eneg ? -ex : ex), neg, out);
#else
	return -1;
#endif
}

/* strtod_l in the C locale of s[0..len) (len <= JSON_MAX_NUMBER_LEN); 0 or -1. */
static int number_slow(const char *s, size_t len, double *out)
{
	char tmp[JSON_MAX_NUMBER_LEN + 1];

	if (pthread_once(&c_locale_once, c_locale_init) || c_locale == (locale_t)0)
		return -1;
	if (len > JSON_MAX_NUMBER_LEN)
		len = JSON_MAX_NUMBER_LEN;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*out = strtod_l(tmp, NULL, c_locale);
	return 0;
}


int json_number(const char *s, size_t len, double *out)
{
	if (number_fast(s, len, out) == 0)
		return 0;
	return number_slow(s, len, out);
}

/* 1 when ch is an ASCII digit, its value in *d. */
static inline int digit(unsigned char ch, unsigned *d)
{
	*d = (unsigned)ch - '0';
	return *d <= 9;
}

/*
 * Eight digits at a time (the SWAR tricks of D. Lemire's fast_float): on a
 * little-endian machine, load8 reads s[0..8) with s[0] lowest;
 * leading_digits counts the digits it starts with, eight_digit_values is
 * the value of eight digits.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HAVE_SWAR 1
static inline uint64_t load8(const unsigned char *s)
{
	uint64_t v;

	memcpy(&v, s, sizeof(v));
	return v;
}

/* The value of eight digit values 0..9, one per byte, s[0]'s lowest. */
static inline uint64_t eight_digit_values(uint64_t v)
{
	const uint64_t mask = UINT64_C(0x000000FF000000FF);
	const uint64_t mul1 = UINT64_C(0x000F424000000064);	/* 100 + (10^6 << 32) */
	const uint64_t mul2 = UINT64_C(0x0000271000000001);	/* 1 + (10^4 << 32) */

	v = v * 10 + (v >> 8);
	return (((v & mask) * mul1) + (((v >> 16) & mask) * mul2)) >> 32;
}

/* How many of the eight bytes of v ^ '0'-bytes (x) lead as digits: a byte
 * is flagged when its value is over 9 (x + 0x76 reaches 0x80) or has the
 * high bit; a carry between bytes only starts past the first flagged one. */
static inline unsigned leading_digits(uint64_t x)
{
	uint64_t flags = ((x + UINT64_C(0x7676767676767676)) | x) & UINT64_C(0x8080808080808080);

	return flags ? (unsigned)__builtin_ctzll(flags) >> 3 : 8;
}
#else
#define HAVE_SWAR 0
#endif

/* Gather the digits at s[*i..n) into *m (m * 10 + digit each, wrapping);
 * *i ends after the last digit. Where eight bytes can be read, the run of
 * digits among them is taken at once: shifted up to the top bytes, the
 * zero bytes below are leading zeros. */
static inline void gather_digits(const unsigned char *s, size_t n, size_t *i, uint64_t *m)
{
	size_t k = *i;
	uint64_t v = *m;
	unsigned d;

#if HAVE_SWAR
	while (n - k >= 8) {
		uint64_t x = load8(s + k) ^ UINT64_C(0x3030303030303030);
		unsigned run = leading_digits(x);

		if (run == 0)
			break;
		v = v * pow10_exact_u64[run] + eight_digit_values(run == 8 ? x : x << (8 * (8 - run)));
		k += run;
		if (run < 8) {
			*i = k;
			*m = v;
			return;
		}
	}
#endif
	while (k < n && digit(s[k], &d)) {
		v = v * 10 + d;
		k++;
	}
	*i = k;
	*m = v;
}

/*
 * One pass over the number at c->i: the RFC 8259 checks (the same messages
 * at the same offsets as ever) while the digits gather into a 64-bit
 * mantissa; numbers of at most 19 digits that Clinger's path can take never
 * see the text again. The rest (long mantissas, big exponents) go to strtod.
 */
/* json_cursor_number's general case: any spelling, every check. */
static __attribute__((noinline)) int number_general(struct json_cursor *c, double *out)
{
	const unsigned char *s = c->s;
	size_t n = c->n, i = c->i, start = c->i, first, nd;
	uint64_t m = 0;		/* wraps past 19 digits: then unused */
	int neg = 0, frac = 0, ex = 0;
	unsigned d;

	if (i < n && s[i] == '-') {
		neg = 1;
		i++;
	}
	if (i >= n || !digit(s[i], &d)) {
		c->i = i;
		return json_cursor_fail(c, API_INVALID_JSON, "a number needs digits");
	}
	first = i;
	if (d == 0) {
		i++;
		if (i < n && digit(s[i], &d)) {
			c->i = i;
			return json_cursor_fail(c, API_INVALID_JSON, "leading zero in a number");
		}
	} else {
		gather_digits(s, n, &i, &m);
	}
	if (i < n && s[i] == '.') {
		size_t f0 = ++i;

		if (i >= n || !digit(s[i], &d)) {
			c->i = i;
			return json_cursor_fail(c, API_INVALID_JSON,
						"digits must follow the decimal point");
		}
		gather_digits(s, n, &i, &m);
		frac = (int)(i - f0);
	}
	/* digits gathered, a leading "0" included (it adds nothing to m) */
	nd = i - first - (frac > 0);
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		int eneg = 0;

		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		if (i >= n || !digit(s[i], &d)) {
			c->i = i;
			return json_cursor_fail(c, API_INVALID_JSON, "digits must follow the exponent");
		}
		do {
			if (ex < 100000)
				ex = ex * 10 + (int)d;
			i++;
		} while (i < n && digit(s[i], &d));
		if (eneg)
			ex = -ex;
	}
	if (i - start > JSON_MAX_NUMBER_LEN)
		return json_cursor_fail(c, API_INVALID_REQUEST,
					"numbers longer than 63 characters are not accepted");
	c->i = i;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	if (nd <= 19 && clinger(m, ex - frac, neg, out) == 0)
		return 0;
#endif
	if (number_slow((const char *)s + start, i - start, out))
		return json_cursor_fail(c, API_INTERNAL, "out of memory");
	return 0;
}

#if HAVE_SWAR && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
/*
 * json_cursor_number's fast path for 16 to 19 digits (a float printed as a
 * double: "-0.0735000029206275940", "254.32672119140625"): the same
 * spellings, with up to 23 fraction digits in three eight-byte reads (34
 * bytes left), the mantissa (< 10^19) to Clinger's division up to 2^53 and
 * to wide_mantissa past it. Anything else takes number_general. Kept apart
 * (not inlined) so that the short numbers' path stays as lean as it was,
 * and reading the number again from its start: taking the caller's digits
 * as arguments saved long numbers 3 % but cost the 9-digit ones 0.5 %
 * (callgrind, 1000-ray batches).
 */
static __attribute__((noinline)) int number_long(struct json_cursor *c, double *out)
{
	static const uint64_t zeros = UINT64_C(0x3030303030303030);
	const unsigned char *p = c->s + c->i;
	int neg = p[0] == '-';
	uint64_t x = load8(p + neg) ^ zeros, y, z, w = 0, m;
	unsigned a = leading_digits(x), b, b2, b3 = 0, len;
	double d;

	/* the caller saw 1..7 integer digits, '.', then 8 fraction digits */
	m = eight_digit_values(x << (8 * (8 - a)));
	len = (unsigned)neg + a;
	y = load8(p + len + 1) ^ zeros;
	b = leading_digits(y);
	z = load8(p + len + 9) ^ zeros;
	b2 = leading_digits(z);
	if (b2 == 8) {
		/* a third read, to p[len + 24] <= p[32] */
		if (c->n - c->i < 34)
			return number_general(c, out);
		w = load8(p + len + 17) ^ zeros;
		b3 = leading_digits(w);
	}
	if (b != 8 || b3 == 8 || a + b + b2 + b3 > 19)
		return number_general(c, out);
	m = m * pow10_exact_u64[8] + eight_digit_values(y);
	if (b2 < 8) {
		if (b2)
			m = m * pow10_exact_u64[b2] + eight_digit_values(z << (8 * (8 - b2)));
	} else {
		m = m * pow10_exact_u64[8] + eight_digit_values(z);
		if (b3)
			m = m * pow10_exact_u64[b3] + eight_digit_values(w << (8 * (8 - b3)));
	}
	b += b2 + b3;
	len += 1 + b;
	if ((p[len] | 0x20) == 'e' || p[len] == '.')
		return number_general(c, out);
	if (m > UINT64_C(1) << 53) {
		/* b <= 22 places: wide_mantissa answers, but where it cannot */
		if (wide_mantissa(m, -(int)b, neg, out))
			return number_general(c, out);
	} else {
		d = (double)m / pow10_exact[b];
		*out = neg ? -d : d;
	}
	c->i += len;
	return 0;
}
#endif

/*
 * The spellings clients send most, read in a few steps: an optional '-', 1
 * to 7 integer digits (no leading zero but a lone "0"), and optionally '.'
 * and 1 to 15 fraction digits, at most 15 digits in all, followed by
 * anything but a digit, '.' or an exponent; at least 26 bytes left so that
 * the eight-byte reads stay inside. The mantissa (< 10^15) is exact and one
 * division by an exact power of ten gives the correctly rounded value, as
 * clinger does. 16 to 19 digits take number_long, every other number
 * number_general.
 */
int json_cursor_number(struct json_cursor *c, double *out)
{
#if HAVE_SWAR && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	static const uint64_t zeros = UINT64_C(0x3030303030303030);
	const unsigned char *p = c->s + c->i;

	if (c->n - c->i >= 26) {
		int neg = p[0] == '-';
		uint64_t x = load8(p + neg) ^ zeros, m;
		unsigned a = leading_digits(x), b = 0, len;
		double d;

		if (a == 0 || a == 8 || (a > 1 && p[neg] == '0'))
			return number_general(c, out);
		m = eight_digit_values(x << (8 * (8 - a)));
		len = (unsigned)neg + a;
		if (p[len] == '.') {
			uint64_t y = load8(p + len + 1) ^ zeros, z = 0;
			unsigned b2 = 0;

			b = leading_digits(y);
			if (b == 8) {
				z = load8(p + len + 9) ^ zeros;
				b2 = leading_digits(z);
			}
			if (b == 0)
				return number_general(c, out);
			if (b2 == 8 || a + b + b2 > 15)
				return b == 8 ? number_long(c, out) : number_general(c, out);
			if (b < 8) {
				m = m * pow10_exact_u64[b] + eight_digit_values(y << (8 * (8 - b)));
			} else {
				m = m * pow10_exact_u64[8] + eight_digit_values(y);
				if (b2)
					m = m * pow10_exact_u64[b2] +
					    eight_digit_values(z << (8 * (8 - b2)));
				b += b2;
			}
			len += 1 + b;
		}
		if ((p[len] | 0x20) == 'e' || p[len] == '.')
			return number_general(c, out);
		d = (double)m / pow10_exact[b];
		*out = neg ? -d : d;
		c->i += len;
		return 0;
	}
#endif
	return number_general(c, out);
}
