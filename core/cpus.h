/* cpus.h - how many CPUs this process may really use: the CPUs of its
 * affinity mask (taskset, a container's cpuset), and no more than its
 * cgroup's CPU quota (docker --cpus, a Kubernetes CPU limit) rounded up.
 * The online CPU count alone overstates both: a daemon pinned to 2 of 64
 * CPUs would start 64 workers to share them. */
#ifndef CORE_CPUS_H
#define CORE_CPUS_H

/* The usable CPUs of this process (>= 1), worked out once. */
unsigned cpus_usable(void);

/*
 * The same from explicit inputs, for tests: affinity (CPUs in the mask, 0:
 * unknown, then online), proc_cgroup (the text of /proc/self/cgroup, may be
 * NULL) and the cgroup mount root (normally "/sys/fs/cgroup"). A cgroup v2
 * quota is the lowest "cpu.max" from the process's cgroup up to the root; a
 * v1 quota is cpu.cfs_quota_us / cpu.cfs_period_us of its cpu controller.
 */
unsigned cpus_usable_from(unsigned affinity, unsigned online, const char *proc_cgroup,
			  const char *root);

#endif
