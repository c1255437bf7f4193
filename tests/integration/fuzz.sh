#!/usr/bin/env bash
# Every libFuzzer target of tests/fuzz/ for a few seconds each from its
# committed seed corpus (tests/fuzz/run.sh), when clang is installed.
# FUZZ_SECONDS (default 4 per target here) makes it longer.
. "$(dirname "$0")/lib.sh"

if ! command -v "${FUZZ_CC:-clang}" >/dev/null; then
	test_skip 'libFuzzer targets' 'clang is not installed'
	test_done
fi
for f in tests/fuzz/fuzz_*.c; do
	t=${f#tests/fuzz/fuzz_}
	t=${t%.c}
	test_expect "fuzz_$t: ${FUZZ_SECONDS:-4} s from the seed corpus, no crash" '
		[ -n "$(ls tests/fuzz/seeds/$t 2>/dev/null)" ] || { echo "no seeds in tests/fuzz/seeds/$t"; false; } &&
		FUZZ_SECONDS=${FUZZ_SECONDS:-4} nice tests/fuzz/run.sh "$t" >"$TMP/fuzz.out" 2>&1; rc=$?
		sed "s/^/# /" "$TMP/fuzz.out" >&3
		[ $rc = 0 ]
	' 3>&1
done
test_done
