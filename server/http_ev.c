/* http_ev.c - the epoll engine (--http-engine epoll): an HTTP/1.1 server
 * for plain HTTP, built like nginx's: cfg->threads workers, each with its
 * own epoll instance and its own listening socket (SO_REUSEPORT, so the
 * kernel spreads connections and no lock is taken to accept), nonblocking
 * edge-triggered sockets, and per-connection buffers reused across
 * keep-alive requests. A connection belongs to one worker for its life:
 * nothing on the request path is shared and written but the metrics.
 *
 * Per connection, a small state machine: HEAD (reading a request head into
 * the input buffer), BODY (reading its body: Content-Length straight into
 * the request's buffer, or chunked through http_parse's decoder), WRITE
 * (an answer partly sent: nothing more is read until it has gone). Request
 * logic, answers, deadlines and records are the shared ones of
 * http_request.c and http_respond.c, as under libmicrohttpd.
 */
#include "http_ev_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "log.h"


static const char *reason_phrase(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	case 507: return "Insufficient Storage";
	default: return "Unknown";
	}
}

/* The Date header's value, formatted again only when the second changes. */
static const char *worker_date(struct ev_worker *w)
{
	time_t now = time(NULL);
	struct tm tm;

	if (now != w->date_sec) {
		gmtime_r(&now, &tm);
		strftime(w->date, sizeof(w->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		w->date_sec = now;
	}
	return w->date;
}

/* Free what a request holds; the struct itself is reused. */
static void request_release(struct request *r)
{
	http_body_release(r);
	if (r->raw != r->raw_inline)
		free(r->raw);
	r->raw = NULL;
}

static const char *conn_remote(struct ev_conn *c)
{
	if (!c->remote[0])
		access_remote((const struct sockaddr *)&c->peer, c->remote);
	return c->remote;
}

/* The request is over (answered, or cut): record it, as on_completed does. */
static void request_finish(struct ev_conn *c)
{
	struct http_server *s = c->w->s;
	struct request *r = &c->req;

	if (r->started) {
		http_request_record(s, r, log_enabled(s->p.log, LOG_INFO) ? conn_remote(c) : NULL);
		atomic_store_explicit(&c->w->in_flight,
				      atomic_load_explicit(&c->w->in_flight, memory_order_relaxed) - 1,
				      memory_order_release);
	}
	request_release(r);
	r->started = 0;
	/* a next head too bad to parse (answer_bad_head) is answered without
	 * request_setup: it must not echo this request's X-Request-Id */
	r->rid_len = 0;
	c->line_seen = 0;
	c->scan = 0;
	c->chunked = 0;
	c->body_left = 0;
}

void ev_conn_close(struct ev_conn *c)
{
	struct ev_worker *w = c->w;
	struct http_server *s = w->s;

	/* the descriptor may live on in the watcher (linger): leave epoll first */
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	request_finish(c);
	conn_watch_remove(&s->watch, &c->watch);
	if (c->linger) {
		shutdown(c->fd, SHUT_WR);
		conn_watch_linger(&s->watch, c->fd);
	}
	close(c->fd);
	c->prev->next = c->next;
	c->next->prev = c->prev;
	free(c->out_free);
	free(c->in);
	free(c);
	atomic_fetch_sub_explicit(&w->ev->conns, 1, memory_order_relaxed);
}

/* The response head under construction: put appends, and a head that would
 * not fit in EV_HDR_MAX leaves p NULL. */
struct head_out {
	char *p, *end;
};

static void put(struct head_out *h, const char *s, size_t n)
{
	if (!h->p || n > (size_t)(h->end - h->p)) {
		h->p = NULL;
		return;
	}
	memcpy(h->p, s, n);
	h->p += n;
}

#define HEAD_LIT(h, lit) put((h), (lit), sizeof(lit) - 1)

static void put_str(struct head_out *h, const char *s)
{
	put(h, s, strlen(s));
}

static void put_uint(struct head_out *h, uint64_t v)
{
	char digits[20];
	const char *d = access_u64(digits, v);

	put(h, d, (size_t)(digits + sizeof(digits) - d));
}

/* Queue resp as the answer (status line, headers, body in one sendmsg) and
 * take its body; the caller releases resp. The head is laid out by hand:
 * snprintf's format parsing was 4 % of a one-ray request's CPU. */
static void queue_response(struct ev_conn *c, struct api_response *resp)
{
	struct http_server *s = c->w->s;
	struct request *r = &c->req;
	struct head_out h = { c->hdr, c->hdr + sizeof(c->hdr) };
	const char *body;
	size_t len = 0;

	if (resp->static_body) {
		body = api_response_body(resp, &len);
		c->out_free = NULL;
	} else {
		c->out_free = buf_detach(&resp->body, &len);
		body = c->out_free;
	}
	c->closing = !c->keep_alive || c->linger ||
		     atomic_load_explicit(&s->draining, memory_order_relaxed);
	HEAD_LIT(&h, "HTTP/1.1 ");
	put_uint(&h, resp->status >= 100 && resp->status <= 999 ? (uint64_t)resp->status : 500);
	HEAD_LIT(&h, " ");
	put_str(&h, reason_phrase(resp->status));
	HEAD_LIT(&h, "\r\nDate: ");
	put_str(&h, worker_date(c->w));
	HEAD_LIT(&h, "\r\n");
	/* never in a 204 (RFC 9110 8.6), as libmicrohttpd answers */
	if (resp->status != 204) {
		HEAD_LIT(&h, "Content-Length: ");
		put_uint(&h, len);
		HEAD_LIT(&h, "\r\n");
	}
	if (resp->content_type && len) {
		HEAD_LIT(&h, "Content-Type: ");
		put_str(&h, resp->content_type);
		HEAD_LIT(&h, "\r\n");
	}
	if (resp->allow[0]) {
		HEAD_LIT(&h, "Allow: ");
		put(&h, resp->allow, strnlen(resp->allow, sizeof(resp->allow)));
		HEAD_LIT(&h, "\r\n");
	}
	if (resp->www_authenticate)
		HEAD_LIT(&h, "WWW-Authenticate: Bearer\r\n");
	if (resp->status == 503)
		HEAD_LIT(&h, "Retry-After: " HTTP_RETRY_AFTER "\r\n");
	if (r->rid_len) {
		HEAD_LIT(&h, HTTP_HEADER_REQUEST_ID ": ");
		put(&h, r->rid, r->rid_len);
		HEAD_LIT(&h, "\r\n");
	}
	if (c->closing)
		HEAD_LIT(&h, "Connection: close\r\n");
	else if (c->minor == 0)
		HEAD_LIT(&h, "Connection: keep-alive\r\n");
	HEAD_LIT(&h, "\r\n");
	c->hdr_len = h.p ? (size_t)(h.p - c->hdr) : 0;
	c->out_body = body;
	c->out_len = c->head_method ? 0 : len;
	c->out_off = 0;
	r->status = resp->status;
	r->bytes = len;
	c->state = EV_WRITE;
}

/* Answer with error e of the api's table. */
static void answer_error(struct ev_conn *c, enum api_err e, const char *allow, const char *msg)
{
	struct api_response resp;

	http_error_response(&resp, e, allow, msg);
	queue_response(c, &resp);
	api_response_release(&resp);
}

/* A head that is not a request (400, 431, 505): answer and close, lingering
 * (the rest of a big head may still arrive). Like libmicrohttpd's own
 * answers, it is neither logged nor counted. */
static void answer_bad_head(struct ev_conn *c, int status, const char *msg)
{
	struct api_response resp;

	c->keep_alive = 0;
	c->linger = 1;
	c->head_method = 0;
	c->minor = 1;
	http_error_response(&resp, API_INVALID_REQUEST, NULL, msg);
	resp.status = status;
	queue_response(c, &resp);
	api_response_release(&resp);
}

/* The request is whole: answer it (refusal, ops endpoint or the api). */
static int answer_request(struct ev_conn *c)
{
	struct http_server *s = c->w->s;
	struct request *r = &c->req;
	struct api_arg args[QUERY_ARGS_MAX + 1];
	struct api_response resp;

	if (r->verdict != API_OK) {
		answer_error(c, r->verdict, r->allow, r->msg);
		return EV_PROGRESS;
	}
	if (r->ops) {
		if (http_ops_response(s, r, &resp)) {
			ev_conn_close(c);
			return EV_CLOSED;
		}
	} else {
		args[0].key = NULL;
		if (c->query && http_parse_query(c->query, args, QUERY_ARGS_MAX) > QUERY_ARGS_MAX) {
			answer_error(c, API_INVALID_REQUEST, NULL, QUERY_ARGS_MSG);
			return EV_PROGRESS;
		}
		http_api_response(s, r, c->method, args, &resp);
	}
	queue_response(c, &resp);
	api_response_release(&resp);
	return EV_PROGRESS;
}

/* Refused while its body arrives, or before it: answer now, close after,
 * and linger so that a client still sending reads the answer. */
static int answer_refusal(struct ev_conn *c)
{
	conn_watch_arm(&c->watch, 0, WATCH_NONE);
	c->keep_alive = 0;
	c->linger = 1;
	answer_error(c, c->req.verdict, c->req.allow, c->req.msg);
	return EV_PROGRESS;
}

/* "HTTP/1.1 100 Continue": the client waits for it before its body. A
 * socket too full to take it (a client that has not read earlier answers)
 * gets none: the client sends its body after its own wait (RFC 9110
 * 10.1.1). -1 only when part of it went out (the stream is then broken). */
static int send_continue(struct ev_conn *c)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
	ssize_t n;

	do
		n = send(c->fd, cont, sizeof(cont) - 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	return n == (ssize_t)sizeof(cont) - 1 ? 0 : -1;
}

/* Set up c->req from a parsed head, as on_uri and begin_request do. */
static void request_setup(struct ev_conn *c, struct http_parsed *p, const char *msg)
{
	struct http_server *s = c->w->s;
	struct request *r = &c->req;
	char *target = p->target + (http_origin_form(p->target, p->target_len) - p->target);
	size_t tlen = p->target_len - (size_t)(target - p->target);
	const char *qm = memchr(target, '?', tlen);
	size_t n = qm ? (size_t)(qm - target) : tlen;

	request_release(r);
	memset(r, 0, offsetof(struct request, raw_inline));
	r->srv = s;
	r->watch = &c->watch;
	r->raw = n < sizeof(r->raw_inline) ? r->raw_inline : malloc(n + 1);
	if (!r->raw) {
		/* no memory for a long path: route the empty one (404), not a cut one */
		r->raw = r->raw_inline;
		n = 0;
	}
	memcpy(r->raw, target, n);
	r->raw[n] = '\0';
	r->raw_len = n;
	http_request_start(r, p->method);
	atomic_store_explicit(&c->w->in_flight,
			      atomic_load_explicit(&c->w->in_flight, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	r->head = p->head;
	r->verdict = p->verdict;
	if (r->verdict != API_OK)
		snprintf(r->msg, sizeof(r->msg), "%s", msg);
	c->method = p->method;
	c->query = target[n] == '?' ? target + n + 1 : NULL;
	c->minor = p->minor;
	c->keep_alive = p->minor == 1 ? !p->conn_close : p->conn_keep_alive && !p->conn_close;
	c->head_method = strcmp(p->method, "HEAD") == 0;
}

/* A whole head is in in[0..end): parse it and start its request. */
static int start_request(struct ev_conn *c, size_t end)
{
	struct http_server *s = c->w->s;
	struct http_parsed p;
	enum http_parse_result pr;
	char msg[128];

	msg[0] = '\0';
	pr = http_parse_head_at(c->in, end, &p, msg, sizeof(msg));
	if (pr != HTTP_PARSE_OK) {
		conn_watch_arm(&c->watch, 0, WATCH_NONE);
		answer_bad_head(c, http_parse_status(pr), msg);
		return EV_PROGRESS;
	}
	request_setup(c, &p, msg);
	c->head_end = p.head_len;
	c->in_off = p.head_len;
	switch (http_request_head(s, &c->req, p.method, p.close_now)) {
	case HTTP_NEXT_ANSWER:
		return answer_request(c);
	case HTTP_NEXT_REFUSE:
		return answer_refusal(c);
	case HTTP_NEXT_BODY:
		break;
	}
	c->chunked = p.chunked;
	memset(&c->ch, 0, sizeof(c->ch));
	c->body_left = p.chunked ? 0 : c->req.content_length;
	if (p.expect_continue && p.minor == 1 && c->in_off == c->in_len && send_continue(c)) {
		ev_conn_close(c);
		return EV_CLOSED;
	}
	c->state = EV_BODY;
	return EV_PROGRESS;
}

/* Make room for a head: unread bytes to the front, then a bigger buffer. */
static int make_room(struct ev_conn *c)
{
	char *nb;

	if (c->in_off) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (c->in_cap - c->in_len >= EV_IN_ROOM || c->in_cap >= EV_IN_MAX)
		return 0;
	nb = realloc(c->in, EV_IN_MAX);
	if (!nb)
		return -1;
	c->in = nb;
	c->in_cap = EV_IN_MAX;
	return 0;
}

/* HEAD state: the next request's head, once all of it is in. */
static int process_head(struct ev_conn *c)
{
	struct http_server *s = c->w->s;
	size_t avail, end;

	/* empty lines before a request line are allowed (RFC 9112 2.2) */
	while (!c->line_seen && c->in_off < c->in_len &&
	       (c->in[c->in_off] == '\r' || c->in[c->in_off] == '\n'))
		c->in_off++;
	avail = c->in_len - c->in_off;
	if (!avail) {
		c->in_off = c->in_len = 0;
		return EV_NEED_INPUT;
	}
	end = http_head_end(c->in + c->in_off, avail < HTTP_HEAD_MAX ? avail : HTTP_HEAD_MAX,
			    &c->scan);
	if (!c->line_seen && (end || c->scan > 0)) {
		/* the request line is in: the rest of the head is due within
		 * --header-timeout (libmicrohttpd's URI callback arms it here) */
		c->line_seen = 1;
		conn_watch_arm(&c->watch, now_coarse_ns() + s->header_ns, WATCH_HEADERS);
	}
	if (!end && avail >= HTTP_HEAD_MAX) {
		conn_watch_arm(&c->watch, 0, WATCH_NONE);
		answer_bad_head(c, 431, "request header block over 16 KiB");
		return EV_PROGRESS;
	}
	if (make_room(c)) {
		ev_conn_close(c);
		return EV_CLOSED;
	}
	if (!end)
		return EV_NEED_INPUT;
	return start_request(c, end);	/* make_room put the head at in[0] */
}

/* The body is in: answer. */
static int body_done(struct ev_conn *c)
{
	conn_watch_arm(&c->watch, 0, WATCH_NONE);
	return answer_request(c);
}

/* BODY state: take what the input buffer holds. */
static int process_body(struct ev_conn *c)
{
	struct http_server *s = c->w->s;
	struct request *r = &c->req;
	const char *d;
	size_t n, dlen;

	if (!c->chunked) {
		n = c->in_len - c->in_off;
		if (n > c->body_left)
			n = (size_t)c->body_left;
		if (n && http_on_body(s, r, c->in + c->in_off, n)) {
			ev_conn_close(c);
			return EV_CLOSED;
		}
		c->in_off += n;
		c->body_left -= n;
		if (!c->body_left)
			return body_done(c);
	} else {
		while (c->in_off < c->in_len && c->ch.state != CH_DONE && c->ch.state != CH_ERROR) {
			c->in_off += http_chunked_feed(&c->ch, c->in + c->in_off, c->in_len - c->in_off,
						       &d, &dlen);
			if (c->ch.fresh) {
				/* a size line read: over the limit is refused
				 * now, not once that much data has come */
				c->ch.fresh = 0;
				http_on_chunk_size(s, r, c->ch.size);
				if (r->discarding)
					return answer_refusal(c);
			}
			if (dlen && http_on_body(s, r, d, dlen)) {
				ev_conn_close(c);
				return EV_CLOSED;
			}
			/* over its limit while arriving: refused now, not at its end */
			if (r->discarding)
				return answer_refusal(c);
		}
		if (c->ch.state == CH_ERROR) {
			snprintf(r->msg, sizeof(r->msg), "body: malformed chunked encoding");
			r->verdict = API_INVALID_REQUEST;
			return answer_refusal(c);
		}
		if (c->ch.state == CH_DONE)
			return body_done(c);
	}
	/* all taken: later body bytes go right behind the head */
	c->in_off = c->in_len = c->head_end;
	return EV_NEED_INPUT;
}

/*
 * Read what the socket holds: 1 when bytes came, 0 when none (EAGAIN), -1
 * at EOF or on an error. A Content-Length body goes straight into the
 * request's buffer once the input buffer is empty.
 */
static int conn_fill(struct ev_conn *c)
{
	struct http_server *s = c->w->s;
	struct request *r = &c->req;
	ssize_t n;

	if (c->state == EV_BODY && !c->chunked && r->body && c->in_off == c->in_len &&
	    r->cap - r->len > c->body_left) {
		n = recv(c->fd, r->body + r->len, (size_t)c->body_left, 0);
		if (n > 0) {
			c->drained = (uint64_t)n < c->body_left;
			c->active_sec = c->w->now_sec;
			http_on_body_direct(s, r, (size_t)n);
			c->body_left -= (uint64_t)n;
			return 1;
		}
	} else {
		if (!c->in) {
			c->in = malloc(EV_IN_MIN);
			if (!c->in)
				return -1;
			c->in_cap = EV_IN_MIN;
		}
		if (c->in_len == c->in_cap)
			return -1;	/* cannot happen: heads are cut at HTTP_HEAD_MAX */
		n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		if (n > 0) {
			c->drained = (size_t)n < c->in_cap - c->in_len;
			c->active_sec = c->w->now_sec;
			c->in_len += (size_t)n;
			return 1;
		}
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return errno == EINTR ? 1 : 0;
	return -1;
}

/* Send what is left of the answer: 0 when all has gone, 1 when the socket
 * is full (EPOLLOUT resumes), -1 on an error. */
static int conn_flush(struct ev_conn *c)
{
	for (;;) {
		struct iovec iov[2];
		struct msghdr mh;
		size_t total = c->hdr_len + c->out_len;
		int k = 0;
		ssize_t n;

		if (c->out_off >= total)
			return 0;
		if (c->out_off < c->hdr_len) {
			iov[k].iov_base = c->hdr + c->out_off;
			iov[k++].iov_len = c->hdr_len - c->out_off;
		}
		if (c->out_len) {
			size_t skip = c->out_off > c->hdr_len ? c->out_off - c->hdr_len : 0;

			iov[k].iov_base = (void *)(c->out_body + skip);
			iov[k++].iov_len = c->out_len - skip;
		}
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)k;
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
		if (n > 0) {
			c->active_sec = c->w->now_sec;
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		return -1;
	}
}

/* The answer has gone: end the request; 1 when the connection closed. */
static int answer_sent(struct ev_conn *c)
{
	struct http_server *s = c->w->s;

	free(c->out_free);
	c->out_free = NULL;
	c->out_body = NULL;
	request_finish(c);
	if (c->closing) {
		ev_conn_close(c);
		return 1;
	}
	/* the next request line is due within the header (or idle) timeout */
	conn_watch_arm(&c->watch, now_coarse_ns() + s->idle_header_ns, WATCH_HEADERS);
	c->state = EV_HEAD;
	return 0;
}

/*
 * Run c as far as its socket allows. Edge-triggered: a read that came back
 * short of the room it was given emptied the socket, and any byte (or the
 * end) that arrives later raises a new edge, so c then waits for it rather
 * than read again for an EAGAIN (nginx's "ready" flag): a keep-alive
 * request costs one read and one write, not two reads.
 */
void ev_conn_run(struct ev_conn *c, uint32_t events)
{
	int rc;

	if (!events || (events & EPOLLIN))
		c->drained = 0;	/* a new connection, or bytes came */
	/* the peer's end (or an error) raises no later edge: read until it */
	c->peer_done |= (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
	for (;;) {
		if (c->state == EV_WRITE) {
			rc = conn_flush(c);
			if (rc < 0) {
				ev_conn_close(c);
				return;
			}
			if (rc > 0 || answer_sent(c))
				return;
			continue;
		}
		rc = c->state == EV_HEAD ? process_head(c) : process_body(c);
		if (rc == EV_CLOSED)
			return;
		if (rc == EV_PROGRESS)
			continue;
		if (c->drained && !c->peer_done)
			return;
		rc = conn_fill(c);
		if (rc == 0)
			return;
		if (rc < 0) {
			ev_conn_close(c);
			return;
		}
	}
}

/* Idle between requests: closed when draining. */
int ev_conn_idle(const struct ev_conn *c)
{
	return c->state == EV_HEAD && !c->req.started && c->in_off == c->in_len;
}
