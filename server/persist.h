/* persist.h - keeps uploaded meshes in a data directory and reloads them.
 *
 * One file per mesh, DIR/NAME.mesh (names are store_name_valid, so they are
 * safe file names and never start with '.'). Layout, all little-endian:
 *
 *   offset  size          field
 *   0       8             magic "CLDMESH\0"
 *   8       4             format version (1)
 *   12      4             flags (0)
 *   16      8             nvert
 *   24      8             ntri
 *   32      12 * nvert    float32 x, y, z per vertex
 *   ...     12 * ntri     uint32 a, b, c per triangle
 *   end-8   8             checksum: FNV-1a-style 64-bit hash of the 32-bit
 *                         words from offset 0 up to here
 *
 * A write goes to a temporary file DIR/.NAME.XXXXXX, is fsync'd, renamed over
 * DIR/NAME.mesh, and the directory is fsync'd, so a crash leaves the old or
 * the new file, never a torn one.
 *
 * Thread-safety: persist_put / persist_delete may run concurrently for
 * different names; for the same name the store's order of operations is
 * not guaranteed on disk (the last rename wins).
 */
#ifndef SERVER_PERSIST_H
#define SERVER_PERSIST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct log;
struct store;

#define PERSIST_MAGIC "CLDMESH"		/* plus its NUL: 8 bytes */
#define PERSIST_VERSION 1
#define PERSIST_SUFFIX ".mesh"

struct persist {
	char *dir;
	struct log *log;		/* may be NULL: no messages */

	/* the start-up loader */
	struct store *store;
	size_t max_triangles, max_meshes;
	atomic_int *ready;		/* set to 1 when loading ends */
	atomic_int cancel;
	pthread_t loader;
	int loader_running;
};

/* Use dir (created if missing, one level). 0, or -1 with err filled. */
int persist_open(struct persist *p, const char *dir, struct log *log, char *err, size_t errlen);
/* Stop the loader if it runs (it finishes the file it reads) and free. */
void persist_close(struct persist *p);

/* api_ctx.persist_put: write NAME's file. 0, or -1 (logged). */
int persist_put(void *cls, const char *name, const float *xyz, size_t nvert,
		const uint32_t *idx, size_t ntri);
/* api_ctx.persist_delete: remove NAME's file (logged on failure). */
void persist_delete(void *cls, const char *name);

/*
 * Load every DIR/NAME.mesh into store in a background thread, then set
 * *ready = 1. Files that are corrupt, over max_triangles, or over
 * max_meshes are logged and skipped. 0, or -1 when the thread cannot start
 * (then nothing is loaded and *ready is untouched).
 */
int persist_load_start(struct persist *p, struct store *store, size_t max_triangles,
		       size_t max_meshes, atomic_int *ready);

/* Load every file now, in the calling thread (what the loader runs).
 * Returns the number of meshes stored. */
size_t persist_load_all(struct persist *p, struct store *store, size_t max_triangles,
			size_t max_meshes);

/*
 * Read one mesh file. On success 0 with *xyz / *idx malloc'd (the caller
 * frees them); on failure -1 with err saying why (bad magic, version,
 * counts, size, checksum, I/O) and nothing allocated. max_triangles == 0
 * means no limit.
 */
int persist_read_file(const char *path, size_t max_triangles, float **xyz, size_t *nvert,
		      uint32_t **idx, size_t *ntri, char *err, size_t errlen);

/* Write one mesh file at path directly (no temp file, no fsync): the
 * format half of persist_put, for tests and tools. 0, or -1 with errno. */
int persist_write_file(const char *path, const float *xyz, size_t nvert, const uint32_t *idx,
		       size_t ntri);

#endif
