/* stl.c - STL reader for mesh uploads: binary and ASCII. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formats.h"

/*
 * Binary STL: 80-byte header, uint32 facet count, then 50 bytes per facet
 * (normal, 3 vertices, uint16 attribute), all little-endian. A file is
 * binary when its size is exactly 84 + 50 * count, even if the header
 * starts with "solid" (many exporters write that); otherwise it must be
 * ASCII. Facet and line numbers in messages are 1-based. Each facet gives
 * three new vertices (none are merged), so triangle k is (3k, 3k+1, 3k+2).
 * Normals and attributes are ignored.
 */

#define STL_HEADER 84
#define STL_RECORD 50

struct stl_out {
	struct api_fail *f;	/* may be NULL */
};

__attribute__((format(printf, 3, 4)))
static enum api_err stl_fail(const struct stl_out *o, enum api_err err,
			     const char *fmt, ...)
{
	va_list ap;

	if (o->f) {
		o->f->err = err;
		va_start(ap, fmt);
		vsnprintf(o->f->msg, sizeof(o->f->msg), fmt, ap);
		va_end(ap);
	}
	return err;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Allocates the arrays for ntri facets; API_OK, API_PAYLOAD_TOO_LARGE or API_INTERNAL. */
static enum api_err stl_alloc(struct mesh_data *m, size_t ntri)
{
	/* 3 vertices per triangle; vertex numbers must fit uint32_t */
	if (ntri > UINT32_MAX / 3 || ntri > SIZE_MAX / (9 * sizeof(*m->xyz)))
		return API_PAYLOAD_TOO_LARGE;
	m->xyz = malloc(ntri * 9 * sizeof(*m->xyz));
	m->idx = malloc(ntri * 3 * sizeof(*m->idx));
	if (!m->xyz || !m->idx) {
		mesh_data_release(m);
		return API_INTERNAL;
	}
	return API_OK;
}

static enum api_err stl_binary(const unsigned char *b, uint32_t count, size_t max_tris,
			       struct mesh_data *out, const struct stl_out *o)
{
	struct mesh_data m = { 0 };
	enum api_err err;

	if (count == 0)
		return stl_fail(o, API_INVALID_MESH, "no triangles (binary STL with 0 facets)");
	if (count > max_tris)
		return stl_fail(o, API_PAYLOAD_TOO_LARGE,
				"%u facets, more than the limit of %zu triangles", count, max_tris);
	err = stl_alloc(&m, count);
	if (err == API_PAYLOAD_TOO_LARGE)
		return stl_fail(o, err, "%u facets is too many", count);
	if (err)
		return stl_fail(o, err, "out of memory");
	for (size_t k = 0; k < count; k++) {
		const unsigned char *rec = b + STL_HEADER + STL_RECORD * k + 12;

		for (size_t j = 0; j < 9; j++) {
			uint32_t u = le32(rec + 4 * j);

			if ((u & 0x7f800000) == 0x7f800000) {
				mesh_data_release(&m);
				return stl_fail(o, API_INVALID_MESH,
						"facet %zu: vertex coordinate is not a finite float", k + 1);
			}
			memcpy(&m.xyz[9 * k + j], &u, sizeof(u));
		}
	}
	m.nvert = 3 * (size_t)count;
	m.ntri = count;
	for (size_t i = 0; i < m.nvert; i++)
		m.idx[i] = (uint32_t)i;
	*out = m;
	return API_OK;
}

/* ---- ASCII */

struct stl_reader {
	const char *p, *end;
	size_t line;		/* of the last token read */
	size_t facet;		/* the facet being read */
	struct mesh_data m;
	size_t tcap;		/* triangles the arrays have room for */
	size_t max_tris;
	const struct stl_out *o;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/*
 * The next whitespace-separated token; length 0 at the end of the file, and
 * r->line then stays on the last token's line, where a reader would look.
 */
static size_t stl_token(struct stl_reader *r, const char **tok)
{
	size_t line = r->line;

	while (r->p < r->end && is_space(*r->p)) {
		if (*r->p == '\n')
			line++;
		r->p++;
	}
	if (r->p < r->end)
		r->line = line;
	*tok = r->p;
	while (r->p < r->end && !is_space(*r->p))
		r->p++;
	return (size_t)(r->p - *tok);
}

static void stl_skip_line(struct stl_reader *r)
{
	const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));

	r->p = nl ? nl : r->end;
}

/* Keywords are matched without regard to case: some exporters shout. */
static bool keyword_is(const char *tok, size_t n, const char *kw)
{
	return n == strlen(kw) && strncasecmp(tok, kw, n) == 0;
}

static int tok_show(size_t n)
{
	return n > 32 ? 32 : (int)n;
}

static enum api_err stl_expect(struct stl_reader *r, const char *kw)
{
	const char *tok;
	size_t n = stl_token(r, &tok);

	if (keyword_is(tok, n, kw))
		return API_OK;
	if (!n)
		return stl_fail(r->o, API_INVALID_MESH,
				"line %zu (facet %zu): expected '%s', found the end of the file",
				r->line, r->facet, kw);
	return stl_fail(r->o, API_INVALID_MESH,
			"line %zu (facet %zu): expected '%s', found '%.*s'",
			r->line, r->facet, kw, tok_show(n), tok);
}

static enum api_err stl_grow(struct stl_reader *r)
{
	size_t ncap = r->tcap ? r->tcap : 256;
	float *xyz;
	uint32_t *idx;

	if (ncap > UINT32_MAX / 6 || ncap > SIZE_MAX / 2 / (9 * sizeof(*xyz)))
		return stl_fail(r->o, API_PAYLOAD_TOO_LARGE, "too many facets");
	ncap *= 2;
	xyz = realloc(r->m.xyz, ncap * 9 * sizeof(*xyz));
	if (!xyz)
		return stl_fail(r->o, API_INTERNAL, "out of memory");
	r->m.xyz = xyz;
	idx = realloc(r->m.idx, ncap * 3 * sizeof(*idx));
	if (!idx)
		return stl_fail(r->o, API_INTERNAL, "out of memory");
	r->m.idx = idx;
	r->tcap = ncap;
	return API_OK;
}

/* "facet normal nx ny nz outer loop (vertex x y z)x3 endloop endfacet", "facet" read. */
static enum api_err stl_facet(struct stl_reader *r)
{
	const char *tok;
	size_t n, t = r->m.ntri;
	float *xyz;
	enum api_err err;

	if (t >= r->max_tris)
		return stl_fail(r->o, API_PAYLOAD_TOO_LARGE,
				"line %zu: more than %zu triangles", r->line, r->max_tris);
	if (t == r->tcap && (err = stl_grow(r)))
		return err;
	xyz = r->m.xyz + 9 * t;
	if ((err = stl_expect(r, "normal")))
		return err;
	for (int i = 0; i < 3; i++)	/* not checked: some exporters write nan */
		if (!stl_token(r, &tok))
			return stl_fail(r->o, API_INVALID_MESH,
					"line %zu (facet %zu): the file ends in the normal",
					r->line, r->facet);
	if ((err = stl_expect(r, "outer")) || (err = stl_expect(r, "loop")))
		return err;
	for (int v = 0; v < 3; v++) {
		if ((err = stl_expect(r, "vertex")))
			return err;
		for (int i = 0; i < 3; i++) {
			n = stl_token(r, &tok);
			if (!n)
				return stl_fail(r->o, API_INVALID_MESH,
						"line %zu (facet %zu): the file ends in a vertex",
						r->line, r->facet);
			err = formats_parse_float(tok, n, &xyz[3 * v + i]);
			if (err == API_INTERNAL)
				return stl_fail(r->o, err, "out of memory");
			if (err)
				return stl_fail(r->o, err,
						"line %zu (facet %zu): vertex coordinate '%.*s' is not a finite float",
						r->line, r->facet, tok_show(n), tok);
		}
	}
	if ((err = stl_expect(r, "endloop")) || (err = stl_expect(r, "endfacet")))
		return err;
	for (int i = 0; i < 3; i++)
		r->m.idx[3 * t + i] = (uint32_t)(3 * t + i);
	r->m.ntri = t + 1;
	r->m.nvert = 3 * r->m.ntri;
	return API_OK;
}

/* One or more "solid name ... endsolid name" blocks; the first "solid" read. */
static enum api_err stl_ascii_solids(struct stl_reader *r)
{
	const char *tok;
	size_t n;
	enum api_err err;

	stl_skip_line(r);	/* the name */
	for (;;) {
		n = stl_token(r, &tok);
		if (!n)
			return stl_fail(r->o, API_INVALID_MESH,
					"line %zu: the file ends without 'endsolid' (truncated?)", r->line);
		if (keyword_is(tok, n, "endsolid")) {
			stl_skip_line(r);
			n = stl_token(r, &tok);
			if (!n)
				return API_OK;
			if (!keyword_is(tok, n, "solid"))
				return stl_fail(r->o, API_INVALID_MESH,
						"line %zu: expected 'solid' or the end of the file after 'endsolid', found '%.*s'",
						r->line, tok_show(n), tok);
			stl_skip_line(r);
			continue;
		}
		if (!keyword_is(tok, n, "facet"))
			return stl_fail(r->o, API_INVALID_MESH,
					"line %zu: expected 'facet' or 'endsolid', found '%.*s'",
					r->line, tok_show(n), tok);
		r->facet++;
		if ((err = stl_facet(r)))
			return err;
	}
}

static enum api_err stl_ascii(const char *text, size_t len, size_t max_tris,
			      struct mesh_data *out, const struct stl_out *o)
{
	struct stl_reader r = {
		.p = text, .end = text + len, .line = 1, .max_tris = max_tris, .o = o,
	};
	const char *tok;
	enum api_err err;

	stl_token(&r, &tok);	/* "solid", checked by the caller */
	err = stl_ascii_solids(&r);
	if (err)
		goto out_release;
	if (!r.m.ntri) {
		err = stl_fail(o, API_INVALID_MESH, "no triangles (ASCII STL with 0 facets)");
		goto out_release;
	}
	*out = r.m;
	return API_OK;
out_release:
	mesh_data_release(&r.m);
	return err;
}

/*
 * Whether the text is ASCII STL: the keyword "solid" first, after an optional
 * UTF-8 BOM and blanks. *start is then the offset past the BOM.
 */
static bool stl_is_ascii(const unsigned char *b, size_t len, size_t *start)
{
	size_t i = 0;

	if (len >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
		i = 3;
	*start = i;
	while (i < len && is_space((char)b[i]))
		i++;
	return len - i >= 5 && strncasecmp((const char *)b + i, "solid", 5) == 0 &&
	       (len - i == 5 || is_space((char)b[i + 5]));
}

enum api_err stl_parse(const void *data, size_t len, size_t max_tris,
		       struct mesh_data *out, struct api_fail *f)
{
	const struct stl_out o = { .f = f };
	const unsigned char *b = data;
	uint64_t count = 0, want = 0;
	size_t start;

	if (f)
		*f = (struct api_fail){ API_OK, "" };
	if (!out || (!data && len))
		return stl_fail(&o, API_INTERNAL, "stl_parse: invalid argument");
	*out = (struct mesh_data){ 0 };
	if (!len)
		return stl_fail(&o, API_INVALID_MESH, "no triangles (empty STL)");
	if (len >= STL_HEADER) {
		count = le32(b + 80);
		want = STL_HEADER + STL_RECORD * count;
		if ((uint64_t)len == want)
			return stl_binary(b, (uint32_t)count, max_tris, out, &o);
	}
	/* text that starts with "solid" is ASCII STL, unless it holds a NUL,
	 * which text never does: a binary file whose 80-byte header a CAD
	 * exporter began with "solid", and whose size is off, is told so (its
	 * ASCII reading once answered "line 1: ... without 'endsolid'") */
	if (stl_is_ascii(b, len, &start) && !(len >= STL_HEADER && memchr(b, '\0', len)))
		return stl_ascii((const char *)data + start, len - start, max_tris, out, &o);
	if (len < STL_HEADER)
		return stl_fail(&o, API_INVALID_MESH,
				"not an STL file: %zu bytes is shorter than a binary STL header and the text does not start with 'solid'",
				len);
	if ((uint64_t)len < want)
		return stl_fail(&o, API_INVALID_MESH,
				"truncated binary STL: the header says %llu facets (%llu bytes) but the file has %zu bytes (facet %llu is incomplete)",
				(unsigned long long)count, (unsigned long long)want, len,
				(unsigned long long)(len - STL_HEADER) / STL_RECORD + 1);
	return stl_fail(&o, API_INVALID_MESH,
			"binary STL facet count mismatch: the header says %llu facets (%llu bytes) but the file has %zu bytes",
			(unsigned long long)count, (unsigned long long)want, len);
}
