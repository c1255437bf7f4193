/* http_parse.c - HTTP/1.x request heads, query strings and chunked bodies
 * (see http_parse.h). */
#include "http_parse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hex.h"

size_t http_head_end(const char *buf, size_t len, size_t *scan)
{
	size_t ls = *scan;
	const char *nl;

	while (ls < len && (nl = memchr(buf + ls, '\n', len - ls))) {
		size_t j = (size_t)(nl - buf);

		/* an empty line (LF or CR LF) after the request line ends the head */
		if (ls > 0 && (j == ls || (j == ls + 1 && buf[ls] == '\r')))
			return j + 1;
		ls = j + 1;
	}
	*scan = ls;
	return 0;
}

int http_parse_status(enum http_parse_result r)
{
	switch (r) {
	case HTTP_PARSE_TOO_LARGE:
		return 431;
	case HTTP_PARSE_VERSION:
		return 505;
	default:
		return 400;
	}
}

static enum http_parse_result bad(char *msg, size_t msglen, enum http_parse_result r,
				  const char *why)
{
	snprintf(msg, msglen, "%s", why);
	return r;
}

/* "HTTP/1.0" -> 0, "HTTP/1.1" .. "HTTP/1.9" -> 1 (a later 1.x is served as
 * 1.1, the highest this server conforms to: RFC 9110 6.2, as libmicrohttpd
 * does); -1 for another HTTP/d.d, -2 for anything else. */
static int parse_version(const char *v, size_t n)
{
	if (n != 8 || memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' || v[5] < '0' || v[5] > '9' ||
	    v[7] < '0' || v[7] > '9')
		return -2;
	if (v[5] != '1')
		return -1;
	return v[7] == '0' ? 0 : 1;
}

/* The request line buf[0..n) (no line end). */
static enum http_parse_result parse_request_line(char *buf, size_t n, struct http_parsed *p,
						 char *msg, size_t msglen)
{
	char *sp1, *sp2;
	size_t i, j;
	int minor;

	/* the usual line, in one pass: a token, a space, a target of visible
	 * bytes, a space (buf[n] is CR or LF, which ends both loops); anything
	 * else takes the checks below, which say what is wrong */
	for (i = 0; http_is_tchar((unsigned char)buf[i]); i++)
		;
	for (j = i + 1; i > 0 && buf[i] == ' ' && (unsigned char)buf[j] > 0x20 && buf[j] != 0x7f; j++)
		;
	if (i > 0 && buf[i] == ' ' && j > i + 1 && buf[j] == ' ') {
		sp1 = buf + i;
		sp2 = buf + j;
		goto version;
	}
	sp1 = memchr(buf, ' ', n);
	if (!sp1 || sp1 == buf)
		return bad(msg, msglen, HTTP_PARSE_BAD, "request line: no method");
	for (i = 0; buf + i < sp1; i++)
		if (!http_is_tchar((unsigned char)buf[i]))
			return bad(msg, msglen, HTTP_PARSE_BAD, "request line: the method is not a token");
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - buf));
	if (!sp2 || sp2 == sp1 + 1)
		return bad(msg, msglen, HTTP_PARSE_BAD, "request line: want METHOD TARGET HTTP/1.x");
	for (i = (size_t)(sp1 + 1 - buf); buf + i < sp2; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch < 0x21 || ch == 0x7f)
			return bad(msg, msglen, HTTP_PARSE_BAD, "request line: control byte in the target");
	}
version:
	minor = parse_version(sp2 + 1, n - (size_t)(sp2 + 1 - buf));
	if (minor == -1)
		return bad(msg, msglen, HTTP_PARSE_VERSION, "only HTTP/1.0 and HTTP/1.1 are served");
	if (minor < 0)
		return bad(msg, msglen, HTTP_PARSE_BAD, "request line: bad HTTP version");
	*sp1 = '\0';
	*sp2 = '\0';
	p->method = buf;
	p->target = sp1 + 1;
	p->target_len = (size_t)(sp2 - sp1 - 1);
	p->minor = minor;
	return HTTP_PARSE_OK;
}

/* 1 when the comma-separated list v holds token tok (any case). */
static int has_token(const char *v, const char *tok)
{
	size_t n = strlen(tok);

	while (*v) {
		size_t len;

		while (*v == ' ' || *v == '\t' || *v == ',')
			v++;
		len = strcspn(v, ", \t");
		if (len == n && strncasecmp(v, tok, n) == 0)
			return 1;
		v += len;
	}
	return 0;
}

/* What the engine itself needs from a header (the checks see it too). */
static int note_header(struct http_parsed *p, const char *name, size_t nlen, const char *value,
		       char *msg, size_t msglen)
{
	const char *d;

	if (nlen == 10 && strcasecmp(name, "connection") == 0) {
		p->conn_close |= has_token(value, "close");
		p->conn_keep_alive |= has_token(value, "keep-alive");
	} else if (nlen == 6 && strcasecmp(name, "expect") == 0) {
		p->expect_continue |= strcasecmp(value, "100-continue") == 0;
	} else if (nlen == 14 && strcasecmp(name, "content-length") == 0) {
		/* digits only, as libmicrohttpd; an overflow reads as "too large" later */
		for (d = value; *d >= '0' && *d <= '9'; d++)
			;
		if (d == value || *d) {
			snprintf(msg, msglen, "header Content-Length: not a decimal number");
			return -1;
		}
	}
	return 0;
}

/* One header line buf[0..n) (no line end). */
static enum http_parse_result parse_header(char *buf, size_t n, struct http_parsed *p,
					   struct http_head_scan *scan, char *msg, size_t msglen)
{
	char *colon, *v, *end;
	size_t i;
	int token;

	/* the usual line: a token, then the colon (buf[n] is CR or LF, not a
	 * token byte); the name is then known good */
	for (i = 0; http_is_tchar((unsigned char)buf[i]); i++)
		;
	token = i > 0 && buf[i] == ':';
	if (token) {
		colon = buf + i;
		if (memchr(colon, '\r', n - i))
			return bad(msg, msglen, HTTP_PARSE_BAD, "header: CR inside a line");
	} else {
		if (buf[0] == ' ' || buf[0] == '\t')
			return bad(msg, msglen, HTTP_PARSE_BAD, "header: obsolete line folding");
		if (memchr(buf, '\r', n))
			return bad(msg, msglen, HTTP_PARSE_BAD, "header: CR inside a line");
		colon = memchr(buf, ':', n);
		if (!colon)
			return bad(msg, msglen, HTTP_PARSE_BAD, "header: a line without a colon");
	}
	end = buf + n;
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*colon = '\0';
	*end = '\0';
	/* after a refusal the rest is still parsed (Connection), not checked */
	if (scan->err == API_OK && token)
		http_scan_header_named(scan, buf, (size_t)(colon - buf), v, (size_t)(end - v));
	else if (scan->err == API_OK)
		http_scan_header(scan, buf, (size_t)(colon - buf), v, (size_t)(end - v));
	if (note_header(p, buf, (size_t)(colon - buf), v, msg, msglen))
		return HTTP_PARSE_BAD;
	return HTTP_PARSE_OK;
}

enum http_parse_result http_parse_head(char *buf, size_t len, struct http_parsed *p, char *msg,
				       size_t msglen)
{
	size_t scanned = 0, end;

	end = http_head_end(buf, len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX, &scanned);
	if (!end) {
		memset(p, 0, sizeof(*p));
		return len >= HTTP_HEAD_MAX ?
		       bad(msg, msglen, HTTP_PARSE_TOO_LARGE, "request header block over 16 KiB") :
		       HTTP_PARSE_INCOMPLETE;
	}
	return http_parse_head_at(buf, end, p, msg, msglen);
}

enum http_parse_result http_parse_head_at(char *buf, size_t end, struct http_parsed *p, char *msg,
					  size_t msglen)
{
	struct http_head_scan scan;
	enum http_parse_result r;
	size_t ls, nheaders = 0;
	char *nl;

	memset(p, 0, sizeof(*p));
	p->head_len = end;
	http_scan_init(&scan, &p->head, msg, msglen);
	for (ls = 0; ls < end; ls = (size_t)(nl - buf) + 1) {
		size_t n;

		nl = memchr(buf + ls, '\n', end - ls);
		n = (size_t)(nl - buf) - ls;
		if (n && buf[ls + n - 1] == '\r')
			n--;
		if (n == 0) {
			if (ls == 0)	/* the engine skips empty lines before a request */
				return bad(msg, msglen, HTTP_PARSE_BAD, "request line: empty");
			break;	/* the empty line */
		}
		if (ls == 0) {
			if (memchr(buf, '\r', n) || memchr(buf, '\0', n))
				return bad(msg, msglen, HTTP_PARSE_BAD, "request line: control byte");
			r = parse_request_line(buf, n, p, msg, msglen);
		} else if (++nheaders > HTTP_HEADERS_MAX) {
			return bad(msg, msglen, HTTP_PARSE_TOO_LARGE, "more than 100 header lines");
		} else {
			r = parse_header(buf + ls, n, p, &scan, msg, msglen);
		}
		if (r != HTTP_PARSE_OK)
			return r;
	}
	p->verdict = http_scan_end(&scan, p->minor == 1, &p->close_now);
	p->chunked = p->verdict == API_OK && p->head.transfer_encoding != NULL;
	return HTTP_PARSE_OK;
}

size_t http_unescape(char *s)
{
	char *w = s;
	const char *r = s;

	while (*r) {
		int hi, lo;

		if (*r == '%' && (hi = hex_value(r[1])) >= 0 && (lo = hex_value(r[2])) >= 0) {
			*w++ = (char)(hi * 16 + lo);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

/* A query-string part: '+' is a space, then %XX (as libmicrohttpd). */
static void unescape_query(char *s)
{
	char *p;

	for (p = s; (p = strchr(p, '+')); p++)
		*p = ' ';
	http_unescape(s);
}

size_t http_parse_query(char *query, struct api_arg *args, size_t max)
{
	size_t n = 0;
	char *q = query;

	while (q && *q && n < max) {
		char *amp = strchr(q, '&'), *eq;

		if (amp)
			*amp = '\0';
		eq = strchr(q, '=');
		if (eq)
			*eq = '\0';
		if (*q || eq) {
			unescape_query(q);
			args[n].key = q;
			args[n].value = eq ? eq + 1 : "";
			if (eq)
				unescape_query(eq + 1);
			n++;
		}
		q = amp ? amp + 1 : NULL;
	}
	args[n].key = NULL;
	args[n].value = NULL;
	/* more after the max-th (empty pieces, "a&&b", do not count) */
	while (q && *q) {
		if (*q != '&')
			return max + 1;
		q++;
	}
	return n;
}

/* The chunk-size line is over: a chunk's data, or the trailers after the last. */
static void size_done(struct http_chunked *c)
{
	c->state = c->left ? CH_DATA : CH_TRAILER_START;
	c->size = c->left;
	c->fresh = 1;
	c->digits = 0;
	c->line = 0;
}

/* A control byte other than HTAB (RFC 9110 5.5: not in a field value or a
 * chunk extension). */
static int ctl(unsigned char ch)
{
	return (ch < 0x20 && ch != '\t') || ch == 0x7f;
}

/* One byte of anything but chunk data. */
static void chunked_byte(struct http_chunked *c, unsigned char ch)
{
	int h;

	switch (c->state) {
	case CH_SIZE:
		h = hex_value(ch);
		if (h >= 0) {
			/* 16 hex digits hold any 64-bit size; more is refused */
			if (++c->digits > 16) {
				c->state = CH_ERROR;
				return;
			}
			c->left = c->left * 16 + (uint64_t)h;
		} else if (!c->digits) {
			c->state = CH_ERROR;
		} else if (ch == ';') {
			c->state = CH_EXT;
		} else if (ch == ' ' || ch == '\t') {
			c->state = CH_SIZE_WS;
		} else if (ch == '\r') {
			c->state = CH_SIZE_LF;
		} else if (ch == '\n') {
			size_done(c);
		} else {
			c->state = CH_ERROR;
		}
		return;
	case CH_SIZE_WS:
		/* RFC 9112 7.1.1: after the size, only whitespace before ';' */
		if (++c->line > HTTP_CHUNK_LINE_MAX)
			c->state = CH_ERROR;
		else if (ch == ';')
			c->state = CH_EXT;
		else if (ch == '\r')
			c->state = CH_SIZE_LF;
		else if (ch == '\n')
			size_done(c);
		else if (ch != ' ' && ch != '\t')
			c->state = CH_ERROR;
		return;
	case CH_EXT:
		if (ch == '\r')
			c->state = CH_SIZE_LF;
		else if (ch == '\n')
			size_done(c);
		else if (++c->line > HTTP_CHUNK_LINE_MAX || ctl(ch))
			c->state = CH_ERROR;
		return;
	case CH_SIZE_LF:
		if (ch == '\n')
			size_done(c);
		else
			c->state = CH_ERROR;
		return;
	case CH_DATA_CR:
		c->state = ch == '\r' ? CH_DATA_LF : ch == '\n' ? CH_SIZE : CH_ERROR;
		return;
	case CH_DATA_LF:
		c->state = ch == '\n' ? CH_SIZE : CH_ERROR;
		return;
	case CH_TRAILER_START:
		/* a trailer line is a header line: a token name (no fold, no
		 * empty name), a colon, a value without control bytes */
		c->digits = 0;
		c->state = ch == '\r' ? CH_END_LF : ch == '\n' ? CH_DONE :
			   http_is_tchar(ch) ? CH_TRAILER : CH_ERROR;
		if (c->state == CH_TRAILER && ++c->trailer > HTTP_TRAILER_MAX)
			c->state = CH_ERROR;
		return;
	case CH_TRAILER:
		if (ch == '\r' || ch == '\n')
			c->state = !c->digits ? CH_ERROR : ch == '\r' ? CH_TRAILER_LF : CH_TRAILER_START;
		else if (++c->trailer > HTTP_TRAILER_MAX)
			c->state = CH_ERROR;
		else if (!c->digits && ch == ':')
			c->digits = 1;	/* the name is over */
		else if (!c->digits ? !http_is_tchar(ch) : ctl(ch))
			c->state = CH_ERROR;
		return;
	case CH_TRAILER_LF:
		c->state = ch == '\n' ? CH_TRAILER_START : CH_ERROR;
		return;
	case CH_END_LF:
		c->state = ch == '\n' ? CH_DONE : CH_ERROR;
		return;
	default:
		return;
	}
}

size_t http_chunked_feed(struct http_chunked *c, const char *in, size_t len, const char **data,
			 size_t *dlen)
{
	size_t i = 0;

	*data = NULL;
	*dlen = 0;
	while (i < len && c->state != CH_DONE && c->state != CH_ERROR) {
		if (c->state == CH_DATA) {
			size_t n = len - i < c->left ? len - i : (size_t)c->left;

			*data = in + i;
			*dlen = n;
			c->left -= n;
			if (!c->left)
				c->state = CH_DATA_CR;
			return i + n;
		}
		chunked_byte(c, (unsigned char)in[i++]);
	}
	return i;
}
