#!/usr/bin/env bash
# device_run.sh - what a lent many-core machine is for, in one call: issue
# 11's table (bench/http_scale.sh: collisiond against nginx with the servers
# on cores 0..N-1 and wrk on 8-15, access log on, and off at the largest N)
# and issue 7's scaling of one big binary batch across threads
# (bench/http_batch.sh, hits compared byte for byte with collisiond-bench).
# Runs from the folder bench/device_pack.sh made (copied there as run.sh):
#   tar xzf build/device.tar.gz -C /tmp && /tmp/device/run.sh
# Writes everything it prints to $OUT/device.txt too when OUT is set.
# env: NS (1 2 4 8), ROUNDS (3), BATCH_THREADS (1 2 4 8 16), DURATION (4),
#      WRK_CPUS (8-15), WRK_THREADS (8); python3 and taskset from the machine
set -euo pipefail
D=$(cd "$(dirname "$0")" && pwd)
LOG=${OUT:+$OUT/device.txt}
exec > >(tee ${LOG:+"$LOG"}) 2>&1
cd "$D"
export PATH="$D/bin:$PATH"
echo "== $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "== HTTP against nginx, N = ${NS:-1 2 4 8}, ${ROUNDS:-3} rounds"
# shellcheck disable=SC2086
COLLISIOND=$D/bin/collisiond NGINX_BIN=$D/bin/nginx WRK=$D/bin/wrk ROUNDS=${ROUNDS:-3} \
	DURATION=${DURATION:-4} bash bench/http_scale.sh data/level.obj ${NS:-1 2 4 8}
echo "== one binary batch of 100 000 rays per request across threads"
for t in ${BATCH_THREADS:-1 2 4 8 16}; do
	BUILD=$D/bin bash bench/http_batch.sh data/level.obj data/level.rays 100000 "$t"
done
