/* cpus.c - the CPUs this process may use: its affinity mask and its
 * cgroup's CPU quota (see cpus.h). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus.h"

#define CPUS_PATH 4096

/* The first line of file path into buf (NUL-terminated, newline dropped); 0
 * or -1 when it cannot be read. */
static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* ceil(quota / period) of a positive quota, at least 1; 0 for none. */
static unsigned quota_cpus(long long quota, long long period)
{
	unsigned long long n;

	if (quota <= 0 || period <= 0)
		return 0;
	n = ((unsigned long long)quota + (unsigned long long)period - 1) / (unsigned long long)period;
	return n > 65536 ? 65536 : n < 1 ? 1 : (unsigned)n;
}

/* The CPUs of dir's cgroup v2 "cpu.max" ("max P" or "Q P"); 0 for none. */
static unsigned v2_quota(const char *dir)
{
	char path[CPUS_PATH + 16], line[128];
	long long q, p;

	snprintf(path, sizeof(path), "%s/cpu.max", dir);
	if (read_line(path, line, sizeof(line)) || sscanf(line, "%lld %lld", &q, &p) != 2)
		return 0;	/* missing, "max ...", or unreadable: no quota here */
	return quota_cpus(q, p);
}

/* The lowest cgroup v2 quota from root + rel up to root; 0 for none. */
static unsigned v2_lowest(const char *root, const char *rel)
{
	char dir[CPUS_PATH];
	size_t base;
	unsigned best = 0, n;
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s%s%s", root, *rel == '/' ? "" : "/", rel) >= (int)sizeof(dir))
		return 0;
	base = strlen(root);
	while (strlen(dir) > base && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	for (;;) {
		n = v2_quota(dir);
		if (n && (!best || n < best))
			best = n;
		slash = strrchr(dir, '/');
		if (strlen(dir) <= base || !slash || (size_t)(slash - dir) < base)
			break;
		*slash = '\0';	/* the parent; the root last */
	}
	return best;
}

/* The CPUs of a cgroup v1 cpu controller's quota in dir; 0 for none,
 * -1 when dir has no quota file. */
static int v1_quota(const char *dir, unsigned *out)
{
	char path[CPUS_PATH * 2 + 32], line[64];
	long long q, p;

	snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
	if (read_line(path, line, sizeof(line)) || sscanf(line, "%lld", &q) != 1)
		return -1;
	snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
	if (read_line(path, line, sizeof(line)) || sscanf(line, "%lld", &p) != 1)
		return -1;
	*out = quota_cpus(q, p);
	return 0;
}

/* 1 when the comma-separated list ctrls names the "cpu" controller. */
static int names_cpu(const char *ctrls, size_t len)
{
	size_t i = 0, j;

	while (i < len) {
		for (j = i; j < len && ctrls[j] != ','; j++)
			;
		if (j - i == 3 && memcmp(ctrls + i, "cpu", 3) == 0)
			return 1;
		i = j + 1;
	}
	return 0;
}

/* The quota of a v1 cpu controller line's fields (ctrls, the list of
 * controllers, and rel, the process's path): the controller's mount (named
 * by its list, or "cpu"), with rel, or without it inside a container; 0
 * for none. */
static unsigned v1_lowest(const char *root, const char *ctrls, const char *rel)
{
	const char *mounts[2] = { ctrls, "cpu" };
	char dir[CPUS_PATH * 2 + 8];
	unsigned n;
	int k, with;

	for (with = 1; with >= 0; with--)
		for (k = 0; k < 2; k++) {
			snprintf(dir, sizeof(dir), "%s/%s%s", root, mounts[k], with ? rel : "");
			if (v1_quota(dir, &n) == 0)
				return n;
		}
	return 0;
}

static unsigned lower(unsigned a, unsigned b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/* The quota of /proc/self/cgroup's text: the lower of the v2 one ("0::/path")
 * and the v1 cpu controller's ("N:cpu,cpuacct:/path"; a hybrid system has
 * both lines, the cpu controller on v1); 0 for none. */
static unsigned cgroup_quota(const char *text, const char *root)
{
	const char *line = text, *end, *c1, *c2;
	char rel[CPUS_PATH], ctrls[256];
	unsigned q = 0;

	for (; *line; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		c1 = memchr(line, ':', (size_t)(end - line));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		if (!c2 || (size_t)(end - c2 - 1) >= sizeof(rel) || (size_t)(c2 - c1 - 1) >= sizeof(ctrls))
			continue;
		memcpy(rel, c2 + 1, (size_t)(end - c2 - 1));
		rel[end - c2 - 1] = '\0';
		memcpy(ctrls, c1 + 1, (size_t)(c2 - c1 - 1));
		ctrls[c2 - c1 - 1] = '\0';
		if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0')
			q = lower(q, v2_lowest(root, rel));
		else if (names_cpu(ctrls, strlen(ctrls)))
			q = lower(q, v1_lowest(root, ctrls, rel));
	}
	return q;
}

unsigned cpus_usable_from(unsigned affinity, unsigned online, const char *proc_cgroup,
			  const char *root)
{
	unsigned n = affinity ? affinity : online, q;

	if (n < 1)
		n = 1;
	q = proc_cgroup && root ? cgroup_quota(proc_cgroup, root) : 0;
	return q && q < n ? q : n;
}

static unsigned usable;
static pthread_once_t usable_once = PTHREAD_ONCE_INIT;

static void usable_init(void)
{
	char text[8192];
	size_t len = 0;
	cpu_set_t set;
	unsigned affinity = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	FILE *f = fopen("/proc/self/cgroup", "r");
	int have = f != NULL;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		affinity = (unsigned)CPU_COUNT(&set);
	if (f) {
		len = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[len] = '\0';
	usable = cpus_usable_from(affinity, online < 1 ? 1 : (unsigned)online, have ? text : NULL,
				  "/sys/fs/cgroup");
}

unsigned cpus_usable(void)
{
	pthread_once(&usable_once, usable_init);
	return usable;
}
