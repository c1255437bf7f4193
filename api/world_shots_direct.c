/* world_shots_direct.c - the fast path of decode_world_shots: a plainly valid
 * batch of shots read straight from the body text, no tree (world_decode.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
};

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
	return wf_shot_ray(o, d, (seen & 1u << K_MAX_DISTANCE) ? &md : NULL, &s->ray);
}

/* "shots": 1..lim->max_batch shots. */
static int read_shots(struct direct *x)
{
	struct json_cursor *c = &x->c;
	struct world_shots_req *q = x->q;
	int r;

	if (peek(c) != '[')
		return -1;
	c->i++;
	do {
		if (x->lim->max_batch && q->n == x->lim->max_batch)
			return -1;	/* 413 on the tree path */
		if (grow(q->shots, &x->shots_cap, q->n) ||
		    read_shot(x, &q->shots[q->n]))
			return -1;
		q->n++;
	} while ((r = end_member(c, ']')) == 0);
	return r == 1 ? 0 : -1;
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

int world_shots_direct(const char *body, size_t len, const struct api_limits *lim,
		       int static_only, struct world_shots_req *q)
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
	json_cursor_init(&x.c, body, len);
	x.q = q;
	x.lim = lim;
	x.shots_cap = len / 128 + 1;	/* a game server's shot is 100-150 bytes */
	if (lim->max_batch && x.shots_cap > lim->max_batch)
		x.shots_cap = lim->max_batch;
	x.nign = 0;
	x.ign_cap = 16;
	x.ids_used = 0;
	q->shots = malloc(x.shots_cap * sizeof(*q->shots));
	q->ignore = malloc(x.ign_cap * sizeof(*q->ignore));
	if (!q->shots || !q->ignore ||
	    read_top(&x, mode_s, sizeof(mode_s), &mode_v, &hits_v, &mode, &max_hits) ||
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
