#!/usr/bin/env bash
# Queries with answers worked out by hand on the unit cube (see lib.sh for
# its triangle numbering): raycast (modes, backfaces, max_distance,
# transforms, batches), segment, overlap, OBB raycast, hitscan; and a few
# against the built-in demo mesh.
. "$(dirname "$0")/lib.sh"

start_daemon --demo || { echo "not ok 1 - daemon starts"; exit 1; }
put_cube cube >/dev/null || echo "# could not upload the cube"

# cast PATH JSON: POST expecting 200
cast() { jexpect 200 POST "$1" "$2"; }
R=/v1/meshes/cube/raycast
S=/v1/meshes/cube/segment
O=/v1/meshes/cube/overlap

# From above at (0.25, 0.5): the +y face at distance 4, triangle 6 [3,7,6]
# (a = (0,1,0), b = (0,1,1), c = (1,1,1)): P - a = (0.25, 0, 0.5) = u b' + v c'
# gives u = 0.25, v = 0.25.
DOWN='"origin": [0.25, 5, 0.5], "direction": [0, -1, 0]'
HIT6='j["hit"] is True and j["triangle"] == 6 and near(j["distance"], 4) and near(j["point"], [0.25, 1, 0.5]) and near(j["normal"], [0, 1, 0]) and near(j["barycentric"], [0.25, 0.25]) and j["front_face"] is True'

test_expect 'raycast: closest hit from above (triangle, distance, point, normal, barycentric, front_face)' '
	cast $R "{$DOWN}" && jcheck "$HIT6" &&
	jcheck "set(j) == {\"hit\", \"distance\", \"point\", \"normal\", \"triangle\", \"barycentric\", \"front_face\"}"
'
test_expect 'raycast: a miss is exactly {"hit": false}' '
	cast $R "{\"origin\": [5, 5, 5], \"direction\": [0, -1, 0]}" && jcheck "j == {\"hit\": False}"
'
test_expect 'raycast: distance is along the normalised direction (direction [0,-2,0])' '
	cast $R "{\"origin\": [0.25, 5, 0.5], \"direction\": [0, -2, 0]}" && jcheck "$HIT6"
'
test_expect 'raycast: an oblique ray reports the world distance' '
	cast $R "{\"origin\": [-2.75, 5, 0.5], \"direction\": [3, -4, 0]}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"distance\"], 5) and near(j[\"point\"], [0.25, 1, 0.5])"
'
test_expect 'raycast: max_distance 3.5 misses, 4 hits (inclusive)' '
	cast $R "{$DOWN, \"max_distance\": 3.5}" && jcheck "j == {\"hit\": False}" &&
	cast $R "{$DOWN, \"max_distance\": 4}" && jcheck "$HIT6"
'
test_expect 'raycast: mode all gives both faces sorted, the far one a back face' '
	cast $R "{$DOWN, \"mode\": \"all\"}" &&
	jcheck "sorted(j) == [\"hits\", \"truncated\"] and j[\"truncated\"] is False and [h[\"triangle\"] for h in j[\"hits\"]] == [6, 5] and near([h[\"distance\"] for h in j[\"hits\"]], [4, 5]) and [h[\"front_face\"] for h in j[\"hits\"]] == [True, False] and near(j[\"hits\"][1][\"normal\"], [0, -1, 0])"
'
test_expect 'raycast: mode all with max_hits 1 keeps the nearest, truncated' '
	cast $R "{$DOWN, \"mode\": \"all\", \"max_hits\": 1}" &&
	jcheck "[h[\"triangle\"] for h in j[\"hits\"]] == [6] and j[\"truncated\"] is True"
'
test_expect 'raycast: mode all on a miss is {"hits": [], "truncated": false}' '
	cast $R "{\"origin\": [5, 5, 5], \"direction\": [0, -1, 0], \"mode\": \"all\"}" && jcheck "j == {\"hits\": [], \"truncated\": False}"
'
test_expect 'raycast: mode any hits' '
	cast $R "{$DOWN, \"mode\": \"any\"}" && jcheck "j[\"hit\"] is True and j[\"triangle\"] in (5, 6)"
'
test_expect 'raycast: backfaces cull skips the inside of the far face' '
	cast $R "{$DOWN, \"mode\": \"all\", \"backfaces\": \"cull\"}" &&
	jcheck "[h[\"triangle\"] for h in j[\"hits\"]] == [6]"
'
test_expect 'raycast: from inside, hit gives the back face at 0.5, cull misses' '
	cast $R "{\"origin\": [0.25, 0.5, 0.5], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"triangle\"] == 5 and near(j[\"distance\"], 0.5) and j[\"front_face\"] is False" &&
	cast $R "{\"origin\": [0.25, 0.5, 0.5], \"direction\": [0, -1, 0], \"backfaces\": \"cull\"}" &&
	jcheck "j == {\"hit\": False}"
'
test_expect 'raycast: a ray starting on the surface hits at distance 0' '
	cast $R "{\"origin\": [0.25, 1, 0.5], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"triangle\"] == 6 and j[\"distance\"] == 0"
'
test_expect 'raycast: a ray aimed at the shared diagonal of a face hits (watertight)' '
	cast $R "{\"origin\": [0.5, 5, 0.5], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"triangle\"] in (6, 7) and near(j[\"distance\"], 4)"
'
test_expect 'raycast: a ray aimed at a corner vertex hits' '
	cast $R "{\"origin\": [2, 2, 2], \"direction\": [-1, -1, -1]}" &&
	jcheck "j[\"hit\"] is True and near(j[\"distance\"], 3 ** 0.5) and near(j[\"point\"], [1, 1, 1])"
'
test_expect 'raycast: transform position moves the mesh' '
	cast $R "{\"origin\": [10.25, 5, 0.5], \"direction\": [0, -1, 0], \"transform\": {\"position\": [10, 0, 0]}}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"distance\"], 4) and near(j[\"point\"], [10.25, 1, 0.5])" &&
	cast $R "{$DOWN, \"transform\": {\"position\": [10, 0, 0]}}" && jcheck "j == {\"hit\": False}"
'
test_expect 'raycast: transform matrix (row-major translation) equals position' '
	cast $R "{\"origin\": [10.25, 5, 0.5], \"direction\": [0, -1, 0], \"transform\": {\"matrix\": [1,0,0,10, 0,1,0,0, 0,0,1,0, 0,0,0,1]}}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"distance\"], 4) and near(j[\"point\"], [10.25, 1, 0.5])"
'
test_expect 'raycast: transform scale 2 gives world distances' '
	cast $R "{\"origin\": [0.5, 5, 1], \"direction\": [0, -1, 0], \"transform\": {\"scale\": [2, 2, 2]}}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"distance\"], 3) and near(j[\"point\"], [0.5, 2, 1]) and near(j[\"normal\"], [0, 1, 0])"
'
# rotation by 90 degrees about z maps mesh +x to world +y: the world top face
# is the mesh x = 1 face; world (-0.25, 1, 0.5) is mesh (1, 0.25, 0.5): triangle 11.
test_expect 'raycast: transform rotation turns the mesh and the normal' '
	cast $R "{\"origin\": [-0.25, 5, 0.5], \"direction\": [0, -1, 0], \"transform\": {\"rotation\": [0.7071067811865476, 0, 0, 0.7071067811865476]}}" &&
	jcheck "j[\"triangle\"] == 11 and near(j[\"distance\"], 4) and near(j[\"point\"], [-0.25, 1, 0.5]) and near(j[\"normal\"], [0, 1, 0])"
'
test_expect 'raycast: a non-unit rotation quaternion is normalised' '
	cast $R "{\"origin\": [-0.25, 5, 0.5], \"direction\": [0, -1, 0], \"transform\": {\"rotation\": [2, 0, 0, 2]}}" &&
	jcheck "j[\"triangle\"] == 11 and near(j[\"distance\"], 4)"
'
# A mirror reverses the winding of the world-space triangles, so by API.md's
# definitions (normal = (b-a)x(c-a) in world space, front = counter-clockwise
# seen from the origin) the top face is hit from behind, its normal down.
test_expect 'raycast: a mirroring scale reverses the world winding' '
	cast $R "{\"origin\": [-0.25, 5, 0.5], \"direction\": [0, -1, 0], \"transform\": {\"scale\": [-1, 1, 1]}}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"distance\"], 4) and j[\"front_face\"] is False and near(j[\"normal\"], [0, -1, 0])"
'
test_expect 'raycast: a batch answers in order' '
	cast $R "{\"rays\": [{$DOWN}, {\"origin\": [5, 5, 5], \"direction\": [0, -1, 0]}, {$DOWN, \"max_distance\": 1}]}" &&
	jcheck "list(j) == [\"results\"] and len(j[\"results\"]) == 3" &&
	jcheck "(lambda j: $HIT6)(j[\"results\"][0]) and j[\"results\"][1:] == [{\"hit\": False}, {\"hit\": False}]"
'
test_expect 'raycast: batch options apply to every ray' '
	cast $R "{\"rays\": [{$DOWN}, {$DOWN}], \"mode\": \"all\", \"backfaces\": \"cull\"}" &&
	jcheck "[[h[\"triangle\"] for h in r[\"hits\"]] for r in j[\"results\"]] == [[6], [6]]"
'
test_expect 'raycast: an empty batch is {"results": []}' '
	cast $R "{\"rays\": []}" && jcheck "j == {\"results\": []}"
'
test_expect 'raycast: unknown mesh is 404 mesh_not_found' '
	jexpect 404 POST /v1/meshes/nope/raycast "{$DOWN}" && errcode mesh_not_found
'

# ---- segment
test_expect 'segment: hit with fraction' '
	cast $S "{\"start\": [0.25, 5, 0.5], \"end\": [0.25, -5, 0.5]}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"distance\"], 4) and near(j[\"fraction\"], 0.4) and near(j[\"point\"], [0.25, 1, 0.5])"
'
test_expect 'segment: stopping short misses' '
	cast $S "{\"start\": [0.25, 5, 0.5], \"end\": [0.25, 1.5, 0.5]}" && jcheck "j == {\"hit\": False}"
'
test_expect 'segment: ending exactly on the face hits at fraction 1' '
	cast $S "{\"start\": [0.25, 5, 0.5], \"end\": [0.25, 1, 0.5]}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"fraction\"], 1)"
'
test_expect 'segment: a batch, mode all, with transform' '
	cast $S "{\"segments\": [{\"start\": [10.25, 5, 0.5], \"end\": [10.25, -5, 0.5]}, {\"start\": [0, 9, 0], \"end\": [0, 8, 0]}], \"mode\": \"all\", \"transform\": {\"position\": [10, 0, 0]}}" &&
	jcheck "[[h[\"triangle\"] for h in r[\"hits\"]] for r in j[\"results\"]] == [[6, 5], []] and near([h[\"fraction\"] for h in j[\"results\"][0][\"hits\"]], [0.4, 0.5])"
'

# ---- overlap
test_expect 'overlap: a box on the top face touches triangles 6 and 7' '
	cast $O "{\"box\": {\"center\": [0.5, 1, 0.5], \"half_extents\": [0.2, 0.05, 0.2]}}" &&
	jcheck "j == {\"count\": 2, \"triangles\": [6, 7], \"truncated\": False}"
'
test_expect 'overlap: a box at the corner (0,0,0) touches the 6 triangles sharing it' '
	cast $O "{\"box\": {\"center\": [0, 0, 0], \"half_extents\": [0.1, 0.1, 0.1], \"rotation\": [1, 0, 0, 0]}}" &&
	jcheck "j == {\"count\": 6, \"triangles\": [0, 1, 4, 5, 8, 9], \"truncated\": False}"
'
test_expect 'overlap: a box inside the cube touches nothing (surfaces only)' '
	cast $O "{\"box\": {\"center\": [0.5, 0.5, 0.5], \"half_extents\": [0.1, 0.1, 0.1]}}" &&
	jcheck "j == {\"count\": 0, \"triangles\": [], \"truncated\": False}"
'
test_expect 'overlap: limit 1 lists one, counts all, truncated' '
	cast $O "{\"box\": {\"center\": [0.5, 1, 0.5], \"half_extents\": [0.2, 0.05, 0.2]}, \"limit\": 1}" &&
	jcheck "j == {\"count\": 2, \"triangles\": [6], \"truncated\": True}"
'
test_expect 'overlap: a box touching the face exactly counts (closed solids)' '
	cast $O "{\"box\": {\"center\": [0.5, 1.5, 0.5], \"half_extents\": [0.2, 0.5, 0.2]}}" &&
	jcheck "j[\"count\"] == 2 and j[\"triangles\"] == [6, 7]"
'
test_expect 'overlap: a box rotated 45 degrees about y reaches the x = 1 face' '
	cast $O "{\"box\": {\"center\": [1.6, 0.5, 0.5], \"half_extents\": [0.5, 0.1, 0.5], \"rotation\": [0.9238795325112867, 0, 0.3826834323650898, 0]}}" &&
	jcheck "j[\"triangles\"] == [10, 11]" &&
	cast $O "{\"box\": {\"center\": [1.6, 0.5, 0.5], \"half_extents\": [0.5, 0.1, 0.5]}}" &&
	jcheck "j[\"count\"] == 0"
'
test_expect 'overlap: axes instead of rotation' '
	cast $O "{\"box\": {\"center\": [0.5, 1, 0.5], \"half_extents\": [0.2, 0.2, 0.05], \"axes\": [[1, 0, 0], [0, 0, 1], [0, -1, 0]]}}" &&
	jcheck "j[\"triangles\"] == [6, 7]"
'

# ---- OBB raycast
BOXES='"boxes": [{"id": "a", "center": [0, 0, 5], "half_extents": [1, 1, 1]}, {"id": "b", "center": [0, 0, 10], "half_extents": [1, 1, 1], "rotation": [1, 0, 0, 0]}]'
test_expect 'obb: the first box along the ray' '
	cast /v1/obb/raycast "{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1], $BOXES}" &&
	jcheck "j == {\"hit\": True, \"box\": 0, \"id\": \"a\", \"distance\": 4, \"point\": [0, 0, 4], \"normal\": [0, 0, -1], \"inside\": False}"
'
test_expect 'obb: from inside a box: distance 0, inside true' '
	cast /v1/obb/raycast "{\"origin\": [0, 0, 10], \"direction\": [0, 0, 1], $BOXES}" &&
	jcheck "j[\"hit\"] is True and j[\"box\"] == 1 and j[\"id\"] == \"b\" and j[\"distance\"] == 0 and j[\"inside\"] is True"
'
test_expect 'obb: a ray running along a face hits (closed solid)' '
	cast /v1/obb/raycast "{\"origin\": [1, 0, 0], \"direction\": [0, 0, 1], $BOXES}" &&
	jcheck "j[\"box\"] == 0 and near(j[\"distance\"], 4)"
'
test_expect 'obb: a ray through an edge only hits' '
	cast /v1/obb/raycast "{\"origin\": [1, 1, 0], \"direction\": [0, 0, 1], $BOXES}" &&
	jcheck "j[\"box\"] == 0 and near(j[\"distance\"], 4)"
'
test_expect 'obb: just outside misses, and max_distance cuts' '
	cast /v1/obb/raycast "{\"origin\": [1.01, 0, 0], \"direction\": [0, 0, 1], $BOXES}" && jcheck "j == {\"hit\": False}" &&
	cast /v1/obb/raycast "{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1], \"max_distance\": 3.9, $BOXES}" && jcheck "j == {\"hit\": False}"
'
test_expect 'obb: axes turn the box (half extents along its own axes)' '
	cast /v1/obb/raycast "{\"origin\": [0, 1.5, 0], \"direction\": [0, 0, 1], \"boxes\": [{\"center\": [0, 0, 5], \"half_extents\": [2, 0.5, 1], \"axes\": [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]}]}" &&
	jcheck "j[\"hit\"] is True and j[\"box\"] == 0 and near(j[\"distance\"], 4) and \"id\" not in j" &&
	cast /v1/obb/raycast "{\"origin\": [1.5, 0, 0], \"direction\": [0, 0, 1], \"boxes\": [{\"center\": [0, 0, 5], \"half_extents\": [2, 0.5, 1], \"axes\": [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]}]}" &&
	jcheck "j == {\"hit\": False}"
'
test_expect 'obb: a flat box (half extent 0) is hit' '
	cast /v1/obb/raycast "{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1], \"boxes\": [{\"center\": [0, 0, 3], \"half_extents\": [1, 1, 0]}]}" &&
	jcheck "j[\"box\"] == 0 and near(j[\"distance\"], 3)"
'
test_expect 'obb: a batch of rays against the same boxes' '
	cast /v1/obb/raycast "{\"rays\": [{\"origin\": [0, 0, 0], \"direction\": [0, 0, 1]}, {\"origin\": [0, 0, 20], \"direction\": [0, 0, -1]}, {\"origin\": [0, 5, 0], \"direction\": [0, 0, 1]}], $BOXES}" &&
	jcheck "[r.get(\"box\") for r in j[\"results\"]] == [0, 1, None] and near(j[\"results\"][1][\"distance\"], 9) and j[\"results\"][2] == {\"hit\": False}"
'

# ---- hitscan: the cube is a wall; a player box stands behind it
P='"boxes": [{"id": "p7", "center": [0.25, 0.5, 5], "half_extents": [0.5, 0.5, 0.5]}]'
test_expect 'hitscan: the wall in front of the player blocks the shot' '
	cast /v1/hitscan "{\"mesh\": \"cube\", \"origin\": [0.25, 0.5, -5], \"direction\": [0, 0, 1], $P}" &&
	jcheck "j[\"hit\"] == \"mesh\" and j[\"triangle\"] == 1 and near(j[\"distance\"], 5) and near(j[\"point\"], [0.25, 0.5, 0]) and near(j[\"normal\"], [0, 0, -1])"
'
test_expect 'hitscan: without the mesh the player is hit' '
	cast /v1/hitscan "{\"origin\": [0.25, 0.5, -5], \"direction\": [0, 0, 1], $P}" &&
	jcheck "j[\"hit\"] == \"box\" and j[\"box\"] == 0 and j[\"id\"] == \"p7\" and near(j[\"distance\"], 9.5) and near(j[\"normal\"], [0, 0, -1])"
'
test_expect 'hitscan: from the other side the player is hit first' '
	cast /v1/hitscan "{\"mesh\": \"cube\", \"origin\": [0.25, 0.5, 10], \"direction\": [0, 0, -1], $P}" &&
	jcheck "j[\"hit\"] == \"box\" and near(j[\"distance\"], 4.5) and near(j[\"point\"], [0.25, 0.5, 5.5])"
'
test_expect 'hitscan: a tie between the wall face and a box face goes to the mesh' '
	cast /v1/hitscan "{\"mesh\": \"cube\", \"origin\": [0.25, 0.5, -5], \"direction\": [0, 0, 1], \"boxes\": [{\"center\": [0.25, 0.5, 0.5], \"half_extents\": [0.2, 0.2, 0.5]}]}" &&
	jcheck "j[\"hit\"] == \"mesh\" and near(j[\"distance\"], 5)"
'
test_expect 'hitscan: nothing hit is {"hit": null}' '
	cast /v1/hitscan "{\"mesh\": \"cube\", \"origin\": [0.25, 0.5, -5], \"direction\": [0, 0, -1], $P}" &&
	jcheck "j == {\"hit\": None}"
'
test_expect 'hitscan: the transform moves the wall out of the way' '
	cast /v1/hitscan "{\"mesh\": \"cube\", \"transform\": {\"position\": [5, 0, 0]}, \"origin\": [0.25, 0.5, -5], \"direction\": [0, 0, 1], $P}" &&
	jcheck "j[\"hit\"] == \"box\" and near(j[\"distance\"], 9.5)"
'
test_expect 'hitscan: a batch of shots in order, max_distance per shot' '
	cast /v1/hitscan "{\"mesh\": \"cube\", \"shots\": [{\"origin\": [0.25, 0.5, -5], \"direction\": [0, 0, 1]}, {\"origin\": [0.25, 0.5, 10], \"direction\": [0, 0, -1]}, {\"origin\": [0.25, 0.5, 10], \"direction\": [0, 0, -1], \"max_distance\": 1}], $P}" &&
	jcheck "[r[\"hit\"] for r in j[\"results\"]] == [\"mesh\", \"box\", None]"
'
test_expect 'hitscan: an unknown mesh is 404 mesh_not_found' '
	jexpect 404 POST /v1/hitscan "{\"mesh\": \"nope\", \"origin\": [0, 0, 0], \"direction\": [0, 0, 1], $P}" && errcode mesh_not_found
'

# ---- the demo mesh (server/demo.c): a floor at y = 0 over [-20, 20]^2,
# walls 4 high inside x, z = +-19 .. 20, crates A (-1..1, 0..2, -1..1),
# B (8..10, 0..2, -6..-4), C (-10..-7, 0..3, 6..9).
D=/v1/meshes/demo/raycast
test_expect 'demo: straight down onto the floor at distance 10, normal up' '
	cast $D "{\"origin\": [5.5, 10, 0.25], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"hit\"] is True and near(j[\"distance\"], 10) and near(j[\"point\"], [5.5, 0, 0.25]) and near(j[\"normal\"], [0, 1, 0]) and j[\"front_face\"] is True"
'
test_expect 'demo: straight down onto crate A (2 high) at distance 8' '
	cast $D "{\"origin\": [0.5, 10, 0.25], \"direction\": [0, -1, 0]}" &&
	jcheck "near(j[\"distance\"], 8) and near(j[\"point\"], [0.5, 2, 0.25])"
'
test_expect 'demo: upwards escapes the open arena' '
	cast $D "{\"origin\": [5.5, 1, 0.25], \"direction\": [0, 1, 0]}" && jcheck "j == {\"hit\": False}"
'
test_expect 'demo: a horizontal shot at height 3.5 stops at the east wall (x = 19)' '
	cast $D "{\"origin\": [5.5, 3.5, 0.25], \"direction\": [1, 0, 0]}" &&
	jcheck "near(j[\"distance\"], 13.5) and near(j[\"point\"], [19, 3.5, 0.25]) and near(j[\"normal\"], [-1, 0, 0])"
'
test_expect 'demo: hitscan, crate B shields a player behind it' '
	cast /v1/hitscan "{\"mesh\": \"demo\", \"origin\": [0, 1, -5], \"direction\": [1, 0, 0], \"boxes\": [{\"id\": \"p\", \"center\": [12, 1, -5], \"half_extents\": [0.5, 1, 0.5]}]}" &&
	jcheck "j[\"hit\"] == \"mesh\" and near(j[\"distance\"], 8)" &&
	cast /v1/hitscan "{\"mesh\": \"demo\", \"origin\": [0, 1, -5], \"direction\": [1, 0, 0], \"boxes\": [{\"id\": \"p\", \"center\": [6, 1, -5], \"half_extents\": [0.5, 1, 0.5]}]}" &&
	jcheck "j[\"hit\"] == \"box\" and j[\"id\"] == \"p\" and near(j[\"distance\"], 5.5)"
'
test_done
