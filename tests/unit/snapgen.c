/* snapgen.c - random /v1/worlds snapshot bodies for the suites (snapgen.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shotgen.h"
#include "snapgen.h"

#define below shotgen_below

/* Faults left to put in the body being made (a bad body gets one, so that
 * the fault alone decides whether the tree path refuses it). */
static int faults_left;

/* Whether to put the fault here: with odds 1/n while one is left. */
static int fault(int bad, unsigned n)
{
	if (!bad || faults_left == 0 || below(n) != 0)
		return 0;
	faults_left--;
	return 1;
}

/* A key and its colon, whitespace around. */
static void key(struct sb *b, const char *k)
{
	shotgen_ws(b);
	sb_putc(b, '"');
	sb_puts(b, k);
	sb_putc(b, '"');
	shotgen_ws(b);
	sb_putc(b, ':');
	shotgen_ws(b);
}

/* Spellings the tree path reads as numbers (many refused where they land). */
static const char *const odd_numbers[] = {
	"-0", "0", "0.0", "-0.0", "0e0", "1E+2", "1e-7", "123456789012345678901234567890",
	"4.9e-324", "3.4028234e38", "-3.4028234663852886e38", "3.40282347e38", "1e39", "1e-45",
	"1e400", "-1e400", "0.1e1", "9007199254740993", "9007199254740992", "-1", "31", "32",
	"2.5", "\"1\"", "null", "true", "[]", "{}",
};

/* A number: usually v, now and then (bad) an odd spelling or value. */
static void num(struct sb *b, double v, int bad)
{
	if (fault(bad, 60))
		sb_puts(b, odd_numbers[below(sizeof(odd_numbers) / sizeof(odd_numbers[0]))]);
	else
		shotgen_num(b, v);
}

/* n numbers [..]; nonneg: each >= 0 (half extents); nonzero: not all zero. */
static void nums(struct sb *b, int n, int nonneg, int nonzero, int bad)
{
	int k, m = n;

	if (fault(bad, 80))
		m = n + (below(2) ? 1 : -1);	/* refused: one too many or few */
	sb_putc(b, '[');
	for (k = 0; k < m; k++) {
		double v = shotgen_value();

		if (nonneg)
			v = fabs(v);
		if (nonzero && k == 0)
			v = copysign(1 + fabs(v), v);
		shotgen_ws(b);
		num(b, v, bad);
		shotgen_ws(b);
		if (k + 1 < m)
			sb_putc(b, ',');
	}
	sb_putc(b, ']');
}

static void id(struct sb *b, int bad)
{
	static const char *const pieces[] = { "a", "z", "-", "_", "7", "player", "head", "\\u0041",
					      "\\\"", "\\\\", "\\/", "\\n", "\xc3\xa9",
					      "\\ud83d\\ude00" };
	unsigned n = 1 + below(5);

	if (fault(bad, 40))
		n = below(2) ? 0 : 129;	/* refused: "" and 129 bytes */
	else if (below(60) == 0)
		n = 128;
	shotgen_id(b, n, pieces, sizeof(pieces) / sizeof(pieces[0]));
}

static void shuffle(int *order, int n)
{
	int k;

	for (k = n - 1; k > 0; k--) {
		int j = (int)below((unsigned)k + 1), t = order[k];

		order[k] = order[j];
		order[j] = t;
	}
}

/* One hitbox: sphere, capsule or box (bad: now and then a mesh), members
 * in random order. */
static void hitbox(struct sb *b, int bad)
{
	static const char *const shapes[] = { "\"sphere\"", "\"capsule\"", "\"box\"", "\"mesh\"",
					      "\"sph\\u0065re\"", "\"cube\"" };
	/* 0 id, 1 shape, 2 center, 3 radius, 4 a, 5 b, 6 half_extents, 7 rotation, 8 mesh */
	static const unsigned members[] = { 1u << 2 | 1u << 3, 1u << 4 | 1u << 5 | 1u << 3,
					    1u << 2 | 1u << 6 | 1u << 7, 1u << 8 };
	int order[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 }, k, first = 1;
	unsigned shape = below(3), have;

	if (fault(bad, 30))
		shape = 3 + below(3);
	have = 3u | members[shape < 4 ? shape : 0];
	if (shape == 2 && below(2))
		have &= ~(1u << 7);	/* rotation is optional */
	if (fault(bad, 40))
		have ^= 1u << below(9);	/* a member missing or one too many */
	shuffle(order, 9);
	sb_putc(b, '{');
	for (k = 0; k < 9; k++) {
		int m = order[k];

		if (!(have & 1u << m))
			continue;
		if (!first)
			sb_putc(b, ',');
		first = 0;
		if (fault(bad, 200)) {	/* null: absent for the tree path */
			key(b, m == 0 ? "id" : m == 3 ? "radius" : "rotation");
			sb_puts(b, "null");
			continue;
		}
		switch (m) {
		case 0: key(b, "id"); id(b, bad); break;
		case 1: key(b, "shape"); sb_puts(b, shapes[shape]); break;
		case 2: key(b, "center"); nums(b, 3, 0, 0, bad); break;
		case 3:
			key(b, "radius");
			num(b, fault(bad, 40) ? -shotgen_unit() : fabs(shotgen_value()), bad);
			break;
		case 4: key(b, "a"); nums(b, 3, 0, 0, bad); break;
		case 5: key(b, "b"); nums(b, 3, 0, 0, bad); break;
		case 6: key(b, "half_extents"); nums(b, 3, !(fault(bad, 30)), 0, bad); break;
		case 7:
			key(b, "rotation");
			if (fault(bad, 30))
				sb_puts(b, "[0,-0,0.0,0e5]");	/* refused: zero */
			else
				nums(b, 4, 0, 1, bad);
			break;
		default: key(b, "mesh"); sb_puts(b, "\"cube\""); break;
		}
		shotgen_ws(b);
	}
	sb_putc(b, '}');
}

/* One entity of n hitboxes, its members in random order. */
static void entity(struct sb *b, unsigned n, unsigned ent, int bad)
{
	int order[3] = { 0, 1, 2 }, k, first = 1;
	unsigned h;
	char t[32];

	shuffle(order, 3);
	sb_putc(b, '{');
	for (k = 0; k < 3; k++) {
		int m = order[k];

		if (m == 1 && below(3) == 0)
			continue;	/* layer is optional */
		if (m != 1 && fault(bad, 100))
			continue;	/* refused: id or hitboxes missing */
		if (!first)
			sb_putc(b, ',');
		first = 0;
		if (m == 0) {
			key(b, "id");
			if (below(8)) {	/* unique, but for the rare repeat */
				snprintf(t, sizeof(t), "\"e%u\"", below(300) ? ent : 0);
				sb_puts(b, t);
			} else {
				id(b, bad);
			}
		} else if (m == 1) {
			key(b, "layer");
			if (fault(bad, 30))
				sb_puts(b, below(2) ? "32" : "1.5");
			else
				shotgen_num(b, below(32));
		} else {
			key(b, "hitboxes");
			sb_putc(b, '[');
			for (h = 0; h < n; h++) {
				shotgen_ws(b);
				hitbox(b, bad);
				shotgen_ws(b);
				if (h + 1 < n)
					sb_putc(b, ',');
			}
			sb_putc(b, ']');
		}
		shotgen_ws(b);
	}
	sb_putc(b, '}');
}

void snapgen_body(struct sb *b, size_t max_ents, size_t max_hbs, int bad)
{
	int order[3] = { 0, 1, 2 }, k;
	unsigned n = below(4) ? below(6) : below(70), e, total = 0;
	char t[32];

	faults_left = bad ? 1 : 0;
	if (!bad && n > max_ents)
		n = (unsigned)max_ents;
	shuffle(order, 3);
	shotgen_ws(b);
	sb_putc(b, '{');
	for (k = 0; k < 3; k++) {
		if (k)
			sb_putc(b, ',');
		switch (order[k]) {
		case 0:
			key(b, "tick");
			snprintf(t, sizeof(t), "%u", below(1000000));
			sb_puts(b, below(10) ? t : odd_numbers[below(20)]);
			break;
		case 1: key(b, "time_ms"); num(b, (shotgen_unit() - 0.3) * 1e6, bad); break;
		default:
			key(b, "entities");
			sb_putc(b, '[');
			for (e = 0; e < n; e++) {
				unsigned nh = below(3) ? below(26) : below(4);

				if (!bad && total + nh > max_hbs)
					nh = (unsigned)max_hbs - total;
				total += nh;
				shotgen_ws(b);
				entity(b, nh, e, bad);
				shotgen_ws(b);
				if (e + 1 < n)
					sb_putc(b, ',');
			}
			sb_putc(b, ']');
		}
		shotgen_ws(b);
	}
	sb_putc(b, '}');
	shotgen_ws(b);
}
