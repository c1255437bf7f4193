#!/usr/bin/env bash
# device_run.sh - what a lent many-core machine is for, in one call: issue
# 11's table (bench/http_scale.sh: collisiond against nginx with the servers
# on cores 0..N-1 and wrk on 8-15, access log on, and off at the largest N),
# issue 7's scaling of one big binary batch across threads
# (bench/http_batch.sh, hits compared byte for byte with collisiond-bench)
# and, when the archive carries the harness's anchors, single-thread rays
# on level against Embree 3 (pinned to core RAY_CPU, ROUNDS rounds in turn).
# Runs from the folder bench/device_pack.sh made (copied there as run.sh):
#   tar xzf build/device.tar.gz -C /tmp && /tmp/device/run.sh
# Writes everything it prints to $OUT/device.txt too when OUT is set.
# env: NS (1 2 4 8), ROUNDS (3), BATCH_THREADS (1 2 4 8 16), DURATION (4), RAY_CPU (2),
#      WRK_CPUS (8-15), WRK_THREADS (8); python3 and taskset from the machine.
#      ROUNDS1: N = 1 measured first on its own with that many rounds (and the
#      access log off there too), the rest of NS with ROUNDS: one server
#      core is where a round moves most (0.73-1.22 of nginx), so its median
#      wants more rounds than the others'.
set -euo pipefail
D=$(cd "$(dirname "$0")" && pwd)
LOG=${OUT:+$OUT/device.txt}
exec > >(tee ${LOG:+"$LOG"}) 2>&1
cd "$D"
export PATH="$D/bin:$PATH"
echo "== $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), kernel $(uname -r)"
echo "== pinned to core 0: $(taskset -c 0 grep Cpus_allowed_list /proc/self/status 2>&1)"
# scale ROUNDS N...: the HTTP table for those N
scale() {
	local rounds=$1
	shift
	echo "== HTTP against nginx, N = $*, $rounds rounds"
	COLLISIOND=$D/bin/collisiond NGINX_BIN=$D/bin/nginx WRK=$D/bin/wrk ROUNDS=$rounds \
		DURATION=${DURATION:-4} bash bench/http_scale.sh data/level.obj "$@"
}
read -r -a ns <<<"${NS:-1 2 4 8}"
if [ -n "${ROUNDS1:-}" ] && [ "${ns[0]}" = 1 ]; then
	scale "$ROUNDS1" 1
	ns=("${ns[@]:1}")
fi
[ ${#ns[@]} -eq 0 ] || scale "${ROUNDS:-3}" "${ns[@]}"
echo "== one binary batch of 100 000 rays per request across threads"
for t in ${BATCH_THREADS:-1 2 4 8 16}; do
	BUILD=$D/bin bash bench/http_batch.sh data/level.obj data/level.rays 100000 "$t"
done
if [ -x bin/anchors ]; then
	echo "== one thread (core ${RAY_CPU:-2}): level rays, Embree 3 and collisiond, ${ROUNDS:-3} rounds"
	half=$(($(stat -c %s data/level.rays) / 28 / 2))
	hits=$(mktemp -d)
	for _ in $(seq "${ROUNDS:-3}"); do
		taskset -c "${RAY_CPU:-2}" bin/anchors bench --obj data/level.obj --rays data/level.rays --engines embree \
			--reps 3 --split "$half" --outdir "$hits" --tag level
		taskset -c "${RAY_CPU:-2}" bin/collisiond-bench --obj data/level.obj --rays data/level.rays --reps 3 \
			--split "$half" --warmup 100000 --outdir "$hits" --tag level
	done | tee "$hits/rays.jsonl"
	python3 - "$hits/rays.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
e = [r for r in rows if r['engine'] == 'embree']
p = [r for r in rows if r['engine'] == 'project']
for k in ('closest_rps', 'anyhit_rps'):
    rs = [b[k] / a[k] for a, b in zip(e, p)]
    print('%s: collisiond / Embree per round %s, median %.2f' % (
        k, ' '.join('%.2f' % x for x in rs), statistics.median(rs)))
# both builds on the one pinned core
rs = [a['build_ms'] / b['build_ms'] for a, b in zip(e, p)]
print('build: Embree / collisiond per round %s, median %.2f' % (
    ' '.join('%.2f' % x for x in rs), statistics.median(rs)))
PY
	rm -rf "$hits"
fi
