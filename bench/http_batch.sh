#!/usr/bin/env bash
# http_batch.sh - binary ray batches over HTTP against the core's own rate.
#
#   bench/http_batch.sh MESH.obj MESH.rays [RAYS_PER_REQUEST] [THREADS]
#
# Runs, in one go on this machine: build/collisiond-bench on the mesh and rays
# (the core's single-thread closest-hit rate, and its .hits), then
# build/collisiond with --threads THREADS (default: CPUs), uploads the mesh
# and POSTs the rays as application/octet-stream batches of RAYS_PER_REQUEST
# (default 100000), one request after another on one connection. Prints one
# JSON line: both rates, their ratio, and whether the HTTP answers equal the
# bench's .hits byte for byte. Needs curl and python3; the .obj/.rays files
# come from ../shared/bench/gen_data.py (e.g. level.obj, level.rays).
set -euo pipefail
OBJ=${1:?usage: http_batch.sh MESH.obj MESH.rays [RAYS_PER_REQUEST] [THREADS]}
RAYS=${2:?usage: http_batch.sh MESH.obj MESH.rays [RAYS_PER_REQUEST] [THREADS]}
PER=${3:-100000}
THREADS=${4:-$(nproc)}
BUILD=${BUILD:-build}
TMP=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT

"$BUILD/collisiond-bench" --obj "$OBJ" --rays "$RAYS" --outdir "$TMP" --tag core --reps 3 \
	--no-anyhit >"$TMP/core.json"

# shellcheck source=bench/ports.sh
. "$(dirname "$0")/ports.sh"
PORT=$(free_port)
"$BUILD/collisiond" --port "$PORT" --threads "$THREADS" --max-batch "$PER" \
	--max-body-bytes 1G --max-query-bytes 1G --log-level warn &
PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.1; done
curl -sf -X PUT "http://127.0.0.1:$PORT/v1/meshes/m" -H 'Content-Type: model/obj' \
	--data-binary @"$OBJ" >/dev/null

split -b $((28 * PER)) -d -a 4 "$RAYS" "$TMP/part."
args=()
for p in "$TMP"/part.*; do
	args+=(-X POST -H 'Content-Type: application/octet-stream' --data-binary @"$p"
	       -o "$p.hits" -w '%{time_total}\n' "http://127.0.0.1:$PORT/v1/meshes/m/raycast" --next)
done
unset 'args[${#args[@]}-1]'
curl -sf "${args[@]}" >"$TMP/times"
cat "$TMP"/part.*.hits >"$TMP/http.hits"

python3 - "$TMP/core.json" "$TMP/times" "$TMP/http.hits" "$TMP/core_project.hits" "$PER" "$THREADS" <<'PY'
import json, sys
core = json.load(open(sys.argv[1]))
secs = sum(float(x) for x in open(sys.argv[2]).read().split())
rays = core["rays"]
same = open(sys.argv[3], "rb").read() == open(sys.argv[4], "rb").read()
http = rays / secs
print(json.dumps({"rays": rays, "rays_per_request": int(sys.argv[5]), "threads": int(sys.argv[6]),
                  "core_closest_rps_1thread": core["closest_rps"], "http_binary_rps": round(http),
                  "ratio": round(http / core["closest_rps"], 3), "http_seconds": round(secs, 3),
                  "hits_identical": same}))
sys.exit(0 if same else 1)
PY
