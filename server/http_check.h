/* http_check.h - what libmicrohttpd 0.9.75 lets through but RFC 9110/9112
 * says a server must refuse: an HTTP/1.1 request without Host, or with two
 * or an invalid one, a header name that is not a token, a NUL in a header
 * value, conflicting Content-Length headers, a Transfer-Encoding other than
 * one chunked, or beside a Content-Length, or in HTTP/1.0, and a
 * Content-Encoding this server cannot decode. Every refusal closes the
 * connection after its answer (close_now). */
#ifndef SERVER_HTTP_CHECK_H
#define SERVER_HTTP_CHECK_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"

/* 1 for the bytes that may appear in a token (RFC 9110 5.6.2: ALPHA,
 * DIGIT and !#$%&'*+-.^_`|~): the one definition for header names
 * (http_check.c) and methods (http_parse.c). A table: a load per byte where
 * two 64-bit masks took ten instructions. */
extern const unsigned char http_tchar[256];

static inline int http_is_tchar(unsigned char ch)
{
	return http_tchar[ch];
}

/* A client's (or a proxy's: nginx's $request_id) name for a request: echoed
 * in the answer and written to its access line. */
#define HTTP_HEADER_REQUEST_ID "X-Request-Id"
/* The longest one taken; a longer one, or one with a byte outside 0x21-0x7e,
 * is ignored (not echoed, not logged). */
#define HTTP_REQUEST_ID_MAX 128

/* The headers the transport uses, gathered in the same pass (NULL: absent). */
struct http_head {
	const char *content_length, *transfer_encoding, *content_type, *authorization;
	const char *request_id;		/* X-Request-Id: request_id_len bytes */
	size_t request_id_len;
};

/* The same checks, one header at a time, for a transport that parses its
 * own headers (http_parse.c): init, each header in order (key and value
 * NUL-terminated, value without surrounding whitespace), then end. */
struct http_head_scan {
	struct http_head *head;
	enum api_err err;
	int close_now;
	int hosts;
	char *msg;
	size_t msglen;
};

void http_scan_init(struct http_head_scan *h, struct http_head *head, char *msg, size_t msglen);

/* 0, or -1 once the head is refused (h->err, msg say why; stop scanning). */
int http_scan_header(struct http_head_scan *h, const char *key, size_t key_size,
		     const char *value, size_t value_size);

/* The value of the leading decimal digits of s, UINT64_MAX past it (as
 * strtoull, without its locale and sign handling): a Content-Length. */
uint64_t http_decimal_u64(const char *s);

/* The same for a name known to be a non-empty token. */
int http_scan_header_named(struct http_head_scan *h, const char *key, size_t key_size,
			   const char *value, size_t value_size);

/* The verdict (as http_check_head's); http11: the request says HTTP/1.1. */
enum api_err http_scan_end(struct http_head_scan *h, int http11, int *close_now);

/*
 * Check the request head of c (version as libmicrohttpd gives it). API_OK,
 * or the error to answer (API_INVALID_REQUEST: 400, API_UNSUPPORTED_MEDIA_TYPE:
 * 415) with msg naming the header; head is filled either way. *close_now is
 * set with every refusal (where the body ends is not known once a header is
 * refused): answer at once, the connection closes.
 */
enum api_err http_check_head(struct MHD_Connection *c, const char *version,
			     struct http_head *head, char *msg, size_t msglen, int *close_now);

/*
 * Where the origin form of a request target begins: target itself, or for
 * the absolute form (RFC 9112 3.2.2, "http://host:port/path?q", which a
 * server must accept) the path after the authority (possibly empty). The
 * scheme is http or https in any case.
 */
const char *http_origin_form(const char *target, size_t len);

#endif
