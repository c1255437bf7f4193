/* buf.c - growable response buffer with fast, round-tripping number printing. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->oom = 0;
	b->limit = 0;
	b->over = 0;
}

void buf_set_limit(struct buf *b, size_t limit)
{
	b->limit = limit;
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

/* Hands the bytes (NUL-terminated, NULL when nothing was ever appended) to
 * the caller, who frees them; b is left empty and reusable. */
char *buf_detach(struct buf *b, size_t *len)
{
	char *d = b->data;

	if (len)
		*len = b->len;
	buf_init(b);
	return d;
}

/* Room for extra more bytes plus the NUL. 0 on success; -1 and oom set when
 * the size overflows or realloc fails (the old bytes stay). */
static int buf_grow(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->oom)
		return -1;
	if (extra > SIZE_MAX - b->len - 1)
		goto out_oom;
	if (b->limit && extra > (b->limit > b->len ? b->limit - b->len : 0)) {
		b->over = 1;
		goto out_oom;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	if (b->limit && b->limit < SIZE_MAX && cap > b->limit + 1)
		cap = b->limit + 1;	/* need <= limit + 1 here */
	p = realloc(b->data, cap);
	if (!p)
		goto out_oom;
	b->data = p;
	b->cap = cap;
	return 0;
out_oom:
	b->oom = 1;
	return -1;
}

/* Make sure extra more bytes fit without another allocation (as far as the cap allows). */
void buf_reserve(struct buf *b, size_t extra)
{
	if (b->limit && extra > (b->limit > b->len ? b->limit - b->len : 0))
		extra = b->limit > b->len ? b->limit - b->len : 0;
	buf_grow(b, extra);
}

void buf_append(struct buf *b, const void *p, size_t n)
{
	if (buf_grow(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	if (buf_grow(b, 1))
		return;
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

/* printf into the buffer; not for hot paths. */
void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		buf_append(b, small, (size_t)n);
		return;
	}
	if (buf_grow(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal digits of v, most significant first, into out (>= 20 bytes);
 * returns how many. */
static int u64_digits(uint64_t v, char *out)
{
	char tmp[20];
	int i = 20, n;

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		tmp[--i] = digit_pairs[2 * r + 1];
		tmp[--i] = digit_pairs[2 * r];
	}
	if (v >= 10) {
		tmp[--i] = digit_pairs[2 * v + 1];
		tmp[--i] = digit_pairs[2 * v];
	} else {
		tmp[--i] = (char)('0' + v);
	}
	n = 20 - i;
	memcpy(out, tmp + i, (size_t)n);
	return n;
}

void buf_put_u64(struct buf *b, uint64_t v)
{
	if (buf_grow(b, 20))
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

/*
 * Lay out nd significant digits whose first digit has decimal exponent e10
 * the way ECMAScript's Number#toString does (plain notation for
 * 1e-7 < |x| < 1e21, else d.ddde[-]x, without a '+'). out needs nd + 32
 * bytes; returns the length written.
 */
static int format_decimal(char *out, int neg, const char *dig, int nd, int e10)
{
	int n = e10 + 1;	/* digits before the decimal point */
	int len = 0;

	if (neg)
		out[len++] = '-';
	if (nd <= n && n <= 21) {
		memcpy(out + len, dig, (size_t)nd);
		len += nd;
		memset(out + len, '0', (size_t)(n - nd));
		len += n - nd;
	} else if (0 < n && n <= 21) {
		memcpy(out + len, dig, (size_t)n);
		len += n;
		out[len++] = '.';
		memcpy(out + len, dig + n, (size_t)(nd - n));
		len += nd - n;
	} else if (-6 < n && n <= 0) {
		out[len++] = '0';
		out[len++] = '.';
		memset(out + len, '0', (size_t)-n);
		len += -n;
		memcpy(out + len, dig, (size_t)nd);
		len += nd;
	} else {
		int x = e10;

		out[len++] = dig[0];
		if (nd > 1) {
			out[len++] = '.';
			memcpy(out + len, dig + 1, (size_t)(nd - 1));
			len += nd - 1;
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

/* Strip trailing zeros of the nd digits; returns the new count (>= 1). */
static int strip_zeros(const char *dig, int nd)
{
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	return nd;
}

/*
 * Slow path (printf + strtod): the shortest of p = pmin..pmax significant
 * digits whose reading by strtod, rounded to float when is_float, gives back
 * v. Fills dig and returns the digit count, *e10 the exponent of the first.
 */
static int shortest_printf(double v, int is_float, int pmin, int pmax, char *dig, int *e10)
{
	char tmp[64];
	int p, nd = 0;

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
		dig[nd++] = *s++;
		if (*s == '.')
			for (s++; *s >= '0' && *s <= '9'; s++)
				dig[nd++] = *s;
		*e10 = (int)strtol(s + 1, NULL, 10);
	}
	return strip_zeros(dig, nd);
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
 * back; the survivors get the exact test. Returns the digit count, 0 to ask
 * for the slow path.
 */
static int shortest_float_fast(float f, char *dig, int *e10_out)
{
	double a = fabs((double)f), x9, half;
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
	half = scale10((double)hf, 8 - e10) * 1.000001 + 1e-6;
	n9 = (uint32_t)x9;
	for (p = 6; p <= 9; p++) {
		uint32_t q = pow10_u32[9 - p];
		uint32_t n = p == 9 ? (uint32_t)(x9 + 0.5) : round_to_digits(n9, p);
		int e = e10 - p + 1;

		if (fabs(x9 - (double)n * q) <= half && reads_back(n, e, (float)a))
			goto found;
		/* at a power of two the interval above f is twice as wide as
		 * below: the next decimal up may read back */
		if (p < 9 && !(bits & 0x7fffff) && (double)n * q < x9 &&
		    (double)(n + 1) * q - x9 <= half && reads_back(n + 1, e, (float)a)) {
			n++;
			goto found;
		}
		continue;
found:
		if (n >= pow10_u32[p]) {	/* rounded up to 10^p */
			n /= 10;
			e++;
		}
		p = u64_digits(n, dig);
		*e10_out = e + p - 1;
		return strip_zeros(dig, p);
	}
	return 0;
}

/* Shortest round-tripping decimal of a float (see buf.h). -0 prints as "0"
 * (answers such as a barycentric -0 read better so; the value compares
 * equal); NaN and infinities as null. */
void buf_put_float(struct buf *b, float f)
{
	char dig[24];
	int nd, e10;

	if (!isfinite(f)) {
		buf_append(b, "null", 4);
		return;
	}
	if (f == 0) {
		buf_putc(b, '0');
		return;
	}
	nd = shortest_float_fast(f, dig, &e10);
	if (!nd)
		nd = shortest_printf((double)f, 1, 1, 9, dig, &e10);
	if (buf_grow(b, (size_t)nd + 32))
		return;
	b->len += (size_t)format_decimal(b->data + b->len, signbit(f) != 0, dig, nd, e10);
	b->data[b->len] = '\0';
}

/* Shortest round-tripping decimal (<= 17 digits) of a double; printf-based:
 * doubles are off the hot path (build_ms and the like). -0 prints as "0". */
void buf_put_double(struct buf *b, double d)
{
	char dig[24];
	int nd, e10;

	if (!isfinite(d)) {
		buf_append(b, "null", 4);
		return;
	}
	if (d == 0) {
		buf_putc(b, '0');
		return;
	}
	/* 15 digits are below double precision: see shortest_float_fast */
	nd = shortest_printf(d, 0, 15, 17, dig, &e10);
	if (buf_grow(b, (size_t)nd + 32))
		return;
	b->len += (size_t)format_decimal(b->data + b->len, signbit(d) != 0, dig, nd, e10);
	b->data[b->len] = '\0';
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return n >= 3 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return n >= 4 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		       (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* A JSON string literal of n bytes of s: quotes, backslashes and control
 * characters escaped; bytes that are not valid UTF-8 become U+FFFD, so the
 * output is always valid JSON whatever s holds. */
void buf_put_json_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	buf_putc(b, '"');
	while (i < n) {
		size_t run = i, l;

		while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
			run++;
		buf_append(b, p + i, run - i);
		i = run;
		if (i >= n)
			break;
		if (p[i] >= 0x80) {
			l = utf8_seq_len(p + i, n - i);
			if (l) {
				buf_append(b, p + i, l);
				i += l;
			} else {
				buf_append(b, "\\ufffd", 6);
				i++;
			}
			continue;
		}
		switch (p[i]) {
		case '"': buf_append(b, "\\\"", 2); break;
		case '\\': buf_append(b, "\\\\", 2); break;
		case '\n': buf_append(b, "\\n", 2); break;
		case '\r': buf_append(b, "\\r", 2); break;
		case '\t': buf_append(b, "\\t", 2); break;
		case '\b': buf_append(b, "\\b", 2); break;
		case '\f': buf_append(b, "\\f", 2); break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hex[p[i] >> 4], hex[p[i] & 15] };

			buf_append(b, u, 6);
		}
		}
		i++;
	}
	buf_putc(b, '"');
}
