/* fuzz_json_path.c - libFuzzer target for json_path_at (api/json_path.c),
 * which runs on the error path of every JSON body: at the byte the strict
 * parser stopped at (its contract) and at any other byte of any bytes, with
 * every output size, it must stay inside s[0..off) and out[0..cap), return
 * the length written, and give an error message that is a C string. Seeds
 * in seeds/json_path/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path at off into a buffer of exactly cap bytes (ASan sees a write
 * past it), checked against what it returns. */
static void path_at(const char *s, size_t len, size_t off, size_t cap)
{
	char buf[256];
	char *out = buf + sizeof(buf) - cap;
	size_t n;

	n = json_path_at(s, len, off, out, cap);
	if (cap && (n >= cap || strlen(out) != n))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_arena a = JSON_ARENA_INIT;
	struct api_fail f;
	cJSON *root;
	const char *why, *s;
	char *copy;
	size_t off = 0;
	enum api_err e;

	/* a copy of exactly size bytes: a read past it is reported */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	s = copy;
	e = json_parse(s, size, &a, &root, &off, &why);
	json_arena_release(&a);
	if (e && e != API_INTERNAL) {
		if (off > size)
			__builtin_trap();
		path_at(s, size, off, 160);
		json_fail_at_byte(&f, e, s, size, off, why);
		if (!memchr(f.msg, '\0', sizeof(f.msg)))
			__builtin_trap();
	}
	/* any byte, any bytes before it, every size of out (0 included) */
	for (size_t cap = 0; cap <= 256; cap += cap < 8 ? 1 : 61)
		path_at(s, size, size ? data[0] % (size + 1) : 0, cap);
	path_at(s, size, size, 160);
	path_at(s, size, size + 7, 160);	/* off past len: len */
	free(copy);
	return 0;
}
