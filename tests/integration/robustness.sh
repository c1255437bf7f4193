#!/usr/bin/env bash
# Robustness: replace and delete while other clients query; SIGTERM under
# load; 200 malformed bodies in a row leave the stored mesh unchanged.
. "$(dirname "$0")/lib.sh"

start_daemon --threads 4 || { echo "not ok 1 - daemon starts"; exit 1; }
put_cube hot >/dev/null || echo "# could not upload the cube"

# Four clients query "hot" (keep-alive) while the main thread replaces it 40
# times, alternating the unit cube and a cube twice as large, then deletes
# it. Every answer must be 200 with distance 4 (unit cube) or 3 (big cube),
# or, after the delete, 404 mesh_not_found. Bounded: 8 s at most.
test_expect 'replace and delete while 4 clients query: no failed query, no crash' '
	python3 - "$PORT" <<"PY"
import http.client, json, sys, threading, time
port = int(sys.argv[1])
cube = {"vertices": [[0,0,0],[1,0,0],[1,1,0],[0,1,0],[0,0,1],[1,0,1],[1,1,1],[0,1,1]],
        "triangles": [[0,2,1],[0,3,2],[4,5,6],[4,6,7],[0,1,5],[0,5,4],[3,7,6],[3,6,2],[0,4,7],[0,7,3],[1,2,6],[1,6,5]]}
big = {"vertices": [[2*c for c in v] for v in cube["vertices"]], "triangles": cube["triangles"]}
query = json.dumps({"origin": [0.25, 5, 0.5], "direction": [0, -1, 0]})
deleted = threading.Event(); stop = threading.Event()
bad, counts, lock = [], {"ok": 0, "gone": 0}, threading.Lock()
def client():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    deadline = time.time() + 8
    while not stop.is_set() and time.time() < deadline:
        try:
            c.request("POST", "/v1/meshes/hot/raycast", query, {"Content-Type": "application/json"})
            r = c.getresponse(); body = r.read(); j = json.loads(body)
        except Exception as e:
            with lock: bad.append("exception %r" % e)
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5); continue
        with lock:
            if r.status == 200 and j.get("hit") is True and abs(j["distance"] - 4) < 1e-5 and j["triangle"] == 6:
                counts["ok"] += 1
            elif r.status == 200 and j.get("hit") is True and abs(j["distance"] - 3) < 1e-5:
                counts["ok"] += 1
            elif r.status == 404 and j["error"]["code"] == "mesh_not_found" and deleted.is_set():
                counts["gone"] += 1
            else:
                bad.append("%d %s" % (r.status, body[:200]))
threads = [threading.Thread(target=client) for _ in range(4)]
for t in threads: t.start()
w = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
versions = []
for i in range(40):
    w.request("PUT", "/v1/meshes/hot", json.dumps(big if i % 2 == 0 else cube), {"Content-Type": "application/json"})
    r = w.getresponse(); j = json.loads(r.read())
    if r.status != 200: bad.append("PUT %d %s" % (r.status, j))
    versions.append(j.get("version"))
    time.sleep(0.02)
deleted.set()
w.request("DELETE", "/v1/meshes/hot"); r = w.getresponse(); r.read()
if r.status != 204: bad.append("DELETE %d" % r.status)
time.sleep(0.3); stop.set()
for t in threads: t.join()
if versions != list(range(2, 42)): bad.append("versions %s" % versions)
print("answers", counts, "bad", len(bad)); print("\n".join(bad[:10]))
sys.exit(0 if not bad and counts["ok"] > 40 and counts["gone"] > 0 else 1)
PY
'
test_expect 'the daemon is alive after the replace/delete storm' '
	expect 200 GET /healthz && expect 404 GET /v1/meshes/hot && errcode mesh_not_found
'

# ---- 200 malformed bodies in a row
put_cube keep >/dev/null
req GET /v1/meshes/keep; body_save info
req POST /v1/meshes/keep/raycast -H 'Content-Type: application/json' --data-binary '{"origin": [0.25, 5, 0.5], "direction": [0, -1, 0]}'; body_save answer
# The bodies and their checks (a file: the code needs both kinds of quotes).
cat >"$TMP/malformed.py" <<'PY'
import http.client, json, random, struct, sys
port = int(sys.argv[1]); rnd = random.Random(7)
good = json.dumps({"vertices": [[0,0,0],[1,0,0],[0,0,1]], "triangles": [[0,2,1]]})
def mutate(s):
    b = bytearray(s.encode())
    for _ in range(rnd.randint(1, 4)):
        k = rnd.randrange(4); i = rnd.randrange(max(len(b), 1))
        if not b: break
        if k == 0: b[i] = rnd.randrange(256)
        elif k == 1: del b[i]
        elif k == 2: b.insert(i, rnd.choice(b"{}[],:\"0e-.\\\x00\xff"))
        else: b = b[:i]
    return bytes(b)
wrong = ['[]', '{}', 'null', '"x"', '{"vertices": [], "triangles": []}', '{"vertices": [[0,0,0]], "triangles": [[0,0,1]]}',
         '{"vertices": [[0,0,0],[1,0,0],[0,0,1]], "triangles": [[0,2,1]], "x": 1}', '{"vertices": [[0,0],[1,0,0],[0,0,1]], "triangles": [[0,2,1]]}',
         '{"vertices": [[0,0,0],[1,0,0],[0,0,1]], "triangles": [[0,2,-1]]}', '{"vertices": [[0,0,0],[1,0,0],[0,0,1]], "triangles": [[0,2,1.5]]}',
         '{"vertices": [[0,0,0],[1,0,0],[0,0,1]], "vertices": [[0,0,0],[1,0,0],[0,0,1]], "triangles": [[0,2,1]]}',
         '{"vertices": [[0,0,1e999],[1,0,0],[0,0,1]], "triangles": [[0,2,1]]}', '{"Vertices": [[0,0,0],[1,0,0],[0,0,1]], "triangles": [[0,2,1]]}']
bodies = []
for i in range(200):
    kind = i % 5
    if kind == 0 and i % 2 == 0:    # truncated: never valid JSON
        bodies.append(("PUT", "/v1/meshes/keep", "application/json", good.encode()[:rnd.randrange(0, len(good))]))
    elif kind == 0:                   # valid JSON, never a valid mesh
        bodies.append(("PUT", "/v1/meshes/keep", "application/json", rnd.choice(wrong).encode()))
    elif kind == 1: bodies.append(("PUT", "/v1/meshes/keep", "model/obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 %d\n" % rnd.choice([4, 5, 9, -4, -9, 0]) + bytes(rnd.randrange(256) for _ in range(20))))
    elif kind == 2: bodies.append(("PUT", "/v1/meshes/keep", "model/stl", bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 200)))))
    elif kind == 3: bodies.append(("POST", "/v1/meshes/keep/raycast", "application/json", mutate(json.dumps({"origin": [0.25, 5, 0.5], "direction": [0, -1, 0], "mode": "all"}))))
    else: bodies.append(("POST", "/v1/hitscan", "application/json", mutate(json.dumps({"mesh": "keep", "shots": [{"origin": [0, 0, 0], "direction": [1, 0, 0]}], "boxes": [{"center": [1, 1, 1], "half_extents": [1, 1, 1]}]}))))
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
bad = []; stored = 0
for m, p, ct, b in bodies:
    try:
        c.request(m, p, b, {"Content-Type": ct}); r = c.getresponse(); body = r.read()
    except Exception as e:
        bad.append("%s %s %r: %r" % (m, p, b[:60], e)); c = http.client.HTTPConnection("127.0.0.1", port, timeout=5); continue
    if m == "PUT" and r.status in (200, 201):
        stored += 1; bad.append("PUT %r was stored: %s" % (b[:80], body[:100])); continue
    if r.status == 200: continue     # a mutation can still be a valid query
    try:
        j = json.loads(body); ok = 400 <= r.status < 500 and j["error"]["code"] in ("invalid_json", "invalid_request", "invalid_mesh", "payload_too_large", "mesh_not_found")
    except Exception:
        ok = False
    if not ok: bad.append("%s %s %r -> %d %r" % (m, p, b[:60], r.status, body[:120]))
print(len(bad), "bad"); print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
PY
test_expect '200 malformed bodies in a row all get 4xx JSON errors' '
	python3 "$TMP/malformed.py" "$PORT"
'
test_expect 'after them GET info is unchanged (same version, same body)' '
	expect 200 GET /v1/meshes/keep && body_same info
'
test_expect 'after them the same query gives the same answer' '
	jexpect 200 POST /v1/meshes/keep/raycast "{\"origin\": [0.25, 5, 0.5], \"direction\": [0, -1, 0]}" && body_same answer
'

# ---- SIGTERM under load: 4 keep-alive clients for 2 s, TERM after 1 s
test_expect 'SIGTERM during load: the daemon exits 0 within 10 s' '
	python3 - "$PORT" >"$TMP/load.out" 2>&1 <<"PY" &
import http.client, json, sys, threading, time
port = int(sys.argv[1]); q = json.dumps({"rays": [{"origin": [0.25, 5, 0.5], "direction": [0, -1, 0]}] * 50})
n = [0]
def run():
    end = time.time() + 2
    c = None
    while time.time() < end:
        try:
            c = c or http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("POST", "/v1/meshes/keep/raycast", q, {"Content-Type": "application/json"}); c.getresponse().read(); n[0] += 1
        except Exception:
            c = None; time.sleep(0.01)
ts = [threading.Thread(target=run) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print("requests", n[0])
PY
	load=$! &&
	sleep 1 && stop_daemon TERM && wait $load; cat "$TMP/load.out";
	echo "daemon exit: $daemon_rc"; [ "$daemon_rc" = 0 ]
'
test_done
