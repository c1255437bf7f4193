#!/usr/bin/env bash
# HTTP against core: a random mesh and random rays (python3, stdlib only),
# sent as one JSON batch and as one binary batch (application/octet-stream,
# API.md "Binary batches"), must give exactly the triangle and the float32
# distance that ${BUILD}/collisiond-bench computes offline on the same OBJ and
# rays (the anchor protocol of ../shared/bench/README.md); batches big enough
# to be split across the worker threads answer the same bytes.
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
with open(out + "/cull.json", "w") as f: json.dump({"rays": batch, "backfaces": "cull"}, f)
with open(out + "/big.json", "w") as f: json.dump({"rays": batch * 4}, f)
PY

# --threads 3: big batches are split in 3 chunks however many CPUs run the test
start_daemon --threads 3 --max-batch 30000 || { echo "not ok 1 - daemon starts"; exit 1; }

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

# binary: POST the .rays file itself; answers are the .hits records
bin_post() {	# bin_post STATUS QUERY FILE
	expect "$1" POST "/v1/meshes/rnd/raycast$2" -H "Content-Type: application/octet-stream" \
		--data-binary @"$3"
}
test_expect 'a binary batch answers the bench .hits byte for byte' '
	bin_post 200 "" "$TMP/r.rays" && header Content-Type application/octet-stream &&
	cmp "$TMP/body" "$TMP/hv_project.hits"
'
test_expect 'a big binary batch (21000 rays, split across threads) answers the same bytes' '
	for i in $(seq 14); do cat "$TMP/r.rays"; done >"$TMP/big.rays" &&
	for i in $(seq 14); do cat "$TMP/hv_project.hits"; done >"$TMP/big.hits" &&
	bin_post 200 "" "$TMP/big.rays" && cmp "$TMP/body" "$TMP/big.hits"
'
test_expect 'a big JSON batch (6000 rays, split) answers as four small ones' '
	expect 200 POST /v1/meshes/rnd/raycast -H "Content-Type: application/json" --data-binary @"$TMP/big.json" &&
	python3 -c "
import json, sys
small = open(sys.argv[1], \"rb\").read()[len(b\"{\\\"results\\\":[\"):-2]
want = b\"{\\\"results\\\":[\" + b\",\".join([small] * 4) + b\"]}\"
sys.exit(0 if open(sys.argv[2], \"rb\").read() == want else 1)" "$TMP/http.json" "$TMP/body"
'
test_expect 'binary options: backfaces=cull equals the JSON answers, mode=any agrees on hit or miss' '
	expect 200 POST /v1/meshes/rnd/raycast -H "Content-Type: application/json" --data-binary @"$TMP/cull.json" &&
	cp "$TMP/body" "$TMP/cull.out" && bin_post 200 "?backfaces=cull" "$TMP/r.rays" && cp "$TMP/body" "$TMP/cull.bin" &&
	bin_post 200 "?mode=any&backfaces=hit" "$TMP/r.rays" && cp "$TMP/body" "$TMP/any.bin" &&
	python3 - "$TMP/cull.out" "$TMP/cull.bin" "$TMP/any.bin" "$TMP/hv_project.hits" <<"PY"
import json, struct, sys
res = json.load(open(sys.argv[1]))["results"]
rec = lambda p: [struct.unpack_from("<if", open(p, "rb").read(), 8 * i) for i in range(len(res))]
cull, anyh, closest = rec(sys.argv[2]), rec(sys.argv[3]), rec(sys.argv[4])
ok = all((r["triangle"], struct.unpack("<f", struct.pack("<f", r["distance"]))[0]) == c if r["hit"] else c[0] == -1
         for r, c in zip(res, cull))
ok = ok and all((a[0] < 0) == (c[0] < 0) for a, c in zip(anyh, closest))
ok = ok and sum(c[0] >= 0 for c in cull) < sum(c[0] >= 0 for c in closest)
sys.exit(0 if ok else 1)
PY
'
test_expect 'binary errors: length, zero or non-finite direction by record, options, limit' '
	head -c 30 "$TMP/r.rays" >"$TMP/odd.rays" && bin_post 400 "" "$TMP/odd.rays" &&
	errcode invalid_request "30 bytes is not a whole number of 28-byte ray records" &&
	python3 -c "
import struct, sys
good = struct.pack(\"<7f\", 0, 5, 0, 0, -1, 0, 3.4e38)
open(sys.argv[1], \"wb\").write(good * 2 + struct.pack(\"<7f\", 0, 5, 0, 0, 0, 0, 1))
open(sys.argv[2], \"wb\").write(good + struct.pack(\"<7f\", 0, 5, 0, float(\"nan\"), 1, 0, 1))
open(sys.argv[3], \"wb\").write(good * 30001)" "$TMP/zero.rays" "$TMP/nan.rays" "$TMP/many.rays" &&
	bin_post 400 "" "$TMP/zero.rays" && errcode invalid_request "rays[2].direction: must not be zero" &&
	bin_post 400 "" "$TMP/nan.rays" && errcode invalid_request "rays[1].direction: must be 3 finite numbers" &&
	bin_post 400 "?mode=all" "$TMP/r.rays" && errcode invalid_request "mode must be closest or any" &&
	bin_post 400 "?max_hits=3" "$TMP/r.rays" && errcode invalid_request "unknown parameter max_hits" &&
	bin_post 400 "?mode=any&mode=closest" "$TMP/r.rays" && errcode invalid_request "mode given more than once" &&
	bin_post 400 "?backfaces=cull&mode=any&backfaces=cull" "$TMP/r.rays" &&
	errcode invalid_request "backfaces given more than once" &&
	bin_post 413 "" "$TMP/many.rays" && errcode payload_too_large "30001 entries, the limit is 30000" &&
	expect 415 POST /v1/meshes/rnd/segment -H "Content-Type: application/octet-stream" --data-binary @"$TMP/r.rays"
'
test_done
