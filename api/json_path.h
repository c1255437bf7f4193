/* json_path.h - the field path at a byte of a JSON text, for the errors of
 * the parsers: "rays[1].direction[2]: numbers longer than 63 characters are
 * not accepted at byte 75" instead of "body: ...". */
#ifndef API_JSON_PATH_H
#define API_JSON_PATH_H

#include <stddef.h>

#include "errors.h"

/*
 * Write into out (cap bytes, NUL-terminated) the path of the value that
 * byte off of s[0..len) belongs to, in the form the decoders' errors use
 * (keys joined by '.', each cut at 64 bytes as written in the text, indices
 * as [i] from 0), reading s[0..off) only: the parsers report the first
 * byte they could not take, so everything before it is well-formed JSON.
 * Returns the path's length: 0 at the top level (outside every object and
 * array, or between an object's members), when the path does not fit in
 * cap (nothing is written but the NUL), or when s before off is not JSON
 * this reader follows.
 */
size_t json_path_at(const char *s, size_t len, size_t off, char *out, size_t cap);

/* A parser's error at byte off of s[0..len) into f: "<path>: <why> at byte
 * <off>", the path "body" at the top level. Returns e. */
enum api_err json_fail_at_byte(struct api_fail *f, enum api_err e, const char *s, size_t len,
			       size_t off, const char *why);

#endif
