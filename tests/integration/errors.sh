#!/usr/bin/env bash
# Bad requests: every 400 code, field paths in messages, unknown and
# duplicated keys, case-sensitive keys, wrong types and ranges, 415.
. "$(dirname "$0")/lib.sh"

start_daemon --demo || { echo "not ok 1 - daemon starts"; exit 1; }
R=/v1/meshes/demo/raycast
OK='"origin": [5.5, 10, 0.25], "direction": [0, -1, 0]'

# bad STATUS CODE PATH JSON [MESSAGE_PART]
bad() { jexpect "$1" POST "$3" "$4" && errcode "$2" "${5:-}"; }

test_expect 'invalid_json: truncated body' '
	bad 400 invalid_json $R "{\"origin\": [0, 1"
'
test_expect 'invalid_json: trailing garbage after the value' '
	bad 400 invalid_json $R "{$OK} x"
'
test_expect 'invalid_json: empty body' '
	bad 400 invalid_json $R ""
'
test_expect 'invalid_json: not UTF-8' '
	expect 400 POST $R -H "Content-Type: application/json" --data-binary "$(printf "{\"mode\": \"\377\"}")" &&
	jcheck "j[\"error\"][\"code\"] in (\"invalid_json\", \"invalid_request\")"
'
test_expect 'invalid_json: a leading-zero number (01)' '
	bad 400 invalid_json $R "{\"origin\": [01, 1, 0], \"direction\": [0, -1, 0]}"
'
test_expect 'invalid_request: the body is not an object' '
	bad 400 invalid_request $R "[1, 2, 3]"
'
test_expect 'invalid_request: unknown field max_distnace is named' '
	bad 400 invalid_request $R "{$OK, \"max_distnace\": 5}" max_distnace
'
test_expect 'invalid_request: unknown field inside a batch ray names its path' '
	bad 400 invalid_request $R "{\"rays\": [{$OK}, {$OK, \"colour\": 1}]}" "rays[1]"
'
test_expect 'invalid_request: keys are case-sensitive (Origin)' '
	bad 400 invalid_request $R "{\"Origin\": [0, 1, 0], \"direction\": [0, -1, 0]}" Origin
'
test_expect 'invalid_request: a duplicated key is refused and named' '
	bad 400 invalid_request $R "{$OK, \"origin\": [1, 1, 1]}" origin
'
test_expect 'invalid_request: a duplicated key inside a box is refused' '
	bad 400 invalid_request /v1/obb/raycast "{$OK, \"boxes\": [{\"center\": [0, 0, 0], \"center\": [1, 1, 1], \"half_extents\": [1, 1, 1]}]}" "boxes[0]"
'
test_expect 'invalid_request: rays[1].direction zero names the path' '
	bad 400 invalid_request $R "{\"rays\": [{$OK}, {\"origin\": [0, 0, 0], \"direction\": [0, 0, 0]}]}" "rays[1].direction"
'
test_expect 'invalid_request: a vector of 2 numbers' '
	bad 400 invalid_request $R "{\"origin\": [0, 1], \"direction\": [0, -1, 0]}" origin
'
test_expect 'invalid_request: a string inside a vector' '
	bad 400 invalid_request $R "{\"origin\": [0, \"1\", 0], \"direction\": [0, -1, 0]}" origin
'
test_expect 'invalid_request: an infinite number (1e400)' '
	bad 400 invalid_request $R "{\"origin\": [0, 1e400, 0], \"direction\": [0, -1, 0]}" origin
'
test_expect 'invalid_request: missing direction' '
	bad 400 invalid_request $R "{\"origin\": [0, 1, 0]}" direction
'
test_expect 'invalid_request: max_distance 0 and negative' '
	bad 400 invalid_request $R "{$OK, \"max_distance\": 0}" max_distance &&
	bad 400 invalid_request $R "{$OK, \"max_distance\": -1}" max_distance
'
test_expect 'invalid_request: unknown mode' '
	bad 400 invalid_request $R "{$OK, \"mode\": \"nearest\"}" mode
'
test_expect 'invalid_request: unknown backfaces' '
	bad 400 invalid_request $R "{$OK, \"backfaces\": \"skip\"}" backfaces
'
test_expect 'invalid_request: max_hits 0 and 1.5' '
	bad 400 invalid_request $R "{$OK, \"mode\": \"all\", \"max_hits\": 0}" max_hits &&
	bad 400 invalid_request $R "{$OK, \"mode\": \"all\", \"max_hits\": 1.5}" max_hits
'
test_expect 'invalid_request: a single ray and a batch at once' '
	bad 400 invalid_request $R "{$OK, \"rays\": [{$OK}]}"
'
test_expect 'invalid_request: rays is not an array' '
	bad 400 invalid_request $R "{\"rays\": {}}" rays
'
test_expect 'invalid_request: a zero quaternion in transform' '
	bad 400 invalid_request $R "{$OK, \"transform\": {\"rotation\": [0, 0, 0, 0]}}" "transform.rotation"
'
test_expect 'invalid_request: a singular matrix, and one with 15 numbers' '
	bad 400 invalid_request $R "{$OK, \"transform\": {\"matrix\": [0,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]}}" "transform.matrix" &&
	bad 400 invalid_request $R "{$OK, \"transform\": {\"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0]}}" "transform.matrix"
'
test_expect 'invalid_request: matrix and position together' '
	bad 400 invalid_request $R "{$OK, \"transform\": {\"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1], \"position\": [0, 0, 0]}}" transform
'
test_expect 'invalid_request: a zero scale' '
	bad 400 invalid_request $R "{$OK, \"transform\": {\"scale\": [1, 0, 1]}}" "transform.scale"
'
test_expect 'invalid_request: segment with start == end' '
	bad 400 invalid_request /v1/meshes/demo/segment "{\"start\": [1, 1, 1], \"end\": [1, 1, 1]}"
'
test_expect 'invalid_request: segment unknown field' '
	bad 400 invalid_request /v1/meshes/demo/segment "{\"start\": [1, 1, 1], \"end\": [1, 2, 1], \"origin\": [0, 0, 0]}" origin
'
test_expect 'invalid_request: a box with a negative half extent names boxes[0].half_extents' '
	bad 400 invalid_request /v1/obb/raycast "{$OK, \"boxes\": [{\"center\": [0, 0, 0], \"half_extents\": [1, -1, 1]}]}" "boxes[0].half_extents"
'
test_expect 'invalid_request: axes that are not orthonormal' '
	bad 400 invalid_request /v1/obb/raycast "{$OK, \"boxes\": [{\"center\": [0, 0, 0], \"half_extents\": [1, 1, 1], \"axes\": [[1, 0, 0], [1, 0, 0], [0, 0, 1]]}]}" "boxes[0].axes"
'
test_expect 'invalid_request: rotation and axes together' '
	bad 400 invalid_request /v1/obb/raycast "{$OK, \"boxes\": [{\"center\": [0, 0, 0], \"half_extents\": [1, 1, 1], \"rotation\": [1, 0, 0, 0], \"axes\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}]}" "boxes[0]"
'
test_expect 'invalid_request: a box id that is not a string' '
	bad 400 invalid_request /v1/obb/raycast "{$OK, \"boxes\": [{\"id\": 7, \"center\": [0, 0, 0], \"half_extents\": [1, 1, 1]}]}" "boxes[0].id"
'
test_expect 'invalid_request: obb raycast without boxes' '
	bad 400 invalid_request /v1/obb/raycast "{$OK}" boxes
'
test_expect 'invalid_request: overlap limit -1, and box missing' '
	bad 400 invalid_request /v1/meshes/demo/overlap "{\"box\": {\"center\": [0, 0, 0], \"half_extents\": [1, 1, 1]}, \"limit\": -1}" limit &&
	bad 400 invalid_request /v1/meshes/demo/overlap "{\"limit\": 5}" box
'
test_expect 'invalid_request: hitscan with a mesh name that is not a string' '
	bad 400 invalid_request /v1/hitscan "{\"mesh\": 5, $OK}" mesh
'
test_expect 'invalid_request: hitscan shots[0].max_distance' '
	bad 400 invalid_request /v1/hitscan "{\"shots\": [{$OK, \"max_distance\": \"far\"}]}" "shots[0].max_distance"
'
test_expect 'invalid_request on a mesh upload: vertices is a string' '
	jexpect 400 PUT /v1/meshes/m "{\"vertices\": \"many\", \"triangles\": [[0, 1, 2]]}" && errcode invalid_request vertices
'
test_expect 'invalid_request on a mesh upload: vertices missing' '
	jexpect 400 PUT /v1/meshes/m "{\"triangles\": [[0, 1, 2]]}" && errcode invalid_request vertices
'
# ---- 415
test_expect '415: a query sent as text/plain' '
	expect 415 POST $R -H "Content-Type: text/plain" --data-binary "{$OK}" && errcode unsupported_media_type
'
test_expect '415: a query sent as a form (curl -d default)' '
	expect 415 POST $R -d "{$OK}" && errcode unsupported_media_type
'
test_expect '415: a query sent as model/obj' '
	expect 415 POST $R -H "Content-Type: model/obj" --data-binary "v 0 0 0" && errcode unsupported_media_type
'
test_expect '415: a mesh upload as text/plain' '
	expect 415 PUT /v1/meshes/m -H "Content-Type: text/plain" --data-binary "v 0 0 0" && errcode unsupported_media_type
'
test_expect 'application/json with a charset parameter is accepted' '
	expect 200 POST $R -H "Content-Type: application/json; charset=utf-8" --data-binary "{$OK}" &&
	jcheck "j[\"hit\"] is True"
'
test_expect 'content type names are case-insensitive (Application/JSON)' '
	expect 200 POST $R -H "Content-Type: Application/JSON" --data-binary "{$OK}"
'
test_expect 'the demo mesh is unchanged after all of this' '
	expect 200 GET /v1/meshes/demo && jcheck "j[\"version\"] == 1"
'
test_done
