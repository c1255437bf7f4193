/* deadline.h - an absolute time ms milliseconds from now on clock clk, for
 * pthread_cond_timedwait and pthread_mutex_timedlock. */
#ifndef SERVER_DEADLINE_H
#define SERVER_DEADLINE_H

#include <time.h>

static inline struct timespec deadline_in_ms(clockid_t clk, long ms)
{
	struct timespec t;

	clock_gettime(clk, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += ms % 1000 * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

#endif
