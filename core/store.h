/* store.h - the named-mesh store: many concurrent readers, atomic replace.
 *
 * A name maps to one immutable mesh and a version (1 when created, +1 on each
 * replace; a deleted-then-created name starts at 1 again). Readers take a
 * reference (store_get), or look a mesh up inside a read section
 * (store_peek) and use it without taking a reference until the section ends:
 * neither takes a lock. A replace builds the new mesh before it calls
 * store_put, which publishes a copy of the table with the new pointer, so
 * readers are never blocked, and queries in flight finish on the version
 * they hold; store_put and store_delete return once no read section can
 * still see what they dropped. Thread-safe throughout.
 */
#ifndef CORE_STORE_H
#define CORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "mesh.h"

#define STORE_NAME_MAX 64

struct store;

enum core_result store_new(struct store **out);
void store_free(struct store *s);	/* drops the store's references */

/* 1 when name matches [A-Za-z0-9_.-]{1,64} and does not start with '.'. */
int store_name_valid(const char *name);

/* Insert or replace. Takes over the caller's reference to m (also on
 * failure, when m is unreferenced). *version: the new version; *created: 1 for
 * a new name, 0 for a replace. Either out-pointer may be NULL. CORE_EINVAL
 * for an invalid name, CORE_ETOOBIG when a new name would exceed max_meshes
 * (0 = no limit), CORE_ENOMEM. */
enum core_result store_put(struct store *s, const char *name, struct mesh *m,
			   size_t max_meshes, uint64_t *version, int *created);

/* store_put with the new version given (set > 0): a mesh loaded back from
 * where it was persisted keeps the version it was acknowledged with; set 0
 * is store_put. The caller orders the writers of name (a lock held across
 * choosing set and storing). */
enum core_result store_put_version(struct store *s, const char *name, struct mesh *m,
				   size_t max_meshes, uint64_t set, uint64_t *version, int *created);

/* 1 when store_put(s, name, ..., max_meshes) would refuse name now (ETOOBIG:
 * a new name, the store at max_meshes), else 0: a caller that writes
 * elsewhere first (a data dir, Redis) asks before writing anything. */
int store_would_refuse(struct store *s, const char *name, size_t max_meshes);

/* A new reference to the named mesh (release with mesh_unref), or NULL. */
struct mesh *store_get(struct store *s, const char *name, uint64_t *version);

/* store_get for n names at once, all from one version of the store: out[i]
 * a new reference to names[i]'s mesh, or NULL when it is not stored, every
 * one from the table published at one instant (a put or delete meanwhile is
 * seen by all of them or none; n store_get calls could see the old mesh for
 * one name and the new for the next). Returns how many are not stored. */
size_t store_get_many(struct store *s, const char *const *names, size_t n, struct mesh **out);

/*
 * A read section (rcu.h), for the queries: no lock, no shared write. Inside
 * it store_peek gives the named mesh (or NULL) without a reference, valid
 * until store_read_end. Sections nest. Never call store_put or store_delete
 * inside one: they wait for the sections in progress to end.
 */
void store_read_begin(void);
struct mesh *store_peek(struct store *s, const char *name, uint64_t *version);
void store_read_end(void);

/* CORE_OK, or CORE_ENOTFOUND. */
enum core_result store_delete(struct store *s, const char *name);

struct store_entry {
	char name[STORE_NAME_MAX + 1];
	uint64_t version;
	struct mesh *mesh;	/* a reference owned by the entry */
};

/* A snapshot of all entries sorted by name, each holding a reference.
 * Release with store_list_free. */
enum core_result store_list(struct store *s, struct store_entry **out, size_t *n);
void store_list_free(struct store_entry *e, size_t n);

/* A counter that changes with every put and delete (starts at 0). A reader
 * that resolved names at generation g may keep its references for as long as
 * store_generation still returns g (worlds resolve their instances so). */
uint64_t store_generation(struct store *s);

/* Totals for metrics: meshes, triangles and bytes held. */
void store_totals(struct store *s, size_t *meshes, size_t *triangles, size_t *bytes);

#endif
