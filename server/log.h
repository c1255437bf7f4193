/* log.h - leveled, timestamped logging to one file descriptor (stderr).
 *
 * One line per event: "2024-05-01T12:00:00.123456Z LEVEL message\n".
 * Messages (log_msg) are written at once with a single write(2), after any
 * buffered access lines. Access lines (log_access_begin/end) go to one of LOG_SHARDS
 * buffers (a thread keeps the shard it first drew, so threads seldom share a
 * lock or a cache line), written when a shard holds LOG_FLUSH_BYTES or by a
 * flusher thread every LOG_FLUSH_MS, so a busy server pays no system call per
 * request. One thread's lines keep their order; lines of different threads
 * may appear up to LOG_FLUSH_MS out of order (each carries its timestamp).
 * Every write(2) holds the log's lock, so lines are never torn. log_stop
 * writes what is left.
 *
 * Thread-safety: every function except log_start/log_stop may be called from
 * any thread at once; the level is fixed at log_start. Allocate struct log
 * 64-byte aligned (aligned_alloc): its shards are.
 */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

#include <pthread.h>
#include <stddef.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* A shard per thread up to 16 threads, and a write(2) (under the log's one
 * lock) per 48 KiB of lines: a busy 8-thread server writes ~80 MB/s. */
#define LOG_SHARDS	16
#define LOG_BUF_BYTES	(64 * 1024)	/* per shard */
#define LOG_FLUSH_BYTES	(48 * 1024)
#define LOG_FLUSH_MS	200
#define LOG_LINE_MAX	1024	/* longer lines are truncated */

struct log_shard {
	pthread_mutex_t lock;		/* guards len, buf */
	size_t len;
	char buf[LOG_BUF_BYTES];
} __attribute__((aligned(64)));

struct log {
	enum log_level level;
	int access;			/* access lines (at info level) on: 1 by log_start */
	int fd;
	pthread_mutex_t lock;		/* guards stop and every write(2) to fd */
	pthread_cond_t wake;
	pthread_t flusher;
	int flusher_running;
	int stop;
	unsigned next_shard;		/* under lock: the next thread's shard */
	struct log_shard shards[LOG_SHARDS];
};

/* Parse "debug", "info", "warn" or "error" (also "warning"). 0 or -1. */
int log_level_parse(const char *s, enum log_level *out);
const char *log_level_name(enum log_level l);

/* Initialise l writing to fd at level; starts the flusher thread when
 * start_flusher is set (without it, access lines wait for a full buffer,
 * a message, or log_stop). 0, or -1 when the thread cannot be created. */
int log_start(struct log *l, int fd, enum log_level level, int start_flusher);
/* Stop the flusher, write what is buffered, destroy the lock. */
void log_stop(struct log *l);

static inline int log_enabled(const struct log *l, enum log_level level)
{
	return level >= l->level;
}

/* One printf-style event line at level (dropped below the log's level). */
void log_msg(struct log *l, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * One access line at info level, written in place in the calling thread's
 * shard (no copy; a write(2) only when the shard is over LOG_FLUSH_BYTES):
 * log_access_begin locks the shard, writes the timestamp and level and
 * returns where the message goes, with room for max bytes (max <=
 * LOG_LINE_MAX - 64; the caller writes at most that, without a newline);
 * log_access_end(l, sh, end) ends the line at end and unlocks. NULL, and
 * nothing to end, below info.
 */
char *log_access_begin(struct log *l, size_t max, struct log_shard **sh);
void log_access_end(struct log *l, struct log_shard *sh, char *end);

/* Write the timestamp "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" (27 bytes, no NUL) of
 * the current real time to out, which must hold 27 bytes. */
void log_timestamp(char out[27]);

#endif
