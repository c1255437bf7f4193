/* testgeom.c - seeded randomness, generated meshes and a GMP oracle for the
 * geometry suites. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "mesh.h"
#include "testgeom.h"

uint64_t rng_next(struct rng *r)
{
	/* splitmix64 */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double rng_unit(struct rng *r)
{
	return (rng_next(r) >> 11) * 0x1p-53;
}

double rng_range(struct rng *r, double lo, double hi)
{
	return lo + (hi - lo) * rng_unit(r);
}

vec3 rng_dir(struct rng *r)
{
	for (;;) {
		double x = rng_range(r, -1, 1), y = rng_range(r, -1, 1), z = rng_range(r, -1, 1);
		double l = sqrt(x * x + y * y + z * z);

		if (l > 0.1 && l <= 1)
			return v3((float)(x / l), (float)(y / l), (float)(z / l));
	}
}

void tmesh_deep(struct tmesh *m, size_t ntri)
{
	m->nvert = 3 * ntri;
	m->ntri = ntri;
	m->xyz = malloc(sizeof(*m->xyz) * 3 * m->nvert);
	m->idx = malloc(sizeof(*m->idx) * 3 * m->ntri);
	ck_assert_ptr_nonnull(m->xyz);
	ck_assert_ptr_nonnull(m->idx);
	for (size_t i = 0; i < ntri; i++) {
		float x = ldexpf(1, (int)(i % 200) - 100) * (1 + (float)(i / 200));

		for (int v = 0; v < 3; v++) {
			m->xyz[9 * i + 3 * v] = x + (v == 1 ? x * 0.1f : 0);
			m->xyz[9 * i + 3 * v + 1] = v == 2 ? x * 0.1f : 0;
			m->xyz[9 * i + 3 * v + 2] = 0;
			m->idx[3 * i + v] = (uint32_t)(3 * i + v);
		}
	}
}

struct mesh *tmesh_build(const struct tmesh *t)
{
	struct mesh *m = NULL;

	ck_assert_int_eq(mesh_build(t->xyz, t->nvert, t->idx, t->ntri, &m, NULL), CORE_OK);
	return m;
}

vec3 tmesh_vertex(const struct tmesh *t, uint32_t v)
{
	return v3(t->xyz[3 * v], t->xyz[3 * v + 1], t->xyz[3 * v + 2]);
}

void tmesh_release(struct tmesh *m)
{
	free(m->xyz);
	free(m->idx);
	memset(m, 0, sizeof(*m));
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	return p;
}

void tmesh_sphere(struct tmesh *m, int n, vec3 center, float radius)
{
	/* vertices on the cube surface, indexed by a map from lattice points */
	int side = n + 1;
	int *map = xmalloc(sizeof(int) * side * side * side);
	size_t nv = 0, nt = 0;

	for (int i = 0; i < side * side * side; i++)
		map[i] = -1;
	m->xyz = xmalloc(sizeof(float) * 3 * 6 * side * side);
	m->idx = xmalloc(sizeof(uint32_t) * 3 * 12 * n * n);
	for (int x = 0; x <= n; x++)
		for (int y = 0; y <= n; y++)
			for (int z = 0; z <= n; z++) {
				double p[3], l;

				if (x && x < n && y && y < n && z && z < n)
					continue;
				p[0] = 2.0 * x / n - 1;
				p[1] = 2.0 * y / n - 1;
				p[2] = 2.0 * z / n - 1;
				l = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
				map[(x * side + y) * side + z] = (int)nv;
				m->xyz[3 * nv] = (float)(center.x + radius * p[0] / l);
				m->xyz[3 * nv + 1] = (float)(center.y + radius * p[1] / l);
				m->xyz[3 * nv + 2] = (float)(center.z + radius * p[2] / l);
				nv++;
			}
	/* each face: axis a fixed at 0 or n; (u, v) the other two, oriented outwards */
	for (int a = 0; a < 3; a++)
		for (int s = 0; s < 2; s++)
			for (int i = 0; i < n; i++)
				for (int j = 0; j < n; j++) {
					int q[4][3], corner[4][2] = { { i, j }, { i + 1, j }, { i + 1, j + 1 }, { i, j + 1 } };
					uint32_t v[4];
					int ua = (a + 1) % 3, va = (a + 2) % 3;

					for (int c = 0; c < 4; c++) {
						q[c][a] = s ? n : 0;
						q[c][ua] = corner[c][0];
						q[c][va] = corner[c][1];
						v[c] = (uint32_t)map[(q[c][0] * side + q[c][1]) * side + q[c][2]];
					}
					/* (ua, va, a) is right-handed: CCW in (u, v) faces +a */
					if (s) {
						uint32_t t[6] = { v[0], v[1], v[2], v[0], v[2], v[3] };

						memcpy(m->idx + 3 * nt, t, sizeof(t));
					} else {
						uint32_t t[6] = { v[0], v[2], v[1], v[0], v[3], v[2] };

						memcpy(m->idx + 3 * nt, t, sizeof(t));
					}
					nt += 2;
				}
	free(map);
	m->nvert = nv;
	m->ntri = nt;
}

void tmesh_grid(struct tmesh *m, int n, float x0, float cell, struct rng *r, float amp)
{
	size_t nv = (size_t)(n + 1) * (n + 1), nt = 0;

	m->xyz = xmalloc(sizeof(float) * 3 * nv);
	m->idx = xmalloc(sizeof(uint32_t) * 6 * n * n);
	for (int j = 0; j <= n; j++)
		for (int i = 0; i <= n; i++) {
			size_t v = (size_t)j * (n + 1) + i;

			m->xyz[3 * v] = x0 + i * cell;
			m->xyz[3 * v + 1] = amp ? (float)rng_range(r, -amp, amp) : 0;
			m->xyz[3 * v + 2] = x0 + j * cell;
		}
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++) {
			uint32_t v00 = (uint32_t)(j * (n + 1) + i), v10 = v00 + 1;
			uint32_t v01 = v00 + (uint32_t)n + 1, v11 = v01 + 1;
			uint32_t t[6] = { v00, v01, v11, v00, v11, v10 };

			memcpy(m->idx + 3 * nt, t, sizeof(t));
			nt += 2;
		}
	m->nvert = nv;
	m->ntri = nt;
}

void tmesh_soup(struct tmesh *m, size_t ntri, float s, struct rng *r)
{
	m->nvert = 3 * ntri;
	m->ntri = ntri;
	m->xyz = xmalloc(sizeof(float) * 9 * ntri);
	m->idx = xmalloc(sizeof(uint32_t) * 3 * ntri);
	for (size_t t = 0; t < ntri; t++) {
		double c[3], size = rng_range(r, 0.01, 0.3) * s;

		for (int k = 0; k < 3; k++)
			c[k] = rng_range(r, -s, s);
		for (int v = 0; v < 3; v++)
			for (int k = 0; k < 3; k++)
				m->xyz[9 * t + 3 * v + k] = (float)(c[k] + rng_range(r, -size, size));
		for (int v = 0; v < 3; v++)
			m->idx[3 * t + v] = (uint32_t)(3 * t + v);
	}
}

/* mpq helpers over float vectors */
static void q_sub(mpq_t out[3], vec3 a, vec3 b)
{
	float pa[3] = { a.x, a.y, a.z }, pb[3] = { b.x, b.y, b.z };
	mpq_t t;

	mpq_init(t);
	for (int k = 0; k < 3; k++) {
		mpq_set_d(out[k], pa[k]);
		mpq_set_d(t, pb[k]);
		mpq_sub(out[k], out[k], t);
	}
	mpq_clear(t);
}

static void q_cross(mpq_t out[3], mpq_t a[3], mpq_t b[3])
{
	mpq_t t;

	mpq_init(t);
	for (int k = 0; k < 3; k++) {
		int i = (k + 1) % 3, j = (k + 2) % 3;

		mpq_mul(out[k], a[i], b[j]);
		mpq_mul(t, a[j], b[i]);
		mpq_sub(out[k], out[k], t);
	}
	mpq_clear(t);
}

static void q_dot(mpq_t out, mpq_t a[3], mpq_t b[3])
{
	mpq_t t;

	mpq_init(t);
	mpq_mul(out, a[0], b[0]);
	for (int k = 1; k < 3; k++) {
		mpq_mul(t, a[k], b[k]);
		mpq_add(out, out, t);
	}
	mpq_clear(t);
}

#define QV(name) mpq_t name[3]; for (int _k = 0; _k < 3; _k++) mpq_init(name[_k])
#define QVCLEAR(name) for (int _k = 0; _k < 3; _k++) mpq_clear(name[_k])

int oracle_ray_triangle(vec3 o, vec3 d, double tmax, vec3 a, vec3 b, vec3 c, double *t_out)
{
	/* Moller-Trumbore in exact rationals: closed triangle, det != 0 */
	int hit = 0;
	mpq_t det, u, v, t, tmp;
	QV(e1);
	QV(e2);
	QV(p);
	QV(s);
	QV(q);
	QV(dq);

	mpq_inits(det, u, v, t, tmp, NULL);
	q_sub(e1, b, a);
	q_sub(e2, c, a);
	q_sub(s, o, a);
	mpq_set_d(dq[0], d.x);
	mpq_set_d(dq[1], d.y);
	mpq_set_d(dq[2], d.z);
	q_cross(p, dq, e2);
	q_dot(det, e1, p);
	if (mpq_sgn(det) == 0)
		goto out;
	q_dot(u, s, p);
	mpq_div(u, u, det);
	q_cross(q, s, e1);
	q_dot(v, dq, q);
	mpq_div(v, v, det);
	q_dot(t, e2, q);
	mpq_div(t, t, det);
	mpq_add(tmp, u, v);
	if (mpq_sgn(u) < 0 || mpq_sgn(v) < 0 || mpq_cmp_ui(tmp, 1, 1) > 0 || mpq_sgn(t) < 0)
		goto out;
	if (tmax >= 0) {
		mpq_set_d(tmp, tmax);
		if (mpq_cmp(t, tmp) > 0)
			goto out;
	}
	hit = 1;
	if (t_out)
		*t_out = mpq_get_d(t);
out:
	mpq_clears(det, u, v, t, tmp, NULL);
	QVCLEAR(e1);
	QVCLEAR(e2);
	QVCLEAR(p);
	QVCLEAR(s);
	QVCLEAR(q);
	QVCLEAR(dq);
	return hit;
}

struct bvh_prim *random_prims(size_t n, uint64_t seed)
{
	struct bvh_prim *p = malloc(sizeof(*p) * (n ? n : 1));
	struct rng r = { seed };

	if (!p)
		abort();
	for (size_t i = 0; i < n; i++) {
		float x = (float)rng_range(&r, -100, 100), y = (float)rng_range(&r, -100, 100);
		float z = (float)rng_range(&r, -20, 20), s = (float)rng_range(&r, 0.01, 4);

		if (rng_unit(&r) < 0.3) {	/* clusters: small leaves next to full ones */
			x = (float)rng_range(&r, 0, 1);
			y = (float)rng_range(&r, 0, 1);
		}
		p[i] = (struct bvh_prim){ { x, y, z }, (uint32_t)i, { x + s, y + s / 2, z + s }, 0 };
	}
	return p;
}
