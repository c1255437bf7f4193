/* json.h - strict RFC 8259 parser building cJSON trees in a per-request arena.
 *
 * json_parse() checks the body strictly (no leading zeros, no "1.", valid
 * UTF-8, no lone surrogates, no raw control characters, one value and only
 * whitespace around it) and, in the same pass, builds a tree of real cJSON
 * nodes so every cJSON accessor works on it. Nodes look exactly as
 * cJSON_ParseWithLengthOpts (1.7.15) builds them: type flags, valueint
 * (saturated to INT_MIN..INT_MAX) and valuedouble (bit-identical to strtod)
 * of numbers, valueint 1 for true, unescaped NUL-terminated valuestring and
 * string keys, next/prev/child links with child->prev the last element.
 *
 * Ownership: every node and string lives in the arena. The tree is freed
 * only by json_arena_release(); never cJSON_Delete() it, never add cJSON-
 * allocated nodes to it. An arena is reusable after release.
 */
#ifndef API_JSON_H
#define API_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "errors.h"

/* Deeper JSON nesting is refused (API_INVALID_REQUEST). */
#define JSON_MAX_DEPTH 64
/* Numbers longer than this many characters are refused (cJSON read at most 63). */
#define JSON_MAX_NUMBER_LEN 63

struct json_chunk;

/* A few large chunks; zero-initialised (JSON_ARENA_INIT) means empty. */
struct json_arena {
	struct json_chunk *head;	/* the chunk being filled; ->next the older ones */
	unsigned char *next, *end;	/* head's free bytes (NULL when no head) */
};

#define JSON_ARENA_INIT { NULL, NULL, NULL }

/*
 * Parse buf[0..len) into a tree allocated from a (which may be empty or hold
 * an earlier tree). On success returns API_OK and *out is the root.
 * Otherwise *out is NULL and returns API_INVALID_JSON (syntax), or
 * API_INVALID_REQUEST (valid JSON we refuse: nesting over JSON_MAX_DEPTH,
 * numbers over JSON_MAX_NUMBER_LEN characters, \u0000 in a string), with
 * *why a static message and *off the byte offset it refers to; or
 * API_INTERNAL when memory runs out (*why "out of memory"). In every case
 * the caller must json_arena_release(a) eventually. len == 0 is
 * "unexpected end of input" at byte 0.
 */
enum api_err json_parse(const char *buf, size_t len, struct json_arena *a, cJSON **out,
			size_t *off, const char **why);

/* Free every chunk of a (and so every tree parsed into it); a is empty after. */
void json_arena_release(struct json_arena *a);

/* How many chunks a holds (tests check growth with it). */
size_t json_arena_chunks(const struct json_arena *a);

/* size bytes aligned to align (a power of two) from a, NULL when out of
 * memory; the first chunk is at least hint bytes. Freed with the arena. */
void *json_arena_alloc(struct json_arena *a, size_t size, size_t align, size_t hint);
/* json_arena_alloc's common case, inline: from head's free bytes, or NULL
 * when they are too few (then call json_arena_alloc). */
static inline void *json_arena_bump(struct json_arena *a, size_t size, size_t align)
{
	uintptr_t p = ((uintptr_t)a->next + (align - 1)) & ~(uintptr_t)(align - 1);

	if (!a->next || p > (uintptr_t)a->end || (uintptr_t)a->end - p < size)
		return NULL;
	a->next = (unsigned char *)p + size;
	return (void *)p;
}

/* The first chunk's size for parsing a body of body_len bytes. */
size_t json_arena_hint(size_t body_len);

/*
 * The double strtod(s) would give for the JSON number s[0..len), len <=
 * JSON_MAX_NUMBER_LEN, s valid RFC 8259 number syntax (not checked here).
 * Locale-independent. Returns 0, or -1 if the C locale could not be created.
 */
int json_number(const char *s, size_t len, double *out);

/*
 * Reading a body without building a tree (api/json_mesh.c streams mesh
 * uploads this way). A cursor walks buf[0..len); the functions below check
 * exactly what json_parse() checks and fail with the same message at the
 * same offset: on failure they return -1 with c->err and c->why set
 * (API_INVALID_JSON, API_INVALID_REQUEST, or API_INTERNAL "out of memory")
 * and c->i the byte offset the message refers to. Once failed, a cursor is
 * not used again.
 */
struct json_cursor {
	const unsigned char *s;
	size_t n, i;		/* body length, position */
	enum api_err err;	/* API_OK until a step fails */
	const char *why;	/* static message of the failure */
};

void json_cursor_init(struct json_cursor *c, const char *buf, size_t len);
/* Set the failure (err, why) at the current offset; returns -1. */
int json_cursor_fail(struct json_cursor *c, enum api_err e, const char *why);
/* Skip whitespace; the next byte, or -1 ("unexpected end of input") at the end. */
int json_cursor_next(struct json_cursor *c);
/* The number at c->i ('-' or a digit) into *out, as json_parse reads it. */
int json_cursor_number(struct json_cursor *c, double *out);
/*
 * The string at c->i (its opening quote), unescaped and NUL-terminated:
 * into buf when it has fewer than cap bytes, else into a malloc'd copy.
 * *out is the one used (the caller frees it when it is not buf), *len its
 * length.
 */
int json_cursor_string(struct json_cursor *c, char *buf, size_t cap, char **out, size_t *len);
/* Skip one value whose nesting depth is depth (the root is 0), checked. */
int json_cursor_skip(struct json_cursor *c, int depth);
/*
 * After a member of an array (close ']') or object (close '}'): skip
 * whitespace and the ',' (returns 0: another member follows) or the close
 * (returns 1: the container ended); -1 on anything else.
 */
int json_cursor_end_member(struct json_cursor *c, unsigned char close);
/* After the root value: only whitespace may follow. 0 or -1. */
int json_cursor_finish(struct json_cursor *c);

#endif
