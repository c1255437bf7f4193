/* raycast_kern.h - the BVH traversal and the float leaf test, written once
 * over a vector type and compiled per instruction set: raycast_scalar.c (one
 * lane), raycast_sse2.c (four), raycast_avx2.c (eight; raycast_avx512.c
 * builds it again for AVX-512VL). Every lane performs
 * the same float operations in the same order as every other
 * instantiation, so all kernels give bit-identical answers.
 *
 * The includer defines: KFN (function attributes), LANES (leaf lanes, a
 * multiple of PRIM_LANES or 1), NLANES (node lanes, dividing BVH_WIDTH),
 * TRAVERSE, TRAVERSE_SEQ and TRAVERSE_MANY (the functions' names; with
 * TRAVERSE_STREAM, STREAM too: raycast_stream.h, AVX-512 only), the
 * types V (LANES floats), M (LANES masks), VI (LANES ints), NV (NLANES
 * floats), NM (NLANES masks) and the operations used below (V_*, M_*, I_*,
 * N_*).
 *
 * The leaf test (the float half of the watertight test; raycast.c has the
 * derivation): the segment j -> k has local coordinates (u, v, z) at each
 * end, and the line crosses the triangle where the three 2x2 determinants
 *   U = zj uk - zk uj,  V = zj vk - zk vj,  W = (zj - zk) - U - V
 * share a sign. Each quantity carries a bound on its rounding error derived
 * from the matrix's row norms and the size of the coordinates; a lane whose
 * signs are all certain is answered in float, any other lane (and any lane
 * where a value overflowed) goes to the exact test.
 */

#include <stddef.h>
#include <string.h>

struct kern_stack {
	uint32_t child, count;
	float tn, tf;
};

/* The ray as the node test reads it, copied out of struct rq once per
 * query: locals the compiler may keep in registers across the leaf calls. */
struct kern_ray {
	NV o[3], inv[3];
	ptrdiff_t nrow[3], frow[3];	/* in floats: the rows' offsets in a node */
};

/* Entry and exit distances of the children of nd (exits padded by
 * RC_BOX_SLACK, entries shrunk by RC_NEAR_SLACK); returns the bits of those
 * met with tnear <= tcur. Each pad multiplies the greatest entry or the
 * least exit once: rounding is monotonic, so this equals the greatest of
 * the shrunk entries and the least of the padded exits. */
KFN static inline unsigned kern_node(const struct bvh_node *nd, const struct kern_ray *kr,
				     float tcur, float tn[BVH_WIDTH], float tf[BVH_WIDTH])
{
	const float *rows = &nd->lo[0][0];
	unsigned bits = 0;

	for (int c = 0; c < BVH_WIDTH; c += NLANES) {
		NV tnear = N_SET1(0), tfar;

		for (int a = 0; a < 3; a++) {
			NV n = N_LOAD(rows + kr->nrow[a] + c);
			NV f = N_MUL(N_SUB(N_LOAD(rows + kr->frow[a] + c), kr->o[a]),
				     kr->inv[a]);

			tnear = N_MAX(tnear, N_MUL(N_SUB(n, kr->o[a]), kr->inv[a]));
			tfar = a ? N_MIN(tfar, f) : f;
		}
		tfar = N_MIN(N_SET1(tcur), N_MUL(tfar, N_SET1(RC_BOX_SLACK)));
		tnear = N_MUL(tnear, N_SET1(RC_NEAR_SLACK));
		N_STORE(tn + c, tnear);
		N_STORE(tf + c, tfar);
		bits |= (unsigned)N_BITS(N_LE(tnear, tfar)) << c;
	}
	return bits;
}

/*
 * Test the primitives first .. first+count-1 (one leaf, count <=
 * BVH_LEAF_MAX) against q. [tleaf, tlimit] only allows an early miss for a
 * plane crossing certainly outside it: before the leaf's box, or beyond its
 * exit or the closest hit so far (a hit on the triangle lies in the leaf's
 * box). Returns 1 when a HIT_ANY query is answered. Inlined into the
 * traversal: a call spilled the ray's vectors around every leaf (callgrind:
 * 2 % of the instructions on bunny).
 */
KFN static inline __attribute__((always_inline)) int kern_leaf(const struct mesh *m,
								const struct rq *q,
								struct collector *cl,
								uint32_t first, uint32_t count,
								float tleaf, float tlimit)
{
	uint32_t end = first + count;
	uint32_t g0 = LANES == 1 ? first : first / PRIM_LANES * PRIM_LANES;
	/* the leaf's lanes from g0 on (count <= BVH_LEAF_MAX): bit l is
	 * primitive g0 + l; masks, not branches, for where it starts and ends */
	uint32_t span = ((1u << count) - 1) << (first - g0);
	V P = V_SET1(q->P), L = V_SET1(q->L), one = V_SET1(1.0f), two = V_SET1(2.0f);
	V gamma = V_SET1(RC_GAMMA), eps3 = V_SET1(RC_EPS3), tiny = V_SET1(RC_TINY);
	V zero = V_SET1(0.0f), inf = V_SET1(INFINITY), slack = V_SET1(RC_BOX_SLACK);
	V vtleaf = V_SET1(tleaf), vtlimit = V_SET1(tlimit);
	M flip = q->flip ? M_ALL : M_NONE;

	for (; g0 < end; g0 += LANES, span >>= LANES) {
		VI id = I_LOAD_ID(m, g0);
		M exact = I_FLAG(id, PRIM_EXACT), negnk = I_FLAG(id, PRIM_NEG_NK);
		V r6 = V_LOAD_ROW(m, g0, 6), r7 = V_LOAD_ROW(m, g0, 7), r8 = V_LOAD_ROW(m, g0, 8);
		V r0, r1, r2, r3, r4, r5;
		V J0, J1, J2, K0, K1, K2, zj, zk, s2, ez, den, aj, ak, ad, uj, uk, vj, vk, U, Vv, W;
		V s, T, e, bU, bV, bW;
		M same, far, m_slow, rest, beyond, before, outside, inside, nearp, fin, front;
		unsigned valid = span & ((1u << LANES) - 1), hit, slow;

		I_GATHER(q, id, J0, J1, J2, K0, K1, K2);
		zj = V_ADD(V_ADD(V_ADD(V_MUL(r6, J0), V_MUL(r7, J1)), J2), r8);
		zk = V_ADD(V_ADD(V_ADD(V_MUL(r6, K0), V_MUL(r7, K1)), K2), r8);
		s2 = V_ADD(V_ADD(V_ABS(r6), V_ABS(r7)), one);
		ez = V_ADD(V_MUL(gamma, V_ADD(V_MUL(s2, P), V_ABS(r8))), tiny);
		aj = V_ABS(zj);
		ak = V_ABS(zk);
		/* same side of the plane: a miss unless an end is within rounding of it */
		same = M_AND(M_NOT(M_XOR(M_GT(zj, zero), M_GT(zk, zero))),
			     M_AND(M_NE(zj, zero), M_NE(zk, zero)));
		far = M_AND(M_GT(aj, ez), M_GT(ak, ez));
		/* rest: lanes still open; a lane leaving it without joining m_slow
		 * is a certain miss */
		m_slow = M_ANDNOT(far, same);
		rest = M_NOT(same);
		/* an overflowed or NaN value decides nothing: exact test */
		fin = M_AND(M_AND(M_LT(aj, inf), M_LT(ak, inf)), M_LT(ez, inf));
		den = V_SUB(zj, zk);
		ad = V_ABS(den);
		/* the crossing's true fraction lies in [(|zj|-ez) / (|den|+2ez),
		 * (|zj|+ez) / (|den|-2ez)]: certainly beyond the leaf or the closest
		 * hit, or certainly before the leaf's box */
		beyond = M_GT(V_MUL(V_SUB(aj, ez), L),
			      V_MUL(V_MUL(vtlimit, V_ADD(ad, V_MUL(two, ez))), slack));
		before = M_AND(M_GT(ad, V_MUL(V_SET1(4.0f), ez)),
			       M_LT(V_MUL(V_MUL(V_ADD(aj, ez), L), slack),
				    V_MUL(vtleaf, V_SUB(ad, V_MUL(two, ez)))));
		rest = M_ANDNOT(M_OR(beyond, before), rest);
		if (!((unsigned)M_BITS(M_OR(M_OR(exact, M_NOT(fin)), M_OR(rest, m_slow))) & valid))
			continue;	/* every lane a certain miss already */
		/* the u and v rows only now: loaded before the test above, the
		 * compiler kept half of them on the stack across it */
		r0 = V_LOAD_ROW(m, g0, 0);
		r1 = V_LOAD_ROW(m, g0, 1);
		r2 = V_LOAD_ROW(m, g0, 2);
		r3 = V_LOAD_ROW(m, g0, 3);
		r4 = V_LOAD_ROW(m, g0, 4);
		r5 = V_LOAD_ROW(m, g0, 5);
		uj = V_ADD(V_ADD(V_MUL(r0, J0), V_MUL(r1, J1)), r2);
		uk = V_ADD(V_ADD(V_MUL(r0, K0), V_MUL(r1, K1)), r2);
		vj = V_ADD(V_ADD(V_MUL(r3, J0), V_MUL(r4, J1)), r5);
		vk = V_ADD(V_ADD(V_MUL(r3, K0), V_MUL(r4, K1)), r5);
		U = V_SUB(V_MUL(zj, uk), V_MUL(zk, uj));
		Vv = V_SUB(V_MUL(zj, vk), V_MUL(zk, vj));
		W = V_SUB(V_SUB(den, U), Vv);
		s = V_MAX(V_MAX(V_ADD(V_ABS(r0), V_ABS(r1)), V_ADD(V_ABS(r3), V_ABS(r4))), s2);
		T = V_MAX(V_MAX(V_ABS(r2), V_ABS(r5)), V_ABS(r8));
		e = V_ADD(V_MUL(gamma, V_ADD(V_MUL(s, P), T)), tiny);
		bU = V_ADD(V_ADD(V_MUL(e, V_ADD(V_ADD(V_ADD(V_ADD(aj, ak), V_ABS(uj)), V_ABS(uk)),
						V_MUL(two, e))),
				 V_MUL(eps3, V_ADD(V_ABS(V_MUL(zj, uk)), V_ABS(V_MUL(zk, uj))))), tiny);
		bV = V_ADD(V_ADD(V_MUL(e, V_ADD(V_ADD(V_ADD(V_ADD(aj, ak), V_ABS(vj)), V_ABS(vk)),
						V_MUL(two, e))),
				 V_MUL(eps3, V_ADD(V_ABS(V_MUL(zj, vk)), V_ABS(V_MUL(zk, vj))))), tiny);
		bW = V_ADD(V_ADD(V_ADD(V_MUL(two, e), bU), bV),
			   V_MUL(eps3, V_ADD(V_ADD(V_ADD(aj, ak), V_ABS(U)), V_ABS(Vv))));
		outside = M_AND(M_OR(M_OR(M_LT(U, V_NEG(bU)), M_LT(Vv, V_NEG(bV))), M_LT(W, V_NEG(bW))),
				M_OR(M_OR(M_GT(U, bU), M_GT(Vv, bV)), M_GT(W, bW)));
		rest = M_ANDNOT(outside, rest);
		inside = M_OR(M_AND(M_AND(M_GT(U, bU), M_GT(Vv, bV)), M_GT(W, bW)),
			      M_AND(M_AND(M_LT(U, V_NEG(bU)), M_LT(Vv, V_NEG(bV))), M_LT(W, V_NEG(bW))));
		nearp = M_OR(M_LE(aj, ez), M_LE(ak, ez));
		m_slow = M_OR(m_slow, M_AND(rest, M_OR(M_NOT(inside), nearp)));
		rest = M_AND(rest, M_ANDNOT(nearp, inside));
		front = M_XOR(M_XOR(M_GT(den, zero), negnk), flip);
		if (q->cull)
			rest = M_AND(rest, front);	/* back faces: misses */
		fin = M_AND(fin, M_AND(M_LT(bW, inf), M_LT(V_ABS(W), inf)));
		slow = (unsigned)M_BITS(M_OR(exact, M_OR(M_NOT(fin), m_slow))) & valid;
		hit = (unsigned)M_BITS(M_ANDNOT(exact, M_AND(fin, rest))) & valid;
		if (hit | slow) {
			float t[LANES], u[LANES], v[LANES];

			/* a certain crossing lies inside the segment and inside the
			 * leaf's box, which the ray enters no nearer than tleaf:
			 * clamp the rounded t to both (a t rounded below the entry
			 * could win over a hit the walk met first, and a closest
			 * answer would depend on the order leaves are met) */
			V_STORE(t, V_MAX(V_MIN(V_MUL(V_DIV(zj, den), L), L), vtleaf));
			/* closest with every lane decided in float: only the
			 * pass's nearest hit can change the answer; any with no
			 * undecided lane before the first hit: that hit answers */
			if (cl->mode == HIT_CLOSEST ? !slow :
			    cl->mode == HIT_ANY && hit && !(slow & ((hit & -hit) - 1))) {
				float d[LANES];
				int done = cl->mode == HIT_ANY;

				V_STORE(u, U);
				V_STORE(v, Vv);
				V_STORE(d, den);
				rc_decided(m, cl, g0, done ? hit & -hit : hit,
					   (unsigned)M_BITS(front), t, u, v, d);
				if (done)
					return 1;
				continue;
			}
			V_STORE(u, V_DIV(U, den));
			V_STORE(v, V_DIV(Vv, den));
			if (rc_lanes(m, q, cl, g0, hit, slow, (unsigned)M_BITS(front), t, u, v))
				return 1;
		}
	}
	return 0;
}

/* The stack entry for child slot c of nd, prefetching the lines of its
 * node or of its leaf's primitives: they are read soon. */
KFN static inline struct kern_stack kern_child(const struct mesh *m, const struct bvh_node *nd,
					       int c, const float *tn, const float *tf)
{
	uint32_t ref = nd->ref[c];

	if (!bvh_ref_count(ref)) {
		const char *p = (const char *)&m->bvh.nodes[bvh_ref_index(ref)];

		/* the whole node: four or five lines */
		__builtin_prefetch(p);
		__builtin_prefetch(p + 64);
		__builtin_prefetch(p + 128);
		__builtin_prefetch(p + 192);
		__builtin_prefetch(p + sizeof(*nd) - 1);
	} else {
		/* the leaf's primitive blocks: two or three (at most 8 lines;
		 * a prefetch past the leaf is harmless) */
		uint32_t first = bvh_ref_index(ref);
		const char *p = (const char *)&m->prims[first / PRIM_LANES];

		__builtin_prefetch(p);
		__builtin_prefetch(p + 64);
		__builtin_prefetch(p + 128);
		__builtin_prefetch(p + 192);
		__builtin_prefetch(p + 256);
		__builtin_prefetch(p + 319);
		if (first % PRIM_LANES + bvh_ref_count(ref) > 2 * PRIM_LANES) {
			__builtin_prefetch(p + 384);
			__builtin_prefetch(p + 479);
		}
	}
	return (struct kern_stack){ bvh_ref_index(ref), bvh_ref_count(ref), tn[c], tf[c] };
}

/* The entry for child slot c of nd, visited next: no prefetch, its loads
 * come at once. */
KFN static inline struct kern_stack kern_next(const struct bvh_node *nd, int c, const float *tn,
					      const float *tf)
{
	uint32_t ref = nd->ref[c];

	return (struct kern_stack){ bvh_ref_index(ref), bvh_ref_count(ref), tn[c], tf[c] };
}

/*
 * Visit node nd of a walk whose closest hit so far is at tcur: the children
 * met wait on the stack (closest and all: sorted far to near; any: in slot
 * order, unsorted, since the first hit ends the walk) and the nearest
 * becomes *cur, read at once (ahead 0) or after other walks' steps (ahead
 * 1: prefetched, as the waiting ones are). Returns 1 when *cur is that
 * child, 0 when no child is met (the walk pops next), -1 when the stack
 * might overflow.
 */
KFN static inline __attribute__((always_inline)) int
kern_visit(const struct mesh *m, const struct bvh_node *nd, const struct kern_ray *kr, float tcur,
	   int any, int ahead, struct kern_stack *stack, int *sp, struct kern_stack *cur)
{
	float tn[BVH_WIDTH], tf[BVH_WIDTH];
	unsigned mask = kern_node(nd, kr, tcur, tn, tf);
	int c, c1, near;

	if (!mask)
		return 0;
	c = __builtin_ctz(mask);
	mask &= mask - 1;
	if (mask) {
		if (*sp + BVH_WIDTH > BVH_STACK_MAX)
			return -1;
		if (any) {
			/* the rest pushed from the last slot, so popped in slot
			 * order: a walk meets the children in slot order, as a ray
			 * stream does (raycast_stream.h), and both answer alike */
			while (mask) {
				c1 = 31 - __builtin_clz(mask);
				mask &= ~(1u << c1);
				stack[(*sp)++] = kern_child(m, nd, c1, tn, tf);
			}
		} else if (c1 = __builtin_ctz(mask), mask &= mask - 1, !mask) {
			/* two: the farther waits (equal: the later slot) */
			near = tn[c1] < tn[c] ? c1 : c;
			stack[(*sp)++] = kern_child(m, nd, near == c ? c1 : c, tn, tf);
			c = near;
		} else {
			/* three or more: keys of distance bits and slot, sorted
			 * far to near onto the stack */
			uint32_t key[BVH_WIDTH];
			int no = 0;

			mask |= 1u << c | 1u << c1;
			while (mask) {
				uint32_t bits;
				int p;

				c = __builtin_ctz(mask);
				mask &= mask - 1;
				/* tn >= 0: its bits order like its value */
				memcpy(&bits, &tn[c], sizeof(bits));
				bits = (bits & ~7u) | (uint32_t)c;
				for (p = no++; p > 0 && key[p - 1] < bits; p--)
					key[p] = key[p - 1];
				key[p] = bits;
			}
			for (int i = 0; i < no - 1; i++)
				stack[(*sp)++] = kern_child(m, nd, (int)(key[i] & 7), tn, tf);
			c = (int)(key[no - 1] & 7);
		}
	}
	*cur = ahead ? kern_child(m, nd, c, tn, tf) : kern_next(nd, c, tn, tf);
	return 1;
}

/* Every primitive against q (a walk whose stack might overflow starts over
 * this way, so that the answer is never cut short). */
KFN static inline void kern_scan(const struct mesh *m, const struct rq *q, struct collector *cl)
{
	rc_collector_reset(cl);
	for (uint32_t f = 0; f < m->nprim; f += BVH_LEAF_MAX)
		if (kern_leaf(m, q, cl, f, m->nprim - f < BVH_LEAF_MAX ? (uint32_t)(m->nprim - f) :
					   BVH_LEAF_MAX, 0, q->L))
			return;
}

/* Test leaf cur; 1 when a HIT_ANY query is answered. Closest: *tcur
 * shrinks to the closest hit so far. */
KFN static inline __attribute__((always_inline)) int
kern_leaf_step(const struct mesh *m, const struct rq *q, struct collector *cl,
	       const struct kern_stack *cur, float *tcur)
{
	if (kern_leaf(m, q, cl, cur->child, cur->count, cur->tn, cur->tf < *tcur ? cur->tf : *tcur))
		return 1;
	if (cl->mode == HIT_CLOSEST && cl->found && cl->best.t < *tcur)
		*tcur = cl->best.t;
	return 0;
}

/* The next waiting entry that may still hold a hit nearer than tcur, into
 * *cur; 0 when none is left (the walk has ended). */
KFN static inline __attribute__((always_inline)) int
kern_pop(const struct kern_stack *stack, int *sp, float tcur, struct kern_stack *cur)
{
	do {
		if (!*sp)
			return 0;
		*cur = stack[--*sp];
	} while (cur->tn > tcur);
	return 1;
}

KFN static inline void kern_ray_init(struct kern_ray *kr, const struct rq *q)
{
	for (int a = 0; a < 3; a++) {
		kr->o[a] = N_SET1(q->ov[a]);
		kr->inv[a] = N_SET1(q->inv[a]);
		kr->nrow[a] = (ptrdiff_t)q->nrow[a] * BVH_WIDTH;
		kr->frow[a] = (ptrdiff_t)q->frow[a] * BVH_WIDTH;
	}
}

/*
 * Walk the subtree at cur (a node, or a leaf) for a query whose closest hit
 * so far is at tcur, leaves feeding cl: nearest child first (kern_visit),
 * the others waiting on the stack. Returns 1 when a HIT_ANY query is
 * answered. The stack cannot fill (bvh.h bounds the depth); if it ever did,
 * the query starts over as a scan of every primitive.
 */
KFN static inline __attribute__((always_inline)) int kern_walk_at(const struct mesh *m,
								   const struct rq *q,
								   struct collector *cl,
								   struct kern_stack cur,
								   float tcur)
{
	struct kern_stack stack[BVH_STACK_MAX];
	int sp = 0, any = cl->mode == HIT_ANY;
	struct kern_ray kr;

	kern_ray_init(&kr, q);
	for (;;) {
		if (cur.count) {
			if (kern_leaf_step(m, q, cl, &cur, &tcur))
				return 1;
		} else {
			int r = kern_visit(m, &m->bvh.nodes[cur.child], &kr, tcur, any, 0, stack,
					   &sp, &cur);

			if (r > 0)
				continue;
			if (r < 0) {
				kern_scan(m, q, cl);
				return any && cl->found;
			}
		}
		if (!kern_pop(stack, &sp, tcur, &cur))
			return 0;
	}
}

/* The whole walk for q: the subtree at the root. */
KFN static inline __attribute__((always_inline)) void kern_walk(const struct mesh *m,
								 const struct rq *q,
								 struct collector *cl)
{
	kern_walk_at(m, q, cl, (struct kern_stack){ 0, 0, 0, q->L }, q->L);
}

KFN void TRAVERSE(const struct mesh *m, const struct rq *q, struct collector *cl)
{
	kern_walk(m, q, cl);
}

/* TRAVERSE for q[0..n) and cl[0..n), one query after another: a batch's
 * rays on a mesh that fits the caches, without a call per ray. */
KFN void TRAVERSE_SEQ(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kern_walk(m, &q[i], &cl[i]);
}

/*
 * Several queries' walks interleaved (TRAVERSE_MANY below): a walk is one
 * query's state between steps, a step one node or one leaf. Each step ends
 * by prefetching what the walk reads next, and RC_WALKS - 1 other walks'
 * steps run before it is read: the loads of one walk wait while the others
 * compute, instead of each query waiting on memory at every level.
 */
struct kern_walk {
	struct kern_stack cur;
	float tcur;
	int sp;
	const struct rq *q;
	struct collector *cl;
	struct kern_ray kr;
	struct kern_stack stack[BVH_STACK_MAX];
};

KFN static inline void kern_walk_start(const struct mesh *m, struct kern_walk *w,
				       const struct rq *q, struct collector *cl)
{
	const char *root = (const char *)m->bvh.nodes;

	w->cur = (struct kern_stack){ 0, 0, 0, q->L };
	w->tcur = q->L;
	w->sp = 0;
	w->q = q;
	w->cl = cl;
	kern_ray_init(&w->kr, q);
	__builtin_prefetch(root);
	__builtin_prefetch(root + 64);
	__builtin_prefetch(root + 128);
	__builtin_prefetch(root + 192);
	__builtin_prefetch(root + sizeof(struct bvh_node) - 1);
}

/* One step of w: 1 when its query is answered. */
KFN static inline int kern_step(const struct mesh *m, struct kern_walk *w)
{
	struct kern_stack cur = w->cur;
	float tcur = w->tcur;
	int sp = w->sp;

	if (cur.count) {
		if (kern_leaf_step(m, w->q, w->cl, &cur, &tcur))
			return 1;
	} else {
		int r = kern_visit(m, &m->bvh.nodes[cur.child], &w->kr, tcur,
				   w->cl->mode == HIT_ANY, 1, w->stack, &sp, &cur);

		if (r < 0) {
			kern_scan(m, w->q, w->cl);
			return 1;
		}
		if (r > 0)
			goto out;
	}
	/* kern_pop, written out: through the helper this walk's cur went
	 * through memory, 57 more instructions per level ray (callgrind) */
	do {
		if (!sp)
			return 1;
		cur = w->stack[--sp];
	} while (cur.tn > tcur);
out:
	w->cur = cur;
	w->tcur = tcur;
	w->sp = sp;
	return 0;
}

/* Walk the BVH for q[0..n), feeding cl[0..n), RC_WALKS walks at a time,
 * each step in turn; the answers are TRAVERSE's for each query. */
KFN void TRAVERSE_MANY(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n)
{
	struct kern_walk w[RC_WALKS];
	unsigned live = 0;
	size_t next = 0;

	for (int k = 0; k < RC_WALKS && next < n; k++, next++) {
		kern_walk_start(m, &w[k], &q[next], &cl[next]);
		live |= 1u << k;
	}
	while (live) {
		for (int k = 0; k < RC_WALKS; k++) {
			if (!(live >> k & 1) || !kern_step(m, &w[k]))
				continue;
			if (next < n) {
				kern_walk_start(m, &w[k], &q[next], &cl[next]);
				next++;
			} else {
				live &= ~(1u << k);
			}
		}
	}
}

#ifdef TRAVERSE_STREAM
#include "raycast_stream.h"
#endif
