#!/usr/bin/env bash
# device_pack.sh - one archive for a lent many-core machine, which reaches no
# package registry: the daemon and collisiond-bench built here, nginx, wrk,
# curl and taskset (the lent image may lack util-linux) from this machine,
# the harness's `anchors` (Embree 3) when it is built, every library they
# load (the dynamic loader included, so that they run whatever the other
# machine's libraries are), the level mesh with RAYS of its rays (the first
# and the last RAYS/2: incoherent ones and shots), and the scripts that
# measure.
#
#   bench/device_pack.sh            (make device-pack)
#
# Writes build/device.tar.gz (git-ignored; well under the 64 MiB a device
# call carries). On the device, from the repository root:
#   tar xzf build/device.tar.gz -C /tmp && /tmp/device/run.sh
# run.sh is bench/device_run.sh (its env: NS, ROUNDS, BATCH_THREADS).
# env: DATA (build/bench-harness/data: level.obj and level.rays, from the
#      harness's gen_data.py), RAYS (400000), ANCHORS
#      (build/bench-harness/bin/anchors; left out when absent)
set -euo pipefail
DATA=${DATA:-build/bench-harness/data}
RAYS=${RAYS:-400000}
ANCHORS=${ANCHORS:-build/bench-harness/bin/anchors}
OUT=build/device

for f in "$DATA/level.obj" "$DATA/level.rays"; do
	[ -f "$f" ] || { echo "device_pack: no $f (make bench builds the data)" >&2; exit 1; }
done
make --no-print-directory build/collisiond build/collisiond-bench
rm -rf "$OUT" "$OUT.tar.gz"
mkdir -p "$OUT/bin/real" "$OUT/lib" "$OUT/data" "$OUT/bench"

# each program: the binary under bin/real, a wrapper in bin that starts it
# with the carried loader and libraries
progs=(build/collisiond build/collisiond-bench "$(command -v nginx)" "$(command -v wrk)"
	"$(command -v curl)" "$(command -v taskset)")
[ -x "$ANCHORS" ] && progs+=("$ANCHORS")
for p in "${progs[@]}"; do
	name=$(basename "$p")
	cp -L "$p" "$OUT/bin/real/$name"
	ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			cp -Ln "$lib" "$OUT/lib/" 2>/dev/null || true
		done
	cat >"$OUT/bin/$name" <<EOF
#!/bin/sh
D=\$(dirname "\$(readlink -f "\$0")")/..
exec "\$D/lib/ld-linux-x86-64.so.2" --library-path "\$D/lib" "\$D/bin/real/$name" "\$@"
EOF
	chmod +x "$OUT/bin/$name"
done
[ -e "$OUT/lib/ld-linux-x86-64.so.2" ] || { echo "device_pack: no loader among the libraries" >&2; exit 1; }

cp "$DATA/level.obj" "$OUT/data/"
{ head -c $((RAYS / 2 * 28)) "$DATA/level.rays"; tail -c $((RAYS / 2 * 28)) "$DATA/level.rays"; } \
	>"$OUT/data/level.rays"
cp bench/http_scale.sh bench/http_batch.sh bench/ports.sh "$OUT/bench/"
cp bench/device_run.sh "$OUT/run.sh"
tar czf "$OUT.tar.gz" -C build device
ls -l "$OUT.tar.gz"
