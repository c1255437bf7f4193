/* rcu.c - epoch-based read sections (see rcu.h).
 *
 * A global epoch counts calls of rcu_synchronize. A reader entering its
 * outermost section stores the epoch it reads into its slot (seq_cst), then
 * loads the published pointers; it stores 0 when it leaves. rcu_synchronize,
 * called after the writer published its replacement, advances the epoch from
 * e to e + 1 and waits until no slot holds a value in 1..e. A reader that
 * loaded the old pointer stored its slot before that load, so in the single
 * order of seq_cst operations its slot (<= e) precedes the writer's scan: the
 * writer sees it, and waits. A reader that entered later holds e + 1, or
 * loaded the new pointer.
 */
#include "rcu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

struct rcu_slot {
	_Alignas(64) _Atomic uint64_t epoch;	/* 0: not in a section */
	atomic_int used;			/* owned by a live thread */
};

static struct rcu_slot slots[RCU_SLOTS];
static _Atomic uint64_t epoch = 1;
static atomic_uint slots_seen;		/* slots ever taken: the writer scans these */

/* Readers without a slot (more than RCU_SLOTS threads) share this lock. */
static pthread_rwlock_t overflow = PTHREAD_RWLOCK_INITIALIZER;

static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;

static _Thread_local struct rcu_slot *mine;
static _Thread_local unsigned depth;
static _Thread_local int overflowed;	/* this section holds the overflow lock */

/* Thread exit: the slot goes back to the pool. */
static void slot_release(void *p)
{
	struct rcu_slot *s = p;

	atomic_store_explicit(&s->epoch, 0, memory_order_release);
	atomic_store_explicit(&s->used, 0, memory_order_release);
}

static void make_key(void)
{
	pthread_key_create(&slot_key, slot_release);
}

/* The calling thread's slot, taken on first use; NULL when none is free. */
static struct rcu_slot *slot_get(void)
{
	unsigned i;

	if (mine)
		return mine;
	pthread_once(&slot_once, make_key);
	for (i = 0; i < RCU_SLOTS; i++) {
		int free_slot = 0;

		if (atomic_compare_exchange_strong(&slots[i].used, &free_slot, 1)) {
			unsigned seen = atomic_load(&slots_seen);

			while (seen < i + 1 &&
			       !atomic_compare_exchange_weak(&slots_seen, &seen, i + 1))
				;
			if (pthread_setspecific(slot_key, &slots[i]) != 0) {
				atomic_store(&slots[i].used, 0);
				return NULL;
			}
			mine = &slots[i];
			return mine;
		}
	}
	return NULL;
}

void rcu_read_lock(void)
{
	struct rcu_slot *s;

	if (depth++)
		return;
	s = slot_get();
	if (!s) {
		pthread_rwlock_rdlock(&overflow);
		overflowed = 1;
		return;
	}
	atomic_store(&s->epoch, atomic_load(&epoch));
}

void rcu_read_unlock(void)
{
	if (--depth)
		return;
	if (overflowed) {
		overflowed = 0;
		pthread_rwlock_unlock(&overflow);
		return;
	}
	atomic_store_explicit(&mine->epoch, 0, memory_order_release);
}

int rcu_in_section(void)
{
	return depth > 0;
}

void rcu_synchronize(void)
{
	const struct timespec nap = { 0, 20000 };
	uint64_t e = atomic_fetch_add(&epoch, 1);
	unsigned i, n = atomic_load(&slots_seen);

	for (i = 0; i < n; i++) {
		uint64_t v;

		while ((v = atomic_load(&slots[i].epoch)) != 0 && v <= e)
			nanosleep(&nap, NULL);
	}
	pthread_rwlock_wrlock(&overflow);
	pthread_rwlock_unlock(&overflow);
}
