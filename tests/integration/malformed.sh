#!/usr/bin/env bash
# A corpus of ~140 malformed requests (tests/integration/malformed.py: bad
# methods, request lines, paths, headers, lengths, encodings, content types,
# bodies, numbers): every one answered, none with an unexpected 5xx, >= 95 %
# with the exact status, and the daemon still healthy after.
. "$(dirname "$0")/lib.sh"

start_daemon --log-level warn || { echo "not ok 1 - daemon starts"; exit 1; }
test_expect 'malformed corpus: 0 unexpected 5xx, 0 unanswered, >= 95 % exact statuses' '
	python3 tests/integration/malformed.py "$PORT" >"$TMP/corpus.out"; rc=$?
	cat "$TMP/corpus.out"
	grep "^malformed corpus" "$TMP/corpus.out" | sed "s/^/# /" >&3
	[ $rc = 0 ]
' 3>&1
test_done
