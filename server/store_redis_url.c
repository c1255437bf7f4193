/* store_redis_url.c - parse the --store URL (pure, no I/O; declared in
 * store_redis.h so config.c can validate it without connecting). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_redis.h"

/* Copy n bytes of s into out (cap bytes); -1 when it does not fit. */
static int copy_part(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

static int parse_num(const char *s, size_t n, unsigned long max, unsigned *out)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 10)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int store_redis_parse_url(const char *url, const char *password, struct store_redis_url *out,
			  char *err, size_t errlen)
{
	const char *p, *at, *hend, *slash, *colon;

	memset(out, 0, sizeof(*out));
	out->port = 6379;
	if (strncmp(url, "redis://", 8) != 0) {
		snprintf(err, errlen, "must start with redis:// (redis://HOST:PORT[/DB])");
		return -1;
	}
	p = url + 8;
	slash = strchr(p, '/');
	at = strchr(p, '@');
	if (at && (!slash || at < slash)) {
		colon = memchr(p, ':', (size_t)(at - p));
		if (!colon) {
			snprintf(err, errlen, "credentials must be USER:PASSWORD@ or :PASSWORD@");
			return -1;
		}
		if (copy_part(out->user, sizeof(out->user), p, (size_t)(colon - p)) ||
		    copy_part(out->password, sizeof(out->password), colon + 1,
			      (size_t)(at - colon - 1))) {
			snprintf(err, errlen, "user or password too long");
			return -1;
		}
		p = at + 1;
	}
	if (*p == '[') {
		hend = strchr(p, ']');
		if (!hend || copy_part(out->host, sizeof(out->host), p + 1, (size_t)(hend - p - 1))) {
			snprintf(err, errlen, "bad [IPv6] host");
			return -1;
		}
		hend++;
	} else {
		hend = p + strcspn(p, ":/");
		if (copy_part(out->host, sizeof(out->host), p, (size_t)(hend - p))) {
			snprintf(err, errlen, "host too long");
			return -1;
		}
	}
	if (!out->host[0]) {
		snprintf(err, errlen, "no host (redis://HOST:PORT[/DB])");
		return -1;
	}
	p = hend;
	if (*p == ':') {
		size_t n = strcspn(p + 1, "/");

		if (parse_num(p + 1, n, 65535, &out->port) || out->port == 0) {
			snprintf(err, errlen, "port must be an integer in 1..65535");
			return -1;
		}
		p += 1 + n;
	}
	if (*p == '/' && p[1]) {
		if (parse_num(p + 1, strlen(p + 1), 1u << 30, &out->db)) {
			snprintf(err, errlen, "database must be a number after the last /");
			return -1;
		}
	} else if (*p && strcmp(p, "/") != 0) {
		snprintf(err, errlen, "unexpected text after the host");
		return -1;
	}
	if (password && password[0] &&
	    copy_part(out->password, sizeof(out->password), password, strlen(password))) {
		snprintf(err, errlen, "password too long");
		return -1;
	}
	return 0;
}
