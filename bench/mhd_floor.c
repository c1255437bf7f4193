/*
 * mhd_floor.c - the least a libmicrohttpd server can do per request, with
 * collisiond's transport configuration: an internal epoll thread per pool
 * thread, the same connection pool size, and one fixed JSON answer (the
 * harness's nginx body) to any request, its body read and dropped. It is
 * the ceiling of collisiond's HTTP rate on libmicrohttpd, measured beside
 * nginx by bench/http_scale.sh (MHD_FLOOR=build/mhd-floor).
 *
 *   mhd-floor PORT THREADS        runs until SIGTERM or SIGINT
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char ANSWER[] =
	"{\"hit\":true,\"distance\":1.5,\"point\":[12.25,3.5,-40.125],\"normal\":[0.0,1.0,0.0],"
	"\"triangle\":123456,\"mesh\":\"level\",\"query\":\"raycast\",\"t_us\":3,\"request_id\":12345}";

static struct MHD_Response *answer;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *size, void **state)
{
	static int first;

	(void)cls, (void)url, (void)method, (void)version, (void)data;
	if (*state == NULL) {
		*state = &first;
		return MHD_YES;
	}
	if (*size) {
		*size = 0;
		return MHD_YES;
	}
	return MHD_queue_response(c, MHD_HTTP_OK, answer);
}

int main(int argc, char **argv)
{
	struct MHD_Daemon *d;
	unsigned threads;

	if (argc != 3 || (threads = (unsigned)atoi(argv[2])) == 0) {
		fprintf(stderr, "usage: mhd-floor PORT THREADS\n");
		return 2;
	}
	answer = MHD_create_response_from_buffer(sizeof ANSWER - 1, (void *)ANSWER,
						 MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(answer, "Content-Type", "application/json");
	d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC, (uint16_t)atoi(argv[1]),
			     NULL, NULL, on_request, NULL,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
			     MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
			     MHD_OPTION_CONNECTION_LIMIT, 16384u,
			     threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "mhd-floor: cannot start on port %s\n", argv[1]);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (!stop)
		pause();
	MHD_stop_daemon(d);
	MHD_destroy_response(answer);
	return 0;
}
