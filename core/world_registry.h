/* world_registry.h - named worlds: many concurrent readers, atomic replace.
 *
 * A name (the store's mesh-name rules) maps to one world. Readers take a
 * reference (world_registry_get) and use it without any lock held; put and
 * delete only swap pointers under the write lock. Thread-safe throughout.
 * Worlds live in memory only.
 */
#ifndef CORE_WORLD_REGISTRY_H
#define CORE_WORLD_REGISTRY_H

#include <stddef.h>

#include "core.h"
#include "world.h"

struct world_registry;

enum core_result world_registry_new(struct world_registry **out);
void world_registry_free(struct world_registry *r);	/* drops its references */

/* Insert or replace; takes over the caller's reference to w (also on
 * failure). *created: 1 for a new name. CORE_EINVAL for an invalid name,
 * CORE_ETOOBIG when a new name would exceed max_worlds (0 = no limit),
 * CORE_ENOMEM. */
enum core_result world_registry_put(struct world_registry *r, const char *name, struct world *w,
				    size_t max_worlds, int *created);

/* A new reference (release with world_unref), or NULL. */
struct world *world_registry_get(struct world_registry *r, const char *name);

/* CORE_OK or CORE_ENOTFOUND. */
enum core_result world_registry_delete(struct world_registry *r, const char *name);

struct world_entry {
	char name[STORE_NAME_MAX + 1];
	struct world *world;	/* a reference owned by the entry */
};

/* All worlds sorted by name, each referenced; free with world_registry_list_free. */
enum core_result world_registry_list(struct world_registry *r, struct world_entry **out,
				     size_t *n);
void world_registry_list_free(struct world_entry *e, size_t n);

size_t world_registry_count(struct world_registry *r);

#endif
