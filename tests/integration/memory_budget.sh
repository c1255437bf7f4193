#!/usr/bin/env bash
# --max-memory: meshes and world snapshots held stay under it; a PUT or a
# snapshot past it is 507 insufficient_storage naming the flag, nothing is
# stored or changed, the daemon keeps serving, the bytes come back on
# delete; /metrics shows what is held against the limit.
. "$(dirname "$0")/lib.sh"
require_daemon

# grid_json N: an N x N grid, 2 (N-1)^2 triangles
grid_json() { python3 -c '
import json, sys
n = int(sys.argv[1])
v = [[x, (x * 7 + z * 3) % 5, z] for x in range(n) for z in range(n)]
t = []
for x in range(n - 1):
    for z in range(n - 1):
        a = x * n + z
        t += [[a, a + 1, a + n], [a + 1, a + n + 1, a + n]]
print(json.dumps({"vertices": v, "triangles": t}))' "$1"; }
# metric NAME: its value in /metrics
metric() { curl -s "$URL/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
# snapshot TICK N: N entities of four spheres each
snapshot() { python3 -c '
import json, sys
t, n = int(sys.argv[1]), int(sys.argv[2])
print(json.dumps({"tick": t, "time_ms": 10 * t, "entities": [
    {"id": "p%d" % e, "hitboxes": [{"id": h, "shape": "sphere", "center": [e, k, 0], "radius": 0.4}
                                  for k, h in enumerate("abcd")]} for e in range(n)]}))' "$1" "$2"; }

GRID=$(grid_json 40)	# 3 042 triangles, 194 152 bytes held
start_daemon --max-memory 350K --threads 2 || { echo "not ok 1 - daemon starts"; exit 1; }

test_expect 'the limit and what is held are in /metrics (nothing held yet)' '
	[ "$(metric collisiond_memory_limit_bytes)" = 358400 ] &&
	[ "$(metric collisiond_memory_held_bytes)" = 0 ]
'
test_expect 'a mesh that fits: 201, held = its memory_bytes' '
	jexpect 201 PUT /v1/meshes/g1 "$GRID" &&
	mb=$(python3 -c "import json;print(json.load(open(\"$TMP/body\"))[\"memory_bytes\"])") &&
	[ "$(metric collisiond_memory_held_bytes)" = "$mb" ] &&
	[ "$(metric collisiond_mesh_bytes)" = "$mb" ]
'
test_expect 'a second one past the limit: 507 insufficient_storage naming --max-memory, not stored' '
	jexpect 507 PUT /v1/meshes/g2 "$GRID" && errcode insufficient_storage "--max-memory (358400 bytes" &&
	expect 404 GET /v1/meshes/g2 &&
	[ "$(metric collisiond_meshes)" = 1 ]
'
test_expect 'a replace needs room for both versions while it is built: 507, the old one kept' '
	jexpect 507 PUT /v1/meshes/g1 "$GRID" && errcode insufficient_storage &&
	expect 200 GET /v1/meshes/g1 && jcheck "j[\"version\"] == 1" &&
	jexpect 200 POST /v1/meshes/g1/raycast "{\"origin\": [10.2, 9, 10.7], \"direction\": [0, -1, 0]}" &&
	jcheck "j[\"hit\"] is True"
'
test_expect 'a small mesh still fits beside it' '
	put_cube cube && [ "$status" = 201 ]
'
test_expect 'a delete gives the bytes back: the second mesh fits then' '
	expect 204 DELETE /v1/meshes/g1 &&
	jexpect 201 PUT /v1/meshes/g2 "$GRID" &&
	expect 204 DELETE /v1/meshes/g2 && expect 204 DELETE /v1/meshes/cube &&
	[ "$(metric collisiond_memory_held_bytes)" = 0 ]
'
test_expect 'world snapshots count: one of 256 entities fits, the next is 507 and the first still answers' '
	jexpect 201 PUT /v1/worlds/w "{\"history_ms\": 60000}" &&
	jexpect 204 POST /v1/worlds/w/snapshots "$(snapshot 1 256)" &&
	held=$(metric collisiond_memory_held_bytes) && [ "$held" -gt 100000 ] &&
	jexpect 507 POST /v1/worlds/w/snapshots "$(snapshot 2 256)" &&
	errcode insufficient_storage "no room for this snapshot" &&
	[ "$(metric collisiond_memory_held_bytes)" = "$held" ] &&
	expect 200 GET /v1/worlds/w && jcheck "j[\"ticks\"] == 1 and j[\"newest\"][\"tick\"] == 1" &&
	jexpect 200 POST /v1/worlds/w/hitscan "{\"origin\": [5, 1, -5], \"direction\": [0, 0, 1]}" &&
	jcheck "j[\"hit\"] == \"entity\" and j[\"entity\"] == \"p5\""
'
test_expect 'deleting the world gives its snapshots back' '
	expect 204 DELETE /v1/worlds/w &&
	[ "$(metric collisiond_memory_held_bytes)" = 0 ]
'
stop_daemon

test_expect 'COLLISIOND_MAX_MEMORY works too; --demo past it exits naming the flag' '
	DAEMON_ENV="COLLISIOND_MAX_MEMORY=1M" start_daemon &&
	[ "$(metric collisiond_memory_limit_bytes)" = 1048576 ] && stop_daemon &&
	! "$DAEMON" --demo --max-memory 1K --port 0 >"$TMP/out" 2>&1 &&
	grep -q "cannot store the demo mesh: --max-memory reached" "$TMP/out"
'
test_expect 'a bad --max-memory is refused at start' '
	! "$DAEMON" --max-memory lots --port 0 >"$TMP/out" 2>&1 && grep -q "max-memory" "$TMP/out"
'
# Replicas: the budget is each replica's own, and its worlds share it. A
# replica with no room for a mesh another one stored logs it and serves
# without it; once memory is freed it fetches it again (it once waited for
# its next resync, a reconnection to Redis).
REDIS=$(command -v redis-server || echo /usr/bin/redis-server)
if [ -x "$REDIS" ]; then
	start_redis_bare
	start_daemon --store "redis://127.0.0.1:$RPORT/0" --max-memory 450K --log-level info
	A=$URL
	start_daemon --store "redis://127.0.0.1:$RPORT/0"
	B=$URL
	on_a() { URL=$A "$@"; }
	test_expect 'replica: a world takes most of its budget; a mesh stored by another replica does not fit, is logged and not served' '
		on_a jexpect 201 PUT /v1/worlds/w "{\"history_ms\": 60000}" &&
		on_a jexpect 204 POST /v1/worlds/w/snapshots "$(snapshot 1 256)" &&
		URL=$B jexpect 201 PUT /v1/meshes/g "$GRID" &&
		within 5 grep -q "skipping g (.*): --max-memory reached" "$TMP/daemon.log" &&
		on_a expect 404 GET /v1/meshes/g && URL=$B expect 200 GET /v1/meshes/g &&
		[ "$(URL=$A metric collisiond_store_meshes_skipped)" = 1 ] &&
		[ "$(URL=$B metric collisiond_store_meshes_skipped)" = 0 ]
	'
	skipped_on_a() { [ "$(URL=$A metric collisiond_store_meshes_skipped)" = "$1" ]; }
	test_expect 'replica: a skipped mesh deleted in Redis (or written through the replica) is no longer counted as skipped' '
		URL=$B jexpect 201 PUT /v1/meshes/h "$GRID" &&
		within 5 skipped_on_a 2 &&
		URL=$B expect 204 DELETE /v1/meshes/h &&
		within 5 skipped_on_a 1 &&
		URL=$B jexpect 201 PUT /v1/meshes/k "$GRID" &&
		within 5 skipped_on_a 2 &&
		URL=$A expect 204 DELETE /v1/meshes/k &&
		skipped_on_a 1 && on_a expect 404 GET /v1/meshes/g
	'
	test_expect 'replica: a skipped mesh deleted behind its back (no event) is no longer counted after its next resync' '
		URL=$B jexpect 201 PUT /v1/meshes/gone "$GRID" &&
		within 5 skipped_on_a 2 &&
		redis-cli -p "$RPORT" del collisiond:mesh:gone | grep -q 1 &&
		redis-cli -p "$RPORT" srem collisiond:names gone | grep -q 1 &&
		sleep 0.5 && skipped_on_a 2 &&
		redis-cli -p "$RPORT" client kill type pubsub >/dev/null &&
		within 10 skipped_on_a 1 && on_a expect 404 GET /v1/meshes/g
	'
	# retried only when it might fit: less held than at its refusal, and room
	# for at least its vertices and indices (a world's snapshots moving the
	# total by a little must not fetch and build a big mesh every 2 s)
	retries() { grep -c "skipped for --max-memory again" "$TMP/daemon.log" || true; }
	test_expect 'replica: memory freed but less than the skipped mesh needs: it is not fetched again' '
		on_a jexpect 201 PUT /v1/worlds/s "{\"history_ms\": 60000}" &&
		on_a jexpect 204 POST /v1/worlds/s/snapshots "$(snapshot 1 128)" &&
		on_a put_cube cube &&
		URL=$B jexpect 201 PUT /v1/meshes/g2 "$GRID" &&
		within 5 skipped_on_a 2 && n0=$(retries) &&
		on_a expect 204 DELETE /v1/meshes/cube && sleep 4.5 &&
		[ "$(retries)" = "$n0" ] && skipped_on_a 2 &&
		URL=$B expect 204 DELETE /v1/meshes/g2 && within 5 skipped_on_a 1 &&
		on_a expect 204 DELETE /v1/worlds/s
	'
	test_expect 'replica: the world deleted, it fetches the mesh within seconds (not at its next resync)' '
		on_a expect 204 DELETE /v1/worlds/w &&
		within 6 on_a expect 200 GET /v1/meshes/g &&
		grep -q "fetching 1 meshes skipped for --max-memory again" "$TMP/daemon.log" &&
		[ "$(URL=$A metric collisiond_store_meshes_skipped)" = 0 ] &&
		on_a jexpect 200 POST /v1/meshes/g/raycast "{\"origin\": [10.2, 9, 10.7], \"direction\": [0, -1, 0]}" &&
		jcheck "j[\"hit\"] is True"
	'
	stop_daemon
else
	test_skip 'replicas and --max-memory' 'redis-server missing (make deps-test)'
fi
test_done
