/* rays_direct.c - the fast path of decode_ray_query, decode_segment_query,
 * decode_obb_query and decode_hitscan_query: a plainly valid batch of rays,
 * segments or shots, or a single one, read straight from the body text, no
 * tree (decode.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "decode_fields.h"
#include "json.h"
#include "json_direct.h"
#include "query_rules.h"

/*
 * Every value goes through the parser's and the tree path's own code:
 * numbers through json_cursor_number, the option strings through
 * json_cursor_string (escapes included), the options through
 * query_set_opts on cJSON nodes standing for the values, a transform
 * through json_parse and decode_xform on its own text, a segment through
 * segment_qray, a ray through the field rules (FIELD_VEC3, FIELD_DIR,
 * FIELD_POSITIVE) and qray_init as decode_ray calls it, a hitscan's
 * "mesh", "transform" and "boxes" (an OBB raycast's "boxes") through
 * decode_hitscan_targets (decode_obb_targets) on a tree of their own text.
 * Anything else is declined, never judged here: an escaped key, null, a
 * missing or repeated member, a wrong type, a rule broken, a limit passed.
 * So the only errors are the tree path's.
 */

/* The members known here: a ray's, a segment's, then the top level's. */
enum key { K_ORIGIN, K_DIRECTION, K_MAX_DISTANCE, K_START, K_END, K_RAYS, K_SEGMENTS,
	   K_SHOTS, K_MODE, K_MAX_HITS, K_BACKFACES, K_TRANSFORM, K_MESH, K_BOXES, K_NONE };

#define KEY_BIT(k) (1u << (k))
#define RAY_KEYS (KEY_BIT(K_ORIGIN) | KEY_BIT(K_DIRECTION) | KEY_BIT(K_MAX_DISTANCE))
#define SEGMENT_KEYS (KEY_BIT(K_START) | KEY_BIT(K_END))
#define OPTION_KEYS (KEY_BIT(K_MODE) | KEY_BIT(K_MAX_HITS) | KEY_BIT(K_BACKFACES) | \
		     KEY_BIT(K_TRANSFORM))
#define TARGET_KEYS (KEY_BIT(K_MESH) | KEY_BIT(K_TRANSFORM) | KEY_BIT(K_BOXES))

static const struct direct_key keys[K_NONE] = {
	{ "origin", 6 }, { "direction", 9 }, { "max_distance", 12 }, { "start", 5 }, { "end", 3 },
	{ "rays", 4 }, { "segments", 8 }, { "shots", 5 }, { "mode", 4 }, { "max_hits", 8 },
	{ "backfaces", 9 }, { "transform", 9 }, { "mesh", 4 }, { "boxes", 5 },
};

/* Which body: its items' key and the members beside them. */
enum kind { RAYS, SEGMENTS, OBB, SHOTS };

struct direct {
	struct json_cursor c;
	enum kind kind;
	struct query *q;
	size_t max_batch;	/* 0: no limit */
	size_t cap;		/* q->rays */
};

/* A member's value as text: body[at, at + len) (len 0: absent). */
struct span {
	size_t at, len;
};

/* The top level's options once read: each node points at its value when given. */
struct options {
	char mode_s[16], faces_s[16];
	cJSON mode_v, hits_v, faces_v;
	const cJSON *mode, *max_hits, *faces;
	struct span xf, mesh, boxes;	/* any transform; a hitscan's mesh, its or an OBB raycast's boxes */
	int batch;		/* the batch form, not a single ray or segment */
};

/* The key next and the ':' after it: one of the keys in allowed (KEY_BIT
 * set) spelt without escapes, else K_NONE. */
static enum key read_key(struct json_cursor *c, unsigned allowed)
{
	return (enum key)match_key(c, keys, 0, K_NONE, allowed);
}

/* A ray's or segment's members as read so far: a batch element's, or the
 * single form's at the top level. */
struct single {
	double a[3], b[3];	/* origin and direction, or start and end */
	double md;
	unsigned seen;		/* KEY_BIT of the members given */
};

/* One member into one: origin, start and end as FIELD_VEC3, direction as
 * FIELD_DIR (checked non-zero by build_item), max_distance as
 * FIELD_POSITIVE. */
static int read_single_member(struct json_cursor *c, enum key k, struct single *one)
{
	one->seen |= KEY_BIT(k);
	if (k == K_ORIGIN || k == K_START)
		return read_nums(c, one->a, 3);
	if (k == K_DIRECTION || k == K_END)
		return read_nums(c, one->b, 3);
	return number(c, &one->md) || !isfinite(one->md) || !(one->md > 0);
}

/* The item read into *r, as decode_ray and decode_segment build it. */
static int build_item(int segments, const struct single *one, struct qray *r)
{
	memset(r, 0, sizeof(*r));
	if (segments) {
		if ((one->seen & SEGMENT_KEYS) != SEGMENT_KEYS)
			return -1;
		return segment_qray(one->a, one->b, r);
	}
	if ((one->seen & (KEY_BIT(K_ORIGIN) | KEY_BIT(K_DIRECTION))) !=
	    (KEY_BIT(K_ORIGIN) | KEY_BIT(K_DIRECTION)) ||
	    (one->b[0] == 0 && one->b[1] == 0 && one->b[2] == 0))
		return -1;
	qray_init(r, vec3_from(one->a), one->b,
		  (one->seen & KEY_BIT(K_MAX_DISTANCE)) ? tmax_from(one->md) : INFINITY);
	return 0;
}

/* One element of "rays" or "segments", as decode_ray / decode_segment read
 * it (ray_rows, seg_rows). */
static int read_item(struct json_cursor *c, int segments, struct qray *r)
{
	struct single one;
	unsigned seen = 0;
	enum key k;
	int end;

	memset(&one, 0, sizeof(one));
	if (open_object(c))
		return -1;
	do {
		k = read_key(c, segments ? SEGMENT_KEYS : RAY_KEYS);
		if (first_time(k, K_NONE, &seen) || read_single_member(c, k, &one))
			return -1;
	} while ((end = end_member(c, '}')) == 0);
	return end == 1 ? build_item(segments, &one, r) : -1;
}

/* "rays" / "segments": 1..max_batch elements into q->rays. */
static int read_items(struct direct *x)
{
	struct json_cursor *c = &x->c;
	struct query *q = x->q;
	int end;

	if (peek(c) != '[')
		return -1;
	c->i++;
	if (peek(c) == ']')
		return -1;	/* empty: the tree path's (rare) */
	do {
		if (x->max_batch && q->n == x->max_batch)
			return -1;	/* 413 on the tree path */
		if (grow(q->rays, &x->cap, q->n))
			return -1;
		if (read_item(c, q->segments, &q->rays[q->n]))
			return -1;
		q->n++;
	} while ((end = end_member(c, ']')) == 0);
	return end == 1 ? 0 : -1;
}

/* A string value of fewer than cap bytes into buf, *v a cJSON node for it. */
static int read_string(struct json_cursor *c, char *buf, size_t cap, cJSON *v)
{
	size_t len;

	if (string_into(c, buf, cap, &len))	/* or longer than any option's value */
		return -1;
	*v = str_node(buf);
	return 0;
}

/* The value next, opened by open ('{', '[' or '"'), skipped: its text into *sp. */
static int skip_value(struct json_cursor *c, int open, struct span *sp)
{
	if (peek(c) != open)
		return -1;
	sp->at = c->i;
	if (json_cursor_skip(c, 1))
		return -1;
	sp->len = c->i - sp->at;
	return 0;
}

/* One option member's value into o. */
static int read_option(struct json_cursor *c, enum key k, struct options *o)
{
	double d;

	switch (k) {
	case K_MODE:
		o->mode = &o->mode_v;
		return read_string(c, o->mode_s, sizeof(o->mode_s), &o->mode_v);
	case K_BACKFACES:
		o->faces = &o->faces_v;
		return read_string(c, o->faces_s, sizeof(o->faces_s), &o->faces_v);
	case K_MAX_HITS:
		if (number(c, &d))
			return -1;
		o->hits_v = num_node(d);
		o->max_hits = &o->hits_v;
		return 0;
	case K_TRANSFORM:	/* checked here, read by read_xform or read_targets */
		return skip_value(c, '{', &o->xf);
	case K_MESH:		/* read by read_targets */
		return skip_value(c, '"', &o->mesh);
	case K_BOXES:
		return skip_value(c, '[', &o->boxes);
	default:
		return -1;
	}
}

/* The top level's members: the batch ("rays" / "segments") or the single
 * form's members, and the options. */
static int read_top(struct direct *x, struct options *o)
{
	struct json_cursor *c = &x->c;
	struct query *q = x->q;
	enum key items = x->kind == SHOTS ? K_SHOTS : q->segments ? K_SEGMENTS : K_RAYS;
	unsigned item_keys = q->segments ? SEGMENT_KEYS : RAY_KEYS;
	unsigned others = x->kind == SHOTS ? TARGET_KEYS : x->kind == OBB ? KEY_BIT(K_BOXES) :
			  OPTION_KEYS;
	struct single one;
	unsigned seen = 0;
	enum key k;
	int end;

	memset(&one, 0, sizeof(one));
	if (open_object(c))
		return -1;
	do {
		k = read_key(c, KEY_BIT(items) | item_keys | others);
		if (first_time(k, K_NONE, &seen))
			return -1;
		if (k == items ? read_items(x) :
		    (KEY_BIT(k) & item_keys) ? read_single_member(c, k, &one) : read_option(c, k, o))
			return -1;
	} while ((end = end_member(c, '}')) == 0);
	if (end != 1 || json_cursor_finish(c))
		return -1;
	o->batch = (seen & KEY_BIT(items)) != 0;
	if (o->batch)	/* both forms at once: the tree path's 400 */
		return (seen & item_keys) ? -1 : 0;
	if (build_item(q->segments, &one, &q->rays[0]))
		return -1;
	q->n = 1;
	return 0;
}

/* The transform's text s[0..len) (a checked object) into q->xf. */
static int read_xform(const char *s, size_t len, struct query *q)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct jpath p = { NULL, "transform", 0 };
	struct api_fail f;
	const char *why;
	size_t off;
	cJSON *root;
	int r;

	r = json_parse(s, len, &a, &root, &off, &why) || decode_xform(root, &p, &q->xf, &f) ? -1 : 0;
	q->has_xform = r == 0;
	json_arena_release(&a);
	return r;
}

/* What the rays are cast against (kind SHOTS: the hitscan's "mesh",
 * "transform" and "boxes"; OBB: "boxes"), those given in o (texts of body),
 * into q: an object of only them, parsed into a, read by
 * decode_hitscan_targets or decode_obb_targets. */
static int read_targets(const char *body, enum kind kind, const struct options *o,
			const struct api_limits *lim, struct json_arena *a, struct query *q)
{
	const struct {
		const char *key;
		struct span v;
	} m[] = { { "\"mesh\":", o->mesh }, { "\"transform\":", o->xf }, { "\"boxes\":", o->boxes } };
	size_t len = 2;
	struct api_fail f;
	const char *why;
	char *text;
	size_t off;
	cJSON *root;
	int r;

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		len += strlen(m[i].key) + m[i].v.len + 1;
	text = malloc(len);	/* len < the body's length + 30 */
	if (!text)
		return -1;
	len = 0;
	text[len++] = '{';
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		if (!m[i].v.len)
			continue;
		if (len > 1)
			text[len++] = ',';
		memcpy(text + len, m[i].key, strlen(m[i].key));
		len += strlen(m[i].key);
		memcpy(text + len, body + m[i].v.at, m[i].v.len);
		len += m[i].v.len;
	}
	text[len++] = '}';
	r = json_parse(text, len, a, &root, &off, &why) ||
		    (kind == SHOTS ? decode_hitscan_targets(root, lim, q, &f) :
				     decode_obb_targets(root, lim, q, &f)) ? -1 : 0;
	free(text);
	return r;
}

static int decode_direct(const char *body, size_t len, enum kind kind,
			 const struct api_limits *lim, struct json_arena *a, struct query *q)
{
	struct direct x;
	struct options o;
	struct api_fail f;
	int r;

	memset(q, 0, sizeof(*q));
	if (!body || len == 0)
		return 0;
	memset(&o, 0, sizeof(o));
	json_cursor_init(&x.c, body, len);
	x.kind = kind;
	x.q = q;
	x.max_batch = lim->max_batch;
	x.cap = len / 80 + 1;	/* about the smallest ray a client sends at float32 precision */
	if (x.max_batch && x.cap > x.max_batch)
		x.cap = x.max_batch;
	q->segments = kind == SEGMENTS;
	q->rays = malloc(x.cap * sizeof(*q->rays));	/* no overflow: cap <= len / 80 + 1 */
	r = !q->rays || read_top(&x, &o);
	if (!r && (kind == SHOTS || kind == OBB))	/* no options: their defaults are the tree's */
		r = read_targets(body, kind, &o, lim, a, q);
	else if (!r)
		r = query_set_opts(q, o.mode, o.max_hits, o.faces, &f) ||
		    (o.xf.len && read_xform(body + o.xf.at, o.xf.len, q));
	if (r) {
		query_release(q);
		return 0;
	}
	q->items = kind == SHOTS ? "shots" : kind == SEGMENTS ? "segments" : "rays";
	q->batch = o.batch;
	return 1;
}

int decode_ray_query_direct(const char *body, size_t len, const struct api_limits *lim,
			    struct query *q)
{
	return decode_direct(body, len, RAYS, lim, NULL, q);
}

int decode_segment_query_direct(const char *body, size_t len, const struct api_limits *lim,
				struct query *q)
{
	return decode_direct(body, len, SEGMENTS, lim, NULL, q);
}

int decode_obb_query_direct(const char *body, size_t len, const struct api_limits *lim,
			    struct json_arena *a, struct query *q)
{
	return decode_direct(body, len, OBB, lim, a, q);
}

int decode_hitscan_query_direct(const char *body, size_t len, const struct api_limits *lim,
				struct json_arena *a, struct query *q)
{
	return decode_direct(body, len, SHOTS, lim, a, q);
}
