/* persist.h - the compact, checksummed binary form of one mesh, shared by
 * every store backend (a file in --data-dir, a value in Redis).
 *
 * Layout, all little-endian:
 *
 *   offset  size          field
 *   0       8             magic "CLDMESH\0"
 *   8       4             format version (2)
 *   12      4             flags (0)
 *   16      8             nvert
 *   24      8             ntri
 *   32      8             the mesh's version (0: not recorded)
 *   40      12 * nvert    float32 x, y, z per vertex
 *   ...     12 * ntri     uint32 a, b, c per triangle
 *   end-8   8             checksum: FNV-1a-style 64-bit hash of the 32-bit
 *                         words from offset 0 up to here
 *
 * Format 1, the same without the version (a 32-byte header), is read as
 * version 0, and written for a mesh with no version to keep (version 0:
 * Redis blobs, which replicas of an earlier release then still read).
 *
 * Nothing here knows where the bytes live; the backends (store_dir.c,
 * store_redis.c) own files, keys and their ordering.
 */
#ifndef SERVER_PERSIST_H
#define SERVER_PERSIST_H

#include <stddef.h>
#include <stdint.h>

#define PERSIST_MAGIC "CLDMESH"		/* plus its NUL: 8 bytes */
#define PERSIST_VERSION 2
#define PERSIST_SUFFIX ".mesh"

/* Bytes of the encoded form of a mesh (format 2 with a version, 1 without),
 * or 0 when it would overflow size_t. */
size_t persist_encoded_size(size_t nvert, size_t ntri, uint64_t version);

/* Encode, with version (0: none), into a malloc'd buffer (*out, *len; the
 * caller frees). 0, or -1 when out of memory (errno ENOMEM) or the size
 * overflows (EOVERFLOW). */
int persist_encode(const float *xyz, size_t nvert, const uint32_t *idx, size_t ntri,
		   uint64_t version, void **out, size_t *len);

/* Decode len bytes. On success 0 with *xyz / *idx malloc'd (the caller frees
 * them) and *version (0: none recorded; version may be NULL); on failure -1
 * with err saying why (bad magic, version, counts, size, checksum) and
 * nothing allocated. max_triangles == 0: no limit. */
int persist_decode(const void *buf, size_t len, size_t max_triangles, float **xyz,
		   size_t *nvert, uint32_t **idx, size_t *ntri, uint64_t *version, char *err,
		   size_t errlen);

/* Write the encoded form to fd (streaming, no whole copy in memory).
 * 0, or -1 with errno. */
int persist_write_fd(int fd, const float *xyz, size_t nvert, const uint32_t *idx, size_t ntri,
		     uint64_t version);

/*
 * Read one mesh file. Only a regular file is read: the path is opened with
 * O_NONBLOCK and checked with fstat, so a FIFO or a device never blocks the
 * caller. On success 0 with *xyz / *idx malloc'd (the caller frees them); on
 * failure -1 with err saying why (not a regular file, bad magic, version,
 * counts, size, checksum, I/O) and nothing allocated. max_triangles == 0
 * means no limit.
 */
int persist_read_file(const char *path, size_t max_triangles, float **xyz, size_t *nvert,
		      uint32_t **idx, size_t *ntri, uint64_t *version, char *err, size_t errlen);

/* Write one mesh file at path directly (no temp file, no fsync): the
 * format half of a backend's put, for tests and tools. 0, or -1 with errno. */
int persist_write_file(const char *path, const float *xyz, size_t nvert, const uint32_t *idx,
		       size_t ntri, uint64_t version);

#endif
