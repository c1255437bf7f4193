#!/usr/bin/env bash
# kill -9 durability of --data-dir (tests/integration/durability.py): writes,
# replaces and deletes in flight, the daemon killed at random moments and
# restarted over planted temporary and truncated files. DURABILITY_ROUNDS
# makes it longer (make reliability).
. "$(dirname "$0")/lib.sh"
require_daemon

test_expect "every acknowledged write survives kill -9 (${DURABILITY_ROUNDS:-6} rounds)" '
	mkdir -p "$TMP/data" &&
	python3 tests/integration/durability.py "$DAEMON" "$TMP/data" "$TMP/durability.log" \
		"${DURABILITY_ROUNDS:-6}" "${DURABILITY_SEED:-$RANDOM}" >"$TMP/dur.out"; rc=$?
	sed "s/^/# /" "$TMP/dur.out" >&3
	[ $rc = 0 ]
' 3>&1
test_done
