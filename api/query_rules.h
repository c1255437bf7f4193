/* query_rules.h - api/-internal: the rules of a mesh ray or segment query
 * that both of its decoders apply, the tree path (decode_query.c) and the
 * tree-free fast path (rays_direct.c), so that they cannot drift apart. */
#ifndef API_QUERY_RULES_H
#define API_QUERY_RULES_H

#include <cJSON.h>

#include "decode.h"
#include "errors.h"
#include "query.h"

/*
 * The options of a raycast or segment query into q->opts from their values
 * (each NULL when absent): "mode" ("closest" (default), "any" or "all"),
 * "max_hits" (only with mode "all": an integer in [1, RAY_MAX_HITS_CAP],
 * default RAY_MAX_HITS_DEFAULT) and "backfaces" ("hit" or "cull"). On a
 * broken rule returns API_INVALID_REQUEST with f naming the member, as the
 * tree path words it.
 */
enum api_err query_set_opts(struct query *q, const cJSON *mode, const cJSON *max_hits,
			    const cJSON *backfaces, struct api_fail *f);

/*
 * The closed segment start..end (each within the float32 range) as a ray
 * with tmax its length: origin the float start, the direction and length
 * computed in double. Returns 0, or -1 when the points are equal (r is
 * then partly written).
 */
int segment_qray(const double start[3], const double end[3], struct qray *r);

#endif
