/* world_decode.h - /v1/worlds request bodies to plain C structs for
 * core/world.h: strict JSON (unknown or repeated fields are errors), every
 * message naming its field by path ("entities[3].hitboxes[0].radius: ...").
 *
 * Strings in the structs point into the cJSON tree: keep the tree until
 * core has copied them (world_new, world_ingest) or the answer is encoded
 * (but for world_shots_direct's and world_snapshot_direct's, which the
 * struct owns).
 * On failure the struct is left empty (its release is a no-op).
 */
#ifndef API_WORLD_DECODE_H
#define API_WORLD_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "api.h"
#include "decode.h"
#include "world.h"

struct batch_pool;

#define WORLD_HISTORY_MS_DEFAULT 1000.0
#define WORLD_HISTORY_MS_MAX 60000.0
#define WORLD_TELEPORT_DEFAULT 64.0
#define WORLD_IGNORE_MAX 256		/* ids in one shot's "ignore" */
#define WORLD_ID_MAX 128		/* bytes of an instance, entity or hitbox id */

/* PUT /v1/worlds/{world} */
struct world_put_req {
	struct world_instance_in *inst;
	size_t n;
	double history_ms;
	double teleport_distance;
};

/* POST /v1/worlds/{world}/snapshots */
struct snapshot_req {
	uint64_t tick;
	double time_ms;
	struct entity_in *ents;
	size_t n;
	struct hitbox_in *hbs;		/* every entity's hitboxes, one array */
	size_t nhb;
	char *ids;			/* world_snapshot_direct: the ids' bytes (else NULL) */
	char *ids_more;			/* and those of a split parse's second part */
};

/* POST /v1/worlds/{world}/hitscan and /raycast */
struct world_shots_req {
	int batch;			/* "shots" given: answer {"results": [...]} */
	size_t n;
	struct world_shot *shots;
	const char **ignore;		/* every shot's ignore ids, one array */
	char *ids;			/* world_shots_direct: the ids' bytes (else NULL) */
	char *ids_more;			/* and those of a split parse's second part */
	enum hit_mode mode;		/* hitscan: closest or all; raycast: closest, any or all */
	uint32_t max_hits;
};

enum api_err decode_world_put(const cJSON *root, const struct api_world_limits *lim,
			      struct world_put_req *q, struct api_fail *f);
void world_put_req_release(struct world_put_req *q);

/* More entities or hitboxes than the limits is API_PAYLOAD_TOO_LARGE, found
 * before anything is allocated for them. */
enum api_err decode_snapshot(const cJSON *root, const struct api_world_limits *lim,
			     struct snapshot_req *q, struct api_fail *f);
void snapshot_req_release(struct snapshot_req *q);

/* static_only: /raycast (modes closest, any, all). */
enum api_err decode_world_shots(const cJSON *root, const struct api_limits *lim, int static_only,
				struct world_shots_req *q, struct api_fail *f);
void world_shots_req_release(struct world_shots_req *q);

/*
 * The fast path of decode_world_shots: a batch body (top-level "shots",
 * optional "mode" and "max_hits") read straight from its text body[0..len)
 * into q, with no tree; the ignore ids are copied into q->ids. Returns 1
 * when decoded: q is then what json_parse + decode_world_shots would give
 * (the same numbers, bit for bit). Returns 0, q left empty, whenever
 * anything is not plainly valid (a syntax error, an unknown, repeated or
 * null member, a wrong type, a value or limit refused, the single-shot
 * form): the caller then takes the tree path, which answers the exact error.
 */
int world_shots_direct(const char *body, size_t len, const struct api_limits *lim,
		       int static_only, struct batch_pool *pool, struct world_shots_req *q);

/*
 * With a pool, a "shots" array of split_min bytes or more is parsed in two
 * parts at once: this thread reads up to a '}' followed by ',' and '{' near
 * its middle while a worker reads from that '{' on (batch_pair); the second
 * part is taken only when the first ends a shot exactly at the cut, else
 * this thread reads on alone. The result is the same as without a pool.
 * world_shots_direct uses WORLD_SHOTS_SPLIT_BYTES; the tests, smaller.
 */
int world_shots_direct_split(const char *body, size_t len, const struct api_limits *lim,
			     int static_only, struct batch_pool *pool, size_t split_min,
			     struct world_shots_req *q);

/* About 200 shots, parsed in ~40 us: half of that is worth a worker's time. */
#define WORLD_SHOTS_SPLIT_BYTES 32768

/*
 * The fast path of decode_snapshot: a snapshot of sphere, capsule and box
 * hitboxes read straight from its text body[0..len) into q, with no tree;
 * the entity and hitbox ids are copied into q->ids. Returns 1 when decoded:
 * q is then what json_parse + decode_snapshot would give (the same numbers,
 * bit for bit). Returns 0, q left empty, whenever anything is not plainly
 * valid (a syntax error, an escaped key, an unknown, repeated or null
 * member, a wrong type, a value or limit refused, a mesh hitbox): the
 * caller then takes the tree path, which answers the exact error.
 */
int world_snapshot_direct(const char *body, size_t len, const struct api_world_limits *lim,
			  struct batch_pool *pool, struct snapshot_req *q);

/*
 * With a pool, an "entities" array of split_min bytes or more is parsed in
 * two parts at once, as world_shots_direct_split cuts "shots": this thread
 * reads up to the end of an entity whose "hitboxes" come last ("}]}"
 * followed by ',' and '{') near 60 % of it, a worker from that '{' on
 * (batch_pair_rest: no batch follows); the second part is taken only when
 * the first ends an entity exactly at the cut. The result is the same as
 * without a pool. world_snapshot_direct uses WORLD_SNAPSHOT_SPLIT_BYTES.
 */
int world_snapshot_direct_split(const char *body, size_t len, const struct api_world_limits *lim,
				struct batch_pool *pool, size_t split_min, struct snapshot_req *q);

/* About 13 entities of 20 hitboxes (a fifth of the bench's 64-player
 * snapshot): below that, waking a worker costs about what it saves. */
#define WORLD_SNAPSHOT_SPLIT_BYTES 32768

#endif
