/* world_snapshot_direct.c - the fast path of decode_snapshot: a plainly valid
 * snapshot read straight from the body text, no tree (world_decode.h). */
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
 * numbers through json_cursor_number, strings (ids, shapes) through
 * json_cursor_string (escapes included); ids, layers, shapes, radii and
 * rotations through wf_id, wf_layer, read_enum, wf_radius and wf_quat on
 * cJSON nodes standing for the values; which members a shape takes through
 * wf_hb_rows and wf_shape_fields, the tick and half extents through
 * wf_tick_ok and wf_half_extents_ok. Vectors are read_vec3's rule: three
 * finite numbers within the float32 range. Anything else is declined, never
 * judged here: an escaped key, null, a missing or repeated member, a wrong
 * type, a rule broken, a limit passed, a mesh hitbox. So the only errors
 * are the tree path's.
 */

/* The members of an entity, then of the top level. */
enum key { K_ID, K_LAYER, K_HITBOXES, K_TICK, K_TIME_MS, K_ENTITIES, K_NONE };

static const char *const keys[K_NONE] = { "id", "layer", "hitboxes", "tick", "time_ms",
					  "entities" };

struct direct {
	struct json_cursor c;
	struct snapshot_req *q;
	const struct api_world_limits *lim;
	size_t ents_cap, hbs_cap;	/* q->ents, q->hbs */
	size_t ids_used;		/* bytes of q->ids (c.n + 1) */
	struct batch_pool *pool;	/* for a split parse of "entities" (NULL: none) */
	size_t split_min;		/* from this many bytes of it on */
};

/* The bytes of the string at c->i (its opening quote) after the quote are
 * name and the closing quote (no escapes): name's length + 2, else 0. */
static inline size_t spelt(const struct json_cursor *c, const char *name)
{
	const unsigned char *s = c->s + c->i + 1;
	size_t left = c->n - c->i - 1, j;

	if (left == 0 || s[0] != (unsigned char)name[0])
		return 0;
	for (j = 1; name[j]; j++)
		if (j == left || s[j] != (unsigned char)name[j])
			return 0;
	return j < left && s[j] == '"' ? j + 2 : 0;
}

/* Past a key of skip bytes (spelt's) and the ':' after it; -1 if none. */
static inline int colon(struct json_cursor *c, size_t skip)
{
	c->i += skip;
	if (peek(c) != ':')
		return -1;
	c->i++;
	return 0;
}

/* One of keys[lo..hi) next (see spelt), consumed with its ':', else K_NONE. */
static enum key read_key(struct json_cursor *c, enum key lo, enum key hi)
{
	size_t skip = 0;
	int k;

	if (peek(c) != '"')
		return K_NONE;
	for (k = lo; k < (int)hi; k++)
		if ((skip = spelt(c, keys[k])) != 0)
			break;
	if (k == (int)hi || colon(c, skip))
		return K_NONE;
	return (enum key)k;
}

/* The string at c->i (its opening quote) when it is printable ASCII without
 * escapes (plainly valid; json_cursor_string reads anything else): copied
 * into out and NUL-terminated, *len its length, c past it (1); else 0,
 * nothing consumed. */
static inline int plain_string(struct json_cursor *c, char *out, size_t *len)
{
	const unsigned char *s = c->s + c->i + 1;
	size_t left = c->n - c->i - 1, j;

	for (j = 0; j < left && s[j] >= 0x20 && s[j] < 0x80 && s[j] != '"' && s[j] != '\\'; j++)
		out[j] = (char)s[j];
	if (j == left || s[j] != '"')
		return 0;
	out[j] = '\0';
	*len = j;
	c->i += j + 2;
	return 1;
}

/* An id (wf_id), copied into q->ids. Each id's bytes and NUL fit in its
 * quotes' room in the body, so q->ids (body length + 1 bytes) never runs out. */
static int read_id(struct direct *x, const char **id)
{
	struct json_cursor *c = &x->c;
	struct api_fail f;
	size_t len;
	char *at = x->q->ids + x->ids_used;
	cJSON v;

	if (peek(c) != '"')
		return -1;
	/* printable ASCII, no escapes: copied as it is; else always room (see above) */
	if (!plain_string(c, at, &len) && string_into(c, at, c->n + 1 - x->ids_used, &len))
		return -1;
	v = str_node(at);
	if (wf_id(&v, NULL, id, &f))
		return -1;
	x->ids_used += len + 1;
	return 0;
}

/* A "shape" value: its index in wf_shape_names (read_enum), a mesh declined. */
static int read_shape(struct json_cursor *c, int *shape)
{
	struct api_fail f;
	char s[16], *out;
	size_t len;
	cJSON v;

	if (peek(c) != '"')
		return -1;
	for (*shape = 0; wf_shape_names[*shape]; (*shape)++)	/* spelt plainly */
		if ((len = spelt(c, wf_shape_names[*shape])) != 0) {
			c->i += len;
			return *shape == HITBOX_MESH ? -1 : 0;
		}
	if (json_cursor_string(c, s, sizeof(s), &out, &len))
		return -1;
	if (out != s) {		/* longer than any shape */
		free(out);
		return -1;
	}
	v = str_node(s);
	if (read_enum(&v, NULL, wf_shape_names, shape, &f) || *shape == HITBOX_MESH)
		return -1;
	return 0;
}

/* "rotation": wf_quat on the four numbers read_nums gave. */
static int quat_ok(double q[4])
{
	cJSON arr, el[4];
	struct api_fail f;
	int k;

	memset(&arr, 0, sizeof(arr));
	arr.type = cJSON_Array;
	arr.child = &el[0];
	for (k = 0; k < 4; k++) {
		el[k] = num_node(q[k]);
		el[k].next = k < 3 ? &el[k + 1] : NULL;
		el[k].prev = k > 0 ? &el[k - 1] : &el[3];
	}
	return wf_quat(&arr, NULL, q, &f) == API_OK;
}

/* The values of one hitbox's members, by wf_hb_key. */
struct hb_vals {
	double center[3], a[3], b[3], half[3], rot[4], radius;
	const char *id;
	int shape;
};

/* One hitbox object, as decode_hitbox reads it. */
static int read_hitbox(struct direct *x, struct hitbox_in *h)
{
	struct json_cursor *c = &x->c;
	struct hb_vals v;
	struct api_fail f;
	unsigned seen = 0, need;
	size_t skip = 0;
	cJSON node;
	int k, r, bad;

	if (open_object(c))
		return -1;
	do {
		if (peek(c) != '"')
			return -1;
		for (k = 0; k < HB_NKEYS; k++)
			if ((skip = spelt(c, wf_hb_rows[k].key)) != 0)
				break;
		if (k == HB_NKEYS || colon(c, skip) || first_time(k, HB_NKEYS, &seen))
			return -1;
		switch (k) {
		case HB_ID: bad = read_id(x, &v.id); break;
		case HB_SHAPE: bad = read_shape(c, &v.shape); break;
		case HB_CENTER: bad = read_nums(c, v.center, 3); break;
		case HB_RADIUS: bad = number(c, &v.radius); break;
		case HB_A: bad = read_nums(c, v.a, 3); break;
		case HB_B: bad = read_nums(c, v.b, 3); break;
		case HB_HALF: bad = read_nums(c, v.half, 3); break;
		case HB_ROT: bad = read_nums(c, v.rot, 4); break;
		default: bad = 1;	/* a mesh's members */
		}
		if (bad)
			return -1;
	} while ((r = end_member(c, '}')) == 0);
	if (r != 1 || !(seen & 1u << HB_ID) || !(seen & 1u << HB_SHAPE))
		return -1;
	seen &= ~(1u << HB_ID | 1u << HB_SHAPE);
	need = wf_shape_fields[v.shape] & ~WF_HB_OPTIONAL;
	if ((seen & ~wf_shape_fields[v.shape]) || (seen & need) != need)
		return -1;
	memset(h, 0, sizeof(*h));
	h->id = v.id;
	h->shape = (enum hitbox_shape)v.shape;
	h->rot[0] = 1;
	h->size = v3(1, 1, 1);
	if (seen & 1u << HB_RADIUS) {
		node = num_node(v.radius);
		if (wf_radius(&node, NULL, &h->radius, &f))
			return -1;
	}
	switch (h->shape) {
	case HITBOX_SPHERE:
		h->a = vec3_from(v.center);
		break;
	case HITBOX_CAPSULE:
		h->a = vec3_from(v.a);
		h->b = vec3_from(v.b);
		break;
	case HITBOX_BOX:
		h->a = vec3_from(v.center);
		h->size = vec3_from(v.half);
		if (!wf_half_extents_ok(h->size))
			return -1;
		if ((seen & 1u << HB_ROT) && !quat_ok(v.rot))
			return -1;
		if (seen & 1u << HB_ROT)
			memcpy(h->rot, v.rot, sizeof(v.rot));
		break;
	default:
		return -1;
	}
	return 0;
}

/* "hitboxes": the entity's hitboxes appended to q->hbs (their count into e->n). */
static int read_hitboxes(struct direct *x, struct entity_in *e)
{
	struct json_cursor *c = &x->c;
	struct snapshot_req *q = x->q;
	int r;

	if ((r = open_array(c)) != 0)
		return r == 1 ? 0 : -1;
	do {
		if (x->lim->max_hitboxes && q->nhb == x->lim->max_hitboxes)
			return -1;	/* 413 on the tree path */
		if (grow(q->hbs, &x->hbs_cap, q->nhb) ||
		    read_hitbox(x, &q->hbs[q->nhb]))
			return -1;
		q->nhb++;
		e->n++;
	} while ((r = end_member(c, ']')) == 0);
	return r == 1 ? 0 : -1;
}

/* One entity object, as decode_entity reads it (hitboxes placed later). */
static int read_entity(struct direct *x, struct entity_in *e)
{
	struct json_cursor *c = &x->c;
	struct api_fail f;
	unsigned seen = 0;
	enum key k;
	double d;
	cJSON v;
	int r, bad;

	memset(e, 0, sizeof(*e));
	if (open_object(c))
		return -1;
	do {
		k = read_key(c, K_ID, K_TICK);
		if (first_time(k, K_NONE, &seen))
			return -1;
		if (k == K_ID) {
			bad = read_id(x, &e->id);
		} else if (k == K_LAYER) {
			bad = number(c, &d);
			v = num_node(d);
			bad = bad || wf_layer(&v, NULL, &e->layer, &f);
		} else {
			bad = read_hitboxes(x, e);
		}
		if (bad)
			return -1;
	} while ((r = end_member(c, '}')) == 0);
	if (r != 1 || !(seen & 1u << K_ID) || !(seen & 1u << K_HITBOXES))
		return -1;
	return 0;
}

/* Entities from the cursor (the array open, not empty) up to the array's
 * end: 0, or -1. With stop, up to an entity that ends at or past stop
 * instead: 1 when one ends exactly there, 2 when past it. */
static int entities_from(struct direct *x, size_t stop)
{
	struct json_cursor *c = &x->c;
	struct snapshot_req *q = x->q;
	int r;

	do {
		if (x->lim->max_entities && q->n == x->lim->max_entities)
			return -1;	/* 413 on the tree path */
		if (grow(q->ents, &x->ents_cap, q->n) ||
		    read_entity(x, &q->ents[q->n]))
			return -1;
		q->n++;
		if (stop && c->i >= stop)
			return c->i == stop ? 1 : 2;
	} while ((r = end_member(c, ']')) == 0);
	return r == 1 ? 0 : -1;
}

/* One part of a split parse (see world_snapshot_direct_split). */
struct half {
	struct direct x;
	struct snapshot_req q;
	size_t stop;
	int r;		/* entities_from's */
};

static void run_half(void *arg)
{
	struct half *h = arg;

	h->r = entities_from(&h->x, h->stop);
}

static int is_ws(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* s[k..n) from k on past whitespace and then ch: the index after ch, or 0. */
static size_t past(const unsigned char *s, size_t n, size_t k, unsigned char ch)
{
	while (k < n && is_ws(s[k]))
		k++;
	return k < n && s[k] == ch ? k + 1 : 0;
}

/*
 * Where to cut body[at..n): after an entity whose "hitboxes" array ends it,
 * "}]}" followed by ',' and the '{' of the next entity (whitespace between
 * any of them), searched from 60 % on; 0 when none is near (entities laid
 * out otherwise: no split). Found by bytes alone, the cut may lie inside a
 * string: the first part then never ends an entity exactly there, and
 * read_entities reads on without the second part.
 */
static size_t cut_point(const struct json_cursor *c, size_t at, size_t *from)
{
	const unsigned char *s = c->s;
	size_t i = at + (c->n - at) / 10 * 6, end = i + 8192 < c->n ? i + 8192 : c->n, k;

	for (; i < end; i++) {
		size_t stop, next;

		if (s[i] != '}' || !(k = past(s, c->n, i + 1, ']')) ||
		    !(stop = past(s, c->n, k, '}')) || !(k = past(s, c->n, stop, ',')) ||
		    !(next = past(s, c->n, k, '{')))
			continue;
		*from = next - 1;	/* the next entity's '{' */
		return stop;		/* just after this one's '}' */
	}
	return 0;
}

/* The second part's entities and hitboxes after the first's in x->q (its
 * ids' bytes stay in its buffer, now q's ids_more): 0, or -1 (out of
 * memory, or over a limit: declined). */
static int join_half(struct direct *x, struct half *h)
{
	struct snapshot_req *q = x->q;
	size_t n = q->n + h->q.n, nhb = q->nhb + h->q.nhb;

	if ((x->lim->max_entities && n > x->lim->max_entities) ||
	    (x->lim->max_hitboxes && nhb > x->lim->max_hitboxes))
		return -1;
	if (n > x->ents_cap) {
		struct entity_in *e = realloc(q->ents, n * sizeof(*e));

		if (!e)
			return -1;
		q->ents = e;
		x->ents_cap = n;
	}
	if (nhb > x->hbs_cap) {
		struct hitbox_in *hb = realloc(q->hbs, nhb * sizeof(*hb));

		if (!hb)
			return -1;
		q->hbs = hb;
		x->hbs_cap = nhb;
	}
	memcpy(q->ents + q->n, h->q.ents, h->q.n * sizeof(*q->ents));
	memcpy(q->hbs + q->nhb, h->q.hbs, h->q.nhb * sizeof(*q->hbs));
	q->n = n;
	q->nhb = nhb;
	q->ids_more = h->q.ids;
	h->q.ids = NULL;
	return 0;
}

static int direct_init(struct direct *x, const char *body, size_t len,
		       const struct api_world_limits *lim, struct snapshot_req *q);

/* "entities": at most lim->max_entities entities; a long array's parse
 * split in two when x has a pool. The answer is the same either way: the
 * second part is taken only when the first ends an entity exactly where it
 * starts (and then reading on from there would have read just what it
 * did). */
static int read_entities(struct direct *x)
{
	struct json_cursor *c = &x->c;
	struct half one, two;
	size_t stop, from = 0;
	int r;

	if ((r = open_array(c)) != 0)
		return r == 1 ? 0 : -1;
	if (!x->pool || c->n - c->i < x->split_min || !(stop = cut_point(c, c->i, &from)))
		return entities_from(x, 0);
	/* the second part reads body[from..n) as a body of its own */
	if (direct_init(&two.x, (const char *)c->s + from, c->n - from, x->lim, &two.q)) {
		snapshot_req_release(&two.q);
		return -1;
	}
	two.stop = 0;
	one.stop = stop;
	one.x = *x;	/* shares x's q: copied back below */
	batch_pair_rest(x->pool, run_half, &one, &two);
	*x = one.x;
	r = one.r;
	if (r == 1 && two.r == 0) {	/* cut between two entities: joined */
		r = join_half(x, &two);
		c->i = from + two.x.c.i;	/* after the array's ']' */
	} else if (r > 0) {	/* the second part declined, or the cut was inside a value */
		r = end_member(c, ']');
		r = r == 0 ? entities_from(x, 0) : r == 1 ? 0 : -1;
	}
	snapshot_req_release(&two.q);
	return r;
}

/* The top level: "tick", "time_ms" and "entities", each required. */
static int read_top(struct direct *x)
{
	struct json_cursor *c = &x->c;
	struct snapshot_req *q = x->q;
	unsigned seen = 0;
	double tick = 0;
	enum key k;
	int r, bad;

	if (open_object(c))
		return -1;
	do {
		k = read_key(c, K_TICK, K_NONE);
		if (first_time(k, K_NONE, &seen))
			return -1;
		if (k == K_TICK)	/* num_ok, then the range */
			bad = number(c, &tick) || !isfinite(tick) || !wf_tick_ok(tick);
		else if (k == K_TIME_MS)	/* num_ok */
			bad = number(c, &q->time_ms) || !isfinite(q->time_ms);
		else
			bad = read_entities(x);
		if (bad)
			return -1;
	} while ((r = end_member(c, '}')) == 0);
	if (r != 1 || json_cursor_finish(c) ||
	    seen != (1u << K_TICK | 1u << K_TIME_MS | 1u << K_ENTITIES))
		return -1;
	q->tick = (uint64_t)tick;
	return 0;
}

/* x set to read body[0..len) into q (emptied first): its arrays allocated
 * with room for what a body of that length usually holds; 0, or -1 (q then
 * to release). */
static int direct_init(struct direct *x, const char *body, size_t len,
		       const struct api_world_limits *lim, struct snapshot_req *q)
{
	memset(q, 0, sizeof(*q));
	json_cursor_init(&x->c, body, len);
	x->q = q;
	x->lim = lim;
	x->pool = NULL;
	x->split_min = 0;
	/* a game server's hitbox is 100-150 bytes: room enough, never touched
	 * past what is used (no copy on the way) */
	x->hbs_cap = len / 64 + 1;
	if (lim->max_hitboxes && x->hbs_cap > lim->max_hitboxes)
		x->hbs_cap = lim->max_hitboxes;
	x->ents_cap = x->hbs_cap / 16 + 1;
	if (lim->max_entities && x->ents_cap > lim->max_entities)
		x->ents_cap = lim->max_entities;
	x->ids_used = 0;
	if (x->hbs_cap > SIZE_MAX / sizeof(*q->hbs))
		return -1;
	q->ents = malloc(x->ents_cap * sizeof(*q->ents));
	q->hbs = malloc(x->hbs_cap * sizeof(*q->hbs));
	q->ids = malloc(len + 1);
	return q->ents && q->hbs && q->ids ? 0 : -1;
}

int world_snapshot_direct_split(const char *body, size_t len, const struct api_world_limits *lim,
				struct batch_pool *pool, size_t split_min, struct snapshot_req *q)
{
	struct direct x;
	size_t i, at = 0;

	memset(q, 0, sizeof(*q));
	if (!body || len == 0 || len == SIZE_MAX)
		return 0;
	if (direct_init(&x, body, len, lim, q) ||
	    (x.pool = pool, x.split_min = split_min, read_top(&x))) {
		snapshot_req_release(q);
		return 0;
	}
	for (i = 0; i < q->n; i++) {	/* each entity's hitboxes, in order, as decode_snapshot lays them */
		q->ents[i].hitboxes = q->hbs + at;
		at += q->ents[i].n;
	}
	return 1;
}

int world_snapshot_direct(const char *body, size_t len, const struct api_world_limits *lim,
			  struct batch_pool *pool, struct snapshot_req *q)
{
	return world_snapshot_direct_split(body, len, lim, pool, WORLD_SNAPSHOT_SPLIT_BYTES, q);
}
