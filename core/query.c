/* query.c - world-space ray queries: move the ray in, move the hits out. */
#include <float.h>
#include <math.h>

#include "query.h"

int dir_unit(const double d[3], double u[3])
{
	double m = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2]))), s[3], len;
	int k;

	if (!(m > 0) || !isfinite(m))
		return 0;
	for (k = 0; k < 3; k++)
		s[k] = d[k] / m;
	len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
	for (k = 0; k < 3; k++)
		u[k] = s[k] / len;
	return 1;
}

int qray_as_given(struct qray *r, vec3 origin, const double d[3], float tmax)
{
	double m = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2]))), s[3], p;
	float fs[3];
	int e, k;

	if (!(m > 0) || !isfinite(m))
		return 0;
	if ((d[0] != 0) + (d[1] != 0) + (d[2] != 0) == 1) {
		/* along an axis: the unit vector is the same line, exactly, and
		 * t the distance (a box's slabs then divide by +-1: no rounding
		 * where |d| = 1.25 put 9.999999 for 10) */
		for (k = 0; k < 3; k++)
			r->dir[k] = d[k] > 0 ? 1 : d[k] < 0 ? -1 : 0;
		r->ray.origin = origin;
		r->ray.dir = v3((float)r->dir[0], (float)r->dir[1], (float)r->dir[2]);
		r->ray.tmax = tmax;
		r->unit = 1;
		r->length = 0;
		return 1;
	}
	frexp(m, &e);		/* m in [2^(e-1), 2^e) */
	for (k = 0; k < 3; k++) {
		if ((double)(float)d[k] != d[k])
			return 0;
		s[k] = ldexp(d[k], 1 - e);
		fs[k] = (float)s[k];
		if ((double)fs[k] != s[k])
			return 0;	/* a tiny component rounded (subnormal) */
	}
	r->ray.origin = origin;
	r->ray.dir = v3(fs[0], fs[1], fs[2]);
	for (k = 0; k < 3; k++)
		r->dir[k] = s[k];
	/* largest component in [1, 2): no overflow, |s| in [1, 2 sqrt 3) */
	r->unit = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
	r->length = 0;
	/* the largest float t with t * unit <= tmax (and a float distance:
	 * FLT_MAX at most): a hit past the limit is never answered */
	p = (tmax < FLT_MAX ? tmax : FLT_MAX) / r->unit;
	r->ray.tmax = (float)p;
	if ((double)r->ray.tmax > p)
		r->ray.tmax = nextafterf(r->ray.tmax, 0);
	/* a limit under the smallest float step (max_distance 1e-45) is still
	 * a limit: a zero one would make the ray invalid (a 400) */
	if (!(r->ray.tmax > 0))
		r->ray.tmax = FLT_TRUE_MIN;
	return 1;
}

void qray_init(struct qray *r, vec3 origin, const double d[3], float tmax)
{
	float fd[3] = { (float)d[0], (float)d[1], (float)d[2] };
	double l2 = (double)fd[0] * fd[0] + (double)fd[1] * fd[1] + (double)fd[2] * fd[2];
	int unit = fabs(l2 - 1) <= 0x1p-22 && fd[0] == d[0] && fd[1] == d[1] && fd[2] == d[2];
	int k;

	if (!unit && qray_as_given(r, origin, d, tmax))
		return;
	r->ray.origin = origin;
	r->ray.tmax = tmax;
	r->unit = 1;
	r->length = 0;
	if (unit) {
		r->ray.dir = v3(fd[0], fd[1], fd[2]);
		for (k = 0; k < 3; k++)
			r->dir[k] = fd[k];
		return;
	}
	dir_unit(d, r->dir);
	r->ray.dir = v3((float)r->dir[0], (float)r->dir[1], (float)r->dir[2]);
}

vec3 qray_point(const struct qray *r, float t)
{
	return v3((float)(r->ray.origin.x + (double)t * r->dir[0]),
		  (float)(r->ray.origin.y + (double)t * r->dir[1]),
		  (float)(r->ray.origin.z + (double)t * r->dir[2]));
}

/*
 * The world normal of triangle tri: (B-A)x(C-A) of the placed vertices, in
 * double, exactly the API's definition whatever sign conventions a
 * mirroring placement gives the mesh-space normal.
 */
static vec3 placed_normal(const struct mesh *m, const struct xform *xf, uint32_t tri,
			  vec3 local_normal)
{
	double e[2][3], w[2][3], n[3], len;
	vec3 a, b, c;
	int k;

	mesh_triangle(m, tri, &a, &b, &c);
	e[0][0] = (double)b.x - a.x; e[0][1] = (double)b.y - a.y; e[0][2] = (double)b.z - a.z;
	e[1][0] = (double)c.x - a.x; e[1][1] = (double)c.y - a.y; e[1][2] = (double)c.z - a.z;
	for (k = 0; k < 2; k++) {
		w[k][0] = xf->m[0] * e[k][0] + xf->m[1] * e[k][1] + xf->m[2] * e[k][2];
		w[k][1] = xf->m[4] * e[k][0] + xf->m[5] * e[k][1] + xf->m[6] * e[k][2];
		w[k][2] = xf->m[8] * e[k][0] + xf->m[9] * e[k][1] + xf->m[10] * e[k][2];
	}
	v3d_cross(w[0], w[1], n);
	len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
	if (!(len > 0) || !isfinite(len))
		return xform_normal(xf, local_normal);
	return v3((float)(n[0] / len), (float)(n[1] / len), (float)(n[2] / len));
}

/* Mesh-space hit h of ray r as a world hit; bare (opts->bare_hits): with
 * no point and no normal. */
static void world_hit_of(const struct mesh *m, const struct xform *xf, const struct qray *r,
			 const struct hit *h, int bare, struct world_hit *w)
{
	w->distance = qray_distance(r, h->t);
	if (!bare) {
		w->point = qray_point(r, h->t);
		w->normal = xf ? placed_normal(m, xf, h->triangle, h->normal) : h->normal;
	}
	w->triangle = h->triangle;
	w->u = h->u;
	w->v = h->v;
	w->front_face = h->front_face;
	w->fraction = 0;
	if (r->length > 0) {
		double fr = (double)h->t * r->unit / r->length;

		w->fraction = (float)(fr < 0 ? 0 : fr > 1 ? 1 : fr);
	}
}

enum core_result mesh_query(const struct mesh *m, const struct xform *xf, const struct qray *r,
			    const struct query_opts *opts, struct hit *scratch,
			    struct world_hit *out, uint32_t *n, uint32_t *total)
{
	struct query_opts o = *opts;
	struct ray local = xf ? xform_ray_to_local(xf, &r->ray) : r->ray;
	enum core_result res;
	uint32_t k;

	o.flip_winding = xf && xf->det < 0;
	res = mesh_raycast(m, &local, &o, scratch, n, total);
	if (res != CORE_OK)
		return res;
	for (k = 0; k < *n; k++)
		world_hit_of(m, xf, r, &scratch[k], o.bare_hits, &out[k]);
	return CORE_OK;
}

enum core_result mesh_query_batch(const struct mesh *m, const struct xform *xf,
				  const struct qray *r, size_t n, const struct query_opts *opts,
				  struct mesh_query_room *room, struct world_hit *out, uint32_t *nh,
				  enum core_result *res)
{
	struct query_opts o = *opts;
	enum core_result rc;

	o.flip_winding = xf && xf->det < 0;
	for (size_t i = 0; i < n; i++)
		room->local[i] = xf ? xform_ray_to_local(xf, &r[i].ray) : r[i].ray;
	rc = mesh_raycast_batch(m, room->local, n, &o, room->hits, nh, res);
	if (rc != CORE_OK)
		return rc;
	for (size_t i = 0; i < n; i++)
		if (res[i] == CORE_OK && nh[i])
			world_hit_of(m, xf, &r[i], &room->hits[i], o.bare_hits, &out[i]);
	return CORE_OK;
}
