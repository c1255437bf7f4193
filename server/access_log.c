/* access_log.c - access-log line formatting (see access_log.h). */
#include "access_log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

size_t access_escape_path(char *out, size_t cap, const char *raw)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	/* the usual path needs no escape: copy it as is */
	while (n + 5 < cap && raw[n] > 0x20 && raw[n] < 0x7f && raw[n] != '"' && raw[n] != '\\') {
		out[n] = raw[n];
		n++;
	}
	raw += n;
	for (; *raw && n + 5 < cap; raw++) {
		unsigned char c = (unsigned char)*raw;

		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		} else {
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

/* Append s (n bytes) at *p, within end. */
static void put_bytes(char **p, const char *end, const char *s, size_t n)
{
	if (n > (size_t)(end - *p))
		n = (size_t)(end - *p);
	memcpy(*p, s, n);
	*p += n;
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

static void put_u64(char **p, const char *end, uint64_t v)
{
	char digits[20];
	const char *d = access_u64(digits, v);

	put_bytes(p, end, d, (size_t)(digits + sizeof(digits) - d));
}

size_t access_format(char *out, size_t cap, const struct access_fields *f)
{
	char *p = out;
	const char *end = out + cap;

	put_bytes(&p, end, "access method=", 14);
	put_bytes(&p, end, f->method, strlen(f->method));
	put_bytes(&p, end, " path=", 6);
	put_bytes(&p, end, f->path, f->path_len);
	put_bytes(&p, end, " status=", 8);
	put_u64(&p, end, f->status < 0 ? 0 : (uint64_t)f->status);
	put_bytes(&p, end, " bytes=", 7);
	put_u64(&p, end, f->bytes);
	put_bytes(&p, end, " us=", 4);
	put_u64(&p, end, f->us);
	put_bytes(&p, end, " remote=", 8);
	put_bytes(&p, end, f->remote, strlen(f->remote));
	return (size_t)(p - out);
}
