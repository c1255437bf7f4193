#!/usr/bin/env bash
# Hardening regressions (issue 11): names used exactly as sent, a refused
# upload's answer readable by clients that send everything first (Python's
# http.client), the header deadline against slowloris, the body progress
# floor against a trickled upload, and plain `make` needing no test package.
. "$(dirname "$0")/lib.sh"

start_daemon --max-body-bytes 1M --max-query-bytes 64K --header-timeout 2 \
	--connection-timeout 3 --body-timeout 2 --min-body-rate 4K ||
	{ echo "not ok 1 - daemon starts"; exit 1; }

# ---- names exactly as sent
test_expect 'PUT a%00b is refused (400 naming name), nothing stored' '
	jexpect 400 PUT "/v1/meshes/a%00b" "$CUBE_JSON" && errcode invalid_request name &&
	expect 404 GET /v1/meshes/a
'
test_expect 'PUT a%00evil does not replace a' '
	put_cube a && expect 200 GET /v1/meshes/a && jcheck "j[\"version\"] == 1" &&
	jexpect 400 PUT "/v1/meshes/a%00evil" "$CUBE_JSON" && errcode invalid_request name &&
	expect 200 GET /v1/meshes/a && jcheck "j[\"version\"] == 1"
'
test_expect 'DELETE a%00zzz does not delete a' '
	expect 400 DELETE "/v1/meshes/a%00zzz" && errcode invalid_request name &&
	expect 200 GET /v1/meshes/a
'
test_expect 'any percent-encoded byte in a name is refused: a%41, a%2Eb, %61' '
	jexpect 400 PUT "/v1/meshes/a%41" "$CUBE_JSON" && errcode invalid_request name &&
	jexpect 400 PUT "/v1/meshes/a%2Eb" "$CUBE_JSON" && errcode invalid_request name &&
	expect 400 GET "/v1/meshes/%61" && errcode invalid_request name &&
	jexpect 400 POST "/v1/meshes/a%00/raycast" "{\"origin\":[0.5,0.5,5],\"direction\":[0,0,-1]}" &&
	errcode invalid_request name &&
	expect 200 GET /v1/meshes && jcheck "[m[\"name\"] for m in j[\"meshes\"]] == [\"a\"]"
'
test_expect 'a percent-encoded path is not a route (404), the query string is not the path' '
	expect 404 GET "/v1/mesh%65s" && errcode not_found &&
	expect 200 GET "/v1/meshes/a?x=%00"
'

# ---- a refused upload, read by a client that sends its whole body first
test_expect 'python http.client uploading 8 MiB over --max-body-bytes 1M reads the 413, connection reusable' '
	python3 - "$PORT" <<"PY"
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=20)
c.request("PUT", "/v1/meshes/big", b"x" * (8 << 20), {"Content-Type": "application/json"})
r = c.getresponse(); j = json.loads(r.read())
assert r.status == 413 and j["error"]["code"] == "payload_too_large", (r.status, j)
c.request("GET", "/healthz"); r = c.getresponse(); r.read()
assert r.status == 200, r.status
print("413 read, then 200 on the same connection")
PY
'
test_expect 'python http.client: chunked query over --max-query-bytes, and a body to an unknown path, read their answers' '
	python3 - "$PORT" <<"PY"
import http.client, json, sys
port = int(sys.argv[1])
def chunks():
    for _ in range(64):
        yield b"[" * 4096
c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
c.request("POST", "/v1/meshes/a/raycast", chunks(), {"Content-Type": "application/json"}, encode_chunked=True)
r = c.getresponse(); j = json.loads(r.read())
assert r.status == 413 and j["error"]["code"] == "payload_too_large", (r.status, j)
c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
c.request("POST", "/v1/nowhere", b"y" * (4 << 20), {"Content-Type": "application/json"})
r = c.getresponse(); j = json.loads(r.read())
assert r.status == 404, (r.status, j)
PY
'

# ---- deadlines
test_expect 'slowloris: one header line per second is cut at --header-timeout (2 s)' '
	python3 - "$PORT" <<"PY"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t0 = time.time(); closed = None
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
s.settimeout(1.0)
for i in range(12):
    try:
        s.sendall(b"X-Slow-%d: 1\r\n" % i)
        if s.recv(1) == b"":
            closed = time.time() - t0; break
    except socket.timeout:
        continue
    except OSError:
        closed = time.time() - t0; break
print("closed after", closed)
assert closed is not None and 1.5 < closed < 4.5, closed
PY
'
test_expect 'a request line trickled without end is cut (--connection-timeout 3 > --header-timeout 2)' '
	python3 - "$PORT" <<"PY"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t0 = time.time(); closed = None
s.settimeout(0.5)
for i in range(24):
    try:
        s.sendall(b"GET /" if i == 0 else b"a")
        if s.recv(1) == b"":
            closed = time.time() - t0; break
    except socket.timeout:
        continue
    except OSError:
        closed = time.time() - t0; break
print("closed after", closed)
assert closed is not None and 2.5 < closed < 6, closed
PY
'
test_expect 'a trickled body (1 KiB/s against a 4 KiB/s floor after 2 s) is cut, a steady one is not' '
	python3 - "$PORT" <<"PY"
import json, socket, sys, time
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port))
t0 = time.time(); closed = None; sent = 0
s.sendall(b"PUT /v1/meshes/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
s.settimeout(0.25)
while time.time() - t0 < 9:
    try:
        s.sendall(b" " * 256); sent += 256
        if s.recv(1) == b"":
            closed = time.time() - t0; break
    except socket.timeout:
        continue
    except OSError:
        closed = time.time() - t0; break
print("trickle: %d bytes, closed after %s" % (sent, closed))
assert closed is not None and 2 < closed < 6, closed
# 24 KiB at ~16 KiB/s: 1.5 s, within 2 s + 24K / 4K = 8 s: answered
body = json.dumps({"origin": [0.5, 0.5, 5], "direction": [0, 0, -1]}).encode()
body += b" " * (24576 - len(body))
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(5)
s.sendall(b"POST /v1/meshes/a/raycast HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
for i in range(0, len(body), 1024):
    s.sendall(body[i:i + 1024]); time.sleep(0.06)
answer = s.recv(4096)
print(answer[:40])
assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
PY
'

# ---- plain make on a fresh machine: the default goal needs no test package
test_expect 'make (all) builds the daemon without test binaries or test packages' '
	out=$(make -n --no-print-directory BUILD="$TMP/fresh" all 2>&1) &&
	grep -q "collisiond" <<<"$out" &&
	! grep -E "tests/unit|-lcheck|check.h" <<<"$out"
'

test_done
