/* store_dir.h - the data-directory backend: one file per mesh,
 * DIR/NAME.mesh in persist.h's form (names are store_name_valid, so they are
 * safe file names and never start with '.').
 *
 * A write goes to a temporary file DIR/.NAME.XXXXXX, is fsync'd, renamed over
 * DIR/NAME.mesh, and the directory is fsync'd, so a crash leaves the old or
 * the new file, never a torn one. Writes of one name are serialised with the
 * swap in memory by the backend's name lock (store_backend.h), so the file
 * left after any restart is the last acknowledged version, or no file when
 * the last acknowledged write was a delete.
 *
 * Loading reads only regular files (a FIFO or device named *.mesh is skipped,
 * never waited on) and stops between files once the backend is closed.
 */
#ifndef SERVER_STORE_DIR_H
#define SERVER_STORE_DIR_H

#include <stddef.h>

struct store_backend;

/* Back b (store_backend_init'ed) with dir, created if missing (one level),
 * and locked for this process (DIR/.lock). 0, or -1 with err starting with
 * who (what set dir: "--data-dir", or its variable; config_who). */
int store_dir_open(struct store_backend *b, const char *dir, const char *who, char *err,
		   size_t errlen);

/* Load every file now, in the calling thread (what the loader runs); files
 * that are corrupt, not regular, over max_triangles or over max_meshes are
 * logged and skipped, stale temporary files removed. The number stored. */
size_t store_dir_load_all(struct store_backend *b);

#endif
