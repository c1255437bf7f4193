/* par.c - split a loop over a few threads (see par.h). */
#include <pthread.h>

#include "cpus.h"
#include "par.h"

int par_threads(size_t n)
{
	unsigned c;

	if (n < PAR_MIN_ITEMS)
		return 1;
	c = cpus_usable();
	return c > 8 ? 8 : (int)c;
}

void par_chunk(size_t n, int nchunks, int c, size_t *begin, size_t *end)
{
	*begin = n / (size_t)nchunks * (size_t)c + (n % (size_t)nchunks < (size_t)c ? n % (size_t)nchunks : (size_t)c);
	*end = *begin + n / (size_t)nchunks + ((size_t)c < n % (size_t)nchunks);
}

struct par_job {
	par_fn fn;
	void *ctx;
	int chunk;
	size_t begin, end;
};

static void *par_run(void *arg)
{
	struct par_job *j = arg;

	j->fn(j->ctx, j->chunk, j->begin, j->end);
	return NULL;
}

void par_for(size_t n, int nchunks, par_fn fn, void *ctx)
{
	struct par_job jobs[PAR_MAX];
	pthread_t tid[PAR_MAX];
	int started[PAR_MAX] = { 0 };

	if (nchunks < 1)
		nchunks = 1;
	if (nchunks > PAR_MAX)
		nchunks = PAR_MAX;
	for (int c = 0; c < nchunks; c++) {
		jobs[c] = (struct par_job){ fn, ctx, c, 0, 0 };
		par_chunk(n, nchunks, c, &jobs[c].begin, &jobs[c].end);
	}
	for (int c = 1; c < nchunks; c++)
		started[c] = pthread_create(&tid[c], NULL, par_run, &jobs[c]) == 0;
	par_run(&jobs[0]);
	for (int c = 1; c < nchunks; c++) {
		if (started[c])
			pthread_join(tid[c], NULL);
		else
			par_run(&jobs[c]);
	}
}
