/* world_shots_direct.c - the fast path of decode_world_shots: a plainly valid
 * batch of shots read straight from the body text, no tree (world_decode.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "decode_fields.h"
#include "json.h"
#include "json_direct.h"
#include "world_decode.h"
#include "world_fields.h"

/*
 * Every value goes through the parser's and the tree path's own code:
 * numbers through json_cursor_number, strings (ids, the mode) through
 * json_cursor_string (escapes included), layers, ids and the mode through
 * wf_layer, wf_id and wf_mode on a cJSON node standing for the value, the
 * ray through wf_shot_ray. Anything else is declined, never judged here: an
 * escaped key, null, a missing or repeated member, a wrong type, a rule
 * broken, a limit passed. So the only errors are the tree path's.
 */

/* The members known here, a shot's first (in shot_rows order), then the top level's. */
enum key { K_ORIGIN, K_DIRECTION, K_MAX_DISTANCE, K_TIME_MS, K_IGNORE, K_LAYERS,
	   K_SHOTS, K_MODE, K_MAX_HITS, K_NONE };

static const struct direct_key keys[K_NONE] = {
	{ "origin", 6 }, { "direction", 9 }, { "max_distance", 12 }, { "time_ms", 7 },
	{ "ignore", 6 }, { "layers", 6 }, { "shots", 5 }, { "mode", 4 }, { "max_hits", 8 },
};

/* A shot whose "ignore" was given, until its ids' place is known. */
static const char *const ignore_given[1] = { NULL };

struct direct {
	struct json_cursor c;
	struct world_shots_req *q;
	const struct api_limits *lim;
	size_t shots_cap;	/* q->shots */
	size_t nign, ign_cap;	/* q->ignore */
	size_t ids_used;	/* bytes of q->ids (c.n + 1 when allocated) */
	struct batch_pool *pool;	/* halves a long "shots" array's parse (or NULL) */
	size_t split_min;	/* from this many bytes of it on */
};

/* x reading body[0..len) into q (zeroed): 0, or -1 out of memory. */
static int direct_init(struct direct *x, const char *body, size_t len,
		       const struct api_limits *lim, struct world_shots_req *q)
{
	memset(q, 0, sizeof(*q));
	json_cursor_init(&x->c, body, len);
	x->q = q;
	x->lim = lim;
	x->shots_cap = len / 128 + 1;	/* a game server's shot is 100-150 bytes */
	if (lim->max_batch && x->shots_cap > lim->max_batch)
		x->shots_cap = lim->max_batch;
	x->nign = 0;
	x->ign_cap = 16;
	x->ids_used = 0;
	x->pool = NULL;
	x->split_min = 0;
	q->shots = malloc(x->shots_cap * sizeof(*q->shots));
	q->ignore = malloc(x->ign_cap * sizeof(*q->ignore));
	return q->shots && q->ignore ? 0 : -1;
}

/* The key next and the ':' after it: one of keys[lo..hi) spelt without
 * escapes, else K_NONE. */
static enum key read_key(struct json_cursor *c, enum key lo, enum key hi)
{
	int k = match_key(c, keys, (int)lo, (int)hi, ~0u);

	return k == (int)hi ? K_NONE : (enum key)k;
}

/* "layers": an array of wf_layer values (empty: no layer). */
static int read_layers(struct json_cursor *c, uint32_t *layers)
{
	struct api_fail f;
	uint32_t l;
	double d;
	cJSON v;
	int r;

	*layers = 0;
	if ((r = open_array(c)) != 0)
		return r == 1 ? 0 : -1;
	do {
		if (number(c, &d))
			return -1;
		v = num_node(d);
		if (wf_layer(&v, NULL, &l, &f))
			return -1;
		*layers |= 1u << l;
	} while ((r = end_member(c, ']')) == 0);
	return r == 1 ? 0 : -1;
}

/* id onto q->ignore. */
static int push_id(struct direct *x, const char *id)
{
	struct world_shots_req *q = x->q;

	if (grow(q->ignore, &x->ign_cap, x->nign))
		return -1;
	q->ignore[x->nign++] = id;
	return 0;
}

/* "ignore": at most WORLD_IGNORE_MAX wf_id strings, copied into q->ids. Each
 * id's bytes and NUL fit in its quotes' room in the body, so q->ids (body
 * length + 1 bytes) never runs out. */
static int read_ignore(struct direct *x, struct world_shot *s)
{
	struct json_cursor *c = &x->c;
	struct world_shots_req *q = x->q;
	struct api_fail f;
	const char *id;
	size_t len;
	char *out;
	cJSON v;
	int r;

	if ((r = open_array(c)) < 0)
		return -1;
	s->ignore = ignore_given;
	if (r == 1)
		return 0;
	if (!q->ids && !(q->ids = malloc(c->n + 1)))
		return -1;
	do {
		out = q->ids + x->ids_used;	/* always room (see above) */
		if (s->nignore == WORLD_IGNORE_MAX ||
		    string_into(c, out, c->n + 1 - x->ids_used, &len))
			return -1;
		v = str_node(out);
		if (wf_id(&v, NULL, &id, &f) || push_id(x, id))
			return -1;
		x->ids_used += len + 1;
		s->nignore++;
	} while ((r = end_member(c, ']')) == 0);
	return r == 1 ? 0 : -1;
}

/* One element of "shots", as decode_shot reads it. */
static int read_shot(struct direct *x, struct world_shot *s)
{
	struct json_cursor *c = &x->c;
	double o[3], d[3], md = 0;
	unsigned seen = 0;
	enum key k;
	int r, bad;

	memset(s, 0, sizeof(*s));
	s->layers = WORLD_LAYERS_ALL;
	if (open_object(c))
		return -1;
	do {
		k = read_key(c, K_ORIGIN, K_SHOTS);
		if (first_time(k, K_NONE, &seen))
			return -1;
		switch (k) {
		case K_ORIGIN:
			bad = read_nums(c, o, 3);
			break;
		case K_DIRECTION:
			bad = read_nums(c, d, 3);
			break;
		case K_MAX_DISTANCE:	/* FIELD_POSITIVE */
			bad = number(c, &md) || !isfinite(md) || !(md > 0);
			break;
		case K_TIME_MS:		/* num_ok */
			bad = number(c, &s->time_ms) || !isfinite(s->time_ms);
			s->has_time = 1;
			break;
		case K_IGNORE:
			bad = read_ignore(x, s);
			break;
		case K_LAYERS:
			bad = read_layers(c, &s->layers);
			break;
		default:
			bad = 1;
		}
		if (bad)
			return -1;
	} while ((r = end_member(c, '}')) == 0);
	if (r != 1 || !(seen & 1u << K_ORIGIN) || !(seen & 1u << K_DIRECTION))
		return -1;
	return wf_shot_ray(o, d, (seen & 1u << K_MAX_DISTANCE) ? &md : NULL, s);
}

/* Shots of the "shots" array from the cursor (at a value) to the array's
 * end: 0, -1 declined; with stop, 1 right after a shot ending at stop, 2
 * after one ending past it (the rest unread). */
static int shots_from(struct direct *x, size_t stop)
{
	struct json_cursor *c = &x->c;
	struct world_shots_req *q = x->q;
	int r;

	do {
		if (x->lim->max_batch && q->n == x->lim->max_batch)
			return -1;	/* 413 on the tree path */
		if (grow(q->shots, &x->shots_cap, q->n) ||
		    read_shot(x, &q->shots[q->n]))
			return -1;
		q->n++;
		if (stop && c->i >= stop)
			return c->i == stop ? 1 : 2;
	} while ((r = end_member(c, ']')) == 0);
	return r == 1 ? 0 : -1;
}

/*
 * A split parse of the "shots" array, whose values start at the cursor:
 * the first part on this thread, from here up to a shot ending at stop; the
 * second on a worker, from the '{' at from to the array's end, into its own
 * x and q (its ids into a buffer of its own), run at the same time.
 */
struct half {
	struct direct x;
	struct world_shots_req q;
	size_t stop;
	int r;		/* shots_from's */
};

static void run_half(void *arg)
{
	struct half *h = arg;

	h->r = shots_from(&h->x, h->stop);
}

/*
 * Where to cut body[at..n): the end of a '}' followed by ',' and the '{' of
 * the next value (whitespace between), searched from 60 % on; 0 when none
 * is near. The worker gets the smaller part: the text is cold in its cache
 * (measured: its part took 1.6 times as long per byte). Found by bytes
 * alone, the cut may lie inside a string: the first part then never ends a
 * shot exactly there, and read_shots reads on without the second part.
 */
static size_t cut_point(const struct json_cursor *c, size_t at, size_t *from)
{
	const unsigned char *s = c->s;
	size_t i = at + (c->n - at) / 10 * 6, end = i + 4096 < c->n ? i + 4096 : c->n, k;

	for (; i < end; i++) {
		if (s[i] != '}')
			continue;
		for (k = i + 1; k < c->n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r'); k++)
			;
		if (k == c->n || s[k] != ',')
			continue;
		for (k++; k < c->n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r'); k++)
			;
		if (k < c->n && s[k] == '{') {
			*from = k;
			return i + 1;
		}
	}
	return 0;
}

/* The second part's shots and ignore ids after the first's in x->q (the
 * ids' bytes stay in its buffer, now q's ids_more): 0, or -1 (out of
 * memory, or more shots than the limit: declined). */
static int join_half(struct direct *x, struct half *h)
{
	struct world_shots_req *q = x->q;
	size_t n = q->n + h->q.n, k;

	if (x->lim->max_batch && n > x->lim->max_batch)
		return -1;
	if (n > x->shots_cap) {
		struct world_shot *s = realloc(q->shots, n * sizeof(*s));

		if (!s)
			return -1;
		q->shots = s;
		x->shots_cap = n;
	}
	memcpy(q->shots + q->n, h->q.shots, h->q.n * sizeof(*q->shots));
	q->n = n;
	for (k = 0; k < h->x.nign; k++)
		if (push_id(x, h->q.ignore[k]))
			return -1;
	q->ids_more = h->q.ids;
	h->q.ids = NULL;
	return 0;
}

/* "shots": 1..lim->max_batch shots; a long array's parse split in two when
 * x has a pool. The answer is the same either way: the second part is
 * taken only when the first ends a shot exactly where it starts (and then
 * reading on from there would have read just what it did). */
static int read_shots(struct direct *x)
{
	struct json_cursor *c = &x->c;
	struct half one, two;
	size_t stop, from = 0;
	int r;

	if (peek(c) != '[')
		return -1;
	c->i++;
	if (!x->pool || c->n - c->i < x->split_min ||
	    !(stop = cut_point(c, c->i, &from)))
		return shots_from(x, 0);
	/* the second part reads body[from..n) as a body of its own */
	if (direct_init(&two.x, (const char *)c->s + from, c->n - from, x->lim, &two.q)) {
		world_shots_req_release(&two.q);
		return -1;
	}
	two.stop = 0;
	one.stop = stop;
	one.x = *x;	/* shares x's q: copied back below */
	batch_pair(x->pool, run_half, &one, &two);
	*x = one.x;
	r = one.r;
	if (r == 1 && two.r == 0) {	/* cut between two shots: joined */
		r = join_half(x, &two);
		c->i = from + two.x.c.i;	/* after the array's ']' */
	} else if (r > 0) {	/* the second part declined, or the cut was inside a value */
		r = end_member(c, ']');
		r = r == 0 ? shots_from(x, 0) : r == 1 ? 0 : -1;
	}
	world_shots_req_release(&two.q);
	return r;
}

/* The top level's members; *mode and *max_hits point at their nodes when given. */
static int read_top(struct direct *x, char *mode_s, size_t mode_cap, cJSON *mode_v,
		    cJSON *hits_v, const cJSON **mode, const cJSON **max_hits)
{
	struct json_cursor *c = &x->c;
	unsigned seen = 0;
	size_t len;
	double d;
	enum key k;
	int r;

	if (open_object(c))
		return -1;
	do {
		k = read_key(c, K_SHOTS, K_NONE);	/* a single shot's keys: declined */
		if (first_time(k, K_NONE, &seen))
			return -1;
		if (k == K_SHOTS) {
			if (read_shots(x))
				return -1;
		} else if (k == K_MODE) {
			if (string_into(c, mode_s, mode_cap, &len))	/* or longer than any mode */
				return -1;
			*mode_v = str_node(mode_s);
			*mode = mode_v;
		} else {
			if (number(c, &d))
				return -1;
			*hits_v = num_node(d);
			*max_hits = hits_v;
		}
	} while ((r = end_member(c, '}')) == 0);
	if (r != 1 || json_cursor_finish(c) || !(seen & 1u << K_SHOTS))
		return -1;
	return 0;
}

int world_shots_direct_split(const char *body, size_t len, const struct api_limits *lim,
			     int static_only, struct batch_pool *pool, size_t split_min,
			     struct world_shots_req *q)
{
	struct direct x;
	const cJSON *mode = NULL, *max_hits = NULL;
	cJSON mode_v, hits_v;
	char mode_s[16];
	struct api_fail f;
	size_t i, at = 0;

	memset(q, 0, sizeof(*q));
	if (!body || len == 0)
		return 0;
	if (direct_init(&x, body, len, lim, q) ||
	    (x.pool = pool, x.split_min = split_min,
	     read_top(&x, mode_s, sizeof(mode_s), &mode_v, &hits_v, &mode, &max_hits)) ||
	    wf_mode(mode, max_hits, static_only, &q->mode, &q->max_hits, &f)) {
		world_shots_req_release(q);
		return 0;
	}
	q->batch = 1;
	for (i = 0; i < q->n; i++)	/* each shot's ids, in order, as decode_shot lays them */
		if (q->shots[i].ignore) {
			q->shots[i].ignore = q->ignore + at;
			at += q->shots[i].nignore;
		}
	return 1;
}

int world_shots_direct(const char *body, size_t len, const struct api_limits *lim,
		       int static_only, struct batch_pool *pool, struct world_shots_req *q)
{
	return world_shots_direct_split(body, len, lim, static_only, pool, WORLD_SHOTS_SPLIT_BYTES, q);
}
