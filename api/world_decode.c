/* world_decode.c - strict decoding of the /v1/worlds bodies (see
 * world_decode.h): field tables and the shared readers of decode_fields.h,
 * with the worlds' own values from world_fields.h. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "decode_fields.h"
#include "world_decode.h"
#include "world_fields.h"
#include "xform.h"

/* ---- PUT /v1/worlds/{world} */

void world_put_req_release(struct world_put_req *q)
{
	free(q->inst);
	memset(q, 0, sizeof(*q));
}

struct inst_fields {
	struct fval id, mesh, transform, layer;
};
static const struct field inst_rows[] = {
	{ "id", FIELD_RAW, 0, offsetof(struct inst_fields, id), NULL },
	{ "mesh", FIELD_RAW, 0, offsetof(struct inst_fields, mesh), NULL },
	{ "transform", FIELD_RAW, 0, offsetof(struct inst_fields, transform), NULL },
	{ "layer", FIELD_RAW, 0, offsetof(struct inst_fields, layer), NULL },
};

static enum api_err decode_instance(const cJSON *v, const struct jpath *p,
				    struct world_instance_in *in, struct api_fail *f)
{
	struct jpath pi = { p, "id", 0 }, pt = { p, "transform", 0 }, pl = { p, "layer", 0 };
	struct inst_fields x;
	enum api_err e;

	if ((e = fields_decode(v, p, inst_rows, FIELD_COUNT(inst_rows), &x, f)) ||
	    (e = wf_id(x.id.raw, &pi, &in->id, f)) || (e = wf_mesh(v, p, &in->mesh, f)))
		return e;
	if ((e = wf_placement(x.transform.raw, &pt, 1, &in->xf, NULL, f)))
		return e;
	return wf_layer(x.layer.raw, &pl, &in->layer, f);
}

struct world_fields {
	struct fval stat, history_ms, teleport_distance;
};
static const struct field world_rows[] = {
	{ "static", FIELD_RAW, 0, offsetof(struct world_fields, stat), NULL },
	{ "history_ms", FIELD_RAW, 0, offsetof(struct world_fields, history_ms), NULL },
	{ "teleport_distance", FIELD_RAW, 0, offsetof(struct world_fields, teleport_distance), NULL },
};

enum api_err decode_world_put(const cJSON *root, const struct api_world_limits *lim,
			      struct world_put_req *q, struct api_fail *f)
{
	struct jpath ps = { NULL, "static", 0 }, ph = { NULL, "history_ms", 0 };
	struct jpath pt = { NULL, "teleport_distance", 0 };
	struct world_fields x;
	const cJSON *c;
	enum api_err e;
	size_t i = 0;

	memset(q, 0, sizeof(*q));
	q->history_ms = WORLD_HISTORY_MS_DEFAULT;
	q->teleport_distance = WORLD_TELEPORT_DEFAULT;
	if ((e = fields_decode(root, NULL, world_rows, FIELD_COUNT(world_rows), &x, f)))
		return e;
	if (x.history_ms.given && (!num_ok(x.history_ms.raw, &q->history_ms) ||
				   !(q->history_ms > 0) || q->history_ms > WORLD_HISTORY_MS_MAX))
		return fail_at(f, API_INVALID_REQUEST, &ph, "must be a number in (0, %.0f]",
			       WORLD_HISTORY_MS_MAX);
	if (x.teleport_distance.given &&
	    (!num_ok(x.teleport_distance.raw, &q->teleport_distance) || q->teleport_distance < 0))
		return fail_at(f, API_INVALID_REQUEST, &pt, "must be a number >= 0");
	if (!x.stat.given)
		return API_OK;
	if ((e = read_array(x.stat.raw, &ps, "an array of instances", lim->max_instances,
			    "instances", &q->n, f))) {
		q->n = 0;
		return e;
	}
	q->inst = calloc(q->n ? q->n : 1, sizeof(*q->inst));
	if (!q->inst) {
		q->n = 0;
		return fail_at(f, API_INTERNAL, NULL, "out of memory");
	}
	for (c = x.stat.raw->child; c; c = c->next, i++) {
		struct jpath pi = { &ps, NULL, i };

		if ((e = decode_instance(c, &pi, &q->inst[i], f))) {
			world_put_req_release(q);
			return e;
		}
	}
	return API_OK;
}

/* ---- POST /v1/worlds/{world}/snapshots */

void snapshot_req_release(struct snapshot_req *q)
{
	free(q->ents);
	free(q->hbs);
	free(q->ids);
	free(q->ids_more);
	memset(q, 0, sizeof(*q));
}

static enum api_err decode_hitbox(const cJSON *v, const struct jpath *p, struct hitbox_in *h,
				  struct api_fail *f)
{
	struct jpath kp[HB_NKEYS];
	struct fval x[HB_NKEYS];
	const cJSON *fl[HB_NKEYS];
	enum api_err e;
	int k, shape;

	for (k = 0; k < HB_NKEYS; k++)
		kp[k] = (struct jpath){ p, wf_hb_rows[k].key, 0 };
	if ((e = fields_decode(v, p, wf_hb_rows, HB_NKEYS, x, f)))
		return e;
	for (k = 0; k < HB_NKEYS; k++)
		fl[k] = x[k].raw;	/* NULL when absent or null */
	if ((e = wf_id(fl[HB_ID], &kp[HB_ID], &h->id, f)))
		return e;
	if (!fl[HB_SHAPE])
		return fail_at(f, API_INVALID_REQUEST, &kp[HB_SHAPE], "required");
	if ((e = read_enum(fl[HB_SHAPE], &kp[HB_SHAPE], wf_shape_names, &shape, f)))
		return e;
	for (k = HB_CENTER; k < HB_NKEYS; k++)
		if (fl[k] && !(wf_shape_fields[shape] & (1u << k)))
			return fail_at(f, API_INVALID_REQUEST, &kp[k], "not a field of a %s hitbox",
				       wf_shape_names[shape]);
	h->shape = (enum hitbox_shape)shape;
	h->rot[0] = 1;
	h->size = v3(1, 1, 1);
	switch (h->shape) {
	case HITBOX_SPHERE:
		if ((e = wf_vec3f(fl[HB_CENTER], &kp[HB_CENTER], &h->a, f)) ||
		    (e = wf_radius(fl[HB_RADIUS], &kp[HB_RADIUS], &h->radius, f)))
			return e;
		break;
	case HITBOX_CAPSULE:
		if ((e = wf_vec3f(fl[HB_A], &kp[HB_A], &h->a, f)) ||
		    (e = wf_vec3f(fl[HB_B], &kp[HB_B], &h->b, f)) ||
		    (e = wf_radius(fl[HB_RADIUS], &kp[HB_RADIUS], &h->radius, f)))
			return e;
		break;
	case HITBOX_BOX:
		if ((e = wf_vec3f(fl[HB_CENTER], &kp[HB_CENTER], &h->a, f)) ||
		    (e = wf_vec3f(fl[HB_HALF], &kp[HB_HALF], &h->size, f)))
			return e;
		if (!wf_half_extents_ok(h->size))
			return fail_at(f, API_INVALID_REQUEST, &kp[HB_HALF], "components must be >= 0");
		if (fl[HB_ROT] && (e = wf_quat(fl[HB_ROT], &kp[HB_ROT], h->rot, f)))
			return e;
		break;
	case HITBOX_MESH: {
		struct xform xf;

		if ((e = wf_mesh(v, p, &h->mesh, f)) ||
		    (e = wf_placement(fl[HB_XFORM], &kp[HB_XFORM], 0, &xf, h, f)))
			return e;
		break;
	}
	}
	return API_OK;
}

struct ent_fields {
	struct fval id, layer, hitboxes;
};
static const struct field ent_rows[] = {
	{ "id", FIELD_RAW, 0, offsetof(struct ent_fields, id), NULL },
	{ "layer", FIELD_RAW, 0, offsetof(struct ent_fields, layer), NULL },
	{ "hitboxes", FIELD_RAW, 0, offsetof(struct ent_fields, hitboxes), NULL },
};

static enum api_err decode_entity(const cJSON *v, const struct jpath *p, struct entity_in *e_out,
				  struct hitbox_in *hbs, struct api_fail *f)
{
	struct jpath pi = { p, "id", 0 }, pl = { p, "layer", 0 }, ph = { p, "hitboxes", 0 };
	struct ent_fields x;
	const cJSON *c;
	enum api_err e;
	size_t k = 0;

	e_out->hitboxes = hbs;
	e_out->n = 0;
	if ((e = fields_decode(v, p, ent_rows, FIELD_COUNT(ent_rows), &x, f)) ||
	    (e = wf_id(x.id.raw, &pi, &e_out->id, f)) ||
	    (e = wf_layer(x.layer.raw, &pl, &e_out->layer, f)))
		return e;
	if (!x.hitboxes.given)	/* an array: decode_snapshot checked while counting */
		return fail_at(f, API_INVALID_REQUEST, &ph, "required");
	for (c = x.hitboxes.raw->child; c; c = c->next, k++) {
		struct jpath pk = { &ph, NULL, k };

		if ((e = decode_hitbox(c, &pk, &hbs[k], f)))
			return e;
	}
	e_out->n = k;
	return API_OK;
}

struct snap_fields {
	struct fval tick, time_ms, entities;
};
static const struct field snap_rows[] = {
	{ "tick", FIELD_RAW, 0, offsetof(struct snap_fields, tick), NULL },
	{ "time_ms", FIELD_RAW, 0, offsetof(struct snap_fields, time_ms), NULL },
	{ "entities", FIELD_RAW, 0, offsetof(struct snap_fields, entities), NULL },
};

/* The snapshot's entities and their hitboxes, counted before anything is
 * allocated; a hitboxes member that is not an array fails here. */
static enum api_err count_entities(const cJSON *ents, const struct jpath *pe,
				   const struct api_world_limits *lim, struct snapshot_req *q,
				   struct api_fail *f)
{
	enum api_err e;
	const cJSON *c;
	size_t i = 0;

	if ((e = read_array(ents, pe, "an array of entities", 0, "entities", &q->n, f)))
		return e;
	for (c = ents->child; c; c = c->next, i++) {
		const cJSON *hb = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, "hitboxes") : NULL;
		struct jpath pi = { pe, NULL, i }, ph = { &pi, "hitboxes", 0 };

		if (hb && !cJSON_IsNull(hb) && !cJSON_IsArray(hb))
			return fail_at(f, API_INVALID_REQUEST, &ph, "must be an array of hitboxes");
		if (hb && cJSON_IsArray(hb))
			q->nhb += (size_t)cJSON_GetArraySize(hb);
	}
	if (lim->max_entities && q->n > lim->max_entities)
		return fail_at(f, API_PAYLOAD_TOO_LARGE, pe, "%zu entities, the limit is %zu", q->n,
			       lim->max_entities);
	if (lim->max_hitboxes && q->nhb > lim->max_hitboxes)
		return fail_at(f, API_PAYLOAD_TOO_LARGE, pe, "%zu hitboxes in all, the limit is %zu",
			       q->nhb, lim->max_hitboxes);
	return API_OK;
}

enum api_err decode_snapshot(const cJSON *root, const struct api_world_limits *lim,
			     struct snapshot_req *q, struct api_fail *f)
{
	struct jpath pk = { NULL, "tick", 0 }, pt = { NULL, "time_ms", 0 };
	struct jpath pe = { NULL, "entities", 0 };
	struct snap_fields x;
	const cJSON *c;
	enum api_err e;
	double tick;
	size_t i = 0, at = 0;

	memset(q, 0, sizeof(*q));
	if ((e = fields_decode(root, NULL, snap_rows, FIELD_COUNT(snap_rows), &x, f)))
		return e;
	/* required in table order, each checked as it is read */
	if (!x.tick.given)
		return fail_at(f, API_INVALID_REQUEST, &pk, "required");
	if (!num_ok(x.tick.raw, &tick) || !wf_tick_ok(tick))
		return fail_at(f, API_INVALID_REQUEST, &pk, "must be an integer in [0, 2^53 - 1]");
	if (!x.time_ms.given)
		return fail_at(f, API_INVALID_REQUEST, &pt, "required");
	if (!num_ok(x.time_ms.raw, &q->time_ms))
		return fail_at(f, API_INVALID_REQUEST, &pt, "must be a finite number");
	q->tick = (uint64_t)tick;
	if (!x.entities.given)
		return fail_at(f, API_INVALID_REQUEST, &pe, "required");
	if ((e = count_entities(x.entities.raw, &pe, lim, q, f))) {
		memset(q, 0, sizeof(*q));
		return e;
	}
	q->ents = calloc(q->n ? q->n : 1, sizeof(*q->ents));
	q->hbs = calloc(q->nhb ? q->nhb : 1, sizeof(*q->hbs));
	if (!q->ents || !q->hbs) {
		snapshot_req_release(q);
		return fail_at(f, API_INTERNAL, NULL, "out of memory");
	}
	for (c = x.entities.raw->child; c; c = c->next, i++) {
		struct jpath pi = { &pe, NULL, i };

		if ((e = decode_entity(c, &pi, &q->ents[i], q->hbs + at, f))) {
			snapshot_req_release(q);
			return e;
		}
		at += q->ents[i].n;
	}
	return API_OK;
}

/* ---- POST /v1/worlds/{world}/hitscan and /raycast */

void world_shots_req_release(struct world_shots_req *q)
{
	free(q->shots);
	free(q->ignore);
	free(q->ids);
	free(q->ids_more);
	memset(q, 0, sizeof(*q));
}

/* A shot's members (shot_rows); the top level (top_rows) has one shot's
 * keys, read raw there and by decode_shot, and its own three. */
struct shot_fields {
	struct fval origin, direction, max_distance, time_ms, ignore, layers;
	struct fval shots, mode, max_hits;	/* top level only */
};
static const struct field shot_rows[] = {
	{ "origin", FIELD_VEC3, 1, offsetof(struct shot_fields, origin), NULL },
	{ "direction", FIELD_DIR, 1, offsetof(struct shot_fields, direction), NULL },
	{ "max_distance", FIELD_POSITIVE, 0, offsetof(struct shot_fields, max_distance), NULL },
	{ "time_ms", FIELD_RAW, 0, offsetof(struct shot_fields, time_ms), NULL },
	{ "ignore", FIELD_RAW, 0, offsetof(struct shot_fields, ignore), NULL },
	{ "layers", FIELD_RAW, 0, offsetof(struct shot_fields, layers), NULL },
};

/* One shot from the members of obj at p; check: obj is a batch element,
 * whose keys are checked here (the top level checks its own). Its ignore
 * ids are appended to q->ignore at *at. */
static enum api_err decode_shot(const cJSON *obj, const struct jpath *p, int check,
				struct world_shot *s, struct world_shots_req *q, size_t *at,
				struct api_fail *f)
{
	struct jpath pd = { p, "direction", 0 }, pt = { p, "time_ms", 0 };
	struct jpath pl = { p, "layers", 0 }, pg = { p, "ignore", 0 };
	struct shot_fields x;
	enum api_err e;
	const cJSON *c;
	size_t i = 0;

	memset(s, 0, sizeof(*s));
	e = check ? fields_decode(obj, p, shot_rows, FIELD_COUNT(shot_rows), &x, f)
		  : fields_read(obj, p, shot_rows, FIELD_COUNT(shot_rows), &x, f);
	if (e)
		return e;
	if (wf_shot_ray(x.origin.v, x.direction.v,
			x.max_distance.given ? &x.max_distance.v[0] : NULL, s))
		return fail_at(f, API_INVALID_REQUEST, &pd, "must not be zero");
	if (x.time_ms.given) {
		if (!num_ok(x.time_ms.raw, &s->time_ms))
			return fail_at(f, API_INVALID_REQUEST, &pt, "must be a finite number");
		s->has_time = 1;
	}
	s->layers = WORLD_LAYERS_ALL;
	if (x.layers.given) {
		if (!cJSON_IsArray(x.layers.raw))
			return fail_at(f, API_INVALID_REQUEST, &pl, "must be an array of layers 0-31");
		s->layers = 0;
		for (c = x.layers.raw->child; c; c = c->next, i++) {
			struct jpath pi = { &pl, NULL, i };
			uint32_t layer;

			if ((e = wf_layer(c, &pi, &layer, f)))
				return e;
			s->layers |= 1u << layer;
		}
	}
	if (x.ignore.given) {
		if (!cJSON_IsArray(x.ignore.raw))
			return fail_at(f, API_INVALID_REQUEST, &pg, "must be an array of entity ids");
		s->ignore = q->ignore + *at;
		for (i = 0, c = x.ignore.raw->child; c; c = c->next, i++) {
			struct jpath pi = { &pg, NULL, i };

			if ((e = wf_id(c, &pi, &q->ignore[*at], f)))
				return e;
			(*at)++;
		}
		s->nignore = i;
	}
	return API_OK;
}

/* ignore ids a shot object holds, for the one allocation */
static enum api_err count_ignore(const cJSON *shot, const struct jpath *p, size_t *total,
				 struct api_fail *f)
{
	const cJSON *ig = cJSON_IsObject(shot) ? cJSON_GetObjectItemCaseSensitive(shot, "ignore") : NULL;
	struct jpath pi = { p, "ignore", 0 };
	size_t n;

	if (!ig || !cJSON_IsArray(ig))
		return API_OK;
	n = (size_t)cJSON_GetArraySize(ig);
	if (n > WORLD_IGNORE_MAX)
		return fail_at(f, API_INVALID_REQUEST, &pi, "at most %d ids", WORLD_IGNORE_MAX);
	*total += n;
	return API_OK;
}

/* The shots' count into q->n and their ignore ids into *nign. */
static enum api_err count_shots(const cJSON *root, const struct shot_fields *x,
				const struct api_limits *lim, struct world_shots_req *q,
				size_t *nign, struct api_fail *f)
{
	struct jpath ps = { NULL, "shots", 0 };
	enum api_err e;
	const cJSON *c;
	size_t i = 0;

	if (!x->shots.given) {
		q->n = 1;
		return count_ignore(root, NULL, nign, f);
	}
	q->batch = 1;
	if ((e = read_array(x->shots.raw, &ps, "an array of shots", lim->max_batch, "shots", &q->n,
			    f)))
		return e;
	if (q->n == 0)
		return fail_at(f, API_INVALID_REQUEST, &ps, "must not be empty");
	for (c = x->shots.raw->child; c; c = c->next, i++) {
		struct jpath pi = { &ps, NULL, i };

		if ((e = count_ignore(c, &pi, nign, f)))
			return e;
	}
	return API_OK;
}

/* the top level: one shot's keys (read by decode_shot) and its own */
#define TOP_ROW(m) { #m, FIELD_RAW, 0, offsetof(struct shot_fields, m), NULL }
static const struct field top_rows[] = {
	TOP_ROW(origin), TOP_ROW(direction), TOP_ROW(max_distance), TOP_ROW(time_ms),
	TOP_ROW(ignore), TOP_ROW(layers), TOP_ROW(shots), TOP_ROW(mode), TOP_ROW(max_hits),
};

enum api_err decode_world_shots(const cJSON *root, const struct api_limits *lim, int static_only,
				struct world_shots_req *q, struct api_fail *f)
{
	struct jpath ps = { NULL, "shots", 0 };
	size_t i = 0, nign = 0, at = 0;
	struct shot_fields x;
	const cJSON *c;
	enum api_err e;
	int single;

	memset(q, 0, sizeof(*q));
	if ((e = fields_decode(root, NULL, top_rows, FIELD_COUNT(top_rows), &x, f)) ||
	    (e = wf_mode(x.mode.raw, x.max_hits.raw, static_only, &q->mode, &q->max_hits, f)))
		goto fail;
	single = x.origin.given || x.direction.given || x.max_distance.given ||
		 x.time_ms.given || x.ignore.given || x.layers.given;
	if (x.shots.given && single) {
		e = fail_at(f, API_INVALID_REQUEST, NULL,
			    "give \"shots\" or one shot's fields at the top level, not both");
		goto fail;
	}
	if ((e = count_shots(root, &x, lim, q, &nign, f)))
		goto fail;
	q->shots = malloc(q->n * sizeof(*q->shots));
	q->ignore = malloc((nign ? nign : 1) * sizeof(*q->ignore));
	if (!q->shots || !q->ignore) {
		e = fail_at(f, API_INTERNAL, NULL, "out of memory");
		goto fail;
	}
	if (!q->batch)
		e = decode_shot(root, NULL, 0, &q->shots[0], q, &at, f);
	for (c = q->batch ? x.shots.raw->child : NULL; c && !e; c = c->next, i++) {
		struct jpath pi = { &ps, NULL, i };

		e = decode_shot(c, &pi, 1, &q->shots[i], q, &at, f);
	}
	if (!e)
		return API_OK;
fail:
	world_shots_req_release(q);
	return e;
}
