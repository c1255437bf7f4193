/* test_http_parse.c - Check suite for server/http_parse.c: request lines,
 * headers and their limits, the query string, and chunked bodies decoded
 * the same whatever the split of their bytes. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"

/* Parse a copy of text (the parser writes into its buffer). */
static enum http_parse_result parse(const char *text, struct http_parsed *p, char *buf,
				    size_t cap, char *msg)
{
	size_t n = strlen(text);

	ck_assert_uint_lt(n, cap);
	memcpy(buf, text, n + 1);
	return http_parse_head(buf, n, p, msg, 128);
}

/* Decimal digits as strtoull reads them, to 2^64 - 1 and past it. */
START_TEST(test_decimal_u64)
{
	unsigned seed = 99;
	int i;

	ck_assert_uint_eq(http_decimal_u64(""), 0);
	ck_assert_uint_eq(http_decimal_u64("18446744073709551615"), UINT64_MAX);
	ck_assert_uint_eq(http_decimal_u64("18446744073709551616"), UINT64_MAX);
	ck_assert_uint_eq(http_decimal_u64("18446744073709551614"), UINT64_MAX - 1);
	for (i = 0; i < 20000; i++) {
		char s[40];
		int n = 1 + rand_r(&seed) % 30, k;

		for (k = 0; k < n; k++)
			s[k] = (char)('0' + (k < 19 || rand_r(&seed) % 3 ? rand_r(&seed) % 10 : 9));
		s[n] = '\0';
		ck_assert_msg(http_decimal_u64(s) == strtoull(s, NULL, 10), "%s", s);
	}
}
END_TEST

/* The token table against RFC 9110's definition, for every byte. */
START_TEST(test_tchar_table)
{
	static const char specials[] = "!#$%&'*+-.^_`|~";
	int ch;

	for (ch = 0; ch < 256; ch++) {
		int want = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			   (ch >= '0' && ch <= '9') || (ch && memchr(specials, ch, sizeof(specials) - 1));

		ck_assert_msg(http_is_tchar((unsigned char)ch) == want, "byte 0x%02x", ch);
	}
}
END_TEST

START_TEST(test_request_line)
{
	char buf[512], msg[128];
	struct http_parsed p;

	ck_assert_int_eq(parse("GET /v1/meshes?a=1 HTTP/1.1\r\nHost: x\r\n\r\n", &p, buf,
			       sizeof(buf), msg), HTTP_PARSE_OK);
	ck_assert_str_eq(p.method, "GET");
	ck_assert_str_eq(p.target, "/v1/meshes?a=1");
	ck_assert_int_eq(p.minor, 1);
	ck_assert_int_eq(p.verdict, API_OK);
	ck_assert_uint_eq(p.head_len, strlen("GET /v1/meshes?a=1 HTTP/1.1\r\nHost: x\r\n\r\n"));

	/* HTTP/1.0 needs no Host; LF-only line ends are accepted */
	ck_assert_int_eq(parse("HEAD /healthz HTTP/1.0\n\n", &p, buf, sizeof(buf), msg),
			 HTTP_PARSE_OK);
	ck_assert_int_eq(p.minor, 0);
	ck_assert_str_eq(p.method, "HEAD");
	ck_assert_int_eq(p.verdict, API_OK);

	/* a later HTTP/1.x is served as 1.1 (RFC 9110 6.2), Host and all */
	ck_assert_int_eq(parse("GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n", &p, buf, sizeof(buf), msg),
			 HTTP_PARSE_OK);
	ck_assert_int_eq(p.minor, 1);
	ck_assert_int_eq(p.verdict, API_OK);
	ck_assert_int_eq(parse("GET /healthz HTTP/1.9\r\n\r\n", &p, buf, sizeof(buf), msg),
			 HTTP_PARSE_OK);
	ck_assert_int_ne(p.verdict, API_OK);	/* no Host, as for 1.1 */
}
END_TEST

static const struct {
	const char *head;
	enum http_parse_result want;
} bad_heads[] = {
	{ "GET /healthz\r\n\r\n", HTTP_PARSE_BAD },			/* HTTP/0.9 form */
	{ "\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },	/* empty first line (fuzz) */
	{ " /healthz HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },	/* no method */
	{ "GE\x01T /healthz HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET  /healthz  HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /a\x7f HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", HTTP_PARSE_VERSION },
	{ "GET /healthz HTTP/3.1\r\nHost: x\r\n\r\n", HTTP_PARSE_VERSION },
	{ "GET /healthz HTTP/0.9\r\nHost: x\r\n\r\n", HTTP_PARSE_VERSION },
	{ "GET /healthz HTTP/1.10\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /healthz HTTP/1.x\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /healthz http/1.1\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /healthz FOO/1.1\r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /healthz HTTP/1.1 \r\nHost: x\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /healthz HTTP/1.1\r\nNoColonHere\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: b\r\n folded\r\n\r\n", HTTP_PARSE_BAD },
	{ "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", HTTP_PARSE_BAD },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", HTTP_PARSE_BAD },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", HTTP_PARSE_BAD },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n", HTTP_PARSE_BAD },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n", HTTP_PARSE_BAD },
};

START_TEST(test_bad_heads)
{
	char buf[512], msg[128];
	struct http_parsed p;

	msg[0] = '\0';
	ck_assert_msg(parse(bad_heads[_i].head, &p, buf, sizeof(buf), msg) == bad_heads[_i].want,
		      "case %d: %s", _i, msg);
	ck_assert_msg(msg[0] != '\0', "case %d says why", _i);
	ck_assert_int_eq(http_parse_status(bad_heads[_i].want),
			 bad_heads[_i].want == HTTP_PARSE_VERSION ? 505 : 400);
}
END_TEST

/* Heads the syntax accepts and the checks (http_check.c) refuse: each
 * closes its connection (close_now), since where its body ends is not
 * known once a header is refused (the framing headers after it are not
 * read: "X-A : b" before "Content-Length" once let the body run as the
 * next request). */
static const struct {
	const char *head;
	enum api_err want;
	const char *says;
} refused_heads[] = {
	{ "GET /healthz HTTP/1.1\r\n\r\n", API_INVALID_REQUEST, "Host: required" },
	{ "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n", API_INVALID_REQUEST, "not a token" },
	{ "GET /healthz HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n", API_INVALID_REQUEST, "empty name" },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
	  API_INVALID_REQUEST, "different values" },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", API_INVALID_REQUEST,
	  "only chunked" },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n\r\n",
	  API_UNSUPPORTED_MEDIA_TYPE, "content coding" },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\n",
	  API_UNSUPPORTED_MEDIA_TYPE, "content coding" },
	/* RFC 9112 6.1: both lengths; chunked twice (as "chunked, chunked");
	 * chunked in HTTP/1.0 */
	{ "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	  API_INVALID_REQUEST, "not together with Content-Length" },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
	  API_INVALID_REQUEST, "not together with Content-Length" },
	{ "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	  API_INVALID_REQUEST, "Transfer-Encoding: given more than once" },
	{ "POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", API_INVALID_REQUEST,
	  "not in HTTP/1.0" },
	/* RFC 9112 3.2: two Hosts, or one that is not host[:port] */
	{ "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", API_INVALID_REQUEST,
	  "Host: given more than once" },
	{ "GET /healthz HTTP/1.1\r\nHost: a b/c@\r\n\r\n", API_INVALID_REQUEST, "not a host" },
	{ "GET /healthz HTTP/1.0\r\nHost: x/y\r\n\r\n", API_INVALID_REQUEST, "not a host" },
};

START_TEST(test_refused_heads)
{
	char buf[512], msg[128];
	struct http_parsed p;

	ck_assert_int_eq(parse(refused_heads[_i].head, &p, buf, sizeof(buf), msg), HTTP_PARSE_OK);
	ck_assert_int_eq(p.verdict, refused_heads[_i].want);
	ck_assert_int_eq(p.close_now, 1);
	ck_assert_int_eq(p.chunked, 0);
	ck_assert_msg(strstr(msg, refused_heads[_i].says), "case %d says %s", _i, msg);
}
END_TEST

/* Hosts as clients send them: names, ports, IPv4 and IPv6 literals, empty. */
START_TEST(test_hosts_taken)
{
	static const char *const hosts[] = { "x", "localhost:8080", "10.0.0.1:1", "[::1]:8080",
					     "api.example.com", "a-b_c~d.e", "" };
	char head[128], buf[256], msg[128];
	struct http_parsed p;
	size_t i;

	for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		snprintf(head, sizeof(head), "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", hosts[i]);
		ck_assert_int_eq(parse(head, &p, buf, sizeof(buf), msg), HTTP_PARSE_OK);
		ck_assert_msg(p.verdict == API_OK && !p.close_now, "Host: %s refused: %s", hosts[i], msg);
	}
}
END_TEST

/* RFC 9112 3.2.2: a server takes the absolute form; the origin form is as is. */
START_TEST(test_origin_form)
{
	static const struct {
		const char *target, *path;
	} t[] = {
		{ "/v1/meshes?x=1", "/v1/meshes?x=1" },
		{ "http://example.com/v1/meshes", "/v1/meshes" },
		{ "HTTPS://h:8443/healthz?a", "/healthz?a" },
		{ "http://h?q", "?q" },
		{ "http://h", "" },
		{ "http:/x", "http:/x" },
		{ "ftp://h/x", "ftp://h/x" },
		{ "*", "*" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_str_eq(http_origin_form(t[i].target, strlen(t[i].target)), t[i].path);
}
END_TEST

START_TEST(test_nul_in_value)
{
	static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n";
	char buf[sizeof(head)], msg[128];
	struct http_parsed p;

	memcpy(buf, head, sizeof(head));
	ck_assert_int_eq(http_parse_head(buf, sizeof(head) - 1, &p, msg, sizeof(msg)), HTTP_PARSE_OK);
	ck_assert_int_eq(p.verdict, API_INVALID_REQUEST);
	ck_assert_int_eq(p.close_now, 1);
}
END_TEST

/* libmicrohttpd hands a value over with the blanks that end it (the epoll
 * parser strips them): they are no part of it (RFC 9112 5), so the checks
 * take "localhost " as "localhost" under both engines; only "chunked " stays
 * refused, as libmicrohttpd would not read its body as chunked. */
START_TEST(test_scan_trailing_blanks)
{
	static const struct {
		const char *key, *value, *key2, *value2;
		enum api_err want;
	} t[] = {
		{ "Transfer-Encoding", "chunked", NULL, NULL, API_OK },
		{ "Transfer-Encoding", "chunked ", NULL, NULL, API_INVALID_REQUEST },
		{ "Content-Encoding", "identity ", NULL, NULL, API_OK },
		{ "Content-Length", "44", "Content-Length", "44 ", API_OK },
		{ "Content-Length", "44 ", "Content-Length", "44", API_OK },
		{ "Content-Length", "44 ", "Content-Length", "45 ", API_INVALID_REQUEST },
		{ "Transfer-Encoding", "chunked x", NULL, NULL, API_INVALID_REQUEST },
		{ "Content-Encoding", "gzip ", NULL, NULL, API_UNSUPPORTED_MEDIA_TYPE },
	};
	struct http_head_scan h;
	struct http_head head;
	char msg[128];
	int close_now;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		http_scan_init(&h, &head, msg, sizeof(msg));
		http_scan_header(&h, "Host", 4, "localhost:8080 ", 15);
		http_scan_header(&h, t[i].key, strlen(t[i].key), t[i].value, strlen(t[i].value));
		if (t[i].key2)
			http_scan_header(&h, t[i].key2, strlen(t[i].key2), t[i].value2,
					 strlen(t[i].value2));
		ck_assert_msg(http_scan_end(&h, 1, &close_now) == t[i].want, "%s: %s: %s",
			      t[i].key, t[i].value, msg);
	}
}
END_TEST

START_TEST(test_headers)
{
	char buf[1024], msg[128];
	struct http_parsed p;

	ck_assert_int_eq(parse("PUT /v1/meshes/a HTTP/1.1\r\nhOsT: x\r\n"
			       "content-TYPE:   application/json  \r\n"
			       "Content-Length: 12\r\nContent-Length: 12\r\n"
			       "AUTHORIZATION: Bearer k\r\nConnection: Keep-Alive, Close\r\n"
			       "Expect: 100-Continue\r\nContent-Encoding: identity\r\n\r\nbody",
			       &p, buf, sizeof(buf), msg), HTTP_PARSE_OK);
	ck_assert_int_eq(p.verdict, API_OK);
	ck_assert_str_eq(p.head.content_type, "application/json");
	ck_assert_str_eq(p.head.content_length, "12");
	ck_assert_str_eq(p.head.authorization, "Bearer k");
	ck_assert_ptr_null(p.head.transfer_encoding);
	ck_assert_int_eq(p.conn_close, 1);
	ck_assert_int_eq(p.conn_keep_alive, 1);
	ck_assert_int_eq(p.expect_continue, 1);
	ck_assert_int_eq(p.chunked, 0);
	ck_assert_int_eq(buf[p.head_len], 'b');

	ck_assert_int_eq(parse("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n",
			       &p, buf, sizeof(buf), msg), HTTP_PARSE_OK);
	ck_assert_int_eq(p.verdict, API_OK);
	ck_assert_int_eq(p.chunked, 1);
}
END_TEST

START_TEST(test_limits)
{
	size_t cap = 2 * HTTP_HEAD_MAX, n;
	char *buf = malloc(cap), msg[128];
	struct http_parsed p;
	int i;

	/* a header block over 16 KiB: 431, complete or not */
	n = (size_t)snprintf(buf, cap, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(buf + n, 'a', HTTP_HEAD_MAX);
	n += HTTP_HEAD_MAX;
	ck_assert_int_eq(http_parse_head(buf, n, &p, msg, sizeof(msg)), HTTP_PARSE_TOO_LARGE);
	memcpy(buf + n, "\r\n\r\n", 4);
	ck_assert_int_eq(http_parse_head(buf, n + 4, &p, msg, sizeof(msg)), HTTP_PARSE_TOO_LARGE);
	ck_assert_int_eq(http_parse_status(HTTP_PARSE_TOO_LARGE), 431);
	/* short of it and incomplete: more is awaited */
	ck_assert_int_eq(http_parse_head(buf, 100, &p, msg, sizeof(msg)), HTTP_PARSE_INCOMPLETE);

	/* too many header lines */
	n = (size_t)snprintf(buf, cap, "GET / HTTP/1.1\r\nHost: x\r\n");
	for (i = 0; i < HTTP_HEADERS_MAX; i++)
		n += (size_t)snprintf(buf + n, cap - n, "X-H%d: v\r\n", i);
	n += (size_t)snprintf(buf + n, cap - n, "\r\n");
	ck_assert_int_eq(http_parse_head(buf, n, &p, msg, sizeof(msg)), HTTP_PARSE_TOO_LARGE);
	free(buf);
}
END_TEST

/* http_head_end finds the same end fed one byte at a time as whole. */
START_TEST(test_head_end_bytewise)
{
	static const char head[] = "\r\nPOST /x HTTP/1.1\r\nHost: x\r\nA: b\n\r\nrest";
	size_t whole, scan = 0, i, end = 0;

	whole = http_head_end(head + 2, sizeof(head) - 3, &scan);
	ck_assert_uint_eq(whole, strlen("POST /x HTTP/1.1\r\nHost: x\r\nA: b\n\r\n"));
	scan = 0;
	for (i = 1; i <= sizeof(head) - 3 && !end; i++)
		end = http_head_end(head + 2, i, &scan);
	ck_assert_uint_eq(end, whole);
	ck_assert_uint_eq(i - 1, whole);
}
END_TEST

START_TEST(test_query)
{
	char q[] = "a=1&b=%41%2b+c&flag&=v&%zz=%&&x=%00y";
	struct api_arg args[9];
	size_t n = http_parse_query(q, args, 8);

	ck_assert_uint_eq(n, 6);
	ck_assert_str_eq(args[0].key, "a");
	ck_assert_str_eq(args[0].value, "1");
	ck_assert_str_eq(args[1].value, "A+ c");	/* '+' is a space, %2b a '+' */
	ck_assert_str_eq(args[2].key, "flag");
	ck_assert_str_eq(args[2].value, "");
	ck_assert_str_eq(args[3].key, "");
	ck_assert_str_eq(args[4].key, "%zz");
	ck_assert_str_eq(args[4].value, "%");
	ck_assert_str_eq(args[5].key, "x");
	ck_assert_str_eq(args[5].value, "");	/* %00 ends the value */
	ck_assert_ptr_null(args[6].key);
}
END_TEST

/* More than max parameters: max + 1, never a parameter dropped unseen;
 * exactly max, or max and empty pieces after them: the count. */
START_TEST(test_query_max)
{
	char q[] = "a=1&b=2&c=3&d=4", q2[] = "a=1&b=2", q3[] = "a=1&&b=2&&&", q4[] = "a&b&=";
	struct api_arg args[3];

	ck_assert_uint_eq(http_parse_query(q, args, 2), 3);
	ck_assert_str_eq(args[1].key, "b");
	ck_assert_ptr_null(args[2].key);
	ck_assert_uint_eq(http_parse_query(q2, args, 2), 2);
	ck_assert_uint_eq(http_parse_query(q3, args, 2), 2);
	ck_assert_uint_eq(http_parse_query(q4, args, 2), 3);
}
END_TEST

/* Decode in[0..len) fed in pieces ending at cuts[] (ascending, the last len):
 * the body into out, the state at the end, the bytes consumed. */
static enum http_chunked_state decode(const char *in, size_t len, const size_t *cuts,
				      size_t ncuts, char *out, size_t *outlen, size_t *used)
{
	struct http_chunked c;
	size_t from = 0, k;

	memset(&c, 0, sizeof(c));
	*outlen = 0;
	for (k = 0; k < ncuts && c.state != CH_DONE && c.state != CH_ERROR; k++) {
		size_t end = cuts[k];

		while (from < end && c.state != CH_DONE && c.state != CH_ERROR) {
			const char *d;
			size_t dl;

			from += http_chunked_feed(&c, in + from, end - from, &d, &dl);
			memcpy(out + *outlen, d ? d : "", dl);
			*outlen += dl;
		}
	}
	*used = from;
	return c.state;
}

static const char chunked_body[] =
	"5;name=value\r\nhello\r\n"
	"1A\r\n abcdefghijklmnopqrstuvwxy\r\n"
	"0000000000000003 ; x\r\n!!!\n"
	"0 \t;last=\"q s\"\r\nTrailer-A: 1\r\nTrailer-B:\t2 x\r\nEmpty:\r\n\r\n"
	"GET /next HTTP/1.1\r\n";
static const char chunked_want[] = "hello abcdefghijklmnopqrstuvwxy!!!";

START_TEST(test_chunked_whole_and_bytewise)
{
	size_t len = strlen(chunked_body), end = len - strlen("GET /next HTTP/1.1\r\n");
	size_t cuts[512], outlen, used, i;
	char out[128];

	cuts[0] = len;
	ck_assert_int_eq(decode(chunked_body, len, cuts, 1, out, &outlen, &used), CH_DONE);
	ck_assert_uint_eq(outlen, strlen(chunked_want));
	ck_assert(memcmp(out, chunked_want, outlen) == 0);
	ck_assert_uint_eq(used, end);

	for (i = 0; i < len; i++)
		cuts[i] = i + 1;
	ck_assert_int_eq(decode(chunked_body, len, cuts, len, out, &outlen, &used), CH_DONE);
	ck_assert_uint_eq(outlen, strlen(chunked_want));
	ck_assert(memcmp(out, chunked_want, outlen) == 0);
	ck_assert_uint_eq(used, end);
}
END_TEST

/* Every split into two, and random splits into many: the same body. */
START_TEST(test_chunked_splits)
{
	size_t len = strlen(chunked_body), cuts[64], outlen, used, i, k, n;
	char out[128];
	unsigned seed = 12345;

	for (i = 1; i < len; i++) {
		cuts[0] = i;
		cuts[1] = len;
		ck_assert_int_eq(decode(chunked_body, len, cuts, 2, out, &outlen, &used), CH_DONE);
		ck_assert(outlen == strlen(chunked_want) && memcmp(out, chunked_want, outlen) == 0);
	}
	for (k = 0; k < 500; k++) {
		size_t at = 0;

		n = 0;
		while (at < len && n < 63) {
			seed = seed * 1103515245u + 12345u;
			at += 1 + (seed >> 16) % 9;
			cuts[n++] = at < len ? at : len;
		}
		cuts[n++] = len;
		ck_assert_int_eq(decode(chunked_body, len, cuts, n, out, &outlen, &used), CH_DONE);
		ck_assert(outlen == strlen(chunked_want) && memcmp(out, chunked_want, outlen) == 0);
		ck_assert_uint_eq(used, len - strlen("GET /next HTTP/1.1\r\n"));
	}
}
END_TEST

static const char *const bad_chunked[] = {
	"zz\r\n{}\r\n0\r\n\r\n",			/* not hex */
	"\r\n",						/* no size */
	";x\r\n",					/* extension without size */
	"fffffffffffffffffff\r\n{}\r\n0\r\n\r\n",	/* over 64 bits */
	"2\r\nabc\r\n0\r\n\r\n",			/* data longer than its size */
	"2\r\nab\rx",					/* CR not followed by LF */
	"5 x\r\nhello\r\n0\r\n\rz",			/* the last CR not followed by LF */
	"0\r\nTrailer: 1\rz",
	/* RFC 9112 7.1: after the size only whitespace, then ';' */
	"27 junk\r\n",
	"5 x\r\nhello\r\n0\r\n\r\n",
	"5;a\x7f\r\nhello\r\n0\r\n\r\n",		/* control bytes in an extension */
	"5;a\x01\r\nhello\r\n0\r\n\r\n",
	/* trailers are header lines */
	"0\r\nno colon\r\n\r\n",
	"0\r\n: empty name\r\n\r\n",
	"0\r\nA: 1\r\n folded\r\n\r\n",
	"0\r\nA: b\x1f" "c\r\n\r\n",
	"0\r\nA b: c\r\n\r\n",
};

START_TEST(test_chunked_malformed)
{
	const char *in = bad_chunked[_i];
	size_t len = strlen(in), cuts[1] = { len }, outlen, used;
	char out[64];
	enum http_chunked_state st = decode(in, len, cuts, 1, out, &outlen, &used);

	ck_assert_msg(st == CH_ERROR, "case %d: state %d", _i, (int)st);
}
END_TEST

START_TEST(test_chunked_bounds)
{
	size_t n = HTTP_CHUNK_LINE_MAX + 16, cuts[1], outlen, used;
	char *in = malloc(HTTP_TRAILER_MAX + 64), out[16];

	/* an endless chunk extension */
	memcpy(in, "1;", 2);
	memset(in + 2, 'e', n - 2);
	cuts[0] = n;
	ck_assert_int_eq(decode(in, n, cuts, 1, out, &outlen, &used), CH_ERROR);
	/* endless trailers */
	memcpy(in, "0\r\n", 3);
	memset(in + 3, 't', HTTP_TRAILER_MAX + 8);
	cuts[0] = HTTP_TRAILER_MAX + 11;
	ck_assert_int_eq(decode(in, cuts[0], cuts, 1, out, &outlen, &used), CH_ERROR);
	free(in);
}
END_TEST

static Suite *http_parse_suite(void)
{
	Suite *s = suite_create("http_parse");
	TCase *tc = tcase_create("head");

	tcase_add_test(tc, test_tchar_table);
	tcase_add_test(tc, test_decimal_u64);
	tcase_add_test(tc, test_request_line);
	tcase_add_loop_test(tc, test_bad_heads, 0, (int)(sizeof(bad_heads) / sizeof(bad_heads[0])));
	tcase_add_loop_test(tc, test_refused_heads, 0,
			    (int)(sizeof(refused_heads) / sizeof(refused_heads[0])));
	tcase_add_test(tc, test_hosts_taken);
	tcase_add_test(tc, test_origin_form);
	tcase_add_test(tc, test_nul_in_value);
	tcase_add_test(tc, test_scan_trailing_blanks);
	tcase_add_test(tc, test_headers);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_head_end_bytewise);
	suite_add_tcase(s, tc);

	tc = tcase_create("query");
	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_query_max);
	suite_add_tcase(s, tc);

	tc = tcase_create("chunked");
	tcase_add_test(tc, test_chunked_whole_and_bytewise);
	tcase_add_test(tc, test_chunked_splits);
	tcase_add_loop_test(tc, test_chunked_malformed, 0,
			    (int)(sizeof(bad_chunked) / sizeof(bad_chunked[0])));
	tcase_add_test(tc, test_chunked_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(http_parse_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
