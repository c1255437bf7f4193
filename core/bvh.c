/* bvh.c - binned SAH construction of an 8-wide BVH.
 *
 * Top-down: a node's primitive range is split in two by the binned surface
 * area heuristic (Wald 2007, "On fast Construction of SAH-based Bounding
 * Volume Hierarchies"; 16 bins on each axis), then the child with the largest
 * surface area is split again until the node has eight children or none is
 * worth splitting (the SAH cost of a leaf is no higher than that of a split
 * and it holds at most BVH_LEAF_MAX primitives). Below depth MEDIAN_DEPTH the
 * splits are object medians instead, so the depth stays under BVH_MAX_DEPTH
 * whatever the geometry (bvh.h). Large meshes build their top-level subtrees
 * on several threads (each into its own node array, joined at the end).
 */
#include <float.h>
#include <pthread.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "bvh.h"

#define NBINS 16
#define BIG_RANGE 4096	/* above this, bin one axis only */
/* The cost of visiting a node relative to one triangle test. With 8-wide
 * nodes and leaves tested eight lanes at once, 5 keeps leaves near 6
 * triangles and every harness mesh at or under 71.3 bytes per triangle
 * (bunny 71.2, level 69.0, bunny_sub4 68.7); 2 doubles the node count
 * (87 B/tri), and 3 to 6 cost the same instructions per ray within 2%
 * (callgrind on the harness's level and bunny_sub4). */
#define COST_TRAVERSAL 5.0f

/* fminf/fmaxf honour NaN and are library calls without -ffast-math; boxes
 * hold no NaN, so plain comparisons (one minss/maxss each) do. */
#define MINF(a, b) ((a) < (b) ? (a) : (b))
#define MAXF(a, b) ((a) > (b) ? (a) : (b))

struct box {
	float lo[3], hi[3];
};


struct range {
	uint32_t begin, end;
	struct box bounds;	/* of the primitives' boxes */
	int final;		/* do not split further */
};

struct builder {
	struct bvh_prim *p;		/* shared by the workers: each owns its ranges */
	struct bvh_node *nodes;
	size_t nnodes, cap;
	unsigned depth;		/* deepest task seen */
	uint32_t id;		/* worker number */
};

static void box_empty(struct box *b)
{
	for (int k = 0; k < 3; k++) {
		b->lo[k] = FLT_MAX;
		b->hi[k] = -FLT_MAX;
	}
}

static void box_grow_prim(struct box *b, const struct bvh_prim *p)
{
	for (int k = 0; k < 3; k++) {
		b->lo[k] = MINF(b->lo[k], p->lo[k]);
		b->hi[k] = MAXF(b->hi[k], p->hi[k]);
	}
}

static void box_merge(struct box *b, const struct box *o)
{
	for (int k = 0; k < 3; k++) {
		b->lo[k] = MINF(b->lo[k], o->lo[k]);
		b->hi[k] = MAXF(b->hi[k], o->hi[k]);
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
		struct bvh_node *nn;

		if (nc > SIZE_MAX / sizeof(*nn) || nc > (size_t)1 << (32 - BVH_REF_SHIFT))
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

/* Twice the centroid along axis k (no halving needed for binning). */
static inline float cen2(const struct bvh_prim *p, int k)
{
	return p->lo[k] + p->hi[k];
}

static inline int bin_of(float c, float cmin, float scale, int nb)
{
	int b = (int)((c - cmin) * scale);

	return b < 0 ? 0 : b >= nb ? nb - 1 : b;
}

/* Per-axis bins: counts and boxes, as 4-wide lo/hi for SSE. */
struct bins {
	float lo[3][NBINS][4], hi[3][NBINS][4];
	uint32_t cnt[3][NBINS];
};

static void bins_fill(struct bins *bn, const struct bvh_prim *p, uint32_t n, const float cmin[3],
		      const float scale[3], int nb)
{
	for (int k = 0; k < 3; k++) {
		for (int b = 0; b < nb; b++) {
			bn->cnt[k][b] = 0;
			for (int q = 0; q < 4; q++) {
				bn->lo[k][b][q] = FLT_MAX;
				bn->hi[k][b][q] = -FLT_MAX;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++, p++) {
#if defined(__SSE2__)
		__m128 lo = _mm_loadu_ps(p->lo), hi = _mm_loadu_ps(p->hi);
#endif
		for (int k = 0; k < 3; k++) {
			int b;

			if (scale[k] == 0)
				continue;
			b = bin_of(cen2(p, k), cmin[k], scale[k], nb);

			bn->cnt[k][b]++;
#if defined(__SSE2__)
			_mm_storeu_ps(bn->lo[k][b], _mm_min_ps(_mm_loadu_ps(bn->lo[k][b]), lo));
			_mm_storeu_ps(bn->hi[k][b], _mm_max_ps(_mm_loadu_ps(bn->hi[k][b]), hi));
#else
			for (int q = 0; q < 3; q++) {
				bn->lo[k][b][q] = MINF(bn->lo[k][b][q], p->lo[q]);
				bn->hi[k][b][q] = MAXF(bn->hi[k][b][q], p->hi[q]);
			}
#endif
		}
	}
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
	struct bvh_prim *base = bd->p + r->begin;
	struct bins bn;
	int nb = n < NBINS ? (int)n : NBINS;	/* small ranges: fewer bins */

	if (n <= 1)
		return 0;
	for (k = 0; k < 3; k++) {
		cmin[k] = FLT_MAX;
		cmax[k] = -FLT_MAX;
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < 3; k++) {
			float c = cen2(&base[i], k);

			cmin[k] = MINF(cmin[k], c);
			cmax[k] = MAXF(cmax[k], c);
		}
	}
	for (k = 0; k < 3; k++) {
		float ext = cmax[k] - cmin[k];

		scale[k] = ext > 0 ? (nb * (1 - 1e-6f)) / ext : 0;
	}
	if (n > BIG_RANGE) {
		/* large ranges: bin only the widest centroid axis (a third of
		 * the work where most of it is; the SAH still picks the plane) */
		int w = 0;

		for (k = 1; k < 3; k++)
			if (cmax[k] - cmin[k] > cmax[w] - cmin[w])
				w = k;
		for (k = 0; k < 3; k++)
			if (k != w)
				scale[k] = 0;
	}
	bins_fill(&bn, base, n, cmin, scale, nb);
	for (k = 0; k < 3; k++) {
		float right_area[NBINS];
		struct box acc, right_box[NBINS];
		uint32_t nr = 0, right_cnt[NBINS], nl = 0;

		if (scale[k] == 0)
			continue;
		box_empty(&acc);
		for (int b = nb - 1; b > 0; b--) {
			struct box bb;

			memcpy(bb.lo, bn.lo[k][b], sizeof(bb.lo));
			memcpy(bb.hi, bn.hi[k][b], sizeof(bb.hi));
			box_merge(&acc, &bb);
			nr += bn.cnt[k][b];
			right_area[b] = box_area(&acc);
			right_box[b] = acc;
			right_cnt[b] = nr;
		}
		box_empty(&acc);
		for (int b = 0; b < nb - 1; b++) {
			struct box bb;
			float cost;

			memcpy(bb.lo, bn.lo[k][b], sizeof(bb.lo));
			memcpy(bb.hi, bn.hi[k][b], sizeof(bb.hi));
			box_merge(&acc, &bb);
			nl += bn.cnt[k][b];
			if (nl == 0 || right_cnt[b + 1] == 0)
				continue;
			cost = box_area(&acc) * nl + right_area[b + 1] * right_cnt[b + 1];
			if (cost < best_cost) {
				best_cost = cost;
				best_axis = k;
				best_bin = b;
				bl_best = acc;
				br_best = right_box[b + 1];
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
			box_grow_prim(&l->bounds, &bd->p[i]);
		for (i = rr->begin; i < rr->end; i++)
			box_grow_prim(&rr->bounds, &bd->p[i]);
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
		uint32_t a = 0, b = n;

		while (a < b) {
			if (bin_of(cen2(&base[a], best_axis), cmin[best_axis], scale[best_axis], nb) <= best_bin) {
				a++;
			} else {
				struct bvh_prim t = base[a];

				base[a] = base[--b];
				base[b] = t;
			}
		}
		l->begin = r->begin;
		l->end = r->begin + a;
		rr->begin = r->begin + a;
		rr->end = r->end;
		l->bounds = bl_best;
		rr->bounds = br_best;
		l->final = rr->final = 0;
	}
	return 1;
}

static void set_child(struct bvh_node *nd, int s, const struct box *b, uint32_t child,
		      uint32_t count)
{
	for (int k = 0; k < 3; k++) {
		nd->lo[k][s] = pad_down(b->lo[k]);
		nd->hi[k][s] = pad_up(b->hi[k]);
	}
	nd->ref[s] = child << BVH_REF_SHIFT | count;
}

static void set_empty(struct bvh_node *nd, int s)
{
	for (int k = 0; k < 3; k++) {
		nd->lo[k][s] = FLT_MAX;
		nd->hi[k][s] = -FLT_MAX;
	}
	nd->ref[s] = BVH_EMPTY;
}

/* Reorder p[0, n) so that p[k] has the k-th smallest centroid on axis and
 * none before it is larger, none after it smaller (Hoare's quickselect). */
static void select_nth(struct bvh_prim *p, int64_t n, int64_t k, int axis)
{
	int64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		float pivot = cen2(&p[lo + (hi - lo) / 2], axis);
		int64_t i = lo, j = hi;

		while (i <= j) {
			while (cen2(&p[i], axis) < pivot)
				i++;
			while (cen2(&p[j], axis) > pivot)
				j--;
			if (i <= j) {
				struct bvh_prim t = p[i];

				p[i++] = p[j];
				p[j--] = t;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
}

/* Split r (more than one primitive) at its object median on the widest
 * centroid axis: each half holds at most ceil(n / 2) primitives. */
static void split_median(struct builder *bd, const struct range *r, struct range *l,
			 struct range *rr)
{
	uint32_t n = r->end - r->begin, i, mid = n / 2;
	struct bvh_prim *base = bd->p + r->begin;
	float cmin[3] = { FLT_MAX, FLT_MAX, FLT_MAX }, cmax[3] = { -FLT_MAX, -FLT_MAX, -FLT_MAX };
	int w = 0;

	for (i = 0; i < n; i++) {
		for (int k = 0; k < 3; k++) {
			cmin[k] = MINF(cmin[k], cen2(&base[i], k));
			cmax[k] = MAXF(cmax[k], cen2(&base[i], k));
		}
	}
	for (int k = 1; k < 3; k++)
		if (cmax[k] - cmin[k] > cmax[w] - cmin[w])
			w = k;
	select_nth(base, n, mid, w);
	l->begin = r->begin;
	l->end = r->begin + mid;
	rr->begin = r->begin + mid;
	rr->end = r->end;
	box_empty(&l->bounds);
	box_empty(&rr->bounds);
	for (i = l->begin; i < l->end; i++)
		box_grow_prim(&l->bounds, &bd->p[i]);
	for (i = rr->begin; i < rr->end; i++)
		box_grow_prim(&rr->bounds, &bd->p[i]);
	l->final = rr->final = 0;
}

/* A node to fill: node (an index in the builder's array; for a deferred
 * task, parent and slot say where the subtree hangs instead) over range r,
 * depth nodes below the root inclusive. */
struct task {
	uint32_t node, parent, slot, owner;
	unsigned depth;
	struct range r;
};

struct tasks {
	struct task *v;
	size_t n, cap;
};

static int tasks_push(struct tasks *t, const struct task *x)
{
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		struct task *nv;

		if (nc > SIZE_MAX / sizeof(*nv))
			return -1;
		nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		t->v = nv;
		t->cap = nc;
	}
	t->v[t->n++] = *x;
	return 0;
}

/* Below this depth the splits are object medians (see bvh.h): from there
 * every level halves the count, and 2^28 primitives need at most 26 more. */
#define MEDIAN_DEPTH (BVH_MAX_DEPTH - 32)
_Static_assert(BVH_MAX_DEPTH - MEDIAN_DEPTH > 28 - 3 + 1, "median levels cover 2^28 primitives");

/* Split t's range into up to BVH_WIDTH children (ch), largest area first. */
static int split_children(struct builder *bd, const struct task *t, struct range ch[BVH_WIDTH])
{
	int nch = 1, median = t->depth >= MEDIAN_DEPTH;

	ch[0] = t->r;
	while (nch < BVH_WIDTH) {
		int pick = -1;
		float best = -1;
		struct range a, b;

		for (int c = 0; c < nch; c++) {
			uint32_t cnt = ch[c].end - ch[c].begin;
			float key = median ? (float)cnt : box_area(&ch[c].bounds);

			if (!ch[c].final && cnt > (median ? BVH_LEAF_MAX : 1) && key > best) {
				best = key;
				pick = c;
			}
		}
		if (pick < 0)
			break;
		if (median) {
			split_median(bd, &ch[pick], &a, &b);
		} else if (!split_range(bd, &ch[pick], &a, &b)) {
			ch[pick].final = 1;
			continue;
		}
		ch[pick] = a;
		ch[nch++] = b;
	}
	return nch;
}

/*
 * Build the subtree of stack's tasks into bd. Inner children with at most
 * defer_max primitives go to *deferred (not allocated, parent and slot set)
 * when deferred is not NULL. Returns -1 when out of memory.
 */
static int build_tasks(struct builder *bd, struct tasks *stack, struct tasks *deferred,
		       uint32_t defer_max)
{
	while (stack->n) {
		struct task t = stack->v[--stack->n];
		struct range ch[BVH_WIDTH];
		struct bvh_node *nd;
		int nch;

		if (t.depth > bd->depth)
			bd->depth = t.depth;
		nch = split_children(bd, &t, ch);
		nd = &bd->nodes[t.node];
		if (nch == 1) {
			/* the root itself is a leaf */
			set_child(nd, 0, &ch[0].bounds, ch[0].begin, ch[0].end - ch[0].begin);
			for (int s = 1; s < BVH_WIDTH; s++)
				set_empty(nd, s);
			continue;
		}
		for (int c = 0; c < BVH_WIDTH; c++) {
			uint32_t cnt, child;
			struct task sub;

			if (c >= nch) {
				set_empty(&bd->nodes[t.node], c);
				continue;
			}
			cnt = ch[c].end - ch[c].begin;
			if (!ch[c].final && cnt <= BVH_LEAF_MAX) {
				/* small enough for a leaf: a node only if SAH splits it */
				struct range l, r;

				ch[c].final = t.depth + 1 >= MEDIAN_DEPTH ||
					      !split_range(bd, &ch[c], &l, &r);
			}
			if (ch[c].final || cnt == 1) {
				set_child(&bd->nodes[t.node], c, &ch[c].bounds, ch[c].begin, cnt);
				continue;
			}
			sub = (struct task){ 0, t.node, (uint32_t)c, 0, t.depth + 1, ch[c] };
			if (deferred && cnt <= defer_max) {
				/* box now, subtree later (the child index is set at the join) */
				set_child(&bd->nodes[t.node], c, &ch[c].bounds, BVH_EMPTY, 0);
				if (tasks_push(deferred, &sub))
					return -1;
				continue;
			}
			if (new_node(bd, &child))
				return -1;
			set_child(&bd->nodes[t.node], c, &ch[c].bounds, child, 0);
			sub.node = child;
			if (tasks_push(stack, &sub))
				return -1;
		}
	}
	return 0;
}

/* ---- the threaded part: deferred subtrees, biggest first */
#define PAR_MIN_PRIMS 100000	/* below this, one thread builds it all */
#define MAX_THREADS 16

struct worker {
	struct builder bd;
	struct tasks stack;
	struct tasks *jobs;
	atomic_size_t *next;
	int failed;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	for (;;) {
		size_t i = atomic_fetch_add(w->next, 1);
		struct task *job;

		if (i >= w->jobs->n)
			break;
		job = &w->jobs->v[i];
		if (new_node(&w->bd, &job->node)) {
			w->failed = 1;
			break;
		}
		job->owner = w->bd.id;
		w->stack.n = 0;
		if (tasks_push(&w->stack, job) || build_tasks(&w->bd, &w->stack, NULL, 0)) {
			w->failed = 1;
			break;
		}
	}
	return NULL;
}

static int cmp_task_size(const void *a, const void *b)
{
	const struct task *x = a, *y = b;
	uint32_t nx = x->r.end - x->r.begin, ny = y->r.end - y->r.begin;

	return nx > ny ? -1 : nx < ny;
}

/*
 * Build the deferred subtrees on nthreads threads (the caller's included),
 * then append their nodes to main's array and hang them where they belong.
 */
static int build_deferred(struct builder *main, struct tasks *jobs, int nthreads)
{
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	int started[MAX_THREADS] = { 0 }, rc = 0;
	atomic_size_t next;
	size_t total = main->nnodes, base[MAX_THREADS];

	qsort(jobs->v, jobs->n, sizeof(*jobs->v), cmp_task_size);
	atomic_init(&next, 0);
	for (int i = 0; i < nthreads; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].bd.p = main->p;
		w[i].bd.id = (uint32_t)i;
		w[i].jobs = jobs;
		w[i].next = &next;
	}
	for (int i = 1; i < nthreads; i++)
		started[i] = pthread_create(&tid[i], NULL, worker_run, &w[i]) == 0;
	worker_run(&w[0]);	/* the caller works too; a thread that did not start is no loss */
	for (int i = 1; i < nthreads; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	for (int i = 0; i < nthreads; i++) {
		rc |= w[i].failed;
		base[i] = total;
		total += w[i].bd.nnodes;
		if (w[i].bd.depth > main->depth)
			main->depth = w[i].bd.depth;
	}
	if (!rc && atomic_load(&next) < jobs->n)
		rc = 1;		/* cannot happen: the caller drains the queue */
	if (!rc && (total > UINT32_MAX || total > SIZE_MAX / sizeof(*main->nodes)))
		rc = 1;
	if (!rc) {
		struct bvh_node *nn = realloc(main->nodes, total * sizeof(*nn));

		if (!nn) {
			rc = 1;
		} else {
			main->nodes = nn;
			main->cap = total;
		}
	}
	for (int i = 0; i < nthreads && !rc; i++) {
		struct bvh_node *dst = main->nodes + base[i];

		memcpy(dst, w[i].bd.nodes, w[i].bd.nnodes * sizeof(*dst));
		for (size_t k = 0; k < w[i].bd.nnodes; k++)
			for (int s = 0; s < BVH_WIDTH; s++)
				if (bvh_ref_count(dst[k].ref[s]) == 0 && dst[k].ref[s] != BVH_EMPTY)
					dst[k].ref[s] += (uint32_t)base[i] << BVH_REF_SHIFT;
	}
	if (!rc) {
		for (size_t j = 0; j < jobs->n; j++) {
			const struct task *t = &jobs->v[j];

			main->nodes[t->parent].ref[t->slot] = ((uint32_t)base[t->owner] + t->node)
							       << BVH_REF_SHIFT;
		}
		main->nnodes = total;
	}
	for (int i = 0; i < nthreads; i++) {
		free(w[i].bd.nodes);
		free(w[i].stack.v);
	}
	return rc ? -1 : 0;
}

enum core_result bvh_build(struct bvh_prim *p, size_t n, int threads, struct bvh *out)
{
	struct builder bd = { 0 };
	struct tasks stack = { 0 }, jobs = { 0 };
	struct task root = { 0 };
	size_t i;

	if (n == 0 || n > (size_t)1 << (32 - BVH_REF_SHIFT))
		return CORE_EINVAL;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if (threads < 1 || n < PAR_MIN_PRIMS)
		threads = 1;
	bd.p = p;
	box_empty(&root.r.bounds);
	for (i = 0; i < n; i++)
		box_grow_prim(&root.r.bounds, &p[i]);
	root.r.begin = 0;
	root.r.end = (uint32_t)n;
	root.depth = 1;
	if (new_node(&bd, &root.node) || tasks_push(&stack, &root))
		goto out_nomem;
	/* with threads: the top levels here, subtrees of at most n / (4 threads)
	 * primitives deferred to the workers */
	if (build_tasks(&bd, &stack, threads > 1 ? &jobs : NULL,
			(uint32_t)(n / (4 * (size_t)threads))))
		goto out_nomem;
	if (jobs.n && build_deferred(&bd, &jobs, threads))
		goto out_nomem;
	free(stack.v);
	free(jobs.v);
	{
		struct bvh_node *shrunk = realloc(bd.nodes, bd.nnodes * sizeof(*shrunk));

		out->nodes = shrunk ? shrunk : bd.nodes;
	}
	out->nnodes = bd.nnodes;
	out->depth = bd.depth;
	out->lo = v3(pad_down(root.r.bounds.lo[0]), pad_down(root.r.bounds.lo[1]),
		     pad_down(root.r.bounds.lo[2]));
	out->hi = v3(pad_up(root.r.bounds.hi[0]), pad_up(root.r.bounds.hi[1]),
		     pad_up(root.r.bounds.hi[2]));
	return CORE_OK;

out_nomem:
	free(stack.v);
	free(jobs.v);
	free(bd.nodes);
	return CORE_ENOMEM;
}

void bvh_release(struct bvh *b)
{
	free(b->nodes);
	b->nodes = NULL;
	b->nnodes = 0;
}
