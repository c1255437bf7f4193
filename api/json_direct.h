/* json_direct.h - api/-internal: the steps the tree-free decoders
 * (world_shots_direct.c, world_snapshot_direct.c) take over a body with a
 * json_cursor, and the cJSON nodes standing for a value they hand to the
 * tree path's readers. Each step only moves over plainly valid text and
 * says -1 on anything else (never a message: the decoder then declines). */
#ifndef API_JSON_DIRECT_H
#define API_JSON_DIRECT_H

#include <string.h>

#include <cJSON.h>

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

#endif
