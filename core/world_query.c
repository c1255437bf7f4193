/* world_query.c - shots against a world view: the rewind, entity hitboxes
 * culled by their bounds, static instances through the TLAS, and the merge. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "shapes.h"
#include "world_impl.h"

/* A hit in discovery order, for the stable sort of mode all. */
struct chit {
	struct world_shot_hit h;
	uint32_t item;		/* instance or entity index */
	uint32_t sub;		/* hitbox index (entities) */
	uint32_t seq;
};

/* What one shot has found so far. */
struct collect {
	enum hit_mode mode;
	int found;			/* closest/any: best is set */
	struct world_shot_hit best;
	uint32_t best_item;		/* entity index of best (ties: the lower) */
	uint32_t item, sub;		/* what is being tested, for mode all's order */
	struct chit *all;		/* mode all */
	size_t n, cap;
	uint64_t extra;			/* mode all: hits found past a mesh's max_hits */
	int oom;
};

static void collect_push(struct collect *c, const struct world_shot_hit *h)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct chit *p;

		if (cap > SIZE_MAX / sizeof(*p)) {
			c->oom = 1;
			return;
		}
		p = realloc(c->all, cap * sizeof(*p));
		if (!p) {
			c->oom = 1;
			return;
		}
		c->all = p;
		c->cap = cap;
	}
	c->all[c->n].h = *h;
	c->all[c->n].item = c->item;
	c->all[c->n].sub = c->sub;
	c->all[c->n].seq = (uint32_t)c->n;
	c->n++;
}

/*
 * Room for one mesh query's hits and, in mode all, its candidates: in mode
 * all it starts small and grows (up to the shot's max_hits) when a mesh
 * finds more hits than it holds, that mesh then cast again, so that a shot
 * allocates what its meshes return instead of max_hits hits for every shot
 * (65 536 of them: 4 MiB mapped and faulted in per shot, 18x the time of
 * the same batch with max_hits 64).
 */
#define ROOM_START 16

struct hitroom {
	struct hit *hits;
	void *cand;		/* mode all: MESH_ALL_SCRATCH_BYTES(cap) */
	uint32_t cap, max;
	struct hit one;
};

static enum core_result room_init(struct hitroom *r, enum hit_mode mode, uint32_t max_hits)
{
	r->hits = &r->one;
	r->cand = NULL;
	r->cap = r->max = 1;
	if (mode != HIT_ALL)
		return CORE_OK;
	r->max = max_hits;
	r->cap = max_hits < ROOM_START ? max_hits : ROOM_START;
	r->hits = malloc((size_t)r->cap * sizeof(*r->hits));
	r->cand = malloc(MESH_ALL_SCRATCH_BYTES(r->cap));
	return r->hits && r->cand ? CORE_OK : CORE_ENOMEM;
}

static void room_free(struct hitroom *r)
{
	if (r->hits != &r->one)
		free(r->hits);
	free(r->cand);
}

/* m's hits along local into r->hits[0..*nh), of *tot found: mode all keeps
 * the nearest r->max, as one call with room for r->max would. */
static enum core_result room_cast(const struct mesh *m, const struct ray *local,
				  struct query_opts *o, struct hitroom *r, uint32_t *nh, uint32_t *tot)
{
	for (;;) {
		enum core_result res;
		uint32_t cap;
		struct hit *h;

		o->max_hits = r->cap;
		if (o->mode == HIT_ALL) {
			o->scratch = r->cand;
			o->scratch_bytes = MESH_ALL_SCRATCH_BYTES(r->cap);
		}
		res = mesh_raycast(m, local, o, r->hits, nh, tot);
		if (res != CORE_OK || o->mode != HIT_ALL || *tot <= *nh || r->cap == r->max)
			return res;
		/* all of them, or max_hits: one more cast */
		cap = *tot > r->max ? r->max : *tot;
		h = realloc(r->hits, (size_t)cap * sizeof(*h));
		if (!h)
			return CORE_ENOMEM;
		r->hits = h;
		free(r->cand);
		r->cand = malloc(MESH_ALL_SCRATCH_BYTES(cap));
		if (!r->cand)
			return CORE_ENOMEM;
		r->cap = cap;
	}
}

static vec3 along(const struct ray *ray, double t)
{
	return v3((float)(ray->origin.x + t * ray->dir.x), (float)(ray->origin.y + t * ray->dir.y),
		  (float)(ray->origin.z + t * ray->dir.z));
}

/* ---- static instances */

struct static_ctx {
	const struct world_view *v;
	const struct ray *ray;
	uint32_t layers;
	struct collect *c;
	struct world_stats *st;
	struct hitroom *room;
	uint32_t best_inst;
	enum core_result err;
};

static int visit_static(void *cls, uint32_t i, float *tmax)
{
	struct static_ctx *x = cls;
	const struct instance *in = &x->v->w->inst[i];
	struct query_opts opts = { .mode = x->c->mode, .flip_winding = in->xf.det < 0 };
	struct ray local;
	uint32_t nh = 0, tot = 0, j;
	enum core_result r;

	if (!((x->layers >> in->layer) & 1))
		return 0;
	local = xform_ray_to_local(&in->xf, x->ray);
	local.tmax = *tmax > 0 ? *tmax : FLT_TRUE_MIN;
	if (x->st)
		x->st->meshes_tested++;
	r = room_cast(x->v->scene->meshes[i], &local, &opts, x->room, &nh, &tot);
	if (r != CORE_OK) {
		x->err = r;
		return 1;
	}
	for (j = 0; j < nh; j++) {
		const struct hit *h = &x->room->hits[j];
		struct world_shot_hit w;

		if (h->t > *tmax)
			continue;
		if (x->c->mode != HIT_ALL && x->c->found &&
		    (h->t > x->c->best.t || (h->t == x->c->best.t && i > x->best_inst)))
			continue;
		w.kind = WORLD_HIT_STATIC;
		w.t = h->t;
		w.point = along(x->ray, h->t);
		w.normal = xform_normal(&in->xf, h->normal);
		w.triangle = h->triangle;
		w.inside = 0;
		w.instance = in->id;
		w.mesh = in->mesh;
		w.entity = w.hitbox = NULL;
		if (x->c->mode == HIT_ALL) {
			x->c->item = i;
			x->c->sub = 0;
			collect_push(x->c, &w);
			continue;
		}
		x->c->best = w;
		x->c->found = 1;
		x->best_inst = i;
		*tmax = h->t;
		if (x->c->mode == HIT_ANY)
			return 1;
	}
	if (x->c->mode == HIT_ALL && tot > nh)
		x->c->extra += tot - nh;
	return 0;
}

/* The static instances along ray up to tmax into c. */
static enum core_result cast_static(const struct world_view *v, const struct ray *ray, float tmax,
				    uint32_t layers, struct collect *c, struct hitroom *room,
				    struct world_stats *st)
{
	struct static_ctx x = { v, ray, layers, c, st, room, 0, CORE_OK };

	tlas_traverse(&v->scene->tlas, ray, &tmax, visit_static, &x);
	return x.err;
}

/* ---- entities */

/*
 * Closest entity hit so far? Entities are visited in BVH order, so an equal
 * t goes to the entity first in id order; within one entity (visited in
 * hitbox order) the hitbox listed first keeps it.
 */
static int better(const struct collect *c, float t)
{
	return !c->found || t < c->best.t || (t == c->best.t && c->item < c->best_item);
}

/* One hitbox along ray (tmax = ray->tmax) into c. */
static enum core_result cast_hitbox(const struct hitbox *h, const struct entity *e,
				    const struct ray *ray, struct collect *c, struct hitroom *room)
{
	struct world_shot_hit w;
	struct shape_hit sh;
	struct obb_hit oh;
	int got = 0;

	w.kind = WORLD_HIT_ENTITY;
	w.triangle = WORLD_NONE;
	w.instance = w.mesh = NULL;
	w.entity = e->id;
	w.hitbox = h->id;
	switch (h->shape) {
	case HITBOX_SPHERE:
	case HITBOX_CAPSULE:
		got = h->shape == HITBOX_SPHERE ? sphere_raycast(h->a, h->radius, ray, &sh)
						: capsule_raycast(h->a, h->b, h->radius, ray, &sh);
		if (got) {
			w.t = sh.t;
			w.point = sh.point;
			w.normal = sh.normal;
			w.inside = sh.inside;
		}
		break;
	case HITBOX_BOX:
		got = obb_raycast(&h->box, ray, &oh);
		if (got) {
			w.t = oh.t;
			w.point = oh.point;
			w.normal = oh.normal;
			w.inside = oh.inside;
		}
		break;
	case HITBOX_MESH: {
		struct query_opts opts = { .mode = c->mode == HIT_ALL ? HIT_ALL : HIT_CLOSEST,
					   .flip_winding = h->xf->det < 0 };
		struct ray local = xform_ray_to_local(h->xf, ray);
		uint32_t nh = 0, tot = 0, j;
		enum core_result r;

		local.tmax = ray->tmax > 0 ? ray->tmax : FLT_TRUE_MIN;
		r = room_cast(h->mesh, &local, &opts, room, &nh, &tot);
		if (r != CORE_OK)
			return r;
		if (c->mode == HIT_ALL && tot > nh)
			c->extra += tot - nh;
		w.mesh = h->mesh_name;
		w.inside = 0;
		for (j = 0; j < nh; j++) {
			const struct hit *mh = &room->hits[j];

			if (mh->t > ray->tmax)
				continue;
			w.t = mh->t;
			w.point = along(ray, mh->t);
			w.normal = xform_normal(h->xf, mh->normal);
			w.triangle = mh->triangle;
			if (c->mode == HIT_ALL)
				collect_push(c, &w);
			else if (better(c, w.t)) {
				c->best = w;
				c->best_item = c->item;
				c->found = 1;
			}
		}
		return CORE_OK;
	}
	}
	if (!got)
		return CORE_OK;
	if (c->mode == HIT_ALL)
		collect_push(c, &w);
	else if (better(c, w.t)) {
		c->best = w;
		c->best_item = c->item;
		c->found = 1;
	}
	return CORE_OK;
}

struct entity_ctx {
	const struct rewind *rw;
	const struct world_shot *s;
	struct collect *c;
	struct hitroom *room;
	const uint32_t *ign_hash;	/* world_name_hash of each s->ignore[k] */
	struct world_stats *st;
	enum core_result err;
	struct tlas_ray tr;
};

/* 1 when entity e is on the shot's ignore list: its hash first, so that
 * no lookup in the (often cold) snapshot is needed. */
static int ignored(const struct entity_ctx *x, const struct entity *e)
{
	size_t k;

	for (k = 0; k < x->s->nignore; k++)
		if (x->ign_hash[k] == e->hash && strcmp(e->id, x->s->ignore[k]) == 0)
			return 1;
	return 0;
}

/* Hitboxes of one entity taken per pass (see visit_entity). */
#define VISIT_BATCH BOXSCAN_MAX

/* The visit of one entity whose (rewound) bounds the ray may touch. */
static int visit_entity(void *cls, uint32_t i, float *tmax)
{
	struct entity_ctx *x = cls;
	const struct entity *e = &x->rw->s0->ents[i];
	const struct box_planes *bp = rewind_hitbox_planes(x->rw);
	struct collect *c = x->c;
	struct ray ray = x->s->ray;
	double tin[BOXSCAN_MAX];
	uint32_t h0, k, n, bits, pick[VISIT_BATCH];

	if (!((x->s->layers >> e->layer) & 1) || ignored(x, e))
		return 0;
	if (x->st)
		x->st->entities_tested++;
	c->item = i;
	/*
	 * Two passes over VISIT_BATCH hitboxes at a time: the first tests their
	 * bounds (all at once) and prefetches what the hitboxes that pass will
	 * read, so that the cache misses of a snapshot a second old overlap
	 * instead of following one another; the second casts those still met
	 * at the current distance (a nearer hit may have been found: their
	 * entry t against it answers what tlas_ray_box would). The answer is
	 * the one a single pass gives.
	 */
	for (h0 = 0; h0 < e->n; h0 += VISIT_BATCH) {
		unsigned end = e->n - h0 < VISIT_BATCH ? e->n - h0 : VISIT_BATCH;

		ray.tmax = c->mode != HIT_ALL && c->found ? c->best.t : x->s->ray.tmax;
		bits = box_planes_hits(bp, &x->tr, e->first + h0, end, ray.tmax, tin);
		for (n = 0; bits; bits &= bits - 1) {
			pick[n] = (uint32_t)__builtin_ctz(bits);
			rewind_prefetch(x->rw, i, e->first + h0 + pick[n++]);
		}
		for (k = 0; k < n; k++)
			rewind_prefetch_pair(x->rw, i, e->first + h0 + pick[k]);
		for (k = 0; k < n; k++) {
			struct hitbox_scratch tmp;
			const struct hitbox *hb;

			ray.tmax = c->mode != HIT_ALL && c->found ? c->best.t : x->s->ray.tmax;
			if (tin[pick[k]] > ray.tmax)
				continue;
			hb = rewind_hitbox(x->rw, i, e->first + h0 + pick[k], &tmp);
			c->sub = h0 + pick[k];
			x->err = cast_hitbox(hb, e, &ray, c, x->room);
			if (x->err != CORE_OK)
				return 1;
		}
	}
	if (c->mode != HIT_ALL && c->found)
		*tmax = c->best.t;
	return 0;
}

struct ent_near {
	double t;
	uint32_t i;
};

/* Every entity whose box the ray meets within *tmax, nearest first: a
 * subset of what tlas_traverse visits (it takes a leaf's entities without
 * testing their own boxes). The answer does not depend on the order: ties
 * between entities go to the lower index (better). */
static void scan_entities(const struct box_planes *bp, struct entity_ctx *x, float *tmax)
{
	struct ent_near near[WORLD_FLAT_ENTITIES];
	double tin[BOXSCAN_MAX];
	size_t n = 0, g, k;

	if (!(*tmax >= 0))
		return;
	for (g = 0; g < bp->n; g += BOXSCAN_MAX) {
		unsigned m = bp->n - g < BOXSCAN_MAX ? (unsigned)(bp->n - g) : BOXSCAN_MAX;
		uint32_t bits = box_planes_hits(bp, &x->tr, g, m, *tmax, tin);

		for (; bits; bits &= bits - 1) {
			unsigned j = (unsigned)__builtin_ctz(bits);
			struct ent_near e = { tin[j], (uint32_t)(g + j) };

			/* insertion by entry t: a handful each */
			for (k = n++; k > 0 && near[k - 1].t > e.t; k--)
				near[k] = near[k - 1];
			near[k] = e;
		}
	}
	for (k = 0; k < n; k++) {
		if (near[k].t > *tmax)	/* the rest are farther still */
			break;
		if (visit_entity(x, near[k].i, tmax))
			break;
	}
}

static enum core_result cast_entities(const struct rewind *rw, const struct world_shot *s,
				      struct collect *c, struct hitroom *room,
				      struct world_stats *st)
{
	uint32_t ign[16], *ignp = ign;
	float tmax = s->ray.tmax;
	struct entity_ctx x;
	size_t k;

	if (s->nignore > 16) {
		ignp = malloc(s->nignore * sizeof(*ignp));
		if (!ignp)
			return CORE_ENOMEM;
	}
	for (k = 0; k < s->nignore; k++)
		ignp[k] = world_name_hash(s->ignore[k]);
	x = (struct entity_ctx){ .rw = rw, .s = s, .c = c, .room = room,
				 .ign_hash = ignp, .st = st, .err = CORE_OK };
	tlas_ray_init(&x.tr, &s->ray);
	if (rw->s0->nent <= WORLD_FLAT_ENTITIES)
		scan_entities(rewind_entity_planes(rw), &x, &tmax);
	else
		tlas_traverse(rewind_entity_tlas(rw), &s->ray, &tmax, visit_entity, &x);
	if (ignp != ign)
		free(ignp);
	return x.err;
}

/* ---- rewind and the merge */

static enum core_result find_rewind(const struct history *h, const struct world_shot *s,
				    struct rewind *rw, double *used, int *has_used)
{
	const struct snapshot *newest;
	size_t lo, hi;

	rw->s0 = rw->s1 = NULL;
	rw->f = 0;
	*has_used = 0;
	if (h->n == 0)
		return s->has_time ? CORE_ERANGE : CORE_OK;
	newest = h->snaps[h->n - 1];
	*has_used = 1;
	if (!s->has_time || s->time_ms >= h->times[h->n - 1]) {
		rw->s0 = newest;
		*used = h->times[h->n - 1];
		return CORE_OK;
	}
	if (!(s->time_ms >= h->times[0])) {
		*has_used = 0;
		return CORE_ERANGE;
	}
	/* the last snapshot at or before the time: snaps[lo], lo < n - 1 */
	lo = 0;
	hi = h->n - 1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->times[mid] <= s->time_ms)
			lo = mid;
		else
			hi = mid;
	}
	rw->s0 = h->snaps[lo];
	*used = s->time_ms;
	if (s->time_ms > rw->s0->time_ms && h->snaps[lo + 1]->succ &&
	    h->snaps[lo + 1]->prev_tick == rw->s0->tick) {
		rw->s1 = h->snaps[lo + 1];
		rw->f = (s->time_ms - rw->s0->time_ms) / (rw->s1->time_ms - rw->s0->time_ms);
	}
	return CORE_OK;
}

static int cmp_chit(const void *x, const void *y)
{
	const struct chit *a = x, *b = y;

	if (a->h.t != b->h.t)
		return a->h.t < b->h.t ? -1 : 1;
	if (a->h.kind != b->h.kind)
		return a->h.kind == WORLD_HIT_STATIC ? -1 : 1;
	if (a->item != b->item)
		return a->item < b->item ? -1 : 1;
	if (a->sub != b->sub)
		return a->sub < b->sub ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Sorted hits of mode all, or the one best, into the caller's array, their
 * t made world distances (ray_distance: monotone, so the order holds). */
static void finish(const struct world_shot *s, struct collect *c, uint32_t max_hits,
		   struct world_shot_hit *hits, uint32_t *nhits, uint32_t *total)
{
	size_t i;

	if (c->mode != HIT_ALL) {
		*nhits = c->found;
		*total = c->found;
		if (c->found)
			hits[0] = c->best;
	} else {
		if (c->n)
			qsort(c->all, c->n, sizeof(*c->all), cmp_chit);
		*nhits = (uint32_t)(c->n < max_hits ? c->n : max_hits);
		*total = c->n + c->extra > UINT32_MAX ? UINT32_MAX : (uint32_t)(c->n + c->extra);
		for (i = 0; i < *nhits; i++)
			hits[i] = c->all[i].h;
	}
	for (i = 0; i < *nhits; i++)
		hits[i].t = ray_distance(hits[i].t, s->unit);
}

static int shot_ok(const struct world_shot *s)
{
	return v3_isfinite(s->ray.origin) && v3_isfinite(s->ray.dir) &&
	       (s->ray.dir.x != 0 || s->ray.dir.y != 0 || s->ray.dir.z != 0) && s->ray.tmax > 0;
}

enum core_result world_hitscan(const struct world_view *v, const struct world_shot *s,
			       enum hit_mode mode, uint32_t max_hits, struct world_shot_hit *hits,
			       uint32_t *nhits, uint32_t *total, double *time_used,
			       int *has_time_used, struct world_stats *stats)
{
	struct collect c = { .mode = mode == HIT_ALL ? HIT_ALL : HIT_CLOSEST };
	struct collect sc = { .mode = HIT_CLOSEST };
	struct hitroom room;
	struct rewind rw;
	enum core_result r;

	if (!shot_ok(s) || (mode == HIT_ALL && max_hits == 0))
		return CORE_EINVAL;
	r = find_rewind(v->hist, s, &rw, time_used, has_time_used);
	if (r != CORE_OK)
		return r;
	r = room_init(&room, c.mode, max_hits);
	if (r == CORE_OK && rw.s0)
		r = cast_entities(&rw, s, &c, &room, stats);
	if (r == CORE_OK && c.mode == HIT_ALL) {
		r = cast_static(v, &s->ray, s->ray.tmax, s->layers, &c, &room, stats);
	} else if (r == CORE_OK) {
		/* up to a float past the entity's t (its exact entry rounded
		 * either way), never past the shot's limit: static wins a tie,
		 * a wall exactly flush with a hitbox blocks the shot */
		r = cast_static(v, &s->ray,
				c.found ? fminf(nextafterf(c.best.t, INFINITY), s->ray.tmax) : s->ray.tmax,
				s->layers, &sc, &room, stats);
		if (sc.found) {
			c.best = sc.best;
			c.found = 1;
		}
	}
	if (r == CORE_OK && c.oom)
		r = CORE_ENOMEM;
	if (r == CORE_OK)
		finish(s, &c, max_hits, hits, nhits, total);
	room_free(&room);
	free(c.all);
	return r;
}

enum core_result world_raycast(const struct world_view *v, const struct world_shot *s,
			       enum hit_mode mode, uint32_t max_hits, struct world_shot_hit *hits,
			       uint32_t *nhits, uint32_t *total, struct world_stats *stats)
{
	struct collect c = { .mode = mode };
	struct hitroom room;
	enum core_result r;

	if (!shot_ok(s) || (mode == HIT_ALL && max_hits == 0))
		return CORE_EINVAL;
	r = room_init(&room, mode, max_hits);
	if (r == CORE_OK)
		r = cast_static(v, &s->ray, s->ray.tmax, s->layers, &c, &room, stats);
	if (r == CORE_OK && c.oom)
		r = CORE_ENOMEM;
	if (r == CORE_OK)
		finish(s, &c, max_hits, hits, nhits, total);
	room_free(&room);
	free(c.all);
	return r;
}
