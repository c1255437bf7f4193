/* http_check.h - what libmicrohttpd 0.9.75 lets through but RFC 9110/9112
 * says a server must refuse: an HTTP/1.1 request without Host, a header
 * name that is not a token, a NUL in a header value, conflicting
 * Content-Length headers, a Transfer-Encoding other than chunked, and a
 * Content-Encoding this server cannot decode. */
#ifndef SERVER_HTTP_CHECK_H
#define SERVER_HTTP_CHECK_H

#include <microhttpd.h>
#include <stddef.h>

#include "api.h"

/* The headers the transport uses, gathered in the same pass (NULL: absent). */
struct http_head {
	const char *content_length, *transfer_encoding, *content_type, *authorization;
};

/*
 * Check the request head of c (version as libmicrohttpd gives it). API_OK,
 * or the error to answer (API_INVALID_REQUEST: 400, API_UNSUPPORTED_MEDIA_TYPE:
 * 415) with msg naming the header; head is filled either way. *close_now is set when the body cannot be
 * delimited (bad Transfer-Encoding): answer at once, the connection closes.
 */
enum api_err http_check_head(struct MHD_Connection *c, const char *version,
			     struct http_head *head, char *msg, size_t msglen, int *close_now);

#endif
