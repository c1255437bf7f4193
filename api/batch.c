/* batch.c - the batch driver: items to framed answers, big batches split
 * across worker threads in contiguous chunks joined in order. */
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch.h"

/* A split batch is cut into at most this many chunks per thread. */
#define BATCH_CHUNKS_PER_THREAD 4
/* A worker woken by batch_pool_warm() waits this long for chunks, spinning,
 * before it sleeps again. */
#define WARM_SPIN_NS 1000000L
/* The caller of a pair, its part done, spins this long for the worker's
 * before it sleeps. */
#define FINISH_SPIN_NS 300000L
/* Scratch of this size or less lives on the stack of an unsplit batch. */
#define STACK_SCRATCH 1024
/* The chunks of a split batch and their scratch start on lines of this
 * size: each thread writes its chunk's buffer at every answer, and two
 * chunks sharing a line would bounce it between the threads. */
#define CACHE_LINE 64

struct batch_sync {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_size_t left;		/* chunks not yet finished (written under mu) */
	/* the answer's cap (the caller's buffer limit, 0: none) shared by the
	 * chunks: the bytes they hold together, and whether they passed it
	 * (every chunk then stops: the answer is a 413 whatever comes next) */
	size_t cap;
	atomic_size_t bytes;
	atomic_int over;
};

/* Items [a, b) of a job, answered into their own buffer. */
struct chunk {
	alignas(CACHE_LINE) const struct batch_job *job;
	size_t a, b;
	struct buf out;
	void *scratch;
	enum core_result res;
	size_t failed;
	size_t done_len;		/* out.len after the last item answered */
	size_t resume;			/* cut: the first item it did not run */
	int cut;			/* stopped by the chunks' shared count, not its own bytes */
	struct batch_sync *sync;
	struct chunk *next;		/* pool queue */
};

struct batch_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct chunk *head, *tail;
	atomic_size_t queued;		/* chunks in the queue, read while spinning */
	unsigned warm;			/* workers asked to wake and spin (under mu) */
	atomic_int warm_cpu;		/* the CPU batch_pool_warm ran on, or -1 */
	cpu_set_t allowed;		/* the process's CPUs when the pool was made */
	int kept_off;			/* the CPU the workers may not run on, or -1 (under mu) */
	atomic_int stop;
	unsigned nthreads;
	pthread_t *threads;
};

/* c's answer goes over the cap: it stops, and so do the others. */
static void chunk_over(struct chunk *c)
{
	c->out.over = c->out.oom = 1;
	if (c->sync)
		atomic_store_explicit(&c->sync->over, 1, memory_order_relaxed);
}

/* Items [c->a, c->b), comma-separated for JSON (none before item 0). A
 * split chunk adds what it wrote to the chunks' shared count every
 * CAP_STEP bytes (an atomic add per item, on one line for every thread,
 * would cost the big batches their scaling), so together they pass the cap
 * by at most CAP_STEP a chunk before all stop. */
#define CAP_STEP 8192

static void chunk_run(struct chunk *c)
{
	const struct batch_job *job = c->job;
	struct batch_sync *sync = c->sync && c->sync->cap ? c->sync : NULL;
	size_t i, told = c->out.len;

	c->res = CORE_OK;
	c->done_len = c->out.len;
	if (sync && atomic_load_explicit(&sync->over, memory_order_relaxed)) {
		c->cut = 1;
		c->resume = c->a;
		chunk_over(c);
		return;
	}
	for (i = c->a; i < c->b; i++) {
		if (i && job->framing == BATCH_JSON)
			buf_putc(&c->out, ',');
		c->res = job->item(job->cls, i, c->scratch, &c->out);
		if (c->res != CORE_OK) {
			c->failed = i;
			return;
		}
		/* over the cap (this buffer's, or all the chunks' together):
		 * the answer is a 413, the rest is not worth computing */
		if (c->out.over) {
			chunk_over(c);
			return;
		}
		c->done_len = c->out.len;
		if (sync && c->out.len - told >= CAP_STEP) {
			size_t add = c->out.len - told;

			told = c->out.len;
			if (atomic_fetch_add_explicit(&sync->bytes, add, memory_order_relaxed) + add >
				    sync->cap ||
			    atomic_load_explicit(&sync->over, memory_order_relaxed)) {
				c->cut = 1;
				c->resume = i + 1;
				chunk_over(c);
				return;
			}
		}
	}
}

static void chunk_finish(struct chunk *c)
{
	pthread_mutex_lock(&c->sync->mu);
	if (atomic_fetch_sub(&c->sync->left, 1) == 1)
		pthread_cond_broadcast(&c->sync->cv);
	pthread_mutex_unlock(&c->sync->mu);
}

/* The next queued chunk, or NULL (none queued). Under p->mu. */
static struct chunk *pop_locked(struct batch_pool *p)
{
	struct chunk *c = p->head;

	if (c) {
		p->head = c->next;
		if (!p->head)
			p->tail = NULL;
		atomic_fetch_sub(&p->queued, 1);
	}
	return c;
}

/* The next queued chunk, or NULL (none queued). */
static struct chunk *pool_pop(struct batch_pool *p)
{
	struct chunk *c;

	pthread_mutex_lock(&p->mu);
	c = pop_locked(p);
	pthread_mutex_unlock(&p->mu);
	return c;
}

static long elapsed_ns(const struct timespec *since)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - since->tv_sec) * 1000000000L + (t.tv_nsec - since->tv_nsec);
}

/*
 * Spin until a chunk is queued, the pool stops or WARM_SPIN_NS pass; at
 * once not on the CPU of the thread that woke it (the one parsing the
 * body): there it would only take that thread's time (measured here: the
 * parse four times as long), and sleeping lets the chunks' wake-up place it
 * anew.
 */
static void spin_for_work(struct batch_pool *p)
{
	struct timespec t0;
	unsigned k = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!atomic_load_explicit(&p->queued, memory_order_relaxed) &&
	       !atomic_load_explicit(&p->stop, memory_order_relaxed))
		if (k++ % 64 == 0 &&
		    (sched_getcpu() == atomic_load_explicit(&p->warm_cpu, memory_order_relaxed) ||
		     elapsed_ns(&t0) > WARM_SPIN_NS))
			return;
}

static void *worker(void *arg)
{
	struct batch_pool *p = arg;
	struct chunk *c;
	int rewarm;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->head && !p->stop && !p->warm)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		c = pop_locked(p);
		/* a warm is used up by the spin it asks for, or by finding the
		 * chunks already queued (else the worker would spin again after
		 * them, for nothing) */
		if (p->warm)
			p->warm--;
		pthread_mutex_unlock(&p->mu);
		if (!c) {
			spin_for_work(p);
			continue;
		}
		rewarm = c->job->warm_after == 1;	/* c is the caller's once finished */
		chunk_run(c);
		chunk_finish(c);
		if (rewarm)
			spin_for_work(p);
	}
}

/* How many chunks batch_run cuts n items into (1: not split). A few per
 * thread, taken from one queue: a worker that wakes late still gets a share
 * instead of the caller doing all. */
static size_t split_chunks(const struct batch_pool *p, size_t n, size_t split_min)
{
	size_t nchunks, most;

	if (!split_min)
		split_min = BATCH_SPLIT_MIN;
	if (!p || n < split_min)
		return 1;
	nchunks = n / (split_min / 4 ? split_min / 4 : 1);
	most = BATCH_CHUNKS_PER_THREAD * ((size_t)p->nthreads + 1);
	return nchunks < most ? nchunks : most;
}

/*
 * Keep the workers off cpu, the CPU of the thread that will run the batch's
 * first chunk (its mask changes only when cpu does: a system call per
 * worker). A kernel that packs threads onto few CPUs (some virtual machines
 * do) otherwise wakes a worker on the caller's CPU, where the two take turns
 * instead of sharing the batch: measured here, a 1000-shot hitscan's chunks
 * took 1.25 ms instead of 0.95. Under p->mu.
 */
static void keep_off(struct batch_pool *p, int cpu)
{
	cpu_set_t m = p->allowed;
	unsigned k;

	if (cpu < 0 || cpu >= CPU_SETSIZE || cpu == p->kept_off || !CPU_ISSET(cpu, &p->allowed) ||
	    CPU_COUNT(&p->allowed) < 2)
		return;
	CPU_CLR(cpu, &m);
	for (k = 0; k < p->nthreads; k++)
		pthread_setaffinity_np(p->threads[k], sizeof(m), &m);	/* a hint: failure is fine */
	p->kept_off = cpu;
}

void batch_pool_warm(struct batch_pool *p, size_t items, size_t split_min)
{
	size_t wake = split_chunks(p, items, split_min) - 1;	/* the caller runs one */
	int cpu;

	if (!wake)
		return;
	cpu = sched_getcpu();
	atomic_store_explicit(&p->warm_cpu, cpu, memory_order_relaxed);
	pthread_mutex_lock(&p->mu);
	keep_off(p, cpu);
	p->warm = wake < p->nthreads ? (unsigned)wake : p->nthreads;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

struct batch_pool *batch_pool_create(unsigned threads)
{
	struct batch_pool *p;
	unsigned k;

	if (threads == 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	atomic_init(&p->queued, 0);
	atomic_init(&p->stop, 0);
	atomic_init(&p->warm_cpu, -1);
	p->kept_off = -1;
	if (sched_getaffinity(0, sizeof(p->allowed), &p->allowed))
		CPU_ZERO(&p->allowed);	/* unknown: keep_off does nothing */
	p->threads = calloc(threads, sizeof(*p->threads));
	if (!p->threads || pthread_mutex_init(&p->mu, NULL)) {
		free(p->threads);
		free(p);
		return NULL;
	}
	if (pthread_cond_init(&p->cv, NULL)) {
		pthread_mutex_destroy(&p->mu);
		free(p->threads);
		free(p);
		return NULL;
	}
	for (k = 0; k < threads; k++) {
		if (pthread_create(&p->threads[k], NULL, worker, p))
			break;
		p->nthreads++;
	}
	if (p->nthreads < threads) {
		batch_pool_destroy(p);
		return NULL;
	}
	return p;
}

void batch_pool_destroy(struct batch_pool *p)
{
	unsigned k;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (k = 0; k < p->nthreads; k++)
		pthread_join(p->threads[k], NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->threads);
	free(p);
}

/*
 * Spin until *left is 0 or FINISH_SPIN_NS pass: the caller of a pair
 * (batch_pair), its part done, waits for the worker's, which ends about as
 * soon. Sleeping on the condition variable instead costs the wake-up after
 * it: 80 us measured on this VM, a third of a 1000-shot body's parse. A big
 * batch's caller sleeps: spinning there took the CPU that concurrent
 * requests needed (JSON ray batches, wrk t2c8: 1.55 -> 0.98 M rays/s).
 */
static void wait_spin(atomic_size_t *left)
{
	struct timespec t0;
	unsigned k = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load_explicit(left, memory_order_acquire))
		if (k++ % 64 == 0 && elapsed_ns(&t0) > FINISH_SPIN_NS)
			return;
}

/*
 * The chunks of a split run: nchunks > 1, each with its scratch. The answer
 * is the unsplit run's: the first of an item's failure and the answer
 * passing the cap, in item order. A chunk cut short by the others' bytes
 * while the answer before it is still under the cap leaves that open (an
 * item it did not run may fail first): the items from there on then run
 * here, one after another, up to the cap at the latest.
 */
static enum core_result run_split(struct batch_pool *p, const struct batch_job *job,
				  size_t nchunks, struct buf *out, size_t *failed)
{
	size_t k, total, per = (job->n + nchunks - 1) / nchunks;
	size_t sb = (job->scratch_bytes + CACHE_LINE - 1) & ~(size_t)(CACHE_LINE - 1);
	struct batch_sync sync;
	enum core_result res = CORE_OK;
	struct chunk *ch, *c, rest;
	char *scratch = NULL;
	int done = 0;

	/* whole groups to a chunk (the trailing chunks may be empty) */
	if (job->group > 1)
		per = (per + job->group - 1) / job->group * job->group;
	/* sizeof(*ch) is a multiple of CACHE_LINE; nchunks is small */
	ch = aligned_alloc(CACHE_LINE, nchunks * sizeof(*ch));
	if (ch)
		memset(ch, 0, nchunks * sizeof(*ch));
	if (sb && nchunks <= SIZE_MAX / sb)
		scratch = aligned_alloc(CACHE_LINE, nchunks * sb);
	if (!ch || (sb && !scratch)) {
		free(ch);
		free(scratch);
		return CORE_ENOMEM;
	}
	atomic_init(&sync.left, nchunks - 1);
	sync.cap = out->limit;
	atomic_init(&sync.bytes, out->len);
	atomic_init(&sync.over, 0);
	pthread_mutex_init(&sync.mu, NULL);
	pthread_cond_init(&sync.cv, NULL);
	for (k = 0; k < nchunks; k++) {
		c = &ch[k];
		c->job = job;
		c->a = k * per < job->n ? k * per : job->n;
		c->b = c->a + per < job->n ? c->a + per : job->n;
		buf_init(&c->out);
		buf_set_limit(&c->out, out->limit);	/* no chunk alone past the cap */
		buf_reserve(&c->out, (c->b - c->a) * job->answer_bytes + BATCH_ITEM_ROOM);
		c->scratch = sb ? scratch + k * sb : NULL;
		c->sync = &sync;
	}
	/* chunks 1.. to the workers, chunk 0 here, then help with the queue */
	pthread_mutex_lock(&p->mu);
	for (k = 1; k < nchunks; k++) {
		ch[k].next = NULL;
		if (p->tail)
			p->tail->next = &ch[k];
		else
			p->head = &ch[k];
		p->tail = &ch[k];
	}
	atomic_fetch_add(&p->queued, nchunks - 1);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	chunk_run(&ch[0]);
	while ((c = pool_pop(p)) != NULL) {
		chunk_run(c);
		chunk_finish(c);
	}
	if (job->warm_after)
		wait_spin(&sync.left);
	pthread_mutex_lock(&sync.mu);	/* also: the last chunk_finish is out of mu and cv */
	while (atomic_load(&sync.left))
		pthread_cond_wait(&sync.cv, &sync.mu);
	pthread_mutex_unlock(&sync.mu);
	for (k = 0, total = 0; k < nchunks; k++)
		total += ch[k].out.len;
	buf_reserve(out, total + 2);	/* and the framing's end */
	for (k = 0; k < nchunks; k++) {
		c = &ch[k];
		if (done || out->over) {
			/* decided before this chunk */
		} else if (c->res != CORE_OK) {
			/* the items before the failing one pass the cap first,
			 * or the failure is the answer */
			if (c->done_len > buf_cap_left(out)) {
				out->over = out->oom = 1;
			} else {
				res = c->res;
				*failed = c->failed;
			}
			done = 1;
		} else if (c->out.over && (!c->cut || c->done_len > buf_cap_left(out))) {
			/* over the cap by its own bytes, or with the chunks
			 * before it: the answer is over the cap, not this part */
			out->over = out->oom = 1;
		} else if (c->out.over) {
			/* cut short under the cap: on from its first item not
			 * run (its scratch still holds its group's casts) */
			buf_append(out, c->out.data ? c->out.data : "", c->done_len);
			rest = (struct chunk){ .job = job, .a = c->resume, .b = job->n,
					       .scratch = c->scratch };
			rest.out = *out;
			chunk_run(&rest);
			*out = rest.out;
			if (rest.res != CORE_OK) {
				res = rest.res;
				*failed = rest.failed;
			}
			done = 1;
		} else {
			buf_append(out, c->out.data ? c->out.data : "", c->out.len);
			if (c->out.oom)
				out->oom = 1;
		}
		buf_release(&c->out);
	}
	pthread_cond_destroy(&sync.cv);
	pthread_mutex_destroy(&sync.mu);
	free(scratch);
	free(ch);
	return res;
}

enum core_result batch_run(struct batch_pool *pool, const struct batch_job *job, struct buf *out,
			   size_t *failed)
{
	alignas(max_align_t) char stack[STACK_SCRATCH];
	struct chunk one = { .job = job, .a = 0, .b = job->n };
	size_t nchunks;
	enum core_result res;

	*failed = 0;
	nchunks = split_chunks(pool, job->n, job->split_min);
	if (job->framing == BATCH_JSON)
		buf_puts(out, "{\"results\":[");
	if (nchunks > 1) {
		res = run_split(pool, job, nchunks, out, failed);
	} else {
		buf_reserve(out, 32 + job->n * job->answer_bytes + BATCH_ITEM_ROOM);
		one.out = *out;
		one.scratch = job->scratch_bytes <= sizeof(stack) ? stack : malloc(job->scratch_bytes);
		if (!one.scratch)
			return CORE_ENOMEM;
		chunk_run(&one);
		*out = one.out;
		if (one.scratch != stack)
			free(one.scratch);
		res = one.res;
		*failed = one.failed;
	}
	if (res == CORE_OK && job->framing == BATCH_JSON)
		buf_puts(out, "]}");
	return res;
}

struct pair {
	void (*fn)(void *);
	void *arg[2];
};

static enum core_result pair_item(const void *cls, size_t i, void *scratch, struct buf *out)
{
	const struct pair *pr = cls;

	(void)scratch;
	(void)out;
	pr->fn(pr->arg[i]);
	return CORE_OK;
}

static void pair_run(struct batch_pool *pool, void (*fn)(void *), void *arg0, void *arg1,
		     int warm_after)
{
	struct pair pr = { fn, { arg0, arg1 } };
	/* two items, two chunks: split_min 2 cuts chunks of one item */
	struct batch_job job = { 2, BATCH_BINARY, 0, 0, pair_item, &pr, 2, warm_after, 0 };
	struct buf none;
	size_t failed;

	buf_init(&none);
	/* pair_item never fails: an error is the split's memory, found before
	 * either item ran */
	if (batch_run(pool, &job, &none, &failed) != CORE_OK) {
		fn(arg0);
		fn(arg1);
	}
	buf_release(&none);
}

void batch_pair(struct batch_pool *pool, void (*fn)(void *), void *arg0, void *arg1)
{
	pair_run(pool, fn, arg0, arg1, 1);
}

void batch_pair_rest(struct batch_pool *pool, void (*fn)(void *), void *arg0, void *arg1)
{
	pair_run(pool, fn, arg0, arg1, 2);
}
