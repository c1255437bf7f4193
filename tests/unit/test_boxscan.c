/* test_boxscan.c - Check suite for core/boxscan.c: every ISA's answer,
 * bits and entry t, equals tlas_box_entry box by box (the scalar slab test
 * the culling relied on before), on random boxes and rays that include
 * axis-parallel directions, tiny directions (huge reciprocals), rays starting on or inside boxes, boxes of zero width, empty
 * boxes, and every group length and offset. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "boxscan.h"
#include "testgeom.h"

#define NBOX 203

static const enum boxscan_isa isas[] = { BOXSCAN_SCALAR, BOXSCAN_AVX2, BOXSCAN_AVX512 };

/* A coordinate on a coarse grid half the time (so that rays start on
 * planes and graze edges), anywhere otherwise. */
static float coord(struct rng *g)
{
	return rng_next(g) & 1 ? (float)((int)(rng_next(g) % 9) - 4)
			       : (float)rng_range(g, -6, 6);
}

static void random_boxes(struct rng *g, struct box_planes *b)
{
	size_t i;

	ck_assert_int_eq(box_planes_init(b, NBOX), CORE_OK);
	for (i = 0; i < NBOX; i++) {
		vec3 lo = v3(coord(g), coord(g), coord(g)), hi;

		switch (rng_next(g) % 8) {
		case 0:		/* left empty, as an entity without hitboxes */
			continue;
		case 1:		/* zero width on one axis */
			hi = v3(lo.x + 1, lo.y, lo.z + 2);
			break;
		case 2:		/* inverted */
			hi = v3(lo.x - 1, lo.y - 1, lo.z - 1);
			break;
		default:
			hi = v3(lo.x + (float)rng_range(g, 0, 5), lo.y + (float)rng_range(g, 0, 5),
				lo.z + (float)rng_range(g, 0, 5));
		}
		box_planes_set(b, i, lo, hi);
	}
}

/* Half the rays aim at a point of the boxes' region (so that many meet
 * some), with each direction component possibly zero or tiny. */
static struct ray random_ray(struct rng *g)
{
	struct ray r;
	float d[3], at[3];
	int k, aim = rng_next(g) & 1;

	r.origin = v3(coord(g), coord(g), coord(g));
	at[0] = coord(g) - r.origin.x;
	at[1] = coord(g) - r.origin.y;
	at[2] = coord(g) - r.origin.z;
	for (k = 0; k < 3; k++) {
		switch (rng_next(g) % 6) {
		case 0:
			d[k] = 0;
			break;
		case 1:
			d[k] = rng_next(g) & 1 ? FLT_TRUE_MIN : -1e-39f;	/* a huge 1/d */
			break;
		default:
			d[k] = aim ? at[k] : (float)rng_range(g, -1, 1);
		}
	}
	r.dir = v3(d[0], d[1], d[2]);
	r.tmax = rng_next(g) % 4 ? (float)rng_range(g, 0, 20) : INFINITY;
	return r;
}

START_TEST(isas_match_the_scalar_test)
{
	struct rng g = { 0xb0c5u + (uint64_t)_i };
	struct box_planes b;
	int n, checked = 0, met = 0;
	size_t v;

	random_boxes(&g, &b);
	for (n = 0; n < 3000; n++) {
		struct ray ray = random_ray(&g);
		struct tlas_ray r;
		size_t first = rng_next(&g) % NBOX;
		unsigned len = (unsigned)(rng_next(&g) % BOXSCAN_MAX) + 1;
		double tmax = ray.tmax;

		if (first + len > NBOX)
			len = (unsigned)(NBOX - first);
		tlas_ray_init(&r, &ray);
		for (v = 0; v < sizeof(isas) / sizeof(isas[0]); v++) {
			double tin[BOXSCAN_MAX];
			uint32_t bits = box_planes_hits_isa(&b, &r, first, len, tmax, tin, isas[v]);
			unsigned j;

			for (j = 0; j < BOXSCAN_MAX; j++) {
				size_t i = first + j;
				float lo[3], hi[3];
				double want;
				int k;

				if (j >= len) {
					ck_assert_msg(!(bits >> j & 1), "isa %zu: bit %u past n %u", v, j, len);
					continue;
				}
				for (k = 0; k < 3; k++) {
					lo[k] = b.p[(size_t)k * b.stride + i];
					hi[k] = b.p[(size_t)(k + 3) * b.stride + i];
				}
				want = tlas_box_entry(&r, lo, hi, tmax);
				ck_assert_msg((int)(bits >> j & 1) == (want >= 0),
					      "isa %zu ray %d box %zu: bit %u, scalar %g", v, n, i,
					      (unsigned)(bits >> j & 1), want);
				if (want >= 0) {
					ck_assert_msg(memcmp(&tin[j], &want, sizeof(want)) == 0,
						      "isa %zu ray %d box %zu: tin %.17g, scalar %.17g", v,
						      n, i, tin[j], want);
					met += v == 0;
				}
				checked++;
			}
		}
	}
	/* the cases are not all misses, nor all hits (checked counts each
	 * box once per isa, met once) */
	ck_assert_int_gt(met, checked / 3 / 100);
	ck_assert_int_lt(met, checked / 3 / 2);
	box_planes_release(&b);
}
END_TEST

/* The scan tells the same as the tree: an entity's box met by the ray. */
START_TEST(empty_boxes_never_met)
{
	struct box_planes b;
	struct ray ray = { v3(0, 0, 0), v3(1, 0, 0), INFINITY };
	struct tlas_ray r;
	double tin[BOXSCAN_MAX];
	size_t v;

	ck_assert_int_eq(box_planes_init(&b, 5), CORE_OK);
	box_planes_set(&b, 2, v3(3, -1, -1), v3(4, 1, 1));
	tlas_ray_init(&r, &ray);
	for (v = 0; v < sizeof(isas) / sizeof(isas[0]); v++) {
		ck_assert_uint_eq(box_planes_hits_isa(&b, &r, 0, 5, INFINITY, tin, isas[v]), 1u << 2);
		ck_assert(tin[2] == 3);
		ck_assert_uint_eq(box_planes_hits_isa(&b, &r, 0, 5, 2.5, tin, isas[v]), 0);
		ck_assert_uint_eq(box_planes_hits_isa(&b, &r, 2, 1, 3, tin, isas[v]), 1);
	}
	box_planes_release(&b);
}
END_TEST

static Suite *boxscan_suite(void)
{
	Suite *s = suite_create("boxscan");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, isas_match_the_scalar_test, 0, 4);
	tcase_add_test(tc, empty_boxes_never_met);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(boxscan_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
