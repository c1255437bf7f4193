/* json.c - strict JSON parser building cJSON-compatible trees in an arena. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* ---- the cursor: RFC 8259 checks shared by the tree parser and json_cursor_* */

void json_cursor_init(struct json_cursor *c, const char *buf, size_t len)
{
	c->s = (const unsigned char *)buf;
	c->n = buf ? len : 0;
	c->i = 0;
	c->err = API_OK;
	c->why = NULL;
}

int json_cursor_fail(struct json_cursor *c, enum api_err e, const char *why)
{
	c->err = e;
	c->why = why;
	return -1;
}

static inline void skip_ws(struct json_cursor *c)
{
	if (c->i < c->n && c->s[c->i] > ' ')
		return;		/* the common case: no whitespace at all */
	while (c->i < c->n) {
		unsigned char ch = c->s[c->i];

		if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
			break;
		c->i++;
	}
}

static inline int cursor_next(struct json_cursor *c)
{
	skip_ws(c);
	if (c->i >= c->n)
		return json_cursor_fail(c, API_INVALID_JSON, "unexpected end of input");
	return c->s[c->i];
}

int json_cursor_next(struct json_cursor *c)
{
	return cursor_next(c);
}

/* ---- the tree parser: RFC 8259, strict, one pass */

struct jparse {
	struct json_cursor c;
	struct json_arena *a;
	size_t hint;		/* first chunk size */
};

static void *fail(struct jparse *j, enum api_err e, const char *why)
{
	json_cursor_fail(&j->c, e, why);
	return NULL;
}

static cJSON *new_node(struct jparse *j, int type)
{
	cJSON *item = json_arena_bump(j->a, sizeof(*item), _Alignof(cJSON));

	if (!item)
		item = json_arena_alloc(j->a, sizeof(*item), _Alignof(cJSON), j->hint);

	if (!item)
		return fail(j, API_INTERNAL, "out of memory");
	memset(item, 0, sizeof(*item));
	item->type = type;
	return item;
}

static int hex4(const unsigned char *p, unsigned *out)
{
	unsigned v = 0;
	int k;

	for (k = 0; k < 4; k++) {
		unsigned c = p[k], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/* Length of a valid UTF-8 sequence (2..4 bytes) at p, 0 when invalid. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	unsigned c = p[0];

	if (c >= 0xc2 && c <= 0xdf)
		return left >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return left >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return left >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 &&
		       (p[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* Check the string at c->i (its opening quote); *escaped when it has any. */
static int check_string(struct json_cursor *c, int *escaped)
{
	*escaped = 0;
	c->i++;	/* the opening quote */
	for (;;) {
		const unsigned char *s = c->s;
		size_t i = c->i, n = c->n;
		unsigned char ch;

		/* plain ASCII runs (keys are): one test per byte */
		while (i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
			i++;
		c->i = i;
		if (c->i >= c->n)
			return json_cursor_fail(c, API_INVALID_JSON, "unterminated string");
		ch = c->s[c->i];
		if (ch == '"') {
			c->i++;
			return 0;
		}
		if (ch < 0x20)
			return json_cursor_fail(c, API_INVALID_JSON, "raw control character in a string");
		if (ch >= 0x80) {
			size_t l = utf8_len(c->s + c->i, c->n - c->i);

			if (!l)
				return json_cursor_fail(c, API_INVALID_JSON, "invalid UTF-8");
			c->i += l;
			continue;
		}
		if (ch != '\\') {
			c->i++;
			continue;
		}
		*escaped = 1;
		if (c->i + 1 >= c->n)
			return json_cursor_fail(c, API_INVALID_JSON, "unterminated string");
		ch = c->s[c->i + 1];
		if (ch == 'u') {
			unsigned u, lo;

			if (c->i + 6 > c->n || hex4(c->s + c->i + 2, &u))
				return json_cursor_fail(c, API_INVALID_JSON, "bad \\u escape");
			if (u == 0)
				return json_cursor_fail(c, API_INVALID_REQUEST, "\\u0000 is not allowed in strings");
			if (u >= 0xdc00 && u <= 0xdfff)
				return json_cursor_fail(c, API_INVALID_JSON, "lone low surrogate");
			if (u >= 0xd800 && u <= 0xdbff) {
				if (c->i + 12 > c->n || c->s[c->i + 6] != '\\' || c->s[c->i + 7] != 'u' ||
				    hex4(c->s + c->i + 8, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return json_cursor_fail(c, API_INVALID_JSON, "lone high surrogate");
				c->i += 6;
			}
			c->i += 6;
			continue;
		}
		if (!strchr("\"\\/bfnrt", ch) || ch == 0)
			return json_cursor_fail(c, API_INVALID_JSON, "bad escape");
		c->i += 2;
	}
}

/* Unescape the checked string body s[0..len) into out; returns the bytes written. */
static size_t unescape(const unsigned char *s, size_t len, char *out)
{
	size_t i = 0, o = 0;

	while (i < len) {
		unsigned u = 0, lo = 0;

		if (s[i] != '\\') {
			out[o++] = (char)s[i++];
			continue;
		}
		switch (s[i + 1]) {
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			hex4(s + i + 2, &u);
			if (u >= 0xd800 && u <= 0xdbff) {
				hex4(s + i + 8, &lo);
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			}
			if (u < 0x80) {
				out[o++] = (char)u;
			} else if (u < 0x800) {
				out[o++] = (char)(0xc0 | u >> 6);
				out[o++] = (char)(0x80 | (u & 0x3f));
			} else if (u < 0x10000) {
				out[o++] = (char)(0xe0 | u >> 12);
				out[o++] = (char)(0x80 | (u >> 6 & 0x3f));
				out[o++] = (char)(0x80 | (u & 0x3f));
			} else {
				out[o++] = (char)(0xf0 | u >> 18);
				out[o++] = (char)(0x80 | (u >> 12 & 0x3f));
				out[o++] = (char)(0x80 | (u >> 6 & 0x3f));
				out[o++] = (char)(0x80 | (u & 0x3f));
			}
			i += 6;
			continue;
		default: out[o++] = (char)s[i + 1]; break;	/* " \ / */
		}
		i += 2;
	}
	return o;
}

/* The string at j->c.i, unescaped into the arena; NULL on failure. */
static char *parse_string(struct jparse *j)
{
	size_t start = j->c.i + 1, len;
	int escaped;
	char *out;

	if (check_string(&j->c, &escaped))
		return NULL;
	len = j->c.i - 1 - start;	/* unescaping never lengthens: \uXXXX is 6 bytes, <= 4 of UTF-8 */
	out = json_arena_bump(j->a, len + 1, 1);
	if (!out)
		out = json_arena_alloc(j->a, len + 1, 1, j->hint);
	if (!out)
		return fail(j, API_INTERNAL, "out of memory");
	if (escaped)
		len = unescape(j->c.s + start, len, out);
	else
		memcpy(out, j->c.s + start, len);
	out[len] = '\0';
	return out;
}

int json_cursor_string(struct json_cursor *c, char *buf, size_t cap, char **out, size_t *outlen)
{
	size_t start = c->i + 1, len;
	int escaped;
	char *o = buf;

	*out = NULL;
	if (c->i >= c->n || c->s[c->i] != '"')
		return json_cursor_fail(c, API_INVALID_JSON, "expected a string");
	if (check_string(c, &escaped))
		return -1;
	len = c->i - 1 - start;
	if (len >= cap) {
		o = malloc(len + 1);
		if (!o)
			return json_cursor_fail(c, API_INTERNAL, "out of memory");
	}
	if (escaped)
		len = unescape(c->s + start, len, o);
	else
		memcpy(o, c->s + start, len);
	o[len] = '\0';
	*out = o;
	*outlen = len;
	return 0;
}

static int is_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

static cJSON *parse_number(struct jparse *j)
{
	cJSON *item;
	double d;

	if (json_cursor_number(&j->c, &d))
		return NULL;
	item = new_node(j, cJSON_Number);
	if (!item)
		return NULL;
	/* as cJSON's parse_number sets valueint */
	item->valuedouble = d;
	if (d >= INT_MAX)
		item->valueint = INT_MAX;
	else if (d <= (double)INT_MIN)
		item->valueint = INT_MIN;
	else
		item->valueint = (int)d;
	return item;
}

static int check_literal(struct json_cursor *c, const char *lit)
{
	size_t l = strlen(lit);

	if (c->n - c->i < l || memcmp(c->s + c->i, lit, l))
		return json_cursor_fail(c, API_INVALID_JSON, "unexpected character");
	c->i += l;
	return 0;
}

static cJSON *parse_literal(struct jparse *j, const char *lit, int type)
{
	cJSON *item;

	if (check_literal(&j->c, lit))
		return NULL;
	item = new_node(j, type);
	if (item && type == cJSON_True)
		item->valueint = 1;
	return item;
}

/* json_cursor_end_member, inline for the parsers here. */
static inline int end_member(struct json_cursor *c, unsigned char close)
{
	skip_ws(c);
	if (c->i >= c->n)
		return json_cursor_fail(c, API_INVALID_JSON, "unexpected end of input");
	if (c->s[c->i] == close) {
		c->i++;
		return 1;
	}
	if (c->s[c->i] != ',')
		return json_cursor_fail(c, API_INVALID_JSON,
					close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
	c->i++;
	return 0;
}

static cJSON *parse_value(struct jparse *j, int depth);

/* An array or object at j->c.i; children linked as cJSON links them. */
static cJSON *parse_container(struct jparse *j, int depth)
{
	struct json_cursor *c = &j->c;
	unsigned char open = c->s[c->i], close = open == '{' ? '}' : ']';
	cJSON *item, *head = NULL, *last = NULL, *child;
	int r;

	if (depth >= JSON_MAX_DEPTH)
		return fail(j, API_INVALID_REQUEST, "nested deeper than 64 levels");
	item = new_node(j, open == '{' ? cJSON_Object : cJSON_Array);
	if (!item)
		return NULL;
	c->i++;
	skip_ws(c);
	if (c->i < c->n && c->s[c->i] == close) {
		c->i++;
		return item;
	}
	for (;;) {
		char *key = NULL;

		if (open == '{') {
			skip_ws(c);
			if (c->i >= c->n || c->s[c->i] != '"')
				return fail(j, API_INVALID_JSON, "expected a key string");
			key = parse_string(j);
			if (!key)
				return NULL;
			skip_ws(c);
			if (c->i >= c->n || c->s[c->i] != ':')
				return fail(j, API_INVALID_JSON, "expected ':'");
			c->i++;
		}
		child = parse_value(j, depth + 1);
		if (!child)
			return NULL;
		child->string = key;
		if (last) {
			last->next = child;
			child->prev = last;
		} else {
			head = child;
		}
		last = child;
		r = end_member(c, close);
		if (r < 0)
			return NULL;
		if (r)
			break;
	}
	head->prev = last;	/* cJSON 1.7.15: the first element's prev is the last */
	item->child = head;
	return item;
}

int json_cursor_end_member(struct json_cursor *c, unsigned char close)
{
	return end_member(c, close);
}

static cJSON *parse_value(struct jparse *j, int depth)
{
	struct json_cursor *c = &j->c;
	int ch;
	cJSON *item;

	ch = cursor_next(c);
	if (ch < 0)
		return NULL;
	if (ch == '{' || ch == '[')
		return parse_container(j, depth);
	if (ch == '"') {
		char *str = parse_string(j);

		if (!str)
			return NULL;
		item = new_node(j, cJSON_String);
		if (item)
			item->valuestring = str;
		return item;
	}
	if (ch == '-' || is_digit((unsigned char)ch))
		return parse_number(j);
	if (ch == 't')
		return parse_literal(j, "true", cJSON_True);
	if (ch == 'f')
		return parse_literal(j, "false", cJSON_False);
	if (ch == 'n')
		return parse_literal(j, "null", cJSON_NULL);
	return fail(j, API_INVALID_JSON, "unexpected character");
}

/* json_cursor_skip for an array or object at c->i. */
static int skip_container(struct json_cursor *c, int depth)
{
	unsigned char open = c->s[c->i], close = open == '{' ? '}' : ']';
	int r;

	if (depth >= JSON_MAX_DEPTH)
		return json_cursor_fail(c, API_INVALID_REQUEST, "nested deeper than 64 levels");
	c->i++;
	skip_ws(c);
	if (c->i < c->n && c->s[c->i] == close) {
		c->i++;
		return 0;
	}
	for (;;) {
		if (open == '{') {
			int escaped;

			skip_ws(c);
			if (c->i >= c->n || c->s[c->i] != '"')
				return json_cursor_fail(c, API_INVALID_JSON, "expected a key string");
			if (check_string(c, &escaped))
				return -1;
			skip_ws(c);
			if (c->i >= c->n || c->s[c->i] != ':')
				return json_cursor_fail(c, API_INVALID_JSON, "expected ':'");
			c->i++;
		}
		if (json_cursor_skip(c, depth + 1))
			return -1;
		r = end_member(c, close);
		if (r < 0)
			return -1;
		if (r)
			return 0;
	}
}

int json_cursor_skip(struct json_cursor *c, int depth)
{
	int ch = cursor_next(c), escaped;

	if (ch < 0)
		return -1;
	if (ch == '{' || ch == '[')
		return skip_container(c, depth);
	if (ch == '"')
		return check_string(c, &escaped);
	if (ch == '-' || is_digit((unsigned char)ch)) {
		double d;

		return json_cursor_number(c, &d);
	}
	if (ch == 't')
		return check_literal(c, "true");
	if (ch == 'f')
		return check_literal(c, "false");
	if (ch == 'n')
		return check_literal(c, "null");
	return json_cursor_fail(c, API_INVALID_JSON, "unexpected character");
}

int json_cursor_finish(struct json_cursor *c)
{
	skip_ws(c);
	if (c->i < c->n)
		return json_cursor_fail(c, API_INVALID_JSON, "unexpected data after the JSON value");
	return 0;
}

enum api_err json_parse(const char *buf, size_t len, struct json_arena *a, cJSON **out,
			size_t *off, const char **why)
{
	struct jparse j;
	cJSON *root;

	json_cursor_init(&j.c, buf, len);
	j.a = a;
	j.hint = json_arena_hint(j.c.n);
	*out = NULL;
	*off = 0;
	*why = NULL;
	root = parse_value(&j, 0);
	if (root)
		json_cursor_finish(&j.c);
	if (j.c.why) {
		*off = j.c.i;
		*why = j.c.why;
		return j.c.err;
	}
	*out = root;
	return API_OK;
}
