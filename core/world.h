/* world.h - worlds: the scene one match checks shots against.
 *
 * A world is static instances (stored meshes, referenced by name and
 * resolved through the store at query time, each placed by an affine
 * transform, on a layer 0-31) plus a bounded history of snapshots of moving
 * entities, each a set of hitboxes (sphere, capsule, oriented box, or a
 * stored mesh moved by position/rotation/scale).
 *
 * Concurrency: one writer at a time ingests snapshots (world_ingest
 * serialises writers on a mutex no reader takes); readers take a view
 * (world_view_acquire), which holds references to the resolved static scene
 * and the snapshot history as they were, both immutable. Publishing a new
 * history is one atomic pointer store under a lock held only for that store
 * and a reference count increment, so a query never waits for an ingest, and
 * a snapshot is freed when the last view holding it is released.
 *
 * Rewind (world_hitscan): a time selects the two held snapshots around it;
 * the earlier decides which entities exist; each hitbox's centre, capsule
 * ends and mesh position are interpolated linearly, rotations by normalised
 * quaternion lerp along the shorter arc; sizes (radius, half extents, mesh
 * scale) are those of the earlier tick. An entity whose hitboxes moved
 * farther than teleport_distance between the two ticks, or that is absent
 * from the later one, holds its earlier pose. At or past the newest snapshot
 * the newest is used; before the oldest is CORE_ERANGE.
 */
#ifndef CORE_WORLD_H
#define CORE_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "mesh.h"
#include "store.h"
#include "vec.h"
#include "xform.h"

#define WORLD_LAYERS_ALL 0xffffffffu
#define WORLD_NONE UINT32_MAX

struct world;
struct world_view;

struct world_opts {
	double history_ms;		/* > 0: snapshots older than this behind the newest go */
	double teleport_distance;	/* >= 0 */
	size_t max_snapshots;		/* >= 2: the ring's length, whatever history_ms says */
};

struct world_instance_in {
	const char *id;			/* unique within the world */
	const char *mesh;		/* a store name */
	struct xform xf;
	uint32_t layer;			/* 0..31 */
};

enum hitbox_shape { HITBOX_SPHERE, HITBOX_CAPSULE, HITBOX_BOX, HITBOX_MESH };

struct hitbox_in {
	const char *id;			/* unique within its entity */
	enum hitbox_shape shape;
	vec3 a;				/* sphere, box: centre; capsule: end a; mesh: position */
	vec3 b;				/* capsule: end b */
	float radius;			/* sphere, capsule: >= 0 */
	vec3 size;			/* box: half extents (>= 0); mesh: scale (non-zero) */
	double rot[4];			/* box, mesh: quaternion (w, x, y, z), any non-zero length */
	const char *mesh;		/* mesh: a store name */
};

struct entity_in {
	const char *id;			/* unique within the snapshot */
	uint32_t layer;			/* 0..31 */
	const struct hitbox_in *hitboxes;
	size_t n;
};

/* Where an ingest or a world_new failed: indices into the input (WORLD_NONE
 * when not about one item). */
struct world_fail {
	size_t item;			/* instance or entity */
	size_t hitbox;
};

/*
 * A new world (one reference) over n instances, whose meshes must exist in
 * store now (CORE_ENOTFOUND, fail->item = the instance). CORE_EINVAL for a
 * duplicate instance id (fail->item = the second), a bad layer or options;
 * CORE_ENOMEM. Copies everything it keeps.
 */
enum core_result world_new(struct store *store, const struct world_instance_in *inst, size_t n,
			   const struct world_opts *opts, struct world **out, struct world_fail *fail);
struct world *world_ref(struct world *w);
void world_unref(struct world *w);	/* NULL is fine */

/*
 * Add one tick. tick and time_ms must exceed the newest held
 * (CORE_ECONFLICT). CORE_EINVAL for a duplicate entity id (fail->item) or
 * hitbox id (fail->hitbox), a bad layer or shape; CORE_ENOTFOUND for a mesh
 * hitbox naming no stored mesh (fail->item, fail->hitbox); CORE_ENOSPACE
 * when the memory budget (membudget.h) has no room for the snapshot (those
 * it pushes out of the history count as room: a view still reading one
 * keeps its bytes held past the limit until released); CORE_ENOMEM.
 * On failure the world is unchanged. Snapshots that fall out of the history
 * are dropped (freed once no view holds them).
 */
enum core_result world_ingest(struct world *w, uint64_t tick, double time_ms,
			      const struct entity_in *ents, size_t n, struct world_fail *fail);

struct world_info {
	size_t instances;
	size_t entities;		/* in the newest snapshot */
	size_t hitboxes;		/* in the newest snapshot */
	size_t ticks;			/* snapshots held */
	uint64_t oldest_tick, newest_tick;	/* valid when ticks > 0 */
	double oldest_time_ms, newest_time_ms;
	struct world_opts opts;
	uint64_t snapshots_ingested;	/* since the world was made */
};
void world_get_info(struct world *w, struct world_info *info);

/* The i-th instance's id, mesh name and layer (i < info.instances). */
void world_instance(const struct world *w, size_t i, const char **id, const char **mesh,
		    uint32_t *layer);

/*
 * A reader's hold on the world as it is now. Resolves the instances' meshes
 * again when the store changed since the last resolution: CORE_ENOTFOUND
 * when one is gone (*bad = the instance). CORE_ENOMEM.
 */
enum core_result world_view_acquire(struct world *w, struct world_view **out, size_t *bad);
void world_view_release(struct world_view *v);	/* NULL is fine */

struct world_shot {
	struct ray ray;			/* direction as cast, tmax in units of |dir| (INFINITY allowed) */
	double unit;			/* world distance per unit of t (1: t is the distance) */
	int has_time;			/* 0: the newest snapshot */
	double time_ms;
	uint32_t layers;		/* bit i: layer i may be hit */
	const char *const *ignore;	/* entity ids never hit */
	size_t nignore;
};

enum world_hit_kind { WORLD_HIT_STATIC = 1, WORLD_HIT_ENTITY = 2 };

/* One hit in world space. Strings point into the view: valid until it is
 * released. */
struct world_shot_hit {
	enum world_hit_kind kind;
	float t;			/* world distance along the ray (t * unit, query.h) */
	vec3 point;
	vec3 normal;			/* unit, world space */
	uint32_t triangle;		/* static and mesh hitboxes, else WORLD_NONE */
	int inside;			/* entity: the shot starts in the hitbox */
	const char *instance, *mesh;	/* static: the instance and its mesh; mesh hitbox: mesh */
	const char *entity, *hitbox;	/* entity */
};

struct world_stats {
	uint32_t meshes_tested;		/* static instances whose mesh the ray was cast into */
	uint32_t entities_tested;	/* entities whose hitboxes were tested */
};

/*
 * A shot against static instances and entities. mode HIT_CLOSEST: the
 * closest hit (static wins a tie with an entity; between entities the one
 * first in id order, between hitboxes the first listed); HIT_ALL: every hit
 * sorted by distance (static first at equal distance), the first max_hits
 * written. hits has room for max(1, max_hits). *nhits written, *total found.
 * *time_used: the snapshot time the shot was answered at (*has_time_used 0
 * when no snapshot is held). CORE_ERANGE for a time before the oldest held
 * (also when none is held and the shot names a time). stats may be NULL.
 */
enum core_result world_hitscan(const struct world_view *v, const struct world_shot *s,
			       enum hit_mode mode, uint32_t max_hits, struct world_shot_hit *hits,
			       uint32_t *nhits, uint32_t *total, double *time_used,
			       int *has_time_used, struct world_stats *stats);

/* The static instances only, mode closest, any or all (s's time and ignore
 * are not used). */
enum core_result world_raycast(const struct world_view *v, const struct world_shot *s,
			       enum hit_mode mode, uint32_t max_hits, struct world_shot_hit *hits,
			       uint32_t *nhits, uint32_t *total, struct world_stats *stats);

#endif
