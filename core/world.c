/* world.c - worlds: instances, the published snapshot history and static
 * scene, ingest, and reader views. Queries are in world_query.c. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world_impl.h"

/* ---- histories and scenes: immutable, reference counted */

static void history_unref(struct history *h)
{
	size_t i;

	if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
		return;
	for (i = 0; i < h->n; i++)
		snapshot_unref(h->snaps[i]);
	free(h);
}

static struct history *history_alloc(size_t n)
{
	struct history *h;

	if (n > (SIZE_MAX - sizeof(*h)) / (sizeof(h->snaps[0]) + sizeof(double)))
		return NULL;
	h = malloc(sizeof(*h) + n * (sizeof(h->snaps[0]) + sizeof(double)));
	if (!h)
		return NULL;
	atomic_init(&h->refs, 1);
	h->n = n;
	h->times = (const double *)(h->snaps + n);
	return h;
}

static void scene_unref(struct scene *s, size_t ninst)
{
	size_t i;

	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	for (i = 0; s->meshes && i < ninst; i++)	/* NULL: its allocation failed */
		mesh_unref(s->meshes[i]);
	free(s->meshes);
	tlas_release(&s->tlas);
	free(s);
}

/* The world bounds of a mesh placed by xf: its local box's eight corners
 * moved in double, rounded outwards. */
static void placed_bounds(const struct mesh *m, const struct xform *xf, vec3 *lo, vec3 *hi)
{
	struct mesh_info mi;
	double l[3] = { INFINITY, INFINITY, INFINITY }, u[3] = { -INFINITY, -INFINITY, -INFINITY };
	int c, r;

	mesh_get_info(m, &mi);
	for (c = 0; c < 8; c++) {
		double p[3] = { c & 1 ? mi.max.x : mi.min.x, c & 2 ? mi.max.y : mi.min.y,
				c & 4 ? mi.max.z : mi.min.z };

		for (r = 0; r < 3; r++) {
			double w = xf->m[r * 4] * p[0] + xf->m[r * 4 + 1] * p[1] +
				   xf->m[r * 4 + 2] * p[2] + xf->m[r * 4 + 3];

			l[r] = fmin(l[r], w);
			u[r] = fmax(u[r], w);
		}
	}
	for (r = 0; r < 3; r++) {
		/* four products and three sums round by well under this */
		double e = 8 * DBL_EPSILON * (fabs(l[r]) + fabs(u[r]));

		l[r] -= e;
		u[r] += e;
	}
	*lo = v3((float)l[0], (float)l[1], (float)l[2]);
	*hi = v3((float)u[0], (float)u[1], (float)u[2]);
	tlas_pad(lo, hi);
}

/* Resolve every instance's mesh at the store's current generation and build
 * the TLAS over their world bounds. CORE_ENOTFOUND with *bad. */
static enum core_result scene_build(const struct world *w, struct scene **out, size_t *bad)
{
	struct scene *s;
	const char **names = NULL;
	vec3 *lo = NULL, *hi = NULL;
	size_t i, n = w->ninst;
	enum core_result r = CORE_ENOMEM;

	s = calloc(1, sizeof(*s));
	if (!s)
		return CORE_ENOMEM;
	atomic_init(&s->refs, 1);
	s->generation = store_generation(w->store);
	s->meshes = calloc(n ? n : 1, sizeof(*s->meshes));
	names = malloc((n ? n : 1) * sizeof(*names));
	lo = malloc((n ? n : 1) * sizeof(*lo));
	hi = malloc((n ? n : 1) * sizeof(*hi));
	if (!s->meshes || !names || !lo || !hi)
		goto out_free;
	/* every instance from one version of the store: a mesh replaced
	 * meanwhile is old for all instances that name it, or new for all */
	for (i = 0; i < n; i++)
		names[i] = w->inst[i].mesh;
	if (store_get_many(w->store, names, n, s->meshes)) {
		for (i = 0; s->meshes[i]; i++)
			;
		*bad = i;
		r = CORE_ENOTFOUND;
		goto out_free;
	}
	for (i = 0; i < n; i++)
		placed_bounds(s->meshes[i], &w->inst[i].xf, &lo[i], &hi[i]);
	r = tlas_build(lo, hi, n, &s->tlas);
	if (r != CORE_OK)
		goto out_free;
	free(names);
	free(lo);
	free(hi);
	*out = s;
	return CORE_OK;

out_free:
	free(names);
	free(lo);
	free(hi);
	scene_unref(s, n);
	return r;
}

/* ---- worlds */

static int cmp_inst_id(const void *x, const void *y, void *arg)
{
	const struct world_instance_in *in = arg;

	return strcmp(in[*(const uint32_t *)x].id, in[*(const uint32_t *)y].id);
}

/* The input index of a repeated instance id, or WORLD_NONE. */
static size_t dup_instance(const struct world_instance_in *inst, size_t n, enum core_result *r)
{
	uint32_t *order;
	size_t i, dup = WORLD_NONE;

	*r = CORE_OK;
	if (n < 2)
		return WORLD_NONE;
	order = malloc(n * sizeof(*order));
	if (!order) {
		*r = CORE_ENOMEM;
		return WORLD_NONE;
	}
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_inst_id, (void *)inst);
	for (i = 1; i < n; i++)
		if (strcmp(inst[order[i]].id, inst[order[i - 1]].id) == 0) {
			dup = order[i] > order[i - 1] ? order[i] : order[i - 1];
			break;
		}
	free(order);
	return dup;
}

enum core_result world_new(struct store *store, const struct world_instance_in *inst, size_t n,
			   const struct world_opts *opts, struct world **out, struct world_fail *fail)
{
	struct world *w;
	size_t i, bytes = 0, at = 0, dup, bad = 0;
	enum core_result r;

	fail->item = WORLD_NONE;
	fail->hitbox = WORLD_NONE;
	if (!(opts->history_ms > 0) || !isfinite(opts->history_ms) ||
	    !(opts->teleport_distance >= 0) || !isfinite(opts->teleport_distance) ||
	    opts->max_snapshots < 2 || n >= (1u << 31))
		return CORE_EINVAL;
	for (i = 0; i < n; i++) {
		if (!inst[i].id || !inst[i].mesh || inst[i].layer >= 32) {
			fail->item = i;
			return CORE_EINVAL;
		}
		bytes += strlen(inst[i].id) + strlen(inst[i].mesh) + 2;
	}
	dup = dup_instance(inst, n, &r);
	if (r != CORE_OK)
		return r;
	if (dup != WORLD_NONE) {
		fail->item = dup;
		return CORE_EINVAL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return CORE_ENOMEM;
	atomic_init(&w->refs, 1);
	atomic_init(&w->ingested, 0);
	w->store = store;
	w->opts = *opts;
	w->ninst = n;
	w->inst = calloc(n ? n : 1, sizeof(*w->inst));
	w->strings = malloc(bytes ? bytes : 1);
	w->hist = history_alloc(0);
	w->mem = snapmem_new();
	if (!w->inst || !w->strings || !w->hist || !w->mem)
		goto out_free;
	for (i = 0; i < n; i++) {
		size_t a = strlen(inst[i].id) + 1, b = strlen(inst[i].mesh) + 1;

		memcpy(w->strings + at, inst[i].id, a);
		w->inst[i].id = w->strings + at;
		at += a;
		memcpy(w->strings + at, inst[i].mesh, b);
		w->inst[i].mesh = w->strings + at;
		at += b;
		w->inst[i].xf = inst[i].xf;
		w->inst[i].layer = inst[i].layer;
	}
	r = scene_build(w, &w->scene, &bad);
	if (r != CORE_OK) {
		if (r == CORE_ENOTFOUND)
			fail->item = bad;
		goto out_free_r;
	}
	if (pthread_mutex_init(&w->pub, NULL))
		goto out_free;
	if (pthread_mutex_init(&w->ingest, NULL)) {
		pthread_mutex_destroy(&w->pub);
		goto out_free;
	}
	*out = w;
	return CORE_OK;

out_free:
	r = CORE_ENOMEM;
out_free_r:
	scene_unref(w->scene, n);
	history_unref(w->hist);
	snapmem_free(w->mem);
	free(w->inst);
	free(w->strings);
	free(w);
	return r;
}

struct world *world_ref(struct world *w)
{
	atomic_fetch_add(&w->refs, 1);
	return w;
}

void world_unref(struct world *w)
{
	if (!w || atomic_fetch_sub(&w->refs, 1) != 1)
		return;
	history_unref(w->hist);
	scene_unref(w->scene, w->ninst);
	pthread_mutex_destroy(&w->pub);
	pthread_mutex_destroy(&w->ingest);
	snapmem_free(w->mem);
	free(w->inst);
	free(w->strings);
	free(w);
}

/* A reference to the published history (the lock covers load + increment,
 * so a concurrent publish cannot free it in between). */
static struct history *history_get(struct world *w)
{
	struct history *h;

	pthread_mutex_lock(&w->pub);
	h = w->hist;
	atomic_fetch_add(&h->refs, 1);
	pthread_mutex_unlock(&w->pub);
	return h;
}

/*
 * Which of the held snapshots the new one keeps: those at or after
 * newest - history_ms, plus the last one before that (so that the whole
 * window can be rewound to), at most max_snapshots - 1 of them.
 */
static size_t keep_from(const struct history *h, double newest_ms, const struct world_opts *o)
{
	double cut = newest_ms - o->history_ms;
	size_t first = 0, i;

	for (i = 0; i < h->n; i++)
		if (h->snaps[i]->time_ms <= cut)
			first = i;	/* the last at or before the cut stays */
	if (h->n - first > o->max_snapshots - 1)
		first = h->n - (o->max_snapshots - 1);
	return first;
}

enum core_result world_ingest(struct world *w, uint64_t tick, double time_ms,
			      const struct entity_in *ents, size_t n, struct world_fail *fail)
{
	struct history *old, *h;
	struct snapshot *s, *prev;
	enum core_result r;
	size_t first, i, dropped = 0;
	double *times;

	fail->item = WORLD_NONE;
	fail->hitbox = WORLD_NONE;
	if (!isfinite(time_ms))
		return CORE_EINVAL;
	pthread_mutex_lock(&w->ingest);
	old = history_get(w);	/* only this writer publishes: it stays current */
	prev = old->n ? old->snaps[old->n - 1] : NULL;
	if (prev && (tick <= prev->tick || !(time_ms > prev->time_ms))) {
		r = CORE_ECONFLICT;
		goto out_unlock;
	}
	/* at steady state each tick drops the oldest: its bytes make the room
	 * the new one takes, or a world whose full history fits the budget
	 * would be refused once it filled */
	first = keep_from(old, time_ms, &w->opts);
	for (i = 0; i < first; i++)
		dropped += old->snaps[i]->budget_bytes;
	r = snapshot_build(w->store, w->mem, tick, time_ms, ents, n, prev,
			   w->opts.teleport_distance, dropped, &s, fail);
	if (r != CORE_OK)
		goto out_unlock;
	h = history_alloc(old->n - first + 1);
	if (!h) {
		snapshot_unref(s);
		r = CORE_ENOMEM;
		goto out_unlock;
	}
	times = (double *)(h->snaps + h->n);
	for (i = first; i < old->n; i++) {
		h->snaps[i - first] = snapshot_ref(old->snaps[i]);
		times[i - first] = old->times[i];
	}
	h->snaps[h->n - 1] = s;
	times[h->n - 1] = s->time_ms;
	pthread_mutex_lock(&w->pub);
	w->hist = h;		/* the one pointer store readers see */
	pthread_mutex_unlock(&w->pub);
	history_unref(old);	/* the published reference */
	atomic_fetch_add(&w->ingested, 1);
out_unlock:
	pthread_mutex_unlock(&w->ingest);
	history_unref(old);	/* ours */
	return r;
}

void world_get_info(struct world *w, struct world_info *info)
{
	struct history *h = history_get(w);

	memset(info, 0, sizeof(*info));
	info->instances = w->ninst;
	info->opts = w->opts;
	info->ticks = h->n;
	if (h->n) {
		const struct snapshot *o = h->snaps[0], *nw = h->snaps[h->n - 1];

		info->entities = nw->nent;
		info->hitboxes = nw->nhb;
		info->oldest_tick = o->tick;
		info->newest_tick = nw->tick;
		info->oldest_time_ms = o->time_ms;
		info->newest_time_ms = nw->time_ms;
	}
	info->snapshots_ingested = atomic_load(&w->ingested);
	history_unref(h);
}

void world_instance(const struct world *w, size_t i, const char **id, const char **mesh,
		    uint32_t *layer)
{
	*id = w->inst[i].id;
	*mesh = w->inst[i].mesh;
	*layer = w->inst[i].layer;
}

/*
 * The scene, re-resolved when the store changed since it was built. Two
 * readers may rebuild at once; the later publish wins and both scenes are
 * valid (each holds its own references).
 */
static enum core_result scene_get(struct world *w, struct scene **out, size_t *bad)
{
	struct scene *mine, *fresh, *prev;
	enum core_result r;

	pthread_mutex_lock(&w->pub);
	mine = w->scene;
	atomic_fetch_add(&mine->refs, 1);
	pthread_mutex_unlock(&w->pub);
	if (mine->generation == store_generation(w->store)) {
		*out = mine;
		return CORE_OK;
	}
	scene_unref(mine, w->ninst);
	r = scene_build(w, &fresh, bad);
	if (r != CORE_OK)
		return r;
	atomic_fetch_add(&fresh->refs, 1);	/* one for the world, one for the caller */
	pthread_mutex_lock(&w->pub);
	prev = w->scene;
	/* two readers may rebuild at once: the older build never replaces
	 * a newer one (which would make the next query build again) */
	if (fresh->generation >= prev->generation)
		w->scene = fresh;
	else
		prev = fresh;
	pthread_mutex_unlock(&w->pub);
	scene_unref(prev, w->ninst);		/* the world's old (or unused) reference */
	*out = fresh;
	return CORE_OK;
}

enum core_result world_view_acquire(struct world *w, struct world_view **out, size_t *bad)
{
	struct world_view *v = malloc(sizeof(*v));
	enum core_result r;

	if (!v)
		return CORE_ENOMEM;
	r = scene_get(w, &v->scene, bad);
	if (r != CORE_OK) {
		free(v);
		return r;
	}
	v->w = world_ref(w);
	v->hist = history_get(w);
	*out = v;
	return CORE_OK;
}

void world_view_release(struct world_view *v)
{
	if (!v)
		return;
	history_unref(v->hist);
	scene_unref(v->scene, v->w->ninst);
	world_unref(v->w);
	free(v);
}
