/* core.c - texts of the core result codes. */
#include "core.h"

const char *core_result_str(enum core_result r)
{
	switch (r) {
	case CORE_OK: return "ok";
	case CORE_ENOMEM: return "out of memory";
	case CORE_EINVAL: return "invalid argument";
	case CORE_EINDEX: return "index out of range";
	case CORE_ENONFINITE: return "non-finite number";
	case CORE_EEMPTY: return "empty";
	case CORE_ETOOBIG: return "too large";
	case CORE_ENOTFOUND: return "not found";
	case CORE_ECONFLICT: return "conflict";
	case CORE_ERANGE: return "out of range";
	case CORE_ENOSPACE: return "memory budget full";
	}
	return "unknown";
}
