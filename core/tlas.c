/* tlas.c - the top-level BVH: median splits over item centres, double slab test. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "tlas.h"

#define TLAS_LEAF_MAX 1	/* one item per leaf: a leaf box is that item's own bounds */
#define TLAS_STACK 64		/* depth of a median-split tree over < 2^31 items is < 32 */

static float pad_down(float x, float r)
{
	return f_below(x - r);
}

static float pad_up(float x, float r)
{
	return f_above(x + r);
}

void tlas_pad(vec3 *lo, vec3 *hi)
{
	/* MAXF, not fmaxf (a libm call here): the bounds are never NaN */
	float big = MAXF(MAXF(fabsf(lo->x), fabsf(hi->x)),
			 MAXF(MAXF(fabsf(lo->y), fabsf(hi->y)), MAXF(fabsf(lo->z), fabsf(hi->z))));
	float r = big * 0x1p-20f + 1e-30f;

	*lo = v3(pad_down(lo->x, r), pad_down(lo->y, r), pad_down(lo->z, r));
	*hi = v3(pad_up(hi->x, r), pad_up(hi->y, r), pad_up(hi->z, r));
}

struct build {
	const vec3 *lo, *hi;
	uint32_t *items;
	struct tlas_node *nodes;
	size_t nnodes;
};

static float centre(const struct build *b, uint32_t i, int axis)
{
	return v3_comp(b->lo[i], axis) + v3_comp(b->hi[i], axis);
}

struct sort_ctx {
	const struct build *b;
	int axis;
};

static int cmp_centre(const void *x, const void *y, void *arg)
{
	const struct sort_ctx *c = arg;
	float p = centre(c->b, *(const uint32_t *)x, c->axis);
	float q = centre(c->b, *(const uint32_t *)y, c->axis);

	if (p != q)
		return p < q ? -1 : 1;
	/* equal centres: by index, so the tree does not depend on qsort's order */
	return (*(const uint32_t *)x > *(const uint32_t *)y) - (*(const uint32_t *)x < *(const uint32_t *)y);
}

/* Order items[first, first+n) by centre along axis (a median split). */
static void select_median(struct build *b, size_t first, size_t n, int axis)
{
	struct sort_ctx c = { b, axis };

	qsort_r(b->items + first, n, sizeof(*b->items), cmp_centre, &c);
}

/* Build node `at` over items[first, first+n); children go to fresh slots. */
static void build_node(struct build *b, size_t at, size_t first, size_t n)
{
	struct tlas_node *node = &b->nodes[at];
	vec3 lo = b->lo[b->items[first]], hi = b->hi[b->items[first]];
	vec3 clo = v3(INFINITY, INFINITY, INFINITY), chi = v3(-INFINITY, -INFINITY, -INFINITY);
	size_t i, left;
	int axis = 0;

	for (i = first; i < first + n; i++) {
		uint32_t it = b->items[i];
		vec3 c = v3_add(b->lo[it], b->hi[it]);

		lo = v3_min(lo, b->lo[it]);
		hi = v3_max(hi, b->hi[it]);
		clo = v3_min(clo, c);
		chi = v3_max(chi, c);
	}
	node->lo[0] = lo.x;
	node->lo[1] = lo.y;
	node->lo[2] = lo.z;
	node->hi[0] = hi.x;
	node->hi[1] = hi.y;
	node->hi[2] = hi.z;
	if (n <= TLAS_LEAF_MAX) {
		node->first = (uint32_t)first;
		node->count = (uint32_t)n;
		return;
	}
	if (chi.y - clo.y > v3_comp(chi, axis) - v3_comp(clo, axis))
		axis = 1;
	if (chi.z - clo.z > v3_comp(chi, axis) - v3_comp(clo, axis))
		axis = 2;
	select_median(b, first, n, axis);
	left = b->nnodes;
	b->nnodes += 2;
	node->first = (uint32_t)left;
	node->count = 0;
	build_node(b, left, first, n / 2);
	build_node(b, left + 1, first + n / 2, n - n / 2);
}

enum core_result tlas_build(const vec3 *lo, const vec3 *hi, size_t n, struct tlas *out)
{
	struct build b = { lo, hi, NULL, NULL, 1 };
	size_t i;

	out->nodes = NULL;
	out->nnodes = 0;
	out->items = NULL;
	out->n = 0;
	if (n == 0)
		return CORE_OK;
	if (n >= (1u << 31))
		return CORE_ETOOBIG;
	/* a binary tree with leaves of >= 1 item has < 2n nodes */
	b.items = malloc(n * sizeof(*b.items));
	b.nodes = malloc(2 * n * sizeof(*b.nodes));
	if (!b.items || !b.nodes) {
		free(b.items);
		free(b.nodes);
		return CORE_ENOMEM;
	}
	for (i = 0; i < n; i++)
		b.items[i] = (uint32_t)i;
	build_node(&b, 0, 0, n);
	out->nodes = b.nodes;
	out->nnodes = b.nnodes;
	out->items = b.items;
	out->n = n;
	return CORE_OK;
}

void tlas_release(struct tlas *t)
{
	free(t->nodes);
	free(t->items);
	t->nodes = NULL;
	t->items = NULL;
	t->nnodes = 0;
	t->n = 0;
}

void tlas_ray_init(struct tlas_ray *r, const struct ray *ray)
{
	double d[3] = { ray->dir.x, ray->dir.y, ray->dir.z };
	int k;

	r->o[0] = ray->origin.x;
	r->o[1] = ray->origin.y;
	r->o[2] = ray->origin.z;
	for (k = 0; k < 3; k++) {
		r->zero[k] = d[k] == 0;
		r->inv[k] = r->zero[k] ? 0 : 1 / d[k];
		r->neg[k] = r->inv[k] < 0;
	}
}

/* The near and far planes are picked by the direction's sign, fixed per
 * ray (no swap). */
double tlas_box_entry(const struct tlas_ray *r, const float lo[3], const float hi[3], double tmax)
{
	double tin = 0, tout = tmax;
	int k;

	for (k = 0; k < 3; k++) {
		double a = lo[k], b = hi[k], t0, t1;

		if (r->zero[k]) {
			if (r->o[k] < a || r->o[k] > b)
				return -1;
			continue;
		}
		t0 = ((r->neg[k] ? b : a) - r->o[k]) * r->inv[k];
		t1 = ((r->neg[k] ? a : b) - r->o[k]) * r->inv[k];
		tin = t0 > tin ? t0 : tin;
		tout = t1 < tout ? t1 : tout;
		if (tin > tout)
			return -1;
	}
	return tin;
}

int tlas_ray_box(const struct tlas_ray *r, const float lo[3], const float hi[3], double tmax)
{
	return tlas_box_entry(r, lo, hi, tmax) >= 0;
}

int tlas_box_hit(const float lo[3], const float hi[3], const struct ray *ray, float tmax)
{
	struct tlas_ray r;

	tlas_ray_init(&r, ray);
	return tlas_box_entry(&r, lo, hi, tmax) >= 0;
}

void tlas_traverse(const struct tlas *t, const struct ray *ray, float *tmax, tlas_visit_fn fn,
		   void *cls)
{
	struct tlas_ray r;
	uint32_t stack[TLAS_STACK];
	size_t sp = 0;

	if (!t->nodes || !(*tmax >= 0))
		return;
	tlas_ray_init(&r, ray);
	if (tlas_box_entry(&r, t->nodes[0].lo, t->nodes[0].hi, *tmax) < 0)
		return;
	stack[sp++] = 0;
	while (sp) {
		const struct tlas_node *node = &t->nodes[stack[--sp]];

		if (node->count) {
			uint32_t i;

			for (i = 0; i < node->count; i++)
				if (fn(cls, t->items[node->first + i], tmax))
					return;
			continue;
		}
		{
			uint32_t l = node->first, rr = node->first + 1;
			double tl = tlas_box_entry(&r, t->nodes[l].lo, t->nodes[l].hi, *tmax);
			double tr = tlas_box_entry(&r, t->nodes[rr].lo, t->nodes[rr].hi, *tmax);

			/* push the farther first so the nearer pops first */
			if (tl >= 0 && tr >= 0) {
				stack[sp++] = tl <= tr ? rr : l;
				stack[sp++] = tl <= tr ? l : rr;
			} else if (tl >= 0) {
				stack[sp++] = l;
			} else if (tr >= 0) {
				stack[sp++] = rr;
			}
		}
	}
}
