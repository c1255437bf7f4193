/* persist.c - the checksummed binary mesh form (layout in persist.h):
 * encode to a file descriptor or to memory, decode from a file or memory. */
#include "persist.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mesh.h"

#define HEADER_BYTES 40		/* format 2; format 1's is 32 (no version) */
#define HEADER1_BYTES 32
#define TRAILER_BYTES 8
#define HASH_INIT 0xcbf29ce484222325ull
#define HASH_PRIME 0x100000001b3ull

/* One step of the word-wise FNV-1a variant the format uses. */
static inline uint64_t hash_word(uint64_t h, uint32_t w)
{
	return (h ^ w) * HASH_PRIME;
}

/* Format 2 only with a version to keep: a mesh without one (Redis blobs)
 * stays in format 1, which a replica not yet upgraded still reads. */
static size_t header_bytes(uint64_t version)
{
	return version ? HEADER_BYTES : HEADER1_BYTES;
}

size_t persist_encoded_size(size_t nvert, size_t ntri, uint64_t version)
{
	size_t v, t, h = header_bytes(version);

	if (nvert > (SIZE_MAX - h - TRAILER_BYTES) / 12 ||
	    ntri > (SIZE_MAX - h - TRAILER_BYTES) / 12)
		return 0;
	v = nvert * 12;
	t = ntri * 12;
	if (v > SIZE_MAX - h - TRAILER_BYTES - t)
		return 0;
	return h + v + t + TRAILER_BYTES;
}

/* A buffered writer that converts to little-endian and hashes as it goes;
 * it flushes to fd, or appends to mem when fd < 0. */
struct wstream {
	int fd;
	int failed;		/* errno of the first failure, 0 if none */
	uint64_t hash;
	char *mem;		/* fd < 0: the destination, mem_cap bytes */
	size_t mem_len, mem_cap;
	size_t len;
	uint32_t buf[16384];
};

static void ws_flush(struct wstream *w)
{
	const char *p = (const char *)w->buf;
	size_t n = w->len * sizeof(w->buf[0]);

	if (w->fd < 0) {
		if (n > w->mem_cap - w->mem_len)
			w->failed = EOVERFLOW;
		else
			memcpy(w->mem + w->mem_len, p, n);
		w->mem_len += n;
		n = 0;
	}
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

/* Write the whole format through w (fd or mem set). 0, or -1 with errno. */
static int write_mesh(struct wstream *w, const float *xyz, size_t nvert, const uint32_t *idx,
		      size_t ntri, uint64_t version)
{
	uint32_t magic[2];
	uint64_t h;

	w->failed = 0;
	w->hash = HASH_INIT;
	w->len = 0;
	memcpy(magic, PERSIST_MAGIC, 8);
	ws_put(w, le32toh(magic[0]));
	ws_put(w, le32toh(magic[1]));
	ws_put(w, version ? PERSIST_VERSION : 1);
	ws_put(w, 0);
	ws_put(w, (uint32_t)nvert);
	ws_put(w, (uint32_t)((uint64_t)nvert >> 32));
	ws_put(w, (uint32_t)ntri);
	ws_put(w, (uint32_t)((uint64_t)ntri >> 32));
	if (version) {
		ws_put(w, (uint32_t)version);
		ws_put(w, (uint32_t)(version >> 32));
	}
	ws_put_words(w, xyz, nvert * 3);
	ws_put_words(w, idx, ntri * 3);
	h = w->hash;
	if (w->len + 2 > sizeof(w->buf) / sizeof(w->buf[0]))
		ws_flush(w);
	w->buf[w->len++] = htole32((uint32_t)h);
	w->buf[w->len++] = htole32((uint32_t)(h >> 32));
	ws_flush(w);
	if (w->failed) {
		errno = w->failed;
		return -1;
	}
	return 0;
}

int persist_write_fd(int fd, const float *xyz, size_t nvert, const uint32_t *idx, size_t ntri,
		     uint64_t version)
{
	struct wstream *w;
	int rc;

	w = malloc(sizeof(*w));
	if (!w)
		return -1;
	w->fd = fd;
	w->mem = NULL;
	w->mem_len = w->mem_cap = 0;
	rc = write_mesh(w, xyz, nvert, idx, ntri, version);
	free(w);
	return rc;
}

int persist_encode(const float *xyz, size_t nvert, const uint32_t *idx, size_t ntri,
		   uint64_t version, void **out, size_t *len)
{
	size_t size = persist_encoded_size(nvert, ntri, version);
	struct wstream *w;
	int rc;

	if (!size) {
		errno = EOVERFLOW;
		return -1;
	}
	w = malloc(sizeof(*w));
	if (!w)
		return -1;
	w->fd = -1;
	w->mem = malloc(size);
	w->mem_len = 0;
	w->mem_cap = size;
	if (!w->mem) {
		free(w);
		errno = ENOMEM;
		return -1;
	}
	rc = write_mesh(w, xyz, nvert, idx, ntri, version);
	if (rc == 0 && w->mem_len == size) {
		*out = w->mem;
		*len = size;
	} else {
		free(w->mem);
		rc = -1;
	}
	free(w);
	return rc;
}

int persist_write_file(const char *path, const float *xyz, size_t nvert, const uint32_t *idx,
		       size_t ntri, uint64_t version)
{
	int fd, rc, saved;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	rc = persist_write_fd(fd, xyz, nvert, idx, ntri, version);
	saved = errno;
	if (close(fd) && rc == 0)
		return -1;
	errno = saved;
	return rc;
}

/* Where decoding reads from: a file descriptor, or memory when fd < 0. */
struct rsrc {
	int fd;
	const char *mem;
	size_t len, pos;
};

static int read_all(struct rsrc *s, void *p, size_t n)
{
	char *c = p;

	if (s->fd < 0) {
		if (n > s->len - s->pos)
			return -1;
		memcpy(p, s->mem + s->pos, n);
		s->pos += n;
		return 0;
	}
	while (n > 0) {
		ssize_t k = read(s->fd, c, n);

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

/* Decode total bytes from s. 0, or -1 with err; nothing allocated then. */
static int decode(struct rsrc *s, uint64_t total, size_t max_triangles, float **xyz,
		  size_t *nvert, uint32_t **idx, size_t *ntri, uint64_t *version, char *err,
		  size_t errlen)
{
	uint32_t hdr[HEADER_BYTES / 4], tail[2];
	uint64_t nv, nt, expect, h;
	size_t hbytes = HEADER1_BYTES;
	float *v = NULL;
	uint32_t *t = NULL;

	if (read_all(s, hdr, HEADER1_BYTES)) {
		snprintf(err, errlen, "truncated header");
		return -1;
	}
	if (memcmp(hdr, PERSIST_MAGIC, 8) != 0) {
		snprintf(err, errlen, "bad magic");
		return -1;
	}
	h = decode_words(HASH_INIT, hdr, HEADER1_BYTES / 4);
	if (hdr[2] != PERSIST_VERSION && hdr[2] != 1) {
		snprintf(err, errlen, "unsupported format version %u", hdr[2]);
		return -1;
	}
	hdr[8] = hdr[9] = 0;	/* format 1: no version stored */
	if (hdr[2] == PERSIST_VERSION) {
		hbytes = HEADER_BYTES;
		if (read_all(s, hdr + 8, HEADER_BYTES - HEADER1_BYTES)) {
			snprintf(err, errlen, "truncated header");
			return -1;
		}
		h = decode_words(h, hdr + 8, (HEADER_BYTES - HEADER1_BYTES) / 4);
	}
	nv = hdr[4] | (uint64_t)hdr[5] << 32;
	nt = hdr[6] | (uint64_t)hdr[7] << 32;
	if (nv == 0 || nt == 0 || nt > MESH_MAX_TRIANGLES || nv > UINT32_MAX) {
		snprintf(err, errlen, "bad counts (%llu vertices, %llu triangles)",
			 (unsigned long long)nv, (unsigned long long)nt);
		return -1;
	}
	if (max_triangles && nt > max_triangles) {
		snprintf(err, errlen, "%llu triangles, over --max-triangles %zu",
			 (unsigned long long)nt, max_triangles);
		return -1;
	}
	expect = hbytes + 12 * nv + 12 * nt + TRAILER_BYTES;
	if (total != expect) {
		snprintf(err, errlen, "size %llu, expected %llu", (unsigned long long)total,
			 (unsigned long long)expect);
		return -1;
	}
	v = malloc((size_t)nv * 3 * sizeof(*v));
	t = malloc((size_t)nt * 3 * sizeof(*t));
	if (!v || !t) {
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	if (read_all(s, v, (size_t)nv * 12) || read_all(s, t, (size_t)nt * 12) ||
	    read_all(s, tail, sizeof(tail))) {
		snprintf(err, errlen, "read failed");
		goto out_free;
	}
	h = decode_words(h, v, (size_t)nv * 3);
	h = decode_words(h, t, (size_t)nt * 3);
	if ((le32toh(tail[0]) | (uint64_t)le32toh(tail[1]) << 32) != h) {
		snprintf(err, errlen, "checksum mismatch");
		goto out_free;
	}
	*xyz = v;
	*nvert = (size_t)nv;
	*idx = t;
	*ntri = (size_t)nt;
	if (version)
		*version = hdr[8] | (uint64_t)hdr[9] << 32;
	return 0;

out_free:
	free(v);
	free(t);
	return -1;
}

int persist_decode(const void *buf, size_t len, size_t max_triangles, float **xyz,
		   size_t *nvert, uint32_t **idx, size_t *ntri, uint64_t *version, char *err,
		   size_t errlen)
{
	struct rsrc s = { -1, buf, len, 0 };

	return decode(&s, len, max_triangles, xyz, nvert, idx, ntri, version, err, errlen);
}

int persist_read_file(const char *path, size_t max_triangles, float **xyz, size_t *nvert,
		      uint32_t **idx, size_t *ntri, uint64_t *version, char *err, size_t errlen)
{
	struct rsrc s = { -1, NULL, 0, 0 };
	struct stat st;
	int rc;

	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer */
	s.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (s.fd < 0) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(s.fd, &st)) {
		snprintf(err, errlen, "cannot stat: %s", strerror(errno));
		close(s.fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		close(s.fd);
		return -1;
	}
	/* a regular file never blocks; clear the flag all the same */
	fcntl(s.fd, F_SETFL, fcntl(s.fd, F_GETFL) & ~O_NONBLOCK);
	rc = decode(&s, (uint64_t)st.st_size, max_triangles, xyz, nvert, idx, ntri, version, err,
		    errlen);
	close(s.fd);
	return rc;
}
