#!/usr/bin/env bash
# http_bench.sh - collisiond over HTTP against nginx, with the anchor harness
# (../shared/bench/http/http_bench.sh), in one run:
#   1. single raycast on the level mesh (the harness's default project body)
#      next to nginx answering a fixed body, same wrk settings: nginx with 1
#      and 2 workers, collisiond with --threads 1 and 2, the four in turn in
#      each of RUNS rounds (the host's speed drifts from minute to minute);
#      the ratio is best against best, and also like against like, of the
#      medians over rounds and round by round;
#   2. JSON batches of 1000 rays of the harness's level.rays per request
#      (rays/s = requests/s * 1000), default threads;
#   3. the single raycast again with the access log off (--log-level warn,
#      --threads 2), in the same rounds as 1 (right after the log-on run of
#      two threads), so that the log's cost shows as a ratio of neighbours;
#   4. PAIRS back-to-back pairs of nginx (one worker) and collisiond (one
#      thread) at t1c32, with each side's CPU time per request
#      (bench/http_pairs.sh): the median of the pairs' ratios drifts less
#      than the ratios of 1, whose servers run a minute apart.
# env: HARNESS (../shared/bench), BENCH_OUT (a writable copy of it),
#      COLLISIOND (the daemon binary), RUNS (3), DURATION (10), PAIRS (8; 0
#      skips 4)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
HARNESS=$(cd "${HARNESS:-../shared/bench}" && pwd)
BENCH_OUT=${BENCH_OUT:-$PWD/build/bench-harness}
COLLISIOND=${COLLISIOND:-$PWD/build/collisiond}
export RUNS=${RUNS:-3} DURATION=${DURATION:-10}
PORT=18190
export PROJECT_HTTP_PORT=$PORT
export PROJECT_HTTP_CMD="$COLLISIOND --port $PORT"

BENCH_OUT=$BENCH_OUT "$HARNESS/run.sh" build data
cd "$BENCH_OUT"
: > results/http.jsonl
: > results/http_p1.jsonl
: > results/http_p2.jsonl
: > results/http_nolog.jsonl
# 1. single ray: nginx (1 and 2 workers) and collisiond (1 and 2 threads),
# in turn, RUNS rounds of one wrk run each; 3. the access log off, in the
# same rounds
for _ in $(seq "$RUNS"); do
	RUNS=1 OUT=results/http.jsonl http/http_bench.sh nginx1 nginx2
	for t in 1 2; do
		PROJECT_HTTP_CMD="$COLLISIOND --port $PORT --threads $t" RUNS=1 OUT=results/http_p$t.jsonl \
			http/http_bench.sh project
	done
	PROJECT_HTTP_CMD="$COLLISIOND --port $PORT --threads 2 --log-level warn" RUNS=1 \
		OUT=results/http_nolog.jsonl http/http_bench.sh project
done
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
python3 - <<'PY'
import json, statistics
def load(path, target=None):
    rows = [json.loads(l) for l in open(path) if l.startswith('{')]
    for r in rows:
        r['target'] = target or r['target']
    return rows
rows = load('results/http.jsonl') + load('results/http_p1.jsonl', 'c1') + load('results/http_p2.jsonl', 'c2')
batch = load('results/http_batch.jsonl')
def med(t, w, rs=rows):
    v = [r['rps'] for r in rs if r['target'] == t and r['wrk'] == w]
    return statistics.median(v) if v else 0
print('| wrk | nginx 1 worker | nginx 2 workers | collisiond 1 thread | collisiond 2 threads | best vs best | 1 vs 1 | 2 vs 2 |')
print('|---|---|---|---|---|---|---|---|')
for w in sorted({r['wrk'] for r in rows}):
    n1, n2, c1, c2 = med('nginx1', w), med('nginx2', w), med('c1', w), med('c2', w)
    print('| %s | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f |' % (
        w, n1, n2, c1, c2, max(c1, c2) / max(n1, n2), c1 / n1 if n1 else 0, c2 / n2 if n2 else 0))
# round by round: the four servers of a round ran within a minute of each
# other, so their ratios see less of the host's drift than medians across rounds
def per_round(t, w):
    return [r['rps'] for r in rows if r['target'] == t and r['wrk'] == w]
for w in sorted({r['wrk'] for r in rows}):
    n1, n2, c1, c2 = (per_round(t, w) for t in ('nginx1', 'nginx2', 'c1', 'c2'))
    best = [max(a, b) / max(x, y) for a, b, x, y in zip(c1, c2, n1, n2)]
    one = [a / x for a, x in zip(c1, n1)]
    two = [b / y for b, y in zip(c2, n2)]
    if best:
        print('%s round by round: best vs best %s (median %.2f); 1 vs 1 median %.2f; 2 vs 2 median %.2f' % (
            w, ' '.join('%.2f' % x for x in best), statistics.median(best),
            statistics.median(one), statistics.median(two)))
nolog = load('results/http_nolog.jsonl')
for w in sorted({r['wrk'] for r in nolog}):
    # round by round: the log-on and log-off runs of a round are neighbours
    ons = [r['rps'] for r in rows if r['target'] == 'c2' and r['wrk'] == w]
    offs = [r['rps'] for r in nolog if r['wrk'] == w]
    pairs = [a / b for a, b in zip(ons, offs)]
    print('access log on/off (2 threads), %s: %.0f / %.0f req/s; per round %s, median %.3f' % (
        w, statistics.median(ons), statistics.median(offs),
        ' '.join('%.3f' % x for x in pairs), statistics.median(pairs)))
b = statistics.median(r['rps'] for r in batch)
print('\nbatches of 1000 rays (wrk %s): %.0f req/s = %.2f M rays/s (median of %d runs, errors %d)' % (
    batch[0]['wrk'], b, b * 1000 / 1e6, len(batch), sum(r['err_status'] for r in batch)))
PY
if [ "${PAIRS:-8}" -gt 0 ]; then
	echo
	: > results/http_pairs.jsonl
	HARNESS=$HARNESS BENCH_OUT=$BENCH_OUT COLLISIOND=$COLLISIOND DURATION=3 \
		OUT=results/http_pairs.jsonl "$HERE/http_pairs.sh" "${PAIRS:-8}"
fi
