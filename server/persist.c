/* persist.c - mesh files in --data-dir: atomic writes, removal, and the
 * start-up loader (format and contracts in persist.h). */
#include "persist.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mesh.h"
#include "store.h"

#define HEADER_BYTES 32
#define HASH_INIT 0xcbf29ce484222325ull
#define HASH_PRIME 0x100000001b3ull

/* One step of the word-wise FNV-1a variant the format uses. */
static inline uint64_t hash_word(uint64_t h, uint32_t w)
{
	return (h ^ w) * HASH_PRIME;
}

/* A buffered writer that converts to little-endian and hashes as it goes. */
struct wstream {
	int fd;
	int failed;		/* errno of the first failure, 0 if none */
	uint64_t hash;
	size_t len;
	uint32_t buf[16384];
};

static void ws_flush(struct wstream *w)
{
	const char *p = (const char *)w->buf;
	size_t n = w->len * sizeof(w->buf[0]);

	while (n > 0 && !w->failed) {
		ssize_t k = write(w->fd, p, n);

		if (k < 0) {
			if (errno != EINTR)
				w->failed = errno;
			continue;
		}
		p += k;
		n -= (size_t)k;
	}
	w->len = 0;
}

static void ws_put(struct wstream *w, uint32_t v)
{
	w->hash = hash_word(w->hash, v);
	w->buf[w->len++] = htole32(v);
	if (w->len == sizeof(w->buf) / sizeof(w->buf[0]))
		ws_flush(w);
}

static void ws_put_words(struct wstream *w, const void *p, size_t nwords)
{
	const char *c = p;
	size_t i;

	for (i = 0; i < nwords; i++) {
		uint32_t v;

		memcpy(&v, c + i * 4, 4);
		ws_put(w, v);
	}
}

/* Write the whole format to fd. 0, or -1 with errno set. */
static int write_mesh_fd(int fd, const float *xyz, size_t nvert, const uint32_t *idx,
			 size_t ntri)
{
	struct wstream *w;
	uint32_t magic[2];
	uint64_t h;
	int rc = -1;

	w = malloc(sizeof(*w));
	if (!w)
		return -1;
	w->fd = fd;
	w->failed = 0;
	w->hash = HASH_INIT;
	w->len = 0;
	memcpy(magic, PERSIST_MAGIC, 8);
	ws_put(w, le32toh(magic[0]));
	ws_put(w, le32toh(magic[1]));
	ws_put(w, PERSIST_VERSION);
	ws_put(w, 0);
	ws_put(w, (uint32_t)nvert);
	ws_put(w, (uint32_t)((uint64_t)nvert >> 32));
	ws_put(w, (uint32_t)ntri);
	ws_put(w, (uint32_t)((uint64_t)ntri >> 32));
	ws_put_words(w, xyz, nvert * 3);
	ws_put_words(w, idx, ntri * 3);
	h = w->hash;
	w->buf[w->len++] = htole32((uint32_t)h);
	w->buf[w->len++] = htole32((uint32_t)(h >> 32));
	ws_flush(w);
	if (w->failed)
		errno = w->failed;
	else
		rc = 0;
	free(w);
	return rc;
}

int persist_write_file(const char *path, const float *xyz, size_t nvert, const uint32_t *idx,
		       size_t ntri)
{
	int fd, rc, saved;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	rc = write_mesh_fd(fd, xyz, nvert, idx, ntri);
	saved = errno;
	if (close(fd) && rc == 0)
		return -1;
	errno = saved;
	return rc;
}

static int read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t k = read(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Convert n little-endian words in place and hash them. */
static uint64_t decode_words(uint64_t h, void *p, size_t n)
{
	char *c = p;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t v;

		memcpy(&v, c + i * 4, 4);
		v = le32toh(v);
		memcpy(c + i * 4, &v, 4);
		h = hash_word(h, v);
	}
	return h;
}

int persist_read_file(const char *path, size_t max_triangles, float **xyz, size_t *nvert,
		      uint32_t **idx, size_t *ntri, char *err, size_t errlen)
{
	uint32_t hdr[HEADER_BYTES / 4], tail[2];
	uint64_t nv, nt, expect, h;
	float *v = NULL;
	uint32_t *t = NULL;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || read_all(fd, hdr, sizeof(hdr))) {
		snprintf(err, errlen, "truncated header");
		goto out_close;
	}
	if (memcmp(hdr, PERSIST_MAGIC, 8) != 0) {
		snprintf(err, errlen, "bad magic");
		goto out_close;
	}
	h = decode_words(HASH_INIT, hdr, HEADER_BYTES / 4);
	if (hdr[2] != PERSIST_VERSION) {
		snprintf(err, errlen, "unsupported format version %u", hdr[2]);
		goto out_close;
	}
	nv = hdr[4] | (uint64_t)hdr[5] << 32;
	nt = hdr[6] | (uint64_t)hdr[7] << 32;
	if (nv == 0 || nt == 0 || nt > MESH_MAX_TRIANGLES || nv > UINT32_MAX) {
		snprintf(err, errlen, "bad counts (%llu vertices, %llu triangles)",
			 (unsigned long long)nv, (unsigned long long)nt);
		goto out_close;
	}
	if (max_triangles && nt > max_triangles) {
		snprintf(err, errlen, "%llu triangles, over --max-triangles %zu",
			 (unsigned long long)nt, max_triangles);
		goto out_close;
	}
	expect = HEADER_BYTES + 12 * nv + 12 * nt + 8;
	if ((uint64_t)st.st_size != expect) {
		snprintf(err, errlen, "size %lld, expected %llu", (long long)st.st_size,
			 (unsigned long long)expect);
		goto out_close;
	}
	v = malloc((size_t)nv * 3 * sizeof(*v));
	t = malloc((size_t)nt * 3 * sizeof(*t));
	if (!v || !t) {
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	if (read_all(fd, v, (size_t)nv * 12) || read_all(fd, t, (size_t)nt * 12) ||
	    read_all(fd, tail, sizeof(tail))) {
		snprintf(err, errlen, "read failed");
		goto out_free;
	}
	h = decode_words(h, v, (size_t)nv * 3);
	h = decode_words(h, t, (size_t)nt * 3);
	if ((le32toh(tail[0]) | (uint64_t)le32toh(tail[1]) << 32) != h) {
		snprintf(err, errlen, "checksum mismatch");
		goto out_free;
	}
	close(fd);
	*xyz = v;
	*nvert = (size_t)nv;
	*idx = t;
	*ntri = (size_t)nt;
	return 0;

out_free:
	free(v);
	free(t);
out_close:
	close(fd);
	return -1;
}

static void plog(struct persist *p, enum log_level level, const char *fmt, const char *a,
		 const char *b)
{
	if (p->log)
		log_msg(p->log, level, fmt, a, b);
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

int persist_open(struct persist *p, const char *dir, struct log *log, char *err, size_t errlen)
{
	struct stat st;

	memset(p, 0, sizeof(*p));
	atomic_init(&p->cancel, 0);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "--data-dir: cannot create '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, R_OK | W_OK | X_OK)) {
		snprintf(err, errlen, "--data-dir: '%s' is not a writable directory", dir);
		return -1;
	}
	p->dir = strdup(dir);
	if (!p->dir) {
		snprintf(err, errlen, "--data-dir: out of memory");
		return -1;
	}
	p->log = log;
	return 0;
}

void persist_close(struct persist *p)
{
	if (p->loader_running) {
		atomic_store(&p->cancel, 1);
		pthread_join(p->loader, NULL);
		p->loader_running = 0;
	}
	free(p->dir);
	p->dir = NULL;
}

int persist_put(void *cls, const char *name, const float *xyz, size_t nvert,
		const uint32_t *idx, size_t ntri)
{
	struct persist *p = cls;
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s" PERSIST_SUFFIX, p->dir, name) >=
		    sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", p->dir, name) >= sizeof(tmp)) {
		plog(p, LOG_ERROR, "persist: path too long for mesh %s%s", name, "");
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		plog(p, LOG_ERROR, "persist: cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0644) || write_mesh_fd(fd, xyz, nvert, idx, ntri) || fsync(fd)) {
		plog(p, LOG_ERROR, "persist: cannot write %s: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	if (close(fd)) {
		fd = -1;
		plog(p, LOG_ERROR, "persist: cannot write %s: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path)) {
		plog(p, LOG_ERROR, "persist: cannot rename to %s: %s", path, strerror(errno));
		goto out_unlink;
	}
	if (fsync_dir(p->dir))
		plog(p, LOG_WARN, "persist: cannot fsync %s: %s", p->dir, strerror(errno));
	return 0;

out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
}

void persist_delete(void *cls, const char *name)
{
	struct persist *p = cls;
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s" PERSIST_SUFFIX, p->dir, name) >=
	    sizeof(path))
		return;
	if (unlink(path) && errno != ENOENT) {
		plog(p, LOG_ERROR, "persist: cannot remove %s: %s", path, strerror(errno));
		return;
	}
	if (fsync_dir(p->dir))
		plog(p, LOG_WARN, "persist: cannot fsync %s: %s", p->dir, strerror(errno));
}

/* Load one DIR/NAME.mesh; 1 when stored. */
static int load_one(struct persist *p, struct store *store, const char *file,
		    size_t max_triangles, size_t max_meshes)
{
	char path[PATH_MAX], name[STORE_NAME_MAX + 1], err[160];
	size_t len = strlen(file), sl = strlen(PERSIST_SUFFIX), nvert, ntri;
	float *xyz;
	uint32_t *idx;
	struct mesh *m;
	enum core_result r;

	if (len <= sl || len - sl > STORE_NAME_MAX || strcmp(file + len - sl, PERSIST_SUFFIX))
		return 0;
	memcpy(name, file, len - sl);
	name[len - sl] = '\0';
	if (!store_name_valid(name))
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", p->dir, file) >= sizeof(path))
		return 0;
	if (persist_read_file(path, max_triangles, &xyz, &nvert, &idx, &ntri, err, sizeof(err))) {
		plog(p, LOG_WARN, "persist: skipping %s: %s", path, err);
		return 0;
	}
	r = mesh_build(xyz, nvert, idx, ntri, &m, NULL);
	free(xyz);
	free(idx);
	if (r != CORE_OK) {
		plog(p, LOG_WARN, "persist: skipping %s: %s", path, core_result_str(r));
		return 0;
	}
	r = store_put(store, name, m, max_meshes, NULL, NULL);
	if (r != CORE_OK) {
		plog(p, LOG_WARN, "persist: skipping %s: %s", path,
		     r == CORE_ETOOBIG ? "--max-meshes reached" : core_result_str(r));
		return 0;
	}
	if (p->log)
		log_msg(p->log, LOG_DEBUG, "persist: loaded %s (%zu triangles)", name, ntri);
	return 1;
}

/* A temporary file left by a crash in persist_put: ".NAME.XXXXXX". */
static int is_stale_temp(const char *file)
{
	const char *dot = strrchr(file, '.');

	return file[0] == '.' && dot && dot != file && strlen(dot) == 7;
}

size_t persist_load_all(struct persist *p, struct store *store, size_t max_triangles,
			size_t max_meshes)
{
	struct dirent **list;
	size_t loaded = 0;
	int n, i;

	n = scandir(p->dir, &list, NULL, alphasort);
	if (n < 0) {
		plog(p, LOG_ERROR, "persist: cannot read %s: %s", p->dir, strerror(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		const char *f = list[i]->d_name;

		if (!atomic_load(&p->cancel)) {
			if (is_stale_temp(f)) {
				char path[PATH_MAX];

				if ((size_t)snprintf(path, sizeof(path), "%s/%s", p->dir, f) <
				    sizeof(path) && unlink(path) == 0)
					plog(p, LOG_INFO, "persist: removed stale %s%s", path, "");
			} else if (f[0] != '.') {
				loaded += (size_t)load_one(p, store, f, max_triangles, max_meshes);
			}
		}
		free(list[i]);
	}
	free(list);
	return loaded;
}

static void *loader_main(void *arg)
{
	struct persist *p = arg;
	struct timespec t0, t1;
	size_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = persist_load_all(p, p->store, p->max_triangles, p->max_meshes);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (p->log)
		log_msg(p->log, LOG_INFO, "persist: loaded %zu meshes from %s in %.0f ms", n,
			p->dir,
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	atomic_store(p->ready, 1);
	return NULL;
}

int persist_load_start(struct persist *p, struct store *store, size_t max_triangles,
		       size_t max_meshes, atomic_int *ready)
{
	p->store = store;
	p->max_triangles = max_triangles;
	p->max_meshes = max_meshes;
	p->ready = ready;
	if (pthread_create(&p->loader, NULL, loader_main, p) != 0)
		return -1;
	p->loader_running = 1;
	return 0;
}
