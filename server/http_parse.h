/* http_parse.h - HTTP/1.x request parsing for the epoll engine (http_ev.c):
 * the head (request line and headers, parsed in place), the query string,
 * and chunked bodies (a byte-at-a-time state machine, so a body may arrive
 * split anywhere).
 *
 * The checks are those libmicrohttpd and http_check.c make together:
 * syntax here (request line, header lines, Content-Length digits, sizes),
 * meaning in http_check.c (http_scan_*: Host on HTTP/1.1, token names, NUL
 * in values, conflicting Content-Length, Transfer-Encoding,
 * Content-Encoding), so that both engines refuse the same heads.
 */
#ifndef SERVER_HTTP_PARSE_H
#define SERVER_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "http_check.h"

#define HTTP_HEAD_MAX (16 * 1024)	/* request line and headers, as libmicrohttpd's pool */
#define HTTP_HEADERS_MAX 100		/* header lines; more is 431 */
#define HTTP_CHUNK_LINE_MAX 4096	/* a chunk-size line with its extensions */
#define HTTP_TRAILER_MAX (16 * 1024)	/* trailer lines of a chunked body, all together */

enum http_parse_result {
	HTTP_PARSE_OK,
	HTTP_PARSE_INCOMPLETE,	/* the empty line has not arrived yet */
	HTTP_PARSE_BAD,		/* 400: request line or header syntax */
	HTTP_PARSE_TOO_LARGE,	/* 431: over HTTP_HEAD_MAX or HTTP_HEADERS_MAX */
	HTTP_PARSE_VERSION,	/* 505: HTTP/x.y other than 1.0 and 1.1 */
};

/* A parsed head; every pointer is into the caller's buffer, NUL-ended. */
struct http_parsed {
	char *method;
	char *target;		/* as sent: path and query string */
	size_t target_len;
	int minor;		/* HTTP/1.minor, 0 or 1 */
	size_t head_len;	/* bytes through the empty line */
	int conn_close;		/* Connection: close */
	int conn_keep_alive;	/* Connection: keep-alive */
	int expect_continue;	/* Expect: 100-continue */
	int chunked;		/* Transfer-Encoding: chunked (accepted) */
	struct http_head head;	/* the headers the request logic uses */
	enum api_err verdict;	/* http_scan_*'s: API_OK, or the 400/415 to answer */
	int close_now;		/* the head is refused: answer and close */
};

/*
 * Where the head in buf[0..len) ends: its length through the empty line
 * (LF or CRLF line ends), or 0 when it has not arrived. *scan (0 at first)
 * keeps the start of the line not yet complete between calls, so bytes
 * arriving one at a time are not rescanned from the start.
 */
size_t http_head_end(const char *buf, size_t len, size_t *scan);

/*
 * Parse the head in buf[0..len) in place (NULs are written into it). len
 * may hold more (a body, the next request). HTTP_PARSE_OK with p filled, or
 * what to answer, with msg saying why. A head whose headers the checks
 * refuse is HTTP_PARSE_OK with p->verdict set: it is answered as a request.
 */
enum http_parse_result http_parse_head(char *buf, size_t len, struct http_parsed *p, char *msg,
				       size_t msglen);

/* The same for a head known to end at end (http_head_end's answer for
 * buf, end <= HTTP_HEAD_MAX): no second scan for its end. */
enum http_parse_result http_parse_head_at(char *buf, size_t end, struct http_parsed *p, char *msg,
					  size_t msglen);

/* The status line's code for a result other than OK and INCOMPLETE. */
int http_parse_status(enum http_parse_result r);

/* Decode %XX in s in place (a malformed escape is kept as is, as
 * libmicrohttpd's MHD_http_unescape). The new length. */
size_t http_unescape(char *s);

/*
 * Split a query string (after '?', NUL-ended) into at most max key/value
 * pairs, decoded in place ('+' is a space, then %XX: libmicrohttpd 0.9.75
 * gives "a+b%41" as "a bA"); a key without '=' has the value "". args[count]
 * gets a NULL key. The count, or max + 1 when there are more than max (args
 * then hold the first max): the caller refuses them, never drops one.
 */
size_t http_parse_query(char *query, struct api_arg *args, size_t max);


enum http_chunked_state {
	CH_SIZE, CH_SIZE_WS, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF,
	CH_TRAILER_START, CH_TRAILER, CH_TRAILER_LF, CH_END_LF, CH_DONE, CH_ERROR,
};

/* A chunked body being decoded; zero it to start. */
struct http_chunked {
	enum http_chunked_state state;
	uint64_t left;		/* bytes left in the chunk (its size while CH_SIZE) */
	uint64_t size;		/* the last chunk size read */
	int fresh;		/* 1 once a size line ends, until the caller clears it */
	unsigned digits;	/* of the chunk size; in a trailer, 1 past its colon */
	size_t line;		/* bytes of the current size line */
	size_t trailer;		/* bytes of trailers so far */
};

/*
 * Decode from in[0..len): the bytes consumed. At most one span of body
 * bytes is found per call, in place: *data, *dlen (0 when none). Call again
 * with the rest while bytes remain and the state is neither CH_DONE (the
 * bytes after it belong to the next request) nor CH_ERROR (400).
 */
size_t http_chunked_feed(struct http_chunked *c, const char *in, size_t len, const char **data,
			 size_t *dlen);

#endif
