#!/usr/bin/env bash
# Operations: /healthz, /readyz, /metrics, /v1/openapi.yaml, unknown paths
# and methods (not_found, method_not_allowed with Allow).
. "$(dirname "$0")/lib.sh"

start_daemon --demo || { echo "not ok 1 - daemon starts with --demo"; exit 1; }

test_expect 'GET /healthz is 200 {"status": "ok"}' '
	expect 200 GET /healthz &&
	header Content-Type "application/json" &&
	jcheck "j == {\"status\": \"ok\"}"
'
test_expect 'GET /readyz is 200 once started' '
	expect 200 GET /readyz &&
	jcheck "j[\"status\"] in (\"ok\", \"ready\")"
'
test_expect 'GET /v1/openapi.yaml serves the spec' '
	expect 200 GET /v1/openapi.yaml &&
	header Content-Type "(application|text)/(x-)?yaml" &&
	cmp "$TMP/body" api/openapi.yaml
'
test_expect 'GET /v1/meshes lists the demo mesh' '
	expect 200 GET /v1/meshes &&
	jcheck "[m[\"name\"] for m in j[\"meshes\"]] == [\"demo\"] and j[\"meshes\"][0][\"version\"] == 1"
'
test_expect 'unknown path under /v1 is 404 not_found' '
	expect 404 GET /v1/nope && errcode not_found
'
test_expect 'unknown path at the root is 404 not_found' '
	expect 404 GET /nope && errcode not_found
'
test_expect 'unknown route below a mesh is 404 not_found' '
	expect 404 POST /v1/meshes/demo/explode -H "Content-Type: application/json" -d "{}" && errcode not_found
'
test_expect 'DELETE /v1/meshes is 405 with Allow: GET' '
	expect 405 DELETE /v1/meshes && errcode method_not_allowed &&
	header Allow "GET"
'
test_expect 'POST /v1/meshes/demo is 405 with Allow naming GET, PUT, DELETE' '
	expect 405 POST /v1/meshes/demo -H "Content-Type: application/json" -d "{}" &&
	errcode method_not_allowed &&
	header Allow ".*GET" && header Allow ".*PUT" && header Allow ".*DELETE"
'
test_expect 'GET on raycast is 405 with Allow: POST' '
	expect 405 GET /v1/meshes/demo/raycast && errcode method_not_allowed && header Allow "POST"
'
test_expect 'POST /healthz is 405 with Allow: GET' '
	expect 405 POST /healthz -d x && errcode method_not_allowed && header Allow "GET"
'
test_expect 'PATCH /v1/hitscan is 405 with Allow: POST' '
	expect 405 PATCH /v1/hitscan && errcode method_not_allowed && header Allow "POST"
'
test_expect 'HEAD /healthz is 200 without a body' '
	status=$(curl -s -I -o /dev/null -w "%{http_code}" "$URL/healthz") && [ "$status" = 200 ]
'

# traffic for the metrics
for i in 1 2 3; do
	req POST /v1/meshes/demo/raycast -H 'Content-Type: application/json' --data-binary '{"rays":[{"origin":[0.5,10,0.25],"direction":[0,-1,0]},{"origin":[0.5,10,0.25],"direction":[0,-1,0]}]}'
done
req GET /v1/meshes/nope

test_expect 'GET /metrics is Prometheus text 0.0.4' '
	expect 200 GET /metrics &&
	header Content-Type "text/plain; *version=0\.0\.4" &&
	grep -q "^# TYPE .* histogram" "$TMP/body" &&
	grep -q "_bucket{.*le=\"+Inf\"" "$TMP/body"
'
test_expect '/metrics counts requests by route and status' '
	grep -E "^[a-z_]+\{[^}]*/v1/meshes/\{name\}/raycast[^}]*\} [0-9]" "$TMP/body" | grep -q "200" &&
	grep -E "^[a-z_]+\{[^}]*\} [0-9]" "$TMP/body" | grep -q "404"
'
test_expect '/metrics counts the 6 rays answered' '
	python3 - "$TMP/body" <<"PY"
import re, sys
rays = [l for l in open(sys.argv[1]) if re.match(r"^[a-z_]*ray[a-z_]*(\{[^}]*\})? [0-9.e+]+$", l) and "mesh_ray" in l]
print(rays)
sys.exit(0 if any(float(l.split()[-1]) >= 6 for l in rays) else 1)
PY
'
test_expect '/metrics reports meshes and triangles held' '
	grep -qE "^[a-z_]*meshes[a-z_]* 1(\.0+)?$" "$TMP/body" &&
	grep -qE "^[a-z_]*triangles[a-z_]* [1-9][0-9]*" "$TMP/body" &&
	grep -qE "^[a-z_]*bytes[a-z_]* [1-9][0-9]*" "$TMP/body"
'
if command -v promtool >/dev/null 2>&1; then
	test_expect 'promtool check metrics is clean' '
		promtool check metrics <"$TMP/body"
	'
else
	test_skip 'promtool check metrics' 'promtool not installed'
fi
test_expect 'metrics text is well-formed (HELP/TYPE before samples, no duplicates)' '
	python3 - "$TMP/body" <<"PY"
import re, sys
typed, seen, bad = {}, set(), []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line:
        continue
    m = re.match(r"^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$", line)
    if m:
        if m.group(1) in typed: bad.append("second TYPE " + line)
        typed[m.group(1)] = m.group(2); continue
    if line.startswith("#"):
        continue
    m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[^\"}]|\"(?:[^\"\\\\]|\\\\.)*\")*\})? (\S+)( \d+)?$", line)
    if not m: bad.append("bad line " + line); continue
    name = m.group(1); base = re.sub(r"_(bucket|sum|count|total|created)$", "", name)
    if name not in typed and base not in typed: bad.append("no TYPE for " + line)
    float(m.group(3))
    key = (name, m.group(2))
    if key in seen: bad.append("duplicate " + line)
    seen.add(key)
print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
PY
'
# Counters are kept per thread and summed when rendered: 48 requests over
# separate connections of a 4-thread daemon are counted exactly once each.
threaded_counts() {
	local port p i out
	port=$(free_port)
	"$DAEMON" --demo --bind 127.0.0.1 --port "$port" --threads 4 --log-level warn \
		>>"$TMP/threads4.log" 2>&1 &
	p=$!
	for ((i = 0; i < 50 * TIME_SCALE; i++)); do
		curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
		sleep 0.1
	done
	seq 48 | xargs -P 8 -I{} curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' \
		--data-binary '{"origin":[0.5,10,0.25],"direction":[0,-1,0]}' \
		"http://127.0.0.1:$port/v1/meshes/demo/raycast"
	out=$(curl -sf "http://127.0.0.1:$port/metrics")
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	printf '%s\n' "$out" | grep -E 'raycast.*status="200"|duration_seconds_count.*raycast|kind="mesh_ray"' |
		awk '{print $NF}' | tr '\n' ' '
}
test_expect '/metrics sums the threads: 48 raycasts on 4 threads counted 48 times' '
	got=$(threaded_counts) && echo "# $got" && [ "$got" = "48 48 48 " ]
'
# The default --threads is the CPUs the daemon may use, not the online
# ones: pinned to one CPU (as taskset or a container's cpuset does), one.
pinned_threads() {
	local port log p i
	port=$(free_port)
	log="$TMP/pinned.$1.log"
	taskset -c "$1" "$DAEMON" --port "$port" >"$log" 2>&1 &
	p=$!
	for ((i = 0; i < 50 * TIME_SCALE; i++)); do
		grep -q "listening on" "$log" && break
		sleep 0.1
	done
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	sed -n "s/.*listening on .*, \([0-9]*\) threads*).*/\1/p" "$log"
}
test_expect 'default --threads follows the CPU affinity (taskset -c 0: 1 thread)' '
	[ "$(pinned_threads 0)" = 1 ]
'
if [ "$(nproc)" -ge 2 ]; then
	test_expect 'default --threads follows the CPU affinity (taskset -c 0,1: 2 threads)' '
		[ "$(pinned_threads 0,1)" = 2 ]
	'
fi
# A graceful stop: the request in flight is answered (Connection: close) and
# a new connection is refused at once, on both engines. libmicrohttpd's left
# its quiesced socket listening: new clients were queued, unanswered, until
# the drain ended (up to 10 s), then reset.
test_expect 'SIGTERM: the request in flight is answered, new connections are refused at once, exit 0' '
	python3 - "$PORT" "$PID" "$TIME_SCALE" <<"PY" &&
import os, signal, socket, sys, time
port, pid, scale = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
busy = socket.create_connection(("127.0.0.1", port), timeout=5 * scale)
body = b"{\"origin\": [0.5, 10, 0.25], \"direction\": [0, -1, 0]}"
busy.sendall(b"POST /v1/meshes/demo/raycast HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
time.sleep(0.3)
os.kill(pid, signal.SIGTERM)
sent = time.monotonic()
while True:  # until the daemon stops listening, a connection may still be taken
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except (ConnectionRefusedError, ConnectionResetError):
        break  # reset: queued on a listener of the epoll engine as it closed
    assert time.monotonic() - sent < 1 * scale, "still connecting 1 s after SIGTERM"
    time.sleep(0.02)
print("refused %.3f s after SIGTERM" % (time.monotonic() - sent))
busy.sendall(body[10:])
answer = busy.recv(65536)
assert answer.startswith(b"HTTP/1.1 200") and b"Connection: close" in answer, answer
PY
	{ rc=0; wait $PID || rc=$?; PID=; } && [ "$rc" = 0 ]
'
# --bind :: takes IPv4 clients too (dual stack), on both engines: the
# libmicrohttpd one bound it IPv6 only, and 127.0.0.1 was refused.
bind_any() {
	local port p i host
	port=$(free_port)
	"$DAEMON" --bind :: --port "$port" --log-level warn ${EXTRA_DAEMON_FLAGS:-} \
		>>"$TMP/bind_any.log" 2>&1 &
	p=$!
	all_pids="$all_pids $p"
	for ((i = 0; i < 50 * TIME_SCALE; i++)); do
		curl -sf -o /dev/null "http://[::1]:$port/readyz" && break
		sleep 0.1
	done
	for host in "[::1]" 127.0.0.1; do
		echo "$host $(curl -s -o /dev/null -w "%{http_code}" --max-time $((2 * TIME_SCALE)) \
			"http://$host:$port/healthz")"
	done
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
}
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	test_expect '--bind :: answers IPv6 and IPv4 clients' '
		got=$(bind_any) && echo "$got" && [ "$(echo "$got" | tr "\n" " ")" = "[::1] 200 127.0.0.1 200 " ]
	'
else
	test_skip '--bind :: answers IPv6 and IPv4 clients' 'no IPv6 loopback'
fi
# SIGHUP (the terminal of `make run` closing) once killed it at once (exit
# 129), the access lines still buffered lost: a stop like the others
test_expect 'SIGHUP stops the daemon cleanly: exit 0, its last request logged' '
	: >"$TMP/daemon.log" && start_daemon --log-level info &&
	expect 200 GET /healthz && stop_daemon HUP && echo "rc $daemon_rc" && [ "$daemon_rc" = 0 ] &&
	grep -q "SIGHUP: stopping" "$TMP/daemon.log" && grep -q "access method=GET path=/healthz" "$TMP/daemon.log"
'
# --access-log=off: no access lines, the other info lines kept (the only
# way to silence access lines was --log-level warn, which hid those too).
test_expect '--access-log=off: no access line, start and stop lines kept' '
	: >"$TMP/daemon.log" && start_daemon --log-level info --access-log=off &&
	expect 200 GET /healthz && stop_daemon && [ "$daemon_rc" = 0 ] &&
	grep -q "listening on" "$TMP/daemon.log" && grep -q "SIGTERM: stopping" "$TMP/daemon.log" &&
	! grep -q "access method=" "$TMP/daemon.log" &&
	: >"$TMP/daemon.log" && DAEMON_ENV=COLLISIOND_ACCESS_LOG=off start_daemon --log-level info &&
	expect 200 GET /healthz && stop_daemon && ! grep -q "access method=" "$TMP/daemon.log" &&
	grep -q "stopped" "$TMP/daemon.log"
'
# Started under nohup (SIGHUP ignored), or as a background job of a script
# (SIGINT ignored), the daemon keeps them ignored: the terminal closing must
# not stop it (it once always waited for both).
hup_ignored_daemon() {
	PORT=$(free_port)
	URL=http://127.0.0.1:$PORT
	bash -c 'trap "" HUP INT; exec "$0" "$@"' "$DAEMON" --bind 127.0.0.1 --port "$PORT" \
		--log-level warn >>"$TMP/daemon.log" 2>&1 &
	PID=$!
	all_pids="$all_pids $PID"
	wait_ready
}
test_expect 'SIGHUP and SIGINT ignored at start (nohup, a background job) stay ignored; SIGTERM still stops it' '
	hup_ignored_daemon && kill -HUP "$PID" && kill -INT "$PID" && sleep 0.5 && kill -0 "$PID" &&
	expect 200 GET /healthz && stop_daemon TERM && [ "$daemon_rc" = 0 ]
'
# During the graceful stop (up to 10 s for requests in flight), a second
# signal ends the process at once (Ctrl-C twice).
test_expect 'a second SIGTERM during the graceful stop ends the daemon at once' '
	start_daemon && python3 - "$PORT" "$PID" "$TIME_SCALE" <<"PY"
import os, signal, socket, sys, time
port, pid, scale = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
busy = socket.create_connection(("127.0.0.1", port), timeout=5 * scale)
busy.sendall(b"POST /v1/meshes/demo/raycast HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: 100\r\n\r\n{")
time.sleep(0.3)
os.kill(pid, signal.SIGTERM)
time.sleep(0.5)
os.kill(pid, 0)  # still draining: the request waits for the rest of its body
os.kill(pid, signal.SIGTERM)
time.sleep(0.5)  # the connection held until the daemon is gone
PY
	{ rc=0; wait $PID || rc=$?; PID=; } && echo "rc $rc" && [ "$rc" = 143 ] &&
	grep -q "a second signal: stopping now" "$TMP/daemon.log"
'
test_done
