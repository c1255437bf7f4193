#!/usr/bin/env bash
# store_faults.sh - replicas on one --store Redis that answers oddly: an
# error reply to a fetch (a command refused, every client slot taken, a
# script past its time limit) is not a mesh gone: the resync fails and is
# retried (it once counted the mesh fetched, said ready and never held it),
# and an event whose fetch fails is applied once Redis answers again; a
# Redis emptied behind the replicas' backs (FLUSHALL: no connection breaks)
# is seen, and they follow what it holds (they once kept every mesh, and
# ignored the writes after it until its sequence climbed past theirs).
# Needs redis-server (make deps-test installs it).
. "$(dirname "$0")/lib.sh"

REDIS=$(command -v redis-server || echo /usr/bin/redis-server)
if [ ! -x "$REDIS" ]; then
	test_skip '--store faults' 'redis-server missing (make deps-test)'
	test_done
fi
require_daemon

start_redis_bare --enable-debug-command local
rcli() { redis-cli -p "$RPORT" "$@"; }
STORE=redis://127.0.0.1:$RPORT/0

# replica NAME: one more daemon on the store, PORT_NAME its port, not waited for
replica() {
	local port
	port=$(free_port)
	"$DAEMON" --bind 127.0.0.1 --port "$port" --threads 2 --store "$STORE" --log-level warn \
		>>"$TMP/$1.log" 2>&1 &
	all_pids="$all_pids $!"
	eval "PORT_$1=$port"
}
# code PORT PATH: the HTTP status of a GET
code() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1$2"; }
is() { [ "$(code "$1" "$2")" = "$3" ]; }

replica a
test_expect 'a replica on the store is ready and stores two meshes' '
	within 10 is "$PORT_a" /readyz 200 &&
	URL=http://127.0.0.1:$PORT_a put_cube one && URL=http://127.0.0.1:$PORT_a put_cube two
'
# Redis refuses the replicas' fetches (HMGET) for a while: an error reply,
# not "no such mesh".
rcli acl setuser default -hmget >/dev/null
replica b
test_expect 'fetches refused by Redis at start: not ready, and says why' '
	sleep 1.5 && is "$PORT_b" /readyz 503 && grep -q "fetching .*NOPERM" "$TMP/b.log"
'
rcli acl setuser default +hmget >/dev/null
test_expect 'fetches answered again: ready, holding both meshes' '
	within 10 is "$PORT_b" /readyz 200 &&
	is "$PORT_b" /v1/meshes/one 200 && is "$PORT_b" /v1/meshes/two 200
'
# An event whose fetch is refused: applied once Redis answers again (it
# was dropped, and the replica kept the old mesh until the next write).
rcli acl setuser default -hmget >/dev/null
test_expect 'an event fetched while Redis refuses, then answers: the replica takes the write' '
	URL=http://127.0.0.1:$PORT_a put_cube three && sleep 0.5 &&
	rcli acl setuser default +hmget >/dev/null &&
	within 10 is "$PORT_b" /v1/meshes/three 200
'

# Redis emptied behind the replicas' backs (FLUSHALL): no connection breaks
# and no event says so; the version numbers start again from 1.
tri() { printf '{"vertices": [[0,0,0], [%s,0,0], [0,0,1]], "triangles": [[0,1,2]]}' "$1"; }
# maxx PORT NAME: the x of a mesh's bounds' max (which tri body it holds)
maxx() {
	curl -s "http://127.0.0.1:$1/v1/meshes/$2" |
		python3 -c 'import json, sys; print(json.load(sys.stdin).get("bounds", {}).get("max", [None])[0])'
}
names() {
	curl -s "http://127.0.0.1:$1/v1/meshes" |
		python3 -c 'import json, sys; print(" ".join(sorted(m["name"] for m in json.load(sys.stdin)["meshes"])))'
}
both() { [ "$(maxx "$PORT_a" "$1")" = "$2" ] && [ "$(maxx "$PORT_b" "$1")" = "$2" ]; }
only() { [ "$(names "$PORT_a")" = "$1" ] && [ "$(names "$PORT_b")" = "$1" ]; }
test_expect 'FLUSHALL, then a write: every replica takes it and drops what Redis lost' '
	URL=http://127.0.0.1:$PORT_a jexpect 201 PUT /v1/meshes/m "$(tri 1)" &&
	URL=http://127.0.0.1:$PORT_a jexpect 200 PUT /v1/meshes/m "$(tri 2)" &&
	URL=http://127.0.0.1:$PORT_a jexpect 200 PUT /v1/meshes/m "$(tri 3)" &&
	within 5 both m 3 && rcli flushall >/dev/null &&
	URL=http://127.0.0.1:$PORT_a jexpect 201 PUT /v1/meshes/m "$(tri 7)" &&
	within 8 both m 7 && within 8 only m ||
	{ echo "m: a $(maxx "$PORT_a" m), b $(maxx "$PORT_b" m); names: a $(names "$PORT_a"), b $(names "$PORT_b")"; false; }
'
# store_up PORT: the replica's collisiond_store_up
store_up() { curl -s "http://127.0.0.1:$1/metrics" | awk '$1 == "collisiond_store_up" { print $2 }'; }
# up_through S: both replicas report the store up at every sample for S s
up_through() {
	local k
	for ((k = 0; k < $1 * 50; k++)); do
		[ "$(store_up "$PORT_a")" = 1 ] && [ "$(store_up "$PORT_b")" = 1 ] || return 1
		sleep 0.02
	done
}
test_expect 'FLUSHALL alone: every replica drops every mesh, stays ready and up, and takes writes' '
	rcli flushall >/dev/null && up_through 3 && within 8 only "" &&
	is "$PORT_a" /readyz 200 && is "$PORT_b" /readyz 200 &&
	grep -q "went back" "$TMP/a.log" && ! grep -q "unavailable (emptied" "$TMP/a.log" "$TMP/b.log" &&
	within 8 eval "URL=http://127.0.0.1:$PORT_b put_cube n" && within 5 only n ||
	{ echo "names: a $(names "$PORT_a"), b $(names "$PORT_b")"; false; }
'
# A slow Redis (DEBUG SLEEP: every command waits): the write that reached
# it holds its worker thread, but a write queued behind it on another
# thread answers 503 after about a second instead of waiting its turn, so
# that thread answers queries again (both threads once waited for Redis:
# every raycast took 3.8 s). Which thread takes a connection is the
# kernel's choice, so the check is on the queries: some answered at once.
slow_put() {
	curl -s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 20 -X PUT \
		-H 'Content-Type: application/json' --data-binary "$CUBE_JSON" \
		"http://127.0.0.1:$PORT_a/v1/meshes/$1" >"$TMP/put_$1"
}
ray_a() {
	curl -s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 20 -X POST \
		-H 'Content-Type: application/json' \
		-d '{"origin": [0.1, 0.2, 5], "direction": [0, 0, -1]}' \
		"http://127.0.0.1:$PORT_a/v1/meshes/n/raycast" >"$TMP/ray_$1"
}
# the round: Redis asleep 6 s, four PUTs, then 12 raycasts on fresh
# connections (spread over both threads) once the queued PUTs gave up
slow_round() {
	local pids="" k
	(rcli debug sleep 6 >/dev/null &)
	sleep 0.3
	for k in 1 2 3 4; do slow_put "s$k" & pids="$pids $!"; done
	sleep 1.8
	for k in $(seq 12); do ray_a "$k" & pids="$pids $!"; done
	wait $pids
	cat "$TMP"/put_s* "$TMP"/ray_*
	[ "$(awk '$1 != 201 && $1 != 200 && $1 != 503' "$TMP"/put_s* | wc -l)" = 0 ] &&
		[ "$(awk '$1 == 200 && $2 < 2.5' "$TMP"/ray_* | wc -l)" -ge 1 ]
}
test_expect 'Redis slow: writes queued behind it give way within ~1 s, queries go on' slow_round
test_done
