/* decode_query.c - ray, segment, OBB and hitscan request bodies (JSON and
 * binary ray records) to struct query, with field-path errors. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "decode_fields.h"
#include "query_rules.h"

static const char *const mode_names[] = { "closest", "any", "all", NULL };
static const char *const face_names[] = { "hit", "cull", NULL };

/* The members of one ray, one segment, and a box. */
struct ray_fields {
	struct fval origin, direction, max_distance;
};
static const struct field ray_rows[] = {
	{ "origin", FIELD_VEC3, 1, offsetof(struct ray_fields, origin), NULL },
	{ "direction", FIELD_DIR, 1, offsetof(struct ray_fields, direction), NULL },
	{ "max_distance", FIELD_POSITIVE, 0, offsetof(struct ray_fields, max_distance), NULL },
};

struct seg_fields {
	struct fval start, end;
};
static const struct field seg_rows[] = {
	{ "start", FIELD_VEC3, 1, offsetof(struct seg_fields, start), NULL },
	{ "end", FIELD_VEC3, 1, offsetof(struct seg_fields, end), NULL },
};

float tmax_from(double d)
{
	float t;

	if (d > FLT_MAX)
		return INFINITY;
	t = (float)d;
	if ((double)t < d)
		t = nextafterf(t, INFINITY);
	return t;
}

/* One ray from the members of obj; check: obj is a batch element, whose
 * keys are checked here (the top level checks its own). */
static enum api_err decode_ray(const cJSON *obj, const struct jpath *p, int check,
			       struct qray *r, struct api_fail *f)
{
	struct ray_fields rf;
	enum api_err e;

	e = check ? fields_decode(obj, p, ray_rows, FIELD_COUNT(ray_rows), &rf, f)
		  : fields_read(obj, p, ray_rows, FIELD_COUNT(ray_rows), &rf, f);
	if (e)
		return e;
	qray_init(r, vec3_from(rf.origin.v), rf.direction.v,
		  rf.max_distance.given ? tmax_from(rf.max_distance.v[0]) : INFINITY);
	return API_OK;
}

int segment_qray(const double start[3], const double end[3], struct qray *r)
{
	double d[3], len;
	int k;

	/* direction and length between the points as given, in double; the
	 * ray starts at the float start. The float range keeps the squares
	 * inside double's range. */
	for (k = 0; k < 3; k++)
		d[k] = end[k] - start[k];
	len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	if (len == 0)
		return -1;
	/* a float difference is cast as given (qray_as_given): the segment's
	 * own line, through whatever point it was aimed at */
	if (qray_as_given(r, vec3_from(start), d, tmax_from(len))) {
		r->length = len;
		return 0;
	}
	/* else d / len, rounded (gcc 12 -O2 folded the float round-trip the
	 * earlier code wrote) */
	r->ray.origin = vec3_from(start);
	for (k = 0; k < 3; k++)
		r->dir[k] = d[k] / len;
	r->ray.dir = v3((float)r->dir[0], (float)r->dir[1], (float)r->dir[2]);
	r->length = len;
	r->unit = 1;
	r->ray.tmax = tmax_from(len);
	return 0;
}

/* One closed segment as a ray with tmax = its length. */
static enum api_err decode_segment(const cJSON *obj, const struct jpath *p, int check,
				   struct qray *r, struct api_fail *f)
{
	struct jpath pe = { p, "end", 0 };
	struct seg_fields sf;
	enum api_err e;

	e = check ? fields_decode(obj, p, seg_rows, FIELD_COUNT(seg_rows), &sf, f)
		  : fields_read(obj, p, seg_rows, FIELD_COUNT(seg_rows), &sf, f);
	if (e)
		return e;
	if (segment_qray(sf.start.v, sf.end.v, r))
		return fail_at(f, API_INVALID_REQUEST, &pe, "must differ from start (zero-length segment)");
	return API_OK;
}

struct xform_fields {
	struct fval position, rotation, scale, matrix;
};
static const struct field xform_rows[] = {
	{ "position", FIELD_RAW, 0, offsetof(struct xform_fields, position), NULL },
	{ "rotation", FIELD_RAW, 0, offsetof(struct xform_fields, rotation), NULL },
	{ "scale", FIELD_RAW, 0, offsetof(struct xform_fields, scale), NULL },
	{ "matrix", FIELD_RAW, 0, offsetof(struct xform_fields, matrix), NULL },
};

enum api_err decode_xform(const cJSON *v, const struct jpath *p, struct xform *xf,
				 struct api_fail *f)
{
	struct jpath pp = { p, "position", 0 }, pr = { p, "rotation", 0 };
	struct jpath ps = { p, "scale", 0 }, pm = { p, "matrix", 0 };
	double pos[3] = { 0, 0, 0 }, q[4] = { 1, 0, 0, 0 }, sc[3] = { 1, 1, 1 }, m[16];
	struct xform_fields x;
	enum api_err e;

	e = fields_decode(v, p, xform_rows, FIELD_COUNT(xform_rows), &x, f);
	if (e)
		return e;
	if (x.matrix.given) {
		if (x.position.given || x.rotation.given || x.scale.given)
			return fail_at(f, API_INVALID_REQUEST, p,
				       "give matrix or position/rotation/scale, not both");
		if (!read_numbers(x.matrix.raw, m, 16))
			return fail_at(f, API_INVALID_REQUEST, &pm,
				       "must be 16 finite numbers (row-major 4x4)");
		if (m[12] != 0 || m[13] != 0 || m[14] != 0 || m[15] != 1)
			return fail_at(f, API_INVALID_REQUEST, &pm, "last row must be [0, 0, 0, 1]");
		if (xform_from_matrix(m, xf) != CORE_OK)
			return fail_at(f, API_INVALID_REQUEST, &pm, "must be invertible");
		return API_OK;
	}
	if (x.position.given && !read_numbers(x.position.raw, pos, 3))
		return fail_at(f, API_INVALID_REQUEST, &pp, "must be 3 finite numbers");
	if (x.rotation.given) {
		e = read_quat(x.rotation.raw, &pr, q, f);
		if (e)
			return e;
	}
	if (x.scale.given) {
		if (!read_numbers(x.scale.raw, sc, 3))
			return fail_at(f, API_INVALID_REQUEST, &ps, "must be 3 finite numbers");
		if (sc[0] == 0 || sc[1] == 0 || sc[2] == 0)
			return fail_at(f, API_INVALID_REQUEST, &ps, "components must not be zero");
	}
	if (xform_from_trs(pos, q, sc, xf) != CORE_OK)
		return fail_at(f, API_INVALID_REQUEST, p, "not a valid placement");
	return API_OK;
}

struct box_fields {
	struct fval id, center, half_extents, rotation, axes;
};
static const struct field box_rows[] = {
	{ "id", FIELD_STRING, 0, offsetof(struct box_fields, id), NULL },
	{ "center", FIELD_VEC3, 1, offsetof(struct box_fields, center), NULL },
	{ "half_extents", FIELD_VEC3, 1, offsetof(struct box_fields, half_extents), NULL },
	{ "rotation", FIELD_RAW, 0, offsetof(struct box_fields, rotation), NULL },
	{ "axes", FIELD_RAW, 0, offsetof(struct box_fields, axes), NULL },
};

enum api_err decode_box(const cJSON *v, const struct jpath *p, struct obb *box,
			       const char **id, struct api_fail *f)
{
	struct jpath pr = { p, "rotation", 0 }, pa = { p, "axes", 0 };
	double q[4] = { 1, 0, 0, 0 };
	struct box_fields b;
	const double *half = b.half_extents.v;
	const cJSON *c;
	enum api_err e;

	e = fields_decode(v, p, box_rows, FIELD_COUNT(box_rows), &b, f);
	if (e)
		return e;
	*id = b.id.s;
	if (half[0] < 0 || half[1] < 0 || half[2] < 0) {
		struct jpath ph = { p, "half_extents", 0 };

		return fail_at(f, API_INVALID_REQUEST, &ph, "components must be >= 0");
	}
	if (b.rotation.given && b.axes.given)
		return fail_at(f, API_INVALID_REQUEST, p, "give rotation or axes, not both");
	if (b.axes.given) {
		vec3 axes[3];
		size_t k = 0;

		if (!cJSON_IsArray(b.axes.raw) || cJSON_GetArraySize(b.axes.raw) != 3)
			return fail_at(f, API_INVALID_REQUEST, &pa, "must be 3 vectors");
		for (c = b.axes.raw->child; c; c = c->next, k++) {
			struct jpath pk = { &pa, NULL, k };
			double a[3];

			e = read_vec3(c, &pk, a, f);
			if (e)
				return e;
			axes[k] = vec3_from(a);
		}
		if (obb_from_axes(vec3_from(b.center.v), vec3_from(half), axes, box) != CORE_OK)
			return fail_at(f, API_INVALID_REQUEST, &pa,
				       "must be 3 orthonormal unit vectors");
		return API_OK;
	}
	if (b.rotation.given) {
		e = read_quat(b.rotation.raw, &pr, q, f);
		if (e)
			return e;
	}
	if (obb_from_quat(vec3_from(b.center.v), vec3_from(half), q, box) != CORE_OK)
		return fail_at(f, API_INVALID_REQUEST, p, "not a valid box");
	return API_OK;
}

static void box_list_release(struct box_list *l)
{
	free(l->boxes);
	free(l->ids);
	l->boxes = NULL;
	l->ids = NULL;
	l->n = 0;
}

/* "boxes": [box, ...] (NULL: none). */
static enum api_err decode_boxes(const cJSON *v, const struct api_limits *lim, struct box_list *l,
				 struct api_fail *f)
{
	struct jpath p = { NULL, "boxes", 0 };
	const cJSON *c;
	size_t n, k = 0;
	enum api_err e;

	l->n = 0;
	l->boxes = NULL;
	l->ids = NULL;
	if (!v)
		return API_OK;
	e = read_array(v, &p, "an array of boxes", lim->max_boxes, "boxes", &n, f);
	if (e || n == 0)
		return e;
	l->boxes = calloc(n, sizeof(*l->boxes));
	l->ids = calloc(n, sizeof(*l->ids));
	if (!l->boxes || !l->ids) {
		box_list_release(l);
		return api_fail_set(f, API_INTERNAL, "out of memory");
	}
	for (c = v->child; c; c = c->next, k++) {
		struct jpath pk = { &p, NULL, k };

		e = decode_box(c, &pk, &l->boxes[k], &l->ids[k], f);
		if (e) {
			box_list_release(l);
			return e;
		}
	}
	l->n = n;
	return API_OK;
}

/* The members of a query's top level that say which rays it casts. */
struct rays_fields {
	struct fval origin, direction, max_distance, start, end, batch;
};

/*
 * The rays of q: one from the top-level members (origin, direction,
 * max_distance / start, end) or many from rf->batch (q->items: "rays",
 * "segments", "shots"), never both. q->rays is calloc'd (also for one ray).
 */
static enum api_err decode_rays(const cJSON *root, const struct rays_fields *rf,
				const struct api_limits *lim, struct query *q, struct api_fail *f)
{
	struct jpath pb = { NULL, q->items, 0 };
	const cJSON *c, *batch = rf->batch.raw;
	size_t n, k = 0;
	enum api_err e;
	int given = rf->origin.given || rf->direction.given || rf->max_distance.given ||
		    rf->start.given || rf->end.given;

	if (batch && given)
		return fail_at(f, API_INVALID_REQUEST, NULL, "give %s or %s, not both",
			       q->segments ? "start/end" : "origin/direction/max_distance", q->items);
	q->batch = batch != NULL;
	if (!batch) {
		q->rays = calloc(1, sizeof(*q->rays));
		if (!q->rays)
			return api_fail_set(f, API_INTERNAL, "out of memory");
		e = q->segments ? decode_segment(root, NULL, 0, q->rays, f)
				: decode_ray(root, NULL, 0, q->rays, f);
		if (e)
			return e;
		q->n = 1;
		return API_OK;
	}
	e = read_array(batch, &pb, "an array", lim->max_batch, "entries", &n, f);
	if (e || n == 0)
		return e;
	q->rays = calloc(n, sizeof(*q->rays));
	if (!q->rays)
		return api_fail_set(f, API_INTERNAL, "out of memory");
	for (c = batch->child; c; c = c->next, k++) {
		struct jpath pk = { &pb, NULL, k };

		e = q->segments ? decode_segment(c, &pk, 1, &q->rays[k], f)
				: decode_ray(c, &pk, 1, &q->rays[k], f);
		if (e)
			return e;
	}
	q->n = n;
	return API_OK;
}

void query_release(struct query *q)
{
	free(q->rays);
	box_list_release(&q->boxes);
	memset(q, 0, sizeof(*q));
}

/* Finish a decoder: on failure nothing is left to release. */
static enum api_err query_done(struct query *q, enum api_err e)
{
	if (e)
		query_release(q);
	return e;
}

#define RAYS_ROWS(s) \
	{ "origin", FIELD_RAW, 0, offsetof(s, r.origin), NULL }, \
	{ "direction", FIELD_RAW, 0, offsetof(s, r.direction), NULL }, \
	{ "max_distance", FIELD_RAW, 0, offsetof(s, r.max_distance), NULL }

struct rayq_fields {
	struct rays_fields r;
	struct fval mode, max_hits, backfaces, transform;
};
static const struct field rayq_rows[] = {
	RAYS_ROWS(struct rayq_fields),
	{ "rays", FIELD_RAW, 0, offsetof(struct rayq_fields, r.batch), NULL },
	{ "mode", FIELD_ENUM, 0, offsetof(struct rayq_fields, mode), mode_names },
	{ "max_hits", FIELD_RAW, 0, offsetof(struct rayq_fields, max_hits), NULL },
	{ "backfaces", FIELD_RAW, 0, offsetof(struct rayq_fields, backfaces), NULL },
	{ "transform", FIELD_RAW, 0, offsetof(struct rayq_fields, transform), NULL },
};
static const struct field segq_rows[] = {
	{ "start", FIELD_RAW, 0, offsetof(struct rayq_fields, r.start), NULL },
	{ "end", FIELD_RAW, 0, offsetof(struct rayq_fields, r.end), NULL },
	{ "segments", FIELD_RAW, 0, offsetof(struct rayq_fields, r.batch), NULL },
	{ "mode", FIELD_ENUM, 0, offsetof(struct rayq_fields, mode), mode_names },
	{ "max_hits", FIELD_RAW, 0, offsetof(struct rayq_fields, max_hits), NULL },
	{ "backfaces", FIELD_RAW, 0, offsetof(struct rayq_fields, backfaces), NULL },
	{ "transform", FIELD_RAW, 0, offsetof(struct rayq_fields, transform), NULL },
};

/* mode (read), then max_hits (only with mode all) and backfaces, in that
 * order, into q->opts. */
static enum api_err set_opts(struct query *q, int mode, const cJSON *max_hits,
			     const cJSON *backfaces, struct api_fail *f)
{
	struct jpath phits = { NULL, "max_hits", 0 }, pface = { NULL, "backfaces", 0 };
	size_t hits = RAY_MAX_HITS_DEFAULT;
	enum api_err e;
	int cull = 0;

	if (max_hits) {
		if (mode != HIT_ALL)
			return fail_at(f, API_INVALID_REQUEST, &phits, "only with mode \"all\"");
		e = read_uint(max_hits, &phits, 1, RAY_MAX_HITS_CAP, &hits, f);
		if (e)
			return e;
	}
	if (backfaces) {
		e = read_enum(backfaces, &pface, face_names, &cull, f);
		if (e)
			return e;
	}
	q->opts.mode = (enum hit_mode)mode;
	q->opts.cull_backfaces = cull;
	q->opts.max_hits = mode == HIT_ALL ? (uint32_t)hits : 1;
	return API_OK;
}

enum api_err query_set_opts(struct query *q, const cJSON *mode, const cJSON *max_hits,
			    const cJSON *backfaces, struct api_fail *f)
{
	struct jpath pmode = { NULL, "mode", 0 };
	int m = HIT_CLOSEST;
	enum api_err e;

	if (mode && (e = read_enum(mode, &pmode, mode_names, &m, f)))
		return e;
	return set_opts(q, m, max_hits, backfaces, f);
}

static enum api_err decode_mesh_query(const cJSON *root, int segments,
				      const struct api_limits *lim, struct query *q,
				      struct api_fail *f)
{
	struct jpath pxf = { NULL, "transform", 0 };
	struct rayq_fields rf;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	memset(&rf, 0, sizeof(rf));
	q->segments = segments;
	q->items = segments ? "segments" : "rays";
	e = segments ? fields_decode(root, NULL, segq_rows, FIELD_COUNT(segq_rows), &rf, f)
		     : fields_decode(root, NULL, rayq_rows, FIELD_COUNT(rayq_rows), &rf, f);
	if (!e)
		e = set_opts(q, rf.mode.e, rf.max_hits.raw, rf.backfaces.raw, f);
	if (!e && rf.transform.given) {
		e = decode_xform(rf.transform.raw, &pxf, &q->xf, f);
		q->has_xform = !e;
	}
	if (!e)
		e = decode_rays(root, &rf.r, lim, q, f);
	return query_done(q, e);
}

enum api_err decode_ray_query(const cJSON *root, const struct api_limits *lim,
			      struct query *q, struct api_fail *f)
{
	return decode_mesh_query(root, 0, lim, q, f);
}

enum api_err decode_segment_query(const cJSON *root, const struct api_limits *lim,
				  struct query *q, struct api_fail *f)
{
	return decode_mesh_query(root, 1, lim, q, f);
}

struct obbq_fields {
	struct rays_fields r;
	struct fval boxes;
};
#define OBB_BOXES_ROW { "boxes", FIELD_RAW, 1, offsetof(struct obbq_fields, boxes), NULL }
static const struct field obbq_rows[] = {
	RAYS_ROWS(struct obbq_fields),
	{ "rays", FIELD_RAW, 0, offsetof(struct obbq_fields, r.batch), NULL },
	OBB_BOXES_ROW,
};
static const struct field obbq_target_rows[] = { OBB_BOXES_ROW };

enum api_err decode_obb_query(const cJSON *root, const struct api_limits *lim,
			      struct query *q, struct api_fail *f)
{
	struct obbq_fields of;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	memset(&of, 0, sizeof(of));
	q->items = "rays";
	e = fields_decode(root, NULL, obbq_rows, FIELD_COUNT(obbq_rows), &of, f);
	if (!e)
		e = decode_rays(root, &of.r, lim, q, f);
	if (!e)
		e = decode_boxes(of.boxes.raw, lim, &q->boxes, f);
	return query_done(q, e);
}

enum api_err decode_obb_targets(const cJSON *root, const struct api_limits *lim,
				struct query *q, struct api_fail *f)
{
	struct obbq_fields of;
	enum api_err e;

	memset(&of, 0, sizeof(of));
	e = fields_decode(root, NULL, obbq_target_rows, FIELD_COUNT(obbq_target_rows), &of, f);
	if (!e)
		e = decode_boxes(of.boxes.raw, lim, &q->boxes, f);
	return e;
}

struct hitq_fields {
	struct rays_fields r;
	struct fval mesh, transform, boxes;
};
/* what a hitscan's shots are cast against */
#define HITSCAN_TARGET_ROWS \
	{ "mesh", FIELD_NAME, 0, offsetof(struct hitq_fields, mesh), NULL }, \
	{ "transform", FIELD_RAW, 0, offsetof(struct hitq_fields, transform), NULL }, \
	{ "boxes", FIELD_RAW, 0, offsetof(struct hitq_fields, boxes), NULL }
static const struct field hitq_rows[] = {
	RAYS_ROWS(struct hitq_fields),
	{ "shots", FIELD_RAW, 0, offsetof(struct hitq_fields, r.batch), NULL },
	HITSCAN_TARGET_ROWS,
};
static const struct field hitq_target_rows[] = { HITSCAN_TARGET_ROWS };

/* A hitscan's defaults, then its mesh and transform (a transform only with
 * a mesh) from hf into q. */
static enum api_err hitscan_mesh(const struct hitq_fields *hf, struct query *q,
				 struct api_fail *f)
{
	struct jpath pxf = { NULL, "transform", 0 };
	enum api_err e;

	q->items = "shots";
	q->opts.mode = HIT_CLOSEST;
	q->opts.max_hits = 1;
	q->mesh = hf->mesh.s;
	if (!hf->transform.given)
		return API_OK;
	if (!q->mesh)
		return fail_at(f, API_INVALID_REQUEST, &pxf, "only with mesh");
	e = decode_xform(hf->transform.raw, &pxf, &q->xf, f);
	q->has_xform = !e;
	return e;
}

enum api_err decode_hitscan_query(const cJSON *root, const struct api_limits *lim,
				  struct query *q, struct api_fail *f)
{
	struct hitq_fields hf;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	memset(&hf, 0, sizeof(hf));
	e = fields_decode(root, NULL, hitq_rows, FIELD_COUNT(hitq_rows), &hf, f);
	if (!e)
		e = hitscan_mesh(&hf, q, f);
	if (!e)
		e = decode_rays(root, &hf.r, lim, q, f);
	if (!e)
		e = decode_boxes(hf.boxes.raw, lim, &q->boxes, f);
	return query_done(q, e);
}

enum api_err decode_hitscan_targets(const cJSON *root, const struct api_limits *lim,
				    struct query *q, struct api_fail *f)
{
	struct hitq_fields hf;
	enum api_err e;

	memset(&hf, 0, sizeof(hf));
	e = fields_decode(root, NULL, hitq_target_rows, FIELD_COUNT(hitq_target_rows), &hf, f);
	if (!e)
		e = hitscan_mesh(&hf, q, f);
	if (!e)
		e = decode_boxes(hf.boxes.raw, lim, &q->boxes, f);
	return e;
}

struct overlap_fields {
	struct fval box, limit;
};
static const struct field overlap_rows[] = {
	{ "box", FIELD_RAW, 1, offsetof(struct overlap_fields, box), NULL },
	{ "limit", FIELD_RAW, 0, offsetof(struct overlap_fields, limit), NULL },
};

enum api_err decode_overlap_query(const cJSON *root, struct overlap_query *q, struct api_fail *f)
{
	struct jpath pb = { NULL, "box", 0 }, pl = { NULL, "limit", 0 };
	struct overlap_fields of;
	const char *id;
	enum api_err e;

	memset(q, 0, sizeof(*q));
	e = fields_decode(root, NULL, overlap_rows, FIELD_COUNT(overlap_rows), &of, f);
	if (e)
		return e;
	e = decode_box(of.box.raw, &pb, &q->box, &id, f);
	if (e)
		return e;
	q->limit = OVERLAP_LIMIT_DEFAULT;
	if (of.limit.given)
		return read_uint(of.limit.raw, &pl, 0, MESH_MAX_TRIANGLES, &q->limit, f);
	return API_OK;
}
