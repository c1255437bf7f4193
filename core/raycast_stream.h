/* raycast_stream.h - a batch's rays walked through the BVH together (a ray
 * stream), for meshes that fit the caches: at a node, sixteen rays at a
 * time are tested against each child's box (AVX-512, the rays in the
 * lanes), and each child gets the list of rays that meet it; at a leaf,
 * each ray on its list is tested alone by kern_leaf. Included by
 * raycast_kern.h for the AVX-512 kernel only (STREAM names the function).
 *
 * One walk per batch instead of one per ray: the node's lines are read once
 * for all its rays, and no ray's walk waits on branches that depend on the
 * ray before it. What it costs: a ray no longer meets children nearest
 * first. A closest query's rays are therefore split by the octant of their
 * direction, and each octant's list meets a node's children in the order of
 * their centres along the octant's diagonal (near to far for most of its
 * rays); the closest answer does not depend on the order (cand_less: a
 * hit that one order cuts off, as certainly past the closest so far or
 * entered after it, would lose to it in any other: kern_leaf gives a
 * float-decided hit no distance before its leaf's entry, and exact.c's
 * filter gives t only to 2^-23, inside the slacks of the cuts). An any
 * query's rays meet the children in slot order, as a walk does
 * (kern_visit), so that the first hit found, the answer, is the walk's.
 *
 * The lists live in one arena, a list's children's lists above it (LIFO, as
 * the walk's stack); a node whose children's lists would not fit has its
 * rays walk its subtree alone (kern_walk_at), so a stream answers every ray
 * whatever the tree.
 */

/* Each child list is reserved RS_PAD entries more than the rays it can
 * hold: the node step stores all sixteen lanes of a compressed vector at
 * the list's end, the lanes past its rays included. */
#define RS_PAD 16

/* Children of nd in the order an octant's list (or any, with octant 8)
 * meets them; returns how many slots are not empty. */
KFN static inline int rs_order(const struct bvh_node *nd, unsigned oct, int *order)
{
	float key[BVH_WIDTH];
	int k = 0;

	for (int c = 0; c < BVH_WIDTH; c++) {
		float s = 0;
		int p;

		if (nd->ref[c] == BVH_EMPTY)
			continue;
		if (oct < 8)
			for (int a = 0; a < 3; a++) {
				float v = nd->lo[a][c] + nd->hi[a][c];

				s += (oct >> a & 1) ? -v : v;
			}
		for (p = k++; p > 0 && key[p - 1] > s; p--) {
			key[p] = key[p - 1];
			order[p] = order[p - 1];
		}
		key[p] = s;
		order[p] = c;
	}
	return k;
}

/* The rays of a list that are still open (rc_stream_ray.tc >= their entry)
 * walk the subtree at ref alone. */
KFN static void rs_walk_alone(const struct mesh *m, const struct rq *q, struct collector *cl,
			      struct rc_stream *x, const struct rc_stream_entry *e)
{
	for (uint32_t i = 0; i < e->len; i++) {
		uint32_t id = x->id[e->off + i];
		float tn = x->tn[e->off + i], tc = x->ray[id].tc;

		if (tn > tc)
			continue;
		if (kern_walk_at(m, &q[id], &cl[id],
				 (struct kern_stack){ bvh_ref_index(e->ref), 0, tn, tc }, tc))
			x->ray[id].tc = -1.0f;
		else if (cl[id].mode == HIT_CLOSEST && cl[id].found && cl[id].best.t < tc)
			x->ray[id].tc = cl[id].best.t;
	}
}

/* Leaf e.ref against each ray of its list still open. */
KFN static inline void rs_leaf(const struct mesh *m, const struct rq *q, struct collector *cl,
			       struct rc_stream *x, const struct rc_stream_entry *e)
{
	uint32_t first = bvh_ref_index(e->ref), count = bvh_ref_count(e->ref);
	const uint32_t *ids = x->id + e->off;

	for (uint32_t i = 0; i < e->len; i++) {
		uint32_t id = ids[i];
		float tn = x->tn[e->off + i], tc = x->ray[id].tc;

		/* the rays come in batch order, with gaps: the ray after next's
		 * lines are fetched while this one is tested */
		if (i + 2 < e->len) {
			const char *p = (const char *)&q[ids[i + 2]];

			__builtin_prefetch(p);
			__builtin_prefetch(p + 64);
			__builtin_prefetch(&cl[ids[i + 2]]);
		}
		if (tn > tc)
			continue;
		if (kern_leaf(m, &q[id], &cl[id], first, count, tn, tc)) {
			x->ray[id].tc = -1.0f;	/* answered: meets nothing more */
			continue;
		}
		if (cl[id].mode == HIT_CLOSEST && cl[id].found && cl[id].best.t < tc)
			x->ray[id].tc = cl[id].best.t;
	}
}

/*
 * Node e.ref against the rays of its list, sixteen at a time: each child
 * met gets a list at out[r] (the r-th in order), of ccnt[r] rays and their
 * entry distances. The slab test is kern_node's, bit for bit: with the
 * inverse direction's sign in each lane, the near plane's distance is the
 * lesser of the two planes' (rounding is monotonic).
 */
KFN static inline void rs_node(const struct bvh_node *nd, struct rc_stream *x,
			       const struct rc_stream_entry *e, int k, const int *order,
			       const uint32_t *out, uint32_t *ccnt)
{
	/* the lanes' rays after the transposition below: lanes 4-7 hold
	 * rays 8-11 and lanes 8-11 rays 4-7 */
	const __m512i perm = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15);
	const __m512 zero = _mm512_setzero_ps(), near_slack = _mm512_set1_ps(RC_NEAR_SLACK);
	const __m512 box_slack = _mm512_set1_ps(RC_BOX_SLACK);

	for (uint32_t g = 0; g < e->len; g += 16) {
		__mmask16 in = e->len - g >= 16 ? (__mmask16)0xffff :
			       (__mmask16)((1u << (e->len - g)) - 1);
		__m512i ids = _mm512_maskz_loadu_epi32(in, x->id + e->off + g);
		__m512 tns = _mm512_mask_loadu_ps(_mm512_set1_ps(INFINITY), in, x->tn + e->off + g);
		__m512 r[8], t[8], u[8], ox, oy, oz, ix, iy, iz, tc;
		uint32_t idv[16];
		__mmask16 open;

		/* the sixteen rays' records (32 bytes each; a lane past the
		 * list reads ray 0), transposed into one vector a field:
		 * r[i] holds rays i and i + 8 */
		_mm512_storeu_si512(idv, ids);
		for (int i = 0; i < 8; i++)
			r[i] = _mm512_insertf32x8(
				_mm512_castps256_ps512(_mm256_load_ps(x->ray[idv[i]].o)),
				_mm256_load_ps(x->ray[idv[i + 8]].o), 1);
		for (int i = 0; i < 8; i += 2) {
			t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
			t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
		}
		for (int i = 0; i < 8; i += 4) {
			u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
			u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
			u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
			u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
		}
		ox = _mm512_shuffle_f32x4(u[0], u[4], _MM_SHUFFLE(2, 0, 2, 0));
		oy = _mm512_shuffle_f32x4(u[1], u[5], _MM_SHUFFLE(2, 0, 2, 0));
		oz = _mm512_shuffle_f32x4(u[2], u[6], _MM_SHUFFLE(2, 0, 2, 0));
		ix = _mm512_shuffle_f32x4(u[3], u[7], _MM_SHUFFLE(2, 0, 2, 0));
		iy = _mm512_shuffle_f32x4(u[0], u[4], _MM_SHUFFLE(3, 1, 3, 1));
		iz = _mm512_shuffle_f32x4(u[1], u[5], _MM_SHUFFLE(3, 1, 3, 1));
		tc = _mm512_shuffle_f32x4(u[2], u[6], _MM_SHUFFLE(3, 1, 3, 1));
		ids = _mm512_permutexvar_epi32(perm, ids);
		tns = _mm512_permutexvar_ps(perm, tns);
		/* still open: entered before the closest hit so far (answered
		 * any queries have tc -1; lanes past the list entry at inf) */
		open = _mm512_cmp_ps_mask(tns, tc, _CMP_LE_OQ);
		if (!open)
			continue;
		for (int i = 0; i < k; i++) {
			int c = order[i];
			__m512 ax = _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(nd->lo[0][c]), ox), ix);
			__m512 bx = _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(nd->hi[0][c]), ox), ix);
			__m512 ay = _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(nd->lo[1][c]), oy), iy);
			__m512 by = _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(nd->hi[1][c]), oy), iy);
			__m512 az = _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(nd->lo[2][c]), oz), iz);
			__m512 bz = _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(nd->hi[2][c]), oz), iz);
			__m512 tnear = _mm512_max_ps(zero, _mm512_min_ps(ax, bx)), tfar;
			__mmask16 met;

			tnear = _mm512_max_ps(tnear, _mm512_min_ps(ay, by));
			tnear = _mm512_max_ps(tnear, _mm512_min_ps(az, bz));
			tfar = _mm512_min_ps(_mm512_min_ps(_mm512_max_ps(ax, bx), _mm512_max_ps(ay, by)),
					     _mm512_max_ps(az, bz));
			tfar = _mm512_min_ps(tc, _mm512_mul_ps(tfar, box_slack));
			tnear = _mm512_mul_ps(tnear, near_slack);
			met = _mm512_mask_cmp_ps_mask(open, tnear, tfar, _CMP_LE_OQ);
			/* all sixteen lanes stored, the met ones first: the
			 * list's reservation has RS_PAD spare */
			_mm512_storeu_si512(x->id + out[i] + ccnt[i], _mm512_maskz_compress_epi32(met, ids));
			_mm512_storeu_ps(x->tn + out[i] + ccnt[i], _mm512_maskz_compress_ps(met, tnear));
			ccnt[i] += (uint32_t)__builtin_popcount(met);
		}
	}
}

/*
 * Walk q[0..n) and cl[0..n) (n <= RC_STREAM_RAYS) as one stream, with x's
 * room: each cl[i] gets what TRAVERSE gives for q[i] alone.
 */
KFN void STREAM(const struct mesh *m, const struct rq *q, struct collector *cl, size_t n,
		struct rc_stream *x)
{
	int any = n && cl[0].mode == HIT_ANY;
	size_t sp = 0, top = n;

	for (size_t i = 0; i < n; i++)
		x->ray[i] = (struct rc_stream_ray){ { q[i].ov[0], q[i].ov[1], q[i].ov[2] },
						    { q[i].inv[0], q[i].inv[1], q[i].inv[2] },
						    q[i].L, 0 };
	if (any) {
		for (size_t i = 0; i < n; i++) {
			x->id[i] = (uint32_t)i;
			x->tn[i] = 0;
		}
		if (n)
			x->stack[sp++] = (struct rc_stream_entry){ 0, 0, (uint32_t)n, 8 };
	} else {
		/* by octant (a counting sort): the last octant's list is the
		 * highest in the arena, so it goes on the stack last */
		uint32_t cnt[8] = { 0 }, at[8];

		for (size_t i = 0; i < n; i++)
			cnt[(q[i].inv[0] < 0) | (q[i].inv[1] < 0) << 1 | (q[i].inv[2] < 0) << 2]++;
		for (unsigned o = 0, sum = 0; o < 8; sum += cnt[o++]) {
			at[o] = sum;
			if (cnt[o])
				x->stack[sp++] = (struct rc_stream_entry){ 0, sum, cnt[o], o };
		}
		for (size_t i = 0; i < n; i++) {
			unsigned o = (q[i].inv[0] < 0) | (q[i].inv[1] < 0) << 1 | (q[i].inv[2] < 0) << 2;

			x->id[at[o]] = (uint32_t)i;
			x->tn[at[o]++] = 0;
		}
	}
	while (sp) {
		struct rc_stream_entry e = x->stack[--sp];
		const struct bvh_node *nd;
		int order[BVH_WIDTH], k;
		uint32_t out[BVH_WIDTH], ccnt[BVH_WIDTH] = { 0 };

		/* what lies above this list is done with */
		top = e.off + e.len;
		if (bvh_ref_count(e.ref)) {
			rs_leaf(m, q, cl, x, &e);
			continue;
		}
		nd = &m->bvh.nodes[bvh_ref_index(e.ref)];
		k = rs_order(nd, e.oct, order);
		/* each child's list may hold every ray of this one: reserved
		 * so, the first child's highest (it is taken off the stack
		 * first) */
		if (top + (size_t)k * (e.len + RS_PAD) > x->cap ||
		    sp + (size_t)k > RC_STREAM_STACK) {
			rs_walk_alone(m, q, cl, x, &e);
			continue;
		}
		for (int i = 0; i < k; i++)
			out[i] = (uint32_t)top + (uint32_t)(k - 1 - i) * (e.len + RS_PAD);
		rs_node(nd, x, &e, k, order, out, ccnt);
		for (int i = k - 1; i >= 0; i--)
			if (ccnt[i])
				x->stack[sp++] = (struct rc_stream_entry){ nd->ref[order[i]], out[i],
									  ccnt[i], e.oct };
	}
}
