#!/usr/bin/env bash
# run.sh - build every libFuzzer target in tests/fuzz/ and run each for a short while.
#
# Convention: tests/fuzz/fuzz_X.c defines LLVMFuzzerTestOneInput for one
# parser of outside bytes; its seed corpus is tests/fuzz/seeds/X/ (a few tiny
# hand-written files). Each target is linked with all of api/*.c and core/*.c
# and -lcjson -lm, so a new target needs no change here. A target that
# needs more names it in a comment line "FUZZ_EXTRA: file.c ... -llib"
# (server/ sources are compiled for that target alone).
#
#   tests/fuzz/run.sh            every target
#   tests/fuzz/run.sh obj stl    only fuzz_obj.c and fuzz_stl.c
#
# Environment: BUILD (default build; output in $BUILD/fuzz/), FUZZ_SECONDS
# (default 30, per target), FUZZ_CC (default clang), FUZZ_ARGS (extra
# libFuzzer flags). Each run starts from a fresh copy of the seeds in
# $BUILD/fuzz/corpus/X/, so corpus growth never dirties the repository;
# crashes are written to $BUILD/fuzz/artifacts/ and logs to $BUILD/fuzz/X.log.
# Exits non-zero if any target fails to build or finds a crash.
set -u
cd "$(dirname "$0")/../.." || exit 1

BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_CC=${FUZZ_CC:-clang}
OUT=$BUILD/fuzz
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CFLAGS="-std=gnu11 -g -O1 -D_GNU_SOURCE -Icore -Iapi -Iserver $(pkg-config --cflags libcjson 2>/dev/null)"
LIBS="$(pkg-config --libs libcjson 2>/dev/null || echo -lcjson) -lm -pthread"

command -v "$FUZZ_CC" >/dev/null || { echo "run.sh: $FUZZ_CC not found (apt-get install clang)"; exit 1; }

if [ $# -gt 0 ]; then
	targets=("$@")
else
	targets=()
	for f in tests/fuzz/fuzz_*.c; do
		[ -e "$f" ] || continue
		t=${f#tests/fuzz/fuzz_}
		targets+=("${t%.c}")
	done
fi
[ ${#targets[@]} -gt 0 ] || { echo "run.sh: no tests/fuzz/fuzz_*.c"; exit 1; }

# the code under test, instrumented once and shared by every target
mkdir -p "$OUT/obj/api" "$OUT/obj/core" "$OUT/artifacts"
objs=()
for src in api/*.c core/*.c; do
	[ -e "$src" ] || continue
	o=$OUT/obj/${src%.c}.o
	if [ ! -e "$o" ] || [ "$src" -nt "$o" ] || [ -n "$(find api core -name '*.h' -newer "$o" -print -quit)" ]; then
		# shellcheck disable=SC2086
		$FUZZ_CC $CFLAGS $SAN -fsanitize=fuzzer-no-link -c -o "$o" "$src" || { echo "run.sh: $src does not build"; exit 1; }
	fi
	objs+=("$o")
done

status=0
for t in "${targets[@]}"; do
	src=tests/fuzz/fuzz_$t.c
	bin=$OUT/fuzz_$t
	log=$OUT/$t.log
	corpus=$OUT/corpus/$t
	if [ ! -e "$src" ]; then
		echo "fuzz_$t: no $src"; status=1; continue
	fi
	extra=$(sed -n 's/.*FUZZ_EXTRA: *//p' "$src" | head -n 1)
	# shellcheck disable=SC2086
	if ! $FUZZ_CC $CFLAGS $SAN -fsanitize=fuzzer -o "$bin" "$src" $extra "${objs[@]}" $LIBS; then
		echo "fuzz_$t: build failed"; status=1; continue
	fi
	rm -rf "$corpus"
	mkdir -p "$corpus"
	[ -d "tests/fuzz/seeds/$t" ] && cp -r "tests/fuzz/seeds/$t/." "$corpus/"
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$OUT/artifacts/$t-" ${FUZZ_ARGS:-} "$corpus" >"$log" 2>&1
	rc=$?
	runs=$(grep -oE '^Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' || echo '?')
	if [ $rc = 0 ]; then
		echo "fuzz_$t: ok, $runs runs in ${FUZZ_SECONDS}s, corpus $(find "$corpus" -type f | wc -l) files"
	else
		echo "fuzz_$t: FAILED (exit $rc); log $log, artifacts in $OUT/artifacts/"
		grep -E 'ERROR|runtime error|Test unit written' "$log" | head -n 5
		status=1
	fi
done
exit $status
