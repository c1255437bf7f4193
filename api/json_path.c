/* json_path.c - the field path at a byte of a JSON text (json_path.h). */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "json_path.h"

/* An object or array open at the byte: an array's index, or the key of the
 * object's member being read (none between members). */
struct jp_frame {
	int arr, has_key;
	size_t idx;
	const char *key;
	size_t klen;
};

/* Deeper than every parser's nesting limit (JSON_MAX_DEPTH). */
#define JP_MAX_DEPTH (2 * JSON_MAX_DEPTH)

size_t json_path_at(const char *s, size_t len, size_t off, char *out, size_t cap)
{
	struct jp_frame st[JP_MAX_DEPTH];
	size_t depth = 0, n = 0, i = 0;

	if (cap == 0)
		return 0;
	out[0] = '\0';
	if (off > len)
		off = len;
	while (i < off) {
		struct jp_frame *top = depth ? &st[depth - 1] : NULL;
		size_t j;

		switch (s[i]) {
		case '{':
		case '[':
			if (depth == JP_MAX_DEPTH)
				return 0;
			st[depth++] = (struct jp_frame){ .arr = s[i] == '[' };
			break;
		case '}':
		case ']':
			if (!depth)
				return 0;
			depth--;
			break;
		case ',':
			if (top && top->arr)
				top->idx++;
			else if (top)
				top->has_key = 0;
			break;
		case '"':
			for (j = i + 1; j < off && s[j] != '"'; j++)
				if (s[j] == '\\')
					j++;
			if (j >= off)
				break;	/* the byte is inside this string */
			if (top && !top->arr && !top->has_key) {
				top->key = s + i + 1;
				top->klen = j - i - 1;
				top->has_key = 1;
			}
			i = j;
			break;
		default:
			break;
		}
		i++;
	}
	for (size_t d = 0; d < depth; d++) {
		int w;

		if (st[d].arr)
			w = snprintf(out + n, cap - n, "[%zu]", st[d].idx);
		else if (st[d].has_key)
			w = snprintf(out + n, cap - n, "%s%.*s", n ? "." : "",
				     (int)(st[d].klen < 64 ? st[d].klen : 64), st[d].key);
		else
			break;
		if (w < 0 || (size_t)w >= cap - n) {
			out[0] = '\0';
			return 0;
		}
		n += (size_t)w;
	}
	return n;
}

enum api_err json_fail_at_byte(struct api_fail *f, enum api_err e, const char *s, size_t len,
			       size_t off, const char *why)
{
	char path[160];

	if (!json_path_at(s, len, off, path, sizeof(path)))
		snprintf(path, sizeof(path), "body");
	return api_fail_set(f, e, "%s: %s at byte %zu", path, why, off);
}
