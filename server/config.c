/* config.c - flags and COLLISIOND_* environment variables into struct config
 * (see config.h), table-driven so each option is described once. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cpus.h"
#include "mesh.h"
#include "store_redis.h"

#define KEY_MAX 256
#define PEM_MAX (1 << 20)

const char config_usage[] =
	"usage: collisiond [options]\n"
	"\n"
	"An HTTP collision-query daemon. Every option can also be set with an\n"
	"environment variable COLLISIOND_<NAME> (e.g. COLLISIOND_MAX_BATCH);\n"
	"flags override variables. Sizes take K, M, G (KiB, MiB, GiB).\n"
	"\n"
	"  --bind ADDR              listen address, IPv4 or IPv6 (127.0.0.1);\n"
	"                           :: takes IPv4 clients too\n"
	"  --port N                 TCP port, 0 = any free port (8080)\n"
	"  --threads N              worker threads (the CPUs it may use: its\n"
	"                           affinity mask and cgroup CPU quota)\n"
	"  --api-key KEY            /v1 calls need Authorization: Bearer KEY\n"
	"                           (grants writes); unset = everyone may write\n"
	"  --read-key KEY           a second key granting queries only\n"
	"                           (needs --api-key)\n"
	"  --max-body-bytes SIZE    largest mesh upload body (256M)\n"
	"  --max-query-bytes SIZE   largest body of any other request (16M)\n"
	"  --max-batch N            rays/segments/shots per request (65536)\n"
	"  --max-boxes N            boxes per OBB or hitscan request (65536)\n"
	"  --max-triangles N        triangles per mesh (16M)\n"
	"  --max-meshes N           meshes held, 0 = unlimited (0)\n"
	"  --max-worlds N           worlds held, 0 = unlimited (64)\n"
	"  --max-world-instances N  static instances per world (4096)\n"
	"  --max-world-entities N   entities per snapshot (1024)\n"
	"  --max-world-hitboxes N   hitboxes per snapshot, all entities (65536)\n"
	"  --max-world-snapshots N  snapshots one world keeps, >= 2 (256)\n"
	"  --max-response-bytes SIZE  largest response body; a bigger answer is\n"
	"                           413 payload_too_large (64M, at least 1K)\n"
	"  --max-memory SIZE        bytes the meshes and world snapshots held may\n"
	"                           take; past it a PUT or snapshot is 507\n"
	"                           insufficient_storage; 0 = unlimited (0)\n"
	"  --http-engine E          auto (default: epoll for plain HTTP, mhd with\n"
	"                           TLS), epoll (own HTTP/1.1 server, no TLS) or\n"
	"                           mhd (libmicrohttpd)\n"
	"  --tls-cert FILE          serve HTTPS with this PEM certificate (chain)\n"
	"  --tls-key FILE           ... and this PEM private key\n"
	"  --log-level LEVEL        debug, info, warn or error (info);\n"
	"                           info logs one access line per request\n"
	"  --access-log=off         no access lines (on by default), the other info\n"
	"                           lines kept (start, stop, loads)\n"
	"  --data-dir DIR           keep uploaded meshes in DIR, reload at start\n"
	"  --demo                   store the built-in demo mesh \"demo\"\n"
	"  --connection-timeout S   close idle connections after S seconds (30)\n"
	"  --header-timeout S       a request line and its headers must arrive within\n"
	"                           S seconds, however steadily they trickle (60)\n"
	"  --body-timeout S         a body must arrive within S seconds plus one second\n"
	"                           per --min-body-rate bytes received (60)\n"
	"  --min-body-rate SIZE     bytes per second a body earns beyond\n"
	"                           --body-timeout; 0 = no floor (32K)\n"
	"  --store URL              keep meshes in Redis, shared by replicas:\n"
	"                           redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]\n"
	"                           (USER, PASSWORD percent-encoded; no TLS)\n"
	"  --store-password PASS    Redis password (prefer COLLISIOND_STORE_PASSWORD)\n"
	"  --help                   this text\n"
	"  --version                print the version\n";

enum opt_kind {
	OPT_ADDR,	/* const char *: numeric address or "localhost" */
	OPT_KEY,	/* const char *: printable, no spaces, 1..KEY_MAX */
	OPT_PATH,	/* const char *: non-empty */
	OPT_UINT,	/* unsigned, plain decimal, [min, max] */
	OPT_COUNT,	/* size_t, size suffixes allowed, [min, max] */
	OPT_LEVEL,	/* enum log_level */
	OPT_BOOL,	/* int; a bare flag means 1 */
};

struct opt {
	const char *name;	/* flag without the leading "--" */
	enum opt_kind kind;
	size_t off;		/* field in struct config */
	uint64_t min, max;
};

#define F(field) offsetof(struct config, field)
/* The largest byte limit: 1 TiB, far past any memory, and far from where
 * a limit + 1 (a body's NUL) or a doubled buffer would wrap */
#define SIZE_OPT_MAX ((uint64_t)1 << 40)

static const struct opt opts[] = {
	{ "bind", OPT_ADDR, F(bind), 0, 0 },
	{ "port", OPT_UINT, F(port), 0, 65535 },
	{ "threads", OPT_UINT, F(threads), 1, 1024 },
	{ "api-key", OPT_KEY, F(api_key), 0, 0 },
	{ "read-key", OPT_KEY, F(read_key), 0, 0 },
	{ "max-body-bytes", OPT_COUNT, F(max_body_bytes), 1, SIZE_OPT_MAX },
	{ "max-query-bytes", OPT_COUNT, F(max_query_bytes), 1, SIZE_OPT_MAX },
	{ "max-batch", OPT_COUNT, F(max_batch), 1, UINT32_MAX },
	{ "max-boxes", OPT_COUNT, F(max_boxes), 1, UINT32_MAX },
	{ "max-triangles", OPT_COUNT, F(max_triangles), 1, MESH_MAX_TRIANGLES },
	{ "max-meshes", OPT_COUNT, F(max_meshes), 0, UINT32_MAX },
	{ "max-memory", OPT_COUNT, F(max_memory), 0, SIZE_OPT_MAX },
	{ "max-worlds", OPT_COUNT, F(max_worlds), 0, UINT32_MAX },
	{ "max-world-instances", OPT_COUNT, F(max_world_instances), 1, UINT32_MAX >> 1 },
	{ "max-world-entities", OPT_COUNT, F(max_world_entities), 1, UINT32_MAX >> 1 },
	{ "max-world-hitboxes", OPT_COUNT, F(max_world_hitboxes), 1, UINT32_MAX >> 1 },
	{ "max-world-snapshots", OPT_COUNT, F(max_world_snapshots), 2, 1u << 20 },
	{ "max-response-bytes", OPT_COUNT, F(max_response_bytes), 1024, SIZE_OPT_MAX },
	{ "http-engine", OPT_PATH, F(http_engine), 0, 0 },
	{ "tls-cert", OPT_PATH, F(tls_cert), 0, 0 },
	{ "tls-key", OPT_PATH, F(tls_key), 0, 0 },
	{ "log-level", OPT_LEVEL, F(log_level), 0, 0 },
	{ "access-log", OPT_BOOL, F(access_log), 0, 0 },
	{ "data-dir", OPT_PATH, F(data_dir), 0, 0 },
	{ "demo", OPT_BOOL, F(demo), 0, 0 },
	{ "connection-timeout", OPT_UINT, F(connection_timeout), 1, 86400 },
	{ "header-timeout", OPT_UINT, F(header_timeout), 1, 86400 },
	{ "body-timeout", OPT_UINT, F(body_timeout), 1, 86400 },
	{ "min-body-rate", OPT_COUNT, F(min_body_rate), 0, (uint64_t)1 << 30 },	/* 1 GiB/s: no overflow in ns */
	/* replicas */
	{ "store", OPT_PATH, F(store), 0, 0 },
	{ "store-password", OPT_KEY, F(store_password), 0, 0 },
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))
_Static_assert(NOPTS <= 64, "struct config's from_env has a bit per option");

void config_defaults(struct config *cfg)
{
	unsigned ncpu = cpus_usable();

	memset(cfg, 0, sizeof(*cfg));
	cfg->bind = "127.0.0.1";
	cfg->port = 8080;
	cfg->threads = ncpu > 1024 ? 1024 : ncpu;
	cfg->max_body_bytes = (size_t)256 << 20;
	cfg->max_query_bytes = (size_t)16 << 20;
	cfg->max_batch = 65536;
	cfg->max_boxes = 65536;
	cfg->max_triangles = (size_t)16 << 20;
	cfg->max_meshes = 0;
	cfg->max_worlds = 64;
	cfg->max_world_instances = 4096;
	cfg->max_world_entities = 1024;
	cfg->max_world_hitboxes = 65536;
	cfg->max_world_snapshots = 256;
	cfg->max_response_bytes = (size_t)64 << 20;
	cfg->log_level = LOG_INFO;
	cfg->access_log = 1;
	cfg->http_engine = "auto";
	cfg->connection_timeout = 30;
	cfg->header_timeout = 60;	/* nginx client_header_timeout */
	cfg->body_timeout = 60;
	cfg->min_body_rate = 32 << 10;
}

int config_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p) {
		switch (*p) {
		case 'k': case 'K': mul = (uint64_t)1 << 10; break;
		case 'm': case 'M': mul = (uint64_t)1 << 20; break;
		case 'g': case 'G': mul = (uint64_t)1 << 30; break;
		default: return -1;
		}
		p++;
		if (*p && strcasecmp(p, "iB") != 0)
			return -1;
	}
	if (v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

static int parse_uint(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s)
		return -1;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static int key_valid(const char *s)
{
	size_t n = 0;

	for (; *s; s++, n++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return n >= 1 && n <= KEY_MAX;
}

static int addr_valid(const char *s)
{
	unsigned char a[16];

	return strcmp(s, "localhost") == 0 || inet_pton(AF_INET, s, a) == 1 ||
	       inet_pton(AF_INET6, s, a) == 1;
}

/*
 * Store value into the field of o. who names the source for messages
 * ("--port" or "COLLISIOND_PORT"). 0, or -1 with err filled.
 */
static int opt_set(struct config *cfg, const struct opt *o, const char *who,
		   const char *value, char *err, size_t errlen)
{
	char *field = (char *)cfg + o->off;
	uint64_t v;
	int b;

	switch (o->kind) {
	case OPT_ADDR:
		if (!addr_valid(value)) {
			snprintf(err, errlen, "%s: '%s' is not an IPv4 or IPv6 address", who, value);
			return -1;
		}
		*(const char **)field = value;
		return 0;
	case OPT_KEY:
		if (!key_valid(value)) {
			size_t n = strlen(value);

			/* a key file read whole (a Kubernetes secret made with
			 * --from-file, $(cat key)) keeps its line end */
			snprintf(err, errlen,
				 "%s: must be 1-%d printable ASCII characters without spaces%s", who,
				 KEY_MAX, n && (value[n - 1] == '\n' || value[n - 1] == '\r') ?
				 " (it ends with a line break: a key file read with its newline?)" : "");
			return -1;
		}
		*(const char **)field = value;
		return 0;
	case OPT_PATH:
		if (!*value) {
			snprintf(err, errlen, "%s: must not be empty", who);
			return -1;
		}
		*(const char **)field = value;
		return 0;
	case OPT_UINT:
		if (parse_uint(value, &v) || v < o->min || v > o->max) {
			/* Kubernetes' service links set <SERVICE>_PORT=tcp://ip:port
			 * for a Service named collisiond */
			int link = strncmp(value, "tcp://", 6) == 0 && strstr(who, "COLLISIOND_");

			snprintf(err, errlen, "%s: '%s' is not an integer in %llu..%llu%s", who, value,
				 (unsigned long long)o->min, (unsigned long long)o->max,
				 link ? " (a Kubernetes service link of a Service named collisiond? set "
					"enableServiceLinks: false in the pod, or the variable explicitly)" : "");
			return -1;
		}
		*(unsigned *)field = (unsigned)v;
		return 0;
	case OPT_COUNT:
		if (config_parse_size(value, &v) || v < o->min || v > o->max) {
			snprintf(err, errlen,
				 "%s: '%s' is not a number in %llu..%llu (suffixes K, M, G allowed)",
				 who, value, (unsigned long long)o->min, (unsigned long long)o->max);
			return -1;
		}
		*(size_t *)field = (size_t)v;
		return 0;
	case OPT_LEVEL:
		if (log_level_parse(value, (enum log_level *)field)) {
			snprintf(err, errlen, "%s: '%s' is not one of debug, info, warn, error", who,
				 value);
			return -1;
		}
		return 0;
	case OPT_BOOL:
		if (parse_bool(value, &b)) {
			snprintf(err, errlen, "%s: '%s' is not a boolean (1/0, true/false, yes/no, on/off)",
				 who, value);
			return -1;
		}
		*(int *)field = b;
		return 0;
	}
	return -1;
}

/* "max-batch" -> "COLLISIOND_MAX_BATCH" */
static void env_name(const char *flag, char *out, size_t outlen)
{
	size_t n = (size_t)snprintf(out, outlen, "COLLISIOND_");

	for (; *flag && n + 1 < outlen; flag++, n++)
		out[n] = *flag == '-' ? '_' : (char)(*flag >= 'a' && *flag <= 'z' ? *flag - 32 : *flag);
	out[n] = '\0';
}

static const char *env_lookup(char *const envp[], const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

static const struct opt *opt_find(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (strlen(opts[i].name) == n && strncmp(opts[i].name, name, n) == 0)
			return &opts[i];
	return NULL;
}

/* option i as the operator set it, into buf (who_set, config_who) */
static const char *who_opt(const struct config *cfg, size_t i, char *buf, size_t len)
{
	char env[64];

	if (cfg->from_env >> i & 1) {
		env_name(opts[i].name, env, sizeof(env));
		snprintf(buf, len, "%s (--%s)", env, opts[i].name);
	} else {
		snprintf(buf, len, "--%s", opts[i].name);
	}
	return buf;
}

/* How the operator set the option at field off: "--name", or
 * "COLLISIOND_NAME (--name)" when its variable did (into buf). */
static const char *who_set(const struct config *cfg, size_t off, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < NOPTS && opts[i].off != off; i++)
		;
	return i < NOPTS ? who_opt(cfg, i, buf, len) : "?";
}

const char *config_who(const struct config *cfg, const char *flag, char *buf, size_t len)
{
	const struct opt *o = opt_find(flag, strlen(flag));

	return o ? who_opt(cfg, (size_t)(o - opts), buf, len) : flag;
}

static int check_combinations(const struct config *cfg, char *err, size_t errlen)
{
	char a[80], b[80];

	if (!cfg->tls_cert != !cfg->tls_key) {
		snprintf(err, errlen, "%s: needs %s too (--tls-cert and --tls-key go together)",
			 cfg->tls_cert ? who_set(cfg, F(tls_cert), a, sizeof(a)) :
					 who_set(cfg, F(tls_key), a, sizeof(a)),
			 cfg->tls_cert ? "--tls-key (COLLISIOND_TLS_KEY)" : "--tls-cert (COLLISIOND_TLS_CERT)");
		return -1;
	}
	if (strcmp(cfg->http_engine, "auto") != 0 && strcmp(cfg->http_engine, "mhd") != 0 &&
	    strcmp(cfg->http_engine, "epoll") != 0) {
		snprintf(err, errlen, "%s: '%s' is not one of auto, epoll, mhd",
			 who_set(cfg, F(http_engine), a, sizeof(a)), cfg->http_engine);
		return -1;
	}
	if (strcmp(cfg->http_engine, "epoll") == 0 && cfg->tls_cert) {
		snprintf(err, errlen, "%s: epoll serves plain HTTP only, and %s asks for TLS: use mhd",
			 who_set(cfg, F(http_engine), a, sizeof(a)), who_set(cfg, F(tls_cert), b, sizeof(b)));
		return -1;
	}
	if (cfg->read_key && !cfg->api_key) {
		snprintf(err, errlen, "%s: needs --api-key (without it everyone may already write)",
			 who_set(cfg, F(read_key), a, sizeof(a)));
		return -1;
	}
	/* replicas */
	if (cfg->store && cfg->data_dir) {
		snprintf(err, errlen, "%s: cannot be combined with %s (Redis keeps the meshes)",
			 who_set(cfg, F(store), a, sizeof(a)), who_set(cfg, F(data_dir), b, sizeof(b)));
		return -1;
	}
	if (cfg->store) {
		struct store_redis_url u;
		char why[160];

		if (store_redis_parse_url(cfg->store, NULL, &u, why, sizeof(why))) {
			snprintf(err, errlen, "%s: %s", who_set(cfg, F(store), a, sizeof(a)), why);
			return -1;
		}
	}
	return 0;
}

/* The options argv gives, a bit each, its arguments read as the parse
 * below reads them (a value is no flag): their variables are not read. */
static uint64_t flags_given(int argc, char *const argv[])
{
	uint64_t given = 0;
	int a;

	for (a = 1; a < argc; a++) {
		const char *name = argv[a], *eq;
		const struct opt *o;

		if (strncmp(name, "--", 2) != 0 || name[2] == '\0')
			continue;
		name += 2;
		eq = strchr(name, '=');
		o = opt_find(name, eq ? (size_t)(eq - name) : strlen(name));
		if (!o)
			continue;
		given |= (uint64_t)1 << (o - opts);
		if (!eq && o->kind != OPT_BOOL)
			a++;
	}
	return given;
}

enum config_result config_parse(struct config *cfg, int argc, char *const argv[],
				char *const envp[], char *err, size_t errlen)
{
	char who[64];
	uint64_t given;
	size_t i;
	int a;

	config_defaults(cfg);
	if (errlen)
		err[0] = '\0';

	/* --help and --version win over any bad value elsewhere. */
	for (a = 1; a < argc && strcmp(argv[a], "--") != 0; a++) {
		if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0)
			return CONFIG_HELP;
		if (strcmp(argv[a], "--version") == 0)
			return CONFIG_VERSION;
	}

	/* a flag overrides its variable, which is then not read at all: a bad
	 * value there (a Kubernetes service link's COLLISIOND_PORT) is no error */
	given = flags_given(argc, argv);
	for (i = 0; i < NOPTS; i++) {
		const char *v;
		char flag[160];

		if (given >> i & 1)
			continue;
		env_name(opts[i].name, who, sizeof(who));
		v = env_lookup(envp, who);
		if (!v)
			continue;
		snprintf(flag, sizeof(flag), "%s (--%s)", who, opts[i].name);
		if (opt_set(cfg, &opts[i], flag, v, err, errlen))
			return CONFIG_ERROR;
		cfg->from_env |= (uint64_t)1 << i;
	}

	for (a = 1; a < argc; a++) {
		const char *arg = argv[a], *name, *eq, *value;
		const struct opt *o;
		size_t n;

		if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
			snprintf(err, errlen, "unexpected argument '%s' (see --help)", arg);
			return CONFIG_ERROR;
		}
		name = arg + 2;
		eq = strchr(name, '=');
		n = eq ? (size_t)(eq - name) : strlen(name);
		o = opt_find(name, n);
		if (!o) {
			snprintf(err, errlen, "--%.*s: unknown option (see --help)", (int)n, name);
			return CONFIG_ERROR;
		}
		snprintf(who, sizeof(who), "--%s", o->name);
		if (eq) {
			value = eq + 1;
		} else if (o->kind == OPT_BOOL) {
			value = "1";
		} else if (a + 1 < argc) {
			value = argv[++a];
		} else {
			snprintf(err, errlen, "%s: needs a value", who);
			return CONFIG_ERROR;
		}
		if (opt_set(cfg, o, who, value, err, errlen))
			return CONFIG_ERROR;
		cfg->from_env &= ~((uint64_t)1 << (o - opts));
	}

	if (check_combinations(cfg, err, errlen))
		return CONFIG_ERROR;
	return CONFIG_OK;
}

/* Read a whole PEM file (at most PEM_MAX bytes) as a NUL-terminated string. */
static int read_pem(const char *flag, const char *path, char **out, char *err, size_t errlen)
{
	FILE *f;
	char *data;
	size_t n;

	f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open '%s': %s", flag, path, strerror(errno));
		return -1;
	}
	data = malloc(PEM_MAX + 1);
	if (!data) {
		snprintf(err, errlen, "%s: out of memory", flag);
		goto out_close;
	}
	n = fread(data, 1, PEM_MAX + 1, f);
	if (ferror(f) || n == 0 || n > PEM_MAX) {
		snprintf(err, errlen, "%s: '%s' is %s", flag, path,
			 ferror(f) ? "unreadable" : n == 0 ? "empty" : "larger than 1 MiB");
		goto out_free_data;
	}
	data[n] = '\0';
	if (!strstr(data, "-----BEGIN ")) {
		snprintf(err, errlen, "%s: '%s' is not a PEM file", flag, path);
		goto out_free_data;
	}
	fclose(f);
	*out = data;
	return 0;

out_free_data:
	free(data);
out_close:
	fclose(f);
	return -1;
}

int config_load_files(struct config *cfg, char *err, size_t errlen)
{
	char who[80];

	if (!cfg->tls_cert)
		return 0;
	if (read_pem(who_set(cfg, F(tls_cert), who, sizeof(who)), cfg->tls_cert, &cfg->tls_cert_pem,
		     err, errlen))
		return -1;
	if (read_pem(who_set(cfg, F(tls_key), who, sizeof(who)), cfg->tls_key, &cfg->tls_key_pem, err,
		     errlen)) {
		free(cfg->tls_cert_pem);
		cfg->tls_cert_pem = NULL;
		return -1;
	}
	return 0;
}

void config_release(struct config *cfg)
{
	free(cfg->tls_cert_pem);
	free(cfg->tls_key_pem);
	cfg->tls_cert_pem = NULL;
	cfg->tls_key_pem = NULL;
}
