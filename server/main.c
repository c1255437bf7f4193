/* main.c - collisiond: parse the configuration, start the store, the
 * optional persistence and the HTTP server, wait for SIGTERM/SIGINT/SIGHUP, stop. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "alloc.h"
#include "api.h"
#include "batch.h"
#include "config.h"
#include "demo.h"
#include "http.h"
#include "log.h"
#include "membudget.h"
#include "metrics.h"
#include "store.h"
#include "world_registry.h"
#include "store_backend.h"
#include "store_dir.h"
#include "store_redis.h"

#define SHUTDOWN_GRACE_MS 10000

extern const char openapi_yaml[];
extern const size_t openapi_yaml_len;

/* Allow as many descriptors (connections) as the hard limit permits. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* 1 when sig is ignored as we start: SIGHUP under nohup, SIGINT in a
 * background job of a non-interactive shell; the parent's choice holds. */
static int ignored_at_start(int sig)
{
	struct sigaction sa;

	return sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

static void on_second_signal(int sig)
{
	static const char msg[] = "collisiond: a second signal: stopping now\n";

	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do about it */
	}
	_exit(128 + sig);
}

/* The graceful stop under way (up to SHUTDOWN_GRACE_MS): a second SIGTERM,
 * SIGINT or SIGHUP ends the process at once (Ctrl-C twice), requests in
 * flight cut. Only this thread takes them: every other blocks them. */
static void stop_now_on_second_signal(const sigset_t *sigs)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_second_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	if (sigismember(sigs, SIGINT))
		sigaction(SIGINT, &sa, NULL);
	if (sigismember(sigs, SIGHUP))
		sigaction(SIGHUP, &sa, NULL);
	pthread_sigmask(SIG_UNBLOCK, sigs, NULL);
}

/* Serve until SIGTERM, SIGINT or SIGHUP; the exit status. sigs is blocked in every
 * thread (they inherit the mask), so only the sigwait below receives them. */
static int run(const struct config *cfg, struct log *log, const sigset_t *sigs)
{
	struct api_ctx api;
	struct store_backend backend;
	int have_backend = cfg->data_dir || cfg->store;
	struct metrics *metrics;
	struct http_server *http;
	struct http_params hp;
	atomic_int ready;
	char err[256];
	char who[80];			/* what set --store or --data-dir (messages) */
	enum core_result r;
	int sig, status = 1;

	memset(&api, 0, sizeof(api));
	atomic_init(&ready, have_backend ? 0 : 1);
	metrics = metrics_new();
	if (!metrics) {
		log_msg(log, LOG_ERROR, "out of memory");
		return 1;
	}
	if (store_new(&api.store) != CORE_OK) {
		log_msg(log, LOG_ERROR, "out of memory");
		goto out_free_metrics;
	}
	membudget_set_limit(cfg->max_memory);
	api.limits.max_batch = cfg->max_batch;
	api.limits.max_boxes = cfg->max_boxes;
	api.limits.max_triangles = cfg->max_triangles;
	api.limits.max_meshes = cfg->max_meshes;
	api.limits.max_body_mesh = cfg->max_body_bytes;
	api.limits.max_body_query = cfg->max_query_bytes;
	api.world_limits.max_worlds = cfg->max_worlds;
	api.world_limits.max_instances = cfg->max_world_instances;
	api.world_limits.max_entities = cfg->max_world_entities;
	api.world_limits.max_hitboxes = cfg->max_world_hitboxes;
	api.world_limits.max_snapshots = cfg->max_world_snapshots;
	if (world_registry_new(&api.worlds) != CORE_OK) {
		log_msg(log, LOG_ERROR, "out of memory");
		goto out_free_store;
	}
	api.limits.max_response_bytes = cfg->max_response_bytes;
	api.openapi_yaml = openapi_yaml;
	api.openapi_len = openapi_yaml_len;
	/* big batches: the calling thread plus threads - 1 workers */
	if (cfg->threads > 1 && !(api.pool = batch_pool_create(cfg->threads - 1))) {
		log_msg(log, LOG_ERROR, "cannot start the batch worker threads");
		goto out_free_store;
	}

	if (cfg->demo && (r = demo_store(api.store, cfg->max_meshes)) != CORE_OK) {
		log_msg(log, LOG_ERROR, "--demo: cannot store the demo mesh: %s",
			r == CORE_ENOSPACE ? "--max-memory reached" : core_result_str(r));
		goto out_free_store;
	}
	if (have_backend) {
		if (store_backend_init(&backend, api.store, cfg->max_triangles, cfg->max_meshes, log,
				       metrics, &ready)) {
			log_msg(log, LOG_ERROR, "out of memory");
			goto out_free_store;
		}
		config_who(cfg, cfg->store ? "store" : "data-dir", who, sizeof(who));
		if (cfg->store ? store_redis_open(&backend, cfg->store, cfg->store_password, who, err,
						  sizeof(err)) :
				 store_dir_open(&backend, cfg->data_dir, who, err, sizeof(err))) {
			log_msg(log, LOG_ERROR, "%s", err);
			status = 2;
			goto out_close_persist;
		}
		api.persist_cls = &backend;
		api.persist_put = store_backend_put;
		api.persist_delete = store_backend_delete;
		api.persist_lock = store_backend_lock;
		api.persist_unlock = store_backend_unlock;
	}

	raise_fd_limit();
	hp = (struct http_params){ cfg, &api, metrics, log, &ready };
	if (http_start(&hp, &http, err, sizeof(err))) {
		log_msg(log, LOG_ERROR, "%s", err);
		goto out_close_persist;
	}
	/* an IPv6 address in brackets, as a URL has it: http://[::1]:8080 */
	log_msg(log, LOG_INFO, "collisiond %s listening on %s%s%s%s:%u (%s, %s engine, %u thread%s)%s",
		COLLISIOND_VERSION, cfg->tls_cert ? "https://" : "http://",
		strchr(cfg->bind, ':') ? "[" : "", cfg->bind, strchr(cfg->bind, ':') ? "]" : "",
		http_port(http), cfg->api_key ? "API key required" : "no API key",
		http_engine_name(http), cfg->threads, cfg->threads == 1 ? "" : "s", cfg->demo ? ", demo mesh loaded" : "");
	if (have_backend && store_backend_start(&backend)) {
		log_msg(log, LOG_ERROR, "%s: cannot start the loader thread",
			cfg->store ? "--store" : "--data-dir");
		goto out_stop_http;
	}

	do {
		if (sigwait(sigs, &sig) != 0)
			sig = SIGTERM;
	} while (sig != SIGTERM && sig != SIGINT && sig != SIGHUP);
	if (have_backend)
		atomic_store(&backend.stopping, 1);	/* its own SIGTERM is not a second */
	stop_now_on_second_signal(sigs);
	if (have_backend && atomic_load(&backend.failed)) {
		status = 2;	/* the store refused --store's settings (logged) */
		goto out_stop_http;
	}
	log_msg(log, LOG_INFO, "%s: stopping", sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" :
		"SIGHUP");
	status = 0;

out_stop_http:
	http_stop(http, SHUTDOWN_GRACE_MS);
out_close_persist:
	if (have_backend)
		store_backend_close(&backend);
out_free_store:
	world_registry_free(api.worlds);	/* before the store: worlds hold meshes */
	batch_pool_destroy(api.pool);
	store_free(api.store);
out_free_metrics:
	free(metrics);
	if (status == 0)
		log_msg(log, LOG_INFO, "stopped");
	return status;
}

int main(int argc, char **argv)
{
	struct alloc_trimmer *trimmer = NULL;
	struct config cfg;
	struct log *log;
	sigset_t sigs;
	char err[320];
	int status;

	switch (config_parse(&cfg, argc, argv, environ, err, sizeof(err))) {
	case CONFIG_OK:
		break;
	case CONFIG_HELP:
		fputs(config_usage, stdout);
		return 0;
	case CONFIG_VERSION:
		printf("collisiond %s\n", COLLISIOND_VERSION);
		return 0;
	case CONFIG_ERROR:
		fprintf(stderr, "collisiond: %s\n", err);
		return 2;
	}
	if (config_load_files(&cfg, err, sizeof(err))) {
		fprintf(stderr, "collisiond: %s\n", err);
		return 2;
	}
	/* a certificate and key TLS cannot use together are a bad value too */
	if (http_tls_check(&cfg, err, sizeof(err))) {
		fprintf(stderr, "collisiond: %s\n", err);
		config_release(&cfg);
		return 2;
	}

	alloc_tune();	/* malloc parameters, before any thread (alloc.h) */
	/* Before any thread exists, so that all of them inherit the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	if (!ignored_at_start(SIGINT))
		sigaddset(&sigs, SIGINT);
	/* the terminal of `make run` closing: a stop like the others (it once
	 * killed the daemon at once, requests in flight and buffered access
	 * lines lost); there is nothing to reload. Unless it was ignored when
	 * we started (nohup): then it stays ignored, as asked. */
	if (!ignored_at_start(SIGHUP))
		sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	status = 1;
	log = aligned_alloc(64, (sizeof(*log) + 63) / 64 * 64);
	if (!log || log_start(log, STDERR_FILENO, cfg.log_level, 1)) {
		fprintf(stderr, "collisiond: cannot start logging\n");
		goto out_release_config;
	}
	log->access = cfg.access_log;
	if (alloc_trimmer_start(&trimmer))
		fprintf(stderr, "collisiond: cannot start the malloc_trim thread (running without)\n");
	status = run(&cfg, log, &sigs);
	alloc_trimmer_stop(trimmer);
	log_stop(log);
out_release_config:
	free(log);
	config_release(&cfg);
	return status;
}
