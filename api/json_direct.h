/* json_direct.h - api/-internal: the steps the tree-free decoders
 * (world_shots_direct.c, world_snapshot_direct.c, rays_direct.c) take over a
 * body with a json_cursor (members, keys, numbers, strings, arrays and their
 * growth), and the cJSON nodes standing for a value they hand to the tree
 * path's readers. Each step only moves over plainly valid text and says -1 on
 * anything else (never a message: the decoder then declines). */
#ifndef API_JSON_DIRECT_H
#define API_JSON_DIRECT_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "decode_fields.h"
#include "json.h"

/* d as a cJSON number node, for the tree path's readers. */
static inline cJSON num_node(double d)
{
	cJSON v;

	memset(&v, 0, sizeof(v));
	v.type = cJSON_Number;
	v.valuedouble = d;
	return v;
}

/* s as a cJSON string node, for the tree path's readers. */
static inline cJSON str_node(char *s)
{
	cJSON v;

	memset(&v, 0, sizeof(v));
	v.type = cJSON_String;
	v.valuestring = s;
	return v;
}

/* Past JSON whitespace (json_cursor_next's): the next byte, or -1 at the end. */
static inline int peek(struct json_cursor *c)
{
	if (c->i < c->n && c->s[c->i] > ' ')
		return c->s[c->i];	/* the common case: no whitespace */
	while (c->i < c->n) {
		unsigned char ch = c->s[c->i];

		if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
			return ch;
		c->i++;
	}
	return -1;
}

/* After a member: ',' (0: another follows) or close (1: the end); -1 else. */
static inline int end_member(struct json_cursor *c, int close)
{
	int ch = peek(c);

	if (ch == ',' || ch == close) {
		c->i++;
		return ch == close;
	}
	return -1;
}

/* A number value (the next byte '-' or a digit) into *d, as json_parse
 * reads it; -1 on anything else. */
static inline int number(struct json_cursor *c, double *d)
{
	int ch = peek(c);

	if (ch != '-' && (ch < '0' || ch > '9'))
		return -1;
	return json_cursor_number(c, d);
}

/* A string value (escapes read as json_parse reads them) into buf[0..cap),
 * NUL-terminated, *len its length; -1 when none starts here or it does not
 * fit. */
static inline int string_into(struct json_cursor *c, char *buf, size_t cap, size_t *len)
{
	char *out;

	if (peek(c) != '"' || json_cursor_string(c, buf, cap, &out, len))
		return -1;
	if (out != buf) {	/* too long for buf: json_cursor_string's own copy */
		free(out);
		return -1;
	}
	return 0;
}

/* Past an object's '{'; -1 when no object starts here. */
static inline int open_object(struct json_cursor *c)
{
	if (peek(c) != '{')
		return -1;
	c->i++;
	return 0;
}

/* Member key k (none: not a key known here) marked in *seen: 0 the first
 * time, -1 when none or repeated. */
static inline int first_time(int k, int none, unsigned *seen)
{
	if (k == none || (*seen & 1u << k))
		return -1;
	*seen |= 1u << k;
	return 0;
}

/* Past an array's '[': 0 when elements follow, 1 when it is empty (its ']'
 * consumed too), -1 when no array starts here. */
static inline int open_array(struct json_cursor *c)
{
	if (peek(c) != '[')
		return -1;
	c->i++;
	if (peek(c) != ']')
		return 0;
	c->i++;
	return 1;
}

/* n numbers [..], each finite and within the float32 range (read_vec3's
 * and wf_quat's rule). */
static inline int read_nums(struct json_cursor *c, double *v, int n)
{
	int k;

	if (peek(c) != '[')
		return -1;
	c->i++;
	for (k = 0; k < n; k++) {
		if (k && end_member(c, ']') != 0)
			return -1;
		if (number(c, &v[k]) || !isfinite(v[k]) || !in_float_range(v[k]))
			return -1;
	}
	return end_member(c, ']') == 1 ? 0 : -1;
}

/* A key a decoder knows, and its length. */
struct direct_key {
	const char *s;
	size_t len;
};

/* The key next (past whitespace) and the ':' after it: the index of one of
 * keys[lo..hi) whose bit is set in allowed, spelt without escapes; hi if
 * none. */
static inline int match_key(struct json_cursor *c, const struct direct_key *keys, int lo, int hi,
			    unsigned allowed)
{
	const unsigned char *s;
	size_t left, len;
	int k;

	if (peek(c) != '"')
		return hi;
	s = c->s + c->i + 1;
	left = c->n - c->i - 1;
	for (k = lo; k < hi; k++) {
		len = keys[k].len;
		if ((allowed & 1u << k) && len < left && s[0] == (unsigned char)keys[k].s[0] &&
		    s[len] == '"' && memcmp(keys[k].s, s, len) == 0)
			break;
	}
	if (k == hi)
		return hi;
	c->i += keys[k].len + 2;
	if (peek(c) != ':')
		return hi;
	c->i++;
	return k;
}

/* Room for one more element of the array p of *cap elements of size bytes
 * holding n: p itself when there is, else p doubled (*cap too), or NULL
 * when that overflows or fails (p is then left as it was). */
static inline void *grow_room(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	if (*cap > SIZE_MAX / 2 / size)
		return NULL;
	p = realloc(p, 2 * *cap * size);
	if (p)
		*cap *= 2;
	return p;
}

/* grow_room on the array a (an lvalue, assigned the new block): 0, or -1
 * with a unchanged. Typed, so no pointer is written through a void **. */
#define grow(a, cap, n)                                                   \
	__extension__({                                                   \
		void *grown_ = grow_room((a), (cap), (n), sizeof(*(a)));  \
		grown_ ? ((a) = grown_, 0) : -1;                          \
	})

#endif
