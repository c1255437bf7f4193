/* buf.c - growable response buffer (the number printers are in buf_number.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->oom = 0;
	b->limit = 0;
	b->over = 0;
}

void buf_set_limit(struct buf *b, size_t limit)
{
	b->limit = limit;
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

/* Hands the bytes (NUL-terminated, NULL when nothing was ever appended) to
 * the caller, who frees them; b is left empty and reusable. */
char *buf_detach(struct buf *b, size_t *len)
{
	char *d = b->data;

	if (len)
		*len = b->len;
	buf_init(b);
	return d;
}

int buf_make_room(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->oom)
		return -1;
	if (extra > SIZE_MAX - b->len - 1)
		goto out_oom;
	if (b->limit && extra > (b->limit > b->len ? b->limit - b->len : 0)) {
		b->over = 1;
		goto out_oom;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	if (b->limit && b->limit < SIZE_MAX && cap > b->limit + 1)
		cap = b->limit + 1;	/* need <= limit + 1 here */
	p = realloc(b->data, cap);
	if (!p)
		goto out_oom;
	b->data = p;
	b->cap = cap;
	return 0;
out_oom:
	b->oom = 1;
	return -1;
}

/* Make sure extra more bytes fit without another allocation (as far as the cap allows). */
void buf_reserve(struct buf *b, size_t extra)
{
	if (b->limit && extra > (b->limit > b->len ? b->limit - b->len : 0))
		extra = b->limit > b->len ? b->limit - b->len : 0;
	buf_make_room(b, extra);
}

void buf_append_grow(struct buf *b, const void *p, size_t n)
{
	if (buf_make_room(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_putc_grow(struct buf *b, char c)
{
	if (buf_make_room(b, 1))
		return;
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

/* printf into the buffer; not for hot paths. */
void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		buf_append(b, small, (size_t)n);
		return;
	}
	if (buf_make_room(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return n >= 3 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return n >= 4 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		       (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* A JSON string literal of n bytes of s: quotes, backslashes and control
 * characters escaped; bytes that are not valid UTF-8 become U+FFFD, so the
 * output is always valid JSON whatever s holds. */
void buf_put_json_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	buf_putc(b, '"');
	while (i < n) {
		size_t run = i, l;

		while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
			run++;
		buf_append(b, p + i, run - i);
		i = run;
		if (i >= n)
			break;
		if (p[i] >= 0x80) {
			l = utf8_seq_len(p + i, n - i);
			if (l) {
				buf_append(b, p + i, l);
				i += l;
			} else {
				buf_append(b, "\\ufffd", 6);
				i++;
			}
			continue;
		}
		switch (p[i]) {
		case '"': buf_append(b, "\\\"", 2); break;
		case '\\': buf_append(b, "\\\\", 2); break;
		case '\n': buf_append(b, "\\n", 2); break;
		case '\r': buf_append(b, "\\r", 2); break;
		case '\t': buf_append(b, "\\t", 2); break;
		case '\b': buf_append(b, "\\b", 2); break;
		case '\f': buf_append(b, "\\f", 2); break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hex[p[i] >> 4], hex[p[i] & 15] };

			buf_append(b, u, 6);
		}
		}
		i++;
	}
	buf_putc(b, '"');
}
