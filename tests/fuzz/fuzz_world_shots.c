/* fuzz_world_shots.c - libFuzzer target for world_shots_direct (the tree-free
 * decoder of /v1/worlds shot bodies), checked against the tree path
 * (json_parse + decode_world_shots) on every input: whatever the fast path
 * takes, the tree path takes too, into the same struct. Every body is also
 * read by the split parse (a pool of one worker, any length split), which
 * must give the same. Seeds in seeds/world_shots/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "batch.h"
#include "decode.h"
#include "json.h"
#include "world_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_shot(const struct world_shot *s, const struct world_shot *t)
{
	size_t k;

	if (memcmp(&s->ray.origin, &t->ray.origin, sizeof(s->ray.origin)) ||
	    memcmp(&s->ray.dir, &t->ray.dir, sizeof(s->ray.dir)) ||
	    memcmp(&s->ray.tmax, &t->ray.tmax, sizeof(s->ray.tmax)) ||
	    memcmp(&s->unit, &t->unit, sizeof(s->unit)) || s->has_time != t->has_time ||
	    memcmp(&s->time_ms, &t->time_ms, sizeof(s->time_ms)) || s->layers != t->layers ||
	    s->nignore != t->nignore || !s->ignore != !t->ignore)
		return 0;
	for (k = 0; k < s->nignore; k++)
		if (strcmp(s->ignore[k], t->ignore[k]))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct api_limits lim = { 8, 0, 0, 0, 0, 0, 0 };
	struct json_arena arena = JSON_ARENA_INIT;
	static struct batch_pool *pool;
	struct world_shots_req a, b, c;
	struct api_fail f;
	int static_only = size && (data[size - 1] & 1), taken;
	enum api_err e;
	cJSON *root;
	size_t i;

	if (!pool)
		pool = batch_pool_create(1);	/* lives as long as the fuzzer */
	taken = world_shots_direct((const char *)data, size, &lim, static_only, NULL, &a);
	if (world_shots_direct_split((const char *)data, size, &lim, static_only, pool, 1, &c) !=
	    taken)
		__builtin_trap();
	if (taken) {
		if (c.n != a.n || c.mode != a.mode || c.max_hits != a.max_hits)
			__builtin_trap();
		for (i = 0; i < a.n; i++)
			if (!same_shot(&a.shots[i], &c.shots[i]))
				__builtin_trap();
	}
	world_shots_req_release(&c);
	memset(&b, 0, sizeof(b));
	e = api_json_parse_in((const char *)data, size, &arena, &root, &f);
	if (!e)
		e = decode_world_shots(root, &lim, static_only, &b, &f);
	if (taken) {
		if (e || a.batch != b.batch || a.n != b.n || a.mode != b.mode ||
		    a.max_hits != b.max_hits)
			__builtin_trap();
		for (i = 0; i < a.n; i++)
			if (!same_shot(&a.shots[i], &b.shots[i]))
				__builtin_trap();
	} else if (a.shots || a.ignore || a.ids || a.ids_more || a.n) {
		__builtin_trap();	/* declined: left empty */
	}
	world_shots_req_release(&a);
	world_shots_req_release(&b);
	json_arena_release(&arena);
	return 0;
}
