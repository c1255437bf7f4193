#!/usr/bin/env bash
# replicas_ready.sh - how long a replica takes to be ready with SIZE_MB of
# meshes in Redis (the compact form, persist.h), and its memory next to a
# single daemon loading the same meshes from --data-dir.
#   BUILD=build SIZE_MB=1024 bench/replicas_ready.sh     (make bench-replicas)
# One grid mesh of TRIS triangles (default 1 M, ~18 MB) is generated once and
# stored under as many names as make SIZE_MB; each is built separately at
# load, exactly as distinct meshes would be. Needs redis-server, redis-cli.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SIZE_MB=${SIZE_MB:-1024}
TRIS=${TRIS:-1000000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collisiond-ready.XXXXXX")
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT
# shellcheck source=bench/ports.sh
. bench/ports.sh

mkdir -p "$TMP/data" "$TMP/redis"
python3 tests/integration/persist_races.py files "$TMP" 1 "$TRIS" >/dev/null
BLOB=$TMP/bulk-0.mesh
BYTES=$(stat -c %s "$BLOB")
N=$(( (SIZE_MB * 1048576 + BYTES - 1) / BYTES ))
echo "mesh: $TRIS triangles, $BYTES bytes; $N meshes = $(( N * BYTES / 1048576 )) MiB"

RPORT=$(free_port)
redis-server --port "$RPORT" --bind 127.0.0.1 --dir "$TMP/redis" --save "" --appendonly no \
	--daemonize no --logfile "$TMP/redis/log" &
pids="$pids $!"
for ((i = 0; i < 50; i++)); do redis-cli -p "$RPORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
redis-cli -p "$RPORT" -x HSET collisiond:mesh:m0 d <"$BLOB" >/dev/null
for ((k = 0; k < N; k++)); do
	[ $k = 0 ] || echo "COPY collisiond:mesh:m0 collisiond:mesh:m$k"
	echo "HSET collisiond:mesh:m$k v $((k + 1))"
	echo "SADD collisiond:names m$k"
	ln "$BLOB" "$TMP/data/m$k.mesh"
done | redis-cli -p "$RPORT" >/dev/null
redis-cli -p "$RPORT" SET collisiond:seq "$N" >/dev/null
echo "redis: $(redis-cli -p "$RPORT" INFO memory | grep -E '^used_memory_human' | tr -d '\r\n')"

# ready: from exec to /readyz 200; memory: VmRSS / VmHWM once ready
measure() {
	local label=$1 p t0 t1 pid
	shift
	p=$(free_port)
	t0=$(date +%s%N)
	"$BUILD/collisiond" --bind 127.0.0.1 --port "$p" --log-level warn "$@" >"$TMP/$label.log" 2>&1 &
	pid=$!
	pids="$pids $pid"
	until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/readyz")" = 200 ]; do
		kill -0 $pid || { cat "$TMP/$label.log"; exit 1; }
		sleep 0.05
	done
	t1=$(date +%s%N)
	printf '%-28s ready in %6.1f s, %s meshes, RSS %s MiB (peak %s MiB)\n' "$label" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')" \
		"$(curl -s "http://127.0.0.1:$p/metrics" | sed -n 's/^collisiond_meshes //p')" \
		"$(awk '/^VmRSS:/ { print int($2 / 1024) }' /proc/$pid/status)" \
		"$(awk '/^VmHWM:/ { print int($2 / 1024) }' /proc/$pid/status)"
	kill $pid; wait $pid 2>/dev/null || true
}
measure "replica (--store redis)" --store "redis://127.0.0.1:$RPORT"
measure "single daemon (--data-dir)" --data-dir "$TMP/data"
