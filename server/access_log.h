/* access_log.h - the text of one access-log line, formatted by hand (snprintf
 * was a third of a line's cost under callgrind): "access method=M path=P
 * status=S bytes=B us=U remote=R". The caller hands it to log_access. */
#ifndef SERVER_ACCESS_LOG_H
#define SERVER_ACCESS_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ACCESS_REMOTE_MAX 46	/* INET6_ADDRSTRLEN */

struct access_fields {
	const char *method;
	const char *path;	/* escaped by access_escape_path */
	size_t path_len;
	int status;
	size_t bytes;
	uint64_t us;
	const char *remote;
};

/* Copy raw (NUL-terminated) into out[0..cap), escaping bytes that could
 * break a log line as \xNN and ending with "..." when cut; cap >= 8. The
 * length written (no NUL). */
size_t access_escape_path(char *out, size_t cap, const char *raw);

/* The address of sa (IPv4 or IPv6, NULL allowed) as text, or "-". */
void access_remote(const struct sockaddr *sa, char out[ACCESS_REMOTE_MAX]);

/* Format the line into out[0..cap) (cut at cap); its length. */
size_t access_format(char *out, size_t cap, const struct access_fields *f);

/* The decimal digits of v, right-aligned in digits[20]: returns where they
 * start (their count is digits + 20 minus that). For the access line and
 * the epoll engine's response heads. */
const char *access_u64(char digits[20], uint64_t v);

#endif
