#!/usr/bin/env bash
# HTTP against core: a random mesh and random rays (python3, stdlib only),
# sent as one JSON batch, must give exactly the triangle and the float32
# distance that ${BUILD}/collisiond-bench computes offline on the same OBJ and
# rays (the anchor protocol of ../shared/bench/README.md).
. "$(dirname "$0")/lib.sh"
require_daemon

if [ ! -x "$BENCH" ]; then
	test_skip 'HTTP answers equal collisiond-bench' "$BENCH not built"
	test_done
fi

# A 12x12 height field (shared edges and vertices) plus 60 loose random
# triangles; 1500 rays: random, aimed at grid vertices, and axis-aligned;
# a fifth with a finite max_distance.
python3 - "$TMP" <<'PY'
import json, math, random, struct, sys
out = sys.argv[1]; rnd = random.Random(20240601)
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
V, T = [], []
N = 12
for i in range(N + 1):
    for k in range(N + 1):
        V.append((f32(-6 + i), f32(rnd.uniform(-1, 1)), f32(-6 + k)))
for i in range(N):
    for k in range(N):
        a = i * (N + 1) + k; b = a + 1; c = a + N + 1; d = c + 1
        T += [(a, b, d), (a, d, c)]
for _ in range(60):
    base = len(V)
    p = [rnd.uniform(-8, 8) for _ in range(3)]
    for _ in range(3):
        V.append(tuple(f32(p[j] + rnd.uniform(-2, 2)) for j in range(3)))
    T.append((base, base + 1, base + 2))
with open(out + "/m.obj", "w") as f:
    for v in V: f.write("v %r %r %r\n" % v)
    for t in T: f.write("f %d %d %d\n" % (t[0] + 1, t[1] + 1, t[2] + 1))
rays = []
# Directions are float32 unit vectors, as in the harness's ray files: the
# server uses such a direction as sent (API.md: distances are along the
# normalised direction, and it already is), so core gets the very same ray
# as the bench, and triangle and distance must agree bit for bit.
def unit32(d):
    n = math.sqrt(sum(x * x for x in d))
    return [f32(x / n) for x in d]
def add(o, d, tmax):
    rays.append(([f32(x) for x in o], unit32(d), tmax))
    return True
i = 0
while len(rays) < 1500:
    i += 1
    o = [rnd.uniform(-12, 12), rnd.uniform(2, 12), rnd.uniform(-12, 12)]
    if i % 3 == 0:   # aimed at a grid vertex (shared by up to 6 triangles)
        v = V[rnd.randrange((N + 1) * (N + 1))]; d = [v[j] - o[j] for j in range(3)]
    elif i % 3 == 1:
        d = [rnd.uniform(-1, 1) for _ in range(3)]
    else:
        d = [0, -1, 0] if i % 2 else [rnd.choice([-1, 1]), 0, 0]
        o[1] = rnd.uniform(-2, 2)
    tmax = f32(rnd.uniform(1, 15)) if len(rays) % 5 == 0 else 3.4e38
    add(o, d, tmax)
with open(out + "/r.rays", "wb") as f:
    for o, d, tmax in rays: f.write(struct.pack("<7f", *o, *d, tmax))
batch = []
for o, d, tmax in rays:
    r = {"origin": o, "direction": d}
    if tmax < 3e38: r["max_distance"] = tmax
    batch.append(r)
with open(out + "/batch.json", "w") as f: json.dump({"rays": batch}, f)
PY

start_daemon || { echo "not ok 1 - daemon starts"; exit 1; }

test_expect 'the random OBJ uploads' '
	expect 201 PUT /v1/meshes/rnd -H "Content-Type: model/obj" --data-binary @"$TMP/m.obj" &&
	jcheck "j[\"triangles\"] == 348"
'
test_expect 'collisiond-bench runs on the same OBJ and rays' '
	"$BENCH" --obj "$TMP/m.obj" --rays "$TMP/r.rays" --outdir "$TMP" --tag hv --reps 1 --warmup 0 --no-anyhit >"$TMP/bench.json" &&
	[ -s "$TMP/hv_project.hits" ]
'
test_expect 'one batch of 1500 rays answers' '
	expect 200 POST /v1/meshes/rnd/raycast -H "Content-Type: application/json" --data-binary @"$TMP/batch.json" &&
	cp "$TMP/body" "$TMP/http.json" && jcheck "len(j[\"results\"]) == 1500"
'
test_expect 'every answer has the triangle and float32 distance of the bench' '
	python3 - "$TMP/http.json" "$TMP/hv_project.hits" <<"PY"
import json, struct, sys
res = json.load(open(sys.argv[1]))["results"]
raw = open(sys.argv[2], "rb").read()
hits = [struct.unpack_from("<if", raw, 8 * i) for i in range(len(raw) // 8)]
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
bad = []; nhit = 0; maxrel = 0.0
for i, (r, (tri, t)) in enumerate(zip(res, hits)):
    if tri < 0:
        if r.get("hit") is not False: bad.append("ray %d: bench miss, http %s" % (i, r))
        continue
    nhit += 1
    if r.get("hit") is not True or r["triangle"] != tri:
        bad.append("ray %d: bench tri %d t %r, http %s" % (i, tri, t, r)); continue
    if f32(r["distance"]) != t:
        maxrel = max(maxrel, abs(r["distance"] - t) / max(t, 1e-30))
        bad.append("ray %d: tri %d bench t %r, http distance %r" % (i, tri, t, r["distance"]))
print("%d rays, %d hits, %d differ (largest relative distance difference %.3g)" % (len(hits), nhit, len(bad), maxrel))
print("\n".join(bad[:8]))
sys.exit(0 if len(hits) == len(res) == 1500 and nhit > 300 and not bad else 1)
PY
'
test_done
