#!/usr/bin/env bash
# Runs every Check suite given as arguments, then every tests/integration/*.sh
# (TAP-style "ok" / "not ok" lines), and ends with one line: "N passed, N failed".
# A Check check counts as one test; an integration assertion counts as one.
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
passed=0
failed=0
status=0
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks|:[EF]:' || true
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: [0-9]+' | tail -n 1)
	if [ -z "$line" ]; then
		echo "$t: no Check summary (exit $rc)"
		printf '%s\n' "$out" | tail -n 20
		failed=$((failed + 1)); status=1; continue
	fi
	n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
	f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
	e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
	passed=$((passed + n - f - e))
	failed=$((failed + f + e))
	[ "$rc" = 0 ] && [ $((f + e)) = 0 ] || status=1
done
for s in tests/integration/*.sh; do
	[ -e "$s" ] || continue
	case $(basename "$s") in lib*) continue ;; esac	# sourced helpers, not tests
	echo "== $s"
	out=$(bash "$s" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^(not ok|ok|#)' | grep -vE '^ok' || true
	p=$(grep -cE '^ok' <<<"$out")
	f=$(grep -cE '^not ok' <<<"$out")
	echo "$s: $p ok, $f not ok"
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "$s exited $rc"; printf '%s\n' "$out" | tail -n 20
		failed=$((failed + 1))
	fi
	[ "$rc" = 0 ] && [ "$f" = 0 ] || status=1
done
echo "$passed passed, $failed failed"
exit $status
