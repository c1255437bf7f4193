/* errors.h - the api layer's one result enum and its table to HTTP. */
#ifndef API_ERRORS_H
#define API_ERRORS_H

enum api_err {
	API_OK = 0,
	API_INVALID_JSON,		/* 400 invalid_json */
	API_INVALID_REQUEST,		/* 400 invalid_request */
	API_INVALID_MESH,		/* 400 invalid_mesh */
	API_UNAUTHORIZED,		/* 401 unauthorized */
	API_FORBIDDEN,			/* 403 forbidden (read key on a write) */
	API_MESH_NOT_FOUND,		/* 404 mesh_not_found */
	API_NOT_FOUND,			/* 404 not_found */
	API_METHOD_NOT_ALLOWED,		/* 405 method_not_allowed */
	API_PAYLOAD_TOO_LARGE,		/* 413 payload_too_large */
	API_UNSUPPORTED_MEDIA_TYPE,	/* 415 unsupported_media_type */
	API_NOT_READY,			/* 503 not_ready */
	API_STORE_UNAVAILABLE,		/* 503 store_unavailable (--store down) */
	API_INTERNAL,			/* 500 internal */
	API_WORLD_NOT_FOUND,		/* 404 world_not_found */
	API_CONFLICT,			/* 409 conflict (a snapshot tick that does not increase) */
	API_INSUFFICIENT_STORAGE,	/* 507 insufficient_storage (--max-memory full, --data-dir disk full) */
	API_ERR_COUNT
};

struct api_err_info {
	int status;
	const char *code;
};

/* The one table from result to HTTP status and error code. */
const struct api_err_info *api_err_info(enum api_err e);

/* A failure as every decoder and parser of the api reports it (JSON
 * requests, JSON/OBJ/STL meshes, binary rays): the result and a message
 * naming the offending field, line or record. */
struct api_fail {
	enum api_err err;
	char msg[320];
};

/* Fill f (message printf-style) and return e. */
enum api_err api_fail_set(struct api_fail *f, enum api_err e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
