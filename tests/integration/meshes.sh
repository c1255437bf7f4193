#!/usr/bin/env bash
# Meshes: PUT (JSON nested and flat, OBJ, binary and ASCII STL), versions,
# GET, list, DELETE, names, invalid meshes, degenerate triangles.
. "$(dirname "$0")/lib.sh"

start_daemon || { echo "not ok 1 - daemon starts"; exit 1; }

CUBE_INFO='j["vertices"] == 8 and j["triangles"] == 12 and j["degenerate_triangles"] == 0 and j["bounds"] == {"min": [0, 0, 0], "max": [1, 1, 1]} and j["build_ms"] >= 0 and j["memory_bytes"] > 0'

test_expect 'GET /v1/meshes is empty at first' '
	expect 200 GET /v1/meshes && jcheck "j == {\"meshes\": []}"
'
test_expect 'PUT a new JSON mesh is 201 with version 1 and its info' '
	jexpect 201 PUT /v1/meshes/cube "$CUBE_JSON" &&
	header Content-Type application/json &&
	jcheck "j[\"name\"] == \"cube\" and j[\"version\"] == 1 and $CUBE_INFO" &&
	jcheck "set(j) == {\"name\", \"version\", \"vertices\", \"triangles\", \"degenerate_triangles\", \"bounds\", \"build_ms\", \"memory_bytes\"}"
'
test_expect 'PUT the same name again replaces it: 200, version 2' '
	jexpect 200 PUT /v1/meshes/cube "$CUBE_JSON" &&
	jcheck "j[\"name\"] == \"cube\" and j[\"version\"] == 2 and $CUBE_INFO"
'
test_expect 'GET /v1/meshes/cube is the info of version 2' '
	expect 200 GET /v1/meshes/cube &&
	jcheck "j[\"version\"] == 2 and $CUBE_INFO"
'
test_expect 'flat arrays are accepted' '
	jexpect 201 PUT /v1/meshes/flat "{\"vertices\": [0,0,0, 1,0,0, 0,0,1], \"triangles\": [0,2,1]}" &&
	jcheck "j[\"vertices\"] == 3 and j[\"triangles\"] == 1 and j[\"bounds\"] == {\"min\": [0,0,0], \"max\": [1,0,1]}"
'
test_expect 'the flat triangle is hit where expected' '
	jexpect 200 POST /v1/meshes/flat/raycast "{\"origin\": [0.25, 3, 0.25], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"hit\"] is True and j[\"triangle\"] == 0 and near(j[\"distance\"], 3) and near(j[\"normal\"], [0, 1, 0])"
'
test_expect 'GET /v1/meshes lists both, sorted by name' '
	expect 200 GET /v1/meshes &&
	jcheck "[(m[\"name\"], m[\"version\"]) for m in j[\"meshes\"]] == [(\"cube\", 2), (\"flat\", 1)]"
'
test_expect 'DELETE is 204 with an empty body' '
	expect 204 DELETE /v1/meshes/flat && [ ! -s "$TMP/body" ]
'
test_expect 'GET after DELETE is 404 mesh_not_found' '
	expect 404 GET /v1/meshes/flat && errcode mesh_not_found
'
test_expect 'DELETE of an unknown mesh is 404 mesh_not_found' '
	expect 404 DELETE /v1/meshes/flat && errcode mesh_not_found
'
test_expect 'a name created again after DELETE starts at version 1' '
	jexpect 201 PUT /v1/meshes/flat "{\"vertices\": [0,0,0, 1,0,0, 0,0,1], \"triangles\": [0,2,1]}" &&
	jcheck "j[\"version\"] == 1"
'
test_expect 'names: 64 characters of [A-Za-z0-9_.-] are accepted' '
	jexpect 201 PUT /v1/meshes/Ab-9_.x234567890123456789012345678901234567890123456789012345678 "$CUBE_JSON" &&
	jcheck "j[\"name\"] == \"Ab-9_.x234567890123456789012345678901234567890123456789012345678\""
'
test_expect 'names: 65 characters are 400 invalid_request' '
	jexpect 400 PUT /v1/meshes/a2345678901234567890123456789012345678901234567890123456789012345 "$CUBE_JSON" &&
	errcode invalid_request
'
test_expect 'names: a leading dot is 400 invalid_request' '
	jexpect 400 PUT /v1/meshes/.hidden "$CUBE_JSON" && errcode invalid_request
'
test_expect 'names: a character outside the set is 400 invalid_request' '
	jexpect 400 PUT "/v1/meshes/a%20b" "$CUBE_JSON" && errcode invalid_request
'
test_expect 'names are case-sensitive' '
	expect 404 GET /v1/meshes/CUBE && errcode mesh_not_found
'

# ---- OBJ
test_expect 'OBJ upload (model/obj) is 201 with the same info as JSON' '
	expect 201 PUT /v1/meshes/objcube -H "Content-Type: model/obj" --data-binary "$CUBE_OBJ" &&
	jcheck "$CUBE_INFO"
'
test_expect 'OBJ: the cube answers like the JSON cube (triangle 6 from above)' '
	jexpect 200 POST /v1/meshes/objcube/raycast "{\"origin\": [0.25, 5, 0.5], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"distance\"], 4)"
'
OBJ_FORMS='o thing
# comment
mtllib x.mtl
v 0 0 0
v 1 0 0
v 1 0 1
v 0 0 1
v 5 5 5 1.0
vt 0 0
vt 1 0
vt 1 1
vn 0 1 0
usemtl m
s off
g quad
f 1/1/1 4/2/1 3/3/1 2/1/1
f -5//1 -3//1 -4//1
f 1/1 2/2 4/3
'
test_expect 'OBJ: v/vt/vn, v//vn, v/vt, negative indices, a quad fan-triangulated, other statements ignored' '
	expect 201 PUT /v1/meshes/forms -H "Content-Type: model/obj" --data-binary "$OBJ_FORMS" &&
	jcheck "j[\"vertices\"] == 5 and j[\"triangles\"] == 4 and j[\"bounds\"] == {\"min\": [0,0,0], \"max\": [5,5,5]}"
'
# the quad 1 4 3 2 fans into (1,4,3) = triangle 0 and (1,3,2) = triangle 1;
# (0.75, 0.375) lies in (1,3,2) (= triangles 1 and 2), not in 0 or 3.
test_expect 'OBJ: fan triangles are numbered in file order' '
	jexpect 200 POST /v1/meshes/forms/raycast "{\"origin\": [0.75, 1, 0.375], \"direction\": [0, -1, 0], \"mode\": \"all\"}" &&
	jcheck "[h[\"triangle\"] for h in j[\"hits\"]] == [1, 2]"
'
test_expect 'OBJ: an index out of range is 400 invalid_mesh naming the line' '
	expect 400 PUT /v1/meshes/bad -H "Content-Type: model/obj" --data-binary "$(printf "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n")" &&
	errcode invalid_mesh 4
'
test_expect 'OBJ: a vertex with a missing coordinate is 400 invalid_mesh' '
	expect 400 PUT /v1/meshes/bad -H "Content-Type: model/obj" --data-binary "$(printf "v 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")" &&
	errcode invalid_mesh
'
test_expect 'OBJ: a non-finite vertex is 400 invalid_mesh' '
	expect 400 PUT /v1/meshes/bad -H "Content-Type: model/obj" --data-binary "$(printf "v 0 0 inf\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")" &&
	errcode invalid_mesh
'
test_expect 'OBJ: a garbled face is 400 invalid_mesh' '
	expect 400 PUT /v1/meshes/bad -H "Content-Type: model/obj" --data-binary "$(printf "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n")" &&
	errcode invalid_mesh
'
test_expect 'OBJ: no faces is 400 invalid_mesh' '
	expect 400 PUT /v1/meshes/bad -H "Content-Type: model/obj" --data-binary "$(printf "v 0 0 0\nv 1 0 0\nv 0 1 0\n")" &&
	errcode invalid_mesh
'

# ---- STL
python3 - "$TMP/cube.stl" "$TMP/cube_ascii.stl" <<'PY'
import struct, sys
V = [(0,0,0),(1,0,0),(1,1,0),(0,1,0),(0,0,1),(1,0,1),(1,1,1),(0,1,1)]
T = [(0,2,1),(0,3,2),(4,5,6),(4,6,7),(0,1,5),(0,5,4),(3,7,6),(3,6,2),(0,4,7),(0,7,3),(1,2,6),(1,6,5)]
with open(sys.argv[1], "wb") as f:
    # a header starting with "solid" must not fool the reader into ASCII
    f.write(b"solid but binary".ljust(80, b" "))
    f.write(struct.pack("<I", len(T)))
    for t in T:
        f.write(struct.pack("<3f", 0, 0, 0))
        for i in t:
            f.write(struct.pack("<3f", *V[i]))
        f.write(struct.pack("<H", 0))
with open(sys.argv[2], "w") as f:
    f.write("solid cube\n")
    for t in T:
        f.write("  facet normal 0 0 0\n    outer loop\n")
        for i in t:
            f.write("      vertex %g %g %g\n" % V[i])
        f.write("    endloop\n  endfacet\n")
    f.write("endsolid cube\n")
PY
test_expect 'binary STL (model/stl) is 201: 36 vertices (not merged), 12 triangles' '
	expect 201 PUT /v1/meshes/stlcube -H "Content-Type: model/stl" --data-binary @"$TMP/cube.stl" &&
	jcheck "j[\"vertices\"] == 36 and j[\"triangles\"] == 12 and j[\"bounds\"] == {\"min\": [0,0,0], \"max\": [1,1,1]}"
'
test_expect 'binary STL: triangle numbers follow the facets (6 from above)' '
	jexpect 200 POST /v1/meshes/stlcube/raycast "{\"origin\": [0.25, 5, 0.5], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"triangle\"] == 6 and near(j[\"distance\"], 4) and near(j[\"normal\"], [0, 1, 0])"
'
test_expect 'ASCII STL is 201 with the same counts' '
	expect 201 PUT /v1/meshes/stlascii -H "Content-Type: model/stl" --data-binary @"$TMP/cube_ascii.stl" &&
	jcheck "j[\"vertices\"] == 36 and j[\"triangles\"] == 12"
'
test_expect 'binary STL with a count beyond its length is 400 invalid_mesh' '
	head -c 500 "$TMP/cube.stl" >"$TMP/short.stl" &&
	expect 400 PUT /v1/meshes/bad -H "Content-Type: model/stl" --data-binary @"$TMP/short.stl" &&
	errcode invalid_mesh
'
test_expect 'garbage as STL is 400 invalid_mesh' '
	expect 400 PUT /v1/meshes/bad -H "Content-Type: model/stl" --data-binary "not an stl at all" &&
	errcode invalid_mesh
'

# ---- invalid JSON meshes
test_expect 'JSON: an index out of range is 400 invalid_mesh naming triangles[1]' '
	jexpect 400 PUT /v1/meshes/bad "{\"vertices\": [[0,0,0],[1,0,0],[0,1,0]], \"triangles\": [[0,1,2],[0,1,3]]}" &&
	errcode invalid_mesh "triangles[1]"
'
test_expect 'JSON: no triangles is 400 invalid_mesh' '
	jexpect 400 PUT /v1/meshes/bad "{\"vertices\": [[0,0,0],[1,0,0],[0,1,0]], \"triangles\": []}" &&
	errcode invalid_mesh
'
test_expect 'JSON: a non-finite vertex (1e400) is 400' '
	jexpect 400 PUT /v1/meshes/bad "{\"vertices\": [[0,0,1e400],[1,0,0],[0,1,0]], \"triangles\": [[0,1,2]]}" &&
	jcheck "j[\"error\"][\"code\"] in (\"invalid_mesh\", \"invalid_request\") and \"vertices[0]\" in j[\"error\"][\"message\"]"
'
test_expect 'JSON: a negative index is 400 naming triangles[0]' '
	jexpect 400 PUT /v1/meshes/bad "{\"vertices\": [[0,0,0],[1,0,0],[0,1,0]], \"triangles\": [[0,-1,2]]}" &&
	jcheck "j[\"error\"][\"code\"] in (\"invalid_mesh\", \"invalid_request\") and \"triangles[0]\" in j[\"error\"][\"message\"]"
'
test_expect 'JSON: a flat vertex list not a multiple of 3 is 400' '
	jexpect 400 PUT /v1/meshes/bad "{\"vertices\": [0,0,0,1,0,0,0,1], \"triangles\": [0,1,2]}" &&
	jcheck "j[\"error\"][\"code\"] in (\"invalid_mesh\", \"invalid_request\") and \"vertices\" in j[\"error\"][\"message\"]"
'
test_expect 'JSON: a fractional index is 400 invalid_request' '
	jexpect 400 PUT /v1/meshes/bad "{\"vertices\": [[0,0,0],[1,0,0],[0,1,0]], \"triangles\": [[0,1.5,2]]}" &&
	errcode invalid_request "triangles[0]"
'
test_expect 'JSON: an unknown field is 400 invalid_request naming it' '
	jexpect 400 PUT /v1/meshes/bad "{\"vertices\": [[0,0,0],[1,0,0],[0,1,0]], \"triangles\": [[0,1,2]], \"normals\": []}" &&
	errcode invalid_request normals
'
test_expect 'failed uploads stored nothing' '
	expect 404 GET /v1/meshes/bad && errcode mesh_not_found
'
test_expect 'a failed replace keeps the old version' '
	jexpect 400 PUT /v1/meshes/cube "{\"vertices\": [[0,0,0]], \"triangles\": [[0,0,5]]}" &&
	expect 200 GET /v1/meshes/cube && jcheck "j[\"version\"] == 2 and $CUBE_INFO"
'

# ---- degenerate triangles
test_expect 'degenerate triangles are counted, kept in numbering, never hit' '
	jexpect 201 PUT /v1/meshes/degen "{\"vertices\": [[0,0,0],[1,0,0],[0,0,1],[2,0,0]], \"triangles\": [[0,1,3],[0,0,2],[0,2,1]]}" &&
	jcheck "j[\"triangles\"] == 3 and j[\"degenerate_triangles\"] == 2" &&
	jexpect 200 POST /v1/meshes/degen/raycast "{\"origin\": [0.25, 1, 0.25], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"hit\"] is True and j[\"triangle\"] == 2"
'
test_expect 'DELETE then list no longer shows the mesh' '
	expect 204 DELETE /v1/meshes/degen &&
	expect 200 GET /v1/meshes &&
	jcheck "\"degen\" not in [m[\"name\"] for m in j[\"meshes\"]]"
'
test_done
