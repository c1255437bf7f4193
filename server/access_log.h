/* access_log.h - the text of one access-log line, formatted by hand (snprintf
 * was a third of a line's cost under callgrind): "access method=M path=P
 * status=S bytes=B us=U remote=R", then " rid=I" for a request that named
 * itself (X-Request-Id). The caller formats it in place, into
 * the room log_access_begin gives (no copy). */
#ifndef SERVER_ACCESS_LOG_H
#define SERVER_ACCESS_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ACCESS_REMOTE_MAX 46	/* INET6_ADDRSTRLEN */
#define ACCESS_PATH_MAX 192	/* bytes of the escaped path, "..." included */
#define ACCESS_METHOD_MAX 16
#define ACCESS_RID_MAX 128	/* HTTP_REQUEST_ID_MAX (http_check.h) */
/* the longest line access_format writes, fields within their bounds */
#define ACCESS_LINE_MAX (14 + ACCESS_METHOD_MAX + 6 + ACCESS_PATH_MAX + 8 + 20 + 7 + 20 + 4 + \
			 20 + 8 + ACCESS_REMOTE_MAX + 5 + ACCESS_RID_MAX)

struct access_fields {
	const char *method;	/* at most ACCESS_METHOD_MAX bytes are written */
	const char *path;	/* raw, NUL-ended: escaped by access_escape_path */
	int status;
	size_t bytes;
	uint64_t us;
	const char *remote;	/* at most ACCESS_REMOTE_MAX bytes are written */
	const char *rid;	/* rid_len bytes of 0x21-0x7e, as given; rid_len 0: none */
	size_t rid_len;		/* at most ACCESS_RID_MAX bytes are written */
};

/* Copy raw (NUL-terminated) into out[0..cap), escaping bytes that could
 * break a log line as \xNN and ending with "..." when cut; cap >= 3. The
 * length written (no NUL), at most cap. */
size_t access_escape_path(char *out, size_t cap, const char *raw);

/* The address of sa (IPv4 or IPv6, NULL allowed) as text, or "-". */
void access_remote(const struct sockaddr *sa, char out[ACCESS_REMOTE_MAX]);

/* Format the line into out (fields past their bounds are cut); its length,
 * at most ACCESS_LINE_MAX. */
size_t access_format(char out[ACCESS_LINE_MAX], const struct access_fields *f);

/* The decimal digits of v, right-aligned in digits[20]: returns where they
 * start (their count is digits + 20 minus that). For the access line and
 * the epoll engine's response heads. */
const char *access_u64(char digits[20], uint64_t v);

#endif
