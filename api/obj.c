/* obj.c - Wavefront OBJ reader for mesh uploads, and the float parser it shares with stl.c. */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

/*
 * Line numbers in messages are 1-based. The reader makes one pass: vertices
 * and triangles go into arrays that grow by doubling. A relative (negative)
 * index is resolved on its line, against the vertices read so far; an
 * absolute one may refer forward, so only the largest one is remembered and
 * checked against the final vertex count at the end.
 */

void mesh_data_release(struct mesh_data *d)
{
	if (!d)
		return;
	free(d->xyz);
	free(d->idx);
	*d = (struct mesh_data){ 0 };
}

/* ---- numbers */

/* Powers of ten that a double holds exactly (5^22 < 2^53). */
static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#define FAST_MAX_MANTISSA (UINT64_C(1) << 53)
#define MAX_SIG_DIGITS 19	/* 10^19 - 1 < 2^64 */
#define EXP_CLAMP 100000	/* far beyond any float, small enough not to overflow */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* strtof on a NUL-terminated copy, in the C locale whatever setlocale() said. */
static enum api_err parse_float_slow(const char *s, size_t n, float *out)
{
	char stack[128], *buf = stack, *endp;
	enum api_err err = API_OK;
	locale_t c_locale;
	float f;

	if (n >= sizeof(stack)) {
		if (n == SIZE_MAX)
			return API_INVALID_MESH;
		buf = malloc(n + 1);
		if (!buf)
			return API_INTERNAL;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	/* glibc hands out its static C locale object here: no allocation */
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (!c_locale) {
		err = API_INTERNAL;
		goto out_free_buf;
	}
	f = strtof_l(buf, &endp, c_locale);
	if (endp != buf + n || !isfinite(f))
		err = API_INVALID_MESH;
	else
		*out = f;
	freelocale(c_locale);
out_free_buf:
	if (buf != stack)
		free(buf);
	return err;
}

/*
 * Scans the longest number at s (before end) and sets *stop past it.
 * The fast path is Clinger's (PLDI 1990): a mantissa below 2^53 times or
 * divided by an exact power of ten is one correctly rounded double
 * operation. Rounding that double to float rounds twice, which differs from
 * rounding the decimal directly only when the double lands exactly on a
 * midpoint between two floats (midpoints are doubles and rounding is
 * monotonic), so that case, and every other, goes to strtof.
 */
static enum api_err scan_float(const char *s, const char *end, const char **stop,
			       float *out)
{
	const char *p = s;
	bool neg = false, dropped = false;
	uint64_t m = 0;
	long long dexp = 0;
	int sig = 0;
	size_t ndig = 0;

	if (p < end && (*p == '+' || *p == '-'))
		neg = *p++ == '-';
	for (; p < end && is_digit(*p); p++, ndig++) {
		if (sig < MAX_SIG_DIGITS) {
			m = m * 10 + (uint64_t)(*p - '0');
			sig += m != 0;
		} else {
			dexp++;
			dropped = true;
		}
	}
	if (p < end && *p == '.') {
		for (p++; p < end && is_digit(*p); p++, ndig++) {
			if (sig < MAX_SIG_DIGITS) {
				m = m * 10 + (uint64_t)(*p - '0');
				sig += m != 0;
				dexp--;
			} else {
				dropped = true;
			}
		}
	}
	if (ndig == 0)
		return API_INVALID_MESH;
	if (p < end && (*p == 'e' || *p == 'E')) {
		bool eneg = false;
		long long ex = 0;

		p++;
		if (p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p == end || !is_digit(*p))
			return API_INVALID_MESH;
		for (; p < end && is_digit(*p); p++)
			if (ex < EXP_CLAMP)
				ex = ex * 10 + (*p - '0');
		dexp += eneg ? -ex : ex;
	}
	*stop = p;

	if (m == 0) {
		*out = neg ? -0.0f : 0.0f;
		return API_OK;
	}
	if (FLT_EVAL_METHOD == 0 && !dropped && m <= FAST_MAX_MANTISSA &&
	    dexp >= -22 && dexp <= 22) {
		double d = (double)m;
		uint64_t bits;

		d = dexp < 0 ? d / pow10_exact[-dexp] : d * pow10_exact[dexp];
		/* |d| is in [1e-22, 1e38]: a normal float, 29 bits dropped */
		memcpy(&bits, &d, sizeof(bits));
		if ((bits & 0x1fffffff) != 0x10000000) {
			float f = (float)d;

			*out = neg ? -f : f;
			return API_OK;
		}
	}
	return parse_float_slow(s, (size_t)(p - s), out);
}

enum api_err formats_parse_float(const char *s, size_t n, float *out)
{
	const char *stop;
	float f;
	enum api_err err = scan_float(s, s + n, &stop, &f);

	if (err)
		return err;
	if (stop != s + n)
		return API_INVALID_MESH;
	*out = f;
	return API_OK;
}

/* ---- the reader */

struct obj_reader {
	struct mesh_data m;
	size_t vcap;		/* vertices m.xyz has room for */
	size_t tcap;		/* triangles m.idx has room for */
	size_t max_tris;
	size_t line;		/* current line, 1-based */
	uint64_t max_abs;	/* largest absolute (1-based) index so far */
	size_t max_abs_line;	/* the first line it appears on */
	struct api_fail *f;	/* may be NULL */
};

__attribute__((format(printf, 3, 4)))
static enum api_err obj_fail(struct obj_reader *r, enum api_err err,
			     const char *fmt, ...)
{
	va_list ap;

	if (r->f) {
		r->f->err = err;
		va_start(ap, fmt);
		vsnprintf(r->f->msg, sizeof(r->f->msg), fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Doubles an array of *cap elements of el bytes; NULL (arr intact) on failure. */
static void *grow(void *arr, size_t *cap, size_t el)
{
	size_t ncap = *cap ? *cap : 512;
	void *p;

	if (ncap > SIZE_MAX / 2 / el)
		return NULL;
	ncap *= 2;
	p = realloc(arr, ncap * el);
	if (p)
		*cap = ncap;
	return p;
}

/* Space, \t, \v, \f or \r (and \n, which never occurs inside a line). */
static bool is_blank(char c)
{
	return c == ' ' || (unsigned char)(c - '\t') <= '\r' - '\t';
}

/* The next token before eol; length 0 at the end of the line or a comment. */
static size_t next_token(const char **p, const char *eol, const char **tok)
{
	const char *q = *p;

	while (q < eol && is_blank(*q))
		q++;
	if (q == eol || *q == '#') {
		*p = *tok = eol;
		return 0;
	}
	*tok = q;
	while (q < eol && !is_blank(*q))
		q++;
	*p = q;
	return (size_t)(q - *tok);
}

/* Shortens a token for a message. */
static int tok_show(size_t n)
{
	return n > 32 ? 32 : (int)n;
}

static enum api_err obj_vertex(struct obj_reader *r, const char *p, const char *eol)
{
	const char *tok;
	float c[3];
	size_t n;
	enum api_err err;

	for (int i = 0; i < 3; i++) {
		while (p < eol && is_blank(*p))
			p++;
		if (p == eol || *p == '#')
			return obj_fail(r, API_INVALID_MESH,
					"line %zu: vertex needs 3 coordinates", r->line);
		/* parse in place; the token must end where the number does */
		tok = p;
		err = scan_float(tok, eol, &p, &c[i]);
		if (err == API_INTERNAL)
			return obj_fail(r, err, "out of memory");
		if (err || (p < eol && !is_blank(*p))) {
			p = tok;
			n = next_token(&p, eol, &tok);
			return obj_fail(r, API_INVALID_MESH,
					"line %zu: vertex coordinate '%.*s' is not a finite float",
					r->line, tok_show(n), tok);
		}
	}
	/* further tokens (w, or the vertex colours some exporters add) are ignored */
	if (r->m.nvert == r->vcap) {
		float *xyz;

		if (r->m.nvert >= UINT32_MAX)
			return obj_fail(r, API_PAYLOAD_TOO_LARGE,
					"line %zu: more than %u vertices", r->line, UINT32_MAX);
		xyz = grow(r->m.xyz, &r->vcap, 3 * sizeof(*xyz));
		if (!xyz)
			return obj_fail(r, API_INTERNAL, "out of memory");
		r->m.xyz = xyz;
	}
	memcpy(r->m.xyz + 3 * r->m.nvert, c, sizeof(c));
	r->m.nvert++;
	return API_OK;
}

/* [+-]digits, saturating far above any valid index; false if no digits. */
static bool scan_int(const char **p, const char *end, long long *v)
{
	const char *q = *p;
	bool neg = false;
	long long x = 0;

	if (q < end && (*q == '+' || *q == '-'))
		neg = *q++ == '-';
	if (q == end || !is_digit(*q))
		return false;
	for (; q < end && is_digit(*q); q++)
		if (x < (1LL << 40))
			x = x * 10 + (*q - '0');
	*p = q;
	*v = neg ? -x : x;
	return true;
}

/* One face vertex: v, v/vt, v//vn or v/vt/vn; *out is the 0-based vertex. */
static enum api_err obj_index(struct obj_reader *r, const char *tok, size_t n,
			      uint32_t *out)
{
	const char *q = tok, *end = tok + n;
	long long v, ignored;

	if (!scan_int(&q, end, &v))
		goto bad;
	if (q < end) {
		bool has_vt;

		if (*q++ != '/')
			goto bad;
		has_vt = q < end && *q != '/';
		if (has_vt && !scan_int(&q, end, &ignored))
			goto bad;
		if (q < end) {
			if (*q++ != '/' || !scan_int(&q, end, &ignored) || q != end)
				goto bad;
		} else if (!has_vt) {
			goto bad;
		}
	}
	if (v == 0)
		return obj_fail(r, API_INVALID_MESH,
				"line %zu: vertex index 0 is invalid (OBJ counts from 1)", r->line);
	if (v > 0) {
		if (v > UINT32_MAX)
			return obj_fail(r, API_INVALID_MESH,
					"line %zu: vertex index '%.*s' out of range",
					r->line, tok_show(n), tok);
		if ((uint64_t)v > r->max_abs) {
			r->max_abs = (uint64_t)v;
			r->max_abs_line = r->line;
		}
		*out = (uint32_t)(v - 1);
		return API_OK;
	}
	if ((unsigned long long)-v > r->m.nvert)
		return obj_fail(r, API_INVALID_MESH,
				"line %zu: relative vertex index '%.*s' out of range (%zu vertices so far)",
				r->line, tok_show(n), tok, r->m.nvert);
	*out = (uint32_t)(r->m.nvert - (size_t)-v);
	return API_OK;
bad:
	return obj_fail(r, API_INVALID_MESH, "line %zu: bad face vertex '%.*s'",
			r->line, tok_show(n), tok);
}

static enum api_err obj_triangle(struct obj_reader *r, uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t *t;

	if (r->m.ntri >= r->max_tris)
		return obj_fail(r, API_PAYLOAD_TOO_LARGE,
				"line %zu: more than %zu triangles", r->line, r->max_tris);
	if (r->m.ntri == r->tcap) {
		t = grow(r->m.idx, &r->tcap, 3 * sizeof(*t));
		if (!t)
			return obj_fail(r, API_INTERNAL, "out of memory");
		r->m.idx = t;
	}
	t = r->m.idx + 3 * r->m.ntri++;
	t[0] = a;
	t[1] = b;
	t[2] = c;
	return API_OK;
}

/* A polygon of k >= 3 vertices becomes triangles (0,i-1,i), i = 2..k-1. */
static enum api_err obj_face(struct obj_reader *r, const char *p, const char *eol)
{
	uint32_t first = 0, prev = 0, cur = 0;
	const char *tok;
	size_t n, k = 0;
	enum api_err err;

	while ((n = next_token(&p, eol, &tok))) {
		err = obj_index(r, tok, n, &cur);
		if (err)
			return err;
		if (k == 0)
			first = cur;
		else if (k >= 2 && (err = obj_triangle(r, first, prev, cur)))
			return err;
		prev = cur;
		k++;
	}
	if (k < 3)
		return obj_fail(r, API_INVALID_MESH,
				"line %zu: face has %zu vertices, needs at least 3", r->line, k);
	return API_OK;
}

enum api_err obj_parse(const char *text, size_t len, size_t max_tris,
		       struct mesh_data *out, struct api_fail *f)
{
	struct obj_reader r = { .max_tris = max_tris, .f = f };
	const char *p, *end, *eol;
	enum api_err err;

	if (f)
		*f = (struct api_fail){ API_OK, "" };
	if (!out || (!text && len))
		return obj_fail(&r, API_INTERNAL, "obj_parse: invalid argument");
	*out = (struct mesh_data){ 0 };
	if (!len)
		text = "";
	p = text;
	end = text + len;
	/* a UTF-8 byte order mark (editors on Windows write one) is no part of
	 * the first line: read past it, as the STL reader does (it once hid
	 * the first vertex and shifted every index after it) */
	if (len >= 3 && (unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbb &&
	    (unsigned char)p[2] == 0xbf)
		p += 3;
	while (p < end) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		r.line++;
		while (p < eol && is_blank(*p))
			p++;
		if (p < eol && (p + 1 == eol || is_blank(p[1]))) {
			err = API_OK;
			if (*p == 'v')
				err = obj_vertex(&r, p + 1, eol);
			else if (*p == 'f')
				err = obj_face(&r, p + 1, eol);
			if (err)
				goto out_release;
		}
		if (eol == end)
			break;
		p = eol + 1;
	}
	if (!r.m.ntri) {
		err = obj_fail(&r, API_INVALID_MESH, "no triangles (%zu vertices, 0 faces)",
			       r.m.nvert);
		goto out_release;
	}
	if (r.max_abs > r.m.nvert) {
		err = obj_fail(&r, API_INVALID_MESH,
			       "line %zu: vertex index %llu out of range (the file has %zu vertices)",
			       r.max_abs_line, (unsigned long long)r.max_abs, r.m.nvert);
		goto out_release;
	}
	*out = r.m;
	return API_OK;
out_release:
	mesh_data_release(&r.m);
	return err;
}
