/* rcu.h - read sections that write no shared memory, and a wait for the
 * sections in progress (epoch-based reclamation, one domain per process).
 *
 * Why: a query looked its mesh up under a reader-writer lock and held it by
 * a reference count, four atomic read-modify-writes per request on two cache
 * lines that every thread serving queries shares; on many cores those lines
 * bounced between the cores on every request. A reader here writes only its
 * own thread's slot (one cache line); a writer that unpublished something
 * calls rcu_synchronize before freeing it.
 *
 * Rules:
 * - Between rcu_read_lock and rcu_read_unlock a thread may use whatever it
 *   loaded from an RCU-published pointer; sections nest.
 * - rcu_synchronize returns once every section that was in progress when it
 *   was called has ended. It must not be called inside a section (it would
 *   wait for itself). It sleeps while it waits: writers only.
 * - A thread takes one of RCU_SLOTS slots on its first section and frees it
 *   when it exits; past RCU_SLOTS threads at once, sections fall back to a
 *   shared reader-writer lock (correct, just not contention-free).
 */
#ifndef CORE_RCU_H
#define CORE_RCU_H

#define RCU_SLOTS 256

void rcu_read_lock(void);
void rcu_read_unlock(void);

/* Wait for every section in progress now to end (see above). */
void rcu_synchronize(void);

/* 1 while the calling thread is inside a section. */
int rcu_in_section(void);

#endif
