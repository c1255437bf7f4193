# lib.sh - shared helpers for the integration scripts (sourced, not run).
#
# A script sources this file, starts a daemon with start_daemon, then runs
# checks in the style of git's t/README:
#
#	. "$(dirname "$0")/lib.sh"
#	start_daemon --demo
#	test_expect 'healthz answers ok' '
#		expect 200 GET /healthz &&
#		jcheck "j == {\"status\": \"ok\"}"
#	'
#	test_done
#
# Each test_expect prints exactly one TAP line, "ok N - desc" or
# "not ok N - desc" (then "# "-prefixed diagnostics), which tests/run_all.sh
# counts. The code of a test runs in the script's own shell (like git's
# test_expect_success), so chain its steps with &&.
#
# Request helpers write the answer to $TMP/body and $TMP/headers and its
# status to $status:
#	req METHOD PATH [curl args]		any request
#	expect STATUS METHOD PATH [curl args]	req, then fail unless the status matches
#	jexpect STATUS METHOD PATH JSON [args]	the same with a JSON body (Content-Type set)
#	jcheck PYEXPR				python3 expression over j (the JSON body) is true
#	errcode CODE				the body is {"error": {"code": CODE, "message": ...}}
#	header NAME REGEX			the answer has header NAME matching REGEX (case-insensitive name)
# Daemons: start_daemon [flags] (free port, waits for /readyz, sets URL, PID),
# stop_daemon (SIGTERM, waits, sets daemon_rc). All of them are killed on exit.
# Variables: AUTH (bearer key sent by req when non-empty), SCHEME (http or
# https), CURL_TLS (extra curl args, e.g. --cacert FILE).

# Run directly (tests/run_all.sh runs every *.sh here): nothing to do.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	exit 0
fi

set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
BUILD=${BUILD:-build}
DAEMON=$BUILD/collisiond
BENCH=$BUILD/collisiond-bench
TMP=$(mktemp -d "${TMPDIR:-/tmp}/collisiond-it.XXXXXX")
AUTH=
SCHEME=http
CURL_TLS=
PORT=
PID=
URL=
status=
daemon_rc=
test_count=0
test_failed=0
all_pids=

# python3 (stdlib only) runs once or twice per check: prefer the system's
# interpreter over a version-manager shim, which costs ~0.2 s per start.
PY=$(command -v python3)
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
python3() { "$PY" "$@"; }

# Slower builds (sanitizers, valgrind) get more time to start and answer.
case "$BUILD" in
*san*) TIME_SCALE=4 ;;
*) TIME_SCALE=1 ;;
esac

cleanup() {
	local p i
	for p in $all_pids; do
		kill -TERM "$p" 2>/dev/null || continue
		for ((i = 0; i < 20; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "${KEEP_TMP:-}" ] && echo "# kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT

# One free TCP port on 127.0.0.1, chosen by the kernel, and none this script
# was given before (free once closed, the kernel may hand one out again: a
# daemon once took the port kept for the Redis started after it). Called
# as $(free_port): the ports given are kept in a file.
free_port() {
	local p
	for ((;;)); do
		p=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
		grep -qx "$p" "$TMP/ports_given" 2>/dev/null && continue
		echo "$p" >>"$TMP/ports_given"
		echo "$p"
		return
	done
}

# test_expect DESC CODE: run CODE, print one TAP line.
test_expect() {
	test_count=$((test_count + 1))
	if eval "$2" >"$TMP/test.out" 2>&1; then
		echo "ok $test_count - $1"
	else
		echo "not ok $test_count - $1"
		test_failed=$((test_failed + 1))
		sed -e 's/^/#   /' "$TMP/test.out" | head -n 20
	fi
}

# test_skip DESC REASON: a check that cannot run here.
test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - # SKIP $1: $2"
}

# test_done: the script's exit status (0 when every check passed).
test_done() {
	echo "# $test_count checks, $test_failed failed"
	[ "$test_failed" = 0 ]
	exit $?
}

# Stop the script with one failed check when the daemon is missing.
require_daemon() {
	if [ ! -x "$DAEMON" ]; then
		echo "not ok 1 - $DAEMON is built (run make build/collisiond)"
		exit 1
	fi
}

# start_daemon [flags...]: start $DAEMON on a free port of 127.0.0.1 and wait
# until /readyz answers 200 (10 s). Fails (returns 1) when it does not.
# Env for the daemon can be given as DAEMON_ENV="A=1 B=2"; EXTRA_DAEMON_FLAGS
# (e.g. "--http-engine epoll") is appended to every daemon's flags.
start_daemon() {
	require_daemon
	PORT=$(free_port)
	URL="$SCHEME://127.0.0.1:$PORT"
	env ${DAEMON_ENV:-} "$DAEMON" --bind 127.0.0.1 --port "$PORT" "$@" ${EXTRA_DAEMON_FLAGS:-} \
		>>"$TMP/daemon.log" 2>&1 &
	PID=$!
	all_pids="$all_pids $PID"
	wait_ready
}

# wait_ready: poll $URL/readyz until 200, up to 10 s (scaled).
wait_ready() {
	local i code
	for ((i = 0; i < 100 * TIME_SCALE; i++)); do
		code=$(curl -s -o /dev/null -w '%{http_code}' $CURL_TLS --max-time 1 "$URL/readyz")
		[ "$code" = 200 ] && return 0
		kill -0 "$PID" 2>/dev/null || { echo "# daemon exited at start-up:"; tail -n 5 "$TMP/daemon.log" | sed 's/^/#   /'; return 1; }
		sleep 0.1
	done
	echo "# daemon not ready after $((10 * TIME_SCALE)) s"
	return 1
}

# stop_daemon [SIGNAL]: signal the daemon (TERM) and wait up to 10 s for it;
# daemon_rc = its exit status (or "timeout", then it is killed).
stop_daemon() {
	local sig=${1:-TERM} i
	[ -n "$PID" ] || return 0
	kill -"$sig" "$PID" 2>/dev/null
	for ((i = 0; i < 100 * TIME_SCALE; i++)); do
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$PID" 2>/dev/null; then
		kill -KILL "$PID" 2>/dev/null
		wait "$PID" 2>/dev/null
		daemon_rc=timeout
	else
		wait "$PID" 2>/dev/null
		daemon_rc=$?
	fi
	PID=
}

# req METHOD PATH [curl args...]
req() {
	local method=$1 path=$2
	shift 2
	local auth=()
	[ -n "$AUTH" ] && auth=(-H "Authorization: Bearer $AUTH")
	: >"$TMP/body"
	: >"$TMP/headers"
	status=$(curl -s -X "$method" -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' \
		--max-time $((10 * TIME_SCALE)) $CURL_TLS "${auth[@]}" "$@" "$URL$path")
	[ -n "$status" ] || status=000
}

# expect STATUS METHOD PATH [curl args...]
expect() {
	local want=$1
	shift
	req "$@"
	if [ "$status" != "$want" ]; then
		echo "$1 $2: expected status $want, got $status"
		head -c 400 "$TMP/body"
		echo
		return 1
	fi
}

# jexpect STATUS METHOD PATH JSON [curl args...]
jexpect() {
	local want=$1 method=$2 path=$3 json=$4
	shift 4
	expect "$want" "$method" "$path" -H 'Content-Type: application/json' --data-binary "$json" "$@"
}

# jcheck PYEXPR: python3 expression, j = the parsed body; helpers near(a, b,
# eps=1e-5) for numbers and vectors.
jcheck() {
	python3 - "$1" "$TMP/body" <<'EOF'
import json, math, sys
expr, path = sys.argv[1], sys.argv[2]
raw = open(path, 'rb').read()
def near(a, b, eps=1e-5):
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(near(x, y, eps) for x, y in zip(a, b))
    return isinstance(a, (int, float)) and not isinstance(a, bool) and abs(a - b) <= eps * max(1.0, abs(b))
try:
    j = json.loads(raw)
except ValueError as e:
    print("body is not JSON (%s): %r" % (e, raw[:300]))
    sys.exit(1)
try:
    ok = eval(expr)
except Exception as e:
    ok = False
    print("%s: %s" % (type(e).__name__, e))
if not ok:
    print("false: %s" % expr)
    print("body: %s" % raw[:600].decode('utf-8', 'replace'))
    sys.exit(1)
EOF
}

# errcode CODE [MESSAGE_SUBSTRING]: an error body with that code (and message part).
errcode() {
	jcheck "set(j) == {'error'} and set(j['error']) == {'code', 'message'} and j['error']['code'] == '$1' and isinstance(j['error']['message'], str) and len(j['error']['message']) > 0 and '''${2:-}''' in j['error']['message']"
}

# header NAME REGEX
header() {
	if ! grep -qiE "^$1: *$2" "$TMP/headers"; then
		echo "no header $1 matching $2 in:"
		cat "$TMP/headers"
		return 1
	fi
}

# body_save NAME / body_same NAME: keep the last body, compare later.
body_save() { cp "$TMP/body" "$TMP/saved.$1"; }
body_same() {
	cmp -s "$TMP/body" "$TMP/saved.$1" || { echo "body differs from saved $1:"; head -c 300 "$TMP/saved.$1"; echo; head -c 300 "$TMP/body"; echo; return 1; }
}

# The unit cube [0,1]^3, 12 triangles wound counter-clockwise seen from
# outside, in this order (two per face): -z 0,1; +z 2,3; -y 4,5; +y 6,7;
# -x 8,9; +x 10,11. Each face's diagonal runs from its lowest-numbered
# vertex corner; tests aim away from diagonals.
CUBE_JSON='{"vertices": [[0,0,0],[1,0,0],[1,1,0],[0,1,0],[0,0,1],[1,0,1],[1,1,1],[0,1,1]],
 "triangles": [[0,2,1],[0,3,2],[4,5,6],[4,6,7],[0,1,5],[0,5,4],[3,7,6],[3,6,2],[0,4,7],[0,7,3],[1,2,6],[1,6,5]]}'
CUBE_OBJ='# unit cube
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
v 0 0 1
v 1 0 1
v 1 1 1
v 0 1 1
f 1 3 2
f 1 4 3
f 5 6 7
f 5 7 8
f 1 2 6
f 1 6 5
f 4 8 7
f 4 7 3
f 1 5 8
f 1 8 4
f 2 3 7
f 2 7 6
'

# within S CMD...: CMD succeeds within S seconds (scaled)
within() {
	local s=$1 k
	shift
	for ((k = 0; k < s * 10 * TIME_SCALE; k++)); do "$@" && return 0; sleep 0.1; done
	return 1
}

# start_redis_bare [redis-server flags...]: a Redis without persistence on a
# free port, $RPORT, its files in $TMP/redis; waits for it to answer (5 s).
# The caller checks $REDIS (redis-server) is there.
start_redis_bare() {
	local k
	RPORT=$(free_port)
	mkdir -p "$TMP/redis"
	"$REDIS" --port "$RPORT" --bind 127.0.0.1 --dir "$TMP/redis" --save "" --appendonly no \
		"$@" --daemonize no --logfile "$TMP/redis/log" &
	all_pids="$all_pids $!"
	for ((k = 0; k < 50; k++)); do redis-cli -p "$RPORT" ping 2>/dev/null | grep -q PONG && return 0; sleep 0.1; done
	return 1
}

# put_cube NAME: upload the unit cube (JSON) as NAME; 200 or 201.
put_cube() {
	req PUT "/v1/meshes/$1" -H 'Content-Type: application/json' --data-binary "$CUBE_JSON"
	[ "$status" = 201 ] || [ "$status" = 200 ] || { echo "PUT $1: $status"; cat "$TMP/body"; return 1; }
}

# as KEY CMD...: run CMD with AUTH=KEY (the bearer key), then restore AUTH.
as() {
	local saved=$AUTH rc
	AUTH=$1
	shift
	"$@"
	rc=$?
	AUTH=$saved
	return $rc
}
