/* store_redis_url.c - parse the --store URL (pure, no I/O; declared in
 * store_redis.h so config.c can validate it without connecting). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
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

/*
 * Copy n bytes of s into out (cap bytes), decoding each %XX (RFC 3986
 * 2.1): a password may hold '@', ':', '/', '?', '#' or '%' written so. 0;
 * -1 for a '%' not followed by two hex digits, or one decoding to NUL
 * (which AUTH's C string cannot carry); -2 when the result does not fit.
 */
static int decode_part(char *out, size_t cap, const char *s, size_t n)
{
	size_t i, len = 0;
	int hi, lo;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '%') {
			if (i + 2 >= n)
				return -1;
			hi = hex_value(s[i + 1]);
			lo = hex_value(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -1;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (len + 1 >= cap)
			return -2;
		out[len++] = c;
	}
	out[len] = '\0';
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
	const char *p, *at, *hend, *colon;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	out->port = 6379;
	if (strncmp(url, "rediss://", 9) == 0) {
		snprintf(err, errlen,
			 "rediss:// (TLS to Redis) is not supported: collisiond speaks plain redis:// only");
		return -1;
	}
	if (strncmp(url, "redis://", 8) != 0) {
		snprintf(err, errlen, "must start with redis:// (redis://HOST:PORT[/DB])");
		return -1;
	}
	p = url + 8;
	/* Options such as ?timeout=1 were once taken as part of the host or
	 * the database. A raw '?' or '#' in a password is refused with them,
	 * since in any URL it ends the authority; %3F and %23 are kept. */
	if (strpbrk(p, "?#")) {
		snprintf(err, errlen,
			 "a query (?...) or fragment (#...) is not supported; write a ? or # in the password as %%3F or %%23");
		return -1;
	}
	/* The userinfo ends at the last '@' before the path, as in RFC 3986
	 * parsers (urllib, WHATWG): a password may hold '@'. */
	n = strcspn(p, "/");
	at = memrchr(p, '@', n);
	if (at) {
		colon = memchr(p, ':', (size_t)(at - p));
		if (!colon) {
			snprintf(err, errlen, "credentials must be USER:PASSWORD@ or :PASSWORD@");
			return -1;
		}
		rc = decode_part(out->user, sizeof(out->user), p, (size_t)(colon - p));
		if (!rc)
			rc = decode_part(out->password, sizeof(out->password), colon + 1,
					 (size_t)(at - colon - 1));
		if (rc) {
			snprintf(err, errlen, rc == -2 ? "user or password too long" :
				 "user or password: malformed percent-encoding (a %% takes two hex digits, not %%00; write a %% as %%25)");
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
		n = strcspn(p + 1, "/");
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
