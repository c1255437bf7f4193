/* alloc.c - malloc parameters and a periodic malloc_trim (see alloc.h). */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "deadline.h"
#include "cpus.h"

struct alloc_trimmer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stop;		/* under lock */
};

int alloc_tune(void)
{
	unsigned ncpu = cpus_usable();
	int arenas = (int)(ncpu > 64 ? 64 : ncpu) * ALLOC_ARENAS_PER_CPU;
	int rc = 0;

	if (getenv("GLIBC_TUNABLES"))
		return 0;	/* the operator tunes malloc explicitly */
	if (!getenv("MALLOC_ARENA_MAX") && mallopt(M_ARENA_MAX, arenas) != 1)
		rc = -1;
	/* a fixed threshold also turns off glibc's dynamic raising of it */
	if (mallopt(M_MMAP_THRESHOLD, (int)ALLOC_MMAP_THRESHOLD) != 1)
		rc = -1;
	if (mallopt(M_TRIM_THRESHOLD, (int)ALLOC_TRIM_THRESHOLD) != 1)
		rc = -1;
	return rc;
}

static void *trimmer_main(void *arg)
{
	struct alloc_trimmer *t = arg;
	struct timespec until;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		until = deadline_in_ms(CLOCK_MONOTONIC, ALLOC_TRIM_PERIOD_MS);
		while (!t->stop && pthread_cond_timedwait(&t->wake, &t->lock, &until) != ETIMEDOUT)
			;
		if (t->stop)
			break;
		pthread_mutex_unlock(&t->lock);
		malloc_trim(0);	/* every arena: free pages back to the kernel */
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int alloc_trimmer_start(struct alloc_trimmer **out)
{
	struct alloc_trimmer *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;

	*out = NULL;
	if (!t)
		return -1;
	if (pthread_condattr_init(&ca))
		goto out_free;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_cond_init(&t->wake, &ca)) {
		pthread_condattr_destroy(&ca);
		goto out_free;
	}
	pthread_condattr_destroy(&ca);
	if (pthread_mutex_init(&t->lock, NULL))
		goto out_destroy_cond;
	if (pthread_create(&t->thread, NULL, trimmer_main, t))
		goto out_destroy_lock;
	*out = t;
	return 0;
out_destroy_lock:
	pthread_mutex_destroy(&t->lock);
out_destroy_cond:
	pthread_cond_destroy(&t->wake);
out_free:
	free(t);
	return -1;
}

void alloc_trimmer_stop(struct alloc_trimmer *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
