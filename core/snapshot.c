/* snapshot.c - building immutable snapshots of entities and their hitboxes,
 * and pairing them with the tick before (rewind.c poses between two). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "membudget.h"
#include "snapmem.h"
#include "world_impl.h"

static int layer_ok(uint32_t layer)
{
	return layer < 32;
}

/* in scaled to unit length, first by a power of two that brings its largest
 * component near 1 (exact, so an ordinary quaternion gives the same bits as
 * without it), as xform_quat_matrix does: a quaternion of tiny components
 * is one, not a zero refused when their squares underflow. */
static int unit_quat(const double in[4], double out[4])
{
	double q[4], big = 0, l = 0;
	int i, e;

	for (i = 0; i < 4; i++) {
		if (!isfinite(in[i]))
			return 0;
		big = fmax(big, fabs(in[i]));
	}
	if (big == 0)
		return 0;
	frexp(big, &e);
	for (i = 0; i < 4; i++) {
		q[i] = ldexp(in[i], -e);
		l += q[i] * q[i];
	}
	l = sqrt(l);
	for (i = 0; i < 4; i++)
		out[i] = q[i] / l;
	return 1;
}

/* Float bounds containing the double interval [c - e, c + e] per axis. */
static void bounds_around(const double c[3], const double e[3], vec3 *lo, vec3 *hi)
{
	float l[3], u[3];
	int k;

	for (k = 0; k < 3; k++) {
		double a = c[k] - e[k], b = c[k] + e[k];

		l[k] = (float)a;
		u[k] = (float)b;
		if (l[k] > a)
			l[k] = f_below(l[k]);
		if (u[k] < b)
			u[k] = f_above(u[k]);
	}
	*lo = v3(l[0], l[1], l[2]);
	*hi = v3(u[0], u[1], u[2]);
}

static void d3(vec3 v, double o[3])
{
	o[0] = v.x;
	o[1] = v.y;
	o[2] = v.z;
}

/*
 * Bounds, centre c and half-widths e, that hold h's shape (its radius, half
 * extents, or mesh and scale) placed at a (and b, a capsule's other end)
 * under any rotation: a box by the sphere around its centre, a mesh by the
 * sphere around its position. A rewound pose between two ticks is the
 * earlier tick's shape at interpolated places, so the union of these
 * bounds at the earlier tick's places and at the later's contains every
 * pose in between (build_culling).
 */
static void hitbox_reach(const struct hitbox *h, vec3 a, vec3 b, double c[3], double e[3])
{
	double r = 0;
	int k;

	d3(a, c);
	switch (h->shape) {
	case HITBOX_SPHERE:
		r = h->radius;
		break;
	case HITBOX_CAPSULE: {
		double bd[3];

		d3(b, bd);
		for (k = 0; k < 3; k++) {
			e[k] = 0.5 * fabs(c[k] - bd[k]) + h->radius;
			c[k] = 0.5 * (c[k] + bd[k]);
		}
		return;
	}
	case HITBOX_BOX:
		r = sqrt((double)h->size.x * h->size.x + (double)h->size.y * h->size.y +
			 (double)h->size.z * h->size.z) * (1 + 4 * DBL_EPSILON);
		break;
	case HITBOX_MESH: {
		struct mesh_info mi;
		int corner;

		mesh_get_info(h->mesh, &mi);
		for (corner = 0; corner < 8; corner++) {
			double x = (corner & 1 ? mi.max.x : mi.min.x) * (double)h->size.x;
			double y = (corner & 2 ? mi.max.y : mi.min.y) * (double)h->size.y;
			double z = (corner & 4 ? mi.max.z : mi.min.z) * (double)h->size.z;

			r = fmax(r, sqrt(x * x + y * y + z * z));
		}
		r *= 1 + 8 * DBL_EPSILON;
		break;
	}
	}
	e[0] = e[1] = e[2] = r;
}

/* hitbox_reach's bounds as floats, padded as the culling trees need. */
static void hitbox_bounds(const struct hitbox *h, vec3 a, vec3 b, vec3 *lo, vec3 *hi)
{
	double c[3], e[3];

	hitbox_reach(h, a, b, c, e);
	bounds_around(c, e, lo, hi);
	tlas_pad(lo, hi);
}

/* Check one hitbox at its tick and set up its geometry and bounds. */
static enum core_result hitbox_setup(struct hitbox *h)
{
	switch (h->shape) {
	case HITBOX_SPHERE:
	case HITBOX_CAPSULE:
		if (!(h->radius >= 0) || !isfinite(h->radius) || !v3_isfinite(h->a) ||
		    (h->shape == HITBOX_CAPSULE && !v3_isfinite(h->b)))
			return CORE_EINVAL;
		h->key = h->shape == HITBOX_SPHERE ? h->a : v3_scale(v3_add(h->a, h->b), 0.5f);
		break;
	case HITBOX_BOX:
		if (!unit_quat(h->rot, h->rot) ||
		    obb_from_quat(h->a, h->size, h->rot, &h->box) != CORE_OK)
			return CORE_EINVAL;
		h->key = h->a;
		break;
	case HITBOX_MESH: {
		double pos[3], scale[3];

		d3(h->a, pos);
		d3(h->size, scale);
		if (!unit_quat(h->rot, h->rot) || xform_from_trs(pos, h->rot, scale, h->xf) != CORE_OK)
			return CORE_EINVAL;
		h->key = h->a;
		break;
	}
	default:
		return CORE_EINVAL;
	}
	hitbox_bounds(h, h->a, h->b, &h->lo, &h->hi);
	return CORE_OK;
}

struct snapshot *snapshot_ref(struct snapshot *s)
{
	atomic_fetch_add(&s->refs, 1);
	return s;
}

/* Everything but the culling trees is in the snapshot's one block. */
static void snapshot_free(struct snapshot *s)
{
	size_t i;

	for (i = 0; i < s->nhb; i++)
		mesh_unref(s->hbs[i].mesh);
	tlas_release(&s->own);
	tlas_release(&s->pair);
	membudget_give(s->budget_bytes);
	snapmem_release(s);
}

void snapshot_unref(struct snapshot *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1)
		snapshot_free(s);
}

uint32_t snapshot_find(const struct snapshot *s, const char *id)
{
	uint32_t h = world_name_hash(id), j, e;

	for (j = h & s->index_mask; (e = s->index[j]) != 0; j = (j + 1) & s->index_mask)
		if (s->ents[e - 1].hash == h && strcmp(s->ents[e - 1].id, id) == 0)
			return e - 1;
	return WORLD_NONE;
}

/* Slots of the id index of n entities: a power of two, at most half full. */
static size_t index_slots(size_t n)
{
	size_t size = 2;

	while (size < 2 * n)
		size *= 2;
	return size;
}

/* The id index of s's n entities (their ids and hashes set), in s->index
 * (index_slots(n) slots). */
static void build_index(struct snapshot *s)
{
	size_t size = index_slots(s->nent), i;
	uint32_t j;

	memset(s->index, 0, size * sizeof(*s->index));
	s->index_mask = (uint32_t)(size - 1);
	for (i = 0; i < s->nent; i++) {
		for (j = s->ents[i].hash & s->index_mask; s->index[j]; j = (j + 1) & s->index_mask)
			;
		s->index[j] = (uint32_t)i + 1;
	}
}

/* qsort_r helpers: indices ordered by the strings they name */
static int cmp_ent_in(const void *x, const void *y, void *arg)
{
	const struct entity_in *e = arg;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	int c = strcmp(e[i].id, e[j].id);

	return c ? c : (i > j) - (i < j);
}

static int cmp_hb_in(const void *x, const void *y, void *arg)
{
	const struct hitbox_in *h = arg;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	int c = strcmp(h[i].id, h[j].id);

	return c ? c : (i > j) - (i < j);
}

/* Copy s into the pool at *at; returns the copy. */
static const char *pool_put(char *pool, size_t *at, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = pool + *at;

	memcpy(p, s, n);
	*at += n;
	return p;
}

/* An id into room (cap bytes) when it fits, else the pool: a shot compares
 * and prints the ids of snapshots up to a second old, and one kept inside
 * its record costs no cache miss of its own. */
static const char *id_put(char *room, size_t cap, char *pool, size_t *at, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > cap)
		return pool_put(pool, at, s);
	memcpy(room, s, n);
	return room;
}

/* Hitbox k of entity e (global index), looked up by id in s; WORLD_NONE. */
static uint32_t find_hitbox(const struct snapshot *s, const struct entity *e, const char *id,
			    uint32_t hint)
{
	uint32_t k;

	if (hint < e->n && strcmp(s->hbs[e->first + hint].id, id) == 0)
		return e->first + hint;
	for (k = 0; k < e->n; k++)
		if (strcmp(s->hbs[e->first + k].id, id) == 0)
			return e->first + k;
	return WORLD_NONE;
}

/*
 * Pair s with prev: entity successors (none when it moved farther than
 * teleport_distance) and hitbox successors (same id and shape), in s->succ
 * and s->hb_succ (prev's counts). The lookup by id within an entity is
 * linear after trying the same position, which is where a game server sends
 * it every tick.
 */
static void pair_with(struct snapshot *s, const struct snapshot *prev, double teleport)
{
	size_t i;

	s->prev_tick = prev->tick;
	for (i = 0; i < prev->nhb; i++)
		s->hb_succ[i] = WORLD_NONE;
	for (i = 0; i < prev->nent; i++) {
		const struct entity *pe = &prev->ents[i];
		uint32_t j = snapshot_find(s, pe->id), k;
		double moved2 = 0, tele2 = teleport * teleport;

		s->succ[i] = j;
		if (j == WORLD_NONE)
			continue;
		for (k = 0; k < pe->n; k++) {
			const struct hitbox *h0 = &prev->hbs[pe->first + k];
			uint32_t m = find_hitbox(s, &s->ents[j], h0->id, k);
			double dx, dy, dz;

			if (m == WORLD_NONE || s->hbs[m].shape != h0->shape)
				continue;
			s->hb_succ[pe->first + k] = m;
			dx = (double)s->hbs[m].key.x - h0->key.x;
			dy = (double)s->hbs[m].key.y - h0->key.y;
			dz = (double)s->hbs[m].key.z - h0->key.z;
			moved2 = fmax(moved2, dx * dx + dy * dy + dz * dz);
		}
		if (moved2 > tele2)
			s->succ[i] = WORLD_NONE;
	}
}

/* Where a snapshot's arrays lie in its one block (snapmem.h): offsets from
 * the snapshot, each on a cache line of its own. */
struct layout {
	size_t ents, index, hbs, strings, xfs, succ, hb_succ;
	size_t own_ent, own_hb, pair_ent, pair_hb;	/* box planes */
	size_t total;
};

static size_t lay(size_t *at, size_t bytes)
{
	size_t o = *at;

	*at += (bytes + 63) / 64 * 64;
	return o;
}

/* n entities with nhb hitboxes, strings bytes of ids beyond their records,
 * nmesh mesh hitboxes, paired with prev (or NULL). n and nhb are below
 * WORLD_NONE, so nothing overflows. */
static void layout_of(struct layout *l, size_t n, size_t nhb, size_t strings, size_t nmesh,
		      const struct snapshot *prev)
{
	size_t at = 0, pn = prev ? prev->nent : 0, phb = prev ? prev->nhb : 0;

	lay(&at, sizeof(struct snapshot));
	l->ents = lay(&at, n * sizeof(struct entity));
	l->index = lay(&at, index_slots(n) * sizeof(uint32_t));
	l->hbs = lay(&at, nhb * sizeof(struct hitbox));
	l->strings = lay(&at, strings);
	l->xfs = lay(&at, nmesh * sizeof(struct xform));
	l->succ = lay(&at, pn * sizeof(uint32_t));
	l->hb_succ = lay(&at, phb * sizeof(uint32_t));
	l->own_ent = lay(&at, box_planes_bytes(n));
	l->own_hb = lay(&at, box_planes_bytes(nhb));
	l->pair_ent = lay(&at, prev ? box_planes_bytes(pn) : 0);
	l->pair_hb = lay(&at, prev ? box_planes_bytes(phb) : 0);
	l->total = at;
}

static float *planes_at(struct snapshot *s, size_t offset)
{
	return (float *)((char *)s + offset);
}

/* The culling BVHs (only past WORLD_FLAT_ENTITIES) and their boxes as
 * planes (world_impl.h), those where l says. An entity
 * without hitboxes gets an empty (inverted) box that no ray meets. */
static enum core_result build_culling(struct snapshot *s, const struct snapshot *prev,
				      const struct layout *l)
{
	size_t pn = prev ? prev->nent : 0, n = s->nent > pn ? s->nent : pn, i;
	vec3 *lo = malloc((n ? n : 1) * sizeof(*lo)), *hi = malloc((n ? n : 1) * sizeof(*hi));
	enum core_result r = CORE_ENOMEM;

	if (!lo || !hi)
		goto out_free;
	for (i = 0; i < s->nent; i++) {
		lo[i] = s->ents[i].lo;
		hi[i] = s->ents[i].hi;
	}
	if (s->nent > WORLD_FLAT_ENTITIES && (r = tlas_build(lo, hi, s->nent, &s->own)) != CORE_OK)
		goto out_free;
	r = CORE_OK;
	box_planes_init_at(&s->own_ent, s->nent, planes_at(s, l->own_ent));
	box_planes_init_at(&s->own_hb, s->nhb, planes_at(s, l->own_hb));
	for (i = 0; i < s->nent; i++)
		box_planes_set(&s->own_ent, i, lo[i], hi[i]);
	for (i = 0; i < s->nhb; i++)
		box_planes_set(&s->own_hb, i, s->hbs[i].lo, s->hbs[i].hi);
	if (!prev)
		goto out_free;
	/* a pair's bounds: the earlier tick's, joined for each hitbox with a
	 * successor by the earlier shape at the successor's places (rewind.c
	 * keeps the earlier radius, size and scale: the later tick's own
	 * bounds may be smaller) */
	box_planes_init_at(&s->pair_hb, prev->nhb, planes_at(s, l->pair_hb));
	for (i = 0; i < prev->nent; i++) {
		const struct entity *pe = &prev->ents[i];
		uint32_t k;
		int moved = 0;

		lo[i] = pe->lo;
		hi[i] = pe->hi;
		for (k = pe->first; k < pe->first + pe->n; k++) {
			const struct hitbox *h0 = &prev->hbs[k];
			uint32_t m = s->hb_succ[k];
			vec3 l1, u1;

			if (s->succ[i] == WORLD_NONE || m == WORLD_NONE) {
				box_planes_set(&s->pair_hb, k, h0->lo, h0->hi);
				continue;
			}
			hitbox_bounds(h0, s->hbs[m].a, s->hbs[m].b, &l1, &u1);
			l1 = v3_min(h0->lo, l1);
			u1 = v3_max(h0->hi, u1);
			box_planes_set(&s->pair_hb, k, l1, u1);
			lo[i] = v3_min(lo[i], l1);
			hi[i] = v3_max(hi[i], u1);
			moved = 1;
		}
		if (moved)
			tlas_pad(&lo[i], &hi[i]);
	}
	if (prev->nent > WORLD_FLAT_ENTITIES &&
	    (r = tlas_build(lo, hi, prev->nent, &s->pair)) != CORE_OK)
		goto out_free;
	box_planes_init_at(&s->pair_ent, prev->nent, planes_at(s, l->pair_ent));
	for (i = 0; i < prev->nent; i++)
		box_planes_set(&s->pair_ent, i, lo[i], hi[i]);
out_free:
	free(lo);
	free(hi);
	return r;
}

/* Duplicate hitbox ids of one entity: the input index of the later one. */
/* Hitboxes of an entity up to this many are checked pair by pair on their
 * hashes (a player's 15-20); more are sorted. */
#define DUP_PAIRWISE_MAX 64

/* A hitbox id that appears twice in e: of the smallest such id (byte
 * order), its second index; WORLD_NONE when the ids are distinct.
 * scratch: e->n entries. */
static size_t dup_hitbox(const struct entity_in *e, uint32_t *scratch)
{
	size_t k, j, dup = WORLD_NONE;

	if (e->n <= DUP_PAIRWISE_MAX) {
		for (k = 0; k < e->n; k++)
			scratch[k] = world_name_hash(e->hitboxes[k].id);
		for (k = 1; k < e->n; k++)
			for (j = 0; j < k; j++)
				if (scratch[j] == scratch[k] &&
				    strcmp(e->hitboxes[j].id, e->hitboxes[k].id) == 0) {
					/* k is the second index of its id (j the first) */
					if (dup == WORLD_NONE ||
					    strcmp(e->hitboxes[k].id, e->hitboxes[dup].id) < 0)
						dup = k;
					break;
				}
		return dup;
	}
	for (k = 0; k < e->n; k++)
		scratch[k] = (uint32_t)k;
	qsort_r(scratch, e->n, sizeof(*scratch), cmp_hb_in, (void *)e->hitboxes);
	for (k = 1; k < e->n; k++)
		if (strcmp(e->hitboxes[scratch[k]].id, e->hitboxes[scratch[k - 1]].id) == 0)
			return scratch[k];
	return WORLD_NONE;
}

static enum core_result fail_at(struct world_fail *f, size_t item, size_t hb, enum core_result r)
{
	if (f) {
		f->item = item;
		f->hitbox = hb;
	}
	return r;
}

enum core_result snapshot_build(struct store *store, struct snapmem *mem, uint64_t tick,
				double time_ms, const struct entity_in *ents, size_t n,
				const struct snapshot *prev, double teleport_distance,
				size_t dropped, struct snapshot **out, struct world_fail *fail)
{
	struct snapshot *s;
	struct layout l;
	char *base;
	uint32_t *order = NULL, *scratch = NULL;
	const char **names = NULL;
	struct mesh **meshes = NULL;	/* the mesh hitboxes', in the order built */
	size_t i, nhb = 0, bytes = 0, at = 0, maxn = 0, k, nmesh = 0, held = 0;
	enum core_result r = CORE_ENOMEM;

	if (!isfinite(time_ms) || n >= WORLD_NONE)
		return fail_at(fail, WORLD_NONE, WORLD_NONE, CORE_EINVAL);
	for (i = 0; i < n; i++) {
		if (!ents[i].id || !layer_ok(ents[i].layer))
			return fail_at(fail, i, WORLD_NONE, CORE_EINVAL);
		if (ents[i].n > SIZE_MAX / 2 - nhb)
			return fail_at(fail, i, WORLD_NONE, CORE_ETOOBIG);
		nhb += ents[i].n;
		maxn = ents[i].n > maxn ? ents[i].n : maxn;
		bytes += strlen(ents[i].id) + 1;
		for (k = 0; k < ents[i].n; k++) {
			const struct hitbox_in *h = &ents[i].hitboxes[k];

			if (!h->id || (h->shape == HITBOX_MESH && !h->mesh))
				return fail_at(fail, i, k, CORE_EINVAL);
			bytes += strlen(h->id) + 1 + (h->shape == HITBOX_MESH ? strlen(h->mesh) + 1 : 0);
			nmesh += h->shape == HITBOX_MESH;
		}
	}
	if (nhb >= WORLD_NONE)
		return fail_at(fail, WORLD_NONE, WORLD_NONE, CORE_ETOOBIG);
	layout_of(&l, n, nhb, bytes, nmesh, prev);
	base = snapmem_alloc(mem, l.total);
	order = malloc((n ? n : 1) * sizeof(*order));
	scratch = malloc((maxn ? maxn : 1) * sizeof(*scratch));
	names = malloc((nmesh ? nmesh : 1) * sizeof(*names));
	meshes = calloc(nmesh ? nmesh : 1, sizeof(*meshes));
	if (!base || !order || !scratch || !names || !meshes) {
		snapmem_release(base);
		free(order);
		free(scratch);
		free(names);
		free(meshes);
		return CORE_ENOMEM;
	}
	s = (struct snapshot *)base;
	memset(s, 0, sizeof(*s));
	atomic_init(&s->refs, 1);
	s->tick = tick;
	s->time_ms = time_ms;
	s->ents = (struct entity *)(base + l.ents);
	s->index = (uint32_t *)(base + l.index);
	s->hbs = (struct hitbox *)(base + l.hbs);
	s->strings = base + l.strings;
	s->xfs = (struct xform *)(base + l.xfs);
	s->succ = prev ? (uint32_t *)(base + l.succ) : NULL;
	s->hb_succ = prev ? (uint32_t *)(base + l.hb_succ) : NULL;
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_ent_in, (void *)ents);
	for (i = 1; i < n; i++)
		if (strcmp(ents[order[i]].id, ents[order[i - 1]].id) == 0) {
			r = fail_at(fail, order[i], WORLD_NONE, CORE_EINVAL);
			goto out_free;
		}
	/* every mesh hitbox from one version of the store: a mesh replaced
	 * meanwhile is old for all hitboxes that name it, or new for all */
	nmesh = 0;
	for (i = 0; i < n; i++)
		for (k = 0; k < ents[order[i]].n; k++)
			if (ents[order[i]].hitboxes[k].shape == HITBOX_MESH)
				names[nmesh++] = ents[order[i]].hitboxes[k].mesh;
	store_get_many(store, names, nmesh, meshes);
	held = nmesh;
	nhb = 0;
	nmesh = 0;
	for (i = 0; i < n; i++) {
		const struct entity_in *in = &ents[order[i]];
		struct entity *e = &s->ents[i];
		size_t dup = dup_hitbox(in, scratch);

		if (dup != WORLD_NONE) {
			r = fail_at(fail, order[i], dup, CORE_EINVAL);
			goto out_free;
		}
		e->id = id_put(e->sid, sizeof(e->sid), s->strings, &at, in->id);
		e->hash = world_name_hash(e->id);
		e->layer = in->layer;
		e->first = (uint32_t)nhb;
		e->n = (uint32_t)in->n;
		e->lo = v3(INFINITY, INFINITY, INFINITY);
		e->hi = v3(-INFINITY, -INFINITY, -INFINITY);
		for (k = 0; k < in->n; k++) {
			const struct hitbox_in *hi = &in->hitboxes[k];
			struct hitbox *h = &s->hbs[nhb++];

			memset(h, 0, sizeof(*h));
			s->nhb = nhb;	/* what snapshot_free must release */
			h->shape = hi->shape;
			h->id = id_put(h->sid, sizeof(h->sid), s->strings, &at, hi->id);
			h->a = hi->a;
			h->b = hi->b;
			h->radius = hi->radius;
			h->size = hi->size;
			memcpy(h->rot, hi->rot, sizeof(h->rot));
			if (h->shape == HITBOX_MESH) {
				h->mesh = meshes[nmesh];	/* the snapshot's now */
				meshes[nmesh] = NULL;
				h->xf = &s->xfs[nmesh++];
				h->mesh_name = pool_put(s->strings, &at, hi->mesh);
				if (!h->mesh) {
					r = fail_at(fail, order[i], k, CORE_ENOTFOUND);
					goto out_free;
				}
			}
			if (hitbox_setup(h) != CORE_OK) {
				r = fail_at(fail, order[i], k, CORE_EINVAL);
				goto out_free;
			}
			e->lo = v3_min(e->lo, h->lo);
			e->hi = v3_max(e->hi, h->hi);
		}
		if (e->n)
			tlas_pad(&e->lo, &e->hi);
	}
	s->nent = n;
	s->nhb = nhb;
	build_index(s);
	if (prev)
		pair_with(s, prev, teleport_distance);
	if ((r = build_culling(s, prev, &l)) != CORE_OK)
		goto out_free;
	/* taken once the snapshot is known valid: a bad one is refused for
	 * what is wrong with it (400, 404), not with a 507 whose retry, once
	 * there is room, would only meet that */
	if (membudget_take_replacing(l.total, dropped)) {
		r = fail_at(fail, WORLD_NONE, WORLD_NONE, CORE_ENOSPACE);
		goto out_free;
	}
	s->budget_bytes = l.total;
	free(order);
	free(scratch);
	free(names);
	free(meshes);
	*out = s;
	return CORE_OK;

out_free:
	for (k = 0; k < held; k++)
		mesh_unref(meshes[k]);	/* those not handed to a hitbox */
	free(order);
	free(scratch);
	free(names);
	free(meshes);
	snapshot_free(s);
	return r;
}
