#include "http_impl.h"
#include <stdio.h>
int http_ev_start(struct http_server *s, char *err, size_t errlen)
{
	snprintf(err, errlen, "epoll engine: not yet");
	return -1;
}
void http_ev_stop(struct http_server *s, unsigned grace_ms)
{
}
