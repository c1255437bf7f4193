/* shotgen.c - random /v1/worlds shot bodies for the suites (shotgen.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shotgen.h"

static struct xs rng = { 0x9e3779b97f4a7c15ull };


unsigned shotgen_below(unsigned n)
{
	return (unsigned)(xs_next(&rng) % n);
}

double shotgen_unit(void)
{
	return (double)(xs_next(&rng) >> 11) / 9007199254740992.0;
}

void shotgen_shuffle(int *order, int n)
{
	for (int k = n - 1; k > 0; k--) {
		int j = (int)shotgen_below((unsigned)k + 1), t = order[k];

		order[k] = order[j];
		order[j] = t;
	}
}

void shotgen_ws(struct sb *b)
{
	static const char *const w[] = { " ", "\n", "\t", "\r\n  " };

	while (shotgen_below(6) == 0)
		sb_puts(b, w[shotgen_below(4)]);
}

/* Spellings the tree path reads as numbers (some refused where they land). */
static const char *const odd_numbers[] = {
	"-0", "0", "0.0", "-0.0", "0e0", "1E+2", "1e-7", "123456789012345678901234567890",
	"0.000000000000000000001", "4.9e-324", "2.2250738585072014e-308", "3.4028234e38",
	"-3.4028234663852886e38", "3.40282347e38", "1e39", "1e-45", "1e400", "-1e400",
	"0.1e1", "100e-2", "9007199254740993", "1.00000000000000000000000000001",
};

/* v spelt one of many ways (the value is whatever the text says). */
void shotgen_num(struct sb *b, double v)
{
	char t[96];

	switch (shotgen_below(9)) {
	case 0: snprintf(t, sizeof(t), "%.17g", v); break;
	case 1: snprintf(t, sizeof(t), fabs(v) < 1e20 ? "%.3f" : "%.3e", v); break;
	case 2: snprintf(t, sizeof(t), "%.12e", v); break;
	case 3: snprintf(t, sizeof(t), "%.6E", v); break;
	case 4: snprintf(t, sizeof(t), "%lld", (long long)(fabs(v) < 1e15 ? v : 7)); break;
	case 5: snprintf(t, sizeof(t), "%.25g", v); break;
	case 6:
		snprintf(t, sizeof(t), "%.15g", v);
		if (!strchr(t, 'e'))
			strcat(t, shotgen_below(2) ? "e0" : "E-00");
		break;
	default: snprintf(t, sizeof(t), "%.9g", v); break;
	}
	sb_puts(b, t);
}

/* A number: usually v, now and then (bad) an odd spelling. */
void shotgen_num_bad(struct sb *b, double v, int bad)
{
	if (bad && shotgen_below(40) == 0)
		sb_puts(b, odd_numbers[shotgen_below(sizeof(odd_numbers) / sizeof(odd_numbers[0]))]);
	else
		shotgen_num(b, v);
}

/* A float32-range value of some magnitude. */
double shotgen_value(void)
{
	switch (shotgen_below(4)) {
	case 0: return (shotgen_unit() - 0.5) * 2000;
	case 1: return (shotgen_unit() - 0.5) * pow(10, (double)shotgen_below(76) - 38);
	case 2: return (double)(int)shotgen_below(100) - 50;
	default: return (shotgen_unit() - 0.5) * 20;
	}
}

void shotgen_vec(struct sb *b, const double *base, int nonzero, int bad)
{
	int k;

	sb_putc(b, '[');
	for (k = 0; k < 3; k++) {
		double v = base ? base[k] : shotgen_value();

		if (nonzero && !bad && k == 0 && !base)
			v = copysign(1 + fabs(v), v);	/* a valid direction is never zero */
		shotgen_ws(b);
		shotgen_num_bad(b, v, bad);
		shotgen_ws(b);
		if (k < 2)
			sb_putc(b, ',');
	}
	sb_putc(b, ']');
}

void shotgen_id(struct sb *b, unsigned n, const char *const *pieces, size_t npieces)
{
	unsigned k;

	sb_putc(b, '"');
	if (n >= 128) {
		for (k = 0; k < n; k++)
			sb_putc(b, 'x');
	} else {
		for (k = 0; k < n; k++)
			sb_puts(b, pieces[shotgen_below((unsigned)npieces)]);
	}
	sb_putc(b, '"');
}

static void gen_id(struct sb *b, int bad)
{
	/* "},{" and "}, {": where a split parse might cut, inside a string */
	static const char *const pieces[] = { "a", "z", "-", "_", "7", "player", "\\u0041",
					      "\\\"", "\\\\", "\\/", "\\n", "\xc3\xa9", "\\ud83d\\ude00",
					      "},{", "}, {" };
	unsigned n = 1 + shotgen_below(6);

	if (bad && shotgen_below(20) == 0)
		n = shotgen_below(2) ? 0 : 129;	/* refused: "" and 129 bytes */
	else if (shotgen_below(30) == 0)
		n = 128;
	shotgen_id(b, n, pieces, sizeof(pieces) / sizeof(pieces[0]));
}

/* One shot, its members in random order. */
static void gen_shot(struct sb *b, int bad)
{
	int order[6] = { 0, 1, 2, 3, 4, 5 }, k, m, first = 1;

	shotgen_shuffle(order, 6);
	sb_putc(b, '{');
	for (k = 0; k < 6; k++) {
		int f = order[k];

		if (f >= 2 && shotgen_below(2))
			continue;	/* the optional ones, half the time */
		if (f < 2 && bad && shotgen_below(60) == 0)
			continue;	/* refused: origin or direction missing */
		if (!first)
			sb_putc(b, ',');
		first = 0;
		shotgen_ws(b);
		switch (f) {
		case 0: sb_puts(b, "\"origin\""); shotgen_ws(b); sb_putc(b, ':'); shotgen_ws(b); shotgen_vec(b, NULL, 0, bad); break;
		case 1: sb_puts(b, "\"direction\":"); shotgen_ws(b); shotgen_vec(b, NULL, 1, bad); break;
		case 2:
			sb_puts(b, "\"max_distance\":");
			shotgen_num_bad(b, shotgen_below(4) ? shotgen_unit() * 1e4 + 1e-6
						    : pow(10, (double)shotgen_below(600) - 300), bad);
			break;
		case 3: sb_puts(b, "\"time_ms\":"); shotgen_num_bad(b, (shotgen_unit() - 0.3) * 1e6, bad); break;
		case 4:
			sb_puts(b, "\"ignore\":[");
			for (m = (int)shotgen_below(5) - 1; m >= 0; m--) {
				shotgen_ws(b);
				gen_id(b, bad);
				if (m)
					sb_putc(b, ',');
			}
			sb_putc(b, ']');
			break;
		default:
			sb_puts(b, "\"layers\":[");
			for (m = (int)shotgen_below(4) - 1; m >= 0; m--) {
				unsigned l = shotgen_below(32);

				if (bad && shotgen_below(20) == 0)
					sb_puts(b, shotgen_below(2) ? "32" : "1.5");
				else if (shotgen_below(3) == 0)
					shotgen_num(b, l);
				else {
					char t[8];

					snprintf(t, sizeof(t), "%u", l);
					sb_puts(b, t);
				}
				if (m)
					sb_putc(b, ',');
			}
			sb_putc(b, ']');
		}
		shotgen_ws(b);
	}
	sb_putc(b, '}');
}

/* A batch body for static_only; bad: now and then something refused. */
void shotgen_body(struct sb *b, size_t max_batch, int static_only, int bad)
{
	static const char *const modes[] = { "closest", "all", "any", "cl\\u006fsest", "nearest" };
	unsigned n = 1 + (shotgen_below(8) ? shotgen_below(6) : shotgen_below(70)), k;
	unsigned top = shotgen_below(3);

	if (!bad && n > max_batch)
		n = (unsigned)max_batch;
	shotgen_ws(b);
	sb_putc(b, '{');
	shotgen_ws(b);
	if (top == 1) {
		sb_puts(b, "\"mode\":\"all\",\"max_hits\":");
		if (bad) {
			shotgen_num(b, shotgen_below(70000));
		} else {
			char t[16];

			snprintf(t, sizeof(t), "%u", 1 + shotgen_below(65536));
			sb_puts(b, t);
		}
		sb_putc(b, ',');
	}
	sb_puts(b, "\"shots\":");
	shotgen_ws(b);
	sb_putc(b, '[');
	for (k = 0; k < n; k++) {
		shotgen_ws(b);
		gen_shot(b, bad);
		shotgen_ws(b);
		if (k + 1 < n)
			sb_putc(b, ',');
	}
	sb_putc(b, ']');
	if (top == 2) {
		unsigned mi = bad ? shotgen_below(5) : shotgen_below(4);

		if (!bad && !static_only && mi == 2)
			mi = 0;
		sb_puts(b, ",\"mode\":\"");
		sb_puts(b, modes[mi]);
		sb_putc(b, '"');
	}
	shotgen_ws(b);
	sb_putc(b, '}');
	shotgen_ws(b);
}
