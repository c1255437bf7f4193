/* rewind.c - the poses between two paired snapshots: which culling tree a
 * rewound shot walks, and a hitbox interpolated at the shot's time (centres
 * and capsule ends linearly, rotations by a normalised lerp along the
 * shorter arc). */
#include <math.h>

#include "world_impl.h"

const struct tlas *rewind_entity_tlas(const struct rewind *rw)
{
	return rw->s1 ? &rw->s1->pair : &rw->s0->own;
}

static vec3 lerp3(vec3 a, vec3 b, double f)
{
	return v3((float)(a.x + f * ((double)b.x - a.x)), (float)(a.y + f * ((double)b.y - a.y)),
		  (float)(a.z + f * ((double)b.z - a.z)));
}

/* Normalised lerp along the shorter arc (q1 negated when q0.q1 < 0); both
 * unit, so the result has length >= 1/sqrt(2) before normalising. */
static void nlerp(const double q0[4], const double q1[4], double f, double out[4])
{
	double dot = q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3];
	double s = dot < 0 ? -1 : 1, l = 0;
	int i;

	for (i = 0; i < 4; i++) {
		out[i] = (1 - f) * q0[i] + f * s * q1[i];
		l += out[i] * out[i];
	}
	l = sqrt(l);
	for (i = 0; i < 4; i++)
		out[i] /= l;
}

const struct hitbox *rewind_hitbox(const struct rewind *rw, uint32_t i, uint32_t k,
				   struct hitbox_scratch *scratch)
{
	struct hitbox *tmp = &scratch->h;
	const struct hitbox *h0 = &rw->s0->hbs[k], *h1;
	uint32_t m;

	if (!rw->s1 || rw->f == 0 || rw->s1->succ[i] == WORLD_NONE)
		return h0;
	m = rw->s1->hb_succ[k];
	if (m == WORLD_NONE)
		return h0;
	h1 = &rw->s1->hbs[m];
	/* only what a cast reads (world_query.c's cast_hitbox), not the whole
	 * hitbox: both snapshots are usually cold in the cache, and a sphere or
	 * a capsule then touches one line of each */
	tmp->shape = h0->shape;
	tmp->id = h0->id;
	tmp->radius = h0->radius;
	tmp->a = lerp3(h0->a, h1->a, rw->f);
	switch (h0->shape) {
	case HITBOX_CAPSULE:
		tmp->b = lerp3(h0->b, h1->b, rw->f);
		break;
	case HITBOX_BOX:
		tmp->size = h0->size;
		nlerp(h0->rot, h1->rot, rw->f, tmp->rot);
		if (obb_from_quat(tmp->a, tmp->size, tmp->rot, &tmp->box) != CORE_OK)
			return h0;
		break;
	case HITBOX_MESH: {
		double pos[3] = { tmp->a.x, tmp->a.y, tmp->a.z };
		double scale[3] = { h0->size.x, h0->size.y, h0->size.z };

		tmp->size = h0->size;
		tmp->mesh = h0->mesh;
		tmp->mesh_name = h0->mesh_name;
		nlerp(h0->rot, h1->rot, rw->f, tmp->rot);
		tmp->xf = &scratch->xf;
		if (xform_from_trs(pos, tmp->rot, scale, tmp->xf) != CORE_OK)
			return h0;
		break;
	}
	default:
		break;
	}
	return tmp;
}

/* The first bytes of a hitbox, through its radius: what a sphere or a
 * capsule cast reads (a box or a mesh reads more, and finds it in time). */
static void prefetch_hitbox(const struct hitbox *h)
{
	__builtin_prefetch(h);
	__builtin_prefetch((const char *)&h->radius);
}

void rewind_prefetch(const struct rewind *rw, uint32_t i, uint32_t k)
{
	prefetch_hitbox(&rw->s0->hbs[k]);
	if (rw->s1 && rw->f != 0) {
		__builtin_prefetch(&rw->s1->succ[i]);
		__builtin_prefetch(&rw->s1->hb_succ[k]);
	}
}

void rewind_prefetch_pair(const struct rewind *rw, uint32_t i, uint32_t k)
{
	uint32_t m;

	if (!rw->s1 || rw->f == 0 || rw->s1->succ[i] == WORLD_NONE)
		return;
	m = rw->s1->hb_succ[k];
	if (m != WORLD_NONE)
		prefetch_hitbox(&rw->s1->hbs[m]);
}
