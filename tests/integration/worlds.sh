#!/usr/bin/env bash
# Worlds: static instances, snapshots of moving entities, rewound hitscans
# checked against positions computed here, the static raycast, and every
# error of the /v1/worlds section (400, 404, 405, 409, 413, 415).
. "$(dirname "$0")/lib.sh"

start_daemon --max-world-entities 4 --max-world-hitboxes 8 --max-world-instances 3 \
	--max-worlds 3 --max-batch 40 || { echo "not ok 1 - daemon starts"; exit 1; }
put_cube box >/dev/null || echo "# could not upload the cube"

W=/v1/worlds/match
# The wall: the unit cube scaled to x in [20, 21], y and z in [-2, 2];
# a mirrored prop (scale -1 in x) covering x in [29, 30], y in [5, 6], z in [0, 1].
WORLD='{"static": [
  {"id": "wall", "mesh": "box", "transform": {"position": [20, -2, -2], "scale": [1, 4, 4]}},
  {"id": "prop", "mesh": "box", "transform": {"position": [30, 5, 0], "scale": [-1, 1, 1]}, "layer": 3}
 ], "history_ms": 1000, "teleport_distance": 64}'

# snap TICK TIME Z [X]: the shooter p1 at (-10, 1.5, 0) and the target p2,
# a head (sphere r 0.25) at (X, 1.5, Z) over a body (capsule (X,0,Z)-(X,1,Z), r 0.4)
snap() {
	local x=${4:-5}
	printf '{"tick": %s, "time_ms": %s, "entities": [
	 {"id": "p1", "layer": 1, "hitboxes": [{"id": "head", "shape": "sphere", "center": [-10, 1.5, 0], "radius": 0.3}]},
	 {"id": "p2", "layer": 1, "hitboxes": [
	   {"id": "head", "shape": "sphere", "center": [%s, 1.5, %s], "radius": 0.25},
	   {"id": "body", "shape": "capsule", "a": [%s, 0, %s], "b": [%s, 1, %s], "radius": 0.4}]}]}' \
		"$1" "$2" "$x" "$3" "$x" "$3" "$x" "$3"
}
# shot Z [extra fields]: along +x from (-10, 1.5, Z)
shot() { printf '{"origin": [-10, 1.5, %s], "direction": [1, 0, 0]%s}' "$1" "${2:+, $2}"; }
IGN='"ignore": ["p1"]'

test_expect 'PUT a world: 201 with its info, then 200 on replace' '
	jexpect 201 PUT $W "$WORLD" &&
	jcheck "j[\"name\"] == \"match\" and j[\"instances\"] == 2 and j[\"ticks\"] == 0 and j[\"oldest\"] is None and j[\"history_ms\"] == 1000" &&
	jexpect 200 PUT $W "$WORLD"
'
test_expect 'two snapshots: 204 each; the info shows both ticks' '
	jexpect 204 POST $W/snapshots "$(snap 100 1000 0)" &&
	jexpect 204 POST $W/snapshots "$(snap 101 1050 2)" &&
	expect 200 GET $W &&
	jcheck "j[\"ticks\"] == 2 and j[\"entities\"] == 2 and j[\"hitboxes\"] == 3 and j[\"oldest\"] == {\"tick\": 100, \"time_ms\": 1000} and j[\"newest\"] == {\"tick\": 101, \"time_ms\": 1050}" &&
	expect 200 GET /v1/worlds && jcheck "[w[\"name\"] for w in j[\"worlds\"]] == [\"match\"]"
'
test_expect 'a shot from inside the shooter hits the shooter at 0, inside' '
	jexpect 200 POST $W/hitscan "$(shot 0)" &&
	jcheck "j[\"hit\"] == \"entity\" and j[\"entity\"] == \"p1\" and j[\"inside\"] is True and j[\"distance\"] == 0 and j[\"time_ms\"] == 1050"
'
test_expect 'rewound: at 1000 ms the head was at z 0 (hit at 14.75), now it is not' '
	jexpect 200 POST $W/hitscan "$(shot 0 "$IGN, \"time_ms\": 1000")" &&
	jcheck "j[\"hit\"] == \"entity\" and j[\"entity\"] == \"p2\" and j[\"hitbox\"] == \"head\" and near(j[\"distance\"], 14.75) and near(j[\"point\"], [4.75, 1.5, 0]) and near(j[\"normal\"], [-1, 0, 0]) and j[\"inside\"] is False and j[\"time_ms\"] == 1000" &&
	jexpect 200 POST $W/hitscan "$(shot 0 "$IGN")" &&
	jcheck "j[\"hit\"] == \"static\" and j[\"instance\"] == \"wall\" and j[\"mesh\"] == \"box\" and near(j[\"distance\"], 30) and near(j[\"normal\"], [-1, 0, 0]) and j[\"time_ms\"] == 1050"
'
# a direction is scaled by its largest component before its length is
# taken: squared, 1e-162 underflows to 0 and 1.7e-161 to a subnormal of a
# few bits (the shot was once refused as zero, or bent)
tiny() { printf '{"origin": [-10, 1.5, -15], "direction": [%s, 0, %s], %s, "time_ms": 1000}' "$1" "$1" "$IGN"; }
test_expect 'a direction of tiny components: the same shot as at unit scale' '
	jexpect 200 POST $W/hitscan "$(tiny 1)" && body_save unit &&
	jcheck "j[\"entity\"] == \"p2\" and j[\"hitbox\"] == \"head\" and near(j[\"distance\"], 450 ** 0.5 - 0.25)" &&
	jexpect 200 POST $W/hitscan "$(tiny 1.7e-161)" && body_same unit &&
	jexpect 200 POST $W/hitscan "$(tiny 1e-162)" && body_same unit &&
	jexpect 200 POST $W/hitscan "{\"shots\": [$(tiny 1e-300)]}" &&
	jcheck "j[\"results\"][0][\"entity\"] == \"p2\""
'
test_expect 'between ticks the head is interpolated (z 1 at 1025 ms)' '
	jexpect 200 POST $W/hitscan "$(shot 1 "$IGN, \"time_ms\": 1025")" &&
	jcheck "j[\"entity\"] == \"p2\" and near(j[\"distance\"], 14.75) and j[\"time_ms\"] == 1025"
'
test_expect 'past the newest snapshot: the newest is used and reported' '
	jexpect 200 POST $W/hitscan "$(shot 2 "$IGN, \"time_ms\": 99999")" &&
	jcheck "j[\"entity\"] == \"p2\" and j[\"time_ms\"] == 1050"
'
# 30 shots at random times and heights, expectations computed here from the
# snapshots: the head (or the body capsule) where it was, else the wall.
python3 - >"$TMP/batch.json" 2>"$TMP/expect.json" <<'PY'
import json, math, random, sys
random.seed(7)
shots, want = [], []
for i in range(30):
    t = random.uniform(1000, 1080)
    z = random.choice([random.uniform(-0.5, 2.5), None])
    f = min(max((t - 1000) / 50, 0), 1)
    zc = 2 * f
    if z is None:
        z = zc + random.uniform(-0.2, 0.2)   # aimed at the head
    y = 1.5
    dz = abs(z - zc)
    if dz <= 0.25 - 1e-4:
        want.append(["head", 15 - math.sqrt(0.25 ** 2 - dz ** 2), min(t, 1050)])
    elif dz > 0.25 + 1e-4 and math.hypot(0.5, dz) > 0.4 + 1e-4 and abs(z) < 2 - 1e-4:
        want.append(["wall", 30, min(t, 1050)])
    else:
        continue    # too close to an edge to call here
    shots.append({"origin": [-10, y, z], "direction": [1, 0, 0], "time_ms": t, "ignore": ["p1"]})
json.dump({"shots": shots}, sys.stdout)
json.dump(want, sys.stderr)
PY
test_expect 'a batch of shots at random past times matches positions computed here' '
	jexpect 200 POST $W/hitscan "$(cat "$TMP/batch.json")" &&
	jcheck "(lambda w: len(j[\"results\"]) == len(w) > 15 and all((r.get(\"hitbox\") == e[0] if e[0] == \"head\" else r.get(\"instance\") == \"wall\") and near(r[\"distance\"], e[1], 1e-4) and near(r[\"time_ms\"], e[2], 1e-9) for r, e in zip(j[\"results\"], w)))(json.load(open(\"$TMP/expect.json\")))"
'
# shot_counts METRICS: entity static miss, from collisiond_world_shots_total
shot_counts() {
	python3 -c 'import re, sys
t = open(sys.argv[1]).read()
print(" ".join(re.search(r"^collisiond_world_shots_total\{outcome=\"%s\"\} (\d+)$" % k, t, re.M).group(1) for k in ("entity", "static", "miss")))' "$1"
}
# kind_count METRICS KIND: collisiond_rays_total{kind=KIND}
kind_count() {
	sed -n "s/^collisiond_rays_total{kind=\"$2\"} \([0-9]*\)$/\1/p" "$1"
}
# outcome_counts ANSWER: entity static miss, counted in a batch answer
outcome_counts() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(" ".join(str(sum(1 for x in r if x["hit"] == k)) for k in ("entity", "static", None)))' "$1"
}
test_expect 'metrics: a batch adds exactly its outcomes to the shot counters, and its shots to rays_total' '
	expect 200 GET /metrics && before=$(shot_counts "$TMP/body") &&
	h0=$(kind_count "$TMP/body" world_hitscan) && r0=$(kind_count "$TMP/body" world_raycast) &&
	jexpect 200 POST $W/hitscan "$(sed "s/]}\$/, $(shot 5 "$IGN"), $(shot 5 "$IGN")]}/" "$TMP/batch.json")" &&
	got=$(outcome_counts "$TMP/body") &&
	jexpect 200 POST $W/raycast "{\"shots\": [$(shot 5 ""), $(shot 5 ""), $(shot 5 "")]}" &&
	expect 200 GET /metrics && after=$(shot_counts "$TMP/body") &&
	h1=$(kind_count "$TMP/body" world_hitscan) && r1=$(kind_count "$TMP/body" world_raycast) &&
	read -r e0 s0 m0 <<<"$before" && read -r e1 s1 m1 <<<"$after" && read -r e s m <<<"$got" &&
	echo "# before $before, answered $got, after $after; rays_total world_hitscan $h0 -> $h1, world_raycast $r0 -> $r1" &&
	[ "$m" -ge 2 ] && [ "$e" -ge 1 ] && [ "$s" -ge 1 ] &&
	[ $((e1 - e0)) -eq "$e" ] && [ $((s1 - s0)) -eq "$s" ] && [ $((m1 - m0)) -eq "$m" ] &&
	[ $((h1 - h0)) -eq $((e + s + m)) ] && [ $((r1 - r0)) -eq 3 ]
'
test_expect 'the same batch read by the fast decoder and by the tree (a key escaped): byte-identical answers' '
	jexpect 200 POST $W/hitscan "$(cat "$TMP/batch.json")" && body_save fast &&
	jexpect 200 POST $W/hitscan "$(sed "s/\"shots\"/\"sh\\\\u006fts\"/" "$TMP/batch.json")" && body_same fast &&
	jexpect 200 POST $W/hitscan "$(cat "$TMP/batch.json" | sed "s/\"origin\"/\"\\\\u006frigin\"/g")" && body_same fast
'
test_expect 'layers: without layer 1 the target is not there; ignore skips the shooter' '
	jexpect 200 POST $W/hitscan "$(shot 0 "\"time_ms\": 1000, \"layers\": [0]")" &&
	jcheck "j[\"hit\"] == \"static\" and j[\"instance\"] == \"wall\"" &&
	jexpect 200 POST $W/hitscan "$(shot 5 "$IGN")" && jcheck "j == {\"hit\": None, \"time_ms\": 1050}"
'
test_expect 'mode all: head, wall entry and exit, sorted; max_hits caps (truncated)' '
	jexpect 200 POST $W/hitscan "$(shot 0 "$IGN, \"time_ms\": 1000, \"mode\": \"all\"")" &&
	jcheck "[h[\"hit\"] for h in j[\"hits\"]] == [\"entity\", \"static\", \"static\"] and near([h[\"distance\"] for h in j[\"hits\"]], [14.75, 30, 31]) and j[\"truncated\"] is False and j[\"time_ms\"] == 1000" &&
	jexpect 200 POST $W/hitscan "$(shot 0 "$IGN, \"time_ms\": 1000, \"mode\": \"all\", \"max_hits\": 2")" &&
	jcheck "len(j[\"hits\"]) == 2 and j[\"truncated\"] is True"
'
test_expect 'the earlier tick decides: teleported (moved > 64) target holds its pose until the next tick' '
	jexpect 204 POST $W/snapshots "$(snap 102 1100 2 200)" &&
	jexpect 200 POST $W/hitscan "$(shot 2 "$IGN, \"time_ms\": 1099")" &&
	jcheck "j[\"entity\"] == \"p2\" and near(j[\"distance\"], 14.75)" &&
	jexpect 200 POST $W/hitscan "$(shot 2 "$IGN, \"time_ms\": 1100")" &&
	jcheck "j[\"hit\"] == \"static\""
'
test_expect 'raycast: static only, closest / any / all; a mirrored instance: normal is (b-a)x(c-a) as placed (mirroring flips the winding)' '
	jexpect 200 POST $W/raycast "$(shot 0)" &&
	jcheck "j[\"hit\"] == \"static\" and j[\"instance\"] == \"wall\" and near(j[\"distance\"], 30) and \"time_ms\" not in j" &&
	jexpect 200 POST $W/raycast "$(shot 0 "\"mode\": \"any\"")" && jcheck "j[\"instance\"] == \"wall\"" &&
	jexpect 200 POST $W/raycast "$(shot 0 "\"mode\": \"all\"")" && jcheck "near([h[\"distance\"] for h in j[\"hits\"]], [30, 31])" &&
	jexpect 200 POST $W/raycast "{\"origin\": [0, 5.5, 0.25], \"direction\": [1, 0, 0]}" &&
	jcheck "j[\"instance\"] == \"prop\" and near(j[\"distance\"], 29) and near(j[\"normal\"], [1, 0, 0]) and near(j[\"point\"], [29, 5.5, 0.25])" &&
	jexpect 200 POST $W/raycast "{\"origin\": [0, 5.5, 0.25], \"direction\": [1, 0, 0], \"layers\": [0, 1]}" && jcheck "j == {\"hit\": None}"
'

# ---- errors
test_expect '409 conflict: a tick or time that does not increase' '
	jexpect 409 POST $W/snapshots "$(snap 102 1200 0)" && errcode conflict "tick" &&
	jexpect 409 POST $W/snapshots "$(snap 103 1100 0)" && errcode conflict &&
	jexpect 409 POST $W/snapshots "$(snap 50 2000 0)" && errcode conflict
'
test_expect '400 time_ms older than the history held names the shot' '
	jexpect 400 POST $W/hitscan "{\"shots\": [$(shot 0), $(shot 0 "\"time_ms\": 10")]}" &&
	errcode invalid_request "shots[1].time_ms: older than the history held"
'
test_expect '404 world_not_found for every world route' '
	expect 404 GET /v1/worlds/nope && errcode world_not_found "nope" &&
	expect 404 DELETE /v1/worlds/nope && errcode world_not_found &&
	jexpect 404 POST /v1/worlds/nope/snapshots "$(snap 1 1 0)" && errcode world_not_found &&
	jexpect 404 POST /v1/worlds/nope/hitscan "$(shot 0)" && errcode world_not_found &&
	jexpect 404 POST /v1/worlds/nope/raycast "$(shot 0)" && errcode world_not_found
'
test_expect '404 mesh_not_found names the instance or the hitbox' '
	jexpect 404 PUT /v1/worlds/w2 "{\"static\": [{\"id\": \"a\", \"mesh\": \"box\"}, {\"id\": \"b\", \"mesh\": \"ghost\"}]}" &&
	errcode mesh_not_found "static[1].mesh" &&
	jexpect 404 POST $W/snapshots "{\"tick\": 500, \"time_ms\": 5000, \"entities\": [{\"id\": \"car\", \"hitboxes\": [{\"id\": \"hull\", \"shape\": \"mesh\", \"mesh\": \"ghost\"}]}]}" &&
	errcode mesh_not_found "entities[0].hitboxes[0].mesh"
'
test_expect 'a mesh hitbox moved by its transform is hit (mover), with its triangle' '
	jexpect 204 POST $W/snapshots "{\"tick\": 500, \"time_ms\": 5000, \"entities\": [{\"id\": \"door\", \"hitboxes\": [{\"id\": \"leaf\", \"shape\": \"mesh\", \"mesh\": \"box\", \"transform\": {\"position\": [0, 1, -0.5]}}]}]}" &&
	jexpect 200 POST $W/hitscan "$(shot 0)" &&
	jcheck "j[\"entity\"] == \"door\" and j[\"hitbox\"] == \"leaf\" and isinstance(j[\"triangle\"], int) and near(j[\"distance\"], 10)"
'
test_expect 'a deleted instance mesh: 404 mesh_not_found naming the instance; a replaced one is seen' '
	req PUT /v1/meshes/wallmesh -H "Content-Type: application/json" --data-binary "$CUBE_JSON" &&
	jexpect 201 PUT /v1/worlds/w3 "{\"static\": [{\"id\": \"slab\", \"mesh\": \"wallmesh\", \"transform\": {\"position\": [5, 1, -0.5]}}]}" &&
	jexpect 200 POST /v1/worlds/w3/raycast "$(shot 0)" && jcheck "near(j[\"distance\"], 15)" &&
	req PUT /v1/meshes/wallmesh -H "Content-Type: application/json" --data-binary "{\"vertices\": [[-1,0,-1],[-1,1,-1],[-1,0,2]], \"triangles\": [[0,1,2]]}" &&
	jexpect 200 POST /v1/worlds/w3/raycast "$(shot 0)" && jcheck "near(j[\"distance\"], 14)" &&
	expect 204 DELETE /v1/meshes/wallmesh &&
	jexpect 404 POST /v1/worlds/w3/raycast "$(shot 0)" && errcode mesh_not_found "\"slab\""
'
test_expect '413 over the limits: entities, hitboxes, instances, worlds, shots' '
	jexpect 413 POST $W/snapshots "{\"tick\": 900, \"time_ms\": 9000, \"entities\": [{\"id\": \"a\", \"hitboxes\": []}, {\"id\": \"b\", \"hitboxes\": []}, {\"id\": \"c\", \"hitboxes\": []}, {\"id\": \"d\", \"hitboxes\": []}, {\"id\": \"e\", \"hitboxes\": []}]}" &&
	errcode payload_too_large "entities" &&
	jexpect 413 POST $W/snapshots "$(python3 -c "import json; print(json.dumps({\"tick\": 900, \"time_ms\": 9000, \"entities\": [{\"id\": \"a\", \"hitboxes\": [{\"id\": str(i), \"shape\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 1} for i in range(9)]}]}))")" &&
	errcode payload_too_large "hitboxes" &&
	jexpect 413 PUT /v1/worlds/big "{\"static\": [{\"id\": \"a\", \"mesh\": \"box\"}, {\"id\": \"b\", \"mesh\": \"box\"}, {\"id\": \"c\", \"mesh\": \"box\"}, {\"id\": \"d\", \"mesh\": \"box\"}]}" &&
	errcode payload_too_large "static" &&
	jexpect 201 PUT /v1/worlds/w4 "{}" &&
	jexpect 413 PUT /v1/worlds/w5 "{}" && errcode payload_too_large "max-worlds" &&
	jexpect 413 POST $W/hitscan "{\"shots\": [$(for i in $(seq 41); do printf "%s," "$(shot 0)"; done) $(shot 0)]}" &&
	errcode payload_too_large "shots"
'
test_expect '400 invalid_request names the field' '
	jexpect 400 POST $W/snapshots "{\"tick\": 901, \"time_ms\": 9001, \"entities\": [{\"id\": \"a\", \"hitboxes\": [{\"id\": \"h\", \"shape\": \"sphere\", \"center\": [0, 0, 0], \"radus\": 1}]}]}" &&
	errcode invalid_request "entities[0].hitboxes[0].radus: unknown field" &&
	jexpect 400 POST $W/snapshots "{\"tick\": 901, \"time_ms\": 9001, \"entities\": [{\"id\": \"a\", \"hitboxes\": [{\"id\": \"h\", \"shape\": \"cone\"}]}]}" &&
	errcode invalid_request "entities[0].hitboxes[0].shape" &&
	jexpect 400 POST $W/snapshots "{\"tick\": 901, \"time_ms\": 9001, \"entities\": [{\"id\": \"a\", \"hitboxes\": [{\"id\": \"h\", \"shape\": \"capsule\", \"a\": [0, 0, 0], \"b\": [0, 1, 0]}]}]}" &&
	errcode invalid_request "entities[0].hitboxes[0].radius: required" &&
	jexpect 400 POST $W/snapshots "{\"tick\": 901, \"time_ms\": 9001, \"entities\": [{\"id\": \"a\", \"layer\": 32, \"hitboxes\": []}]}" &&
	errcode invalid_request "entities[0].layer" &&
	jexpect 400 POST $W/snapshots "{\"tick\": 901, \"time_ms\": 9001, \"entities\": [{\"id\": \"a\", \"hitboxes\": []}, {\"id\": \"a\", \"hitboxes\": []}]}" &&
	errcode invalid_request "entities[1].id" &&
	jexpect 400 POST $W/snapshots "{\"tick\": 901, \"time_ms\": 9001, \"entities\": [{\"id\": \"a\", \"hitboxes\": [{\"id\": \"h\", \"shape\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 1}, {\"id\": \"h\", \"shape\": \"sphere\", \"center\": [0, 0, 0], \"radius\": 1}]}]}" &&
	errcode invalid_request "entities[0].hitboxes[1].id" &&
	jexpect 400 POST $W/snapshots "{\"tick\": 901, \"time_ms\": 9001, \"entities\": [{\"id\": \"a\", \"hitboxes\": [{\"id\": \"h\", \"shape\": \"mesh\", \"mesh\": \"box\", \"transform\": {\"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]}}]}]}" &&
	errcode invalid_request "entities[0].hitboxes[0].transform.matrix" &&
	jexpect 400 POST $W/snapshots "{\"tick\": 901, \"time_ms\": 9001, \"entities\": [{\"id\": \"a\", \"hitboxes\": [{\"id\": \"h\", \"shape\": \"mesh\", \"mesh\": \"box\", \"transform\": {\"scale\": [1e-46, 1, 1]}}]}]}" &&
	errcode invalid_request "entities[0].hitboxes[0].transform.scale: components must not be zero" &&
	jexpect 400 POST $W/snapshots "{\"tick\": -1, \"time_ms\": 9001, \"entities\": []}" && errcode invalid_request "tick" &&
	jexpect 400 POST $W/snapshots "{\"tick\": 9007199254740993, \"time_ms\": 9001, \"entities\": []}" &&
	errcode invalid_request "tick: must be an integer in [0, 2^53 - 1]" &&
	jexpect 400 PUT /v1/worlds/w6 "{\"history_ms\": 0}" && errcode invalid_request "history_ms" &&
	jexpect 400 PUT /v1/worlds/w6 "{\"teleport_distance\": -1}" && errcode invalid_request "teleport_distance" &&
	jexpect 400 PUT /v1/worlds/w6 "{\"static\": [{\"id\": \"a\", \"mesh\": \"box\"}, {\"id\": \"a\", \"mesh\": \"box\"}]}" &&
	errcode invalid_request "static[1].id" &&
	jexpect 400 POST $W/hitscan "{\"origin\": [0, 0, 0], \"direction\": [0, 0, 0]}" && errcode invalid_request "direction" &&
	jexpect 400 POST $W/hitscan "$(shot 0 "\"mode\": \"any\"")" && errcode invalid_request "mode" &&
	jexpect 400 POST $W/hitscan "$(shot 0 "\"layers\": [40]")" && errcode invalid_request "layers[0]" &&
	jexpect 400 POST $W/hitscan "$(shot 0 "\"max_hits\": 2")" && errcode invalid_request "max_hits: only with mode" &&
	jexpect 400 POST $W/raycast "{\"origin\": [0, 1, 0], \"direction\": [1, 0, 0], \"mode\": \"any\", \"max_hits\": 2}" &&
	errcode invalid_request "max_hits: only with mode" &&
	jexpect 400 POST $W/hitscan "{\"shots\": [$(shot 0 "\"max_distnace\": 3")]}" && errcode invalid_request "shots[0].max_distnace" &&
	jexpect 400 PUT "/v1/worlds/.bad" "{}" && errcode invalid_request "name"
'
test_expect '400 invalid_json, 415 wrong content type, 405 with Allow' '
	jexpect 400 POST $W/hitscan "{\"origin\": [" && errcode invalid_json &&
	expect 415 POST $W/snapshots -H "Content-Type: text/plain" --data-binary "$(snap 1 1 0)" && errcode unsupported_media_type &&
	expect 405 PATCH $W && errcode method_not_allowed && header Allow "GET, HEAD, PUT, DELETE" &&
	expect 405 GET $W/hitscan && header Allow "POST"
'
test_expect 'metrics: worlds held, snapshots ingested, their memory, shots by outcome' '
	expect 200 GET /metrics &&
	grep -q "^collisiond_worlds 3$" "$TMP/body" &&
	grep -qE "^collisiond_world_snapshots_total [4-9]" "$TMP/body" &&
	snapbytes=$(sed -n "s/^collisiond_world_snapshot_bytes \([0-9]*\)$/\1/p" "$TMP/body") &&
	[ -n "$snapbytes" ] && [ $((snapbytes % 2097152)) -eq 0 ] &&
	grep -qE "^collisiond_world_shots_total\{outcome=\"entity\"\} [1-9]" "$TMP/body" &&
	grep -qE "^collisiond_world_shots_total\{outcome=\"static\"\} [1-9]" "$TMP/body" &&
	grep -qE "^collisiond_world_shots_total\{outcome=\"miss\"\} [1-9]" "$TMP/body" &&
	grep -qE "^collisiond_http_requests_total\{route=\"/v1/worlds/\{world\}/snapshots\",method=\"POST\",status=\"409\"\} [3-9]" "$TMP/body"
'
test_expect 'DELETE a world: 204, then 404' '
	expect 204 DELETE $W && expect 404 GET $W && errcode world_not_found
'
test_done
