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
	/* near the cap, its digits alone: the cap trips at the answer's own
	 * bytes, not at the room written through (a split batch's chunks,
	 * far from it, would pass the same answer) */
	if (buf_cap_left(b) < 20) {
		char tmp[20];

		buf_append(b, tmp, (size_t)u64_digits(v, tmp));
		return;
	}
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
 * digits whose reading by strtod gives back v; for a float (is_float), both
 * readings must give it back: strtod's rounded to float (as the daemon and
 * most JSON clients read a float) and strtof's. Returns them as an integer,
 * *nd their count (trailing zeros stripped) and *e10 the exponent of the
 * first.
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
		if (is_float ? (float)r == (float)v && strtof(tmp, NULL) == (float)v : r == v)
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

/*
 * Floats: Schubfach (R. Giulietti, "The Schubfach way to render doubles",
 * 2020), as A. Bolz's schubfach_32 writes it for 32 bits. The rounding
 * interval of f and its ends, scaled by 10^-k so that the shortest decimal
 * in it is an integer or a tenth of one, come from one 64x32-bit product
 * each (rounded to odd, which keeps the comparisons exact); the decimal is
 * the shortest in the interval (its ends in when f's significand is even, as
 * strtod's ties go), the nearest to f among those, an exact tie to the even
 * one (printf's choice, and ECMAScript's). That is the decimal strtof reads
 * back as f; the daemon and most JSON clients read a double and cast it,
 * which rounds twice, so the rare float with an interval end within 2^-20
 * of a decimal (1 528 of the 2.14 G positive ones) takes the printf search
 * with both readings instead (sf_near_grid). Checked on every positive
 * float against the search this replaced (the nearest 6, 7, 8 and 9-digit
 * decimals read through a double, printf's search beyond): the same
 * decimal but for the exact ties (4.19 M, which that search rounded up),
 * 2^-96 (one digit shorter: "1.2621775e-29" reads back both ways) and
 * 0x15ae43fe (one digit longer: "7.038531e-26" reads back through a double
 * only); every answer reads back both ways. tests/unit/test_api_buf.c
 * checks round trips, lengths and printf's rounding.
 *
 * sf_pow10[k + 31] = floor(10^k * 2^(63 - floor(log2(10^k)))) + 1 for k in
 * -31..45 (2^63 <= each < 2^64).
 */
static const uint64_t sf_pow10[77] = {
	UINT64_C(0x81CEB32C4B43FCF5),	/* 10^-31 */
	UINT64_C(0xA2425FF75E14FC32),	/* 10^-30 */
	UINT64_C(0xCAD2F7F5359A3B3F),	/* 10^-29 */
	UINT64_C(0xFD87B5F28300CA0E),	/* 10^-28 */
	UINT64_C(0x9E74D1B791E07E49),	/* 10^-27 */
	UINT64_C(0xC612062576589DDB),	/* 10^-26 */
	UINT64_C(0xF79687AED3EEC552),	/* 10^-25 */
	UINT64_C(0x9ABE14CD44753B53),	/* 10^-24 */
	UINT64_C(0xC16D9A0095928A28),	/* 10^-23 */
	UINT64_C(0xF1C90080BAF72CB2),	/* 10^-22 */
	UINT64_C(0x971DA05074DA7BEF),	/* 10^-21 */
	UINT64_C(0xBCE5086492111AEB),	/* 10^-20 */
	UINT64_C(0xEC1E4A7DB69561A6),	/* 10^-19 */
	UINT64_C(0x9392EE8E921D5D08),	/* 10^-18 */
	UINT64_C(0xB877AA3236A4B44A),	/* 10^-17 */
	UINT64_C(0xE69594BEC44DE15C),	/* 10^-16 */
	UINT64_C(0x901D7CF73AB0ACDA),	/* 10^-15 */
	UINT64_C(0xB424DC35095CD810),	/* 10^-14 */
	UINT64_C(0xE12E13424BB40E14),	/* 10^-13 */
	UINT64_C(0x8CBCCC096F5088CC),	/* 10^-12 */
	UINT64_C(0xAFEBFF0BCB24AAFF),	/* 10^-11 */
	UINT64_C(0xDBE6FECEBDEDD5BF),	/* 10^-10 */
	UINT64_C(0x89705F4136B4A598),	/* 10^-9 */
	UINT64_C(0xABCC77118461CEFD),	/* 10^-8 */
	UINT64_C(0xD6BF94D5E57A42BD),	/* 10^-7 */
	UINT64_C(0x8637BD05AF6C69B6),	/* 10^-6 */
	UINT64_C(0xA7C5AC471B478424),	/* 10^-5 */
	UINT64_C(0xD1B71758E219652C),	/* 10^-4 */
	UINT64_C(0x83126E978D4FDF3C),	/* 10^-3 */
	UINT64_C(0xA3D70A3D70A3D70B),	/* 10^-2 */
	UINT64_C(0xCCCCCCCCCCCCCCCD),	/* 10^-1 */
	UINT64_C(0x8000000000000001),	/* 10^0 */
	UINT64_C(0xA000000000000001),	/* 10^1 */
	UINT64_C(0xC800000000000001),	/* 10^2 */
	UINT64_C(0xFA00000000000001),	/* 10^3 */
	UINT64_C(0x9C40000000000001),	/* 10^4 */
	UINT64_C(0xC350000000000001),	/* 10^5 */
	UINT64_C(0xF424000000000001),	/* 10^6 */
	UINT64_C(0x9896800000000001),	/* 10^7 */
	UINT64_C(0xBEBC200000000001),	/* 10^8 */
	UINT64_C(0xEE6B280000000001),	/* 10^9 */
	UINT64_C(0x9502F90000000001),	/* 10^10 */
	UINT64_C(0xBA43B74000000001),	/* 10^11 */
	UINT64_C(0xE8D4A51000000001),	/* 10^12 */
	UINT64_C(0x9184E72A00000001),	/* 10^13 */
	UINT64_C(0xB5E620F480000001),	/* 10^14 */
	UINT64_C(0xE35FA931A0000001),	/* 10^15 */
	UINT64_C(0x8E1BC9BF04000001),	/* 10^16 */
	UINT64_C(0xB1A2BC2EC5000001),	/* 10^17 */
	UINT64_C(0xDE0B6B3A76400001),	/* 10^18 */
	UINT64_C(0x8AC7230489E80001),	/* 10^19 */
	UINT64_C(0xAD78EBC5AC620001),	/* 10^20 */
	UINT64_C(0xD8D726B7177A8001),	/* 10^21 */
	UINT64_C(0x878678326EAC9001),	/* 10^22 */
	UINT64_C(0xA968163F0A57B401),	/* 10^23 */
	UINT64_C(0xD3C21BCECCEDA101),	/* 10^24 */
	UINT64_C(0x84595161401484A1),	/* 10^25 */
	UINT64_C(0xA56FA5B99019A5C9),	/* 10^26 */
	UINT64_C(0xCECB8F27F4200F3B),	/* 10^27 */
	UINT64_C(0x813F3978F8940985),	/* 10^28 */
	UINT64_C(0xA18F07D736B90BE6),	/* 10^29 */
	UINT64_C(0xC9F2C9CD04674EDF),	/* 10^30 */
	UINT64_C(0xFC6F7C4045812297),	/* 10^31 */
	UINT64_C(0x9DC5ADA82B70B59E),	/* 10^32 */
	UINT64_C(0xC5371912364CE306),	/* 10^33 */
	UINT64_C(0xF684DF56C3E01BC7),	/* 10^34 */
	UINT64_C(0x9A130B963A6C115D),	/* 10^35 */
	UINT64_C(0xC097CE7BC90715B4),	/* 10^36 */
	UINT64_C(0xF0BDC21ABB48DB21),	/* 10^37 */
	UINT64_C(0x96769950B50D88F5),	/* 10^38 */
	UINT64_C(0xBC143FA4E250EB32),	/* 10^39 */
	UINT64_C(0xEB194F8E1AE525FE),	/* 10^40 */
	UINT64_C(0x92EFD1B8D0CF37BF),	/* 10^41 */
	UINT64_C(0xB7ABC627050305AE),	/* 10^42 */
	UINT64_C(0xE596B7B0C643C71A),	/* 10^43 */
	UINT64_C(0x8F7E32CE7BEA5C70),	/* 10^44 */
	UINT64_C(0xB35DBF821AE4F38C),	/* 10^45 */
};

/* g * cp: an end of f's rounding interval (or f), scaled, as a 64.64
 * fixed-point number. */
static inline unsigned __int128 sf_scaled(uint64_t g, uint32_t cp)
{
	return (unsigned __int128)g * cp;
}

/* p's integer part, its lowest bit set when fraction bits were dropped
 * ("round to odd"; the 1 that g's rounding up adds does not count). */
static inline uint32_t sf_round_to_odd(unsigned __int128 p)
{
	uint32_t y1 = (uint32_t)(p >> 64), y0 = (uint32_t)(p >> 32);

	return y1 | (y0 > 1);
}

/*
 * 1 when p, an end of f's rounding interval in the units where the
 * decimals of the answer's length are the multiples of 4, lies within 2^-20
 * of one. Read through a double, a decimal moves by at most 2^-53 of itself
 * (under 2^-21 here: the scaled value is below 2^32), so only a decimal that
 * close to an end may read back through strtod and a cast differently from
 * strtof. p is exact to 2^-30.
 */
static inline int sf_near_grid(unsigned __int128 p)
{
	uint32_t y1 = (uint32_t)(p >> 64);
	uint64_t frac = (uint64_t)p, eps = UINT64_C(1) << 44;

	/* exactly on a multiple of 4 (the middle bits at most the 1 that g's
	 * rounding up adds, Schubfach's test of exactness) is no danger: the
	 * decimal is then the middle itself, which a double holds exactly */
	if ((y1 & 3) == 0)
		return (frac >> 32) > 1 && frac < eps;
	return (y1 & 3) == 3 && ~frac < eps;
}

/* The shortest decimal of the positive finite float of bits (sign bit
 * clear, not 0) as an integer, perhaps with trailing zeros; *e10 the
 * exponent of its last digit; *near 1 when an end of the interval is so
 * close to a decimal that a reading through a double may differ (see
 * sf_near_grid: the caller then asks the printf search). */
static uint32_t shortest_float(uint32_t bits, int *e10, int *near)
{
	uint32_t ef = bits >> 23, mf = bits & 0x7fffff, c, cbl, cb, cbr, vbl, vb, vbr, lo, hi, s;
	int32_t q, k, h;
	int closer, even;
	uint64_t g;
	unsigned __int128 pl, pr;

	if (ef) {
		c = mf | 0x800000;
		q = (int32_t)ef - 150;
		if (q <= 0 && q > -24 && (c & ((UINT32_C(1) << -q) - 1)) == 0) {
			*e10 = 0;	/* an integer below 2^24: itself */
			*near = 0;
			return c >> -q;
		}
	} else {
		c = mf;		/* subnormal */
		q = -149;
	}
	even = (c & 1) == 0;
	/* at a power of two the interval below f is half as wide */
	closer = mf == 0 && ef > 1;
	cbl = 4 * c - 2 + (uint32_t)closer;
	cb = 4 * c;
	cbr = 4 * c + 2;
	/* k = floor(log10(2^q)), or of 3/4 2^q when closer; 1 <= h <= 4 */
	k = (q * 1262611 - (closer ? 524031 : 0)) >> 22;
	h = q + ((-k * 1741647) >> 19) + 1;
	g = sf_pow10[-k + 31];
	pl = sf_scaled(g, cbl << h);
	pr = sf_scaled(g, cbr << h);
	vbl = sf_round_to_odd(pl);
	vb = sf_round_to_odd(sf_scaled(g, cb << h));
	vbr = sf_round_to_odd(pr);
	*near = sf_near_grid(pl) || sf_near_grid(pr);
	lo = vbl + !even;
	hi = vbr - !even;
	s = vb / 4;
	if (s >= 10) {
		/* one digit fewer: the multiples of 10 around s */
		uint32_t sp = s / 10;
		int up_in = lo <= 40 * sp, wp_in = 40 * sp + 40 <= hi;

		if (up_in != wp_in) {
			*e10 = k + 1;
			return sp + (uint32_t)wp_in;
		}
	}
	{
		int u_in = lo <= 4 * s, w_in = 4 * s + 4 <= hi;
		uint32_t mid = 4 * s + 2;

		*e10 = k;
		if (u_in != w_in)
			return s + (uint32_t)w_in;
		return s + (uint32_t)(vb > mid || (vb == mid && (s & 1)));
	}
}

/* The shortest decimal of a finite non-zero float into out (see
 * buf_format_float); *nd its digit count. */
static size_t format_float(char *out, float f, int *nd)
{
	char buf[DIG_BUF];
	uint32_t bits, n;
	int e10, t, near;

	memcpy(&bits, &f, sizeof(bits));
	n = shortest_float(bits & 0x7fffffff, &e10, &near);
	if (near) {
		/* one float in a million or so: both readings checked */
		n = (uint32_t)shortest_printf((double)f, 1, 1, 9, nd, &e10);	/* <= 9 digits */
	} else {
		/* 32-bit: strip_zeros' 64-bit division costs a few more */
		while (n % 10 == 0) {
			n /= 10;
			e10++;
		}
		/* digits: floor(log10(2) * bit length), plus one at or past its
		 * power; e10 from the last digit's exponent to the first's */
		t = ((32 - __builtin_clz(n)) * 1233) >> 12;
		*nd = t + (n >= pow10_u64[t]);
		e10 += *nd - 1;
	}
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
 * (BUF_NUMBER_ROOM bytes). Room for nd + 32 as ever; a fixed-size copy, no
 * call. Near the cap, the len bytes alone: the cap trips at the answer's
 * own bytes, as for a split batch's chunks (far from it), whatever the
 * thread count. */
static void put_formatted(struct buf *b, const char *tmp, size_t len, int nd)
{
	if (buf_cap_left(b) < (size_t)nd + 32) {
		buf_append(b, tmp, len);
		return;
	}
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
