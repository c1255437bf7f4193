/* test_access_log.c - access-log lines: path escaping and cutting, remote
 * addresses, the formatted line against snprintf as the oracle. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
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

/* The escape, a byte at a time: a byte is written only while room for
 * "..." stays after it; "..." ends a cut path. */
static size_t escape_ref(char *out, size_t cap, const char *raw)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (; *raw; raw++) {
		unsigned char c = (unsigned char)*raw;
		int special = c <= 0x20 || c >= 0x7f || c == '"' || c == '\\';

		if (n + (special ? 4 : 1) + 3 > cap)
			break;
		if (special) {
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

/* A random path of len bytes: mostly printable, some bytes to escape. */
static void random_path(char *raw, size_t len, unsigned *seed)
{
	static const char specials[] = { ' ', '"', '\\', 0x01, 0x1f, 0x7f, (char)0x80, (char)0xff };
	size_t k;

	for (k = 0; k < len; k++)
		raw[k] = rand_r(seed) % 8 ? (char)('!' + rand_r(seed) % 94) :
					    specials[rand_r(seed) % sizeof(specials)];
	raw[len] = '\0';
}

/* Random fields, some past their bounds: the line equals what snprintf
 * makes of them, the path escaped by the reference, method and remote cut
 * at their bounds; never more than ACCESS_LINE_MAX bytes, nothing written
 * past the line. */
START_TEST(test_format_matches_snprintf)
{
	static const char *const methods[] = { "GET", "POST", "DELETE", "PUT",
					       "AVERYLONGMETHODNAMEPASTSIXTEEN" };
	static const char *const remotes[] = { "127.0.0.1", "::1", "-",
					       "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255xxxxxx" };
	unsigned seed = 12345;
	int i;

	for (i = 0; i < 5000; i++) {
		char path[400], esc[ACCESS_PATH_MAX], want[1200], got[ACCESS_LINE_MAX + 16];
		char rid[ACCESS_RID_MAX + 40];
		struct access_fields f;
		size_t n, elen;
		int w, k;

		random_path(path, (size_t)(rand_r(&seed) % (i % 4 ? 40 : 399)), &seed);
		elen = escape_ref(esc, sizeof(esc), path);
		f = (struct access_fields){ methods[rand_r(&seed) % 5], path, rand_r(&seed) % 600,
					    (size_t)rand_r(&seed) * (size_t)rand_r(&seed),
					    (uint64_t)rand_r(&seed) << (rand_r(&seed) % 34),
					    remotes[rand_r(&seed) % 4], rid, 0 };
		/* a request id (X-Request-Id) on half of them, some past the bound */
		f.rid_len = i % 2 ? 0 : 1 + (size_t)rand_r(&seed) % (i % 10 ? 30 : sizeof(rid));
		for (k = 0; k < (int)f.rid_len; k++)
			rid[k] = (char)('!' + rand_r(&seed) % 94);
		if (i % 50 == 0) {	/* the widest numbers */
			f.bytes = SIZE_MAX;
			f.us = UINT64_MAX;
		}
		w = snprintf(want, sizeof(want),
			     "access method=%.16s path=%.*s status=%d bytes=%zu us=%llu remote=%.46s%s%.*s",
			     f.method, (int)elen, esc, f.status, f.bytes, (unsigned long long)f.us,
			     f.remote, f.rid_len ? " rid=" : "",
			     (int)(f.rid_len < ACCESS_RID_MAX ? f.rid_len : ACCESS_RID_MAX), rid);
		memset(got, '#', sizeof(got));
		n = access_format(got, &f);
		ck_assert_uint_eq(n, (size_t)w);
		ck_assert_uint_le(n, ACCESS_LINE_MAX);
		ck_assert(memcmp(got, want, n) == 0);
		for (k = ACCESS_LINE_MAX; k < (int)sizeof(got); k++)
			ck_assert_int_eq(got[k], '#');
	}
}
END_TEST

/* The escape of random paths (plain runs, specials, bytes >= 0x80, all
 * lengths and room) equals the byte-at-a-time reference and writes nothing
 * past cap. */
START_TEST(test_escape_matches_reference)
{
	unsigned seed = 777;
	int i;

	for (i = 0; i < 20000; i++) {
		char raw[300], want[200], got[210];
		size_t cap = 3 + (size_t)(rand_r(&seed) % 197), n, k;

		random_path(raw, (size_t)(rand_r(&seed) % 299), &seed);
		n = escape_ref(want, cap, raw);
		memset(got, '#', sizeof(got));
		ck_assert_uint_eq(access_escape_path(got, cap, raw), n);
		ck_assert_uint_le(n, cap);
		ck_assert(memcmp(got, want, n) == 0);
		for (k = cap; k < sizeof(got); k++)
			ck_assert_int_eq(got[k], '#');
	}
}
END_TEST

/* The timestamp's date and time (formatted once a second per thread) are
 * gmtime's for the same second. The bracket reads the clock log_timestamp
 * reads: time() is the kernel's coarse clock, which may still show the
 * second before for a few milliseconds after it has passed. */
static time_t realtime_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec;
}

START_TEST(test_timestamp_is_utc)
{
	int i;

	for (i = 0; i < 3; i++) {
		char ts[27], a[32], b[32];
		time_t t0 = realtime_sec(), t1;
		struct tm tm;

		log_timestamp(ts);
		t1 = realtime_sec();
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

/* Access lines from several threads, short and as long as the room allows,
 * many shard buffers' worth: after log_stop the file holds every line
 * whole, each thread's in order. */
struct log_writer {
	struct log *l;
	int id;
};

static void *log_writer_main(void *arg)
{
	struct log_writer *w = arg;
	int i;

	for (i = 0; i < 3000; i++) {
		char msg[LOG_LINE_MAX];
		int n = snprintf(msg, sizeof(msg), "access t=%d i=%d ", w->id, i);
		int pad = i % 100 == 0 ? LOG_LINE_MAX - 64 - n : i % 37;
		struct log_shard *sh;
		char *p = log_access_begin(w->l, (size_t)(n + pad), &sh);

		ck_assert_ptr_nonnull(p);
		memset(msg + n, 'x', (size_t)pad);
		memcpy(p, msg, (size_t)(n + pad));
		log_access_end(w->l, sh, p + n + pad);
	}
	return NULL;
}

START_TEST(test_log_lines_whole_and_ordered)
{
	FILE *f = tmpfile();
	struct log *l = aligned_alloc(64, sizeof(*l));
	struct log_writer w[4];
	pthread_t th[4];
	int next[4] = { 0, 0, 0, 0 }, lines = 0, t, i;
	char line[LOG_LINE_MAX * 2];

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(log_start(l, fileno(f), LOG_INFO, 1), 0);
	for (t = 0; t < 4; t++) {
		w[t] = (struct log_writer){ l, t };
		ck_assert_int_eq(pthread_create(&th[t], NULL, log_writer_main, &w[t]), 0);
	}
	for (t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	log_stop(l);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		ck_assert_msg(n > 0 && line[n - 1] == '\n', "a torn line");
		ck_assert_uint_le(n, LOG_LINE_MAX);
		ck_assert(line[19] == '.' && line[26] == 'Z');
		ck_assert(memcmp(line + 27, " info access t=", 15) == 0);
		ck_assert_int_eq(sscanf(line + 42, "%d i=%d", &t, &i), 2);
		ck_assert(t >= 0 && t < 4);
		ck_assert_int_eq(i, next[t]);	/* a thread's lines in order, none lost */
		next[t]++;
		lines++;
	}
	ck_assert_int_eq(lines, 4 * 3000);
	fclose(f);
	free(l);
}
END_TEST

/* Below info, begin gives no room and nothing is written. */
START_TEST(test_log_below_info)
{
	FILE *f = tmpfile();
	struct log *l = aligned_alloc(64, sizeof(*l));
	struct log_shard *sh;

	ck_assert_int_eq(log_start(l, fileno(f), LOG_WARN, 0), 0);
	ck_assert_ptr_null(log_access_begin(l, 10, &sh));
	log_stop(l);
	fseek(f, 0, SEEK_END);
	ck_assert_int_eq(ftell(f), 0);
	fclose(f);
	free(l);
}
END_TEST

static Suite *access_log_suite(void)
{
	Suite *s = suite_create("access_log");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);	/* sanitizer builds (TSan: ~10 s) on a loaded machine */
	tcase_add_test(tc, test_escape_plain_and_special);
	tcase_add_test(tc, test_escape_cut);
	tcase_add_test(tc, test_remote);
	tcase_add_test(tc, test_format_matches_snprintf);
	tcase_add_test(tc, test_escape_matches_reference);
	tcase_add_test(tc, test_timestamp_is_utc);
	tcase_add_test(tc, test_log_lines_whole_and_ordered);
	tcase_add_test(tc, test_log_below_info);
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
