/* test_cpus.c - Check suite for core/cpus.c: the usable CPU count is the
 * affinity mask's, lowered to a cgroup CPU quota rounded up (v2 cpu.max
 * anywhere from the process's cgroup to the root, v1 cfs quota with or
 * without the process's path), in trees made under a temporary root. */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpus.h"

static char root[64];

/* root/rel (directories made on the way) holding text. */
static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
		*p = '/';
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	strcpy(root, "/tmp/test_cpus.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(no_cgroup_gives_the_affinity)
{
	ck_assert_uint_eq(cpus_usable_from(3, 16, NULL, root), 3);
	ck_assert_uint_eq(cpus_usable_from(0, 16, NULL, root), 16);	/* mask unknown */
	ck_assert_uint_eq(cpus_usable_from(0, 0, NULL, root), 1);
	ck_assert_uint_eq(cpus_usable_from(5, 16, "", root), 5);
	/* a cgroup with no cpu.max anywhere (the root cgroup has none) */
	ck_assert_uint_eq(cpus_usable_from(5, 16, "0::/a/b\n", root), 5);
}
END_TEST

START_TEST(v2_quota_rounds_up_and_the_lowest_wins)
{
	put("a/b/cpu.max", "max 100000\n");
	put("a/cpu.max", "150000 100000\n");
	ck_assert_uint_eq(cpus_usable_from(8, 8, "0::/a/b\n", root), 2);
	put("a/b/cpu.max", "50000 100000\n");	/* half a CPU: one thread */
	ck_assert_uint_eq(cpus_usable_from(8, 8, "0::/a/b\n", root), 1);
	put("a/b/cpu.max", "400000 100000\n");	/* the parent's 2 still binds */
	ck_assert_uint_eq(cpus_usable_from(8, 8, "0::/a/b\n", root), 2);
	put("a/cpu.max", "max 100000\n");
	ck_assert_uint_eq(cpus_usable_from(8, 8, "0::/a/b\n", root), 4);
	ck_assert_uint_eq(cpus_usable_from(3, 8, "0::/a/b\n", root), 3);	/* the mask is lower */
	ck_assert_uint_eq(cpus_usable_from(8, 8, "0::/a/b/\n", root), 4);	/* trailing slash */
	ck_assert_uint_eq(cpus_usable_from(8, 8, "0::/a/b/c/d\n", root), 4);	/* missing levels */
	ck_assert_uint_eq(cpus_usable_from(8, 8, "0::/a\n", root), 8);
}
END_TEST

START_TEST(v2_container_view_and_bad_files)
{
	/* inside a container's cgroup namespace: "0::/", the limit at the root */
	put("cpu.max", "300000 100000");
	ck_assert_uint_eq(cpus_usable_from(16, 16, "0::/\n", root), 3);
	put("cpu.max", "junk\n");
	ck_assert_uint_eq(cpus_usable_from(16, 16, "0::/\n", root), 16);
	put("cpu.max", "-5 100000\n");
	ck_assert_uint_eq(cpus_usable_from(16, 16, "0::/\n", root), 16);
	put("cpu.max", "100000 0\n");
	ck_assert_uint_eq(cpus_usable_from(16, 16, "0::/\n", root), 16);
	put("cpu.max", "");
	ck_assert_uint_eq(cpus_usable_from(16, 16, "0::/\n", root), 16);
	/* lines that are not the v2 one are skipped */
	put("cpu.max", "200000 100000\n");
	ck_assert_uint_eq(cpus_usable_from(16, 16, "garbage\n1:name=systemd:/x\n0::/\n", root), 2);
	ck_assert_uint_eq(cpus_usable_from(16, 16, "0::/", root), 2);	/* no newline */
}
END_TEST

START_TEST(v1_quota)
{
	const char *text = "12:memory:/docker/x\n4:cpu,cpuacct:/docker/x\n3:cpuset:/docker/x\n";

	put("cpu,cpuacct/docker/x/cpu.cfs_quota_us", "250000\n");
	put("cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000\n");
	ck_assert_uint_eq(cpus_usable_from(16, 16, text, root), 3);
	put("cpu,cpuacct/docker/x/cpu.cfs_quota_us", "-1\n");	/* no limit */
	ck_assert_uint_eq(cpus_usable_from(16, 16, text, root), 16);
	/* a cpuset or memory line alone sets no quota */
	ck_assert_uint_eq(cpus_usable_from(16, 16, "3:cpuset:/docker/x\n", root), 16);
}
END_TEST

START_TEST(v1_container_view_and_hybrid)
{
	/* inside a container the path is not under the mount: "cpu" itself */
	put("cpu/cpu.cfs_quota_us", "100000\n");
	put("cpu/cpu.cfs_period_us", "100000\n");
	ck_assert_uint_eq(cpus_usable_from(16, 16, "4:cpu,cpuacct:/docker/x\n", root), 1);
	/* hybrid: the v2 line comes too, the quota is v1's whatever the order */
	ck_assert_uint_eq(cpus_usable_from(16, 16, "0::/docker/x\n4:cpu,cpuacct:/docker/x\n", root), 1);
	ck_assert_uint_eq(cpus_usable_from(16, 16, "4:cpu,cpuacct:/docker/x\n0::/docker/x\n", root), 1);
	/* both set: the lower */
	put("docker/x/cpu.max", "50000 100000\n");
	put("cpu/cpu.cfs_quota_us", "300000\n");
	ck_assert_uint_eq(cpus_usable_from(16, 16, "4:cpu,cpuacct:/docker/x\n0::/docker/x\n", root), 1);
	/* "cpuacct" alone is not "cpu" */
	ck_assert_uint_eq(cpus_usable_from(16, 16, "4:cpuacct:/docker/y\n", root), 16);
}
END_TEST

/* This process: at least one CPU and no more than its mask holds; the
 * daemon's thread count under taskset is checked in tests/integration. */
START_TEST(this_process)
{
	cpu_set_t set;
	unsigned n = cpus_usable();

	ck_assert_uint_ge(n, 1);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	ck_assert_uint_le(n, (unsigned)CPU_COUNT(&set));
	ck_assert_uint_eq(cpus_usable(), n);
}
END_TEST

static Suite *cpus_suite(void)
{
	Suite *s = suite_create("cpus");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, no_cgroup_gives_the_affinity);
	tcase_add_test(tc, v2_quota_rounds_up_and_the_lowest_wins);
	tcase_add_test(tc, v2_container_view_and_bad_files);
	tcase_add_test(tc, v1_quota);
	tcase_add_test(tc, v1_container_view_and_hybrid);
	tcase_add_test(tc, this_process);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cpus_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
