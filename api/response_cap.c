/* response_cap.c - 413 for an answer that would exceed --max-response-bytes. */
#include <stdio.h>

#include "handlers.h"
#include "response_cap.h"

void api_respond_over_cap(struct api_response *resp, size_t cap)
{
	char msg[320];

	snprintf(msg, sizeof(msg),
		 "response: the answer would exceed the response limit of %zu bytes "
		 "(--max-response-bytes); ask for fewer hits (a smaller max_hits, or mode "
		 "\"closest\"/\"any\") or split the batch into smaller requests", cap);
	api_respond_error(resp, API_PAYLOAD_TOO_LARGE, msg);
}
