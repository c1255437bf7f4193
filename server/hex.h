/* hex.h - the value of one hexadecimal digit, for the decoders of
 * percent-escapes (http_parse.c, store_redis_url.c) and chunk sizes. */
#ifndef SERVER_HEX_H
#define SERVER_HEX_H

/* 0..15, or -1 when ch is not a hexadecimal digit (either case). */
static inline int hex_value(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

#endif
