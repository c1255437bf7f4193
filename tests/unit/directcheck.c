/* directcheck.c - the scaffolding the tree-free decoders' suites share
 * (directcheck.h). */
#include "directcheck.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "encode.h"
#include "errors.h"
#include "shotgen.h"

const char dc_cube_json[] =
	"{\"vertices\":[[-1,-1,-1],[1,-1,-1],[1,1,-1],[-1,1,-1],[-1,-1,1],[1,-1,1],[1,1,1],[-1,1,1]],"
	"\"triangles\":[[0,2,1],[0,3,2],[4,5,6],[4,6,7],[0,1,5],[0,5,4],[2,3,7],[2,7,6],"
	"[1,2,6],[1,6,5],[0,4,7],[0,7,3]]}";

char *dc_exact_copy(const char *text, size_t len)
{
	char *body = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(body);
	memcpy(body, text, len);
	return body;
}

/* The tokens every suite inserts, before its own. */
static const char *const common_tokens[] = {
	"{", "}", "[", "]", ",", ":", "\"", "\\", " ", "0", "9", ".", "e", "-", "+", "null",
	"\"x\"", "1e999", "\"\\u0000\"", "\x01", "\xff", "\xc3", "{}", "[]", "true",
};

#define NCOMMON (sizeof(common_tokens) / sizeof(common_tokens[0]))

void dc_mutate(struct sb *b, const char *const *tokens, size_t ntokens)
{
	size_t at = b->len ? shotgen_below((unsigned)b->len + 1) : 0, n;
	struct sb o = { 0 };

	sb_putn(&o, "", 0);
	switch (shotgen_below(5)) {
	case 0:		/* delete 1..3 bytes */
		n = 1 + shotgen_below(3);
		if (at + n > b->len)
			n = b->len - at;
		sb_putn(&o, b->p, at);
		sb_putn(&o, b->p + at + n, b->len - at - n);
		break;
	case 1:		/* insert a token */
		sb_putn(&o, b->p, at);
		n = shotgen_below((unsigned)(NCOMMON + ntokens));
		sb_puts(&o, n < NCOMMON ? common_tokens[n] : tokens[n - NCOMMON]);
		sb_putn(&o, b->p + at, b->len - at);
		break;
	case 2:		/* replace a byte */
		sb_putn(&o, b->p, b->len);
		if (at < b->len)
			o.p[at] = "{}[],:\"\\ 0159.eE-+nx\x7f"[shotgen_below(22)];
		break;
	case 3:		/* repeat a piece */
		n = shotgen_below(40);
		if (at + n > b->len)
			n = b->len - at;
		sb_putn(&o, b->p, at + n);
		sb_putn(&o, b->p + at, b->len - at);
		break;
	default:	/* cut the end */
		sb_putn(&o, b->p, at);
	}
	free(b->p);
	*b = o;
}

void dc_call(struct api_ctx *ctx, const char *method, const char *path, const char *body,
	     size_t len, struct api_response *resp)
{
	struct api_request rq = { method, path, "application/json", body, len, API_AUTH_WRITE, NULL, NULL };

	api_handle(ctx, &rq, resp);
}

void dc_call_ok(struct api_ctx *ctx, const char *method, const char *path, const char *body,
		int status)
{
	struct api_response r;

	dc_call(ctx, method, path, body, strlen(body), &r);
	ck_assert_int_eq(r.status, status);
	api_response_release(&r);
}

void dc_assert_same_answer(const struct api_response *a, const struct api_response *b,
			   const char *what)
{
	size_t la, lb;
	const char *ba = api_response_body(a, &la), *bb = api_response_body(b, &lb);

	ck_assert_msg(a->status == b->status && la == lb && (la == 0 || memcmp(ba, bb, la) == 0),
		      "answers differ for %.400s: %d %.*s | %d %.*s", what, a->status, (int)la, ba,
		      b->status, (int)lb, bb);
}

void dc_assert_error_answer(const struct api_response *r, enum api_err e, const char *msg,
			    const char *what)
{
	struct api_response want;

	memset(&want, 0, sizeof(want));
	buf_init(&want.body);
	want.status = api_err_info(e)->status;
	encode_error(&want.body, api_err_info(e)->code, msg);
	dc_assert_same_answer(r, &want, what);
	buf_release(&want.body);
}

int dc_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
