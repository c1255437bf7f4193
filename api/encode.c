/* encode.c - answers to JSON text with the fast number printers of buf.c. */
#include <math.h>
#include <string.h>

#include "batch.h"
#include "encode.h"


void encode_vec3(struct buf *b, vec3 v)
{
	buf_putc(b, '[');
	buf_put_float(b, v.x);
	buf_putc(b, ',');
	buf_put_float(b, v.y);
	buf_putc(b, ',');
	buf_put_float(b, v.z);
	buf_putc(b, ']');
}

void encode_mesh_info(struct buf *b, const char *name, uint64_t version,
		      const struct mesh_info *mi)
{
	PUT_LIT(b, "{\"name\":");
	buf_put_json_string(b, name, strlen(name));
	PUT_LIT(b, ",\"version\":");
	buf_put_u64(b, version);
	PUT_LIT(b, ",\"vertices\":");
	buf_put_u64(b, mi->vertices);
	PUT_LIT(b, ",\"triangles\":");
	buf_put_u64(b, mi->triangles);
	PUT_LIT(b, ",\"degenerate_triangles\":");
	buf_put_u64(b, mi->degenerate);
	PUT_LIT(b, ",\"bounds\":{\"min\":");
	encode_vec3(b, mi->min);
	PUT_LIT(b, ",\"max\":");
	encode_vec3(b, mi->max);
	PUT_LIT(b, "},\"build_ms\":");
	/* microsecond resolution is all a wall-clock build time is worth */
	buf_put_double(b, round(mi->build_ms * 1000.0) / 1000.0);
	PUT_LIT(b, ",\"memory_bytes\":");
	buf_put_u64(b, mi->memory_bytes);
	buf_putc(b, '}');
}

void encode_miss(struct buf *b)
{
	PUT_LIT(b, "{\"hit\":false}");
}

static void put_bool(struct buf *b, int v)
{
	if (v)
		PUT_LIT(b, "true");
	else
		PUT_LIT(b, "false");
}

/* ---- writing in place (buf_room): one room check per answer, then plain
 * stores; the same bytes as the appends below */

/* The most a mesh hit touches in place: its literals (under 120 bytes), a
 * triangle index (20), ten numbers of at most BUF_NUMBER_LEN bytes, the last
 * of which may touch BUF_NUMBER_ROOM from its start. 473: a one-ray
 * answer's buffer then stays at 1 KiB (the batch driver reserves
 * BATCH_ITEM_ROOM), within glibc's per-thread cache of small blocks. */
#define HIT_ROOM (160 + 24 + 9 * BUF_NUMBER_LEN + BUF_NUMBER_ROOM)
_Static_assert(HIT_ROOM <= BATCH_ITEM_ROOM, "the batch driver reserves room for a hit");

#define RAW_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

static char *raw_float(char *p, float f)
{
	return p + buf_format_float(p, f);
}

static char *raw_vec3(char *p, vec3 v)
{
	*p++ = '[';
	p = raw_float(p, v.x);
	*p++ = ',';
	p = raw_float(p, v.y);
	*p++ = ',';
	p = raw_float(p, v.z);
	*p++ = ']';
	return p;
}

static void raw_mesh_hit(struct buf *b, const struct world_hit *h, int segment)
{
	char *p = buf_end(b);

	p = RAW_LIT(p, "{\"hit\":true,\"distance\":");
	p = raw_float(p, h->distance);
	p = RAW_LIT(p, ",\"point\":");
	p = raw_vec3(p, h->point);
	p = RAW_LIT(p, ",\"normal\":");
	p = raw_vec3(p, h->normal);
	p = RAW_LIT(p, ",\"triangle\":");
	buf_commit(b, p);
	buf_put_u64(b, h->triangle);	/* no growth: the room holds it */
	p = buf_end(b);
	p = RAW_LIT(p, ",\"barycentric\":[");
	p = raw_float(p, h->u);
	*p++ = ',';
	p = raw_float(p, h->v);
	p = RAW_LIT(p, "],\"front_face\":");
	if (h->front_face)
		p = RAW_LIT(p, "true");
	else
		p = RAW_LIT(p, "false");
	if (segment) {
		p = RAW_LIT(p, ",\"fraction\":");
		p = raw_float(p, h->fraction);
	}
	*p++ = '}';
	buf_commit(b, p);
}

void encode_mesh_hit(struct buf *b, const struct world_hit *h, int segment)
{
	if (buf_room(b) >= HIT_ROOM) {
		raw_mesh_hit(b, h, segment);
		return;
	}
	PUT_LIT(b, "{\"hit\":true,\"distance\":");
	buf_put_float(b, h->distance);
	PUT_LIT(b, ",\"point\":");
	encode_vec3(b, h->point);
	PUT_LIT(b, ",\"normal\":");
	encode_vec3(b, h->normal);
	PUT_LIT(b, ",\"triangle\":");
	buf_put_u64(b, h->triangle);
	PUT_LIT(b, ",\"barycentric\":[");
	buf_put_float(b, h->u);
	buf_putc(b, ',');
	buf_put_float(b, h->v);
	PUT_LIT(b, "],\"front_face\":");
	put_bool(b, h->front_face);
	if (segment) {
		PUT_LIT(b, ",\"fraction\":");
		buf_put_float(b, h->fraction);
	}
	buf_putc(b, '}');
}

void encode_mesh_hits(struct buf *b, const struct world_hit *h, size_t n, int truncated,
		      int segment)
{
	size_t k;

	PUT_LIT(b, "{\"hits\":[");
	for (k = 0; k < n; k++) {
		if (k)
			buf_putc(b, ',');
		encode_mesh_hit(b, &h[k], segment);
	}
	PUT_LIT(b, "],\"truncated\":");
	put_bool(b, truncated);
	buf_putc(b, '}');
}

static void put_id(struct buf *b, const char *id)
{
	if (!id)
		return;
	PUT_LIT(b, ",\"id\":");
	buf_put_json_string(b, id, strlen(id));
}

/* The most encode_dpn writes in place: 40 bytes of literals, seven numbers. */
#define DPN_ROOM (48 + 7 * BUF_NUMBER_ROOM)

void encode_dpn(struct buf *b, float distance, vec3 point, vec3 normal)
{
	char *p;

	if (buf_room(b) >= DPN_ROOM) {
		p = buf_end(b);
		p = RAW_LIT(p, ",\"distance\":");
		p = raw_float(p, distance);
		p = RAW_LIT(p, ",\"point\":");
		p = raw_vec3(p, point);
		p = RAW_LIT(p, ",\"normal\":");
		p = raw_vec3(p, normal);
		buf_commit(b, p);
		return;
	}
	PUT_LIT(b, ",\"distance\":");
	buf_put_float(b, distance);
	PUT_LIT(b, ",\"point\":");
	encode_vec3(b, point);
	PUT_LIT(b, ",\"normal\":");
	encode_vec3(b, normal);
}

void encode_obb_hit(struct buf *b, size_t box, const char *id, float distance, vec3 point,
		    vec3 normal, int inside)
{
	PUT_LIT(b, "{\"hit\":true,\"box\":");
	buf_put_u64(b, box);
	put_id(b, id);
	encode_dpn(b, distance, point, normal);
	PUT_LIT(b, ",\"inside\":");
	put_bool(b, inside);
	buf_putc(b, '}');
}

void encode_hitscan_mesh(struct buf *b, float distance, vec3 point, vec3 normal, uint32_t tri)
{
	PUT_LIT(b, "{\"hit\":\"mesh\"");
	encode_dpn(b, distance, point, normal);
	PUT_LIT(b, ",\"triangle\":");
	buf_put_u64(b, tri);
	buf_putc(b, '}');
}

void encode_hitscan_box(struct buf *b, float distance, vec3 point, vec3 normal, size_t box,
			const char *id)
{
	PUT_LIT(b, "{\"hit\":\"box\"");
	encode_dpn(b, distance, point, normal);
	PUT_LIT(b, ",\"box\":");
	buf_put_u64(b, box);
	put_id(b, id);
	buf_putc(b, '}');
}

void encode_hitscan_miss(struct buf *b)
{
	PUT_LIT(b, "{\"hit\":null}");
}

void encode_overlap(struct buf *b, size_t count, const uint32_t *tris, size_t n)
{
	size_t k;

	buf_reserve(b, 64 + 11 * n);
	PUT_LIT(b, "{\"count\":");
	buf_put_u64(b, count);
	PUT_LIT(b, ",\"triangles\":[");
	for (k = 0; k < n; k++) {
		if (k)
			buf_putc(b, ',');
		buf_put_u64(b, tris[k]);
	}
	PUT_LIT(b, "],\"truncated\":");
	put_bool(b, count > n);
	buf_putc(b, '}');
}

void encode_binary_hit(struct buf *b, int32_t triangle, float distance)
{
	unsigned char rec[8];
	uint32_t t = (uint32_t)triangle, d;
	int k;

	memcpy(&d, &distance, sizeof(d));
	for (k = 0; k < 4; k++) {
		rec[k] = (unsigned char)(t >> (8 * k));
		rec[4 + k] = (unsigned char)(d >> (8 * k));
	}
	buf_append(b, rec, sizeof(rec));
}

void encode_error(struct buf *b, const char *code, const char *message)
{
	PUT_LIT(b, "{\"error\":{\"code\":");
	buf_put_json_string(b, code, strlen(code));
	PUT_LIT(b, ",\"message\":");
	buf_put_json_string(b, message, strlen(message));
	PUT_LIT(b, "}}");
}
