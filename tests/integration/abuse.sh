#!/usr/bin/env bash
# Slow and abusive clients (tests/integration/abuse.py): idle keep-alive
# connections by the thousand, slowloris, 64 KiB header blocks and a trickled
# 100 MB upload, while a well-behaved client keeps getting correct answers.
# ABUSE_SECONDS / ABUSE_IDLE / ABUSE_SLOW make it longer (make reliability).
. "$(dirname "$0")/lib.sh"

start_daemon --log-level error --header-timeout 2 --body-timeout 2 --min-body-rate 128K ||
	{ echo "not ok 1 - daemon starts"; exit 1; }
put_cube cube >/dev/null || echo "# could not upload the cube"
test_expect "a good client keeps its answers under abuse (${ABUSE_SECONDS:-4} s)" '
	python3 tests/integration/abuse.py "$PORT" "${ABUSE_SECONDS:-4}" "${ABUSE_IDLE:-2000}" \
		"${ABUSE_SLOW:-200}" >"$TMP/abuse.out"; rc=$?
	sed "s/^/# /" "$TMP/abuse.out" >&3
	[ $rc = 0 ] && grep -q "upload cut after" "$TMP/abuse.out"
' 3>&1
test_expect 'the daemon is still healthy after' 'expect 200 GET /healthz'
test_done
