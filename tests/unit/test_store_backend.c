/* test_store_backend.c - Check suite for the store backends: the mesh form
 * (persist.c), the data directory (store_dir.c), the per-name locks
 * (store_backend.c) and the --store URL (store_redis_url.c). Redis itself is
 * exercised by tests/integration/replicas.sh and store_start.sh. */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "mesh.h"
#include "persist.h"
#include "store.h"
#include "store_backend.h"
#include "store_dir.h"
#include "store_redis.h"
#include "store_versions.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/collisiond-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static const float tri_xyz[] = { 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1 };
static const uint32_t tri_idx[] = { 0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3 };

/* A data-dir backend over tmpdir feeding s (may be NULL). */
static void open_dir(struct store_backend *b, struct store *s, size_t max_meshes)
{
	char err[160];

	ck_assert_int_eq(store_backend_init(b, s, 0, max_meshes, NULL, NULL, NULL), 0);
	ck_assert_int_eq(store_dir_open(b, tmpdir, "--data-dir", err, sizeof(err)), 0);
}

/* ---- the mesh form ----------------------------------------------------- */

START_TEST(test_encode_decode_round_trip)
{
	void *blob;
	size_t len, nv, nt, cut;
	float *xyz;
	uint32_t *idx;
	uint64_t version;
	char err[160], path[128];
	FILE *f;
	char filebuf[256];

	ck_assert_int_eq(persist_encode(tri_xyz, 4, tri_idx, 4, UINT64_C(0x500000007), &blob, &len), 0);
	ck_assert_uint_eq(len, persist_encoded_size(4, 4, UINT64_C(0x500000007)));
	ck_assert_uint_eq(len, 40 + 12 * 4 + 12 * 4 + 8);
	ck_assert_int_eq(persist_decode(blob, len, 0, &xyz, &nv, &idx, &nt, &version, err,
					sizeof(err)), 0);
	ck_assert_uint_eq(version, UINT64_C(0x500000007));
	ck_assert_uint_eq(nv, 4);
	ck_assert_uint_eq(nt, 4);
	ck_assert_int_eq(memcmp(xyz, tri_xyz, sizeof(tri_xyz)), 0);
	ck_assert_int_eq(memcmp(idx, tri_idx, sizeof(tri_idx)), 0);
	free(xyz);
	free(idx);
	/* the memory form is byte for byte the file form */
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/x.mesh", tmpdir);
	ck_assert_int_eq(persist_write_file(path, tri_xyz, 4, tri_idx, 4, UINT64_C(0x500000007)), 0);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(filebuf, 1, sizeof(filebuf), f), len);
	fclose(f);
	ck_assert_int_eq(memcmp(filebuf, blob, len), 0);
	/* every truncation is refused */
	for (cut = 0; cut < len; cut++) {
		xyz = NULL;
		ck_assert_int_eq(persist_decode(blob, cut, 0, &xyz, &nv, &idx, &nt, NULL, err,
						sizeof(err)), -1);
		ck_assert_ptr_null(xyz);
	}
	free(blob);
	remove_tmpdir();
}
END_TEST

/* A file of format 1 (written before versions were kept: a 32-byte header)
 * still reads, as version 0, and a mesh with no version (a Redis blob) is
 * still written in it, byte for byte: built here from a format 2 encoding,
 * the version words cut out, the format word set to 1, the checksum redone. */
START_TEST(test_format1_reads)
{
	void *blob, *blob0;
	size_t len0;
	size_t len, nv, nt, i;
	unsigned char *v1;
	uint32_t w;
	uint64_t h = 0xcbf29ce484222325ull, version = 99;
	float *xyz;
	uint32_t *idx;
	char err[160];

	ck_assert_int_eq(persist_encode(tri_xyz, 4, tri_idx, 4, 42, &blob, &len), 0);
	v1 = malloc(len - 8);
	memcpy(v1, blob, 32);
	memcpy(v1 + 32, (char *)blob + 40, len - 40 - 8);
	w = htole32(1);
	memcpy(v1 + 8, &w, 4);
	for (i = 0; i < len - 16; i += 4) {
		memcpy(&w, v1 + i, 4);
		h = (h ^ le32toh(w)) * 0x100000001b3ull;
	}
	w = htole32((uint32_t)h);
	memcpy(v1 + len - 16, &w, 4);
	w = htole32((uint32_t)(h >> 32));
	memcpy(v1 + len - 12, &w, 4);
	ck_assert_int_eq(persist_encode(tri_xyz, 4, tri_idx, 4, 0, &blob0, &len0), 0);
	ck_assert_uint_eq(len0, len - 8);
	ck_assert_int_eq(memcmp(blob0, v1, len0), 0);
	free(blob0);
	ck_assert_int_eq(persist_decode(v1, len - 8, 0, &xyz, &nv, &idx, &nt, &version, err,
					sizeof(err)), 0);
	ck_assert_uint_eq(version, 0);
	ck_assert_int_eq(memcmp(xyz, tri_xyz, sizeof(tri_xyz)), 0);
	ck_assert_int_eq(memcmp(idx, tri_idx, sizeof(tri_idx)), 0);
	free(xyz);
	free(idx);
	/* format 3 is not read */
	w = htole32(3);
	memcpy(v1 + 8, &w, 4);
	ck_assert_int_eq(persist_decode(v1, len - 8, 0, &xyz, &nv, &idx, &nt, NULL, err,
					sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "format version 3"));
	free(v1);
	free(blob);
}
END_TEST

START_TEST(test_encoded_size_overflow)
{
	ck_assert_uint_eq(persist_encoded_size(SIZE_MAX / 12, 1, 1), 0);
	ck_assert_uint_eq(persist_encoded_size(1, SIZE_MAX / 8, 0), 0);
	ck_assert_uint_eq(persist_encoded_size(4, 4, 0), 32 + 12 * 4 + 12 * 4 + 8);
}
END_TEST

/* A flipped byte at any of these offsets, or a truncation, is refused. */
static const long corrupt_offsets[] = { 0, 7, 8, 16, 24, 33, 37, 40 + 48 + 5, 40 + 96 + 2, -1 };

START_TEST(test_corrupt_file_rejected)
{
	char err[160], path[128];
	float *xyz = NULL;
	uint32_t *idx = NULL;
	size_t nv, nt;
	long off = corrupt_offsets[_i];
	FILE *f;
	int c;

	make_tmpdir();
	snprintf(path, sizeof(path), "%s/bad.mesh", tmpdir);
	ck_assert_int_eq(persist_write_file(path, tri_xyz, 4, tri_idx, 4, 3), 0);
	if (off < 0) {
		ck_assert_int_eq(truncate(path, 40 + 48 + 20), 0);
	} else {
		f = fopen(path, "r+b");
		ck_assert_ptr_nonnull(f);
		fseek(f, off, SEEK_SET);
		c = fgetc(f);
		fseek(f, off, SEEK_SET);
		fputc(c ^ 0x40, f);
		fclose(f);
	}
	ck_assert_int_eq(persist_read_file(path, 0, &xyz, &nv, &idx, &nt, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_null(xyz);
	ck_assert_ptr_null(idx);
	ck_assert(err[0] != '\0');
	remove_tmpdir();
}
END_TEST

/* A FIFO is refused at once (opening one for reading would wait for a writer). */
START_TEST(test_read_refuses_fifo)
{
	char err[160], path[128];
	float *xyz = NULL;
	uint32_t *idx = NULL;
	size_t nv, nt;

	make_tmpdir();
	snprintf(path, sizeof(path), "%s/pipe.mesh", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ck_assert_int_eq(persist_read_file(path, 0, &xyz, &nv, &idx, &nt, NULL, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "not a regular file");
	ck_assert_int_eq(persist_read_file(tmpdir, 0, &xyz, &nv, &idx, &nt, NULL, err, sizeof(err)), -1);
	remove_tmpdir();
}
END_TEST

/* ---- the data directory ------------------------------------------------ */

START_TEST(test_dir_put_delete)
{
	struct store_backend b;
	char err[160], path[128];
	float *xyz;
	uint32_t *idx;
	uint64_t version;
	size_t nv, nt;
	struct stat st;

	make_tmpdir();
	open_dir(&b, NULL, 0);
	ck_assert_int_eq(store_backend_put(&b, "tetra", tri_xyz, 4, tri_idx, 4, 9), SB_OK);
	snprintf(path, sizeof(path), "%s/tetra.mesh", tmpdir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 40 + 12 * 4 + 12 * 4 + 8);
	ck_assert_int_eq(persist_read_file(path, 0, &xyz, &nv, &idx, &nt, &version, err,
					   sizeof(err)), 0);
	ck_assert_uint_eq(nt, 4);
	ck_assert_uint_eq(version, 9);
	free(xyz);
	free(idx);
	ck_assert_int_eq(persist_read_file(path, 3, &xyz, &nv, &idx, &nt, NULL, err, sizeof(err)), -1);
	ck_assert_int_eq(store_backend_delete(&b, "tetra"), SB_OK);
	ck_assert_int_eq(stat(path, &st), -1);
	/* deleting what is not there: nothing done, and said */
	ck_assert_int_eq(store_backend_delete(&b, "tetra"), SB_ABSENT);
	store_backend_close(&b);
	remove_tmpdir();
}
END_TEST

START_TEST(test_dir_load_all)
{
	struct store_backend b;
	struct store *s;
	struct mesh *m;
	char path[160];
	size_t meshes, tris, bytes;
	uint64_t v;
	FILE *f;

	make_tmpdir();
	ck_assert_int_eq(store_new(&s), CORE_OK);
	open_dir(&b, s, 0);
	ck_assert_int_eq(store_backend_put(&b, "a", tri_xyz, 4, tri_idx, 4, 0), 0);
	ck_assert_int_eq(store_backend_put(&b, "b.v2", tri_xyz, 4, tri_idx, 2, 5), 0);
	/* skipped: corrupt, bad name, not a mesh, a FIFO; removed: a stale temp */
	snprintf(path, sizeof(path), "%s/c.mesh", tmpdir);
	f = fopen(path, "wb");
	fputs("garbage", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/notes.txt", tmpdir);
	f = fopen(path, "wb");
	fclose(f);
	snprintf(path, sizeof(path), "%s/fifo.mesh", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/.a.Xy12Ab", tmpdir);
	f = fopen(path, "wb");
	fclose(f);

	ck_assert_uint_eq(store_dir_load_all(&b), 2);
	store_totals(s, &meshes, &tris, &bytes);
	ck_assert_uint_eq(meshes, 2);
	ck_assert_uint_eq(tris, 6);
	/* each with the version it was written with (0: none kept, so 1) */
	m = store_get(s, "b.v2", &v);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(v, 5);
	mesh_unref(m);
	m = store_get(s, "a", &v);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(v, 1);
	mesh_unref(m);
	ck_assert_int_eq(access(path, F_OK), -1);
	store_backend_close(&b);
	store_free(s);

	/* max_meshes bounds what is loaded */
	ck_assert_int_eq(store_new(&s), CORE_OK);
	open_dir(&b, s, 1);
	ck_assert_uint_eq(store_dir_load_all(&b), 1);
	store_backend_close(&b);
	store_free(s);
	remove_tmpdir();
}
END_TEST

/* The loader thread sets ready, also past a FIFO, and close joins it. */
START_TEST(test_dir_loader_thread)
{
	struct store_backend b;
	struct store *s;
	atomic_int ready;
	char err[160], path[160];
	int i;

	make_tmpdir();
	snprintf(path, sizeof(path), "%s/a.mesh", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/b.mesh", tmpdir);
	ck_assert_int_eq(persist_write_file(path, tri_xyz, 4, tri_idx, 4, 1), 0);
	ck_assert_int_eq(store_new(&s), CORE_OK);
	atomic_init(&ready, 0);
	ck_assert_int_eq(store_backend_init(&b, s, 0, 0, NULL, NULL, &ready), 0);
	ck_assert_int_eq(store_dir_open(&b, tmpdir, "--data-dir", err, sizeof(err)), 0);
	ck_assert_int_eq(store_backend_start(&b), 0);
	for (i = 0; i < 200 && !atomic_load(&ready); i++)
		usleep(10000);
	ck_assert_int_eq(atomic_load(&ready), 1);
	store_backend_close(&b);
	store_free(s);
	remove_tmpdir();
}
END_TEST

START_TEST(test_dir_open_refuses_file)
{
	struct store_backend b;
	char err[160];

	ck_assert_int_eq(store_backend_init(&b, NULL, 0, 0, NULL, NULL, NULL), 0);
	ck_assert_int_eq(store_dir_open(&b, "/dev/null", "--data-dir", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "--data-dir"));
	/* set by its variable: the message names it */
	ck_assert_int_eq(store_dir_open(&b, "/dev/null", "COLLISIOND_DATA_DIR (--data-dir)", err,
					sizeof(err)), -1);
	ck_assert_msg(strncmp(err, "COLLISIOND_DATA_DIR (--data-dir): ", 34) == 0, "%s", err);
	store_backend_close(&b);
}
END_TEST

/* ---- the per-name lock ------------------------------------------------- */

struct lock_race {
	struct store_backend *b;
	int inside;		/* writers inside the "a" section */
	int max_inside;
	pthread_mutex_t m;
};

static void *lock_worker(void *arg)
{
	struct lock_race *r = arg;
	int i;

	for (i = 0; i < 2000; i++) {
		store_backend_lock(r->b, "a");
		pthread_mutex_lock(&r->m);
		if (++r->inside > r->max_inside)
			r->max_inside = r->inside;
		pthread_mutex_unlock(&r->m);
		sched_yield();
		pthread_mutex_lock(&r->m);
		r->inside--;
		pthread_mutex_unlock(&r->m);
		store_backend_unlock(r->b, "a");
	}
	return NULL;
}

START_TEST(test_name_lock_excludes)
{
	struct store_backend b;
	struct lock_race r = { &b, 0, 0, PTHREAD_MUTEX_INITIALIZER };
	pthread_t t[4];
	int i;

	ck_assert_int_eq(store_backend_init(&b, NULL, 0, 0, NULL, NULL, NULL), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, lock_worker, &r), 0);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(r.max_inside, 1);
	store_backend_close(&b);
}
END_TEST

/* ---- applied versions ------------------------------------------------- */

/* Random sets and gets against a plain array: the table grows through
 * several doublings and never loses or mixes up a name. */
START_TEST(test_versions_against_array)
{
	enum { NAMES = 3000 };
	static uint64_t oracle[NAMES];
	uint64_t max;
	struct store_versions t;
	char name[16];
	unsigned seed = 12345;
	int i, k, known;

	memset(oracle, 0, sizeof(oracle));
	ck_assert_int_eq(store_versions_init(&t), 0);
	for (i = 0; i < 20000; i++) {
		seed = seed * 1103515245u + 12345u;
		k = (int)((seed >> 8) % NAMES);
		snprintf(name, sizeof(name), "n%d", k);
		if (seed & 1) {
			oracle[k] = (uint64_t)i + 1;
			ck_assert_int_eq(store_versions_set(&t, name, oracle[k]), 0);
		}
		ck_assert_uint_eq(store_versions_get(&t, name, &known), oracle[k]);
		ck_assert_int_eq(known, oracle[k] != 0);
	}
	max = 0;
	for (k = 0; k < NAMES; k++) {
		snprintf(name, sizeof(name), "n%d", k);
		ck_assert_uint_eq(store_versions_get(&t, name, NULL), oracle[k]);
		max = oracle[k] > max ? oracle[k] : max;
	}
	ck_assert_uint_eq(store_versions_max(&t), max);
	/* cleared (the store went back): nothing known, and it fills again */
	store_versions_clear(&t);
	ck_assert_uint_eq(store_versions_max(&t), 0);
	for (k = 0; k < NAMES; k++) {
		snprintf(name, sizeof(name), "n%d", k);
		ck_assert_uint_eq(store_versions_get(&t, name, &known), 0);
		ck_assert_int_eq(known, 0);
	}
	ck_assert_int_eq(store_versions_set(&t, "n7", 3), 0);
	ck_assert_uint_eq(store_versions_get(&t, "n7", &known), 3);
	ck_assert_uint_eq(store_versions_max(&t), 3);
	store_versions_release(&t);
}
END_TEST

/* ---- the --store URL --------------------------------------------------- */

static const struct url_case {
	const char *url, *password;
	int ok;
	const char *host, *user, *pass;
	unsigned port, db;
	const char *why;	/* refused: a part of the message (NULL: any) */
} url_cases[] = {
	{ "redis://127.0.0.1:6379", NULL, 1, "127.0.0.1", "", "", 6379, 0, NULL },
	{ "redis://redis:7000/3", NULL, 1, "redis", "", "", 7000, 3, NULL },
	{ "redis://redis", NULL, 1, "redis", "", "", 6379, 0, NULL },
	{ "redis://redis/", NULL, 1, "redis", "", "", 6379, 0, NULL },
	{ "redis://:s3cret@redis:6380/1", NULL, 1, "redis", "", "s3cret", 6380, 1, NULL },
	{ "redis://app:s3cret@redis", NULL, 1, "redis", "app", "s3cret", 6379, 0, NULL },
	{ "redis://:s3cret@redis", "fromenv", 1, "redis", "", "fromenv", 6379, 0, NULL },
	{ "redis://[::1]:6390/2", NULL, 1, "::1", "", "", 6390, 2, NULL },
	{ "http://redis:6379", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://:6379", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://host:0", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://host:65536", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://host:12x", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://host:1/x", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://host:1/2/3", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://nocolon@host", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	{ "redis://[::1", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	/* userinfo ends at the last '@' before the path (it was split at the
	 * first: host "ss@redis", password "p") */
	{ "redis://:p@ss@redis", NULL, 1, "redis", "", "p@ss", 6379, 0, NULL },
	{ "redis://app:p@ss@w@redis:6380/2", NULL, 1, "redis", "app", "p@ss@w", 6380, 2, NULL },
	{ "redis://:p@ss@[::1]:6390/2", NULL, 1, "::1", "", "p@ss", 6390, 2, NULL },
	{ "redis://:a:b@redis", NULL, 1, "redis", "", "a:b", 6379, 0, NULL },
	{ "redis://redis/1@x", NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
	/* user and password are percent-decoded; a malformed % is refused */
	{ "redis://:p%40ss%3a%2F%25%3F%23@redis", NULL, 1, "redis", "", "p@ss:/%?#", 6379, 0, NULL },
	{ "redis://us%65r%3A1:s3cret@redis", NULL, 1, "redis", "user:1", "s3cret", 6379, 0, NULL },
	{ "redis://:s3cret%@redis", NULL, 0, NULL, NULL, NULL, 0, 0, "percent" },
	{ "redis://:s3cret%4@redis", NULL, 0, NULL, NULL, NULL, 0, 0, "percent" },
	{ "redis://:s3cret%zz@redis", NULL, 0, NULL, NULL, NULL, 0, 0, "percent" },
	{ "redis://:s3cret%00@redis", NULL, 0, NULL, NULL, NULL, 0, 0, "percent" },
	{ "redis://:s3cret@redis", "p%41", 1, "redis", "", "p%41", 6379, 0, NULL },
	/* a query or fragment was taken as part of the host (or database) */
	{ "redis://redis?timeout=1", NULL, 0, NULL, NULL, NULL, 0, 0, "query" },
	{ "redis://redis:6379/0?timeout=1", NULL, 0, NULL, NULL, NULL, 0, 0, "query" },
	{ "redis://redis/#0", NULL, 0, NULL, NULL, NULL, 0, 0, "query" },
	{ "redis://:s3cret@redis?s3cret", NULL, 0, NULL, NULL, NULL, 0, 0, "query" },
	{ "redis://:s3c?ret@redis", NULL, 0, NULL, NULL, NULL, 0, 0, "query" },
	/* TLS is not spoken: said so, not "must start with redis://" */
	{ "rediss://redis:6380", NULL, 0, NULL, NULL, NULL, 0, 0, "TLS" },
	{ "rediss://:s3cret@redis", NULL, 0, NULL, NULL, NULL, 0, 0, "TLS" },
};

START_TEST(test_url_parse)
{
	const struct url_case *c = &url_cases[_i];
	struct store_redis_url u;
	char err[160] = "";

	ck_assert_int_eq(store_redis_parse_url(c->url, c->password, &u, err, sizeof(err)),
			 c->ok ? 0 : -1);
	if (!c->ok) {
		ck_assert(err[0] != '\0');
		ck_assert_ptr_null(strstr(err, "s3cret"));
		ck_assert_ptr_null(strstr(err, "s3c"));
		if (c->why)
			ck_assert_msg(strstr(err, c->why), "'%s' does not say '%s'", err, c->why);
		return;
	}
	ck_assert_str_eq(u.host, c->host);
	ck_assert_str_eq(u.user, c->user);
	ck_assert_str_eq(u.password, c->pass);
	ck_assert_uint_eq(u.port, c->port);
	ck_assert_uint_eq(u.db, c->db);
}
END_TEST

/* The password's limit (256 bytes) counts decoded bytes: 256 written as
 * %XX (768 characters) fit, 257 do not, and the message holds none of it. */
START_TEST(test_url_password_decoded_length)
{
	struct store_redis_url u;
	char url[1024], err[160] = "";
	size_t i, n;

	for (n = 256; n <= 257; n++) {
		strcpy(url, "redis://:");
		for (i = 0; i < n; i++)
			strcat(url, "%41");
		strcat(url, "@redis");
		ck_assert_int_eq(store_redis_parse_url(url, NULL, &u, err, sizeof(err)),
				 n == 256 ? 0 : -1);
	}
	ck_assert_ptr_nonnull(strstr(err, "too long"));
	ck_assert_ptr_null(strstr(err, "AAA"));
	ck_assert_ptr_null(strstr(err, "%41"));
}
END_TEST

/* --store and COLLISIOND_STORE(_PASSWORD) reach the config; a bad URL or
 * --store with --data-dir is refused naming --store, without the secret. */
START_TEST(test_config_store_flags)
{
	struct config cfg;
	char err[320];
	const char *argv1[] = { "collisiond", "--store", "redis://r:6380/2", NULL };
	const char *argv2[] = { "collisiond", NULL };
	const char *env2[] = { "COLLISIOND_STORE=redis://:pw@r", "COLLISIOND_STORE_PASSWORD=s3cret", NULL };
	const char *argv3[] = { "collisiond", "--store", "redis://r", "--data-dir", "/tmp", NULL };
	const char *argv4[] = { "collisiond", "--store=http://:s3cret@r", NULL };

	ck_assert_int_eq(config_parse(&cfg, 3, (char *const *)argv1, NULL, err, sizeof(err)), CONFIG_OK);
	ck_assert_str_eq(cfg.store, "redis://r:6380/2");
	ck_assert_ptr_null(cfg.store_password);
	ck_assert_int_eq(config_parse(&cfg, 1, (char *const *)argv2, (char *const *)env2, err, sizeof(err)), CONFIG_OK);
	ck_assert_str_eq(cfg.store, "redis://:pw@r");
	ck_assert_str_eq(cfg.store_password, "s3cret");
	ck_assert_int_eq(config_parse(&cfg, 5, (char *const *)argv3, NULL, err, sizeof(err)), CONFIG_ERROR);
	ck_assert_ptr_nonnull(strstr(err, "--store"));
	ck_assert_ptr_nonnull(strstr(err, "--data-dir"));
	ck_assert_int_eq(config_parse(&cfg, 2, (char *const *)argv4, NULL, err, sizeof(err)), CONFIG_ERROR);
	ck_assert_ptr_nonnull(strstr(err, "--store"));
	ck_assert_ptr_null(strstr(err, "s3cret"));
}
END_TEST

/* Messages about the URL name what set it: COLLISIOND_STORE when it came
 * from the environment (they said --store, which the operator never
 * wrote), --store when a flag overrode the variable. */
START_TEST(test_config_store_who)
{
	struct config cfg;
	char err[320];
	const char *argv1[] = { "collisiond", NULL };
	const char *argv2[] = { "collisiond", "--store", "redis://r:1?x", NULL };
	const char *env1[] = { "COLLISIOND_STORE=redis://:s3cret@r?timeout=1", NULL };
	const char *env2[] = { "COLLISIOND_STORE=redis://r", NULL };
	char who[80];

	ck_assert_int_eq(config_parse(&cfg, 1, (char *const *)argv1, NULL, err, sizeof(err)), CONFIG_OK);
	ck_assert_str_eq(config_who(&cfg, "store", who, sizeof(who)), "--store");
	ck_assert_int_eq(config_parse(&cfg, 1, (char *const *)argv1, (char *const *)env1, err, sizeof(err)), CONFIG_ERROR);
	ck_assert_msg(strncmp(err, "COLLISIOND_STORE (--store): ", 28) == 0, "%s", err);
	ck_assert_ptr_null(strstr(err, "s3cret"));
	ck_assert_int_eq(config_parse(&cfg, 1, (char *const *)argv1, (char *const *)env2, err, sizeof(err)), CONFIG_OK);
	ck_assert_str_eq(config_who(&cfg, "store", who, sizeof(who)), "COLLISIOND_STORE (--store)");
	ck_assert_int_eq(config_parse(&cfg, 3, (char *const *)argv2, (char *const *)env2, err, sizeof(err)), CONFIG_ERROR);
	ck_assert_msg(strncmp(err, "--store: ", 9) == 0, "%s", err);
}
END_TEST

static Suite *store_backend_suite(void)
{
	Suite *s = suite_create("store_backend");
	TCase *tc;

	tc = tcase_create("persist");
	tcase_add_test(tc, test_encode_decode_round_trip);
	tcase_add_test(tc, test_format1_reads);
	tcase_add_test(tc, test_encoded_size_overflow);
	tcase_add_loop_test(tc, test_corrupt_file_rejected, 0,
			    (int)(sizeof(corrupt_offsets) / sizeof(corrupt_offsets[0])));
	tcase_add_test(tc, test_read_refuses_fifo);
	suite_add_tcase(s, tc);

	tc = tcase_create("dir");
	tcase_add_test(tc, test_dir_put_delete);
	tcase_add_test(tc, test_dir_load_all);
	tcase_add_test(tc, test_dir_loader_thread);
	tcase_add_test(tc, test_dir_open_refuses_file);
	tcase_add_test(tc, test_name_lock_excludes);
	suite_add_tcase(s, tc);

	tc = tcase_create("versions");
	tcase_add_test(tc, test_versions_against_array);
	suite_add_tcase(s, tc);

	tc = tcase_create("url");
	tcase_add_loop_test(tc, test_url_parse, 0, (int)(sizeof(url_cases) / sizeof(url_cases[0])));
	tcase_add_test(tc, test_url_password_decoded_length);
	tcase_add_test(tc, test_config_store_flags);
	tcase_add_test(tc, test_config_store_who);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(store_backend_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
