/* http_check.c - request-head checks libmicrohttpd leaves to the application
 * (see http_check.h). */
#include "http_check.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const unsigned char http_tchar[256] = {
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1,
	['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
};

uint64_t http_decimal_u64(const char *s)
{
	uint64_t v = 0;

	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
	}
	return v;
}

/* A Host value v[0..n): host[:port] as RFC 3986 spells them (reg-name, IPv4,
 * or an IP literal in brackets), by its bytes; empty is allowed (RFC 9112 3.2). */
static int host_ok(const char *v, size_t n)
{
	static const unsigned char ok[256] = {
		['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
		['-'] = 1, ['.'] = 1, ['_'] = 1, ['~'] = 1, ['%'] = 1, ['!'] = 1, ['$'] = 1,
		['&'] = 1, ['\''] = 1, ['('] = 1, [')'] = 1, ['*'] = 1, ['+'] = 1, [','] = 1,
		[';'] = 1, ['='] = 1, [':'] = 1, ['['] = 1, [']'] = 1,
	};

	for (size_t i = 0; i < n; i++)
		if (!ok[(unsigned char)v[i]])
			return 0;
	return 1;
}

/* v[0..n) is the token tok, in any case. */
static int value_is(const char *v, size_t n, const char *tok)
{
	return v && n == strlen(tok) && strncasecmp(v, tok, n) == 0;
}

/* The length of v without the blanks that end it. */
static size_t trimmed_len(const char *v, size_t n)
{
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n;
}

/* The value kept earlier (blanks may end it) is v[0..n). */
static int same_value(const char *kept, const char *v, size_t n)
{
	return trimmed_len(kept, strlen(kept)) == n && strncmp(kept, v, n) == 0;
}

static void fail(struct http_head_scan *h, enum api_err e, const char *fmt, const char *name)
{
	if (h->err != API_OK)
		return;
	h->err = e;
	snprintf(h->msg, h->msglen, fmt, name);
}

void http_scan_init(struct http_head_scan *h, struct http_head *head, char *msg, size_t msglen)
{
	memset(h, 0, sizeof(*h));
	memset(head, 0, sizeof(*head));
	h->head = head;
	h->msg = msg;
	h->msglen = msglen;
}

int http_scan_header(struct http_head_scan *h, const char *key, size_t key_size,
		     const char *value, size_t value_size)
{
	size_t i;

	if (key_size == 0) {
		fail(h, API_INVALID_REQUEST, "header: empty name%s", "");
		return -1;
	}
	for (i = 0; i < key_size; i++) {
		if (!http_is_tchar((unsigned char)key[i])) {
			fail(h, API_INVALID_REQUEST, "header %.40s: the name is not a token", key);
			return -1;
		}
	}
	return http_scan_header_named(h, key, key_size, value, value_size);
}

int http_scan_header_named(struct http_head_scan *h, const char *key, size_t key_size,
			   const char *value, size_t value_size)
{
	if (value && memchr(value, '\0', value_size)) {
		fail(h, API_INVALID_REQUEST, "header %.40s: the value holds a NUL byte", key);
		return -1;
	}
	/* RFC 9112 5: the blanks after a value are no part of it; the epoll
	 * parser strips them, libmicrohttpd leaves them in (Transfer-Encoding
	 * excepted, below) */
	if (value)
		value_size = trimmed_len(value, value_size);
	/* dispatch on the length first: most headers are none of these */
	switch (key_size) {
	case 4:
		if (strcasecmp(key, MHD_HTTP_HEADER_HOST) != 0)
			break;
		/* RFC 9112 3.2: more than one Host, or one that is not a
		 * host[:port], is a 400 */
		if (++h->hosts > 1) {
			fail(h, API_INVALID_REQUEST, "header %s: given more than once",
			     MHD_HTTP_HEADER_HOST);
			return -1;
		}
		if (value && !host_ok(value, value_size)) {
			fail(h, API_INVALID_REQUEST, "header %s: not a host[:port]",
			     MHD_HTTP_HEADER_HOST);
			return -1;
		}
		break;
	case 12:
		if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_TYPE) == 0 && !h->head->content_type) {
			h->head->content_type = value;
		} else if (strcasecmp(key, HTTP_HEADER_REQUEST_ID) == 0 && !h->head->request_id &&
			   value) {
			h->head->request_id = value;
			h->head->request_id_len = value_size;
		}
		break;
	case 13:
		if (strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION) == 0 && !h->head->authorization)
			h->head->authorization = value;
		break;
	case 14:
		if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) != 0)
			break;
		if (h->head->content_length &&
		    !same_value(h->head->content_length, value ? value : "", value ? value_size : 0)) {
			fail(h, API_INVALID_REQUEST, "header %s: given twice with different values",
			     MHD_HTTP_HEADER_CONTENT_LENGTH);
			return -1;
		}
		h->head->content_length = value ? value : "";
		break;
	case 16:
		if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_ENCODING) == 0 &&
		    !value_is(value, value_size, "identity")) {
			fail(h, API_UNSUPPORTED_MEDIA_TYPE,
			     "header %s: bodies are accepted without content coding",
			     MHD_HTTP_HEADER_CONTENT_ENCODING);
			return -1;
		}
		break;
	case 17:
		if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) != 0)
			break;
		if (h->head->transfer_encoding) {
			/* two lines are one list: "chunked, chunked" */
			fail(h, API_INVALID_REQUEST, "header %s: given more than once",
			     MHD_HTTP_HEADER_TRANSFER_ENCODING);
			return -1;
		}
		h->head->transfer_encoding = value ? value : "";
		/* the value as sent: libmicrohttpd frames a body as chunked
		 * only when it reads exactly "chunked", so "chunked " must not
		 * pass here (its body would be read as the next request) */
		if (!value_is(value, value ? strlen(value) : 0, "chunked")) {
			/* RFC 9112 6.3: the body's length cannot be determined */
			fail(h, API_INVALID_REQUEST, "header %s: only chunked is accepted",
			     MHD_HTTP_HEADER_TRANSFER_ENCODING);
			h->close_now = 1;
			return -1;
		}
		break;
	default:
		break;
	}
	return 0;
}

enum api_err http_scan_end(struct http_head_scan *h, int http11, int *close_now)
{
	const struct http_head *hd = h->head;

	if (h->hosts == 0 && http11)
		fail(h, API_INVALID_REQUEST, "header %s: required in HTTP/1.1", MHD_HTTP_HEADER_HOST);
	/* RFC 9112 6.1: both lengths, or chunked in HTTP/1.0, is a framing
	 * a proxy in front may read otherwise */
	if (hd->transfer_encoding && hd->content_length)
		fail(h, API_INVALID_REQUEST, "header %s: not together with Content-Length",
		     MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (hd->transfer_encoding && !http11)
		fail(h, API_INVALID_REQUEST, "header %s: not in HTTP/1.0",
		     MHD_HTTP_HEADER_TRANSFER_ENCODING);
	/* a refused head ends its connection: once a header is refused the
	 * ones after it are not read, so where this request ends (and the
	 * next begins) is not known */
	*close_now = h->close_now || h->err != API_OK;
	return h->err;
}

/* libmicrohttpd's iterator over the headers: stop at the first refusal. */
static enum MHD_Result scan_mhd_header(void *cls, enum MHD_ValueKind kind, const char *key,
				       size_t key_size, const char *value, size_t value_size)
{
	return http_scan_header(cls, key, key_size, value, value_size) ? MHD_NO : MHD_YES;
}

/* HTTP/1.1 .. 1.9: served as 1.1 (libmicrohttpd takes a later 1.x so, and
 * its rules hold for it: Host required, chunked allowed) */
static int http11(const char *v)
{
	return v && strncmp(v, "HTTP/1.", 7) == 0 && v[7] >= '1' && v[7] <= '9' && v[8] == '\0';
}

enum api_err http_check_head(struct MHD_Connection *c, const char *version,
			     struct http_head *head, char *msg, size_t msglen, int *close_now)
{
	struct http_head_scan h;

	http_scan_init(&h, head, msg, msglen);
	MHD_get_connection_values_n(c, MHD_HEADER_KIND, scan_mhd_header, &h);
	return http_scan_end(&h, http11(version), close_now);
}

const char *http_origin_form(const char *target, size_t len)
{
	size_t i;

	if (len == 0 || (target[0] != 'h' && target[0] != 'H'))
		return target;	/* the origin form, "/...", every usual request */
	if (len >= 7 && strncasecmp(target, "http://", 7) == 0)
		i = 7;
	else if (len >= 8 && strncasecmp(target, "https://", 8) == 0)
		i = 8;
	else
		return target;
	while (i < len && target[i] != '/' && target[i] != '?')
		i++;
	return target + i;
}
