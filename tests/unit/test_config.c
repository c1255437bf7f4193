/* test_config.c - Check suite for server/: flag and environment parsing
 * (config.c) and the demo mesh (demo.c); mesh files are in test_store_backend.c. */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "cpus.h"
#include "demo.h"
#include "mesh.h"
#include "store.h"

/* ---- config: every flag and its variable ------------------------------ */

enum field_kind { FK_STR, FK_UINT, FK_SIZE, FK_INT, FK_LEVEL };

struct flag_case {
	const char *flag;	/* without "--" */
	const char *env;
	const char *value;
	size_t off;
	enum field_kind kind;
	const char *want_str;
	uint64_t want_num;
};

#define OFF(f) offsetof(struct config, f)

static const struct flag_case flag_cases[] = {
	{ "bind", "COLLISIOND_BIND", "0.0.0.0", OFF(bind), FK_STR, "0.0.0.0", 0 },
	{ "bind", "COLLISIOND_BIND", "::1", OFF(bind), FK_STR, "::1", 0 },
	{ "port", "COLLISIOND_PORT", "18123", OFF(port), FK_UINT, NULL, 18123 },
	{ "port", "COLLISIOND_PORT", "0", OFF(port), FK_UINT, NULL, 0 },
	{ "threads", "COLLISIOND_THREADS", "3", OFF(threads), FK_UINT, NULL, 3 },
	{ "api-key", "COLLISIOND_API_KEY", "s3cret", OFF(api_key), FK_STR, "s3cret", 0 },
	{ "max-body-bytes", "COLLISIOND_MAX_BODY_BYTES", "1M", OFF(max_body_bytes), FK_SIZE,
	  NULL, 1 << 20 },
	{ "max-query-bytes", "COLLISIOND_MAX_QUERY_BYTES", "64K", OFF(max_query_bytes),
	  FK_SIZE, NULL, 64 << 10 },
	{ "max-batch", "COLLISIOND_MAX_BATCH", "100", OFF(max_batch), FK_SIZE, NULL, 100 },
	{ "max-triangles", "COLLISIOND_MAX_TRIANGLES", "2M", OFF(max_triangles), FK_SIZE, NULL,
	  2 << 20 },
	{ "max-meshes", "COLLISIOND_MAX_MESHES", "7", OFF(max_meshes), FK_SIZE, NULL, 7 },
	{ "log-level", "COLLISIOND_LOG_LEVEL", "debug", OFF(log_level), FK_LEVEL, NULL,
	  LOG_DEBUG },
	{ "log-level", "COLLISIOND_LOG_LEVEL", "warn", OFF(log_level), FK_LEVEL, NULL, LOG_WARN },
	{ "log-level", "COLLISIOND_LOG_LEVEL", "error", OFF(log_level), FK_LEVEL, NULL,
	  LOG_ERROR },
	{ "data-dir", "COLLISIOND_DATA_DIR", "/tmp/x", OFF(data_dir), FK_STR, "/tmp/x", 0 },
	{ "demo", "COLLISIOND_DEMO", "true", OFF(demo), FK_INT, NULL, 1 },
	{ "access-log", "COLLISIOND_ACCESS_LOG", "on", OFF(access_log), FK_INT, NULL, 1 },
	{ "connection-timeout", "COLLISIOND_CONNECTION_TIMEOUT", "5", OFF(connection_timeout),
	  FK_UINT, NULL, 5 },
	{ "header-timeout", "COLLISIOND_HEADER_TIMEOUT", "7", OFF(header_timeout), FK_UINT, NULL,
	  7 },
	{ "body-timeout", "COLLISIOND_BODY_TIMEOUT", "9", OFF(body_timeout), FK_UINT, NULL, 9 },
	{ "min-body-rate", "COLLISIOND_MIN_BODY_RATE", "1M", OFF(min_body_rate), FK_SIZE, NULL,
	  1 << 20 },
	{ "min-body-rate", "COLLISIOND_MIN_BODY_RATE", "0", OFF(min_body_rate), FK_SIZE, NULL, 0 },
};

#define NFLAG_CASES (int)(sizeof(flag_cases) / sizeof(flag_cases[0]))

static void check_field(const struct config *cfg, const struct flag_case *fc, const char *how)
{
	const char *base = (const char *)cfg + fc->off;

	switch (fc->kind) {
	case FK_STR:
		ck_assert_msg(*(const char *const *)base &&
			      strcmp(*(const char *const *)base, fc->want_str) == 0,
			      "%s --%s: field not set to %s", how, fc->flag, fc->want_str);
		break;
	case FK_UINT:
		ck_assert_uint_eq(*(const unsigned *)base, fc->want_num);
		break;
	case FK_SIZE:
		ck_assert_uint_eq(*(const size_t *)base, fc->want_num);
		break;
	case FK_INT:
		ck_assert_int_eq(*(const int *)base, (int)fc->want_num);
		break;
	case FK_LEVEL:
		ck_assert_int_eq(*(const enum log_level *)base, (int)fc->want_num);
		break;
	}
}

/* -Wwrite-strings makes literals const; config_parse takes main's arrays. */
static enum config_result parse(struct config *cfg, const char **argv, const char **envp,
				char *err)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return config_parse(cfg, argc, (char *const *)argv, (char *const *)envp, err, 256);
}

/* The api-key case also sets read-key, which needs it. */
START_TEST(test_flag_sets_field)
{
	const struct flag_case *fc = &flag_cases[_i];
	char flag[64], err[256];
	const char *argv[] = { "collisiond", flag, fc->value, NULL };
	struct config cfg;

	snprintf(flag, sizeof(flag), "--%s", fc->flag);
	if (fc->kind == FK_INT)
		argv[2] = NULL;		/* a boolean flag takes no separate value */
	ck_assert_int_eq(parse(&cfg, argv, NULL, err), CONFIG_OK);
	check_field(&cfg, fc, "flag");
}
END_TEST

START_TEST(test_flag_equals_form)
{
	const struct flag_case *fc = &flag_cases[_i];
	char flag[128], err[256];
	const char *argv[] = { "collisiond", flag, NULL };
	struct config cfg;

	snprintf(flag, sizeof(flag), "--%s=%s", fc->flag, fc->value);
	ck_assert_int_eq(parse(&cfg, argv, NULL, err), CONFIG_OK);
	check_field(&cfg, fc, "flag=");
}
END_TEST

START_TEST(test_env_sets_field)
{
	const struct flag_case *fc = &flag_cases[_i];
	char var[128], err[256];
	const char *argv[] = { "collisiond", NULL };
	const char *envp[] = { "PATH=/bin", var, NULL };
	struct config cfg;

	snprintf(var, sizeof(var), "%s=%s", fc->env, fc->value);
	ck_assert_int_eq(parse(&cfg, argv, envp, err), CONFIG_OK);
	check_field(&cfg, fc, "env");
}
END_TEST

START_TEST(test_defaults)
{
	struct config cfg;
	char err[256];
	const char *argv[] = { "collisiond", NULL };
	ck_assert_int_eq(parse(&cfg, argv, NULL, err), CONFIG_OK);
	ck_assert_str_eq(cfg.bind, "127.0.0.1");
	ck_assert_uint_eq(cfg.port, 8080);
	ck_assert_uint_eq(cfg.threads, cpus_usable());	/* tested in test_cpus */
	ck_assert_ptr_null(cfg.api_key);
	ck_assert_ptr_null(cfg.read_key);
	ck_assert_uint_eq(cfg.max_body_bytes, (size_t)256 << 20);
	ck_assert_uint_eq(cfg.max_query_bytes, (size_t)16 << 20);
	ck_assert_uint_eq(cfg.max_batch, 65536);
	ck_assert_uint_eq(cfg.max_triangles, 16777216);
	ck_assert_uint_eq(cfg.max_meshes, 0);
	ck_assert_ptr_null(cfg.tls_cert);
	ck_assert_ptr_null(cfg.tls_key);
	ck_assert_int_eq(cfg.log_level, LOG_INFO);
	ck_assert_ptr_null(cfg.data_dir);
	ck_assert_int_eq(cfg.demo, 0);
	ck_assert_uint_eq(cfg.connection_timeout, 30);
	ck_assert_uint_eq(cfg.header_timeout, 60);
	ck_assert_uint_eq(cfg.body_timeout, 60);
	ck_assert_uint_eq(cfg.min_body_rate, 32 << 10);
}
END_TEST

START_TEST(test_bare_demo_flag)
{
	struct config cfg;
	char err[256];
	const char *argv[] = { "collisiond", "--demo", "--port", "1", NULL };
	const char *envp[] = { "COLLISIOND_DEMO=0", NULL };

	ck_assert_int_eq(parse(&cfg, argv, envp, err), CONFIG_OK);
	ck_assert_int_eq(cfg.demo, 1);
	ck_assert_uint_eq(cfg.port, 1);
}
END_TEST

START_TEST(test_flag_overrides_env)
{
	struct config cfg;
	char err[256];
	const char *argv[] = { "collisiond", "--port", "9001", "--max-batch=5", NULL };
	const char *envp[] = { "COLLISIOND_PORT=9000", "COLLISIOND_MAX_BATCH=7",
			 "COLLISIOND_THREADS=2", NULL };

	ck_assert_int_eq(parse(&cfg, argv, envp, err), CONFIG_OK);
	ck_assert_uint_eq(cfg.port, 9001);
	ck_assert_uint_eq(cfg.max_batch, 5);
	ck_assert_uint_eq(cfg.threads, 2);	/* env still applies where no flag */
}
END_TEST

/* A flag overrides its variable even when the variable's value is bad: the
 * variable is never read (a Kubernetes service link's COLLISIOND_PORT=tcp://...
 * with --port given once stopped the daemon) */
START_TEST(test_flag_overrides_bad_env)
{
	struct config cfg;
	char err[256];
	const char *argv[] = { "collisiond", "--port", "9001", "--demo", "--max-batch=5", NULL };
	const char *envp[] = { "COLLISIOND_PORT=tcp://10.96.0.10:8080", "COLLISIOND_DEMO=maybe",
			       "COLLISIOND_MAX_BATCH=0", NULL };
	const char *value_like_flag[] = { "collisiond", "--api-key", "--port", NULL };
	const char *bad_port[] = { "COLLISIOND_PORT=x", NULL };

	ck_assert_msg(parse(&cfg, argv, envp, err) == CONFIG_OK, "%s", err);
	ck_assert_uint_eq(cfg.port, 9001);
	ck_assert_uint_eq(cfg.max_batch, 5);
	ck_assert_int_eq(cfg.demo, 1);
	/* "--port" as --api-key's value is no --port flag: the variable is read */
	ck_assert_int_eq(parse(&cfg, value_like_flag, bad_port, err), CONFIG_ERROR);
	ck_assert_msg(strstr(err, "COLLISIOND_PORT"), "%s", err);
}
END_TEST

START_TEST(test_last_flag_wins)
{
	struct config cfg;
	char err[256];
	const char *argv[] = { "collisiond", "--port", "1", "--port", "2", NULL };

	ck_assert_int_eq(parse(&cfg, argv, NULL, err), CONFIG_OK);
	ck_assert_uint_eq(cfg.port, 2);
}
END_TEST

START_TEST(test_keys_and_tls_pair)
{
	struct config cfg;
	char err[256];
	const char *ok[] = { "collisiond", "--api-key", "w", "--read-key", "r", "--tls-cert", "c.pem",
		       "--tls-key", "k.pem", NULL };

	ck_assert_int_eq(parse(&cfg, ok, NULL, err), CONFIG_OK);
	ck_assert_str_eq(cfg.api_key, "w");
	ck_assert_str_eq(cfg.read_key, "r");
	ck_assert_str_eq(cfg.tls_cert, "c.pem");
	ck_assert_str_eq(cfg.tls_key, "k.pem");
}
END_TEST

START_TEST(test_http_engine)
{
	struct config cfg;
	char err[256];
	const char *none[] = { "collisiond", NULL };
	const char *ev[] = { "collisiond", "--http-engine", "epoll", NULL };
	const char *bad[] = { "collisiond", "--http-engine", "nginx", NULL };
	const char *tls[] = { "collisiond", "--http-engine=epoll", "--tls-cert", "c.pem",
			      "--tls-key", "k.pem", NULL };
	const char *envp[] = { "COLLISIOND_HTTP_ENGINE=epoll", NULL };
	const char *mhd[] = { "collisiond", "--http-engine", "mhd", NULL };
	const char *auto_tls[] = { "collisiond", "--tls-cert", "c.pem", "--tls-key", "k.pem", NULL };

	ck_assert_int_eq(parse(&cfg, none, NULL, err), CONFIG_OK);
	ck_assert_str_eq(cfg.http_engine, "auto");
	ck_assert_int_eq(parse(&cfg, mhd, NULL, err), CONFIG_OK);
	ck_assert_str_eq(cfg.http_engine, "mhd");
	/* auto with TLS is libmicrohttpd's: accepted */
	ck_assert_int_eq(parse(&cfg, auto_tls, NULL, err), CONFIG_OK);
	ck_assert_str_eq(cfg.http_engine, "auto");
	ck_assert_int_eq(parse(&cfg, ev, NULL, err), CONFIG_OK);
	ck_assert_str_eq(cfg.http_engine, "epoll");
	ck_assert_int_eq(parse(&cfg, none, envp, err), CONFIG_OK);
	ck_assert_str_eq(cfg.http_engine, "epoll");
	ck_assert_int_eq(parse(&cfg, bad, NULL, err), CONFIG_ERROR);
	ck_assert_ptr_nonnull(strstr(err, "--http-engine"));
	ck_assert_int_eq(parse(&cfg, tls, NULL, err), CONFIG_ERROR);
	ck_assert_ptr_nonnull(strstr(err, "plain HTTP only"));
	ck_assert_ptr_nonnull(strstr(config_usage, "--http-engine"));
}
END_TEST

START_TEST(test_help_and_version)
{
	struct config cfg;
	char err[256];
	const char *help[] = { "collisiond", "--port", "bad", "--help", NULL };
	const char *version[] = { "collisiond", "--version", NULL };
	const char *envp[] = { "COLLISIOND_PORT=bad", NULL };

	ck_assert_int_eq(parse(&cfg, help, envp, err), CONFIG_HELP);
	ck_assert_int_eq(parse(&cfg, version, envp, err), CONFIG_VERSION);
	ck_assert_ptr_nonnull(strstr(config_usage, "--max-query-bytes"));
	ck_assert_ptr_nonnull(strstr(config_usage, "--header-timeout"));
	ck_assert_ptr_nonnull(strstr(config_usage, "--body-timeout"));
	ck_assert_ptr_nonnull(strstr(config_usage, "--min-body-rate"));
}
END_TEST

struct size_case {
	const char *s;
	int ok;
	uint64_t want;
};

static const struct size_case size_cases[] = {
	{ "0", 1, 0 },
	{ "123", 1, 123 },
	{ "1K", 1, 1024 },
	{ "1k", 1, 1024 },
	{ "2KiB", 1, 2048 },
	{ "3M", 1, 3 << 20 },
	{ "3MiB", 1, 3 << 20 },
	{ "1G", 1, 1 << 30 },
	{ "4gib", 1, (uint64_t)4 << 30 },
	{ "18446744073709551615", 1, UINT64_MAX },
	{ "18446744073709551616", 0, 0 },
	{ "17179869184G", 0, 0 },	/* 2^34 GiB overflows */
	{ "", 0, 0 },
	{ "K", 0, 0 },
	{ "-1", 0, 0 },
	{ "1.5M", 0, 0 },
	{ "1T", 0, 0 },
	{ "1KB", 0, 0 },
	{ "1 K", 0, 0 },
	{ "0x10", 0, 0 },
};

START_TEST(test_size_suffixes)
{
	const struct size_case *sc = &size_cases[_i];
	uint64_t v = 42;
	int rc = config_parse_size(sc->s, &v);

	ck_assert_msg((rc == 0) == sc->ok, "'%s': rc %d", sc->s, rc);
	if (sc->ok)
		ck_assert_uint_eq(v, sc->want);
}
END_TEST

/* ---- config: every invalid value is refused, naming the flag ---------- */

struct bad_case {
	const char *args[5];	/* after argv[0] */
	const char *env;	/* or one variable */
	const char *names;	/* must appear in the error */
};

static const struct bad_case bad_cases[] = {
	{ { "--bind", "nowhere" }, NULL, "--bind" },
	{ { "--bind", "" }, NULL, "--bind" },
	{ { "--port", "65536" }, NULL, "--port" },
	{ { "--port", "-1" }, NULL, "--port" },
	{ { "--port", "80x" }, NULL, "--port" },
	{ { "--port", "" }, NULL, "--port" },
	{ { "--threads", "0" }, NULL, "--threads" },
	{ { "--threads", "1025" }, NULL, "--threads" },
	{ { "--threads", "two" }, NULL, "--threads" },
	{ { "--api-key", "" }, NULL, "--api-key" },
	{ { "--api-key", "has space" }, NULL, "--api-key" },
	{ { "--read-key", "r" }, NULL, "--read-key" },		/* without --api-key */
	{ { "--api-key", "w", "--read-key", "a\tb" }, NULL, "--read-key" },
	{ { "--max-body-bytes", "0" }, NULL, "--max-body-bytes" },
	{ { "--max-body-bytes", "1X" }, NULL, "--max-body-bytes" },
	{ { "--max-query-bytes", "-5" }, NULL, "--max-query-bytes" },
	/* byte limits stop at 1 TiB: SIZE_MAX once wrapped a body's limit + 1 */
	{ { "--max-query-bytes", "18446744073709551615" }, NULL, "--max-query-bytes" },
	{ { "--max-body-bytes", "1099511627777" }, NULL, "--max-body-bytes" },
	{ { "--max-response-bytes", "1025G" }, NULL, "--max-response-bytes" },
	{ { "--max-batch", "0" }, NULL, "--max-batch" },
	{ { "--max-batch", "8G" }, NULL, "--max-batch" },
	{ { "--max-triangles", "0" }, NULL, "--max-triangles" },
	{ { "--max-triangles", "1G" }, NULL, "--max-triangles" },	/* > MESH_MAX_TRIANGLES */
	{ { "--max-meshes", "many" }, NULL, "--max-meshes" },
	{ { "--tls-cert", "c.pem" }, NULL, "--tls-key" },
	{ { "--tls-key", "k.pem" }, NULL, "--tls-cert" },
	{ { "--tls-cert", "" }, NULL, "--tls-cert" },
	{ { "--log-level", "verbose" }, NULL, "--log-level" },
	{ { "--data-dir", "" }, NULL, "--data-dir" },
	{ { "--demo=maybe" }, NULL, "--demo" },
	{ { "--connection-timeout", "0" }, NULL, "--connection-timeout" },
	{ { "--connection-timeout", "1s" }, NULL, "--connection-timeout" },
	{ { "--header-timeout", "0" }, NULL, "--header-timeout" },
	{ { "--body-timeout", "x" }, NULL, "--body-timeout" },
	{ { "--min-body-rate", "-1" }, NULL, "--min-body-rate" },
	{ { "--min-body-rate", "2G" }, NULL, "--min-body-rate" },
	{ { "--port" }, NULL, "--port" },				/* missing value */
	{ { "--no-such-flag", "1" }, NULL, "--no-such-flag" },
	{ { "stray" }, NULL, "stray" },
	{ { NULL }, "COLLISIOND_PORT=abc", "COLLISIOND_PORT" },
	{ { NULL }, "COLLISIOND_THREADS=0", "COLLISIOND_THREADS" },
	{ { NULL }, "COLLISIOND_MAX_BODY_BYTES=1Q", "COLLISIOND_MAX_BODY_BYTES" },
	{ { NULL }, "COLLISIOND_LOG_LEVEL=loud", "COLLISIOND_LOG_LEVEL" },
	{ { NULL }, "COLLISIOND_DEMO=2", "COLLISIOND_DEMO" },
	{ { NULL }, "COLLISIOND_BIND=example.com", "COLLISIOND_BIND" },
	{ { NULL }, "COLLISIOND_CONNECTION_TIMEOUT=-3", "COLLISIOND_CONNECTION_TIMEOUT" },
	/* combinations name the variable that set a value */
	{ { NULL }, "COLLISIOND_TLS_CERT=/c.pem", "COLLISIOND_TLS_CERT (--tls-cert): needs --tls-key" },
	{ { NULL }, "COLLISIOND_HTTP_ENGINE=foo", "COLLISIOND_HTTP_ENGINE (--http-engine): 'foo'" },
	{ { NULL }, "COLLISIOND_READ_KEY=abc", "COLLISIOND_READ_KEY (--read-key): needs --api-key" },
	{ { "--tls-key", "/k.pem" }, NULL, "--tls-key: needs --tls-cert" },
	/* a key read from a file with its newline: the message says so */
	{ { NULL }, "COLLISIOND_API_KEY=s3cret\n", "ends with a line break" },
	/* a Kubernetes service link: the message says how to avoid it */
	{ { NULL }, "COLLISIOND_PORT=tcp://10.96.0.10:8080", "enableServiceLinks: false" },
};

#define NBAD_CASES (int)(sizeof(bad_cases) / sizeof(bad_cases[0]))

START_TEST(test_invalid_value_names_flag)
{
	const struct bad_case *bc = &bad_cases[_i];
	const char *argv[7] = { "collisiond" };
	const char *envp[2] = { bc->env, NULL };
	char err[256];
	struct config cfg;
	int k;

	for (k = 0; k < 5 && bc->args[k]; k++)
		argv[k + 1] = bc->args[k];
	ck_assert_int_eq(parse(&cfg, argv, envp, err), CONFIG_ERROR);
	ck_assert_msg(strstr(err, bc->names) != NULL, "error '%s' does not name %s", err,
		      bc->names);
}
END_TEST

START_TEST(test_missing_tls_file_names_flag)
{
	struct config cfg;
	char err[256];
	const char *argv[] = { "collisiond", "--tls-cert", "/nonexistent/c.pem", "--tls-key",
			 "/nonexistent/k.pem", NULL };

	ck_assert_int_eq(parse(&cfg, argv, NULL, err), CONFIG_OK);
	ck_assert_int_eq(config_load_files(&cfg, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "--tls-cert"));
	config_release(&cfg);
}
END_TEST

/* ---- demo mesh --------------------------------------------------------- */

struct edge {
	uint32_t a, b;
};

static int edge_cmp(const void *x, const void *y)
{
	const struct edge *e = x, *f = y;

	if (e->a != f->a)
		return e->a < f->a ? -1 : 1;
	return e->b < f->b ? -1 : e->b > f->b;
}

START_TEST(test_demo_mesh_builds)
{
	struct demo_mesh d;
	struct mesh *m = NULL;
	struct mesh_info info;

	ck_assert_int_eq(demo_mesh_make(&d), 0);
	ck_assert_uint_eq(d.ntri, 404);
	ck_assert_uint_eq(d.nvert, 218);
	ck_assert_int_eq(mesh_build(d.xyz, d.nvert, d.idx, d.ntri, &m, NULL), CORE_OK);
	mesh_get_info(m, &info);
	ck_assert_uint_eq(info.triangles, 404);
	ck_assert_uint_eq(info.degenerate, 0);
	ck_assert(info.min.x == -20 && info.min.y == -1 && info.min.z == -20);
	ck_assert(info.max.x == 20 && info.max.y == 4 && info.max.z == 20);
	mesh_unref(m);
	demo_mesh_release(&d);
}
END_TEST

START_TEST(test_demo_mesh_no_degenerate_triangles)
{
	struct demo_mesh d;
	size_t t;

	ck_assert_int_eq(demo_mesh_make(&d), 0);
	for (t = 0; t < d.ntri; t++) {
		const float *a = &d.xyz[d.idx[t * 3] * 3], *b = &d.xyz[d.idx[t * 3 + 1] * 3],
			    *c = &d.xyz[d.idx[t * 3 + 2] * 3];
		double u[3], v[3], n[3];
		int k;

		for (k = 0; k < 3; k++) {
			u[k] = (double)b[k] - a[k];
			v[k] = (double)c[k] - a[k];
		}
		n[0] = u[1] * v[2] - u[2] * v[1];
		n[1] = u[2] * v[0] - u[0] * v[2];
		n[2] = u[0] * v[1] - u[1] * v[0];
		ck_assert_msg(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] > 1e-6,
			      "triangle %zu is degenerate", t);
	}
	demo_mesh_release(&d);
}
END_TEST

/* Closed and consistently wound: every directed edge a->b appears once, and
 * its reverse b->a appears exactly once too. */
START_TEST(test_demo_mesh_closed)
{
	struct demo_mesh d;
	struct edge *e;
	size_t t, n, i;

	ck_assert_int_eq(demo_mesh_make(&d), 0);
	n = d.ntri * 3;
	e = malloc(n * sizeof(*e));
	ck_assert_ptr_nonnull(e);
	for (t = 0; t < d.ntri; t++)
		for (i = 0; i < 3; i++)
			e[t * 3 + i] = (struct edge){ d.idx[t * 3 + i], d.idx[t * 3 + (i + 1) % 3] };
	qsort(e, n, sizeof(*e), edge_cmp);
	for (i = 0; i < n; i++) {
		struct edge rev = { e[i].b, e[i].a };

		ck_assert_msg(i == 0 || edge_cmp(&e[i - 1], &e[i]) != 0,
			      "edge %u->%u used twice in one direction", e[i].a, e[i].b);
		ck_assert_msg(bsearch(&rev, e, n, sizeof(*e), edge_cmp) != NULL,
			      "edge %u->%u has no opposite", e[i].a, e[i].b);
	}
	free(e);
	demo_mesh_release(&d);
}
END_TEST

/* Outward winding: the signed volume of each closed part is positive, so
 * the total is the sum of the boxes' volumes. */
START_TEST(test_demo_mesh_outward)
{
	struct demo_mesh d;
	double vol = 0, want;
	size_t t;

	ck_assert_int_eq(demo_mesh_make(&d), 0);
	for (t = 0; t < d.ntri; t++) {
		const float *a = &d.xyz[d.idx[t * 3] * 3], *b = &d.xyz[d.idx[t * 3 + 1] * 3],
			    *c = &d.xyz[d.idx[t * 3 + 2] * 3];

		vol += ((double)a[0] * (b[1] * c[2] - b[2] * c[1]) -
			(double)a[1] * (b[0] * c[2] - b[2] * c[0]) +
			(double)a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
	}
	want = 40.0 * 40 * 1 + 2 * (1.0 * 4 * 40) + 2 * (38.0 * 4 * 1) + 8 + 8 + 27;
	ck_assert_double_eq_tol(vol, want, 1e-6);
	demo_mesh_release(&d);
}
END_TEST

START_TEST(test_demo_store)
{
	struct store *s;
	struct mesh *m;

	ck_assert_int_eq(store_new(&s), CORE_OK);
	ck_assert_int_eq(demo_store(s, 0), CORE_OK);
	m = store_get(s, DEMO_MESH_NAME, NULL);
	ck_assert_ptr_nonnull(m);
	mesh_unref(m);
	store_free(s);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("server");
	TCase *tc;

	tc = tcase_create("config");
	tcase_add_loop_test(tc, test_flag_sets_field, 0, NFLAG_CASES);
	tcase_add_loop_test(tc, test_flag_equals_form, 0, NFLAG_CASES);
	tcase_add_loop_test(tc, test_env_sets_field, 0, NFLAG_CASES);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_bare_demo_flag);
	tcase_add_test(tc, test_flag_overrides_env);
	tcase_add_test(tc, test_flag_overrides_bad_env);
	tcase_add_test(tc, test_last_flag_wins);
	tcase_add_test(tc, test_keys_and_tls_pair);
	tcase_add_test(tc, test_http_engine);
	tcase_add_test(tc, test_help_and_version);
	tcase_add_loop_test(tc, test_size_suffixes, 0,
			    (int)(sizeof(size_cases) / sizeof(size_cases[0])));
	tcase_add_loop_test(tc, test_invalid_value_names_flag, 0, NBAD_CASES);
	tcase_add_test(tc, test_missing_tls_file_names_flag);
	suite_add_tcase(s, tc);

	tc = tcase_create("demo");
	tcase_add_test(tc, test_demo_mesh_builds);
	tcase_add_test(tc, test_demo_mesh_no_degenerate_triangles);
	tcase_add_test(tc, test_demo_mesh_closed);
	tcase_add_test(tc, test_demo_mesh_outward);
	tcase_add_test(tc, test_demo_store);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
