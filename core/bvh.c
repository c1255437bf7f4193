/* bvh.c - binned SAH construction of a 4-wide BVH.
 *
 * Top-down: a node's primitive range is split in two by the binned surface
 * area heuristic (Wald 2007, "On fast Construction of SAH-based Bounding
 * Volume Hierarchies"; 16 bins on each axis), then the child with the largest
 * surface area is split again until the node has four children or none is
 * worth splitting (the SAH cost of a leaf is no higher than that of a split
 * and it holds at most BVH_LEAF_MAX primitives).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"

#define NBINS 16
#define COST_TRAVERSAL 1.0f	/* relative to one triangle test */

struct box {
	float lo[3], hi[3];
};

struct range {
	uint32_t begin, end;
	struct box bounds;	/* of the primitives' boxes */
	int final;		/* do not split further */
};

struct builder {
	const vec3 *plo, *phi;
	float *cen;		/* 3 per primitive: centroids */
	uint32_t *idx;
	struct bvh4_node *nodes;
	size_t nnodes, cap;
};

static void box_empty(struct box *b)
{
	for (int k = 0; k < 3; k++) {
		b->lo[k] = FLT_MAX;
		b->hi[k] = -FLT_MAX;
	}
}

static void box_grow_prim(struct box *b, vec3 lo, vec3 hi)
{
	b->lo[0] = fminf(b->lo[0], lo.x);
	b->lo[1] = fminf(b->lo[1], lo.y);
	b->lo[2] = fminf(b->lo[2], lo.z);
	b->hi[0] = fmaxf(b->hi[0], hi.x);
	b->hi[1] = fmaxf(b->hi[1], hi.y);
	b->hi[2] = fmaxf(b->hi[2], hi.z);
}

static void box_merge(struct box *b, const struct box *o)
{
	for (int k = 0; k < 3; k++) {
		b->lo[k] = fminf(b->lo[k], o->lo[k]);
		b->hi[k] = fmaxf(b->hi[k], o->hi[k]);
	}
}

static float box_area(const struct box *b)
{
	float dx = b->hi[0] - b->lo[0], dy = b->hi[1] - b->lo[1], dz = b->hi[2] - b->lo[2];

	if (dx < 0 || dy < 0 || dz < 0)
		return 0;
	return dx * dy + dy * dz + dz * dx;
}

/* Outward padding: keeps the slab test conservative under rounding. */
static float pad_down(float x)
{
	return x - fabsf(x) * 0x1p-20f - 1e-20f;
}

static float pad_up(float x)
{
	return x + fabsf(x) * 0x1p-20f + 1e-20f;
}

static int new_node(struct builder *bd, uint32_t *out)
{
	if (bd->nnodes == bd->cap) {
		size_t nc = bd->cap ? bd->cap * 2 : 64;
		struct bvh4_node *nn;

		if (nc > SIZE_MAX / sizeof(*nn) || nc > UINT32_MAX)
			return -1;
		nn = realloc(bd->nodes, nc * sizeof(*nn));
		if (!nn)
			return -1;
		bd->nodes = nn;
		bd->cap = nc;
	}
	*out = (uint32_t)bd->nnodes++;
	return 0;
}

/*
 * Split r into *l and *rr by binned SAH. Returns 0 when r should stay a
 * leaf (too few primitives, or a split does not pay and r fits a leaf).
 */
static int split_range(struct builder *bd, const struct range *r, struct range *l,
		       struct range *rr)
{
	uint32_t n = r->end - r->begin, i;
	float cmin[3], cmax[3], scale[3];
	int best_axis = -1, best_bin = 0, k;
	float best_cost = FLT_MAX;
	struct box bl_best, br_best;
	uint32_t nl_best = 0;

	if (n <= 1)
		return 0;
	for (k = 0; k < 3; k++) {
		cmin[k] = FLT_MAX;
		cmax[k] = -FLT_MAX;
	}
	for (i = r->begin; i < r->end; i++) {
		const float *c = bd->cen + 3 * (size_t)bd->idx[i];

		for (k = 0; k < 3; k++) {
			cmin[k] = fminf(cmin[k], c[k]);
			cmax[k] = fmaxf(cmax[k], c[k]);
		}
	}
	for (k = 0; k < 3; k++) {
		float ext = cmax[k] - cmin[k];

		scale[k] = ext > 0 ? (NBINS * (1 - 1e-6f)) / ext : 0;
	}
	{
		struct box bins[3][NBINS];
		uint32_t cnt[3][NBINS];

		memset(cnt, 0, sizeof(cnt));
		for (k = 0; k < 3; k++)
			for (int b = 0; b < NBINS; b++)
				box_empty(&bins[k][b]);
		for (i = r->begin; i < r->end; i++) {
			uint32_t p = bd->idx[i];
			const float *c = bd->cen + 3 * (size_t)p;

			for (k = 0; k < 3; k++) {
				int b = (int)((c[k] - cmin[k]) * scale[k]);

				b = b < 0 ? 0 : b >= NBINS ? NBINS - 1 : b;
				cnt[k][b]++;
				box_grow_prim(&bins[k][b], bd->plo[p], bd->phi[p]);
			}
		}
		for (k = 0; k < 3; k++) {
			float right_area[NBINS];
			struct box acc, right_box[NBINS];
			uint32_t nr = 0, right_cnt[NBINS], nl = 0;

			if (scale[k] == 0)
				continue;
			box_empty(&acc);
			for (int b = NBINS - 1; b > 0; b--) {
				box_merge(&acc, &bins[k][b]);
				nr += cnt[k][b];
				right_area[b] = box_area(&acc);
				right_box[b] = acc;
				right_cnt[b] = nr;
			}
			box_empty(&acc);
			for (int b = 0; b < NBINS - 1; b++) {
				float cost;

				box_merge(&acc, &bins[k][b]);
				nl += cnt[k][b];
				if (nl == 0 || right_cnt[b + 1] == 0)
					continue;
				cost = box_area(&acc) * nl + right_area[b + 1] * right_cnt[b + 1];
				if (cost < best_cost) {
					best_cost = cost;
					best_axis = k;
					best_bin = b;
					bl_best = acc;
					br_best = right_box[b + 1];
					nl_best = nl;
				}
			}
		}
	}
	if (best_axis < 0) {
		/* all centroids coincide: split by count if it cannot be one leaf */
		uint32_t mid;

		if (n <= BVH_LEAF_MAX)
			return 0;
		mid = r->begin + n / 2;
		l->begin = r->begin;
		l->end = mid;
		rr->begin = mid;
		rr->end = r->end;
		box_empty(&l->bounds);
		box_empty(&rr->bounds);
		for (i = l->begin; i < l->end; i++)
			box_grow_prim(&l->bounds, bd->plo[bd->idx[i]], bd->phi[bd->idx[i]]);
		for (i = rr->begin; i < rr->end; i++)
			box_grow_prim(&rr->bounds, bd->plo[bd->idx[i]], bd->phi[bd->idx[i]]);
		l->final = rr->final = 0;
		return 1;
	}
	{
		float area = box_area(&r->bounds);
		float leaf_cost = area * n;
		float split_cost = COST_TRAVERSAL * area + best_cost;

		if (n <= BVH_LEAF_MAX && leaf_cost <= split_cost)
			return 0;
	}
	{
		/* partition: bin index <= best_bin goes left */
		uint32_t a = r->begin, b = r->end;

		while (a < b) {
			const float *c = bd->cen + 3 * (size_t)bd->idx[a];
			int bin = (int)((c[best_axis] - cmin[best_axis]) * scale[best_axis]);

			bin = bin < 0 ? 0 : bin >= NBINS ? NBINS - 1 : bin;
			if (bin <= best_bin) {
				a++;
			} else {
				uint32_t t = bd->idx[a];

				bd->idx[a] = bd->idx[--b];
				bd->idx[b] = t;
			}
		}
		(void)nl_best;
		l->begin = r->begin;
		l->end = a;
		rr->begin = a;
		rr->end = r->end;
		l->bounds = bl_best;
		rr->bounds = br_best;
		l->final = rr->final = 0;
	}
	return 1;
}

static void set_child(struct bvh4_node *nd, int s, const struct box *b, uint32_t child,
		      uint32_t count)
{
	for (int k = 0; k < 3; k++) {
		nd->lo[k][s] = pad_down(b->lo[k]);
		nd->hi[k][s] = pad_up(b->hi[k]);
	}
	nd->child[s] = child;
	nd->count[s] = count;
}

static void set_empty(struct bvh4_node *nd, int s)
{
	for (int k = 0; k < 3; k++) {
		nd->lo[k][s] = FLT_MAX;
		nd->hi[k][s] = -FLT_MAX;
	}
	nd->child[s] = BVH_EMPTY;
	nd->count[s] = 0;
}

struct task {
	uint32_t node;
	struct range r;
};

enum core_result bvh_build(const vec3 *lo, const vec3 *hi, size_t n, struct bvh *out,
			   uint32_t **order)
{
	struct builder bd = { .plo = lo, .phi = hi };
	struct task *stack = NULL;
	size_t sp = 0, scap = 0, i;
	struct range root;
	uint32_t rootnode;

	if (n == 0 || n > UINT32_MAX / 2)
		return CORE_EINVAL;
	if (n > SIZE_MAX / (3 * sizeof(float)))
		return CORE_ETOOBIG;
	bd.cen = malloc(3 * sizeof(float) * n);
	bd.idx = malloc(sizeof(*bd.idx) * n);
	if (!bd.cen || !bd.idx)
		goto out_nomem;
	box_empty(&root.bounds);
	for (i = 0; i < n; i++) {
		bd.cen[3 * i] = 0.5f * lo[i].x + 0.5f * hi[i].x;
		bd.cen[3 * i + 1] = 0.5f * lo[i].y + 0.5f * hi[i].y;
		bd.cen[3 * i + 2] = 0.5f * lo[i].z + 0.5f * hi[i].z;
		bd.idx[i] = (uint32_t)i;
		box_grow_prim(&root.bounds, lo[i], hi[i]);
	}
	root.begin = 0;
	root.end = (uint32_t)n;
	root.final = 0;
	if (new_node(&bd, &rootnode))
		goto out_nomem;
	scap = 64;
	stack = malloc(scap * sizeof(*stack));
	if (!stack)
		goto out_nomem;
	stack[sp++] = (struct task){ rootnode, root };
	while (sp) {
		struct task t = stack[--sp];
		struct range ch[4];
		int nch = 1;

		ch[0] = t.r;
		while (nch < 4) {
			int pick = -1;
			float best = -1;
			struct range a, b;

			for (int c = 0; c < nch; c++) {
				float ar = box_area(&ch[c].bounds);

				if (!ch[c].final && ch[c].end - ch[c].begin > 1 && ar > best) {
					best = ar;
					pick = c;
				}
			}
			if (pick < 0)
				break;
			if (!split_range(&bd, &ch[pick], &a, &b)) {
				ch[pick].final = 1;
				continue;
			}
			ch[pick] = a;
			ch[nch++] = b;
		}
		if (nch == 1) {
			/* the root itself is a leaf */
			set_child(&bd.nodes[t.node], 0, &ch[0].bounds, ch[0].begin,
				  ch[0].end - ch[0].begin);
			for (int s = 1; s < 4; s++)
				set_empty(&bd.nodes[t.node], s);
			continue;
		}
		for (int c = 0; c < 4; c++) {
			uint32_t cnt, child;

			if (c >= nch) {
				set_empty(&bd.nodes[t.node], c);
				continue;
			}
			cnt = ch[c].end - ch[c].begin;
			if (!ch[c].final && cnt <= BVH_LEAF_MAX) {
				/* small enough for a leaf: a node only if SAH splits it */
				struct range l, r;

				ch[c].final = !split_range(&bd, &ch[c], &l, &r);
			}
			if (ch[c].final || cnt == 1) {
				set_child(&bd.nodes[t.node], c, &ch[c].bounds, ch[c].begin, cnt);
				continue;
			}
			if (new_node(&bd, &child))
				goto out_nomem;
			set_child(&bd.nodes[t.node], c, &ch[c].bounds, child, 0);
			if (sp == scap) {
				struct task *ns = realloc(stack, 2 * scap * sizeof(*stack));

				if (!ns)
					goto out_nomem;
				stack = ns;
				scap *= 2;
			}
			stack[sp++] = (struct task){ child, ch[c] };
		}
	}
	free(stack);
	free(bd.cen);
	{
		struct bvh4_node *shrunk = realloc(bd.nodes, bd.nnodes * sizeof(*shrunk));

		out->nodes = shrunk ? shrunk : bd.nodes;
	}
	out->nnodes = bd.nnodes;
	out->lo = v3(pad_down(root.bounds.lo[0]), pad_down(root.bounds.lo[1]),
		     pad_down(root.bounds.lo[2]));
	out->hi = v3(pad_up(root.bounds.hi[0]), pad_up(root.bounds.hi[1]),
		     pad_up(root.bounds.hi[2]));
	*order = bd.idx;
	return CORE_OK;

out_nomem:
	free(stack);
	free(bd.cen);
	free(bd.idx);
	free(bd.nodes);
	return CORE_ENOMEM;
}

void bvh_release(struct bvh *b)
{
	free(b->nodes);
	b->nodes = NULL;
	b->nnodes = 0;
}
