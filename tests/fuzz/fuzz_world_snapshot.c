/* fuzz_world_snapshot.c - libFuzzer target for world_snapshot_direct (the
 * tree-free decoder of /v1/worlds snapshot bodies), checked against the tree
 * path (json_parse + decode_snapshot) on every input: whatever the fast path
 * takes, the tree path takes too, into the same struct; and the split parse
 * (a pool of one worker, any length split) takes or declines it alike, into
 * the same struct. Seeds in seeds/world_snapshot/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "batch.h"
#include "decode.h"
#include "json.h"
#include "world_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SAME(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)

static int same_hitbox(const struct hitbox_in *h, const struct hitbox_in *j)
{
	return strcmp(h->id, j->id) == 0 && h->shape == j->shape && SAME(h->a, j->a) &&
	       SAME(h->b, j->b) && SAME(h->radius, j->radius) && SAME(h->size, j->size) &&
	       SAME(h->rot, j->rot) && !h->mesh && !j->mesh;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct api_world_limits lim = { 4, 4, 8, 40, 4 };
	static struct batch_pool *pool;
	struct json_arena arena = JSON_ARENA_INIT;
	struct snapshot_req a, b, c;
	struct api_fail f;
	enum api_err e;
	cJSON *root;
	size_t i, k;
	int taken;

	taken = world_snapshot_direct((const char *)data, size, &lim, NULL, &a);
	if (!pool)
		pool = batch_pool_create(1);	/* lives as long as the fuzzer */
	if (world_snapshot_direct_split((const char *)data, size, &lim, pool, 1, &c) != taken)
		__builtin_trap();
	memset(&b, 0, sizeof(b));
	e = api_json_parse_in((const char *)data, size, &arena, &root, &f);
	if (!e)
		e = decode_snapshot(root, &lim, &b, &f);
	if (taken) {
		if (e || a.tick != b.tick || !SAME(a.time_ms, b.time_ms) || a.n != b.n ||
		    a.nhb != b.nhb)
			__builtin_trap();
		for (i = 0; i < a.n; i++) {
			const struct entity_in *x = &a.ents[i], *y = &b.ents[i];

			if (strcmp(x->id, y->id) || x->layer != y->layer || x->n != y->n)
				__builtin_trap();
			for (k = 0; k < x->n; k++)
				if (!same_hitbox(&x->hitboxes[k], &y->hitboxes[k]))
					__builtin_trap();
		}
		if (c.n != a.n || c.nhb != a.nhb || c.tick != a.tick || !SAME(c.time_ms, a.time_ms))
			__builtin_trap();
		for (i = 0; i < a.n; i++) {
			const struct entity_in *x = &a.ents[i], *y = &c.ents[i];

			if (strcmp(x->id, y->id) || x->layer != y->layer || x->n != y->n ||
			    y->hitboxes != c.hbs + (x->hitboxes - a.hbs))
				__builtin_trap();
			for (k = 0; k < x->n; k++)
				if (!same_hitbox(&x->hitboxes[k], &y->hitboxes[k]))
					__builtin_trap();
		}
	} else if (a.ents || a.hbs || a.ids || a.n || a.nhb || c.ents || c.hbs || c.ids ||
		   c.ids_more) {
		__builtin_trap();	/* declined: left empty */
	}
	snapshot_req_release(&c);
	snapshot_req_release(&a);
	snapshot_req_release(&b);
	json_arena_release(&arena);
	return 0;
}
