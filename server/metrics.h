/* metrics.h - request, latency and ray counters in Prometheus text format.
 *
 * Counters are C11 atomics in fixed tables, so recording never takes a lock
 * and label cardinality is bounded. Each thread counts into one of
 * METRICS_SHARDS shards of its own (chosen on its first request, round
 * robin), summed when rendered: with one shared table every request's
 * increments bounced the same cache lines between the cores serving it.
 * Label cardinality: at most METRICS_ROUTES route labels (the
 * first ones seen, in order; later ones count as "other"), a fixed set of
 * methods and status codes (others count as "other"), a fixed set of ray
 * kinds. Route labels must be static strings (api_response.route_label).
 *
 * Thread-safety: metrics_record and metrics_render may run concurrently
 * from any threads. The struct is large; allocate it, do not put it on a
 * stack.
 */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"

struct store;

#define METRICS_ROUTES	32
#define METRICS_METHODS	8
#define METRICS_STATUSES 18
#define METRICS_BUCKETS	16	/* finite upper bounds; +Inf is the count */
#define METRICS_KINDS	8

#define METRICS_SHARDS	16	/* threads beyond this share shards */

struct metrics_route {
	atomic_uint_fast64_t requests[METRICS_METHODS][METRICS_STATUSES];
	atomic_uint_fast64_t buckets[METRICS_BUCKETS + 1];	/* not cumulative */
	atomic_uint_fast64_t sum_us;
};

/* The counters one thread (or a few, past METRICS_SHARDS) adds to. */
struct metrics_shard {
	_Alignas(64) struct metrics_route routes[METRICS_ROUTES];
	atomic_uint_fast64_t rays[METRICS_KINDS];
	/* worlds */
	atomic_uint_fast64_t world_shots[3];	/* static, entity, miss (api.h API_SHOT_*) */
	atomic_uint_fast64_t world_snapshots;
};

/* Allocate with metrics_new (the shards are cache-line aligned). */
struct metrics {
	double start_time;		/* Unix seconds, for process_start_time_seconds */
	_Atomic(const char *) labels[METRICS_ROUTES];	/* route slot i's label */
	struct metrics_shard shard[METRICS_SHARDS];

	/* --store (store_redis.c): 0 none, 1 down, 2 up; full resyncs done */
	atomic_int store_state;
	atomic_uint_fast64_t store_resyncs;
	atomic_size_t store_skipped;	/* names the --store holds that --max-memory kept out */
};

/* A zeroed struct metrics with the start time noted; NULL when out of
 * memory. Free with free(). */
struct metrics *metrics_new(void);

/*
 * Count one finished request. route: a static label (NULL = "unmatched");
 * method: the HTTP method; status: the status sent; duration_us: from the
 * first byte of the request to the end of the response; ray_kind (may be
 * NULL) and rays: what api_response reported.
 */
void metrics_record(struct metrics *m, const char *route, const char *method, int status,
		    uint64_t duration_us, const char *ray_kind, uint64_t rays);

/* Append the Prometheus text exposition (version 0.0.4) to out, with the
 * store's gauges when store is not NULL. */
void metrics_render(struct metrics *m, struct store *store, const char *version,
		    struct buf *out);

/* Worlds: count one response's shots by outcome and snapshots ingested. */
void metrics_record_worlds(struct metrics *m, const uint64_t shots[3], uint64_t snapshots);

struct world_registry;
/* Append the worlds' series (worlds held, snapshots, shots by outcome);
 * reg may be NULL (0 worlds). */
void metrics_render_worlds(struct metrics *m, struct world_registry *reg, struct buf *out);

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
