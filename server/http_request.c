/* http_request.c - a request's intake, the same for both engines:
 * authentication, early refusals from the headers, and the bounded body with
 * its deadlines (see http_impl.h). */
#include "http_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

#define OPS_ALLOW "GET, HEAD"

/*
 * A request refused from its headers (413 by Content-Length, 401, 404, ...)
 * is answered at once; the engine then sends FIN and closes, and the
 * deadline watcher keeps reading and dropping the rest of the body (lingering
 * close, see conn_watch.h) so that a client that sends its whole body before
 * reading (Python's http.client, requests) still reads the answer.
 *
 * A body found over its limit while it arrives (chunked) cannot be answered
 * before its end (libmicrohttpd 0.9.75 refuses MHD_queue_response until the
 * body has been read): it is read and dropped, not buffered, and the 413 goes
 * out at its end, for at most DISCARD_MAX bytes and DISCARD_SECONDS seconds
 * (nginx's lingering_time) besides the body deadline; past that the
 * connection is closed without an answer.
 */
#define DISCARD_MAX ((uint64_t)1 << 30)
#define DISCARD_SECONDS 30

/* Equal in time that depends only on the length of key, not on where the
 * first difference lies. */
static int key_equal(const char *given, size_t glen, const char *key, size_t klen)
{
	unsigned char diff = glen != klen;
	size_t i;

	for (i = 0; i < klen; i++)
		diff |= (unsigned char)key[i] ^ (unsigned char)(i < glen ? given[i] : 0);
	return diff == 0;
}

static enum api_auth request_auth(const struct http_server *s, const char *h)
{
	const char *tok;
	size_t n;
	int w, rd;

	if (!s->api_key)
		return API_AUTH_WRITE;
	if (!h || strncasecmp(h, "Bearer ", 7) != 0)
		return API_AUTH_NONE;
	for (tok = h + 7; *tok == ' '; tok++)
		;
	n = strlen(tok);
	while (n > 0 && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
		n--;
	w = key_equal(tok, n, s->api_key, s->api_key_len);
	rd = s->read_key ? key_equal(tok, n, s->read_key, s->read_key_len) : 0;
	return w ? API_AUTH_WRITE : rd ? API_AUTH_READ : API_AUTH_NONE;
}

/* GET /healthz, /readyz, /metrics; 1 when url is one of them. */
static int ops_route(const char *url, const char **label)
{
	if (url[0] != '/' || (url[1] != 'h' && url[1] != 'r' && url[1] != 'm'))
		return 0;	/* every api path: "/v1..." */
	if (strcmp(url, "/healthz") == 0)
		*label = "/healthz";
	else if (strcmp(url, "/readyz") == 0)
		*label = "/readyz";
	else if (strcmp(url, "/metrics") == 0)
		*label = "/metrics";
	else
		return 0;
	return 1;
}

/* 1 when the request announces a body (Content-Length > 0 or chunked). */
static int has_body(const struct http_head *head, uint64_t *content_length, int *known)
{
	const char *cl = head->content_length;
	const char *te = head->transfer_encoding;

	*known = 0;
	*content_length = 0;
	if (cl) {
		/* digits only: both engines refuse anything else before this */
		*content_length = http_decimal_u64(cl);
		*known = 1;
	}
	return (cl && *content_length > 0) || te;
}

/* Note a refusal to send once libmicrohttpd allows it without closing. */
static void refuse(struct request *r, enum api_err e, const char *allow, const char *msg)
{
	r->verdict = e;
	snprintf(r->allow, sizeof(r->allow), "%s", allow ? allow : "");
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
}

/* 413 for an announced body over r->limit, before any of it is read. */
static void refuse_size(struct request *r, uint64_t clen, int known)
{
	char msg[96];

	if (!known || clen <= r->limit)
		return;
	snprintf(msg, sizeof(msg), "body of %llu bytes is over the limit of %zu bytes",
		 (unsigned long long)clen, r->limit);
	refuse(r, API_PAYLOAD_TOO_LARGE, NULL, msg);
}

/*
 * Decide from the headers alone what can be decided: ops endpoint, route
 * (404/405), access (401/403), readiness (503), announced size (413).
 */
static void classify(struct http_server *s, struct request *r, const char *url, const char *method, uint64_t clen, int known)
{
	const struct api_route_info *info;
	const char *why;
	enum api_err e, ae;

	if (ops_route(url, &r->route_label)) {
		r->ops = 1;
		r->limit = s->p.api->limits.max_body_query;
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			refuse(r, API_METHOD_NOT_ALLOWED, OPS_ALLOW, "this path only answers GET and HEAD");
		else
			refuse_size(r, clen, known);
		return;
	}
	/* HEAD is GET without the body (libmicrohttpd drops it). */
	e = api_route(strcmp(method, "HEAD") == 0 ? "GET" : method, url, &r->route);
	info = &r->route;
	r->routed = 1;
	r->route_label = info->label;
	r->auth = request_auth(s, r->head.authorization);
	/* the api's access policy, applied before the body is read */
	ae = api_access(url, e == API_OK ? info->access : API_ACCESS_OPEN, r->auth, &why);
	if (ae) {
		refuse(r, ae, NULL, why);
		return;
	}
	if (e == API_NOT_FOUND) {
		refuse(r, e, NULL, "no such path");
		return;
	}
	if (e == API_METHOD_NOT_ALLOWED) {
		refuse(r, e, info->allow, "method not allowed on this path");
		return;
	}
	if (e != API_OK) {
		refuse(r, API_INTERNAL, NULL, "routing failed");
		return;
	}
	if (!atomic_load_explicit(s->p.ready, memory_order_acquire)) {
		refuse(r, API_NOT_READY, NULL, "still loading stored meshes");
		return;
	}
	r->limit = info->mesh_upload ? s->p.api->limits.max_body_mesh :
				      s->p.api->limits.max_body_query;
	refuse_size(r, clen, known);
}

/* The body's deadline: --body-timeout, plus one second per --min-body-rate
 * bytes received (Apache's mod_reqtimeout MinRate); while discarding, at
 * most DISCARD_SECONDS after the discard began. */
static void arm_body_deadline(const struct http_server *s, struct request *r)
{
	uint64_t d = r->body_t0_ns + s->body_ns;

	if (s->body_rate) {
		uint64_t earned = r->body_bytes / s->body_rate;

		d += earned > UINT64_MAX / 4 / 1000000000u ? UINT64_MAX / 4 :
			earned * 1000000000u +
			(r->body_bytes % s->body_rate) * 1000000000u / s->body_rate;
	}
	if (r->discarding && r->discard_t0_ns + (uint64_t)DISCARD_SECONDS * 1000000000u < d) {
		conn_watch_arm(r->watch, r->discard_t0_ns + (uint64_t)DISCARD_SECONDS * 1000000000u,
			       WATCH_DISCARD);
		return;
	}
	conn_watch_arm(r->watch, d, WATCH_BODY);
}

/* From now on the body is read and dropped; the refusal goes out at its end. */
static void start_discard(struct http_server *s, struct request *r)
{
	r->discarding = 1;
	r->discard_t0_ns = now_ns();
	http_body_release(r);
	arm_body_deadline(s, r);
}

void http_body_release(struct request *r)
{
	if (r->body != r->body_inline)
		free(r->body);
	r->body = NULL;
	r->len = r->cap = 0;
}

void http_request_start(struct request *r, const char *method)
{
	size_t n = strlen(method), i;

	r->started = 1;
	r->t0_ns = now_ns();
	if (n >= sizeof(r->method))
		n = sizeof(r->method) - 1;
	/* what the logs show of it: token bytes only (an engine that took a
	 * method with ESC or CR in it must not write them to a terminal) */
	for (i = 0; i < n; i++)
		r->method[i] = http_is_tchar((unsigned char)method[i]) ? method[i] : '?';
	r->method[n] = '\0';
}

/* The X-Request-Id into r->rid when it is 1 to HTTP_REQUEST_ID_MAX bytes
 * of 0x21-0x7e (safe in a header and a log line as they are); otherwise
 * none. Copied: the head's bytes may move before the answer is written. */
static void take_request_id(struct request *r)
{
	const char *id = r->head.request_id;
	size_t n = r->head.request_id_len;

	r->rid_len = 0;
	if (!id || n == 0 || n > sizeof(r->rid))
		return;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)id[i] < 0x21 || (unsigned char)id[i] > 0x7e)
			return;
	memcpy(r->rid, id, n);
	r->rid_len = n;
}

/*
 * A refusal of a request with a body is answered now, so that the body is
 * never read (HTTP_NEXT_REFUSE); everything else is answered once the body
 * is in.
 */
enum http_next http_request_head(struct http_server *s, struct request *r, const char *method,
				 int close_now)
{
	uint64_t clen;
	int known, body;

	take_request_id(r);
	body = has_body(&r->head, &clen, &known);
	r->content_length = clen;
	if (close_now) {
		conn_watch_arm(r->watch, 0, WATCH_NONE);
		return HTTP_NEXT_REFUSE;
	}
	if (r->verdict == API_OK)
		classify(s, r, r->raw, method, clen, known);
	if (!body) {
		conn_watch_arm(r->watch, 0, WATCH_NONE);
		return HTTP_NEXT_ANSWER;
	}
	r->body_t0_ns = r->t0_ns;
	if (r->verdict != API_OK) {
		conn_watch_arm(r->watch, 0, WATCH_NONE);
		return HTTP_NEXT_REFUSE;
	}
	arm_body_deadline(s, r);
	if (known && !r->ops) {
		/* The announced body, plus a NUL for parsers: in place when small
		 * (a ray's query), else one allocation. */
		r->body = clen < sizeof(r->body_inline) ? r->body_inline : malloc((size_t)clen + 1);
		if (!r->body) {
			refuse(r, API_INTERNAL, NULL, "out of memory");
			conn_watch_arm(r->watch, 0, WATCH_NONE);
			return HTTP_NEXT_REFUSE;
		}
		r->cap = (size_t)clen + 1;
	}
	return HTTP_NEXT_BODY;
}

/* The body passes its limit as it arrives: 413, and the rest is dropped. */
static void refuse_over_limit(struct http_server *s, struct request *r)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "body is over the limit of %zu bytes", r->limit);
	refuse(r, API_PAYLOAD_TOO_LARGE, NULL, msg);
	start_discard(s, r);
}

void http_on_chunk_size(struct http_server *s, struct request *r, uint64_t size)
{
	if (!r->discarding && size > r->limit - r->len)
		refuse_over_limit(s, r);
}

/* Append a body chunk, or count it as discarded once refused. */
int http_on_body(struct http_server *s, struct request *r, const char *data, size_t n)
{
	r->body_bytes += n;
	arm_body_deadline(s, r);
	if (r->discarding) {
		r->discarded += n;
		if (r->discarded <= DISCARD_MAX)
			return 0;
		log_msg(s->p.log, LOG_INFO,
			"closing connection: discarded more than %llu bytes of a refused body",
			(unsigned long long)DISCARD_MAX);
		return -1;
	}
	if (n > r->limit - r->len) {
		refuse_over_limit(s, r);
		r->discarded = n;
		return 0;
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *nb;

		while (cap < r->len + n + 1)
			cap = cap > SIZE_MAX / 2 ? r->len + n + 1 : cap * 2;
		if (cap - 1 > r->limit)
			cap = r->limit + 1;
		nb = r->body == r->body_inline ? malloc(cap) : realloc(r->body, cap);
		if (!nb)
			return -1;
		if (r->body == r->body_inline)
			memcpy(nb, r->body, r->len);
		r->body = nb;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = '\0';
	return 0;
}

void http_on_body_direct(struct http_server *s, struct request *r, size_t n)
{
	r->body_bytes += n;
	arm_body_deadline(s, r);
	r->len += n;
	r->body[r->len] = '\0';
}
