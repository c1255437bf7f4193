/* overlap.c - which triangles of a mesh intersect a solid oriented box:
 * BVH nodes culled by the box-vs-box separating-axis test, triangles tested
 * with the 13-axis triangle-vs-box test (obb.c).
 */
#include <stdlib.h>

#include "mesh_impl.h"
#include "obb.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct u32vec {
	uint32_t *v;
	size_t n, cap;
};

static int u32vec_push(struct u32vec *a, uint32_t x)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? 2 * a->cap : 64;
		uint32_t *nv;

		if (nc > SIZE_MAX / sizeof(*nv))
			return -1;
		nv = realloc(a->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		a->v = nv;
		a->cap = nc;
	}
	a->v[a->n++] = x;
	return 0;
}

static enum core_result overlap_finish(struct u32vec *found, uint32_t *out, size_t limit,
				       size_t *count)
{
	if (found->n)
		qsort(found->v, found->n, sizeof(*found->v), cmp_u32);
	for (size_t i = 0; i < found->n && i < limit; i++)
		out[i] = found->v[i];
	*count = found->n;
	free(found->v);
	return CORE_OK;
}

/* Every primitive, no tree: the answer when the tree cannot be walked. */
static enum core_result overlap_all(const struct mesh *m, const struct obb *b,
				    struct u32vec *found, uint32_t *out, size_t limit, size_t *count)
{
	for (uint32_t rec = 0; rec < m->nprim; rec++) {
		uint32_t tri = prim_id(m, rec) >> PRIM_SHIFT;
		vec3 p0, p1, p2;

		mesh_triangle(m, tri, &p0, &p1, &p2);
		if (obb_triangle_overlap(b, p0, p1, p2) && u32vec_push(found, tri)) {
			free(found->v);
			return CORE_ENOMEM;
		}
	}
	return overlap_finish(found, out, limit, count);
}

enum core_result mesh_overlap_obb(const struct mesh *m, const struct obb *b,
				  uint32_t *out, size_t limit, size_t *count)
{
	uint32_t stack[BVH_STACK_MAX];	/* bvh.h: never fills */
	int sp = 0;
	struct u32vec found = { 0 };
	vec3 blo, bhi;

	*count = 0;
	if (m->nprim == 0)
		return CORE_OK;
	obb_bounds(b, &blo, &bhi);
	stack[sp++] = 0;
	while (sp) {
		const struct bvh_node *nd = &m->bvh.nodes[stack[--sp]];

		for (int c = 0; c < BVH_WIDTH; c++) {
			uint32_t ref = nd->ref[c], first = bvh_ref_index(ref), cnt = bvh_ref_count(ref);
			vec3 lo, hi;

			if (ref == BVH_EMPTY)
				continue;
			lo = v3(nd->lo[0][c], nd->lo[1][c], nd->lo[2][c]);
			hi = v3(nd->hi[0][c], nd->hi[1][c], nd->hi[2][c]);
			if (lo.x > bhi.x || lo.y > bhi.y || lo.z > bhi.z ||
			    hi.x < blo.x || hi.y < blo.y || hi.z < blo.z)
				continue;
			if (!obb_aabb_overlap(b, lo, hi))
				continue;
			if (cnt == 0) {
				/* at most BVH_WIDTH - 1 siblings wait per level
				 * (bvh.h); a full stack would mean a broken tree:
				 * answer by testing every triangle instead */
				if (sp == BVH_STACK_MAX) {
					found.n = 0;
					return overlap_all(m, b, &found, out, limit, count);
				}
				stack[sp++] = first;
				continue;
			}
			for (uint32_t rec = first; rec < first + cnt; rec++) {
				uint32_t tri = prim_id(m, rec) >> PRIM_SHIFT;
				vec3 p0, p1, p2;

				mesh_triangle(m, tri, &p0, &p1, &p2);
				if (obb_triangle_overlap(b, p0, p1, p2) && u32vec_push(&found, tri)) {
					free(found.v);
					return CORE_ENOMEM;
				}
			}
		}
	}
	return overlap_finish(&found, out, limit, count);
}
