#!/usr/bin/env bash
# Limits and the other flags: --max-body-bytes, --max-query-bytes,
# --max-batch, --max-triangles, --max-meshes (413 payload_too_large, early
# when the Content-Length says so), --threads, --connection-timeout,
# --log-level, --data-dir, --help, bad flags, COLLISIOND_* variables.
. "$(dirname "$0")/lib.sh"
require_daemon

# rays N: a batch of N rays
rays() { python3 -c 'import sys,json;n=int(sys.argv[1]);print(json.dumps({"rays":[{"origin":[0.25,5,0.5],"direction":[0,-1,0]}]*n}))' "$1"; }
# grid_obj N: an OBJ with N triangles
grid_obj() { python3 -c '
import sys
n=int(sys.argv[1]); print("v 0 0 0\nv 1 0 0\nv 0 0 1")
for i in range(n): print("f 1 3 2")' "$1"; }

start_daemon --max-body-bytes 2000 --max-query-bytes 1000 --max-batch 4 --max-triangles 12 --max-meshes 2 --threads 2 --log-level warn ||
	{ echo "not ok 1 - daemon starts with limits"; exit 1; }

test_expect '--max-triangles 12: the 12-triangle cube fits (201)' '
	jexpect 201 PUT /v1/meshes/cube "$CUBE_JSON"
'
test_expect '--max-triangles 12: 13 triangles (JSON) is 413 payload_too_large' '
	jexpect 413 PUT /v1/meshes/big "{\"vertices\": [0,0,0, 1,0,0, 0,0,1], \"triangles\": [$(python3 -c "print(\",\".join([\"0,2,1\"]*13))")]}" &&
	errcode payload_too_large
'
test_expect '--max-triangles 12: 13 triangles (OBJ) is 413' '
	expect 413 PUT /v1/meshes/big -H "Content-Type: model/obj" --data-binary "$(grid_obj 13)" && errcode payload_too_large
'
test_expect '--max-triangles 12: a binary STL announcing 13 is 413' '
	python3 -c "import struct,sys;sys.stdout.buffer.write(b\" \"*80+struct.pack(\"<I\",13)+b\"\\0\"*50*13)" >"$TMP/13.stl" &&
	expect 413 PUT /v1/meshes/big -H "Content-Type: model/stl" --data-binary @"$TMP/13.stl" && errcode payload_too_large
'
test_expect '--max-body-bytes 2000: a 2500-byte upload is 413, nothing stored' '
	body=$(python3 -c "import json;print(json.dumps({\"vertices\":[[0,0,0],[1,0,0],[0,0,1]],\"triangles\":[[0,2,1]]}).ljust(2500))") &&
	jexpect 413 PUT /v1/meshes/pad "$body" && errcode payload_too_large &&
	expect 404 GET /v1/meshes/pad
'
test_expect '--max-body-bytes applies to uploads only: a 1900-byte upload fits' '
	body=$(python3 -c "import json;print(json.dumps({\"vertices\":[[0,0,0],[1,0,0],[0,0,1]],\"triangles\":[[0,2,1]]}).ljust(1900))") &&
	jexpect 201 PUT /v1/meshes/pad "$body"
'
test_expect '--max-meshes 2: a third name is 413, a replace still works' '
	jexpect 413 PUT /v1/meshes/third "$CUBE_JSON" && errcode payload_too_large &&
	jexpect 200 PUT /v1/meshes/cube "$CUBE_JSON"
'
test_expect '--max-query-bytes 1000: a 1200-byte query is 413' '
	body=$(python3 -c "print(\"{\\\"origin\\\": [0.25, 5, 0.5], \\\"direction\\\": [0, -1, 0]}\".ljust(1200))") &&
	jexpect 413 POST /v1/meshes/cube/raycast "$body" && errcode payload_too_large
'
test_expect '--max-query-bytes 1000: a 900-byte query answers' '
	body=$(python3 -c "print(\"{\\\"origin\\\": [0.25, 5, 0.5], \\\"direction\\\": [0, -1, 0]}\".ljust(900))") &&
	jexpect 200 POST /v1/meshes/cube/raycast "$body" && jcheck "j[\"triangle\"] == 6"
'
test_expect '--max-batch 4: 4 rays answer, 5 are 413' '
	jexpect 200 POST /v1/meshes/cube/raycast "$(rays 4)" && jcheck "len(j[\"results\"]) == 4" &&
	jexpect 413 POST /v1/meshes/cube/raycast "$(rays 5)" && errcode payload_too_large
'
test_expect '--max-batch 4: 5 segments, 5 OBB rays, 5 shots are 413' '
	seg="{\"start\": [0, 5, 0], \"end\": [0, -5, 0]}" &&
	jexpect 413 POST /v1/meshes/cube/segment "{\"segments\": [$seg, $seg, $seg, $seg, $seg]}" && errcode payload_too_large &&
	r="{\"origin\": [0, 5, 0], \"direction\": [0, -1, 0]}" &&
	jexpect 413 POST /v1/obb/raycast "{\"rays\": [$r, $r, $r, $r, $r], \"boxes\": []}" && errcode payload_too_large &&
	jexpect 413 POST /v1/hitscan "{\"shots\": [$r, $r, $r, $r, $r], \"boxes\": []}" && errcode payload_too_large
'
test_expect 'a Content-Length over the limit is refused before the body is sent' '
	python3 - "$PORT" <<"PY"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"PUT /v1/meshes/huge HTTP/1.1\r\nHost: x\r\nContent-Type: model/obj\r\nContent-Length: 100000000\r\n\r\nv 0 0 0\n")
t = time.time(); data = b""
while b"\r\n\r\n" not in data:
    chunk = s.recv(4096)
    if not chunk: break
    data += chunk
print(data[:200])
sys.exit(0 if data.startswith(b"HTTP/1.1 413") and time.time() - t < 5 else 1)
PY
'
test_expect 'Expect: 100-continue over the limit gets 413, not 100' '
	python3 - "$PORT" <<"PY"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"POST /v1/meshes/cube/raycast HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n")
data = s.recv(4096)
print(data[:200])
sys.exit(0 if data.startswith(b"HTTP/1.1 413") else 1)
PY
'
test_expect 'a chunked upload over the limit is 413' '
	python3 -c "print(\"v 0 0 0\n\" * 400)" >"$TMP/chunked.obj" &&
	expect 413 PUT /v1/meshes/chunky -H "Content-Type: model/obj" -H "Transfer-Encoding: chunked" --data-binary @"$TMP/chunked.obj" &&
	errcode payload_too_large
'
test_expect 'the daemon still answers after the refusals' '
	jexpect 200 POST /v1/meshes/cube/raycast "{\"origin\": [0.25, 5, 0.5], \"direction\": [0, -1, 0]}" && jcheck "j[\"triangle\"] == 6"
'
stop_daemon

test_expect 'COLLISIOND_MAX_BATCH=2 in the environment: 3 rays are 413' '
	DAEMON_ENV="COLLISIOND_MAX_BATCH=2 COLLISIOND_MAX_QUERY_BYTES=64K" start_daemon &&
	put_cube cube &&
	jexpect 200 POST /v1/meshes/cube/raycast "$(rays 2)" &&
	jexpect 413 POST /v1/meshes/cube/raycast "$(rays 3)" && errcode payload_too_large
'
stop_daemon

test_expect 'defaults: a batch of 65536 rays answers, 65537 is 413' '
	start_daemon && put_cube cube &&
	rays 65536 >"$TMP/r65536.json" && rays 65537 >"$TMP/r65537.json" &&
	expect 200 POST /v1/meshes/cube/raycast -H "Content-Type: application/json" --data-binary @"$TMP/r65536.json" &&
	jcheck "len(j[\"results\"]) == 65536 and j[\"results\"][-1][\"triangle\"] == 6" &&
	expect 413 POST /v1/meshes/cube/raycast -H "Content-Type: application/json" --data-binary @"$TMP/r65537.json" &&
	errcode payload_too_large
'
stop_daemon

test_expect 'COLLISIOND_PORT and COLLISIOND_BIND start the daemon without flags' '
	PORT=$(free_port) && URL="http://127.0.0.1:$PORT" &&
	{ COLLISIOND_PORT=$PORT COLLISIOND_BIND=127.0.0.1 COLLISIOND_DEMO=1 "$DAEMON" >>"$TMP/daemon.log" 2>&1 & PID=$!; all_pids="$all_pids $PID"; } &&
	wait_ready && expect 200 GET /v1/meshes/demo
'
stop_daemon

test_expect '--connection-timeout 1: an idle connection is closed' '
	start_daemon --connection-timeout 1 &&
	python3 - "$PORT" <<"PY"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=8)
t = time.time()
try:
    data = s.recv(100)
except (ConnectionResetError, socket.timeout) as e:
    data = None if isinstance(e, socket.timeout) else b""
print("closed after %.1f s: %r" % (time.time() - t, data))
sys.exit(0 if data == b"" and time.time() - t < 6 else 1)
PY
'
test_expect '--connection-timeout 1: the daemon serves afterwards' '
	expect 200 GET /healthz
'
stop_daemon

test_expect '--threads 1 serves requests' '
	start_daemon --threads 1 --demo && expect 200 GET /v1/meshes/demo
'
stop_daemon

test_expect '--log-level debug logs requests on stderr' '
	: >"$TMP/daemon.log" && start_daemon --log-level debug && expect 200 GET /healthz &&
	stop_daemon && [ -s "$TMP/daemon.log" ]
'

test_expect '--data-dir: meshes survive a restart with the same info' '
	mkdir -p "$TMP/data" && start_daemon --data-dir "$TMP/data" &&
	put_cube keep && put_cube gone && expect 204 DELETE /v1/meshes/gone &&
	expect 200 GET /v1/meshes/keep && jcheck "j[\"triangles\"] == 12" &&
	stop_daemon && [ "$daemon_rc" = 0 ] &&
	start_daemon --data-dir "$TMP/data" &&
	expect 200 GET /v1/meshes && jcheck "[m[\"name\"] for m in j[\"meshes\"]] == [\"keep\"]" &&
	jcheck "j[\"meshes\"][0][\"triangles\"] == 12 and j[\"meshes\"][0][\"bounds\"] == {\"min\": [0,0,0], \"max\": [1,1,1]}" &&
	jexpect 200 POST /v1/meshes/keep/raycast "{\"origin\": [0.25, 5, 0.5], \"direction\": [0, -1, 0]}" && jcheck "j[\"triangle\"] == 6"
'
stop_daemon

# A restart gives each mesh back the version it was acknowledged with (a
# restart is not a re-creation: versions once restarted at 1, and the next
# PUT's version 2 named other content than the version 2 acknowledged before).
test_expect '--data-dir: versions survive a restart (kill -9 too), and go on from there' '
	mkdir -p "$TMP/ver" && start_daemon --data-dir "$TMP/ver" &&
	jexpect 201 PUT /v1/meshes/m "$CUBE_JSON" && jexpect 200 PUT /v1/meshes/m "$CUBE_JSON" &&
	jexpect 200 PUT /v1/meshes/m "$CUBE_JSON" && jcheck "j[\"version\"] == 3" &&
	jexpect 201 PUT /v1/meshes/n "$CUBE_JSON" && stop_daemon KILL &&
	start_daemon --data-dir "$TMP/ver" &&
	expect 200 GET /v1/meshes/m && jcheck "j[\"version\"] == 3" &&
	expect 200 GET /v1/meshes/n && jcheck "j[\"version\"] == 1" &&
	jexpect 200 PUT /v1/meshes/m "$CUBE_JSON" && jcheck "j[\"version\"] == 4" &&
	stop_daemon && start_daemon --data-dir "$TMP/ver" &&
	expect 200 GET /v1/meshes/m && jcheck "j[\"version\"] == 4"
'
stop_daemon

# One daemon per directory: a second on the same --data-dir (a shared volume
# in a rolling update) would serve what the first has replaced or deleted
# on disk, and lose acknowledged writes at the next start.
test_expect '--data-dir: a second daemon on the same directory exits 2 naming the holder; after it, one starts' '
	mkdir -p "$TMP/shared" && start_daemon --data-dir "$TMP/shared" &&
	{ rc=0; timeout $((10 * TIME_SCALE)) "$DAEMON" --bind 127.0.0.1 --port "$(free_port)" \
		--data-dir "$TMP/shared" >"$TMP/second.log" 2>&1 || rc=$?; } && cat "$TMP/second.log" &&
	[ "$rc" = 2 ] && grep -q "in use by another collisiond, pid $PID: one process per directory" "$TMP/second.log" &&
	jexpect 201 PUT /v1/meshes/held "$CUBE_JSON" && stop_daemon &&
	start_daemon --data-dir "$TMP/shared" && expect 200 GET /v1/meshes/held
'
stop_daemon

# A name on disk that the limit kept from loading (skipped at start-up,
# with a warning) is still stored: a PUT of it refused by the limit must not
# touch the file (it once replaced the file, then deleted it when refused).
tri() { printf '{"vertices": [[0,0,0], [%s,0,0], [0,0,1]], "triangles": [[0,1,2]]}' "$1"; }
test_expect '--max-meshes with --data-dir: a refused PUT leaves a stored mesh that was never loaded as it was' '
	mkdir -p "$TMP/full" && start_daemon --data-dir "$TMP/full" &&
	jexpect 201 PUT /v1/meshes/a "$(tri 1)" && jexpect 201 PUT /v1/meshes/b "$(tri 2)" &&
	jexpect 201 PUT /v1/meshes/c "$(tri 4)" && stop_daemon &&
	start_daemon --data-dir "$TMP/full" --max-meshes 2 &&
	expect 200 GET /v1/meshes && jcheck "len(j[\"meshes\"]) == 2" &&
	missing=$(python3 -c "import json,sys; print(({\"a\",\"b\",\"c\"} - {m[\"name\"] for m in json.load(open(sys.argv[1]))[\"meshes\"]}).pop())" "$TMP/body") &&
	jexpect 413 PUT /v1/meshes/$missing "$(tri 9)" && errcode payload_too_large &&
	[ -f "$TMP/full/$missing.mesh" ] && stop_daemon &&
	start_daemon --data-dir "$TMP/full" &&
	expect 200 GET /v1/meshes/c && jcheck "j[\"bounds\"][\"max\"] == [4, 0, 1]" &&
	expect 200 GET /v1/meshes/$missing && jcheck "j[\"bounds\"][\"max\"][0] != 9"
'
stop_daemon

test_expect '--help prints every flag and exits 0' '
	"$DAEMON" --help >"$TMP/help" 2>&1 && missing= &&
	for f in bind port threads api-key read-key max-body-bytes max-query-bytes max-batch max-triangles max-meshes tls-cert tls-key log-level data-dir demo connection-timeout help; do
		grep -q -- "--$f" "$TMP/help" || missing="$missing --$f"
	done && echo "missing:$missing" && [ -z "$missing" ]
'
test_expect 'an unknown flag exits non-zero with a message' '
	"$DAEMON" --no-such-flag >"$TMP/err" 2>&1; rc=$?; [ $rc != 0 ] && grep -q "no-such-flag" "$TMP/err"
'
test_expect 'a bad value (--max-batch abc) exits non-zero naming the flag' '
	"$DAEMON" --max-batch abc >"$TMP/err" 2>&1; rc=$?; [ $rc != 0 ] && grep -q "max-batch" "$TMP/err"
'
test_expect 'a bad environment value (COLLISIOND_THREADS=zero) exits non-zero' '
	COLLISIOND_THREADS=zero "$DAEMON" >"$TMP/err" 2>&1; rc=$?; [ $rc != 0 ] && grep -qi "threads" "$TMP/err"
'
test_expect '--port in use exits non-zero' '
	start_daemon &&
	{ "$DAEMON" --bind 127.0.0.1 --port "$PORT" >"$TMP/err" 2>&1 & p=$!; all_pids="$all_pids $p"; } &&
	for i in $(seq 50); do kill -0 $p 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $p 2>/dev/null && ! wait $p
'
stop_daemon

# A full disk under --data-dir is no bug: 507 insufficient_storage, nothing
# stored or left behind, memory unchanged, and writes again once there is
# room (it answered 500 internal). Needs a small tmpfs (root).
disk_full() {
	local rc=1
	dd if=/dev/zero of="$TMP/full/filler" bs=64k count=64 2>/dev/null	# fills it
	start_daemon --data-dir "$TMP/full" &&
	expect 507 PUT /v1/meshes/cube -H 'Content-Type: application/json' --data-binary "$CUBE_JSON" &&
	grep -q '"code":"insufficient_storage"' "$TMP/body" &&
	expect 404 GET /v1/meshes/cube &&
	[ -z "$(ls -A "$TMP/full" | grep -v -e '^filler$' -e '^\.lock$')" ] &&
	rm "$TMP/full/filler" && put_cube cube && expect 200 GET /v1/meshes/cube && rc=0
	stop_daemon
	return $rc
}
mkdir -p "$TMP/full"
if mount -t tmpfs -o size=1m tmpfs "$TMP/full" 2>/dev/null; then
	test_expect '--data-dir on a full disk: 507 insufficient_storage, nothing stored, then writes again' disk_full
	umount "$TMP/full"
else
	test_skip '--data-dir on a full disk' 'cannot mount a small tmpfs here (not root, or in a container)'
fi
test_done
