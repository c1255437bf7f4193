/* test_access_log.c - access-log lines: path escaping and cutting, remote
 * addresses, the formatted line against snprintf as the oracle. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "access_log.h"
#include "log.h"

START_TEST(test_escape_plain_and_special)
{
	char out[64];
	size_t n = access_escape_path(out, sizeof(out), "/v1/a\"b\\c d\x01\xff");

	ck_assert_uint_eq(n, strlen("/v1/a\\x22b\\x5cc\\x20d\\x01\\xff"));
	ck_assert(memcmp(out, "/v1/a\\x22b\\x5cc\\x20d\\x01\\xff", n) == 0);
}
END_TEST

START_TEST(test_escape_cut)
{
	char out[16], raw[100];
	size_t n;

	memset(raw, 'a', sizeof(raw) - 1);
	raw[sizeof(raw) - 1] = '\0';
	n = access_escape_path(out, sizeof(out), raw);
	ck_assert_uint_le(n, sizeof(out));
	ck_assert(memcmp(out + n - 3, "...", 3) == 0);
}
END_TEST

START_TEST(test_remote)
{
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;
	char out[ACCESS_REMOTE_MAX];

	memset(&a4, 0, sizeof(a4));
	a4.sin_family = AF_INET;
	inet_pton(AF_INET, "10.1.2.3", &a4.sin_addr);
	access_remote((const struct sockaddr *)&a4, out);
	ck_assert_str_eq(out, "10.1.2.3");
	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "::1", &a6.sin6_addr);
	access_remote((const struct sockaddr *)&a6, out);
	ck_assert_str_eq(out, "::1");
	access_remote(NULL, out);
	ck_assert_str_eq(out, "-");
}
END_TEST

/* Random fields: the line equals what snprintf makes of them, also when cut. */
START_TEST(test_format_matches_snprintf)
{
	static const char *const methods[] = { "GET", "POST", "DELETE", "PUT" };
	unsigned seed = 12345;
	int i;

	for (i = 0; i < 2000; i++) {
		char path[40], want[400], got[400];
		struct access_fields f;
		size_t cap, n, k, plen = (size_t)(rand_r(&seed) % 39);
		int w;

		for (k = 0; k < plen; k++)
			path[k] = (char)('a' + rand_r(&seed) % 26);
		path[plen] = '\0';
		f = (struct access_fields){ methods[rand_r(&seed) % 4], path, plen,
					    rand_r(&seed) % 600,
					    (size_t)rand_r(&seed) * (size_t)rand_r(&seed),
					    (uint64_t)rand_r(&seed) << (rand_r(&seed) % 30), "127.0.0.1" };
		w = snprintf(want, sizeof(want),
			     "access method=%s path=%s status=%d bytes=%zu us=%llu remote=%s",
			     f.method, path, f.status, f.bytes, (unsigned long long)f.us, f.remote);
		cap = i % 3 ? sizeof(got) : (size_t)(rand_r(&seed) % 80);
		n = access_format(got, cap, &f);
		ck_assert_uint_eq(n, (size_t)w < cap ? (size_t)w : cap);
		ck_assert(memcmp(got, want, n) == 0);
	}
}
END_TEST

/* The escape of random paths (plain runs, specials, bytes >= 0x80, all
 * lengths and room) equals a byte-at-a-time reference. */
static size_t escape_ref(char *out, size_t cap, const char *raw)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (; *raw && n + 5 < cap; raw++) {
		unsigned char c = (unsigned char)*raw;

		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		} else {
			out[n++] = (char)c;
		}
	}
	if (*raw) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	return n;
}

START_TEST(test_escape_matches_reference)
{
	static const char specials[] = { ' ', '"', '\\', 0x01, 0x1f, 0x7f, (char)0x80, (char)0xff };
	unsigned seed = 777;
	int i;

	for (i = 0; i < 20000; i++) {
		char raw[300], want[200], got[200];
		size_t len = (size_t)(rand_r(&seed) % 299), cap = 6 + (size_t)(rand_r(&seed) % 194), k, n;

		for (k = 0; k < len; k++)
			raw[k] = rand_r(&seed) % 8 ? (char)('!' + rand_r(&seed) % 94) :
						     specials[rand_r(&seed) % sizeof(specials)];
		raw[len] = '\0';
		n = escape_ref(want, cap, raw);
		ck_assert_uint_eq(access_escape_path(got, cap, raw), n);
		ck_assert(memcmp(got, want, n) == 0);
	}
}
END_TEST

/* The timestamp's date and time (formatted once a second per thread) are
 * gmtime's for the same second. */
START_TEST(test_timestamp_is_utc)
{
	int i;

	for (i = 0; i < 3; i++) {
		char ts[27], a[32], b[32];
		time_t t0 = time(NULL), t1;
		struct tm tm;

		log_timestamp(ts);
		t1 = time(NULL);
		strftime(a, sizeof(a), "%Y-%m-%dT%H:%M:%S", gmtime_r(&t0, &tm));
		strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", gmtime_r(&t1, &tm));
		ck_assert_msg(memcmp(ts, a, 19) == 0 || memcmp(ts, b, 19) == 0, "%.27s vs %s", ts, a);
		ck_assert(ts[19] == '.' && ts[26] == 'Z');
		if (i == 1) {
			const struct timespec nap = { 1, 100000000L };	/* into the next second */

			nanosleep(&nap, NULL);
		}
	}
}
END_TEST

static Suite *access_log_suite(void)
{
	Suite *s = suite_create("access_log");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_escape_plain_and_special);
	tcase_add_test(tc, test_escape_cut);
	tcase_add_test(tc, test_remote);
	tcase_add_test(tc, test_format_matches_snprintf);
	tcase_add_test(tc, test_escape_matches_reference);
	tcase_add_test(tc, test_timestamp_is_utc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(access_log_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
