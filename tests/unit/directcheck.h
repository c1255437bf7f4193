/* directcheck.h - the scaffolding the tree-free decoders' suites
 * (test_rays_direct.c, test_world_shots_direct.c, test_world_snapshot_direct.c)
 * share: random edits of a body, requests through api_handle, answers
 * compared byte for byte, and running one suite. */
#ifndef TESTS_DIRECTCHECK_H
#define TESTS_DIRECTCHECK_H

#include <stddef.h>

#include <check.h>

#include "api.h"
#include "teststr.h"

/* A closed cube mesh (corners at +-1), as PUT /v1/meshes/{name} takes it. */
extern const char dc_cube_json[];

/* A copy of text[0..len) in a block of exactly len bytes (no NUL after it,
 * so a decoder reading past the end trips the sanitizer); free() it. */
char *dc_exact_copy(const char *text, size_t len);

/* One random edit of b (shotgen's sequence): bytes deleted, a token inserted
 * (JSON punctuation, odd values, or one of the suite's own tokens[0..n)), a
 * byte replaced, a piece repeated, or the end cut. */
void dc_mutate(struct sb *b, const char *const *tokens, size_t n);

/* method path with body[0..len) through api_handle on ctx, with write access. */
void dc_call(struct api_ctx *ctx, const char *method, const char *path, const char *body,
	     size_t len, struct api_response *resp);
/* dc_call with the NUL-terminated body; the status must be status. */
void dc_call_ok(struct api_ctx *ctx, const char *method, const char *path, const char *body,
		int status);

/* a and b the same status and body (what names the request in the message). */
void dc_assert_same_answer(const struct api_response *a, const struct api_response *b,
			   const char *what);
/* r is the error answer of e with msg, as the handler sends the tree path's. */
void dc_assert_error_answer(const struct api_response *r, enum api_err e, const char *msg,
			    const char *what);

/* Runs s: EXIT_SUCCESS when none of its tests failed. */
int dc_run_suite(Suite *s);

#endif
