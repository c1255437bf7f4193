/* test_formats.c - Check suite for the OBJ and STL upload readers (api/obj.c, api/stl.c). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

#define MAXT 1000
#define MSGLEN 320

/* ---- helpers */

/* The result e of a reader, its message copied to msg (msglen bytes; may
 * be NULL), after checking that f carries the same result. */
static enum api_err with_msg(enum api_err e, const struct api_fail *f, char *msg, size_t msglen)
{
	if (!msg)
		return e;
	ck_assert_int_eq(f->err, e);
	if (msglen)
		snprintf(msg, msglen, "%s", f->msg);
	return e;
}

static enum api_err obj_parse_msg(const char *s, size_t len, size_t max_tris, struct mesh_data *m,
				  char *msg, size_t msglen)
{
	struct api_fail f;

	return with_msg(obj_parse(s, len, max_tris, m, msg ? &f : NULL), &f, msg, msglen);
}

static enum api_err stl_parse_msg(const void *s, size_t len, size_t max_tris, struct mesh_data *m,
				  char *msg, size_t msglen)
{
	struct api_fail f;

	return with_msg(stl_parse(s, len, max_tris, m, msg ? &f : NULL), &f, msg, msglen);
}

static enum api_err obj_str(const char *s, size_t max_tris, struct mesh_data *m, char *msg)
{
	return obj_parse_msg(s, strlen(s), max_tris, m, msg, MSGLEN);
}

static enum api_err stl_str(const char *s, size_t max_tris, struct mesh_data *m, char *msg)
{
	return stl_parse_msg(s, strlen(s), max_tris, m, msg, MSGLEN);
}

static void assert_empty(const struct mesh_data *m)
{
	ck_assert_ptr_null(m->xyz);
	ck_assert_ptr_null(m->idx);
	ck_assert_uint_eq(m->nvert, 0);
	ck_assert_uint_eq(m->ntri, 0);
}

static void assert_tris(const struct mesh_data *m, const uint32_t *want, size_t ntri)
{
	ck_assert_uint_eq(m->ntri, ntri);
	for (size_t i = 0; i < 3 * ntri; i++)
		ck_assert_msg(m->idx[i] == want[i], "idx[%zu] = %u, want %u", i, m->idx[i], want[i]);
}

static void assert_xyz(const struct mesh_data *m, const float *want, size_t nvert)
{
	ck_assert_uint_eq(m->nvert, nvert);
	ck_assert_msg(memcmp(m->xyz, want, 3 * nvert * sizeof(float)) == 0, "vertices differ");
}

static const char tri3[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
static const float tri3_xyz[] = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };
static const uint32_t tri012[] = { 0, 1, 2 };

/* Parses tri3 followed by the given face lines; expects success. */
static void obj_ok(const char *faces, const uint32_t *want, size_t ntri)
{
	char text[512], msg[MSGLEN];
	struct mesh_data m;

	snprintf(text, sizeof(text), "%s%s", tri3, faces);
	ck_assert_msg(obj_str(text, MAXT, &m, msg) == API_OK, "%s: %s", text, msg);
	assert_xyz(&m, tri3_xyz, 3);
	assert_tris(&m, want, ntri);
	mesh_data_release(&m);
}

/* ---- OBJ forms */

START_TEST(obj_plain_indices)
{
	obj_ok("f 1 2 3\n", tri012, 1);
}
END_TEST

START_TEST(obj_v_vt)
{
	obj_ok("vt 0 0\nvt 1 0\nvt 0 1\nf 1/1 2/2 3/3\n", tri012, 1);
}
END_TEST

START_TEST(obj_v_vn)
{
	obj_ok("vn 0 0 1\nf 1//1 2//1 3//1\n", tri012, 1);
}
END_TEST

START_TEST(obj_v_vt_vn)
{
	obj_ok("vt 0 0\nvn 0 0 1\nf 1/1/1 2/1/1 3/-1/-1\n", tri012, 1);
}
END_TEST

START_TEST(obj_w_ignored)
{
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_int_eq(obj_str("v 0 0 0 1\nv 1 0 0 0.5\nv 0 1 0 2\nf 1 2 3\n",
				 MAXT, &m, msg), API_OK);
	assert_xyz(&m, tri3_xyz, 3);
	mesh_data_release(&m);
}
END_TEST

START_TEST(obj_negative_indices)
{
	struct mesh_data m;
	char msg[MSGLEN];
	/* -1 is the latest vertex at the face's line, not at the end of the file */
	const char *text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\n"
			   "v 1 1 0\nf -1 -2 -4\nf 4 -3 1\n";
	const uint32_t want[] = { 0, 1, 2, 3, 2, 0, 3, 1, 0 };

	ck_assert_int_eq(obj_str(text, MAXT, &m, msg), API_OK);
	ck_assert_uint_eq(m.nvert, 4);
	assert_tris(&m, want, 3);
	mesh_data_release(&m);
}
END_TEST

/* A UTF-8 byte order mark before the first line is not part of it: the
 * first vertex is read (it once went unread, every index after it shifted:
 * a wrong mesh, stored with 201). */
START_TEST(obj_byte_order_mark)
{
	struct mesh_data m;
	char msg[MSGLEN];
	const char *text = "\xef\xbb\xbfv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
	const char *neg = "\xef\xbb\xbfv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf -4 -3 -2\n";

	ck_assert_msg(obj_str(text, MAXT, &m, msg) == API_OK, "%s", msg);
	assert_xyz(&m, tri3_xyz, 3);
	assert_tris(&m, tri012, 1);
	mesh_data_release(&m);
	ck_assert_msg(obj_str(neg, MAXT, &m, msg) == API_OK, "%s", msg);
	ck_assert_uint_eq(m.nvert, 4);
	assert_tris(&m, tri012, 1);
	mesh_data_release(&m);
}
END_TEST

START_TEST(obj_polygons_fan)
{
	struct mesh_data m;
	char msg[MSGLEN];
	const char *text = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv -1 0 0\n"
			   "f 1 2 3 4\nf 5 4 3 2 1\nf 1 2 3\n";
	const uint32_t want[] = { 0, 1, 2, 0, 2, 3,	/* quad */
				  4, 3, 2, 4, 2, 1, 4, 1, 0,	/* pentagon */
				  0, 1, 2 };

	ck_assert_int_eq(obj_str(text, MAXT, &m, msg), API_OK);
	assert_tris(&m, want, 6);
	mesh_data_release(&m);
}
END_TEST

START_TEST(obj_ignored_statements)
{
	obj_ok("# comment\n\n   \nmtllib a.mtl\no thing\ng group\ns 1\nusemtl red\n"
	       "vt 0.5 0.5\nvn 0 0 1\nvp 0.1\nl 1 2\np 1\ncstype bezier\n"
	       "f 1 2 3 # trailing comment\n#f 1 2 3\n", tri012, 1);
}
END_TEST

START_TEST(obj_crlf_tabs)
{
	struct mesh_data m;
	char msg[MSGLEN];
	const char *text = "v\t0\t0 0\r\nv  1 0\t\t0\r\n\tv 0 1 0\r\n\r\nf\t1\t2   3\r\n";

	ck_assert_int_eq(obj_str(text, MAXT, &m, msg), API_OK);
	assert_xyz(&m, tri3_xyz, 3);
	assert_tris(&m, tri012, 1);
	mesh_data_release(&m);
}
END_TEST

START_TEST(obj_forward_absolute_reference)
{
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_int_eq(obj_str("f 3 2 1\nv 0 0 0\nv 1 0 0\nv 0 1 0", MAXT, &m, msg), API_OK);
	ck_assert_uint_eq(m.idx[0], 2);
	ck_assert_uint_eq(m.idx[2], 0);
	mesh_data_release(&m);
}
END_TEST

START_TEST(obj_not_nul_terminated)
{
	/* the byte after len must not be read: "f 1 2 3" then a stray '9' */
	const char src[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 39";
	size_t len = sizeof(src) - 2;
	char *exact = malloc(len), msg[MSGLEN];
	struct mesh_data m;

	ck_assert_ptr_nonnull(exact);
	memcpy(exact, src, len);
	ck_assert_int_eq(obj_parse_msg(exact, len, MAXT, &m, msg, sizeof(msg)), API_OK);
	assert_tris(&m, tri012, 1);
	mesh_data_release(&m);
	free(exact);
}
END_TEST

START_TEST(obj_number_forms)
{
	struct mesh_data m;
	char msg[MSGLEN];
	const char *text = "v 1. .5 -0\nv +1e2 1E-3 16777217\nv 0.1 -3.4028235e38 1e-45\nf 1 2 3\n";
	const float want[] = { 1.0f, 0.5f, -0.0f, 100.0f, 1e-3f, 16777216.0f,
			       0.1f, -3.4028235e38f, 1e-45f };

	ck_assert_int_eq(obj_str(text, MAXT, &m, msg), API_OK);
	assert_xyz(&m, want, 3);
	ck_assert(signbit(m.xyz[2]));
	mesh_data_release(&m);
}
END_TEST

START_TEST(obj_max_tris_boundary)
{
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_int_eq(obj_str("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n", 2, &m, msg),
			 API_OK);
	ck_assert_uint_eq(m.ntri, 2);
	mesh_data_release(&m);
}
END_TEST

START_TEST(obj_too_many_triangles)
{
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_int_eq(obj_str("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nf 1 2 3\n",
				 2, &m, msg), API_PAYLOAD_TOO_LARGE);
	ck_assert_ptr_nonnull(strstr(msg, "more than 2 triangles"));
	assert_empty(&m);
}
END_TEST

START_TEST(obj_msg_may_be_null)
{
	struct mesh_data m;

	ck_assert_int_eq(obj_parse_msg("f 1 2", 5, MAXT, &m, NULL, 0), API_INVALID_MESH);
	assert_empty(&m);
	ck_assert_int_eq(stl_parse_msg("x", 1, MAXT, &m, NULL, 0), API_INVALID_MESH);
	assert_empty(&m);
}
END_TEST

START_TEST(obj_empty_input)
{
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_int_eq(obj_parse_msg(NULL, 0, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_ptr_nonnull(strstr(msg, "no triangles"));
	assert_empty(&m);
}
END_TEST

/* Each malformed input, the error and a piece of its message. */
static const struct bad_case {
	const char *text;
	enum api_err err;
	const char *msg;
} obj_bad[] = {
	{ "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n", API_INVALID_MESH,
	  "line 2: vertex coordinate 'nan' is not a finite float" },
	{ "v 0 0 inf\n", API_INVALID_MESH, "line 1: vertex coordinate 'inf' is not a finite float" },
	{ "v 0 -infinity 0\n", API_INVALID_MESH, "line 1: vertex coordinate '-infinity' is not a" },
	{ "\n\nv 1e39 0 0\n", API_INVALID_MESH, "line 3: vertex coordinate '1e39' is not a finite float" },
	{ "v 0 -3.4028236e38 0\n", API_INVALID_MESH, "line 1: vertex coordinate '-3.4028236e38'" },
	{ "v 0 0 1e99999999999999\n", API_INVALID_MESH, "not a finite float" },
	{ "v 0x1p3 0 0\n", API_INVALID_MESH, "line 1: vertex coordinate '0x1p3'" },
	{ "v 1.0.0 0 0\n", API_INVALID_MESH, "line 1: vertex coordinate '1.0.0'" },
	{ "v 1e 0 0\n", API_INVALID_MESH, "line 1: vertex coordinate '1e'" },
	{ "v . 0 0\n", API_INVALID_MESH, "line 1: vertex coordinate '.'" },
	{ "v 1,5 0 0\n", API_INVALID_MESH, "line 1: vertex coordinate '1,5'" },
	{ "v 1 2\nf 1 1 1\n", API_INVALID_MESH, "line 1: vertex needs 3 coordinates" },
	{ "v\n", API_INVALID_MESH, "line 1: vertex needs 3 coordinates" },
	{ "v 1 2 # 3\n", API_INVALID_MESH, "line 1: vertex needs 3 coordinates" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", API_INVALID_MESH,
	  "line 4: vertex index 0 is invalid" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\nf 1 2 3\n", API_INVALID_MESH,
	  "line 4: vertex index 4 out of range (the file has 3 vertices)" },
	{ "f 1 2 3\n", API_INVALID_MESH, "line 1: vertex index 3 out of range (the file has 0 vertices)" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n", API_INVALID_MESH,
	  "line 4: vertex index '99999999999999999999' out of range" },
	{ "v 0 0 0\nv 1 0 0\nf -1 -2 -3\nv 0 1 0\n", API_INVALID_MESH,
	  "line 3: relative vertex index '-3' out of range (2 vertices so far)" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 a\n", API_INVALID_MESH, "line 4: bad face vertex 'a'" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/1/1/1\n", API_INVALID_MESH,
	  "line 4: bad face vertex '3/1/1/1'" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/\n", API_INVALID_MESH, "line 4: bad face vertex '3/'" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3//\n", API_INVALID_MESH, "line 4: bad face vertex '3//'" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/x\n", API_INVALID_MESH, "line 4: bad face vertex '3/x'" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 /3\n", API_INVALID_MESH, "line 4: bad face vertex '/3'" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3.0\n", API_INVALID_MESH, "line 4: bad face vertex '3.0'" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", API_INVALID_MESH,
	  "line 4: face has 2 vertices, needs at least 3" },
	{ "v 0 0 0\nf\n", API_INVALID_MESH, "line 2: face has 0 vertices" },
	{ "v 0 0 0\nv 1 0 0\nv 0 1 0\n", API_INVALID_MESH, "no triangles" },
	{ "# nothing\n\n", API_INVALID_MESH, "no triangles" },
	{ "", API_INVALID_MESH, "no triangles" },
};

START_TEST(obj_errors)
{
	const struct bad_case *c = &obj_bad[_i];
	struct mesh_data m = { .nvert = 7 };	/* garbage in: must come back empty */
	char msg[MSGLEN];

	ck_assert_int_eq(obj_str(c->text, MAXT, &m, msg), c->err);
	ck_assert_msg(strstr(msg, c->msg), "case %d: message '%s', want '%s'", _i, msg, c->msg);
	assert_empty(&m);
}
END_TEST

/* ---- the float parser against strtof */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	/* splitmix64 */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static unsigned rng_below(struct rng *r, unsigned n)
{
	return (unsigned)(rng_next(r) % n);
}

static float rng_float(struct rng *r)
{
	float f;
	uint32_t u;

	switch (rng_below(r, 4)) {
	case 0:		/* a small grid value, like real models */
		return (float)((int)rng_below(r, 4001) - 2000) / 16.0f;
	case 1:
		return (float)((double)(rng_next(r) >> 11) / 9007199254740992.0 * 200.0 - 100.0);
	default:	/* any finite bit pattern: subnormals, huge, -0 */
		do {
			u = (uint32_t)rng_next(r);
			memcpy(&f, &u, sizeof(f));
		} while (!isfinite(f));
		return f;
	}
}

START_TEST(float_parser_matches_strtof)
{
	struct rng r = { 12345 };
	char s[96];

	for (int iter = 0; iter < 200000; iter++) {
		size_t n = 0;
		unsigned nint = rng_below(&r, 12), nfrac = rng_below(&r, 14);
		float want, got = 12345.0f;
		enum api_err err;
		char *end;

		if (rng_below(&r, 3) == 0)
			s[n++] = rng_below(&r, 2) ? '-' : '+';
		for (unsigned i = 0; i < nint; i++)
			s[n++] = (char)('0' + rng_below(&r, 10));
		if (nfrac || !nint) {
			s[n++] = '.';
			for (unsigned i = 0; i < nfrac || (!nint && i == 0); i++)
				s[n++] = (char)('0' + rng_below(&r, 10));
		}
		if (rng_below(&r, 2))
			n += (size_t)snprintf(s + n, sizeof(s) - n, "e%d",
					      (int)rng_below(&r, 100) - 55);
		s[n] = '\0';
		want = strtof(s, &end);
		ck_assert(end == s + n);
		err = formats_parse_float(s, n, &got);
		if (isfinite(want)) {
			ck_assert_msg(err == API_OK, "'%s' rejected", s);
			ck_assert_msg(memcmp(&got, &want, sizeof(got)) == 0,
				      "'%s': got %a, strtof %a", s, (double)got, (double)want);
		} else {
			ck_assert_msg(err == API_INVALID_MESH, "'%s' accepted", s);
		}
	}
	/* printed floats come back exactly: 9 significant digits are enough */
	for (int iter = 0; iter < 100000; iter++) {
		static const char *const fmts[] = { "%.9g", "%.17g", "%.8e", "%.12g" };
		float f = rng_float(&r), got;
		int k = (int)rng_below(&r, 4);

		snprintf(s, sizeof(s), fmts[k], (double)f);
		ck_assert_int_eq(formats_parse_float(s, strlen(s), &got), API_OK);
		ck_assert_msg(memcmp(&got, &f, sizeof(f)) == 0, "'%s': got %a, want %a",
			      s, (double)got, (double)f);
	}
}
END_TEST

START_TEST(float_parser_long_tokens)
{
	/* longer than any stack buffer: 300 digits after "0." then "1e300" */
	char s[400];
	size_t n = 0;
	float got;

	s[n++] = '0';
	s[n++] = '.';
	while (n < 302)
		s[n++] = '0';
	memcpy(s + n, "1e300", 5);
	n += 5;
	ck_assert_int_eq(formats_parse_float(s, n, &got), API_OK);
	ck_assert(got == 1e-1f);
	ck_assert_int_eq(formats_parse_float(s, n - 1, &got), API_OK);	/* "...1e30" */
	ck_assert(got == 0.0f);
}
END_TEST

/* ---- STL */

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static void put_lef(unsigned char *p, float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	put_le32(p, u);
}

/* A binary STL of ntri facets from xyz (9 floats a facet); header given or zeros. */
static unsigned char *stl_binary_make(const float *xyz, size_t ntri, const char *header,
				      size_t *len)
{
	unsigned char *b;

	*len = 84 + 50 * ntri;
	b = calloc(1, *len);
	ck_assert_ptr_nonnull(b);
	if (header)
		memcpy(b, header, strlen(header));
	put_le32(b + 80, (uint32_t)ntri);
	for (size_t k = 0; k < ntri; k++) {
		unsigned char *rec = b + 84 + 50 * k;

		put_lef(rec, 0.0f);	/* normal */
		put_lef(rec + 4, 0.0f);
		put_lef(rec + 8, 1.0f);
		for (size_t j = 0; j < 9; j++)
			put_lef(rec + 12 + 4 * j, xyz[9 * k + j]);
		rec[48] = 0xab;	/* attribute, ignored */
	}
	return b;
}

static const float two_facets[] = { 0, 0, 0, 1, 0, 0, 0, 1, 0,
				    1, 1, 1, 2, 1, 1, 1, 2.5f, -1 };
static const uint32_t identity6[] = { 0, 1, 2, 3, 4, 5 };

static void stl_binary_ok(const char *header)
{
	struct mesh_data m;
	char msg[MSGLEN];
	size_t len;
	unsigned char *b = stl_binary_make(two_facets, 2, header, &len);

	ck_assert_msg(stl_parse_msg(b, len, MAXT, &m, msg, sizeof(msg)) == API_OK, "%s", msg);
	assert_xyz(&m, two_facets, 6);
	assert_tris(&m, identity6, 2);
	mesh_data_release(&m);
	free(b);
}

START_TEST(stl_binary)
{
	stl_binary_ok("binary STL from a test");
}
END_TEST

START_TEST(stl_binary_solid_header)
{
	stl_binary_ok("solid but binary");
}
END_TEST

static const char ascii_two[] =
	"solid test\n"
	"  facet normal 0 0 1\n    outer loop\n"
	"      vertex 0 0 0\n      vertex 1 0 0\n      vertex 0 1 0\n"
	"    endloop\n  endfacet\n"
	"  facet normal 0 0 1\n    outer loop\n"
	"      vertex 1 1 1\n      vertex 2e0 1 1\n      vertex 1 2.5 -1\n"
	"    endloop\n  endfacet\n"
	"endsolid test\n";

START_TEST(stl_ascii)
{
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_msg(stl_str(ascii_two, MAXT, &m, msg) == API_OK, "%s", msg);
	assert_xyz(&m, two_facets, 6);
	assert_tris(&m, identity6, 2);
	mesh_data_release(&m);
}
END_TEST

START_TEST(stl_ascii_variants)
{
	/* BOM, CRLF, upper case, nan normal, no name, two solids, no final newline */
	const char *text =
		"\xef\xbb\xbf  SOLID\r\nFACET NORMAL nan nan nan\r\nOUTER LOOP\r\n"
		"VERTEX 0 0 0\r\nVERTEX 1 0 0\r\nVERTEX 0 1 0\r\nENDLOOP\r\nENDFACET\r\nENDSOLID\r\n"
		"solid second\nfacet normal 0 0 1 outer loop vertex 1 1 1 vertex 2 1 1 "
		"vertex 1 2.5 -1 endloop endfacet endsolid second";
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_msg(stl_str(text, MAXT, &m, msg) == API_OK, "%s", msg);
	assert_xyz(&m, two_facets, 6);
	mesh_data_release(&m);
}
END_TEST

START_TEST(stl_binary_truncated)
{
	struct mesh_data m;
	char msg[MSGLEN];
	size_t len;
	unsigned char *b = stl_binary_make(two_facets, 2, "solid x", &len);

	put_le32(b + 80, 3);	/* says 3, holds 2 */
	ck_assert_int_eq(stl_parse_msg(b, len, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	assert_empty(&m);
	/* starts with "solid" but holds NULs: binary, and the message says
	 * what is wrong with it (it was once read as ASCII: "line 1: ...") */
	ck_assert_msg(strstr(msg, "truncated binary STL") && strstr(msg, "says 3 facets"), "%s", msg);
	put_le32(b + 80, 1);	/* says 1, holds 2 */
	ck_assert_int_eq(stl_parse_msg(b, len, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_msg(strstr(msg, "count mismatch") && strstr(msg, "says 1 facets"), "%s", msg);
	free(b);

	b = stl_binary_make(two_facets, 2, NULL, &len);
	ck_assert_int_eq(stl_parse_msg(b, len - 20, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_msg(strstr(msg, "truncated binary STL") && strstr(msg, "facet 2 is incomplete"),
		      "%s", msg);
	assert_empty(&m);
	ck_assert_int_eq(stl_parse_msg(b, 60, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_msg(strstr(msg, "not an STL file"), "%s", msg);
	free(b);
}
END_TEST

START_TEST(stl_binary_count_mismatch)
{
	struct mesh_data m;
	char msg[MSGLEN];
	size_t len;
	unsigned char *b = stl_binary_make(two_facets, 2, NULL, &len);

	put_le32(b + 80, 1);	/* says 1, holds 2 */
	ck_assert_int_eq(stl_parse_msg(b, len, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_msg(strstr(msg, "count mismatch") && strstr(msg, "says 1 facets"), "%s", msg);
	assert_empty(&m);
	put_le32(b + 80, 0xffffffffu);	/* 84 + 50 * count must not wrap */
	ck_assert_int_eq(stl_parse_msg(b, len, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_msg(strstr(msg, "truncated"), "%s", msg);
	free(b);
}
END_TEST

START_TEST(stl_binary_not_finite)
{
	struct mesh_data m;
	char msg[MSGLEN];
	size_t len;
	float bad[18];
	unsigned char *b;

	memcpy(bad, two_facets, sizeof(bad));
	bad[13] = INFINITY;
	b = stl_binary_make(bad, 2, NULL, &len);
	ck_assert_int_eq(stl_parse_msg(b, len, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_msg(strstr(msg, "facet 2: vertex coordinate is not a finite float"), "%s", msg);
	assert_empty(&m);
	free(b);
	bad[13] = 0;
	bad[2] = NAN;
	b = stl_binary_make(bad, 2, NULL, &len);
	ck_assert_int_eq(stl_parse_msg(b, len, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_msg(strstr(msg, "facet 1:"), "%s", msg);
	free(b);
}
END_TEST

START_TEST(stl_binary_empty)
{
	struct mesh_data m;
	char msg[MSGLEN];
	size_t len;
	unsigned char *b = stl_binary_make(NULL, 0, NULL, &len);

	ck_assert_int_eq(stl_parse_msg(b, len, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_ptr_nonnull(strstr(msg, "no triangles"));
	ck_assert_int_eq(stl_parse_msg(b, 0, MAXT, &m, msg, sizeof(msg)), API_INVALID_MESH);
	ck_assert_ptr_nonnull(strstr(msg, "no triangles"));
	free(b);
}
END_TEST

START_TEST(stl_too_many_triangles)
{
	struct mesh_data m;
	char msg[MSGLEN];
	size_t len;
	unsigned char *b = stl_binary_make(two_facets, 2, NULL, &len);

	ck_assert_int_eq(stl_parse_msg(b, len, 1, &m, msg, sizeof(msg)), API_PAYLOAD_TOO_LARGE);
	ck_assert_msg(strstr(msg, "more than the limit of 1"), "%s", msg);
	assert_empty(&m);
	ck_assert_int_eq(stl_parse_msg(b, len, 2, &m, msg, sizeof(msg)), API_OK);
	mesh_data_release(&m);
	free(b);

	ck_assert_int_eq(stl_str(ascii_two, 1, &m, msg), API_PAYLOAD_TOO_LARGE);
	ck_assert_msg(strstr(msg, "more than 1 triangles"), "%s", msg);
	assert_empty(&m);
}
END_TEST

static const struct bad_case stl_bad[] = {
	{ "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n", API_INVALID_MESH,
	  "line 5 (facet 1): expected 'vertex', found the end of the file" },
	{ "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
	  "endloop\nendfacet\n", API_INVALID_MESH, "line 8: the file ends without 'endsolid'" },
	{ "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1",
	  API_INVALID_MESH, "line 6 (facet 1): the file ends in a vertex" },
	{ "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 nan 0\nvertex 0 1 0\n"
	  "endloop\nendfacet\nendsolid\n", API_INVALID_MESH,
	  "line 5 (facet 1): vertex coordinate 'nan' is not a finite float" },
	{ "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 1e39\n"
	  "endloop\nendfacet\nendsolid\n", API_INVALID_MESH, "line 6 (facet 1): vertex coordinate '1e39'" },
	{ "solid x\nfacet normal 0 0 1\nouter loop\nvertx 0 0 0\n", API_INVALID_MESH,
	  "line 4 (facet 1): expected 'vertex', found 'vertx'" },
	{ "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
	  "vertex 0 0 1\nendloop\nendfacet\nendsolid\n", API_INVALID_MESH,
	  "line 7 (facet 1): expected 'endloop', found 'vertex'" },
	{ "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
	  "endloop\nendfacet\nfacet\n", API_INVALID_MESH,
	  "line 9 (facet 2): expected 'normal', found the end of the file" },
	{ "solid x\nfoo\n", API_INVALID_MESH, "line 2: expected 'facet' or 'endsolid', found 'foo'" },
	{ "solid x\nendsolid x\nrubbish\n", API_INVALID_MESH,
	  "line 3: expected 'solid' or the end of the file after 'endsolid'" },
	{ "solid x\nendsolid x\n", API_INVALID_MESH, "no triangles" },
	{ "solid", API_INVALID_MESH, "line 1: the file ends without 'endsolid'" },
	{ "solidity", API_INVALID_MESH, "not an STL file" },
};

START_TEST(stl_errors)
{
	const struct bad_case *c = &stl_bad[_i];
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_int_eq(stl_str(c->text, MAXT, &m, msg), c->err);
	ck_assert_msg(strstr(msg, c->msg), "case %d: message '%s', want '%s'", _i, msg, c->msg);
	assert_empty(&m);
}
END_TEST

START_TEST(release_zeroes)
{
	struct mesh_data m;
	char msg[MSGLEN];

	ck_assert_int_eq(obj_str("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", MAXT, &m, msg), API_OK);
	mesh_data_release(&m);
	assert_empty(&m);
	mesh_data_release(&m);	/* twice is fine */
	mesh_data_release(NULL);
}
END_TEST

/* ---- randomised round trip: mesh -> OBJ / binary STL / ASCII STL -> mesh */

struct rmesh {
	float *xyz;
	size_t nvert;
	uint32_t *idx;	/* after fan triangulation */
	size_t ntri;
	uint32_t *poly;	/* polygon vertex lists, concatenated */
	size_t *poly_n;
	size_t npoly;
};

static void rmesh_make(struct rng *r, struct rmesh *m)
{
	size_t cap;

	m->nvert = 1 + rng_below(r, 60);
	m->npoly = 1 + rng_below(r, 40);
	m->xyz = malloc(3 * m->nvert * sizeof(*m->xyz));
	m->poly_n = malloc(m->npoly * sizeof(*m->poly_n));
	cap = 8 * m->npoly;
	m->poly = malloc(cap * sizeof(*m->poly));
	m->idx = malloc(3 * cap * sizeof(*m->idx));
	ck_assert(m->xyz && m->poly_n && m->poly && m->idx);
	for (size_t i = 0; i < 3 * m->nvert; i++)
		m->xyz[i] = rng_float(r);
	m->ntri = 0;
	for (size_t p = 0, at = 0; p < m->npoly; p++) {
		size_t k = 3 + (rng_below(r, 3) ? 0 : rng_below(r, 5));
		uint32_t *v = m->poly + at;

		m->poly_n[p] = k;
		for (size_t i = 0; i < k; i++)
			v[i] = rng_below(r, (unsigned)m->nvert);
		for (size_t i = 2; i < k; i++) {
			m->idx[3 * m->ntri] = v[0];
			m->idx[3 * m->ntri + 1] = v[i - 1];
			m->idx[3 * m->ntri + 2] = v[i];
			m->ntri++;
		}
		at += k;
	}
}

static void rmesh_free(struct rmesh *m)
{
	free(m->xyz);
	free(m->idx);
	free(m->poly);
	free(m->poly_n);
}

static const char *rsep(struct rng *r)
{
	static const char *const s[] = { " ", " ", " ", "\t", "  ", " \t" };

	return s[rng_below(r, 6)];
}

static const char *reol(struct rng *r)
{
	return rng_below(r, 3) ? "\n" : "\r\n";
}

static void write_coord(FILE *f, struct rng *r, float x)
{
	static const char *const fmts[] = { "%.9g", "%.17g", "%.8e" };

	fprintf(f, fmts[rng_below(r, 3)], (double)x);
}

static void write_noise(FILE *f, struct rng *r)
{
	static const char *const s[] = { "vt 0.5 0.25", "vn 0 0 1", "# comment f 1 2", "",
					 "g group", "s off", "usemtl mat", "o object", "l 1 2", "p 1",
					 "  ", "mtllib x.mtl" };

	fputs(s[rng_below(r, 12)], f);
	fputs(reol(r), f);
}

/* OBJ with vertices and polygons interleaved, every reference form mixed. */
static char *obj_write(struct rng *r, const struct rmesh *m, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	size_t nv = 0, np = 0, at = 0;

	ck_assert_ptr_nonnull(f);
	while (nv < m->nvert || np < m->npoly) {
		if (rng_below(r, 4) == 0)
			write_noise(f, r);
		if (np == m->npoly || (nv < m->nvert && rng_below(r, 2))) {
			fputs("v", f);
			for (int c = 0; c < 3; c++) {
				fputs(rsep(r), f);
				write_coord(f, r, m->xyz[3 * nv + c]);
			}
			if (rng_below(r, 5) == 0)
				fprintf(f, "%s1.0", rsep(r));
			fputs(reol(r), f);
			nv++;
			continue;
		}
		fputs("f", f);
		for (size_t i = 0; i < m->poly_n[np]; i++) {
			uint32_t v = m->poly[at + i];
			long long ref = (long long)v + 1;

			if (v < nv && rng_below(r, 2))
				ref = (long long)v - (long long)nv;	/* relative: -1 is the latest */
			fprintf(f, "%s%lld", rsep(r), ref);
			switch (rng_below(r, 4)) {
			case 1: fprintf(f, "/%u", 1 + rng_below(r, 9)); break;
			case 2: fprintf(f, "//%u", 1 + rng_below(r, 9)); break;
			case 3: fprintf(f, "/%u/-%u", 1 + rng_below(r, 9), 1 + rng_below(r, 9)); break;
			}
		}
		if (rng_below(r, 2) || np + 1 < m->npoly || nv < m->nvert)
			fputs(reol(r), f);
		at += m->poly_n[np++];
	}
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

static char *stl_ascii_write(struct rng *r, const struct rmesh *m, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	ck_assert_ptr_nonnull(f);
	fprintf(f, "solid random%s", reol(r));
	for (size_t t = 0; t < m->ntri; t++) {
		fprintf(f, " facet normal 0 0 1%s  outer loop%s", reol(r), reol(r));
		for (int k = 0; k < 3; k++) {
			const float *p = m->xyz + 3 * m->idx[3 * t + k];

			fputs("   vertex", f);
			for (int c = 0; c < 3; c++) {
				fputs(rsep(r), f);
				write_coord(f, r, p[c]);
			}
			fputs(reol(r), f);
		}
		fprintf(f, "  endloop%s endfacet%s", reol(r), reol(r));
	}
	fprintf(f, "endsolid random%s", reol(r));
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* The expected STL result: three fresh vertices per triangle. */
static float *stl_expected(const struct rmesh *m)
{
	float *xyz = malloc(9 * m->ntri * sizeof(*xyz));

	ck_assert_ptr_nonnull(xyz);
	for (size_t t = 0; t < m->ntri; t++)
		for (int k = 0; k < 3; k++)
			memcpy(xyz + 9 * t + 3 * k, m->xyz + 3 * m->idx[3 * t + k], 3 * sizeof(*xyz));
	return xyz;
}

static void assert_stl_result(const struct mesh_data *d, const float *want, size_t ntri)
{
	ck_assert_uint_eq(d->ntri, ntri);
	ck_assert_uint_eq(d->nvert, 3 * ntri);
	ck_assert(memcmp(d->xyz, want, 9 * ntri * sizeof(*want)) == 0);
	for (size_t i = 0; i < 3 * ntri; i++)
		ck_assert_uint_eq(d->idx[i], i);
}

START_TEST(random_round_trip)
{
	struct rng r = { 777 };
	char msg[MSGLEN];

	for (int iter = 0; iter < 2000; iter++) {
		struct rmesh m;
		struct mesh_data d;
		size_t len;
		char *text;
		unsigned char *bin;
		float *want;

		rmesh_make(&r, &m);
		text = obj_write(&r, &m, &len);
		ck_assert_msg(obj_parse_msg(text, len, m.ntri, &d, msg, sizeof(msg)) == API_OK,
			      "iter %d: %s\n%s", iter, msg, text);
		assert_xyz(&d, m.xyz, m.nvert);
		assert_tris(&d, m.idx, m.ntri);
		mesh_data_release(&d);
		if (m.ntri > 1)
			ck_assert_int_eq(obj_parse_msg(text, len, m.ntri - 1, &d, msg, sizeof(msg)),
					 API_PAYLOAD_TOO_LARGE);
		free(text);

		want = stl_expected(&m);
		bin = stl_binary_make(want, m.ntri, rng_below(&r, 2) ? "solid random" : NULL, &len);
		ck_assert_msg(stl_parse_msg(bin, len, m.ntri, &d, msg, sizeof(msg)) == API_OK, "%s", msg);
		assert_stl_result(&d, want, m.ntri);
		mesh_data_release(&d);
		free(bin);

		text = stl_ascii_write(&r, &m, &len);
		ck_assert_msg(stl_parse_msg(text, len, m.ntri, &d, msg, sizeof(msg)) == API_OK,
			      "iter %d: %s", iter, msg);
		assert_stl_result(&d, want, m.ntri);
		mesh_data_release(&d);
		free(text);
		free(want);
		rmesh_free(&m);
	}
}
END_TEST

static Suite *formats_suite(void)
{
	Suite *s = suite_create("formats");
	TCase *obj = tcase_create("obj"), *num = tcase_create("numbers");
	TCase *stl = tcase_create("stl"), *rt = tcase_create("round_trip");

	tcase_add_test(obj, obj_plain_indices);
	tcase_add_test(obj, obj_v_vt);
	tcase_add_test(obj, obj_v_vn);
	tcase_add_test(obj, obj_v_vt_vn);
	tcase_add_test(obj, obj_w_ignored);
	tcase_add_test(obj, obj_negative_indices);
	tcase_add_test(obj, obj_byte_order_mark);
	tcase_add_test(obj, obj_polygons_fan);
	tcase_add_test(obj, obj_ignored_statements);
	tcase_add_test(obj, obj_crlf_tabs);
	tcase_add_test(obj, obj_forward_absolute_reference);
	tcase_add_test(obj, obj_not_nul_terminated);
	tcase_add_test(obj, obj_number_forms);
	tcase_add_test(obj, obj_max_tris_boundary);
	tcase_add_test(obj, obj_too_many_triangles);
	tcase_add_test(obj, obj_msg_may_be_null);
	tcase_add_test(obj, obj_empty_input);
	tcase_add_loop_test(obj, obj_errors, 0, (int)(sizeof(obj_bad) / sizeof(obj_bad[0])));
	tcase_add_test(obj, release_zeroes);
	suite_add_tcase(s, obj);

	tcase_add_test(num, float_parser_matches_strtof);
	tcase_add_test(num, float_parser_long_tokens);
	tcase_set_timeout(num, 60);
	suite_add_tcase(s, num);

	tcase_add_test(stl, stl_binary);
	tcase_add_test(stl, stl_binary_solid_header);
	tcase_add_test(stl, stl_ascii);
	tcase_add_test(stl, stl_ascii_variants);
	tcase_add_test(stl, stl_binary_truncated);
	tcase_add_test(stl, stl_binary_count_mismatch);
	tcase_add_test(stl, stl_binary_not_finite);
	tcase_add_test(stl, stl_binary_empty);
	tcase_add_test(stl, stl_too_many_triangles);
	tcase_add_loop_test(stl, stl_errors, 0, (int)(sizeof(stl_bad) / sizeof(stl_bad[0])));
	suite_add_tcase(s, stl);

	tcase_add_test(rt, random_round_trip);
	tcase_set_timeout(rt, 120);
	suite_add_tcase(s, rt);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(formats_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
