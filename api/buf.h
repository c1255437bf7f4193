/* buf.h - a growable byte buffer for building responses, with number
 * printing that round-trips and is fast (no printf on the hot path).
 *
 * Invariant: data[len] == '\0' whenever data != NULL. After an allocation
 * failure the buffer sets oom, keeps what it had, and ignores later appends;
 * callers check oom once at the end.
 *
 * A buffer may have a cap (limit, 0 = none; response bodies get the
 * daemon's --max-response-bytes): an append that would take len past it sets
 * over (and oom, so that every later append is ignored too) instead of
 * growing, so a buffer never holds more than limit + 1 bytes nor allocates
 * more than that. Appends reserve a few bytes ahead (a number reserves 32),
 * so over may be set up to 32 bytes before the cap is reached exactly.
 * buf_init and buf_release clear limit and over.
 */
#ifndef API_BUF_H
#define API_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct buf {
	char *data;
	size_t len, cap;
	int oom;		/* an append failed: later ones are ignored */
	size_t limit;		/* most bytes len may reach, 0 = no cap */
	int over;		/* an append was refused by limit (oom is set too) */
};

void buf_init(struct buf *b);
void buf_release(struct buf *b);		/* frees data; b can be reused after buf_init */
char *buf_detach(struct buf *b, size_t *len);	/* hands data to the caller */
/* Room for extra more bytes plus the NUL: 0, or -1 with oom set when the
 * size overflows, realloc fails (the old bytes stay) or extra would take
 * len past the cap (then over is set too). */
int buf_make_room(struct buf *b, size_t extra);
/* Room for extra more bytes ahead of time (clamped to the cap: never sets over). */
void buf_reserve(struct buf *b, size_t extra);
/* Cap b at limit bytes (see above); 0 removes the cap. */
void buf_set_limit(struct buf *b, size_t limit);
static inline void buf_append(struct buf *b, const void *p, size_t n);
/* A string literal, without its NUL. */
#define PUT_LIT(b, s) buf_append((b), (s), sizeof(s) - 1)
void buf_puts(struct buf *b, const char *s);
static inline void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_put_u64(struct buf *b, uint64_t v);
void buf_put_i64(struct buf *b, int64_t v);
/* The shortest decimal (at most 9 significant digits) that reads back as
 * the same float32; non-finite values print as null. */
void buf_put_float(struct buf *b, float f);
/* Same for a double (at most 17 significant digits). */
void buf_put_double(struct buf *b, double d);

/*
 * Writing in place, for encoders that append many small pieces: check
 * buf_room(b) once for the most they may write, then write at buf_end(b)
 * and buf_commit() the new end. While an answer fits in the room, this gives
 * byte for byte what the appends above would, oom and over included (they
 * would trip neither); otherwise use the appends.
 */
/* Bytes a number written by buf_format_* may touch, and the most it writes. */
#define BUF_NUMBER_ROOM 64
#define BUF_NUMBER_LEN 25

/* Bytes b may still take under its cap (SIZE_MAX: no cap). */
static inline size_t buf_cap_left(const struct buf *b)
{
	return !b->limit ? SIZE_MAX : b->limit > b->len ? b->limit - b->len : 0;
}

/* The bytes that may be written at buf_end(b) now with no growth and
 * within the cap: 0 after oom. */
static inline size_t buf_room(const struct buf *b)
{
	size_t room, left;

	if (b->oom || !b->data)
		return 0;
	room = b->cap - b->len - 1;	/* data[len] is within cap */
	if (b->limit) {
		left = b->limit > b->len ? b->limit - b->len : 0;
		if (left < room)
			room = left;
	}
	return room;
}

static inline char *buf_end(struct buf *b)
{
	return b->data + b->len;
}

/* End the in-place writes at p (within the room checked). */
static inline void buf_commit(struct buf *b, char *p)
{
	b->len = (size_t)(p - b->data);
	b->data[b->len] = '\0';
}

/* The appends' growing paths (buf_append and buf_putc inline the rest). */
void buf_append_grow(struct buf *b, const void *p, size_t n);
void buf_putc_grow(struct buf *b, char c);

/* Within the room, as the in-place writes do; else through buf_make_room. */
static inline void buf_append(struct buf *b, const void *p, size_t n)
{
	if (n && n <= buf_room(b)) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = '\0';
		return;
	}
	buf_append_grow(b, p, n);
}

static inline void buf_putc(struct buf *b, char c)
{
	if (buf_room(b)) {
		b->data[b->len++] = c;
		b->data[b->len] = '\0';
		return;
	}
	buf_putc_grow(b, c);
}

/* buf_put_float's / buf_put_double's text at out, which has at least
 * BUF_NUMBER_ROOM bytes; returns its length. */
size_t buf_format_float(char *out, float f);
size_t buf_format_double(char *out, double d);
/* A JSON string literal with quotes and escapes. */
void buf_put_json_string(struct buf *b, const char *s, size_t n);

#endif
