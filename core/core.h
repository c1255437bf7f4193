/* core.h - the result codes shared by every core/ module.
 *
 * core/ is pure C11 geometry: no I/O, no JSON, no HTTP. Every fallible
 * function returns an enum core_result and writes its answer through
 * out-parameters; on failure the out-parameters are left untouched unless
 * the function's contract says otherwise. Nothing in core/ aborts.
 */
#ifndef CORE_CORE_H
#define CORE_CORE_H

enum core_result {
	CORE_OK = 0,
	CORE_ENOMEM,		/* an allocation failed */
	CORE_EINVAL,		/* an argument is out of its documented range */
	CORE_EINDEX,		/* a triangle index names no vertex */
	CORE_ENONFINITE,	/* a coordinate is NaN or infinite */
	CORE_EEMPTY,		/* a mesh with no vertices or no triangles */
	CORE_ETOOBIG,		/* a count over a limit, or a size that overflows */
	CORE_ENOTFOUND,		/* no such name in the store */
	CORE_ECONFLICT,		/* worlds: a tick or time that does not increase */
	CORE_ERANGE,		/* worlds: a time older than the history held */
	CORE_ENOSPACE,		/* the memory budget (membudget.h) has no room for it */
};

/* A short, static, human-readable text for a result code. */
const char *core_result_str(enum core_result r);

#endif
