/* demo.c - generates the demo arena of demo.h from a list of boxes. */
#include "demo.h"

#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "store.h"

struct demo_box {
	float lo[3], hi[3];
	unsigned seg[3];	/* quads along x, y, z */
};

static const struct demo_box boxes[] = {
	{ { -20, -1, -20 }, { 20, 0, 20 }, { 8, 1, 8 } },	/* floor */
	{ { -20, 0, -20 }, { -19, 4, 20 }, { 1, 1, 1 } },	/* west wall */
	{ { 19, 0, -20 }, { 20, 4, 20 }, { 1, 1, 1 } },		/* east wall */
	{ { -19, 0, -20 }, { 19, 4, -19 }, { 1, 1, 1 } },	/* south wall */
	{ { -19, 0, 19 }, { 19, 4, 20 }, { 1, 1, 1 } },		/* north wall */
	{ { -1, 0, -1 }, { 1, 2, 1 }, { 1, 1, 1 } },		/* crate A */
	{ { 8, 0, -6 }, { 10, 2, -4 }, { 1, 1, 1 } },		/* crate B */
	{ { -10, 0, 6 }, { -7, 3, 9 }, { 1, 1, 1 } },		/* crate C */
};

#define NBOXES (sizeof(boxes) / sizeof(boxes[0]))
#define MAX_SEG 8

/*
 * A face: the axis of its normal, its side (0 = lo, 1 = hi), and the two
 * in-plane axes (u, v) ordered so that u x v points outwards; a quad
 * (u, v), (u+1, v), (u+1, v+1), (u, v+1) is then counter-clockwise seen
 * from outside.
 */
struct face {
	int axis, side, u, v;
};

static const struct face faces[6] = {
	{ 1, 1, 2, 0 },	/* +y: z x x = +y */
	{ 1, 0, 0, 2 },	/* -y: x x z = -y */
	{ 0, 0, 2, 1 },	/* -x: z x y = -x */
	{ 0, 1, 1, 2 },	/* +x: y x z = +x */
	{ 2, 0, 1, 0 },	/* -z: y x x = -z */
	{ 2, 1, 0, 1 },	/* +z: x x y = +z */
};

struct gen {
	float *xyz;
	uint32_t *idx;
	size_t nvert, ntri;
	int32_t map[(MAX_SEG + 1) * (MAX_SEG + 1) * (MAX_SEG + 1)];
};

/* The vertex at lattice point p of box b, created on first use so the
 * faces of one box share their edges. */
static uint32_t lattice_vertex(struct gen *g, const struct demo_box *b, const unsigned p[3])
{
	size_t key = (p[0] * (MAX_SEG + 1) + p[1]) * (MAX_SEG + 1) + p[2];
	int k;

	if (g->map[key] < 0) {
		float *out = &g->xyz[g->nvert * 3];

		for (k = 0; k < 3; k++)
			out[k] = b->lo[k] + (b->hi[k] - b->lo[k]) * (float)p[k] / (float)b->seg[k];
		g->map[key] = (int32_t)g->nvert++;
	}
	return (uint32_t)g->map[key];
}

static void emit_box(struct gen *g, const struct demo_box *b)
{
	size_t f;

	memset(g->map, 0xff, sizeof(g->map));
	for (f = 0; f < 6; f++) {
		const struct face *fc = &faces[f];
		unsigned i, j;

		for (j = 0; j < b->seg[fc->v]; j++) {
			for (i = 0; i < b->seg[fc->u]; i++) {
				unsigned p[4][3];
				uint32_t q[4];
				int c;

				for (c = 0; c < 4; c++) {
					p[c][fc->axis] = fc->side ? b->seg[fc->axis] : 0;
					p[c][fc->u] = i + (c == 1 || c == 2);
					p[c][fc->v] = j + (c >= 2);
					q[c] = lattice_vertex(g, b, p[c]);
				}
				g->idx[g->ntri * 3 + 0] = q[0];
				g->idx[g->ntri * 3 + 1] = q[1];
				g->idx[g->ntri * 3 + 2] = q[2];
				g->ntri++;
				g->idx[g->ntri * 3 + 0] = q[0];
				g->idx[g->ntri * 3 + 1] = q[2];
				g->idx[g->ntri * 3 + 2] = q[3];
				g->ntri++;
			}
		}
	}
}

int demo_mesh_make(struct demo_mesh *d)
{
	size_t maxv = 0, maxt = 0, i;
	struct gen *g;

	for (i = 0; i < NBOXES; i++) {
		const unsigned *s = boxes[i].seg;

		maxv += (size_t)(s[0] + 1) * (s[1] + 1) * (s[2] + 1);
		maxt += 4 * ((size_t)s[0] * s[1] + (size_t)s[1] * s[2] + (size_t)s[0] * s[2]);
	}
	memset(d, 0, sizeof(*d));
	g = calloc(1, sizeof(*g));
	if (!g)
		return -1;
	g->xyz = malloc(maxv * 3 * sizeof(*g->xyz));
	if (!g->xyz)
		goto out_free_gen;
	g->idx = malloc(maxt * 3 * sizeof(*g->idx));
	if (!g->idx)
		goto out_free_xyz;
	for (i = 0; i < NBOXES; i++)
		emit_box(g, &boxes[i]);
	d->xyz = g->xyz;
	d->nvert = g->nvert;
	d->idx = g->idx;
	d->ntri = g->ntri;
	free(g);
	return 0;

out_free_xyz:
	free(g->xyz);
out_free_gen:
	free(g);
	return -1;
}

void demo_mesh_release(struct demo_mesh *d)
{
	free(d->xyz);
	free(d->idx);
	memset(d, 0, sizeof(*d));
}

int demo_store(struct store *store, size_t max_meshes)
{
	struct demo_mesh d;
	struct mesh *m;
	enum core_result r;

	if (demo_mesh_make(&d))
		return CORE_ENOMEM;
	r = mesh_build(d.xyz, d.nvert, d.idx, d.ntri, &m, NULL);
	demo_mesh_release(&d);
	if (r != CORE_OK)
		return r;
	return store_put(store, DEMO_MESH_NAME, m, max_meshes, NULL, NULL);
}
