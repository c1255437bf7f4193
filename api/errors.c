/* errors.c - the one table from api results to HTTP status and error code. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "errors.h"

static const struct api_err_info err_table[API_ERR_COUNT] = {
	[API_OK]			= { 200, "ok" },
	[API_INVALID_JSON]		= { 400, "invalid_json" },
	[API_INVALID_REQUEST]		= { 400, "invalid_request" },
	[API_INVALID_MESH]		= { 400, "invalid_mesh" },
	[API_UNAUTHORIZED]		= { 401, "unauthorized" },
	[API_FORBIDDEN]			= { 403, "forbidden" },
	[API_MESH_NOT_FOUND]		= { 404, "mesh_not_found" },
	[API_NOT_FOUND]			= { 404, "not_found" },
	[API_METHOD_NOT_ALLOWED]	= { 405, "method_not_allowed" },
	[API_PAYLOAD_TOO_LARGE]		= { 413, "payload_too_large" },
	[API_UNSUPPORTED_MEDIA_TYPE]	= { 415, "unsupported_media_type" },
	[API_NOT_READY]			= { 503, "not_ready" },
	[API_STORE_UNAVAILABLE]		= { 503, "store_unavailable" },
	[API_INTERNAL]			= { 500, "internal" },
	[API_WORLD_NOT_FOUND]		= { 404, "world_not_found" },
	[API_CONFLICT]			= { 409, "conflict" },
	[API_INSUFFICIENT_STORAGE]	= { 507, "insufficient_storage" },
};

/*
 * The status and code of e. Never NULL: a value outside the enum (a bug)
 * maps to 500 internal, so a caller can always answer something.
 */
const struct api_err_info *api_err_info(enum api_err e)
{
	if ((unsigned)e >= API_ERR_COUNT)
		return &err_table[API_INTERNAL];
	return &err_table[e];
}

enum api_err api_fail_set(struct api_fail *f, enum api_err e, const char *fmt, ...)
{
	va_list ap;

	f->err = e;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	return e;
}
