/* test_store.c - Check suite for core/store.c: one test per contract, a
 * randomised cross-check against a plain model, and readers racing a writer. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "membudget.h"
#include "store.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#endif
#endif

/* Every mesh the test built has been freed. Only observable under LSan
 * (make SANITIZE=address,undefined); the valgrind target covers the rest. */
static void assert_all_freed(void)
{
#ifdef HAVE_LSAN
	ck_assert_msg(__lsan_do_recoverable_leak_check() == 0,
		      "leaked memory (report above)");
#endif
}

#define STACK_MAX 16

/*
 * k parallel triangles, the unit right triangle at z = z0, z0 + 1, ...:
 * a ray up the z axis through (0.25, 0.25) hits every one of them, so both
 * mesh_get_info and a raycast tell how many triangles the mesh has.
 */
static struct mesh *build_stack(unsigned k, float z0)
{
	float xyz[STACK_MAX * 9];
	uint32_t idx[STACK_MAX * 3];
	struct mesh *m = NULL;
	unsigned i;

	if (k < 1 || k > STACK_MAX)
		return NULL;
	for (i = 0; i < k; i++) {
		float z = z0 + (float)i;
		float *p = &xyz[i * 9];

		p[0] = 0; p[1] = 0; p[2] = z;
		p[3] = 1; p[4] = 0; p[5] = z;
		p[6] = 0; p[7] = 1; p[8] = z;
		idx[i * 3 + 0] = i * 3 + 0;
		idx[i * 3 + 1] = i * 3 + 1;
		idx[i * 3 + 2] = i * 3 + 2;
	}
	if (mesh_build(xyz, k * 3, idx, k, &m, NULL) != CORE_OK)
		return NULL;
	return m;
}

/* build_stack for the test's own thread, where a failure may assert. */
static struct mesh *make_stack(unsigned k, float z0)
{
	struct mesh *m = build_stack(k, z0);

	ck_assert_msg(m != NULL, "mesh_build of a %u-triangle stack failed", k);
	return m;
}

static size_t triangles_of(const struct mesh *m)
{
	struct mesh_info info;

	mesh_get_info(m, &info);
	return info.triangles;
}

/* Number of triangles of a make_stack(k, z0) mesh that the z-axis ray from
 * z0 - 1 crosses (all of them), or (size_t)-1 when the query misbehaves.
 * Touches the geometry, not just the header, so it is a real read. */
/* mesh.c finds t through each triangle's float transform, not exactly: the
 * first hit at t = 1 comes back within a few ulps of it. */
#define T_TOL 1e-5f

static size_t ray_count(const struct mesh *m, float z0)
{
	struct ray ray = { v3(0.25f, 0.25f, z0 - 1.0f), v3(0, 0, 1), INFINITY };
	struct query_opts opts = { .mode = HIT_ALL, .max_hits = STACK_MAX };
	struct hit hits[STACK_MAX];
	uint32_t nhits = 0, total = 0;

	if (mesh_raycast(m, &ray, &opts, hits, &nhits, &total) != CORE_OK)
		return (size_t)-1;
	if (nhits != total || (total && fabsf(hits[0].t - 1.0f) > T_TOL))
		return (size_t)-1;
	return total;
}

static struct store *new_store(void)
{
	struct store *s = NULL;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* ---- contracts */

START_TEST(test_new_is_empty)
{
	struct store *s = new_store();
	struct store_entry *e = (struct store_entry *)1;
	size_t n = 99, meshes = 9, tris = 9, bytes = 9;
	uint64_t v = 7;

	ck_assert_ptr_null(store_get(s, "a", &v));
	ck_assert_uint_eq(v, 7);	/* untouched on a miss */
	ck_assert_int_eq(store_list(s, &e, &n), CORE_OK);
	ck_assert_uint_eq(n, 0);
	store_list_free(e, n);
	store_totals(s, &meshes, &tris, &bytes);
	ck_assert_uint_eq(meshes, 0);
	ck_assert_uint_eq(tris, 0);
	ck_assert_uint_eq(bytes, 0);
	store_totals(s, NULL, NULL, NULL);
	store_free(s);
	store_free(NULL);
	assert_all_freed();
}
END_TEST

START_TEST(test_put_get)
{
	struct store *s = new_store();
	struct mesh *m = make_stack(3, 0), *got;
	uint64_t v = 0;
	int created = -1;

	ck_assert_int_eq(store_put(s, "wall", m, 0, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(created, 1);

	v = 0;
	got = store_get(s, "wall", &v);
	ck_assert_ptr_eq(got, m);
	ck_assert_uint_eq(v, 1);
	ck_assert_uint_eq(ray_count(got, 0), 3);
	mesh_unref(got);

	got = store_get(s, "wall", NULL);	/* version out-pointer optional */
	ck_assert_ptr_eq(got, m);
	mesh_unref(got);

	ck_assert_ptr_null(store_get(s, "Wall", NULL));	/* case-sensitive */
	ck_assert_ptr_null(store_get(s, "wal", NULL));
	ck_assert_ptr_null(store_get(s, "wall2", NULL));

	/* both out-pointers may be NULL */
	ck_assert_int_eq(store_put(s, "floor", make_stack(1, 0), 0, NULL, NULL),
			 CORE_OK);
	got = store_get(s, "floor", &v);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(v, 1);
	mesh_unref(got);

	store_free(s);
	assert_all_freed();
}
END_TEST

/* A replace swaps in the new mesh; a reference taken before it stays usable
 * on the old version (a query in flight finishes on what it holds). */
START_TEST(test_replace)
{
	struct store *s = new_store();
	struct mesh *old, *got;
	uint64_t v = 0;
	int created = -1;

	ck_assert_int_eq(store_put(s, "a", make_stack(2, 0), 0, &v, &created), CORE_OK);
	old = store_get(s, "a", NULL);

	ck_assert_int_eq(store_put(s, "a", make_stack(5, 0), 0, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 2);
	ck_assert_int_eq(created, 0);

	got = store_get(s, "a", &v);
	ck_assert_ptr_ne(got, old);
	ck_assert_uint_eq(v, 2);
	ck_assert_uint_eq(triangles_of(got), 5);
	ck_assert_uint_eq(ray_count(got, 0), 5);
	mesh_unref(got);

	/* the old version: dropped by the store, still whole for its holder */
	ck_assert_uint_eq(triangles_of(old), 2);
	ck_assert_uint_eq(ray_count(old, 0), 2);
	mesh_unref(old);

	store_free(s);
	assert_all_freed();
}
END_TEST

START_TEST(test_delete)
{
	struct store *s = new_store();
	struct mesh *held;
	size_t meshes;

	ck_assert_int_eq(store_delete(s, "a"), CORE_ENOTFOUND);
	ck_assert_int_eq(store_put(s, "a", make_stack(4, 0), 0, NULL, NULL), CORE_OK);
	ck_assert_int_eq(store_put(s, "b", make_stack(1, 0), 0, NULL, NULL), CORE_OK);
	held = store_get(s, "a", NULL);

	ck_assert_int_eq(store_delete(s, "a"), CORE_OK);
	ck_assert_ptr_null(store_get(s, "a", NULL));
	ck_assert_int_eq(store_delete(s, "a"), CORE_ENOTFOUND);
	ck_assert_int_eq(store_delete(s, "../a"), CORE_ENOTFOUND);	/* invalid */
	ck_assert_int_eq(store_delete(s, ""), CORE_ENOTFOUND);
	store_totals(s, &meshes, NULL, NULL);
	ck_assert_uint_eq(meshes, 1);

	/* the reference taken before the delete still answers */
	ck_assert_uint_eq(ray_count(held, 0), 4);
	mesh_unref(held);

	held = store_get(s, "b", NULL);	/* neighbour untouched */
	ck_assert_ptr_nonnull(held);
	mesh_unref(held);

	store_free(s);
	assert_all_freed();
}
END_TEST

/* 1 on create, +1 per replace, 1 again after a delete. */
START_TEST(test_versions)
{
	struct store *s = new_store();
	uint64_t v;
	int created, i;

	for (i = 1; i <= 5; i++) {
		ck_assert_int_eq(store_put(s, "m", make_stack(1, 0), 0, &v, &created),
				 CORE_OK);
		ck_assert_uint_eq(v, (uint64_t)i);
		ck_assert_int_eq(created, i == 1);
	}
	/* versions are per name */
	ck_assert_int_eq(store_put(s, "n", make_stack(1, 0), 0, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 1);

	ck_assert_int_eq(store_delete(s, "m"), CORE_OK);
	ck_assert_int_eq(store_put(s, "m", make_stack(1, 0), 0, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(created, 1);
	ck_assert_int_eq(store_put(s, "m", make_stack(1, 0), 0, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 2);

	mesh_unref(store_get(s, "m", &v));
	ck_assert_uint_eq(v, 2);

	/* a version given (a mesh loaded back with the one it was
	 * acknowledged with), new or replacing; the next put goes on from it */
	ck_assert_int_eq(store_put_version(s, "k", make_stack(1, 0), 0, 41, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 41);
	ck_assert_int_eq(created, 1);
	ck_assert_int_eq(store_put(s, "k", make_stack(1, 0), 0, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(store_put_version(s, "m", make_stack(1, 0), 0, 7, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(created, 0);
	ck_assert_int_eq(store_put_version(s, "m", make_stack(1, 0), 0, 0, &v, NULL), CORE_OK);
	ck_assert_uint_eq(v, 8);

	store_free(s);
	assert_all_freed();
}
END_TEST

/* A snapshot sorted by name (byte order), each entry holding a reference
 * that outlives the store. */
START_TEST(test_list_sorted)
{
	static const char *const in[] = { "zeta", "Alpha", "alpha", "b-2", "b_1",
					  "b.3", "0", "9z", "a", "_x" };
	const size_t nin = sizeof(in) / sizeof(in[0]);
	struct store *s = new_store();
	struct store_entry *e;
	size_t n, i;

	for (i = 0; i < nin; i++)
		ck_assert_int_eq(store_put(s, in[i], make_stack((unsigned)i + 1, 0), 0,
					   NULL, NULL), CORE_OK);
	ck_assert_int_eq(store_put(s, "b_1", make_stack(16, 0), 0, NULL, NULL), CORE_OK);

	ck_assert_int_eq(store_list(s, &e, &n), CORE_OK);
	ck_assert_uint_eq(n, nin);
	for (i = 1; i < n; i++)
		ck_assert_int_lt(strcmp(e[i - 1].name, e[i].name), 0);
	ck_assert_str_eq(e[0].name, "0");
	ck_assert_str_eq(e[n - 1].name, "zeta");

	store_free(s);	/* the snapshot keeps its meshes */
	for (i = 0; i < n; i++) {
		size_t want;

		if (strcmp(e[i].name, "b_1") == 0) {
			ck_assert_uint_eq(e[i].version, 2);
			want = 16;
		} else {
			size_t j;

			ck_assert_uint_eq(e[i].version, 1);
			for (j = 0; strcmp(in[j], e[i].name) != 0; j++)
				;
			want = j + 1;
		}
		ck_assert_uint_eq(triangles_of(e[i].mesh), want);
		ck_assert_uint_eq(ray_count(e[i].mesh, 0), want);
	}
	store_list_free(e, n);
	store_list_free(NULL, 0);
	assert_all_freed();
}
END_TEST

#define S16 "0123456789abcdef"
#define S64 S16 S16 S16 S16

static const struct {
	const char *name;
	int valid;
} names[] = {
	{ "a", 1 },
	{ "Z", 1 },
	{ "0", 1 },
	{ "_", 1 },
	{ "-", 1 },
	{ "level-1_final.v2", 1 },
	{ "a.", 1 },
	{ "a..b", 1 },
	{ S64, 1 },			/* 64 characters: the longest */
	{ NULL, 0 },
	{ "", 0 },
	{ ".", 0 },
	{ "..", 0 },
	{ ".hidden", 0 },
	{ S64 "x", 0 },			/* 65 characters */
	{ "a b", 0 },
	{ "a/b", 0 },
	{ "../etc", 0 },
	{ "a\\b", 0 },
	{ "a\nb", 0 },
	{ "a\tb", 0 },
	{ "a:b", 0 },
	{ "a%2e", 0 },
	{ "a+b", 0 },
	{ "caf\xc3\xa9", 0 },		/* UTF-8 e-acute */
	{ "\xff", 0 },
	{ "a\x7f", 0 },
};

START_TEST(test_name_valid)
{
	ck_assert_msg(store_name_valid(names[_i].name) == names[_i].valid,
		      "store_name_valid(names[%d]) != %d", _i, names[_i].valid);
}
END_TEST

/* store_put takes the mesh also when it refuses the name. */
START_TEST(test_put_name)
{
	struct store *s = new_store();
	struct mesh *m = make_stack(1, 0), *got;
	enum core_result r;
	size_t meshes;
	uint64_t v = 0;
	int created = -1;

	r = store_put(s, names[_i].name, m, 0, &v, &created);
	store_totals(s, &meshes, NULL, NULL);
	if (names[_i].valid) {
		ck_assert_int_eq(r, CORE_OK);
		ck_assert_uint_eq(meshes, 1);
		got = store_get(s, names[_i].name, NULL);
		ck_assert_ptr_eq(got, m);
		mesh_unref(got);
	} else {
		ck_assert_int_eq(r, CORE_EINVAL);
		ck_assert_uint_eq(meshes, 0);
		ck_assert_uint_eq(v, 0);	/* outs untouched on failure */
		ck_assert_int_eq(created, -1);
		ck_assert_ptr_null(store_get(s, names[_i].name, NULL));
	}
	store_free(s);
	assert_all_freed();
}
END_TEST

START_TEST(test_max_meshes)
{
	struct store *s = new_store();
	size_t meshes;
	uint64_t v;
	int created, i;

	ck_assert_int_eq(store_put(s, "a", make_stack(1, 0), 2, NULL, NULL), CORE_OK);
	ck_assert_int_eq(store_put(s, "b", make_stack(1, 0), 2, NULL, NULL), CORE_OK);
	v = 0;
	created = -1;
	ck_assert_int_eq(store_put(s, "c", make_stack(1, 0), 2, &v, &created),
			 CORE_ETOOBIG);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(created, -1);
	ck_assert_ptr_null(store_get(s, "c", NULL));
	store_totals(s, &meshes, NULL, NULL);
	ck_assert_uint_eq(meshes, 2);

	/* a replace adds no name, so the limit does not apply */
	ck_assert_int_eq(store_put(s, "a", make_stack(1, 0), 2, &v, NULL), CORE_OK);
	ck_assert_uint_eq(v, 2);
	/* nor when the limit is below the current count */
	ck_assert_int_eq(store_put(s, "b", make_stack(1, 0), 1, &v, NULL), CORE_OK);
	ck_assert_uint_eq(v, 2);
	ck_assert_int_eq(store_put(s, "c", make_stack(1, 0), 1, NULL, NULL),
			 CORE_ETOOBIG);

	/* a delete frees a slot */
	ck_assert_int_eq(store_delete(s, "b"), CORE_OK);
	ck_assert_int_eq(store_put(s, "c", make_stack(1, 0), 2, &v, &created), CORE_OK);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(created, 1);

	/* 0 means no limit (and the table grows past its first allocation) */
	for (i = 0; i < 100; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%03d", i);
		ck_assert_int_eq(store_put(s, name, make_stack(1, 0), 0, NULL, NULL),
				 CORE_OK);
	}
	store_totals(s, &meshes, NULL, NULL);
	ck_assert_uint_eq(meshes, 102);

	store_free(s);
	assert_all_freed();
}
END_TEST

START_TEST(test_totals)
{
	struct store *s = new_store();
	struct mesh_info ia, ib, ic;
	struct mesh *a = make_stack(3, 0), *b = make_stack(7, 0), *c = make_stack(2, 0);
	size_t meshes, tris, bytes;

	mesh_get_info(a, &ia);
	mesh_get_info(b, &ib);
	mesh_get_info(c, &ic);
	ck_assert_uint_gt(ia.memory_bytes, 0);

	ck_assert_int_eq(store_put(s, "a", a, 0, NULL, NULL), CORE_OK);
	ck_assert_int_eq(store_put(s, "b", b, 0, NULL, NULL), CORE_OK);
	store_totals(s, &meshes, &tris, &bytes);
	ck_assert_uint_eq(meshes, 2);
	ck_assert_uint_eq(tris, 10);
	ck_assert_uint_eq(bytes, ia.memory_bytes + ib.memory_bytes);

	/* a replace counts only the new mesh */
	ck_assert_int_eq(store_put(s, "b", c, 0, NULL, NULL), CORE_OK);
	store_totals(s, &meshes, &tris, &bytes);
	ck_assert_uint_eq(meshes, 2);
	ck_assert_uint_eq(tris, 5);
	ck_assert_uint_eq(bytes, ia.memory_bytes + ic.memory_bytes);

	ck_assert_int_eq(store_delete(s, "a"), CORE_OK);
	store_totals(s, &meshes, &tris, &bytes);
	ck_assert_uint_eq(meshes, 1);
	ck_assert_uint_eq(tris, 2);
	ck_assert_uint_eq(bytes, ic.memory_bytes);

	store_free(s);
	assert_all_freed();
}
END_TEST

/* ---- randomised cross-check against a plain array model */

#define MODEL_NAMES 12
#define MODEL_LIMIT 8
#define MODEL_OPS 3000

static uint32_t lcg(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state >> 8;
}

START_TEST(test_random_model)
{
	struct store *s = new_store();
	uint64_t ver[MODEL_NAMES] = { 0 };	/* 0: absent */
	unsigned tri[MODEL_NAMES] = { 0 };
	uint32_t seed = 12345;
	size_t present = 0;
	int op;

	for (op = 0; op < MODEL_OPS; op++) {
		unsigned j = lcg(&seed) % MODEL_NAMES;
		unsigned what = lcg(&seed) % 8;
		char name[8];

		/* names out of order, sharing prefixes: "k0", "k10", "k1-" ... */
		snprintf(name, sizeof(name), "k%u%s", (j * 7) % MODEL_NAMES,
			 j & 1 ? "-" : "");
		if (what < 4) {
			unsigned k = 1 + lcg(&seed) % STACK_MAX;
			enum core_result r;
			uint64_t v = 0;
			int created = -1;

			/* asked first, as a writer to a durable store does */
			ck_assert_int_eq(store_would_refuse(s, name, MODEL_LIMIT),
					 !ver[j] && present == MODEL_LIMIT);
			ck_assert_int_eq(store_would_refuse(s, name, 0), 0);
			r = store_put(s, name, make_stack(k, 0), MODEL_LIMIT, &v, &created);
			if (!ver[j] && present == MODEL_LIMIT) {
				ck_assert_int_eq(r, CORE_ETOOBIG);
				continue;
			}
			ck_assert_int_eq(r, CORE_OK);
			ck_assert_int_eq(created, ver[j] == 0);
			present += ver[j] == 0;
			ck_assert_uint_eq(v, ++ver[j]);
			tri[j] = k;
		} else if (what < 6) {
			enum core_result r = store_delete(s, name);

			ck_assert_int_eq(r, ver[j] ? CORE_OK : CORE_ENOTFOUND);
			present -= ver[j] != 0;
			ver[j] = 0;
		} else {
			uint64_t v = 0;
			struct mesh *m = store_get(s, name, &v);

			if (!ver[j]) {
				ck_assert_ptr_null(m);
				continue;
			}
			ck_assert_ptr_nonnull(m);
			ck_assert_uint_eq(v, ver[j]);
			ck_assert_uint_eq(triangles_of(m), tri[j]);
			mesh_unref(m);
		}

		if (op % 50 == 0) {
			struct store_entry *e;
			size_t n, i, meshes, tris, want_tris = 0;

			ck_assert_int_eq(store_list(s, &e, &n), CORE_OK);
			ck_assert_uint_eq(n, present);
			for (i = 1; i < n; i++)
				ck_assert_int_lt(strcmp(e[i - 1].name, e[i].name), 0);
			store_list_free(e, n);
			for (i = 0; i < MODEL_NAMES; i++)
				want_tris += ver[i] ? tri[i] : 0;
			store_totals(s, &meshes, &tris, NULL);
			ck_assert_uint_eq(meshes, present);
			ck_assert_uint_eq(tris, want_tris);
		}
	}
	store_free(s);
	assert_all_freed();
}
END_TEST

/* ---- readers racing a writer
 *
 * The writer cycles each name through create, replaces and delete. Version v
 * of name j is a stack of tris_for(v) triangles starting at z = 100 * j, so a
 * reader can tell from the mesh alone whether it matches the name and the
 * version the store reported with it. Readers run until the writer is done
 * (and at least READER_MIN_ITERS times): bounded by the writer's iterations.
 * After each write the writer waits until the readers have read RACE_PACE
 * more times, so they see every state of the table however fast builds are
 * (unpaced, a writer preferred by the lock can run its whole loop while
 * woken readers are still waiting for a CPU).
 */
#define RACE_NAMES 4
#define RACE_VERSIONS 5		/* per life of a name: v1 .. v5, then delete */
#define RACE_ROUNDS 30
#define RACE_READERS 4
#define READER_MIN_ITERS 1000
#define RACE_PACE 4

static unsigned tris_for(uint64_t v)
{
	return (unsigned)(v * 3 % STACK_MAX) + 1;	/* v = 1..5: 4, 7, 10, 13, 16 */
}

struct race {
	struct store *s;
	pthread_barrier_t start;
	int writer_done;	/* __atomic */
	int writer_failed;
	unsigned long reads;	/* __atomic: all readers' store_get calls */
};

struct reader {
	pthread_t thread;
	struct race *race;
	unsigned id;
	unsigned long reads, found, bad;
	unsigned long lists;
};

/* After a write: wait until the readers have read RACE_PACE more times. */
static void race_pace(struct race *rc)
{
	unsigned long want = __atomic_load_n(&rc->reads, __ATOMIC_RELAXED) + RACE_PACE;
	const struct timespec nap = { 0, 20000 };

	/* sleep, not spin: the readers woken by the unlock need a CPU */
	while (__atomic_load_n(&rc->reads, __ATOMIC_RELAXED) < want)
		nanosleep(&nap, NULL);
}

static void *race_writer(void *arg)
{
	struct race *rc = arg;
	char name[8];
	int round, j;
	uint64_t v, want;

	pthread_barrier_wait(&rc->start);
	for (round = 0; round < RACE_ROUNDS && !rc->writer_failed; round++) {
		for (j = 0; j < RACE_NAMES; j++) {
			snprintf(name, sizeof(name), "r%d", j);
			for (want = 1; want <= RACE_VERSIONS; want++) {
				struct mesh *m = build_stack(tris_for(want), 100.0f * j);

				if (store_put(rc->s, name, m, 0, &v, NULL) != CORE_OK ||
				    v != want)
					rc->writer_failed = 1;
				race_pace(rc);
			}
		}
		for (j = 0; j < RACE_NAMES; j++) {
			snprintf(name, sizeof(name), "r%d", j);
			if (store_delete(rc->s, name) != CORE_OK)
				rc->writer_failed = 1;
			race_pace(rc);
		}
	}
	__atomic_store_n(&rc->writer_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* No ck_assert here: Check's failure path is not thread-safe. Count instead. */
static void *race_reader(void *arg)
{
	struct reader *rd = arg;
	struct race *rc = rd->race;
	unsigned long i;
	char name[8];

	pthread_barrier_wait(&rc->start);
	for (i = 0; i < READER_MIN_ITERS ||
		    !__atomic_load_n(&rc->writer_done, __ATOMIC_ACQUIRE); i++) {
		unsigned j = (unsigned)((i + rd->id) % RACE_NAMES);
		struct mesh *m;
		uint64_t v = 0;

		rd->reads++;
		__atomic_add_fetch(&rc->reads, 1, __ATOMIC_RELAXED);

		/* one reader also takes snapshots, the other path into the table */
		if (rd->id == 0 && i % 16 == 0) {
			struct store_entry *e;
			size_t n, k;

			if (store_list(rc->s, &e, &n) != CORE_OK) {
				rd->bad++;
				continue;
			}
			for (k = 0; k < n; k++) {
				if (triangles_of(e[k].mesh) != tris_for(e[k].version))
					rd->bad++;
				if (k && strcmp(e[k - 1].name, e[k].name) >= 0)
					rd->bad++;
			}
			store_list_free(e, n);
			store_totals(rc->s, NULL, NULL, NULL);
			rd->lists++;
		}

		snprintf(name, sizeof(name), "r%u", j);
		if (rd->id % 2) {
			/* the queries' path: no reference, inside a read section */
			store_read_begin();
			m = store_peek(rc->s, name, &v);
			if (m) {
				rd->found++;
				if (v < 1 || v > RACE_VERSIONS ||
				    triangles_of(m) != tris_for(v) ||
				    ray_count(m, 100.0f * j) != tris_for(v))
					rd->bad++;
			}
			store_read_end();
			continue;
		}
		m = store_get(rc->s, name, &v);
		if (!m)
			continue;
		rd->found++;
		if (v < 1 || v > RACE_VERSIONS ||
		    triangles_of(m) != tris_for(v) ||
		    ray_count(m, 100.0f * j) != tris_for(v))
			rd->bad++;
		mesh_unref(m);
	}
	return NULL;
}

START_TEST(test_concurrent_replace)
{
	struct reader rd[RACE_READERS];
	struct race rc = { 0 };
	pthread_t writer;
	unsigned long found = 0;
	size_t meshes;
	unsigned i;

	rc.s = new_store();
	ck_assert_int_eq(pthread_barrier_init(&rc.start, NULL, RACE_READERS + 1), 0);
	for (i = 0; i < RACE_READERS; i++) {
		memset(&rd[i], 0, sizeof(rd[i]));
		rd[i].race = &rc;
		rd[i].id = i;
		ck_assert_int_eq(pthread_create(&rd[i].thread, NULL, race_reader,
						&rd[i]), 0);
	}
	ck_assert_int_eq(pthread_create(&writer, NULL, race_writer, &rc), 0);

	ck_assert_int_eq(pthread_join(writer, NULL), 0);
	for (i = 0; i < RACE_READERS; i++) {
		ck_assert_int_eq(pthread_join(rd[i].thread, NULL), 0);
		ck_assert_msg(rd[i].bad == 0, "reader %u saw %lu inconsistent meshes",
			      i, rd[i].bad);
		ck_assert_uint_ge(rd[i].reads, READER_MIN_ITERS);
		found += rd[i].found;
	}
	ck_assert_int_eq(rc.writer_failed, 0);
	ck_assert_uint_gt(found, 0);
	ck_assert_uint_gt(rd[0].lists, 0);
	pthread_barrier_destroy(&rc.start);

	/* every name was deleted last: the store holds nothing */
	store_totals(rc.s, &meshes, NULL, NULL);
	ck_assert_uint_eq(meshes, 0);
	store_free(rc.s);
	assert_all_freed();
}
END_TEST

/* ---- read sections: a delete waits for the section that peeked the mesh */

struct pinned {
	struct store *s;
	pthread_barrier_t peeked;
	int seen_ok;			/* the mesh read whole after the delete began */
	atomic_int done;		/* the section ended */
};

static void *pin_reader(void *arg)
{
	struct pinned *p = arg;
	const struct timespec nap = { 0, 50 * 1000000L };
	struct mesh *m;
	uint64_t v = 0;

	store_read_begin();
	m = store_peek(p->s, "held", &v);
	pthread_barrier_wait(&p->peeked);
	nanosleep(&nap, NULL);	/* the delete is under way meanwhile */
	p->seen_ok = m && v == 1 && triangles_of(m) == 5 && ray_count(m, 0.0f) == 5;
	atomic_store(&p->done, 1);
	store_read_end();
	return NULL;
}

START_TEST(test_delete_waits_for_sections)
{
	struct pinned p;
	pthread_t t;
	uint64_t v = 0;

	memset(&p, 0, sizeof(p));
	p.s = new_store();
	ck_assert_int_eq(store_put(p.s, "held", build_stack(5, 0.0f), 0, &v, NULL), CORE_OK);
	ck_assert_int_eq(pthread_barrier_init(&p.peeked, NULL, 2), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, pin_reader, &p), 0);
	pthread_barrier_wait(&p.peeked);
	ck_assert_int_eq(store_delete(p.s, "held"), CORE_OK);
	/* it returned only after the reader's section ended */
	ck_assert_int_eq(atomic_load(&p.done), 1);
	ck_assert_ptr_null(store_get(p.s, "held", NULL));
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(p.seen_ok, 1);
	pthread_barrier_destroy(&p.peeked);
	store_free(p.s);
	assert_all_freed();
}
END_TEST

/* A section begun after the write does not hold the writer up, and nested
 * sections end with the outermost. */
START_TEST(test_sections_nest)
{
	struct store *s = new_store();
	struct mesh *m;

	ck_assert_int_eq(store_put(s, "a", build_stack(3, 0.0f), 0, NULL, NULL), CORE_OK);
	store_read_begin();
	store_read_begin();
	m = store_peek(s, "a", NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_null(store_peek(s, "b", NULL));
	ck_assert_ptr_null(store_peek(s, "bad name", NULL));
	store_read_end();
	ck_assert_uint_eq(triangles_of(m), 3);
	store_read_end();
	/* outside every section: a write returns at once */
	ck_assert_int_eq(store_put(s, "a", build_stack(4, 0.0f), 0, NULL, NULL), CORE_OK);
	ck_assert_int_eq(store_delete(s, "a"), CORE_OK);
	store_free(s);
	assert_all_freed();
}
END_TEST

/* Every mesh a test made is freed by its end: what they took
 * from the memory budget (--max-memory, membudget.h) is all given back. */
static void budget_given_back(void)
{
	ck_assert_uint_eq(membudget_held(), 0);
}

static Suite *store_suite(void)
{
	const int nnames = (int)(sizeof(names) / sizeof(names[0]));
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("contracts");
	TCase *tr = tcase_create("concurrency");

	tcase_add_checked_fixture(tc, NULL, budget_given_back);
	tcase_add_checked_fixture(tr, NULL, budget_given_back);

	tcase_add_test(tc, test_new_is_empty);
	tcase_add_test(tc, test_put_get);
	tcase_add_test(tc, test_replace);
	tcase_add_test(tc, test_delete);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_list_sorted);
	tcase_add_loop_test(tc, test_name_valid, 0, nnames);
	tcase_add_loop_test(tc, test_put_name, 0, nnames);
	tcase_add_test(tc, test_max_meshes);
	tcase_add_test(tc, test_totals);
	tcase_add_test(tc, test_random_model);
	suite_add_tcase(s, tc);

	/* generous: TSan slows the race down a lot */
	tcase_set_timeout(tr, 120);
	tcase_add_test(tr, test_concurrent_replace);
	tcase_add_test(tr, test_delete_waits_for_sections);
	tcase_add_test(tr, test_sections_nest);
	suite_add_tcase(s, tr);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(store_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
