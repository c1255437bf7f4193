/* response_cap.h - the answer for a response body over --max-response-bytes.
 *
 * api_handle caps every response body (buf_set_limit, see buf.h) at
 * limits.max_response_bytes before it calls a handler; when the handler's
 * answer hit the cap, the whole body is replaced by this 413, so no request
 * can make the daemon hold or send more than the cap for one answer.
 */
#ifndef API_RESPONSE_CAP_H
#define API_RESPONSE_CAP_H

#include <stddef.h>

#include "api.h"

/* Replace resp's body by 413 payload_too_large naming cap (bytes) and how to
 * ask for less; keeps resp's metrics fields. */
void api_respond_over_cap(struct api_response *resp, size_t cap);

#endif
