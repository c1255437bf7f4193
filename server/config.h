/* config.h - the daemon's settings from command-line flags and COLLISIOND_*
 * environment variables, parsed without side effects so tests need no socket.
 *
 * Every flag --name has an environment variable COLLISIOND_NAME (dashes become
 * underscores, upper case); a flag overrides its variable, which overrides
 * the default. Flags take "--name VALUE" or "--name=VALUE". Sizes take an
 * optional suffix K, M, G (or KiB, MiB, GiB; powers of 1024).
 *
 * Ownership: string fields point into argv or envp (or are NULL) and live as
 * long as those do; tls_cert_pem / tls_key_pem are owned by the struct once
 * config_load_files has filled them and are freed by config_release.
 */
#ifndef SERVER_CONFIG_H
#define SERVER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"

#define COLLISIOND_VERSION "0.1.0"

struct config {
	const char *bind;		/* numeric IPv4 or IPv6 address, or "localhost" */
	unsigned port;			/* 0 = any free port */
	unsigned threads;		/* >= 1 */
	const char *api_key;		/* NULL: everyone may write */
	const char *read_key;		/* NULL: no read-only key */
	size_t max_body_bytes;		/* mesh uploads */
	size_t max_query_bytes;		/* every other body */
	size_t max_batch;
	size_t max_boxes;		/* boxes per OBB/hitscan request: each costs every ray a test */
	size_t max_triangles;
	size_t max_meshes;		/* 0 = unlimited */
	size_t max_worlds;		/* 0 = unlimited */
	size_t max_world_instances;
	size_t max_world_entities;
	size_t max_world_hitboxes;
	size_t max_world_snapshots;	/* >= 2 */
	size_t max_response_bytes;	/* response body cap (413 past it) */
	size_t max_memory;		/* meshes + world snapshots held; 0 = unlimited */
	const char *http_engine;	/* "auto" (default: epoll unless TLS), "epoll" (plain HTTP only) or "mhd" */
	const char *tls_cert;		/* path; both or neither with tls_key */
	const char *tls_key;
	enum log_level log_level;
	int access_log;			/* access lines at info level (1, default) or none */
	const char *data_dir;		/* NULL: memory only */
	int demo;
	unsigned connection_timeout;	/* seconds */
	unsigned header_timeout;	/* seconds for a request line and headers */
	unsigned body_timeout;		/* seconds of grace for a body ... */
	size_t min_body_rate;		/* ... plus 1 s per this many bytes; 0 = no floor */

	/* replicas (store_redis.h): NULL when meshes are not kept in Redis */
	const char *store;		/* redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] */
	const char *store_password;	/* overrides the URL's; NULL: none */

	char *tls_cert_pem;		/* owned; filled by config_load_files */
	char *tls_key_pem;

	/* bit i: option i (config.c's table) was set by its COLLISIOND_*
	 * variable, not a flag; messages name what the operator wrote */
	uint64_t from_env;
};

enum config_result {
	CONFIG_OK,
	CONFIG_HELP,		/* --help: print config_usage, exit 0 */
	CONFIG_VERSION,		/* --version: print the version, exit 0 */
	CONFIG_ERROR,		/* err says which flag and why: exit 2 */
};

/* Fill cfg with the defaults; threads = the number of online CPUs. */
void config_defaults(struct config *cfg);

/*
 * Parse argv[1..argc) over envp (a NULL-terminated "NAME=value" array, may be
 * NULL) into cfg, starting from config_defaults. On CONFIG_ERROR, err holds
 * one line naming the flag (or variable) and the problem; cfg is then
 * undefined but owns nothing.
 */
enum config_result config_parse(struct config *cfg, int argc, char *const argv[],
				char *const envp[], char *err, size_t errlen);

/* What set the option --flag (flag without the dashes), for messages:
 * "--flag", or "COLLISIOND_FLAG (--flag)" when its variable did (into buf). */
const char *config_who(const struct config *cfg, const char *flag, char *buf, size_t len);

/* Read the --tls-cert / --tls-key PEM files into cfg (no-op without TLS).
 * 0, or -1 with err naming the flag and the file's problem. */
int config_load_files(struct config *cfg, char *err, size_t errlen);

/* Free what config_load_files allocated. */
void config_release(struct config *cfg);

/* The --help text. */
extern const char config_usage[];

/*
 * Parse a byte size: decimal digits with an optional suffix K, M, G (or
 * KiB, MiB, GiB, any case; powers of 1024). 0, or -1 on syntax or overflow.
 */
int config_parse_size(const char *s, uint64_t *out);

#endif
