/* log.c - leveled logging to stderr with a buffered, lock-protected path for
 * access lines (see log.h for the contract). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const level_names[] = { "debug", "info", "warn", "error" };

int log_level_parse(const char *s, enum log_level *out)
{
	size_t i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	if (strcmp(s, "warning") == 0) {
		*out = LOG_WARN;
		return 0;
	}
	return -1;
}

const char *log_level_name(enum log_level l)
{
	return (unsigned)l < 4 ? level_names[l] : "?";
}

static void put2(char *p, unsigned v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
}

/*
 * UTC calendar date from days since 1970-01-01, without gmtime_r (glibc's
 * takes a process-wide lock). Howard Hinnant, "chrono-Compatible Low-Level
 * Date Algorithms", civil_from_days.
 */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	yoe = z - era * 146097;
	yoe = (yoe - yoe / 1460 + yoe / 36524 - yoe / 146096) / 365;
	*y = yoe + era * 400;
	doy = (z - era * 146097) - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	if (*m <= 2)
		(*y)++;
}

void log_timestamp(char out[27])
{
	/* the date and time to the second, formatted once per second per thread */
	static _Thread_local char cached[19];
	static _Thread_local int64_t cached_sec = -1;
	struct timespec ts;
	int64_t days, secs, y;
	unsigned mo, d, us, i;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != cached_sec) {
		days = ts.tv_sec / 86400;
		secs = ts.tv_sec % 86400;
		if (secs < 0) {
			secs += 86400;
			days--;
		}
		civil_from_days(days, &y, &mo, &d);
		if (y < 0 || y > 9999)
			y = 0;
		put2(cached, (unsigned)(y / 100));
		put2(cached + 2, (unsigned)(y % 100));
		cached[4] = '-';
		put2(cached + 5, mo);
		cached[7] = '-';
		put2(cached + 8, d);
		cached[10] = 'T';
		put2(cached + 11, (unsigned)(secs / 3600));
		cached[13] = ':';
		put2(cached + 14, (unsigned)(secs / 60 % 60));
		cached[16] = ':';
		put2(cached + 17, (unsigned)(secs % 60));
		cached_sec = ts.tv_sec;
	}
	memcpy(out, cached, sizeof(cached));
	out[19] = '.';
	us = (unsigned)(ts.tv_nsec / 1000);
	for (i = 0; i < 6; i++) {
		out[25 - i] = (char)('0' + us % 10);
		us /= 10;
	}
	out[26] = 'Z';
}

/* write(2) all of p[0..n), retrying on EINTR and short writes. Errors are
 * dropped: there is nowhere left to report them. */
static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Write out one shard. Caller holds sh->lock; takes l->lock for the write. */
static void flush_shard_locked(struct log *l, struct log_shard *sh)
{
	if (sh->len > 0) {
		pthread_mutex_lock(&l->lock);
		write_all(l->fd, sh->buf, sh->len);
		pthread_mutex_unlock(&l->lock);
		sh->len = 0;
	}
}

/* Write out every shard. Caller holds no lock. */
static void flush_all(struct log *l)
{
	size_t i;

	for (i = 0; i < LOG_SHARDS; i++) {
		pthread_mutex_lock(&l->shards[i].lock);
		flush_shard_locked(l, &l->shards[i]);
		pthread_mutex_unlock(&l->shards[i].lock);
	}
}

static void *flusher_main(void *arg)
{
	struct log *l = arg;
	struct timespec until;

	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += LOG_FLUSH_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&l->wake, &l->lock, &until);
		if (l->stop)
			break;
		pthread_mutex_unlock(&l->lock);
		flush_all(l);
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

int log_start(struct log *l, int fd, enum log_level level, int start_flusher)
{
	pthread_condattr_t ca;

	size_t i;

	l->level = level;
	l->access = 1;
	l->fd = fd;
	l->stop = 0;
	l->flusher_running = 0;
	l->next_shard = 0;
	pthread_mutex_init(&l->lock, NULL);
	for (i = 0; i < LOG_SHARDS; i++) {
		pthread_mutex_init(&l->shards[i].lock, NULL);
		l->shards[i].len = 0;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (start_flusher) {
		if (pthread_create(&l->flusher, NULL, flusher_main, l) != 0)
			goto out_destroy_lock;
		l->flusher_running = 1;
	}
	return 0;

out_destroy_lock:
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	for (i = 0; i < LOG_SHARDS; i++)
		pthread_mutex_destroy(&l->shards[i].lock);
	return -1;
}

void log_stop(struct log *l)
{
	size_t i;

	pthread_mutex_lock(&l->lock);
	l->stop = 1;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	if (l->flusher_running)
		pthread_join(l->flusher, NULL);
	l->flusher_running = 0;
	flush_all(l);
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	for (i = 0; i < LOG_SHARDS; i++)
		pthread_mutex_destroy(&l->shards[i].lock);
}

#define LOG_PREFIX_MAX 34	/* "TIMESTAMP LEVEL ": 27 + 1 + 5 + 1 */

/* "TIMESTAMP LEVEL " into line; returns its length (at most LOG_PREFIX_MAX). */
static size_t line_prefix(char *line, enum log_level level)
{
	const char *name = log_level_name(level);
	size_t n = strlen(name);

	log_timestamp(line);
	line[27] = ' ';
	memcpy(line + 28, name, n);
	line[28 + n] = ' ';
	return 29 + n;
}

void log_msg(struct log *l, enum log_level level, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	size_t n;
	va_list ap;
	int w;

	if (!log_enabled(l, level))
		return;
	n = line_prefix(line, level);
	va_start(ap, fmt);
	w = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (w < 0)
		w = 0;
	n += (size_t)w < sizeof(line) - n - 1 ? (size_t)w : sizeof(line) - n - 2;
	line[n++] = '\n';

	flush_all(l);
	pthread_mutex_lock(&l->lock);
	write_all(l->fd, line, n);
	pthread_mutex_unlock(&l->lock);
}

/* The calling thread's shard of l: drawn round-robin at its first line. */
static struct log_shard *my_shard(struct log *l)
{
	static _Thread_local int index = -1;	/* a cache of the draw, not state */

	if (index < 0) {
		pthread_mutex_lock(&l->lock);
		index = (int)(l->next_shard++ % LOG_SHARDS);
		pthread_mutex_unlock(&l->lock);
	}
	return &l->shards[index];
}

char *log_access_begin(struct log *l, size_t max, struct log_shard **shp)
{
	struct log_shard *sh;

	if (!l->access || !log_enabled(l, LOG_INFO))
		return NULL;
	sh = my_shard(l);
	pthread_mutex_lock(&sh->lock);
	/* the prefix, max bytes and the newline must fit */
	if (sh->len + LOG_PREFIX_MAX + max + 1 > sizeof(sh->buf))
		flush_shard_locked(l, sh);
	*shp = sh;
	return sh->buf + sh->len + line_prefix(sh->buf + sh->len, LOG_INFO);
}

void log_access_end(struct log *l, struct log_shard *sh, char *end)
{
	*end++ = '\n';
	sh->len = (size_t)(end - sh->buf);
	if (sh->len >= LOG_FLUSH_BYTES)
		flush_shard_locked(l, sh);
	pthread_mutex_unlock(&sh->lock);
}
