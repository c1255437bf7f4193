#!/usr/bin/env bash
# http_bench.sh - collisiond over HTTP against nginx, with the anchor harness
# (../shared/bench/http/http_bench.sh), in one run:
#   1. single raycast on the level mesh (the harness's default project body)
#      next to nginx answering a fixed body, same wrk settings;
#   2. JSON batches of 1000 rays of the harness's level.rays per request
#      (rays/s = requests/s * 1000);
#   3. the single raycast again with the access log off (--log-level warn),
#      so that the log's cost shows as a ratio in the same run.
# env: HARNESS (../shared/bench), BENCH_OUT (a writable copy of it),
#      COLLISIOND (the daemon binary), RUNS (3), DURATION (10)
set -euo pipefail
HARNESS=${HARNESS:-../shared/bench}
BENCH_OUT=${BENCH_OUT:-$PWD/build/bench-harness}
COLLISIOND=${COLLISIOND:-$PWD/build/collisiond}
export RUNS=${RUNS:-3} DURATION=${DURATION:-10}
PORT=18190
export PROJECT_HTTP_PORT=$PORT
export PROJECT_HTTP_CMD="$COLLISIOND --port $PORT"

BENCH_OUT=$BENCH_OUT "$HARNESS/run.sh" build data
cd "$BENCH_OUT"
: > results/http.jsonl
# 1. single ray: nginx (1 and 2 workers) and collisiond, one run
RUNS=$RUNS OUT=results/http.jsonl http/http_bench.sh nginx1 nginx2 project
# 2. batches of 1000 rays (the first 1000 "shots" of level.rays), same daemon
body=$(python3 - <<'PY'
import struct
data = open('data/level.rays', 'rb').read()
n = len(data) // 28
rays = []
for i in range(n // 2, n // 2 + 1000):
    o = struct.unpack_from('<7f', data, 28 * i)
    tmax = '' if o[6] >= 3e38 else ',"max_distance":%.9g' % o[6]
    rays.append('{"origin":[%.9g,%.9g,%.9g],"direction":[%.9g,%.9g,%.9g]%s}' % (o[:6] + (tmax,)))
print('{"rays":[' + ','.join(rays) + ']}')
PY
)
: > results/http_batch.jsonl
PROJECT_HTTP_BODY=$body RUNS=$RUNS OUT=results/http_batch.jsonl WRK_CONFIGS="2:8" http/http_bench.sh project
# 3. the access log off
: > results/http_nolog.jsonl
PROJECT_HTTP_CMD="$COLLISIOND --port $PORT --log-level warn" RUNS=$RUNS OUT=results/http_nolog.jsonl \
	http/http_bench.sh project
python3 - <<'PY'
import json, statistics
rows = [json.loads(l) for l in open('results/http.jsonl') if l.startswith('{')]
batch = [json.loads(l) for l in open('results/http_batch.jsonl') if l.startswith('{')]
def med(t, w):
    v = [r['rps'] for r in rows if r['target'] == t and r['wrk'] == w]
    return statistics.median(v) if v else None
print('| wrk | nginx1 req/s | nginx2 req/s | collisiond req/s | ratio to best nginx |')
print('|---|---|---|---|---|')
for w in sorted({r['wrk'] for r in rows}):
    n1, n2, p = med('nginx1', w), med('nginx2', w), med('project', w)
    best = max(x for x in (n1, n2) if x)
    print('| %s | %.0f | %.0f | %.0f | %.2f |' % (w, n1 or 0, n2 or 0, p or 0, (p or 0) / best))
nolog = [json.loads(l) for l in open('results/http_nolog.jsonl') if l.startswith('{')]
for w in sorted({r['wrk'] for r in nolog}):
    on, off = med('project', w), statistics.median(r['rps'] for r in nolog if r['wrk'] == w)
    print('access log on/off, %s: %.0f / %.0f req/s = %.3f' % (w, on or 0, off, (on or 0) / off))
b = statistics.median(r['rps'] for r in batch)
print('\nbatches of 1000 rays (wrk %s): %.0f req/s = %.2f M rays/s (median of %d runs, errors %d)' % (
    batch[0]['wrk'], b, b * 1000 / 1e6, len(batch), sum(r['err_status'] for r in batch)))
PY
