/* store_dir.c - meshes as files in --data-dir: atomic writes, removal, and
 * the start-up loader (contracts in store_dir.h). */
#include "store_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mesh.h"
#include "persist.h"
#include "store.h"
#include "store_backend.h"

struct store_dir {
	char *dir;
	int lock_fd;		/* DIR/.lock, flocked for the process's life */
	pthread_t loader;
	int loader_running;
};

static void dlog(struct store_backend *b, enum log_level level, const char *fmt, const char *a,
		 const char *c)
{
	if (b->log)
		log_msg(b->log, level, fmt, a, c);
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* A failed write's result by its errno: a full disk (or quota) is no bug. */
static enum sb_result write_failure(int err)
{
	return err == ENOSPC || err == EDQUOT ? SB_NO_SPACE : SB_FAILED;
}

static enum sb_result dir_put(struct store_backend *b, const char *name, const float *xyz,
			      size_t nvert, const uint32_t *idx, size_t ntri, uint64_t version)
{
	struct store_dir *d = b->impl;
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd, err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s" PERSIST_SUFFIX, d->dir, name) >=
		    sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", d->dir, name) >= sizeof(tmp)) {
		dlog(b, LOG_ERROR, "persist: path too long for mesh %s%s", name, "");
		return SB_FAILED;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = errno;
		dlog(b, LOG_ERROR, "persist: cannot create %s: %s", tmp, strerror(err));
		return write_failure(err);
	}
	if (fchmod(fd, 0644) || persist_write_fd(fd, xyz, nvert, idx, ntri, version) || fsync(fd)) {
		err = errno;
		dlog(b, LOG_ERROR, "persist: cannot write %s: %s", tmp, strerror(err));
		goto out_unlink;
	}
	if (close(fd)) {
		err = errno;
		fd = -1;
		dlog(b, LOG_ERROR, "persist: cannot write %s: %s", tmp, strerror(err));
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path)) {
		err = errno;
		dlog(b, LOG_ERROR, "persist: cannot rename to %s: %s", path, strerror(err));
		goto out_unlink;
	}
	if (fsync_dir(d->dir))
		dlog(b, LOG_WARN, "persist: cannot fsync %s: %s", d->dir, strerror(errno));
	return SB_OK;

out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return write_failure(err);
}

static enum sb_result dir_del(struct store_backend *b, const char *name)
{
	struct store_dir *d = b->impl;
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s" PERSIST_SUFFIX, d->dir, name) >=
	    sizeof(path))
		return SB_ABSENT;	/* such a file cannot have been written */
	if (unlink(path)) {
		if (errno == ENOENT)
			return SB_ABSENT;
		dlog(b, LOG_ERROR, "persist: cannot remove %s: %s", path, strerror(errno));
		return SB_FAILED;
	}
	if (fsync_dir(d->dir))
		dlog(b, LOG_WARN, "persist: cannot fsync %s: %s", d->dir, strerror(errno));
	return SB_OK;
}

/* Load one DIR/NAME.mesh; 1 when stored. */
static int load_one(struct store_backend *b, const char *file)
{
	struct store_dir *d = b->impl;
	char path[PATH_MAX], name[STORE_NAME_MAX + 1], err[160];
	size_t len = strlen(file), sl = strlen(PERSIST_SUFFIX), nvert, ntri;
	float *xyz;
	uint32_t *idx;
	uint64_t version;
	struct mesh *m;
	int stored;

	if (len <= sl || len - sl > STORE_NAME_MAX || strcmp(file + len - sl, PERSIST_SUFFIX))
		return 0;
	memcpy(name, file, len - sl);
	name[len - sl] = '\0';
	if (!store_name_valid(name))
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->dir, file) >= sizeof(path))
		return 0;
	if (persist_read_file(path, b->max_triangles, &xyz, &nvert, &idx, &ntri, &version, err,
			      sizeof(err))) {
		dlog(b, LOG_WARN, "persist: skipping %s: %s", path, err);
		return 0;
	}
	stored = store_backend_build(b, name, path, xyz, nvert, idx, ntri, &m) == 0;
	free(xyz);
	free(idx);
	if (!stored)
		return 0;
	store_backend_lock(b, name);
	/* the version it was acknowledged with (a file from before versions
	 * were kept: 0, so 1) */
	stored = store_backend_swap(b, name, path, m, version);
	store_backend_unlock(b, name);
	if (stored && b->log)
		log_msg(b->log, LOG_DEBUG, "persist: loaded %s (%zu triangles)", name, ntri);
	return stored;
}

/* A temporary file left by a crash in dir_put: ".NAME.XXXXXX". */
static int is_stale_temp(const char *file)
{
	const char *dot = strrchr(file, '.');

	return file[0] == '.' && dot && dot != file && strlen(dot) == 7;
}

size_t store_dir_load_all(struct store_backend *b)
{
	struct store_dir *d = b->impl;
	struct dirent **list;
	size_t loaded = 0;
	int n, i;

	n = scandir(d->dir, &list, NULL, alphasort);
	if (n < 0) {
		dlog(b, LOG_ERROR, "persist: cannot read %s: %s", d->dir, strerror(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		const char *f = list[i]->d_name;

		if (!atomic_load(&b->cancel)) {
			if (is_stale_temp(f)) {
				char path[PATH_MAX];

				if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->dir, f) <
				    sizeof(path) && unlink(path) == 0)
					dlog(b, LOG_INFO, "persist: removed stale %s%s", path, "");
			} else if (f[0] != '.') {
				loaded += (size_t)load_one(b, f);
			}
		}
		free(list[i]);
	}
	free(list);
	return loaded;
}

static void *loader_main(void *arg)
{
	struct store_backend *b = arg;
	struct store_dir *d = b->impl;
	struct timespec t0, t1;
	size_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = store_dir_load_all(b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (b->log)
		log_msg(b->log, LOG_INFO, "persist: loaded %zu meshes from %s in %.0f ms%s", n,
			d->dir,
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
			atomic_load(&b->cancel) ? " (interrupted)" : "");
	if (b->ready)
		atomic_store(b->ready, 1);
	return NULL;
}

static int dir_start(struct store_backend *b)
{
	struct store_dir *d = b->impl;

	if (pthread_create(&d->loader, NULL, loader_main, b) != 0)
		return -1;
	d->loader_running = 1;
	return 0;
}

static void dir_close(struct store_backend *b)
{
	struct store_dir *d = b->impl;

	if (!d)
		return;
	if (d->loader_running)
		pthread_join(d->loader, NULL);
	if (d->lock_fd >= 0)
		close(d->lock_fd);	/* releases the lock */
	free(d->dir);
	free(d);
}

static const struct store_backend_ops dir_ops = {
	.kind = "dir",
	.put = dir_put,
	.del = dir_del,
	.start = dir_start,
	.close = dir_close,
};

/*
 * DIR/.lock, locked (flock) for as long as this process runs: two daemons
 * on one directory (a shared volume in a rolling update) would each keep
 * serving what the other has since replaced or deleted on disk, and the
 * next start would lose acknowledged writes. The file holds the holder's
 * pid, for the message. The fd, or -1 with err set. A file system without
 * locks (some FUSE and network volumes) is served unlocked, *unlocked set
 * to its errno (a warning for the caller to log).
 */
static int lock_dir(const char *dir, const char *who, int *unlocked, char *err, size_t errlen)
{
	char path[PATH_MAX], pid[32] = "";
	ssize_t n;
	int fd, e;

	*unlocked = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/.lock", dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s: '%s' is too long a path", who, dir);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open '%s': %s", who, path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		e = errno;
		if (e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS || e == EINVAL) {
			*unlocked = e;	/* no locks here: served as before */
			return fd;
		}
		n = e == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0) : -1;
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		if (e == EWOULDBLOCK)
			snprintf(err, errlen, "%s: '%s' is in use by another collisiond%s%s: one "
				 "process per directory", who, dir, *pid ? ", pid " : "", pid);
		else
			snprintf(err, errlen, "%s: cannot lock '%s': %s", who, path, strerror(e));
		close(fd);
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
		/* the pid only names the holder in another daemon's message:
		 * the lock holds without it */
	}
	return fd;
}

int store_dir_open(struct store_backend *b, const char *dir, const char *who, char *err,
		   size_t errlen)
{
	struct store_dir *d;
	struct stat st;
	int unlocked;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "%s: cannot create '%s': %s", who, dir, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, R_OK | W_OK | X_OK)) {
		snprintf(err, errlen, "%s: '%s' is not a writable directory", who, dir);
		return -1;
	}
	d = calloc(1, sizeof(*d));
	if (!d || !(d->dir = strdup(dir))) {
		free(d);
		snprintf(err, errlen, "%s: out of memory", who);
		return -1;
	}
	d->lock_fd = lock_dir(dir, who, &unlocked, err, errlen);
	if (d->lock_fd < 0) {
		free(d->dir);
		free(d);
		return -1;
	}
	if (unlocked)
		dlog(b, LOG_WARN, "persist: %s cannot be locked (%s): nothing stops a second "
		     "daemon on it", dir, strerror(unlocked));
	b->impl = d;
	b->ops = &dir_ops;
	return 0;
}
