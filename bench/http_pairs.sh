#!/usr/bin/env bash
# http_pairs.sh - one raycast per request, collisiond against nginx in
# back-to-back pairs, with the CPU each side spends on a request.
#
#   bench/http_pairs.sh [PAIRS]       (default 8; env DURATION=3, CONNS=32)
#   AGAINST=nolog bench/http_pairs.sh  the same pairs against collisiond with
#                                      its access log off (--log-level warn)
#
# Each pair runs nginx (one worker, the harness's fixed 157-byte answer) and
# collisiond (--threads 1, level uploaded, the harness's project body) under
# the same wrk load (-t1 -c$CONNS, $DURATION s after a 1 s warm-up), the
# order alternating from pair to pair. The host's speed drifts by a tenth
# or more from minute to minute (a virtual machine), so the figure to read
# is the median of the pairs' ratios, measured seconds apart, not a ratio
# of medians. Beside each rate: the server's user and system CPU time per
# request (/proc/PID/stat over the timed run: every thread of collisiond,
# nginx's worker) and wrk's (bash's `time`), which say which side bounds the
# rate on a machine of two cores where wrk and the server share them.
# env: HARNESS (../shared/bench; its nginx.conf.in, post_ray.lua and
#      data/level.obj, made by `make bench` or `make bench-http`), BENCH_OUT
#      (build/bench-harness), COLLISIOND (build/collisiond), OUT (a JSON line
#      per run, appended; $BENCH_OUT/results/http_pairs.jsonl), PAIR_BODY
#      (the raycast body sent to both; default the harness's project ray)
set -euo pipefail
PAIRS=${1:-8}
HARNESS=$(cd "${HARNESS:-../shared/bench}" && pwd)
BENCH_OUT=$(cd "${BENCH_OUT:-build/bench-harness}" && pwd)
COLLISIOND=$(realpath "${COLLISIOND:-build/collisiond}")
DURATION=${DURATION:-3}
CONNS=${CONNS:-32}
OUT=${OUT:-$BENCH_OUT/results/http_pairs.jsonl}
BODY=${PAIR_BODY:-'{"origin":[123.456,7.891,-234.567],"direction":[0.57735,-0.0735,0.81321],"max_distance":200.0}'}
URLPATH=/v1/meshes/level/raycast
TMP=$(mktemp -d)
SERVER_PID=
CPU_PID=

for f in "$HARNESS/http/nginx.conf.in" "$HARNESS/http/post_ray.lua" "$BENCH_OUT/data/level.obj"; do
	[ -f "$f" ] || { echo "http_pairs.sh: $f missing (make bench-http first)" >&2; exit 1; }
done
command -v nginx >/dev/null && command -v wrk >/dev/null ||
	{ echo "http_pairs.sh: needs nginx and wrk" >&2; exit 1; }

stop() {
	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -TERM "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	SERVER_PID=
}
trap 'stop; rm -rf "$TMP"' EXIT

# shellcheck source=bench/ports.sh
. "$(dirname "$0")/ports.sh"

# start TARGET: sets SERVER_PID (what to stop), CPU_PID (whose CPU counts), PORT
start() {
	PORT=$(free_port)
	if [ "$1" = nginx ]; then
		sed -e "s#@WORKERS@#1#" -e "s#@RUNDIR@#$TMP#g" -e "s#@PORT@#$PORT#" \
			"$HARNESS/http/nginx.conf.in" >"$TMP/nginx.conf"
		nginx -p "$TMP" -c "$TMP/nginx.conf" -e "$TMP/error.log" &
		SERVER_PID=$!
		wait_port "$PORT"
		CPU_PID=$(pgrep -P "$SERVER_PID" | head -1)
	else
		local quiet=
		[ "$1" = nolog ] && quiet="--log-level warn"
		# shellcheck disable=SC2086
		"$COLLISIOND" --port "$PORT" --threads 1 $quiet >"$TMP/collisiond.log" 2>&1 &
		SERVER_PID=$!
		CPU_PID=$SERVER_PID
		wait_port "$PORT"
		curl -sf -X PUT -H 'Content-Type: model/obj' --data-binary @"$BENCH_OUT/data/level.obj" \
			"http://127.0.0.1:$PORT/v1/meshes/level" >/dev/null
	fi
}

# clock ticks of user and system time of process $1, all its threads
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }

# run TARGET PAIR: one timed wrk run, one JSON line on stdout
run() {
	local u0 s0 u1 s1 wrk_cpu n
	start "$1"
	(cd "$HARNESS" && WRK_PATH=$URLPATH WRK_BODY="$BODY" \
		wrk -t1 -c8 -d1s -s http/post_ray.lua "http://127.0.0.1:$PORT" >/dev/null)
	read -r u0 s0 < <(ticks "$CPU_PID")
	wrk_cpu=$(cd "$HARNESS" && export WRK_PATH=$URLPATH WRK_BODY="$BODY" TIMEFORMAT='%U %S' &&
		{ time wrk -t1 -c"$CONNS" -d"${DURATION}s" -s http/post_ray.lua \
			"http://127.0.0.1:$PORT" >"$TMP/wrk.txt"; } 2>&1)
	read -r u1 s1 < <(ticks "$CPU_PID")
	stop
	n=$(sed -n 's/^{"requests":\([0-9]*\),.*/\1/p' "$TMP/wrk.txt")
	[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "http_pairs.sh: wrk gave no count" >&2; exit 1; }
	python3 - "$1" "$2" "$n" "$DURATION" "$u0" "$s0" "$u1" "$s1" $wrk_cpu "$(getconf CLK_TCK)" <<'PY'
import json, sys
t, pair, n, dur, u0, s0, u1, s1, wu, ws, hz = sys.argv[1:]
n, dur, hz = int(n), float(dur), int(hz)
us = lambda ticks: round(ticks * 1e6 / hz / n, 3)
print(json.dumps({"kind": "http_pair", "target": t, "pair": int(pair), "requests": n,
                  "rps": round(n / dur), "server_user_us": us(int(u1) - int(u0)),
                  "server_sys_us": us(int(s1) - int(s0)),
                  "wrk_user_us": round(float(wu) * 1e6 / n, 3),
                  "wrk_sys_us": round(float(ws) * 1e6 / n, 3)}))
PY
}

: >"$TMP/rows"
AGAINST=${AGAINST:-nginx}
case $AGAINST in nginx | nolog) ;; *) echo "http_pairs.sh: AGAINST is nginx or nolog" >&2; exit 1 ;; esac
for p in $(seq "$PAIRS"); do
	if [ $((p % 2)) = 1 ]; then order="$AGAINST collisiond"; else order="collisiond $AGAINST"; fi
	for t in $order; do
		run "$t" "$p" | tee -a "$OUT" >>"$TMP/rows"
	done
done
python3 - "$TMP/rows" "$AGAINST" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
other = sys.argv[2]
by = {}
for r in rows:
    by.setdefault(r['pair'], {})[r['target']] = r
ratios = [p['collisiond']['rps'] / p[other]['rps'] for p in by.values()]
print('pairs (collisiond / %s req/s): %s; median %.3f' % (
    other, ' '.join('%.2f' % x for x in ratios), statistics.median(ratios)))
for t in (other, 'collisiond'):
    rs = [r for r in rows if r['target'] == t]
    med = lambda k: statistics.median(r[k] for r in rs)
    print('%-10s median %7.0f req/s; server %.2f us user + %.2f us system a request, '
          'wrk %.2f + %.2f' % (t, med('rps'), med('server_user_us'), med('server_sys_us'),
                               med('wrk_user_us'), med('wrk_sys_us')))
PY
