/* test_membudget.c - the memory budget (--max-memory): takes never pass the
 * limit, also from racing threads; a mesh takes its memory_bytes once built
 * and gives them back when freed, a refused build takes nothing; a world's
 * snapshots take their blocks, a refused ingest leaves the world as it was
 * and the budget as it was. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "membudget.h"
#include "mesh.h"
#include "store.h"
#include "world.h"

/* The budget is one per process: every test leaves it unlimited and empty. */
static void teardown(void)
{
	membudget_set_limit(0);
	ck_assert_uint_eq(membudget_held(), 0);
}

START_TEST(test_take_give_limit)
{
	membudget_set_limit(1000);
	ck_assert_int_eq(membudget_take(600), 0);
	ck_assert_int_eq(membudget_fits(400), 1);
	ck_assert_int_eq(membudget_fits(401), 0);
	ck_assert_int_eq(membudget_take(401), -1);
	ck_assert_uint_eq(membudget_held(), 600);
	ck_assert_int_eq(membudget_take(400), 0);
	ck_assert_int_eq(membudget_take(1), -1);
	/* sizes near SIZE_MAX do not wrap around the check */
	ck_assert_int_eq(membudget_take((size_t)-1), -1);
	ck_assert_int_eq(membudget_fits((size_t)-1), 0);
	membudget_give(1000);
	ck_assert_int_eq(membudget_take(1001), -1);
	/* what replaces bytes held counts them as room, held passing the
	 * limit until they are given back */
	ck_assert_int_eq(membudget_take(900), 0);
	ck_assert_int_eq(membudget_take_replacing(301, 200), -1);
	ck_assert_int_eq(membudget_take_replacing(300, 200), 0);
	ck_assert_uint_eq(membudget_held(), 1200);
	membudget_give(200);
	ck_assert_int_eq(membudget_take_replacing(1, 0), -1);
	ck_assert_int_eq(membudget_take_replacing((size_t)-1, (size_t)-1), -1);
	membudget_give(1000);
	/* unlimited: every take succeeds and is counted */
	membudget_set_limit(0);
	ck_assert_int_eq(membudget_take(5000), 0);
	ck_assert_uint_eq(membudget_held(), 5000);
	ck_assert_int_eq(membudget_fits((size_t)-1), 1);
	/* a lower limit frees nothing and refuses from then on */
	membudget_set_limit(100);
	ck_assert_uint_eq(membudget_held(), 5000);
	ck_assert_int_eq(membudget_take(1), -1);
	membudget_give(5000);
}
END_TEST

#define RACERS 4
#define RACE_LIMIT 10000

static atomic_int over;

static void *racer(void *arg)
{
	unsigned s = (unsigned)(size_t)arg * 2654435761u + 1;

	for (int i = 0; i < 200000; i++) {
		size_t n;

		s = s * 1103515245u + 12345u;
		n = 1 + (s >> 16) % 3000;
		if (membudget_take(n) == 0) {
			if (membudget_held() > RACE_LIMIT)
				atomic_store(&over, 1);
			membudget_give(n);
		}
	}
	return NULL;
}

START_TEST(test_racing_takes_stay_under)
{
	pthread_t t[RACERS];

	membudget_set_limit(RACE_LIMIT);
	for (size_t i = 0; i < RACERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, racer, (void *)i), 0);
	for (size_t i = 0; i < RACERS; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(atomic_load(&over), 0);
	ck_assert_uint_eq(membudget_held(), 0);
}
END_TEST

/* An n x n grid of 2 (n-1)^2 triangles. */
static enum core_result grid(int n, struct mesh **out)
{
	float *xyz = malloc(sizeof(float) * 3 * (size_t)n * (size_t)n);
	uint32_t *idx = malloc(sizeof(uint32_t) * 6 * (size_t)(n - 1) * (size_t)(n - 1));
	size_t k = 0;
	enum core_result r;

	ck_assert_ptr_nonnull(xyz);
	ck_assert_ptr_nonnull(idx);
	for (int x = 0; x < n; x++)
		for (int z = 0; z < n; z++) {
			xyz[3 * (x * n + z)] = (float)x;
			xyz[3 * (x * n + z) + 1] = (float)((x * 7 + z * 3) % 5);
			xyz[3 * (x * n + z) + 2] = (float)z;
		}
	for (int x = 0; x + 1 < n; x++)
		for (int z = 0; z + 1 < n; z++) {
			uint32_t a = (uint32_t)(x * n + z);

			idx[k++] = a, idx[k++] = a + 1, idx[k++] = a + (uint32_t)n;
			idx[k++] = a + 1, idx[k++] = a + (uint32_t)n + 1, idx[k++] = a + (uint32_t)n;
		}
	r = mesh_build(xyz, (size_t)n * (size_t)n, idx, 2 * (size_t)(n - 1) * (size_t)(n - 1), out,
		       NULL);
	free(xyz);
	free(idx);
	return r;
}

START_TEST(test_mesh_takes_its_bytes)
{
	struct mesh *a = NULL, *b = NULL, *c = NULL;
	struct mesh_info in;

	/* unlimited: still counted */
	ck_assert_int_eq(grid(40, &a), CORE_OK);
	mesh_get_info(a, &in);
	ck_assert_uint_eq(membudget_held(), in.memory_bytes);
	/* room for a second but not a third */
	membudget_set_limit(2 * in.memory_bytes + in.memory_bytes / 2);
	ck_assert_int_eq(grid(40, &b), CORE_OK);
	ck_assert_uint_eq(membudget_held(), 2 * in.memory_bytes);
	ck_assert_int_eq(grid(40, &c), CORE_ENOSPACE);
	ck_assert_ptr_null(c);
	ck_assert_uint_eq(membudget_held(), 2 * in.memory_bytes);
	/* refused before building when even the vertices and indices cannot fit */
	ck_assert_int_eq(grid(400, &c), CORE_ENOSPACE);
	ck_assert_uint_eq(membudget_held(), 2 * in.memory_bytes);
	/* a reference keeps the bytes taken; the last one gives them back */
	mesh_ref(a);
	mesh_unref(a);
	ck_assert_uint_eq(membudget_held(), 2 * in.memory_bytes);
	mesh_unref(a);
	ck_assert_uint_eq(membudget_held(), in.memory_bytes);
	ck_assert_int_eq(grid(40, &c), CORE_OK);
	mesh_unref(b);
	mesh_unref(c);
}
END_TEST

/* 16 entities p0..p15 of four spheres each (a, b, c, d). */
static void sixteen_entities(struct hitbox_in hb[64], struct entity_in ent[16], char ids[16][8])
{
	memset(hb, 0, 64 * sizeof(*hb));
	for (int i = 0; i < 64; i++) {
		hb[i].id = (const char *[]){ "a", "b", "c", "d" }[i % 4];
		hb[i].shape = HITBOX_SPHERE;
		hb[i].a = v3((float)i, 1, 0);
		hb[i].radius = 0.5f;
	}
	for (int e = 0; e < 16; e++) {
		snprintf(ids[e], sizeof(ids[e]), "p%d", e);
		ent[e] = (struct entity_in){ ids[e], 1, &hb[4 * e], 4 };
	}
}

START_TEST(test_snapshot_refused_world_unchanged)
{
	static const struct world_opts opts = { 1e9, 64, 256 };
	struct hitbox_in hb[64];
	struct entity_in ent[16];
	char ids[16][8];
	struct store *s = NULL;
	struct world *w = NULL;
	struct world_fail f;
	struct world_info info;
	size_t one, before;

	sixteen_entities(hb, ent, ids);
	ck_assert_int_eq(store_new(&s), CORE_OK);
	ck_assert_int_eq(world_new(s, NULL, 0, &opts, &w, &f), CORE_OK);
	ck_assert_int_eq(world_ingest(w, 1, 10, ent, 16, &f), CORE_OK);
	before = membudget_held();
	ck_assert_int_eq(world_ingest(w, 2, 20, ent, 16, &f), CORE_OK);
	/* a snapshot paired with the one before it, as every later one is */
	one = membudget_held() - before;
	ck_assert_uint_gt(one, 64 * 100);
	before = membudget_held();
	membudget_set_limit(before + one - 1);
	ck_assert_int_eq(world_ingest(w, 3, 30, ent, 16, &f), CORE_ENOSPACE);
	world_get_info(w, &info);
	ck_assert_uint_eq(info.ticks, 2);
	ck_assert_uint_eq(info.newest_tick, 2);
	ck_assert_uint_eq(membudget_held(), before);
	/* exactly its size: taken */
	membudget_set_limit(before + one);
	ck_assert_int_eq(world_ingest(w, 3, 30, ent, 16, &f), CORE_OK);
	ck_assert_uint_eq(membudget_held(), before + one);
	world_get_info(w, &info);
	ck_assert_uint_eq(info.ticks, 3);
	/* a bad snapshot is refused for what is wrong with it, not for room a
	 * retry would find without making it valid: 400, 404, not 507 */
	membudget_set_limit(before + one - 1);
	ent[1].id = ent[0].id;
	ck_assert_int_eq(world_ingest(w, 4, 40, ent, 16, &f), CORE_EINVAL);
	ck_assert_uint_eq(f.item, 1);
	ent[1].id = ids[1];
	hb[5].shape = HITBOX_MESH;
	hb[5].mesh = "nowhere";
	ck_assert_int_eq(world_ingest(w, 4, 40, ent, 16, &f), CORE_ENOTFOUND);
	ck_assert_uint_eq(f.item, 1);
	ck_assert_uint_eq(f.hitbox, 1);
	ck_assert_uint_eq(membudget_held(), before + one);
	world_unref(w);
	store_free(s);
	ck_assert_uint_eq(membudget_held(), 0);
}
END_TEST

/*
 * A world at steady state (its history full, each ingest dropping the
 * oldest) under a limit that holds exactly its history: the snapshot a tick
 * drops makes the room the new one takes, so ingest goes on; it failed
 * with 507 for good once the history filled, needing room for one snapshot
 * more than the world ever keeps. A view still reading the dropped one
 * keeps its bytes counted until it is released.
 */
START_TEST(test_snapshot_steady_state_at_limit)
{
	static const struct world_opts opts = { 1e9, 64, 4 };
	struct hitbox_in hb[64];
	struct entity_in ent[16];
	char ids[16][8];
	struct store *s = NULL;
	struct world *w = NULL;
	struct world_view *v = NULL;
	struct world_fail f;
	struct world_info info;
	size_t held, one, bad;
	uint64_t t;

	sixteen_entities(hb, ent, ids);
	ck_assert_int_eq(store_new(&s), CORE_OK);
	ck_assert_int_eq(world_new(s, NULL, 0, &opts, &w, &f), CORE_OK);
	/* ticks 2-5 held, each paired with the one before: all one size */
	for (t = 1; t <= 5; t++)
		ck_assert_int_eq(world_ingest(w, t, 10.0 * t, ent, 16, &f), CORE_OK);
	world_get_info(w, &info);
	ck_assert_uint_eq(info.ticks, 4);
	held = membudget_held();
	one = held / 4;
	ck_assert_uint_eq(held, 4 * one);
	membudget_set_limit(held);
	for (; t <= 20; t++) {
		ck_assert_int_eq(world_ingest(w, t, 10.0 * t, ent, 16, &f), CORE_OK);
		ck_assert_uint_eq(membudget_held(), held);
	}
	world_get_info(w, &info);
	ck_assert_uint_eq(info.ticks, 4);
	ck_assert_uint_eq(info.newest_tick, 20);
	/* a view holds the oldest: the tick goes in, the dropped snapshot
	 * counts until the view ends */
	ck_assert_int_eq(world_view_acquire(w, &v, &bad), CORE_OK);
	ck_assert_int_eq(world_ingest(w, t, 10.0 * t, ent, 16, &f), CORE_OK);
	t++;
	ck_assert_uint_eq(membudget_held(), held + one);
	world_view_release(v);
	ck_assert_uint_eq(membudget_held(), held);
	/* one byte less than the history: refused, the world unchanged */
	membudget_set_limit(held - 1);
	ck_assert_int_eq(world_ingest(w, t, 10.0 * t, ent, 16, &f), CORE_ENOSPACE);
	world_get_info(w, &info);
	ck_assert_uint_eq(info.ticks, 4);
	ck_assert_uint_eq(info.newest_tick, t - 1);
	ck_assert_uint_eq(membudget_held(), held);
	world_unref(w);
	store_free(s);
	ck_assert_uint_eq(membudget_held(), 0);
}
END_TEST

static Suite *budget_suite(void)
{
	Suite *s = suite_create("membudget");
	TCase *tc = tcase_create("budget");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_take_give_limit);
	tcase_add_test(tc, test_racing_takes_stay_under);
	tcase_add_test(tc, test_mesh_takes_its_bytes);
	tcase_add_test(tc, test_snapshot_refused_world_unchanged);
	tcase_add_test(tc, test_snapshot_steady_state_at_limit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(budget_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
