/* bvh.c - top-down construction of an 8-wide BVH.
 *
 * A node's primitive range is split in two by the binned surface area
 * heuristic (bvh_split.c), then the child with the largest
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

#include "bigmem.h"
#include "bvh_split.h"

struct builder {
	struct bvh_prim *p;		/* shared by the workers: each owns its ranges */
	struct bvh_node *nodes;
	size_t nnodes, cap;
	unsigned depth;		/* deepest task seen */
	uint32_t id;		/* worker number */
};

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

/* A copy of the n nodes at src on a cache-line boundary (an allocation
 * from malloc starts 16 bytes into a line, so every other 224-byte node
 * would span five lines instead of four), or NULL when out of memory. */
static struct bvh_node *nodes_aligned(const struct bvh_node *src, size_t n, size_t cap)
{
	size_t bytes = cap * sizeof(*src);
	struct bvh_node *dst;

	if (cap > SIZE_MAX / sizeof(*src) - 1)
		return NULL;
	dst = bigmem_alloc(bytes, 64);
	if (dst && n)
		memcpy(dst, src, n * sizeof(*src));
	return dst;
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
			bvh_split_median(bd->p, &ch[pick], &a, &b);
		} else if (!bvh_split_sah(bd->p, &ch[pick], &a, &b)) {
			ch[pick].final = 1;
			continue;
		}
		ch[pick] = a;
		ch[nch++] = b;
	}
	return nch;
}

/*
 * A node's children into its slots by descending surface area (insertion,
 * stable): an any-hit walk meets the children it crosses in slot order
 * (raycast_kern.h), and the larger is likelier to hold a hit. Level's
 * any-hit rays 1.05-1.09x (interleaved pairs, 2026-11-28); closest hits,
 * which sort by distance, and bunny's and bunny_sub4's any hits unchanged.
 */
static void slots_by_area(struct range *ch, int nch)
{
	for (int i = 1; i < nch; i++) {
		struct range x = ch[i];
		float a = box_area(&x.bounds);
		int j = i;

		for (; j > 0 && box_area(&ch[j - 1].bounds) < a; j--)
			ch[j] = ch[j - 1];
		ch[j] = x;
	}
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
		slots_by_area(ch, nch);
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
					      !bvh_split_sah(bd->p, &ch[c], &l, &r);
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
		struct bvh_node *nn = nodes_aligned(main->nodes, main->nnodes, total);

		if (!nn) {
			rc = 1;
		} else {
			free(main->nodes);
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
	if (!jobs.n) {
		/* one thread: the growing array to an exact, aligned one
		 * (build_deferred already made its merged array so) */
		struct bvh_node *al = nodes_aligned(bd.nodes, bd.nnodes, bd.nnodes);

		if (al) {
			free(bd.nodes);
			bd.nodes = al;
		} else {
			struct bvh_node *shrunk = realloc(bd.nodes, bd.nnodes * sizeof(*shrunk));

			if (shrunk)
				bd.nodes = shrunk;	/* unaligned but exact: still correct */
		}
	}
	out->nodes = bd.nodes;
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
