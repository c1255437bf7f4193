/* buf.h - a growable byte buffer for building responses, with number
 * printing that round-trips and is fast (no printf on the hot path).
 *
 * Invariant: data[len] == '\0' whenever data != NULL. After an allocation
 * failure the buffer sets oom, keeps what it had, and ignores later appends;
 * callers check oom once at the end.
 */
#ifndef API_BUF_H
#define API_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;
	size_t len, cap;
	int oom;
};

void buf_init(struct buf *b);
void buf_release(struct buf *b);		/* frees data; b can be reused after buf_init */
char *buf_detach(struct buf *b, size_t *len);	/* hands data to the caller */
void buf_reserve(struct buf *b, size_t extra);
void buf_append(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_put_u64(struct buf *b, uint64_t v);
void buf_put_i64(struct buf *b, int64_t v);
/* The shortest decimal (at most 9 significant digits) that reads back as
 * the same float32; non-finite values print as null. */
void buf_put_float(struct buf *b, float f);
/* Same for a double (at most 17 significant digits). */
void buf_put_double(struct buf *b, double d);
/* A JSON string literal with quotes and escapes. */
void buf_put_json_string(struct buf *b, const char *s, size_t n);

#endif
