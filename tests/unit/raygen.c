/* raygen.c - random mesh ray and segment bodies for the suites (raygen.h). */
#include <math.h>
#include <stdio.h>

#include "raygen.h"
#include "shotgen.h"

/* Values of the wrong type or none. */
static const char *const odd_values[] = { "null", "\"1\"", "true", "[]", "{}", "[1,2]", "[1,2,3,4]" };

/* shotgen_vec, or now and then (bad) a value of the wrong type. */
static void gen_vec(struct sb *b, const double *base, int nonzero, int bad)
{
	if (bad && shotgen_below(80) == 0) {
		sb_puts(b, odd_values[shotgen_below(sizeof(odd_values) / sizeof(odd_values[0]))]);
		return;
	}
	shotgen_vec(b, base, nonzero, bad);
}

/* The members of one ray or segment, in random order, with no braces. */
static void gen_members(struct sb *b, int segments, int bad)
{
	int order[3] = { 0, 1, 2 }, n = segments ? 2 : 3, k, first = 1;
	double start[3], end[3];

	for (k = 0; k < 3; k++) {
		start[k] = shotgen_value();
		end[k] = start[k] + (k == 0 ? 1 + fabs(shotgen_value()) : shotgen_value());
	}
	shotgen_shuffle(order, n);
	for (k = 0; k < n; k++) {
		int f = order[k];

		if (f == 2 && shotgen_below(2))
			continue;	/* max_distance, half the time */
		if (f < 2 && bad && shotgen_below(60) == 0)
			continue;	/* refused: a required member missing */
		if (!first)
			sb_putc(b, ',');
		first = 0;
		shotgen_ws(b);
		if (segments) {
			sb_puts(b, f == 0 ? "\"start\"" : "\"end\"");
			shotgen_ws(b);
			sb_putc(b, ':');
			shotgen_ws(b);
			gen_vec(b, f == 0 ? start : (bad && shotgen_below(30) == 0) ? start : end, 0, bad);
		} else if (f == 0) {
			sb_puts(b, "\"origin\":");
			shotgen_ws(b);
			gen_vec(b, NULL, 0, bad);
		} else if (f == 1) {
			sb_puts(b, "\"direction\"");
			shotgen_ws(b);
			sb_puts(b, ":");
			gen_vec(b, NULL, 1, bad);
		} else {
			sb_puts(b, "\"max_distance\":");
			shotgen_num_bad(b, shotgen_below(4) ? shotgen_unit() * 1e4 + 1e-6
						    : pow(10, (double)shotgen_below(600) - 300), bad);
		}
		shotgen_ws(b);
	}
	if (bad && shotgen_below(100) == 0)
		sb_puts(b, shotgen_below(2) ? ",\"origin\":[0,0,0]" : ",\"foo\":1");
}

/* One ray or segment object. */
static void gen_item(struct sb *b, int segments, int bad)
{
	sb_putc(b, '{');
	gen_members(b, segments, bad);
	sb_putc(b, '}');
}

/* A transform: position/rotation/scale (each optional) or a matrix. */
static void gen_transform(struct sb *b, int bad)
{
	char t[160];

	switch (shotgen_below(bad ? 6 : 5)) {
	case 0:
		sb_puts(b, "{}");
		break;
	case 1:
		sb_puts(b, "{\"position\":");
		gen_vec(b, NULL, 0, bad);
		sb_putc(b, '}');
		break;
	case 2:
		sb_puts(b, "{\"rotation\":[");
		shotgen_num_bad(b, shotgen_unit() + 0.1, bad);
		snprintf(t, sizeof(t), ",%.9g,%.9g,%.9g],\"scale\":[", shotgen_unit() - 0.5,
			 shotgen_unit() - 0.5, shotgen_unit() - 0.5);
		sb_puts(b, t);
		shotgen_num_bad(b, shotgen_below(2) ? 2 : -1.5, bad);
		sb_puts(b, ",1,0.5], \"position\" : [1,2,3]}");
		break;
	case 3:
		sb_puts(b, "{\"matrix\":[");
		shotgen_num_bad(b, 1 + shotgen_unit(), bad);
		snprintf(t, sizeof(t), ",0,0,%.6g, 0,%.6g,0,0, 0,0,%s,-1, 0,0,0,1]}",
			 shotgen_value(), 0.5 + shotgen_unit(), shotgen_below(2) ? "1" : "-2");
		sb_puts(b, t);
		break;
	case 4:
		sb_puts(b, "{\"scale\":[1,1,1],\"rotation\":[0,0,1,0]}");
		break;
	default:	/* refused */
		sb_puts(b, shotgen_below(2) ? "{\"scale\":[0,1,1]}" :
			   shotgen_below(2) ? "{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,2]}" :
			   shotgen_below(2) ? "{\"position\":[1,2,3],\"matrix\":[]}" : "[]");
	}
}

/* A body of either form: single, the item's members at the top level (now
 * and then, when bad, beside a batch too). */
static void gen_body(struct sb *b, size_t max_batch, int segments, int bad, int single)
{
	static const char *const modes[] = { "closest", "all", "any", "cl\\u006fsest", "nearest" };
	static const char *const faces[] = { "hit", "cull", "c\\u0075ll", "both" };
	unsigned n = 1 + (shotgen_below(8) ? shotgen_below(6) : shotgen_below(70)), k, m;
	int order[5] = { 0, 1, 2, 3, 4 }, first = 1, all = shotgen_below(3) == 0;

	if (!bad && n > max_batch)
		n = (unsigned)max_batch;
	shotgen_shuffle(order, 5);
	shotgen_ws(b);
	sb_putc(b, '{');
	for (k = 0; k < 5; k++) {
		int f = order[k];
		char t[16];

		if (f > 0 && shotgen_below(3) && !(f == 1 && all))
			continue;	/* an option, a third of the time */
		if (f == 2 && !all && !bad)
			continue;	/* max_hits: only with mode all */
		if (!first)
			sb_putc(b, ',');
		first = 0;
		shotgen_ws(b);
		switch (f) {
		case 0:
			if (single) {
				gen_members(b, segments, bad);
				if (!(bad && shotgen_below(20) == 0))
					break;
				sb_putc(b, ',');	/* refused: both forms */
				n = 1;
			}
			sb_puts(b, segments ? "\"segments\":" : "\"rays\":");
			shotgen_ws(b);
			sb_putc(b, '[');
			for (m = 0; m < n; m++) {
				shotgen_ws(b);
				gen_item(b, segments, bad);
				shotgen_ws(b);
				if (m + 1 < n)
					sb_putc(b, ',');
			}
			sb_putc(b, ']');
			break;
		case 1:
			sb_puts(b, "\"mode\":\"");
			sb_puts(b, all ? "all" : modes[shotgen_below(bad ? 5 : 4)]);
			sb_putc(b, '"');
			break;
		case 2:
			sb_puts(b, "\"max_hits\":");
			if (bad) {
				shotgen_num(b, shotgen_below(70000));
			} else {
				snprintf(t, sizeof(t), "%u", 1 + shotgen_below(65536));
				sb_puts(b, t);
			}
			break;
		case 3:
			sb_puts(b, "\"backfaces\":\"");
			sb_puts(b, faces[shotgen_below(bad ? 4 : 3)]);
			sb_putc(b, '"');
			break;
		default:
			sb_puts(b, "\"transform\":");
			shotgen_ws(b);
			gen_transform(b, bad);
		}
		shotgen_ws(b);
	}
	sb_putc(b, '}');
	shotgen_ws(b);
}

void raygen_body(struct sb *b, size_t max_batch, int segments, int bad)
{
	gen_body(b, max_batch, segments, bad, 0);
}

void raygen_single_body(struct sb *b, int segments, int bad)
{
	gen_body(b, 1, segments, bad, 1);
}
