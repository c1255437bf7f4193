/* fuzz_http_parse.c - libFuzzer target for the epoll engine's request parser
 * (server/http_parse.c): request heads, chunked bodies and query strings
 * from the network. Seeds in seeds/http_parse/.
 * FUZZ_EXTRA: server/http_parse.c server/http_check.c -lmicrohttpd
 *
 * Checks besides the sanitizers: a parsed head points into its buffer and
 * ends where http_head_end's incremental scan says; a chunked body decodes
 * to the same bytes and state whether fed whole or one byte at a time; a
 * query string yields at most the asked number of arguments.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static void check_head(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), msg[128];
	struct http_parsed p;
	enum http_parse_result r;
	size_t scan = 0, end = 0, i;

	if (!buf)
		return;
	memcpy(buf, data, size);
	buf[size] = '\0';
	/* the incremental scan, one byte more each time, as bytes arrive */
	for (i = 1; i <= size && i <= HTTP_HEAD_MAX && !end; i++)
		end = http_head_end(buf, i, &scan);
	r = http_parse_head(buf, size, &p, msg, sizeof(msg));
	if (r == HTTP_PARSE_OK) {
		CHECK(p.head_len == end && p.head_len <= size);
		CHECK(p.method >= buf && p.method < buf + p.head_len);
		CHECK(p.target >= buf && p.target < buf + p.head_len);
		CHECK(p.minor == 0 || p.minor == 1);
	} else if (r == HTTP_PARSE_INCOMPLETE) {
		CHECK(end == 0 && size < HTTP_HEAD_MAX);
	} else {
		int st = http_parse_status(r);

		CHECK(st >= 400 && st < 600);
	}
	free(buf);
}

/* Decode in[0..len) in steps of at most step bytes: body bytes to out. */
static enum http_chunked_state decode(const char *in, size_t len, size_t step, char *out,
				      size_t *olen, size_t *used)
{
	struct http_chunked c;
	size_t off = 0;

	memset(&c, 0, sizeof(c));
	*olen = 0;
	while (off < len && c.state != CH_DONE && c.state != CH_ERROR) {
		size_t n = len - off < step ? len - off : step, k = 0;

		/* feed this piece until it is used up or the body ends */
		while (k < n && c.state != CH_DONE && c.state != CH_ERROR) {
			const char *d;
			size_t dlen, took = http_chunked_feed(&c, in + off + k, n - k, &d, &dlen);

			CHECK(took <= n - k);
			CHECK(took > 0 || dlen > 0 || c.state == CH_DONE || c.state == CH_ERROR);
			if (dlen) {
				CHECK(d >= in + off + k && d + dlen <= in + off + k + took);
				memcpy(out + *olen, d, dlen);
				*olen += dlen;
			}
			k += took;
			if (!took && !dlen)
				break;
		}
		off += k;
		if (k < n)
			break;
	}
	*used = off;
	return c.state;
}

static void check_chunked(const uint8_t *data, size_t size)
{
	char *a = malloc(size + 1), *b = malloc(size + 1);
	size_t alen, blen, aused, bused;
	enum http_chunked_state sa, sb;

	if (a && b) {
		sa = decode((const char *)data, size, size ? size : 1, a, &alen, &aused);
		sb = decode((const char *)data, size, 1, b, &blen, &bused);
		CHECK(sa == sb && alen == blen && aused == bused);
		CHECK(memcmp(a, b, alen) == 0);
		CHECK(alen <= size);
	}
	free(a);
	free(b);
}

static void check_query(const uint8_t *data, size_t size)
{
	char *q = malloc(size + 1);
	struct api_arg args[5];
	size_t n, i;

	if (!q)
		return;
	memcpy(q, data, size);
	q[size] = '\0';
	/* 5: more than 4 were given, args holding the first 4 */
	n = http_parse_query(q, args, 4);
	CHECK(n <= 5);
	if (n == 5)
		n = 4;
	for (i = 0; i < n; i++)
		CHECK(args[i].key && args[i].value);
	CHECK(!args[n].key);
	free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	check_head(data, size);
	check_chunked(data, size);
	check_query(data, size);
	return 0;
}
