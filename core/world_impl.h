/* world_impl.h - the layout of worlds and snapshots, shared by world.c,
 * snapshot.c and world_query.c. Internal to core/.
 *
 * Everything reachable from a snapshot, a history or a scene is immutable
 * once published; each is freed by its last reference.
 */
#ifndef CORE_WORLD_IMPL_H
#define CORE_WORLD_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "boxscan.h"
#include "obb.h"
#include "snapmem.h"
#include "tlas.h"
#include "world.h"

struct hitbox {
	enum hitbox_shape shape;
	const char *id;		/* sid, or in the snapshot's string pool */
	vec3 a, b;		/* as hitbox_in */
	float radius;
	char sid[16];		/* a short id, in the lines a cast reads */
	vec3 size;
	double rot[4];		/* unit (box, mesh) */
	struct obb box;		/* HITBOX_BOX at this tick */
	struct mesh *mesh;	/* HITBOX_MESH: a reference */
	const char *mesh_name;
	struct xform *xf;	/* HITBOX_MESH at this tick (in the snapshot's xfs), else NULL */
	vec3 key;		/* the point the teleport rule measures */
	vec3 lo, hi;		/* bounds that hold under any rotation (see snapshot.c) */
};

/* FNV-1a (32 bits) of an entity id: the id index's key, and how a shot's
 * ignore list is matched without a lookup. */
static inline uint32_t world_name_hash(const char *id)
{
	uint32_t h = 2166136261u;

	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 16777619u;
	return h;
}

struct entity {
	const char *id;		/* sid, or in the snapshot's string pool */
	uint32_t hash;		/* world_name_hash(id) */
	uint32_t layer;
	uint32_t first, n;	/* hitboxes hbs[first, first + n) in input order */
	char sid[24];		/* a short id, beside what a visit reads */
	vec3 lo, hi;		/* union of its hitboxes' bounds, padded */
};

/* Snapshots of up to this many entities are culled by one scan over every
 * entity's box (eight at a time, boxscan.h) instead of a walk of a tree:
 * their trees are not built. */
#define WORLD_FLAT_ENTITIES 128

struct snapshot {
	atomic_size_t refs;
	size_t budget_bytes;	/* its block's, taken from membudget.h */
	uint64_t tick;
	double time_ms;
	size_t nent, nhb;
	struct entity *ents;	/* sorted by id (byte order) */
	/* ids to entities: open addressing over hash & index_mask, each slot
	 * an entity index + 1 or 0 (empty); at most half full */
	uint32_t *index;
	uint32_t index_mask;
	struct hitbox *hbs;
	/* Pairing with the snapshot before this one (NULL when there was none):
	 * for its entity i, succ[i] is the index here or WORLD_NONE (gone, or
	 * moved farther than teleport_distance: no interpolation); for its
	 * hitbox k, hb_succ[k] is the matching hitbox here (same id and shape)
	 * or WORLD_NONE. */
	uint32_t *succ;
	uint32_t *hb_succ;
	uint64_t prev_tick;
	/* Culling: a BVH over this snapshot's entity bounds (items: entities
	 * here), and one over the previous snapshot's entities with their bounds
	 * joined to their successors' here (items: entities there), which holds
	 * every pose rewound between the two; both empty up to
	 * WORLD_FLAT_ENTITIES entities. */
	struct tlas own, pair;
	/* The same bounds as planes for the SIMD scans (boxscan.h): own_ent
	 * and pair_ent hold the two trees' item boxes (entity i's at i); per
	 * hitbox, own_hb's box k is hitbox k's bounds here, pair_hb's the
	 * previous snapshot's hitbox k joined with its successor here. */
	struct box_planes own_ent, pair_ent, own_hb, pair_hb;
	struct xform *xfs;	/* the mesh hitboxes' placements */
	char *strings;
};

/* The snapshots held, oldest first; immutable once published. */
struct history {
	atomic_size_t refs;
	size_t n;
	const double *times;	/* snaps[i]->time_ms, contiguous for the search
				 * of a rewound shot (in the same block) */
	struct snapshot *snaps[];
};

/* The static instances resolved against the store at one generation. */
struct scene {
	atomic_size_t refs;
	uint64_t generation;
	struct mesh **meshes;	/* one reference per instance */
	struct tlas tlas;
};

struct instance {
	const char *id, *mesh;	/* in the world's string pool */
	struct xform xf;
	uint32_t layer;
};

struct world {
	atomic_size_t refs;
	struct store *store;
	struct world_opts opts;
	size_t ninst;
	struct instance *inst;
	char *strings;
	pthread_mutex_t pub;	/* held only to swap or reference hist and scene */
	struct history *hist;
	struct scene *scene;
	pthread_mutex_t ingest;	/* serialises writers; readers never take it */
	struct snapmem *mem;	/* the snapshots' blocks (the writer's) */
	atomic_uint_fast64_t ingested;
};

struct world_view {
	struct world *w;
	struct scene *scene;
	struct history *hist;
};

/* snapshot.c */
/* The snapshot's memory is one block of mem (snapmem.h), taken from the
 * budget (membudget.h) counting as room the dropped bytes that the
 * snapshots it pushes out of the history give back once it is published. */
enum core_result snapshot_build(struct store *store, struct snapmem *mem, uint64_t tick,
				double time_ms, const struct entity_in *ents, size_t n,
				const struct snapshot *prev, double teleport_distance,
				size_t dropped, struct snapshot **out, struct world_fail *fail);
struct snapshot *snapshot_ref(struct snapshot *s);
void snapshot_unref(struct snapshot *s);
/* The index of entity id in s, or WORLD_NONE. */
uint32_t snapshot_find(const struct snapshot *s, const char *id);

/* The poses at one time: s0 alone (s1 NULL), or s0 and s1 mixed by f in [0, 1). */
struct rewind {
	const struct snapshot *s0, *s1;
	double f;
};

/* The BVH whose items are s0's entities, with bounds holding their poses
 * over the rewind. */
const struct tlas *rewind_entity_tlas(const struct rewind *rw);

/* The same boxes as planes: box i is entity i's (of s0). */
static inline const struct box_planes *rewind_entity_planes(const struct rewind *rw)
{
	return rw->s1 ? &rw->s1->pair_ent : &rw->s0->own_ent;
}

/* Box k is the bounds of hitbox k (global index in s0) holding every pose
 * over the rewind (padded like the TLAS's boxes). */
static inline const struct box_planes *rewind_hitbox_planes(const struct rewind *rw)
{
	return rw->s1 ? &rw->s1->pair_hb : &rw->s0->own_hb;
}

/* Prefetch what rewind_hitbox(rw, i, k) reads: s0's hitbox and the pairing
 * (rewind_prefetch), then, once the pairing is in the cache, the successor
 * hitbox (rewind_prefetch_pair). Hints only: no answer depends on them. */
void rewind_prefetch(const struct rewind *rw, uint32_t i, uint32_t k);
void rewind_prefetch_pair(const struct rewind *rw, uint32_t i, uint32_t k);

struct hitbox_scratch {
	struct hitbox h;
	struct xform xf;
};
/* Hitbox k (global index in s0) of entity i at the rewound time: s0's own,
 * or one built in tmp. */
const struct hitbox *rewind_hitbox(const struct rewind *rw, uint32_t i, uint32_t k,
				   struct hitbox_scratch *tmp);

#endif
