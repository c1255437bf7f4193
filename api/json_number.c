/* json_number.c - JSON number text to double, bit-identical to strtod (Clinger's fast path). */
#include <float.h>
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;	/* written once under c_locale_once, then read-only */

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Exactly representable powers of ten: 10^22 is the last one (5^22 < 2^53). */
static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * Clinger's fast path (W. D. Clinger, "How to read floating point numbers
 * accurately", PLDI 1990): with an integer mantissa m <= 2^53 and |e| <= 22
 * both m and 10^|e| are exact doubles, so one IEEE multiplication or division
 * gives the correctly rounded m * 10^e, which is what glibc's strtod returns.
 * Needs double arithmetic without excess precision (FLT_EVAL_METHOD 0) and
 * round-to-nearest (the daemon never changes the rounding mode).
 */
static int number_fast(const char *s, size_t len, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	uint64_t m = 0;
	size_t i = 0;
	int neg = 0, nd = 0, e10 = 0, ex = 0, eneg = 0;
	double d;

	if (s[i] == '-') {
		neg = 1;
		i++;
	}
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (m || s[i] != '0') {
			if (++nd > 19)
				return -1;
			m = m * 10 + (uint64_t)(s[i] - '0');
		}
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
			if (m || s[i] != '0') {
				if (++nd > 19)
					return -1;
				m = m * 10 + (uint64_t)(s[i] - '0');
			}
			e10--;
		}
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		for (; i < len; i++) {
			if (ex < 100000)
				ex = ex * 10 + (s[i] - '0');
		}
	}
	if (m == 0) {
		*out = neg ? -0.0 : 0.0;
		return 0;
	}
	e10 += eneg ? -ex : ex;
	if (m > (UINT64_C(1) << 53) || e10 < -22 || e10 > 22)
		return -1;
	d = (double)m;
	d = e10 >= 0 ? d * pow10_exact[e10] : d / pow10_exact[-e10];
	*out = neg ? -d : d;
	return 0;
#else
	return -1;
#endif
}

int json_number(const char *s, size_t len, double *out)
{
	char tmp[JSON_MAX_NUMBER_LEN + 1];

	if (number_fast(s, len, out) == 0)
		return 0;
	if (pthread_once(&c_locale_once, c_locale_init) || c_locale == (locale_t)0)
		return -1;
	if (len > JSON_MAX_NUMBER_LEN)
		len = JSON_MAX_NUMBER_LEN;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*out = strtod_l(tmp, NULL, c_locale);
	return 0;
}

