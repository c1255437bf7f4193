#!/usr/bin/env bash
# The libmicrohttpd engine (--http-engine mhd: what serves TLS, and plain
# HTTP on request) through the scripts that test the transport itself:
# hardening, malformed requests, errors, limits, slow and abusive clients,
# ops endpoints and graceful stops. The other scripts run on the default
# engine (epoll for plain HTTP). Each script's checks are reported here,
# prefixed with its name.
set -u
cd "$(dirname "$0")/../.."
export BUILD=${BUILD:-build}
export EXTRA_DAEMON_FLAGS="--http-engine mhd" COLLISIOND_HTTP_ENGINE=mhd
n=0
failed=0
for s in hardening malformed errors limits abuse ops robustness; do
	out=$(bash "tests/integration/$s.sh" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*)
			n=$((n + 1))
			echo "ok $n - mhd $s: ${line#ok * - }" ;;
		"not ok "*)
			n=$((n + 1)); failed=$((failed + 1))
			echo "not ok $n - mhd $s: ${line#not ok * - }" ;;
		"#"*)
			echo "# mhd $s: ${line#\# }" ;;
		esac
	done <<<"$out"
	if [ "$rc" != 0 ] && ! grep -q '^not ok' <<<"$out"; then
		n=$((n + 1)); failed=$((failed + 1))
		echo "not ok $n - mhd $s: exited $rc"
		printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'
	fi
done
echo "# $n checks, $failed failed"
[ "$failed" = 0 ]
