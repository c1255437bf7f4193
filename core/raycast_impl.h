/* raycast_impl.h - what the ray query shares between raycast.c (setup,
 * collection, the exact fallback, dispatch) and its traversal kernels
 * (raycast_scalar.c, raycast_sse2.c, raycast_avx2.c, raycast_avx512.c, all
 * one template: raycast_kern.h). Internal to core/ and the unit tests.
 */
#ifndef CORE_RAYCAST_IMPL_H
#define CORE_RAYCAST_IMPL_H

#include "mesh_impl.h"

/* Rounding bound factor. With u = 2^-24 (a float's unit roundoff) and s, T
 * as in raycast_kern.h, a segment end's local coordinate errs, to first
 * order, by at most 9u (s P + T): its evaluation 4u (z: a product goes
 * through one multiplication and three additions; u and v: 3u), the
 * matrix's rounding to float 1u (each entry), and the end's own error up to
 * 4u P per coordinate (rq_init: j = o - center rounds once, u P; k = j + L d
 * adds j's error, the product's 2u P (|L d| <= 2P) and the sum's u P).
 * 10u leaves room for the second-order terms, the matrix's double
 * arithmetic (under 2^-29 relative: mesh.c's sliver limit bounds the
 * cancellation in n_k) and the float evaluation of the bound (six
 * roundings). Each lane that the bound leaves undecided costs an exact test
 * and a fetch of its vertices (on the harness's bunny_sub4, 0.35 such lanes
 * per closest-hit ray at 16u, 0.23 at 10u). */
#define RC_GAMMA 0x1.4p-21f
#define RC_EPS3 0x1.8p-23f	/* 3 unit roundoffs, for products */
/* Absolute slack for underflow: a float operation whose result is subnormal
 * or zero errs by up to 2^-150 whatever its relative bound says; no bound
 * below sums more than a few hundred of them. */
#define RC_TINY 0x1p-140f
#define RC_BOX_SLACK (1.0f + 0x1p-20f)
/* Entries shrunk by as much: an entry rounds up by at most three roundings
 * (a subtraction, 1/d and the product), so a box entered exactly at the
 * ray's limit (a hit exactly at max_distance, on a face of its box) is
 * still met. */
#define RC_NEAR_SLACK (1.0f - 0x1p-20f)

/* A ray as the kernels read it: 192 bytes, whose first two cache lines hold
 * all that a leaf test reads (a ray stream's leaves meet rays in any order,
 * raycast_stream.h). */
struct rq {
	/* segment ends relative to center, by dominant axis k of a triangle:
	 * jk[c][k] is coordinate (k+1+c)%3 of j for c < 3, of k for c >= 3
	 * (so a lane picks its (p_i, p_j, p_k) by k; lane 3 unused) */
	float jk[6][4] __attribute__((aligned(64)));
	float P;		/* max |coordinate| of j and k */
	float L;		/* clip length: tmax or the exit from the root box */
	int cull, flip;
	/* the ray as given (mesh space): origin ov[0..2], direction d */
	float ov[4];		/* lane 3: unused (set in one store) */
	vec3 d;
	float tmax;		/* the caller's limit */
	float inv[4];		/* lane 3: unused */
	int nrow[4], frow[4];	/* rows of a node's lo/hi (float[6][8]) nearest / farthest */
};

_Static_assert(sizeof(struct rq) == 192, "a ray query is three cache lines");

static inline vec3 rq_origin(const struct rq *q)
{
	return v3(q->ov[0], q->ov[1], q->ov[2]);
}

struct cand {
	float t, u, v;
	uint32_t tri;		/* as uploaded */
	uint32_t rec;		/* primitive (leaf order), for the normal */
	int front;
};

_Static_assert(sizeof(struct cand) <= MESH_CAND_BYTES, "MESH_CAND_BYTES (mesh.h) is too small");

/* The answers' order: nearer first, equal distances by triangle index. */
static inline int cand_less(const struct cand *a, const struct cand *b)
{
	return a->t < b->t || (a->t == b->t && a->tri < b->tri);
}

struct collector {
	enum hit_mode mode;
	struct cand best;	/* closest / any */
	int found;
	struct cand *all;	/* HIT_ALL: a max-heap of the max_hits nearest */
	uint32_t cap, n;
	uint32_t total;
};

/*
 * A leaf kernel's verdicts for lanes first .. first+LANES-1: hit (bit set:
 * a certain hit, t/u/v[lane] and the front bit hold it) and slow (bit set:
 * the float test could not decide; the exact test decides). Feeds the
 * collector; returns 1 when a HIT_ANY query is answered.
 */
int rc_lanes(const struct mesh *m, const struct rq *q, struct collector *cl, uint32_t first,
	     unsigned hit, unsigned slow, unsigned front, const float *t, const float *u,
	     const float *v);
/*
 * rc_lanes for hit lanes that no undecided lane can overtake (a closest
 * query's pass without slow lanes; an any query's first hit when no slow
 * lane comes before it): their least (t, triangle) against the best so far.
 * u and v hold U and V, d the denominator: the winner's barycentrics are
 * U / d and V / d, the same divisions rc_lanes' callers make per lane.
 */
static inline void rc_decided(const struct mesh *m, struct collector *cl, uint32_t first,
			      unsigned hit, unsigned front, const float *t, const float *u,
			      const float *v, const float *d)
{
	int l = __builtin_ctz(hit);
	struct cand c = { .t = t[l], .tri = prim_id(m, first + (uint32_t)l) >> PRIM_SHIFT };

	for (hit &= hit - 1; hit; hit &= hit - 1) {
		int l2 = __builtin_ctz(hit);
		struct cand c2 = { .t = t[l2], .tri = prim_id(m, first + (uint32_t)l2) >> PRIM_SHIFT };

		if (cand_less(&c2, &c)) {
			l = l2;
			c = c2;
		}
	}
	if (cl->found && !cand_less(&c, &cl->best))
		return;
	c.u = u[l] / d[l];
	c.v = v[l] / d[l];
	c.rec = first + (uint32_t)l;
	c.front = (int)(front >> l & 1);
	cl->best = c;
	cl->found = 1;
}

/* Forget what the collector holds (the full-scan fallback starts over). */
void rc_collector_reset(struct collector *cl);

/* The kernels: walk m's BVH for q, feeding cl. Same answers from each. */
void rc_traverse_scalar(const struct mesh *m, const struct rq *q, struct collector *cl);
void rc_traverse_sse2(const struct mesh *m, const struct rq *q, struct collector *cl);
void rc_traverse_avx2(const struct mesh *m, const struct rq *q, struct collector *cl);
void rc_traverse_avx512(const struct mesh *m, const struct rq *q, struct collector *cl);

/* The kernels for q[0..n) and cl[0..n), one query after another: the
 * answers of rc_traverse_* on each pair, without a call per query. */
void rc_traverse_seq_scalar(const struct mesh *m, const struct rq *q, struct collector *cl,
			    size_t n);
void rc_traverse_seq_sse2(const struct mesh *m, const struct rq *q, struct collector *cl,
			  size_t n);
void rc_traverse_seq_avx2(const struct mesh *m, const struct rq *q, struct collector *cl,
			  size_t n);
void rc_traverse_seq_avx512(const struct mesh *m, const struct rq *q, struct collector *cl,
			    size_t n);

/*
 * Walks interleaved by rc_traverse_many_*: a query's next node or leaf is
 * prefetched, then the other walks take a step each before it is read.
 * Measured (interleaved pairs, 65536-ray batches against one ray at a time,
 * AVX-512 kernel): 4 walks 1.27x closest on level, 8 walks 1.08x more, 12
 * and 16 no better than 8.
 */
#define RC_WALKS 8
/* The kernels for q[0..n) and cl[0..n): the answers of rc_traverse_* on
 * each pair, the walks interleaved. */
void rc_traverse_many_scalar(const struct mesh *m, const struct rq *q, struct collector *cl,
			     size_t n);
void rc_traverse_many_sse2(const struct mesh *m, const struct rq *q, struct collector *cl,
			   size_t n);
void rc_traverse_many_avx2(const struct mesh *m, const struct rq *q, struct collector *cl,
			   size_t n);
void rc_traverse_many_avx512(const struct mesh *m, const struct rq *q, struct collector *cl,
			     size_t n);

/*
 * Ray streams (raycast_stream.h, the AVX-512 kernel only): a batch's rays
 * walked through the BVH together, on meshes that fit the caches. Measured
 * on the harness's bunny (3.7 k triangles, 0.26 MB), 65 536-ray batches
 * against one walk after another: see mesh_raycast_batch_isa for where it
 * is chosen and docs/performance-log.md for the figures.
 */
#define RC_STREAM_RAYS 16384	/* rays in one stream at most */
/* the lists' arena, in entries (an id and a distance each): on the
 * harness's meshes and the bunny subdivided to 17 MB, a stream of 16 384
 * closest queries peaked at 2.4 entries a ray, one of 16 384 any queries
 * at 11.2 (a stream of any queries holds 8 192) */
#define RC_STREAM_ARENA (16u * 8192)
#define RC_STREAM_STACK (BVH_MAX_DEPTH * BVH_WIDTH + 8)

/* A stream's copy of a ray, as a node test reads it: origin, inverse
 * direction and the closest hit so far (-1: an any query answered). */
struct rc_stream_ray {
	float o[3], inv[3], tc, pad;
} __attribute__((aligned(32)));

/* A list waiting: ref's node or leaf, len rays from off in the arena, the
 * octant whose order it keeps (8: slot order). */
struct rc_stream_entry {
	uint32_t ref, off, len, oct;
};

/* A stream's room (raycast.c keeps one a thread). */
struct rc_stream {
	struct rc_stream_ray *ray;	/* RC_STREAM_RAYS */
	uint32_t *id;			/* the arena: cap ids and entry distances */
	float *tn;
	size_t cap;
	struct rc_stream_entry *stack;	/* RC_STREAM_STACK */
};

/* For the tests: the arena entries this thread's streams may use from now
 * on (0: RC_STREAM_ARENA), so that lists outgrow it and rays walk alone. */
void rc_stream_arena_limit(size_t entries);

/* Walk q[0..n) and cl[0..n) (n <= RC_STREAM_RAYS) as one stream in x: the
 * answers of rc_traverse_avx512 on each pair. */
void rc_stream_avx512(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n,
		      struct rc_stream *x);

enum rc_isa { RC_ISA_AUTO, RC_ISA_SCALAR, RC_ISA_SSE2, RC_ISA_AVX2, RC_ISA_AVX512 };

/* 1 when this CPU runs isa's kernel (AUTO and SCALAR: always). */
int rc_isa_supported(enum rc_isa isa);
/* mesh_raycast with a chosen kernel (the tests compare them); isa must be
 * supported. mesh_raycast is this with RC_ISA_AUTO: the fastest supported. */
enum core_result mesh_raycast_isa(const struct mesh *m, const struct ray *ray,
				  const struct query_opts *opts, struct hit *hits,
				  uint32_t *nhits, uint32_t *total, enum rc_isa isa);
/* mesh_raycast_batch with a chosen kernel and, walks 1, one walk at a time
 * (rc_traverse_seq_*), RC_WALKS walks interleaved, or RC_WALK_STREAM ray
 * streams (isa AVX-512 only) whatever the mesh's and the batch's size;
 * walks 0: as mesh_raycast_batch chooses. */
#define RC_WALK_STREAM (-1)
enum core_result mesh_raycast_batch_isa(const struct mesh *m, const struct ray *rays, size_t n,
					const struct query_opts *opts, struct hit *hits,
					uint32_t *nhits, enum core_result *res, enum rc_isa isa,
					int walks);

#endif
