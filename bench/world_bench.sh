#!/usr/bin/env bash
# world_bench.sh - worlds over loopback HTTP (a benchmark, not a test):
#   1. snapshot ingest: 64 entities x 20 hitboxes (12 capsules, 6 spheres,
#      2 boxes) per tick, bodies prepared beforehand, one keep-alive
#      connection; the time from sending a request to its 204 (JSON parse,
#      validation, snapshot build and publish included), median of TICKS;
#   2. hitscan: batches of 1000 shots at random rewound times, from players
#      towards other players, on that world plus the harness level mesh as a
#      static instance; median of BATCHES.
# The level is ../shared/bench's level.obj (gen_data.py): LEVEL=path, or
# build/bench-harness/data/level.obj, or generated into build/world-bench.
#   3. the same batches from wrk -t1 -c1 when wrk is installed, for the
#      daemon's latency without the Python client's share.
# env: COLLISIOND (build/collisiond), LEVEL, TICKS (300), BATCHES (50),
#      WRK_SECONDS (4)
set -euo pipefail
cd "$(dirname "$0")/.."
COLLISIOND=${COLLISIOND:-$PWD/build/collisiond}
HARNESS=${HARNESS:-../shared/bench}
OUT=${OUT:-$PWD/build/world-bench}
TICKS=${TICKS:-300}
BATCHES=${BATCHES:-50}
mkdir -p "$OUT"
if [ -z "${LEVEL:-}" ]; then
	LEVEL=$PWD/build/bench-harness/data/level.obj
	if [ ! -s "$LEVEL" ]; then
		LEVEL=$OUT/level.obj
		[ -s "$LEVEL" ] || python3 "$HARNESS/gen_data.py" --only level --rays 1000 --edge-rays 100 --out "$OUT" >&2
	fi
fi
PORT=${PORT:-18391}
"$COLLISIOND" --port "$PORT" --log-level warn --max-query-bytes 64M &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.05; done

PID=$pid PORT=$PORT LEVEL=$LEVEL TICKS=$TICKS BATCHES=$BATCHES OUT=$OUT python3 - <<'PY'
import http.client, json, math, os, random, re, statistics, time
port, ticks, batches = int(os.environ['PORT']), int(os.environ['TICKS']), int(os.environ['BATCHES'])
def daemon_cpu():
    # utime + stime of the daemon in seconds: its CPU per request does not
    # depend on what else the machine runs, unlike the wall time
    f = open('/proc/%s/stat' % os.environ['PID']).read().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')
def f32(o):
    # numbers as a game server sends float32 values: 9 significant digits
    return re.sub(r'-?\d+\.\d+(e-?\d+)?', lambda m: '%.9g' % float(m.group(0)), json.dumps(o))
c = http.client.HTTPConnection('127.0.0.1', port)
def req(method, path, body=b'', ctype='application/json'):
    t0 = time.perf_counter()
    c.request(method, path, body=body, headers={'Content-Type': ctype})
    r = c.getresponse()
    data = r.read()
    dt = time.perf_counter() - t0
    if r.status >= 300:
        raise SystemExit('%s %s: %d %s' % (method, path, r.status, data[:300]))
    return dt, data

_, info = req('PUT', '/v1/meshes/level', open(os.environ['LEVEL'], 'rb').read(), 'model/obj')
info = json.loads(info)
lo, hi = info['bounds']['min'], info['bounds']['max']
req('PUT', '/v1/worlds/bench', json.dumps({'static': [{'id': 'level', 'mesh': 'level'}], 'history_ms': 1000}).encode())

rng = random.Random(1)
N, TICK_MS = 64, 1000.0 / 64
ground = hi[1] + 1.0     # players stand above the level's highest point
home = [(rng.uniform(lo[0] + 20, lo[0] + 120), rng.uniform(lo[2] + 20, lo[2] + 120)) for _ in range(N)]
def player(i, t):
    x, z = home[i]
    x += 5 * math.sin(t * 0.001 + i)
    z += 5 * math.cos(t * 0.0013 + i)
    y = ground
    hb = [{'id': 'head', 'shape': 'sphere', 'center': [x, y + 1.7, z], 'radius': 0.12}]
    for k in range(5):
        hb.append({'id': 's%d' % k, 'shape': 'sphere', 'center': [x + 0.1 * k, y + 1.2, z], 'radius': 0.1})
    for k in range(12):
        a = 2 * math.pi * k / 12
        hb.append({'id': 'c%d' % k, 'shape': 'capsule', 'a': [x + 0.2 * math.cos(a), y + 0.1, z + 0.2 * math.sin(a)],
                   'b': [x + 0.2 * math.cos(a), y + 0.9, z + 0.2 * math.sin(a)], 'radius': 0.08})
    for k in range(2):
        q = [math.cos(t * 0.001), 0, math.sin(t * 0.001), 0]
        hb.append({'id': 'b%d' % k, 'shape': 'box', 'center': [x, y + 1.3 + 0.2 * k, z], 'half_extents': [0.2, 0.1, 0.15], 'rotation': q})
    return {'id': 'player-%d' % i, 'layer': 1, 'hitboxes': hb}
bodies = [f32({'tick': k + 1, 'time_ms': (k + 1) * TICK_MS,
                'entities': [player(i, (k + 1) * TICK_MS) for i in range(N)]}).encode() for k in range(ticks)]
c0 = daemon_cpu()
ing = [req('POST', '/v1/worlds/bench/snapshots', b)[0] for b in bodies]
cpu_ing = (daemon_cpu() - c0) / len(bodies)
ing = ing[10:]    # warm-up
print('snapshot ingest, %d entities x 20 hitboxes, %d KiB JSON: median %.3f ms, p90 %.3f ms, min %.3f ms over loopback (%d ticks); daemon CPU %.3f ms per snapshot' % (
    N, len(bodies[-1]) // 1024, statistics.median(ing) * 1e3, sorted(ing)[int(0.9 * len(ing))] * 1e3, min(ing) * 1e3, len(ing), cpu_ing * 1e3))

newest = ticks * TICK_MS
def shot():
    i, j = rng.sample(range(N), 2)
    t = newest - rng.uniform(0, 900)
    a, b = player(i, t), player(j, t)
    o = a['hitboxes'][0]['center']
    tgt = b['hitboxes'][rng.randrange(20)]
    p = tgt.get('center') or tgt['a']
    d = [p[k] - o[k] for k in range(3)]
    if rng.random() < 0.3:      # some shots go down into the level
        d[1] -= 10
    return {'origin': o, 'direction': d, 'time_ms': t, 'ignore': [a['id']]}
shots = [f32({'shots': [shot() for _ in range(1000)]}).encode() for _ in range(batches)]
times, outcome = [], {'entity': 0, 'static': 0, None: 0}
c0 = daemon_cpu()
for b in shots:
    dt, data = req('POST', '/v1/worlds/bench/hitscan', b)
    times.append(dt)
    for r in json.loads(data)['results']:
        outcome[r['hit']] += 1
cpu_shots = (daemon_cpu() - c0) / len(shots)
times = times[3:]
print('hitscan, batches of 1000 rewound shots on 64 x 20 hitboxes + the level (%d triangles): median %.3f ms, p90 %.3f ms, min %.3f ms per batch over loopback (%d batches; outcomes entity %d, static %d, miss %d); daemon CPU %.3f ms per batch' % (
    info['triangles'], statistics.median(times) * 1e3, sorted(times)[int(0.9 * len(times))] * 1e3, min(times) * 1e3, len(times),
    outcome['entity'], outcome['static'], outcome[None], cpu_shots * 1e3))
for k, b in enumerate(shots):
    open(os.path.join(os.environ['OUT'], 'shots-%d.json' % k), 'wb').write(b)
PY

# 3. the same hitscan batches from a C client (wrk, one connection, the
# batches in turn): the daemon's latency without Python's share of the
# round trip (0.4-1.0 ms of the figure above in six runs on this 2-core VM).
# wrk sends back to back, so the pool's workers stay warm between batches,
# which a client sending once per tick does not get.
if command -v wrk >/dev/null 2>&1; then
	cat >"$OUT/shots.lua" <<LUA
local bodies, i = {}, 0
for k = 0, $BATCHES - 1 do
	local f = io.open("$OUT/shots-" .. k .. ".json", "rb")
	bodies[k + 1] = f:read("*a")
	f:close()
end
request = function()
	i = i % #bodies + 1
	return wrk.format("POST", "/v1/worlds/bench/hitscan", {["Content-Type"] = "application/json"}, bodies[i])
end
LUA
	wrk -t1 -c1 -d"${WRK_SECONDS:-4}"s --latency -s "$OUT/shots.lua" "http://127.0.0.1:$PORT" >"$OUT/wrk.txt"
	awk '/^ +50%/ { p50 = $2 } /^ +90%/ { p90 = $2 } /^Requests\/sec/ { rps = $2 }
	     END { printf "hitscan, the same batches from wrk -t1 -c1 (a C client): median %s, p90 %s, %s batches/s\n", p50, p90, rps }' "$OUT/wrk.txt"
fi
