/* metrics.c - lock-free request/ray counters and their Prometheus text
 * exposition (see metrics.h). */
#include "metrics.h"
#include "world_registry.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "membudget.h"
#include "snapmem.h"
#include "store.h"

static const char *const method_names[METRICS_METHODS] = {
	"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "other",
};

static const int status_codes[METRICS_STATUSES] = {
	200, 201, 204, 400, 401, 403, 404, 405, 408, 409, 413, 415, 431, 500, 503, 507, 0, -1,
};
/* the next to last: a request that ended before a response was sent ("0"),
 * the last: any other code ("other"); 409 is the snapshots' conflict, 507
 * a full --data-dir */

/* Upper bounds in microseconds. */
static const uint64_t bucket_us[METRICS_BUCKETS] = {
	50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
	100000, 250000, 500000, 1000000, 2500000, 10000000,
};

/* The same bounds as Prometheus le labels, in seconds. */
static const char *const bucket_le[METRICS_BUCKETS] = {
	"5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
	"0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "10",
};

static const char *const kind_names[METRICS_KINDS] = {
	"mesh_ray", "mesh_segment", "obb_ray", "hitscan", "overlap", "world_hitscan", "world_raycast",
	"other",
};

struct metrics *metrics_new(void)
{
	size_t bytes = (sizeof(struct metrics) + 63) / 64 * 64;
	struct metrics *m = aligned_alloc(64, bytes);
	struct timespec ts;
	size_t i;

	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	for (i = 0; i < METRICS_ROUTES; i++)
		atomic_init(&m->labels[i], NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	m->start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	return m;
}

/* The calling thread's shard: picked round robin on its first call. */
static struct metrics_shard *my_shard(struct metrics *m)
{
	static atomic_uint next;
	static _Thread_local unsigned mine;	/* shard + 1; 0 = not picked yet */

	if (!mine)
		mine = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) %
			       METRICS_SHARDS + 1;
	return &m->shard[mine - 1];
}

/*
 * The slot of label: slots fill in order and are never emptied, so every
 * thread scanning in the same order agrees on one slot per label even when
 * two register it at once. The last slot collects "other".
 */
static size_t route_slot(struct metrics *m, const char *label)
{
	size_t i;

	/* labels are the route table's strings: the same pointer, mostly */
	for (i = 0; i < METRICS_ROUTES - 1; i++) {
		const char *cur = atomic_load_explicit(&m->labels[i], memory_order_acquire);

		if (cur == label)
			return i;
		if (!cur)
			break;
	}
	for (i = 0; i < METRICS_ROUTES - 1; i++) {
		const char *cur = atomic_load_explicit(&m->labels[i], memory_order_acquire);

		if (!cur) {
			const char *expected = NULL;

			if (atomic_compare_exchange_strong(&m->labels[i], &expected, label))
				return i;
			cur = expected;
		}
		if (cur == label || strcmp(cur, label) == 0)
			return i;
	}
	return METRICS_ROUTES - 1;
}

static size_t method_index(const char *method)
{
	size_t i;

	for (i = 0; i < METRICS_METHODS - 1; i++)
		if (method[0] == method_names[i][0] && strcmp(method, method_names[i]) == 0)
			return i;
	return METRICS_METHODS - 1;
}

static size_t status_index(int status)
{
	size_t i;

	for (i = 0; i < METRICS_STATUSES - 1; i++)
		if (status_codes[i] == status)
			return i;
	return METRICS_STATUSES - 1;
}

void metrics_record(struct metrics *m, const char *route, const char *method, int status,
		    uint64_t duration_us, const char *ray_kind, uint64_t rays)
{
	struct metrics_shard *sh = my_shard(m);
	struct metrics_route *r = &sh->routes[route_slot(m, route ? route : "unmatched")];
	size_t b = 0, k;

	atomic_fetch_add_explicit(&r->requests[method_index(method)][status_index(status)], 1,
				  memory_order_relaxed);
	while (b < METRICS_BUCKETS && duration_us > bucket_us[b])
		b++;
	atomic_fetch_add_explicit(&r->buckets[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->sum_us, duration_us, memory_order_relaxed);
	if (ray_kind && rays) {
		for (k = 0; k < METRICS_KINDS - 1; k++)
			if (ray_kind == kind_names[k] || strcmp(ray_kind, kind_names[k]) == 0)
				break;
		atomic_fetch_add_explicit(&sh->rays[k], rays, memory_order_relaxed);
	}
}

static uint64_t load(atomic_uint_fast64_t *a)
{
	return atomic_load_explicit(a, memory_order_relaxed);
}

/* The sum over the shards of the counter at byte offset off in a shard. */
static uint64_t total(struct metrics *m, size_t off)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < METRICS_SHARDS; i++)
		v += load((atomic_uint_fast64_t *)(void *)((char *)&m->shard[i] + off));
	return v;
}

#define TOTAL(m, field) \
	total((m), (size_t)((char *)&(m)->shard[0].field - (char *)&(m)->shard[0]))

/* A label value with \, " and newline escaped (labels are ours, but cheap). */
static void put_label(struct buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			buf_putc(out, '\\');
		if (*s == '\n') {
			buf_puts(out, "\\n");
			continue;
		}
		buf_putc(out, *s);
	}
}

static void put_seconds(struct buf *out, uint64_t us)
{
	buf_put_u64(out, us / 1000000);
	buf_putc(out, '.');
	buf_printf(out, "%06llu", (unsigned long long)(us % 1000000));
}

static void render_requests(struct metrics *m, struct buf *out)
{
	size_t i, j, k;

	buf_puts(out, "# HELP collisiond_http_requests_total HTTP requests answered, by route, method and status.\n"
		      "# TYPE collisiond_http_requests_total counter\n");
	for (i = 0; i < METRICS_ROUTES; i++) {
		const char *label = atomic_load(&m->labels[i]);

		if (i == METRICS_ROUTES - 1)
			label = "other";
		else if (!label)
			break;
		for (j = 0; j < METRICS_METHODS; j++) {
			for (k = 0; k < METRICS_STATUSES; k++) {
				uint64_t v = TOTAL(m, routes[i].requests[j][k]);

				if (!v)
					continue;
				buf_puts(out, "collisiond_http_requests_total{route=\"");
				put_label(out, label);
				buf_puts(out, "\",method=\"");
				buf_puts(out, method_names[j]);
				buf_puts(out, "\",status=\"");
				if (k == METRICS_STATUSES - 1)
					buf_puts(out, "other");
				else
					buf_put_u64(out, (uint64_t)status_codes[k]);
				buf_puts(out, "\"} ");
				buf_put_u64(out, v);
				buf_putc(out, '\n');
			}
		}
	}
}

static void render_durations(struct metrics *m, struct buf *out)
{
	size_t i, b;

	buf_puts(out, "# HELP collisiond_http_request_duration_seconds Time from a request's headers to the end of its response.\n"
		      "# TYPE collisiond_http_request_duration_seconds histogram\n");
	for (i = 0; i < METRICS_ROUTES; i++) {
		const char *label = atomic_load(&m->labels[i]);
		uint64_t cum = 0, v[METRICS_BUCKETS + 1];

		if (i == METRICS_ROUTES - 1)
			label = "other";
		else if (!label)
			break;
		for (b = 0; b <= METRICS_BUCKETS; b++) {
			v[b] = TOTAL(m, routes[i].buckets[b]);
			cum += v[b];
		}
		if (!cum)
			continue;
		cum = 0;
		for (b = 0; b <= METRICS_BUCKETS; b++) {
			cum += v[b];
			buf_puts(out, "collisiond_http_request_duration_seconds_bucket{route=\"");
			put_label(out, label);
			buf_puts(out, "\",le=\"");
			if (b == METRICS_BUCKETS)
				buf_puts(out, "+Inf");
			else
				buf_puts(out, bucket_le[b]);
			buf_puts(out, "\"} ");
			buf_put_u64(out, cum);
			buf_putc(out, '\n');
		}
		buf_puts(out, "collisiond_http_request_duration_seconds_sum{route=\"");
		put_label(out, label);
		buf_puts(out, "\"} ");
		put_seconds(out, TOTAL(m, routes[i].sum_us));
		buf_puts(out, "\ncollisiond_http_request_duration_seconds_count{route=\"");
		put_label(out, label);
		buf_puts(out, "\"} ");
		buf_put_u64(out, cum);
		buf_putc(out, '\n');
	}
}

void metrics_render(struct metrics *m, struct store *store, const char *version,
		    struct buf *out)
{
	size_t k, meshes = 0, triangles = 0, bytes = 0;

	render_requests(m, out);
	render_durations(m, out);

	buf_puts(out, "# HELP collisiond_rays_total Rays, segments, shots and boxes answered, by kind.\n"
		      "# TYPE collisiond_rays_total counter\n");
	for (k = 0; k < METRICS_KINDS; k++) {
		buf_puts(out, "collisiond_rays_total{kind=\"");
		buf_puts(out, kind_names[k]);
		buf_puts(out, "\"} ");
		buf_put_u64(out, TOTAL(m, rays[k]));
		buf_putc(out, '\n');
	}

	if (store)
		store_totals(store, &meshes, &triangles, &bytes);
	buf_puts(out, "# HELP collisiond_meshes Meshes held.\n# TYPE collisiond_meshes gauge\ncollisiond_meshes ");
	buf_put_u64(out, meshes);
	buf_puts(out, "\n# HELP collisiond_triangles Triangles held, over all meshes.\n# TYPE collisiond_triangles gauge\ncollisiond_triangles ");
	buf_put_u64(out, triangles);
	buf_puts(out, "\n# HELP collisiond_mesh_bytes Bytes held by meshes and their BVHs.\n# TYPE collisiond_mesh_bytes gauge\ncollisiond_mesh_bytes ");
	buf_put_u64(out, bytes);
	buf_puts(out, "\n# HELP collisiond_memory_held_bytes Bytes the meshes and world snapshots held take from --max-memory (a replaced mesh counts until its last query ends).\n"
		      "# TYPE collisiond_memory_held_bytes gauge\ncollisiond_memory_held_bytes ");
	buf_put_u64(out, membudget_held());
	buf_puts(out, "\n# HELP collisiond_memory_limit_bytes --max-memory: what meshes and world snapshots may take (0: no limit).\n"
		      "# TYPE collisiond_memory_limit_bytes gauge\ncollisiond_memory_limit_bytes ");
	buf_put_u64(out, membudget_limit());
	if (atomic_load(&m->store_state)) {
		buf_puts(out, "\n# HELP collisiond_store_up 1 when the --store Redis is connected and subscribed, 0 while writes get 503.\n# TYPE collisiond_store_up gauge\ncollisiond_store_up ");
		buf_put_u64(out, atomic_load(&m->store_state) == 2);
		buf_puts(out, "\n# HELP collisiond_store_resyncs_total Full resyncs from the --store (one per (re)connection).\n# TYPE collisiond_store_resyncs_total counter\ncollisiond_store_resyncs_total ");
		buf_put_u64(out, load(&m->store_resyncs));
		buf_puts(out, "\n# HELP collisiond_store_meshes_skipped Meshes the --store holds that this replica does not serve: no room under --max-memory (fetched again once memory is freed).\n"
			      "# TYPE collisiond_store_meshes_skipped gauge\ncollisiond_store_meshes_skipped ");
		buf_put_u64(out, atomic_load(&m->store_skipped));
	}
	buf_puts(out, "\n# HELP collisiond_build_info Build information; the value is always 1.\n# TYPE collisiond_build_info gauge\ncollisiond_build_info{version=\"");
	put_label(out, version);
	buf_puts(out, "\"} 1\n# HELP process_start_time_seconds Start time of the process since the Unix epoch in seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds ");
	buf_printf(out, "%.3f\n", m->start_time);
}

/* ---- worlds */

void metrics_record_worlds(struct metrics *m, const uint64_t shots[3], uint64_t snapshots)
{
	struct metrics_shard *sh;
	int k;

	if (!shots[0] && !shots[1] && !shots[2] && !snapshots)
		return;
	sh = my_shard(m);
	for (k = 0; k < 3; k++)
		if (shots[k])
			atomic_fetch_add_explicit(&sh->world_shots[k], shots[k], memory_order_relaxed);
	if (snapshots)
		atomic_fetch_add_explicit(&sh->world_snapshots, snapshots, memory_order_relaxed);
}

void metrics_render_worlds(struct metrics *m, struct world_registry *reg, struct buf *out)
{
	static const char *const outcome[3] = { "static", "entity", "miss" };
	int k;

	buf_puts(out, "# HELP collisiond_worlds Worlds held.\n# TYPE collisiond_worlds gauge\ncollisiond_worlds ");
	buf_put_u64(out, reg ? world_registry_count(reg) : 0);
	buf_puts(out, "\n# HELP collisiond_world_snapshots_total Snapshots ingested into worlds (rate() gives snapshots/s).\n"
		      "# TYPE collisiond_world_snapshots_total counter\ncollisiond_world_snapshots_total ");
	buf_put_u64(out, TOTAL(m, world_snapshots));
	buf_puts(out, "\n# HELP collisiond_world_snapshot_bytes Memory mapped for snapshots: 2 MiB chunks in use, being filled or spare.\n"
		      "# TYPE collisiond_world_snapshot_bytes gauge\ncollisiond_world_snapshot_bytes ");
	buf_put_u64(out, snapmem_mapped_bytes());
	buf_puts(out, "\n# HELP collisiond_world_shots_total World hitscan shots answered, by outcome.\n"
		      "# TYPE collisiond_world_shots_total counter\n");
	for (k = 0; k < 3; k++) {
		buf_puts(out, "collisiond_world_shots_total{outcome=\"");
		buf_puts(out, outcome[k]);
		buf_puts(out, "\"} ");
		buf_put_u64(out, TOTAL(m, world_shots[k]));
		buf_putc(out, '\n');
	}
}
