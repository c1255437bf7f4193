/* access_log.c - access-log line formatting (see access_log.h). */
#include "access_log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* 1 for the bytes a log line carries as they are: 0x21..0x7e but '"' and
 * '\\' (NUL is 0: it ends the path) */
static const unsigned char plain[256] = { ['!'] = 1, ['#' ... '['] = 1, [']' ... '~'] = 1 };

size_t access_escape_path(char *out, size_t cap, const char *raw)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0, lim = cap < 3 ? 0 : cap - 3;

	/* the usual path needs no escape: copy it as is (each byte written
	 * leaves room for "...") */
	while (n < lim && plain[(unsigned char)raw[n]]) {
		out[n] = raw[n];
		n++;
	}
	raw += n;
	for (; *raw; raw++) {
		unsigned char c = (unsigned char)*raw;

		if (!plain[c]) {
			if (n + 4 + 3 > cap)
				break;
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		} else {
			if (n + 1 + 3 > cap)
				break;
			out[n++] = (char)c;
		}
	}
	if (*raw) {
		out[n++] = '.';
		out[n++] = '.';
		out[n++] = '.';
	}
	return n;
}

void access_remote(const struct sockaddr *sa, char out[ACCESS_REMOTE_MAX])
{
	snprintf(out, ACCESS_REMOTE_MAX, "-");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out,
			  ACCESS_REMOTE_MAX);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
			  ACCESS_REMOTE_MAX);
}

/* Append s (n bytes) at p; returns the end. */
static char *put_bytes(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

const char *access_u64(char digits[20], uint64_t v)
{
	char *d = digits + 20;

	do {
		*--d = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return d;
}

static char *put_u64(char *p, uint64_t v)
{
	char digits[20];
	const char *d = access_u64(digits, v);

	return put_bytes(p, d, (size_t)(digits + sizeof(digits) - d));
}

size_t access_format(char out[ACCESS_LINE_MAX], const struct access_fields *f)
{
	char *p = out;

	p = put_bytes(p, "access method=", 14);
	p = put_bytes(p, f->method, strnlen(f->method, ACCESS_METHOD_MAX));
	p = put_bytes(p, " path=", 6);
	p += access_escape_path(p, ACCESS_PATH_MAX, f->path);
	p = put_bytes(p, " status=", 8);
	p = put_u64(p, f->status < 0 ? 0 : (uint64_t)f->status);
	p = put_bytes(p, " bytes=", 7);
	p = put_u64(p, f->bytes);
	p = put_bytes(p, " us=", 4);
	p = put_u64(p, f->us);
	p = put_bytes(p, " remote=", 8);
	p = put_bytes(p, f->remote, strnlen(f->remote, ACCESS_REMOTE_MAX));
	if (f->rid_len) {
		p = put_bytes(p, " rid=", 5);
		p = put_bytes(p, f->rid, f->rid_len < ACCESS_RID_MAX ? f->rid_len : ACCESS_RID_MAX);
	}
	return (size_t)(p - out);
}
