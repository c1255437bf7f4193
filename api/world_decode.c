/* world_decode.c - strict decoding of the /v1/worlds bodies (see world_decode.h). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world_decode.h"
#include "world_fields.h"

/* ---- PUT /v1/worlds/{world} */

void world_put_req_release(struct world_put_req *q)
{
	free(q->inst);
	memset(q, 0, sizeof(*q));
}

static enum api_err decode_instance(const cJSON *v, const struct wpath *p,
				    struct world_instance_in *in, struct api_fail *f)
{
	static const char *const keys[] = { "id", "mesh", "transform", "layer" };
	const cJSON *fl[4];
	struct wpath pi = { p, "id", 0 }, pm = { p, "mesh", 0 }, pt = { p, "transform", 0 };
	struct wpath pl = { p, "layer", 0 };
	enum api_err e;

	if ((e = wd_fields(v, p, keys, 4, fl, f)) || (e = wd_id(fl[0], &pi, &in->id, f)) ||
	    (e = wd_mesh_name(fl[1], &pm, &in->mesh, f)) ||
	    (e = wd_xform(fl[2], &pt, 1, &in->xf, NULL, NULL, NULL, f)) ||
	    (e = wd_layer(fl[3], &pl, &in->layer, f)))
		return e;
	return API_OK;
}

enum api_err decode_world_put(const cJSON *root, const struct api_world_limits *lim,
			      struct world_put_req *q, struct api_fail *f)
{
	static const char *const keys[] = { "static", "history_ms", "teleport_distance" };
	const cJSON *fl[3], *c;
	struct wpath ps = { NULL, "static", 0 }, ph = { NULL, "history_ms", 0 };
	struct wpath pt = { NULL, "teleport_distance", 0 };
	enum api_err e;
	size_t i = 0;

	memset(q, 0, sizeof(*q));
	q->history_ms = WORLD_HISTORY_MS_DEFAULT;
	q->teleport_distance = WORLD_TELEPORT_DEFAULT;
	if ((e = wd_fields(root, NULL, keys, 3, fl, f)))
		return e;
	if (fl[1] && (!wd_num(fl[1], &q->history_ms) || !(q->history_ms > 0) ||
		      q->history_ms > WORLD_HISTORY_MS_MAX))
		return wd_fail(f, API_INVALID_REQUEST, &ph, "must be a number in (0, %.0f]",
			    WORLD_HISTORY_MS_MAX);
	if (fl[2] && (!wd_num(fl[2], &q->teleport_distance) || q->teleport_distance < 0))
		return wd_fail(f, API_INVALID_REQUEST, &pt, "must be a number >= 0");
	if (!fl[0])
		return API_OK;
	if (!cJSON_IsArray(fl[0]))
		return wd_fail(f, API_INVALID_REQUEST, &ps, "must be an array of instances");
	q->n = wd_array_len(fl[0]);
	if (lim->max_instances && q->n > lim->max_instances) {
		e = wd_fail(f, API_PAYLOAD_TOO_LARGE, &ps, "%zu instances, the limit is %zu", q->n,
			 lim->max_instances);
		q->n = 0;
		return e;
	}
	q->inst = calloc(q->n ? q->n : 1, sizeof(*q->inst));
	if (!q->inst) {
		q->n = 0;
		return wd_fail(f, API_INTERNAL, NULL, "out of memory");
	}
	for (c = fl[0]->child; c; c = c->next, i++) {
		struct wpath pi = { &ps, NULL, i };

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
	memset(q, 0, sizeof(*q));
}

enum { HB_ID, HB_SHAPE, HB_CENTER, HB_RADIUS, HB_A, HB_B, HB_HALF, HB_ROT, HB_MESH, HB_XFORM, HB_NKEYS };

static const char *const hb_keys[HB_NKEYS] = { "id", "shape", "center", "radius", "a", "b",
					       "half_extents", "rotation", "mesh", "transform" };
static const char *const shape_names[] = { "sphere", "capsule", "box", "mesh" };
/* the fields each shape takes besides id and shape */
static const unsigned shape_fields[] = {
	[HITBOX_SPHERE] = 1u << HB_CENTER | 1u << HB_RADIUS,
	[HITBOX_CAPSULE] = 1u << HB_A | 1u << HB_B | 1u << HB_RADIUS,
	[HITBOX_BOX] = 1u << HB_CENTER | 1u << HB_HALF | 1u << HB_ROT,
	[HITBOX_MESH] = 1u << HB_MESH | 1u << HB_XFORM,
};

static enum api_err read_radius(const cJSON *v, const struct wpath *p, float *out,
				struct api_fail *f)
{
	double d;

	if (!v)
		return wd_fail(f, API_INVALID_REQUEST, p, "required");
	if (!wd_num(v, &d) || d < 0 || d > FLT_MAX)
		return wd_fail(f, API_INVALID_REQUEST, p, "must be a finite number >= 0");
	*out = (float)d;
	return API_OK;
}

static enum api_err decode_hitbox(const cJSON *v, const struct wpath *p, struct hitbox_in *h,
				  struct api_fail *f)
{
	const cJSON *fl[HB_NKEYS];
	struct wpath kp[HB_NKEYS];
	enum api_err e;
	int k, shape = -1;

	for (k = 0; k < HB_NKEYS; k++)
		kp[k] = (struct wpath){ p, hb_keys[k], 0 };
	if ((e = wd_fields(v, p, hb_keys, HB_NKEYS, fl, f)) || (e = wd_id(fl[HB_ID], &kp[HB_ID], &h->id, f)))
		return e;
	if (!fl[HB_SHAPE])
		return wd_fail(f, API_INVALID_REQUEST, &kp[HB_SHAPE], "required");
	for (k = 0; k < 4 && cJSON_IsString(fl[HB_SHAPE]); k++)
		if (strcmp(fl[HB_SHAPE]->valuestring, shape_names[k]) == 0)
			shape = k;
	if (shape < 0)
		return wd_fail(f, API_INVALID_REQUEST, &kp[HB_SHAPE],
			    "must be \"sphere\", \"capsule\", \"box\" or \"mesh\"");
	for (k = HB_CENTER; k < HB_NKEYS; k++)
		if (fl[k] && !(shape_fields[shape] & (1u << k)))
			return wd_fail(f, API_INVALID_REQUEST, &kp[k], "not a field of a %s hitbox",
				    shape_names[shape]);
	h->shape = (enum hitbox_shape)shape;
	h->rot[0] = 1;
	h->size = v3(1, 1, 1);
	switch (h->shape) {
	case HITBOX_SPHERE:
		if ((e = wd_vec3(fl[HB_CENTER], &kp[HB_CENTER], &h->a, f)) ||
		    (e = read_radius(fl[HB_RADIUS], &kp[HB_RADIUS], &h->radius, f)))
			return e;
		break;
	case HITBOX_CAPSULE:
		if ((e = wd_vec3(fl[HB_A], &kp[HB_A], &h->a, f)) ||
		    (e = wd_vec3(fl[HB_B], &kp[HB_B], &h->b, f)) ||
		    (e = read_radius(fl[HB_RADIUS], &kp[HB_RADIUS], &h->radius, f)))
			return e;
		break;
	case HITBOX_BOX:
		if ((e = wd_vec3(fl[HB_CENTER], &kp[HB_CENTER], &h->a, f)) ||
		    (e = wd_vec3(fl[HB_HALF], &kp[HB_HALF], &h->size, f)))
			return e;
		if (h->size.x < 0 || h->size.y < 0 || h->size.z < 0)
			return wd_fail(f, API_INVALID_REQUEST, &kp[HB_HALF], "components must be >= 0");
		if (fl[HB_ROT] && (e = wd_quat(fl[HB_ROT], &kp[HB_ROT], h->rot, f)))
			return e;
		break;
	case HITBOX_MESH: {
		struct xform xf;

		if ((e = wd_mesh_name(fl[HB_MESH], &kp[HB_MESH], &h->mesh, f)) ||
		    (e = wd_xform(fl[HB_XFORM], &kp[HB_XFORM], 0, &xf, &h->a, &h->size, h->rot, f)))
			return e;
		break;
	}
	}
	return API_OK;
}

static enum api_err decode_entity(const cJSON *v, const struct wpath *p, struct entity_in *e_out,
				  struct hitbox_in *hbs, struct api_fail *f)
{
	static const char *const keys[] = { "id", "layer", "hitboxes" };
	const cJSON *fl[3], *c;
	struct wpath pi = { p, "id", 0 }, pl = { p, "layer", 0 }, ph = { p, "hitboxes", 0 };
	enum api_err e;
	size_t k = 0;

	if ((e = wd_fields(v, p, keys, 3, fl, f)) || (e = wd_id(fl[0], &pi, &e_out->id, f)) ||
	    (e = wd_layer(fl[1], &pl, &e_out->layer, f)))
		return e;
	e_out->hitboxes = hbs;
	e_out->n = 0;
	if (!fl[2])
		return wd_fail(f, API_INVALID_REQUEST, &ph, "required");
	for (c = fl[2]->child; c; c = c->next, k++) {
		struct wpath pk = { &ph, NULL, k };

		if ((e = decode_hitbox(c, &pk, &hbs[k], f)))
			return e;
	}
	e_out->n = k;
	return API_OK;
}

enum api_err decode_snapshot(const cJSON *root, const struct api_world_limits *lim,
			     struct snapshot_req *q, struct api_fail *f)
{
	static const char *const keys[] = { "tick", "time_ms", "entities" };
	const cJSON *fl[3], *c;
	struct wpath pk = { NULL, "tick", 0 }, pt = { NULL, "time_ms", 0 };
	struct wpath pe = { NULL, "entities", 0 };
	enum api_err e;
	double tick;
	size_t i = 0, at = 0;

	memset(q, 0, sizeof(*q));
	if ((e = wd_fields(root, NULL, keys, 3, fl, f)))
		return e;
	if (!fl[0])
		return wd_fail(f, API_INVALID_REQUEST, &pk, "required");
	if (!wd_num(fl[0], &tick) || tick != floor(tick) || tick < 0 || tick > 9007199254740992.0)
		return wd_fail(f, API_INVALID_REQUEST, &pk, "must be an integer in [0, 2^53]");
	if (!fl[1])
		return wd_fail(f, API_INVALID_REQUEST, &pt, "required");
	if (!wd_num(fl[1], &q->time_ms))
		return wd_fail(f, API_INVALID_REQUEST, &pt, "must be a finite number");
	q->tick = (uint64_t)tick;
	if (!fl[2])
		return wd_fail(f, API_INVALID_REQUEST, &pe, "required");
	if (!cJSON_IsArray(fl[2]))
		return wd_fail(f, API_INVALID_REQUEST, &pe, "must be an array of entities");
	/* count first: the limits are checked before anything is allocated */
	for (c = fl[2]->child; c; c = c->next, i++) {
		const cJSON *hb = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, "hitboxes") : NULL;
		struct wpath pi = { &pe, NULL, i }, ph = { &pi, "hitboxes", 0 };

		if (hb && !cJSON_IsNull(hb) && !cJSON_IsArray(hb))
			return wd_fail(f, API_INVALID_REQUEST, &ph, "must be an array of hitboxes");
		if (hb && cJSON_IsArray(hb))
			q->nhb += wd_array_len(hb);
	}
	q->n = i;
	if (lim->max_entities && q->n > lim->max_entities) {
		e = wd_fail(f, API_PAYLOAD_TOO_LARGE, &pe, "%zu entities, the limit is %zu", q->n,
			 lim->max_entities);
		memset(q, 0, sizeof(*q));
		return e;
	}
	if (lim->max_hitboxes && q->nhb > lim->max_hitboxes) {
		e = wd_fail(f, API_PAYLOAD_TOO_LARGE, &pe, "%zu hitboxes in all, the limit is %zu",
			 q->nhb, lim->max_hitboxes);
		memset(q, 0, sizeof(*q));
		return e;
	}
	q->ents = calloc(q->n ? q->n : 1, sizeof(*q->ents));
	q->hbs = calloc(q->nhb ? q->nhb : 1, sizeof(*q->hbs));
	if (!q->ents || !q->hbs) {
		snapshot_req_release(q);
		return wd_fail(f, API_INTERNAL, NULL, "out of memory");
	}
	i = 0;
	for (c = fl[2]->child; c; c = c->next, i++) {
		struct wpath pi = { &pe, NULL, i };

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
	memset(q, 0, sizeof(*q));
}

enum { SH_ORIGIN, SH_DIR, SH_MAXD, SH_TIME, SH_IGNORE, SH_LAYERS, SH_NKEYS };
static const char *const shot_keys[SH_NKEYS] = { "origin", "direction", "max_distance",
						 "time_ms", "ignore", "layers" };

/* max_distance: the float at or above d, so a hit exactly there counts. */
static float tmax_from(double d)
{
	float t;

	if (d > FLT_MAX)
		return INFINITY;
	t = (float)d;
	if ((double)t < d)
		t = nextafterf(t, INFINITY);
	return t;
}

/* One shot from its fields; ignore ids appended to q->ignore at *at. */
static enum api_err decode_shot(const cJSON *const *fl, const struct wpath *p,
				struct world_shot *s, struct world_shots_req *q, size_t *at,
				struct api_fail *f)
{
	struct wpath kp[SH_NKEYS];
	double d[3], len, md;
	enum api_err e;
	const cJSON *c;
	int k;

	for (k = 0; k < SH_NKEYS; k++)
		kp[k] = (struct wpath){ p, shot_keys[k], 0 };
	memset(s, 0, sizeof(*s));
	if ((e = wd_vec3(fl[SH_ORIGIN], &kp[SH_ORIGIN], &s->ray.origin, f)))
		return e;
	if (!fl[SH_DIR])
		return wd_fail(f, API_INVALID_REQUEST, &kp[SH_DIR], "required");
	if (!wd_numbers(fl[SH_DIR], d, 3))
		return wd_fail(f, API_INVALID_REQUEST, &kp[SH_DIR], "must be 3 finite numbers");
	len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	if (!(len > 0) || !isfinite(len))
		return wd_fail(f, API_INVALID_REQUEST, &kp[SH_DIR], "must not be zero");
	s->ray.dir = v3((float)(d[0] / len), (float)(d[1] / len), (float)(d[2] / len));
	s->ray.tmax = INFINITY;
	if (fl[SH_MAXD]) {
		if (!wd_num(fl[SH_MAXD], &md) || !(md > 0))
			return wd_fail(f, API_INVALID_REQUEST, &kp[SH_MAXD], "must be a number > 0");
		s->ray.tmax = tmax_from(md);
	}
	if (fl[SH_TIME]) {
		if (!wd_num(fl[SH_TIME], &s->time_ms))
			return wd_fail(f, API_INVALID_REQUEST, &kp[SH_TIME], "must be a finite number");
		s->has_time = 1;
	}
	s->layers = WORLD_LAYERS_ALL;
	if (fl[SH_LAYERS]) {
		size_t i = 0;

		if (!cJSON_IsArray(fl[SH_LAYERS]))
			return wd_fail(f, API_INVALID_REQUEST, &kp[SH_LAYERS], "must be an array of layers 0-31");
		s->layers = 0;
		for (c = fl[SH_LAYERS]->child; c; c = c->next, i++) {
			struct wpath pi = { &kp[SH_LAYERS], NULL, i };
			uint32_t layer;

			if ((e = wd_layer(c, &pi, &layer, f)))
				return e;
			s->layers |= 1u << layer;
		}
	}
	if (fl[SH_IGNORE]) {
		size_t i = 0;

		if (!cJSON_IsArray(fl[SH_IGNORE]))
			return wd_fail(f, API_INVALID_REQUEST, &kp[SH_IGNORE], "must be an array of entity ids");
		s->ignore = q->ignore + *at;
		for (c = fl[SH_IGNORE]->child; c; c = c->next, i++) {
			struct wpath pi = { &kp[SH_IGNORE], NULL, i };

			if ((e = wd_id(c, &pi, &q->ignore[*at], f)))
				return e;
			(*at)++;
		}
		s->nignore = i;
	}
	return API_OK;
}

/* ignore ids a shot object holds, for the one allocation */
static enum api_err count_ignore(const cJSON *shot, const struct wpath *p, size_t *total,
				 struct api_fail *f)
{
	const cJSON *ig = cJSON_IsObject(shot) ? cJSON_GetObjectItemCaseSensitive(shot, "ignore") : NULL;
	struct wpath pi = { p, "ignore", 0 };
	size_t n;

	if (!ig || !cJSON_IsArray(ig))
		return API_OK;
	n = wd_array_len(ig);
	if (n > WORLD_IGNORE_MAX)
		return wd_fail(f, API_INVALID_REQUEST, &pi, "at most %d ids", WORLD_IGNORE_MAX);
	*total += n;
	return API_OK;
}

enum api_err decode_world_shots(const cJSON *root, const struct api_limits *lim, int static_only,
				struct world_shots_req *q, struct api_fail *f)
{
	enum { K_SHOTS = SH_NKEYS, K_MODE, K_MAX_HITS, K_N };
	static const char *const keys[K_N] = { "origin", "direction", "max_distance", "time_ms",
					       "ignore", "layers", "shots", "mode", "max_hits" };
	const cJSON *fl[K_N], *c;
	struct wpath ps = { NULL, "shots", 0 }, pm = { NULL, "mode", 0 }, ph = { NULL, "max_hits", 0 };
	size_t i, nign = 0, at = 0;
	enum api_err e;
	int k, single = 0;

	memset(q, 0, sizeof(*q));
	if ((e = wd_fields(root, NULL, keys, K_N, fl, f)))
		return e;
	q->mode = HIT_CLOSEST;
	if (fl[K_MODE]) {
		const char *m = cJSON_IsString(fl[K_MODE]) ? fl[K_MODE]->valuestring : "";

		if (strcmp(m, "closest") == 0)
			q->mode = HIT_CLOSEST;
		else if (strcmp(m, "all") == 0)
			q->mode = HIT_ALL;
		else if (static_only && strcmp(m, "any") == 0)
			q->mode = HIT_ANY;
		else
			return wd_fail(f, API_INVALID_REQUEST, &pm, static_only ?
				    "must be \"closest\", \"any\" or \"all\"" : "must be \"closest\" or \"all\"");
	}
	q->max_hits = RAY_MAX_HITS_DEFAULT;
	if (fl[K_MAX_HITS]) {
		double d;

		if (!wd_num(fl[K_MAX_HITS], &d) || d != floor(d) || d < 1 || d > RAY_MAX_HITS_CAP)
			return wd_fail(f, API_INVALID_REQUEST, &ph, "must be an integer in [1, %d]",
				    RAY_MAX_HITS_CAP);
		q->max_hits = (uint32_t)d;
	}
	for (k = 0; k < SH_NKEYS; k++)
		single |= fl[k] != NULL;
	if (fl[K_SHOTS] && single)
		return wd_fail(f, API_INVALID_REQUEST, NULL,
			    "give \"shots\" or one shot's fields at the top level, not both");
	if (!fl[K_SHOTS]) {
		if ((e = count_ignore(root, NULL, &nign, f)))
			return e;
		q->n = 1;
	} else {
		if (!cJSON_IsArray(fl[K_SHOTS]))
			return wd_fail(f, API_INVALID_REQUEST, &ps, "must be an array of shots");
		q->batch = 1;
		q->n = wd_array_len(fl[K_SHOTS]);
		if (q->n == 0)
			return wd_fail(f, API_INVALID_REQUEST, &ps, "must not be empty");
		if (lim->max_batch && q->n > lim->max_batch) {
			e = wd_fail(f, API_PAYLOAD_TOO_LARGE, &ps, "%zu shots, the limit is %zu", q->n,
				 lim->max_batch);
			q->n = 0;
			return e;
		}
		i = 0;
		for (c = fl[K_SHOTS]->child; c; c = c->next, i++) {
			struct wpath pi = { &ps, NULL, i };

			if ((e = count_ignore(c, &pi, &nign, f))) {
				q->n = 0;
				return e;
			}
		}
	}
	q->shots = malloc(q->n * sizeof(*q->shots));
	q->ignore = malloc((nign ? nign : 1) * sizeof(*q->ignore));
	if (!q->shots || !q->ignore) {
		world_shots_req_release(q);
		return wd_fail(f, API_INTERNAL, NULL, "out of memory");
	}
	if (!q->batch) {
		e = decode_shot(fl, NULL, &q->shots[0], q, &at, f);
	} else {
		i = 0;
		e = API_OK;
		for (c = fl[K_SHOTS]->child; c && !e; c = c->next, i++) {
			struct wpath pi = { &ps, NULL, i };
			const cJSON *sf[SH_NKEYS];

			e = wd_fields(c, &pi, shot_keys, SH_NKEYS, sf, f);
			if (!e)
				e = decode_shot(sf, &pi, &q->shots[i], q, &at, f);
		}
	}
	if (e)
		world_shots_req_release(q);
	return e;
}
