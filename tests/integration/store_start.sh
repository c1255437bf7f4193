#!/usr/bin/env bash
# store_start.sh - the --store Redis at start-up: a Redis that is not up yet
# is waited for; a password holding '@' and percent-encoded characters
# reaches AUTH; a database, password or missing password that Redis refuses
# ends the daemon with status 2 and one error line naming --store (or
# COLLISIOND_STORE), even at --log-level error, without the password (it
# once retried forever, /readyz 503, one warn line or nothing); a Redis
# busy with a script is waited for.
# Needs redis-server (make deps-test installs it).
. "$(dirname "$0")/lib.sh"

REDIS=$(command -v redis-server || echo /usr/bin/redis-server)
if [ ! -x "$REDIS" ]; then
	test_skip '--store at start-up' 'redis-server missing (make deps-test)'
	test_done
fi
require_daemon

RPORT=$(free_port)
PASS='p@ss:w/rd%'
STORE="redis://:p@ss:w%2Frd%25@127.0.0.1:$RPORT"
mkdir -p "$TMP/redis"

# exits NAME [flags...]: run the daemon on $RPORT's Redis until it exits
# (10 s at most, scaled), env from RUN_ENV ("A=1 B=2"); rc = its status
# (124: still running then), its output in $TMP/NAME.log
exits() {
	local name=$1
	shift
	timeout $((10 * TIME_SCALE)) env ${RUN_ENV:-} "$DAEMON" --bind 127.0.0.1 \
		--port "$(free_port)" "$@" >"$TMP/$name.log" 2>&1
	rc=$?
}
# one_error NAME WHO TEXT: exit status 2, and the log is one error line that
# starts with WHO and holds TEXT, and not the password
one_error() {
	[ "$rc" = 2 ] && [ "$(wc -l <"$TMP/$1.log")" = 1 ] &&
		grep -qF " error $2: " "$TMP/$1.log" && grep -qF "$3" "$TMP/$1.log" &&
		! grep -qF "$PASS" "$TMP/$1.log" && ! grep -qF "w%2Frd" "$TMP/$1.log" ||
		{ echo "exit status $rc, log:"; cat "$TMP/$1.log"; return 1; }
}

# start_daemon_bg URL [flags...]: a daemon on that --store, not waited for
start_daemon_bg() {
	PORT=$(free_port)
	URL=http://127.0.0.1:$PORT
	"$DAEMON" --bind 127.0.0.1 --port "$PORT" --store "$1" --log-level warn "${@:2}" \
		>>"$TMP/daemon.log" 2>&1 &
	PID=$!
	all_pids="$all_pids $PID"
}
# Redis not up yet: the daemon waits (not ready), and is ready once it is.
# A 503 says when to ask again (Retry-After), from either engine.
start_daemon_bg "$STORE" --http-engine mhd
test_expect 'Redis not up at start (libmicrohttpd engine): /readyz 503 with Retry-After: 1' '
	sleep 1 && kill -0 "$PID" &&
	expect 503 GET /readyz && errcode not_ready && header Retry-After "1[[:space:]]*$"
'
kill "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
start_daemon_bg "$STORE"
test_expect 'Redis not up at start: the daemon waits, /readyz 503 not_ready with Retry-After: 1' '
	sleep 1.5 && kill -0 "$PID" &&
	expect 503 GET /readyz && errcode not_ready && header Retry-After "1[[:space:]]*$"
'
"$REDIS" --port "$RPORT" --bind 127.0.0.1 --dir "$TMP/redis" --save "" --appendonly no \
	--requirepass "$PASS" --lua-time-limit 100 --daemonize no --logfile "$TMP/redis/log" &
all_pids="$all_pids $!"
test_expect 'Redis up: the waiting daemon authenticates (a password with @ : / %) and is ready' '
	wait_ready && put_cube cube &&
	[ "$(redis-cli -p "$RPORT" --no-auth-warning -a "$PASS" scard collisiond:names)" = 1 ] &&
	! grep -qF "$PASS" "$TMP/daemon.log"
'

exits db99 --store "$STORE/99" --log-level error
test_expect 'a database Redis refuses (/99): exit 2, one error line naming --store' '
	one_error db99 --store "DB index is out of range"
'
RUN_ENV="COLLISIOND_STORE=$STORE/99" exits db99env --log-level error
test_expect 'the same URL from COLLISIOND_STORE: the line names the variable' '
	one_error db99env "COLLISIOND_STORE (--store)" "DB index is out of range"
'
RUN_ENV="COLLISIOND_STORE_PASSWORD=n0t-$PASS" exits wrongpass --store "$STORE" --log-level error
test_expect 'a wrong password: exit 2, one error line (AUTH), the password not in it' '
	one_error wrongpass --store "AUTH: WRONGPASS" && ! grep -qF "n0t-" "$TMP/wrongpass.log"
'
exits nopass --store "redis://127.0.0.1:$RPORT" --log-level error
test_expect 'no password where Redis requires one: exit 2, one error line (NOAUTH)' '
	one_error nopass --store "NOAUTH"
'
test_expect 'the daemon that waited still serves, and stops with status 0' '
	expect 200 GET /v1/meshes/cube && stop_daemon && [ "$daemon_rc" = 0 ]
'

# A script past its time limit (--lua-time-limit) makes Redis answer SELECT
# with BUSY until it ends: a Redis busy for now, waited for like one not up.
rcli() { redis-cli -p "$RPORT" --no-auth-warning -a "$PASS" "$@"; }
rcli eval "while true do end" 0 >/dev/null 2>&1 &
all_pids="$all_pids $!"
for ((k = 0; k < 50; k++)); do rcli ping 2>&1 | grep -q BUSY && break; sleep 0.1; done
start_daemon_bg "$STORE/1"
test_expect 'Redis busy with a script at start: the daemon waits, and is ready once it is not' '
	sleep 1 && kill -0 "$PID" && grep -q "SELECT 1: BUSY" "$TMP/daemon.log" &&
	expect 503 GET /readyz && rcli script kill | grep -q OK &&
	wait_ready && stop_daemon && [ "$daemon_rc" = 0 ]
'
# Every client slot taken (maxclients): Redis answers any new connection
# "ERR max number of clients reached", for now only: waited for (it once
# ended the daemon as if the password were wrong).
rcli config set maxclients 1 >/dev/null
python3 - "$RPORT" "$PASS" >"$TMP/holder.out" 2>&1 <<"PY" &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
pw = sys.argv[2].encode()
s.sendall(b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n" % (len(pw), pw))
s.recv(100)
print("holding", flush=True)
time.sleep(2.5)  # then the slot is free again
PY
holder=$!
all_pids="$all_pids $holder"
for ((k = 0; k < 50; k++)); do grep -q holding "$TMP/holder.out" && break; sleep 0.1; done
start_daemon_bg "$STORE/1"
test_expect 'every Redis client slot taken at start: the daemon waits, and is ready once one is free' '
	sleep 1 && kill -0 "$PID" && grep -q "max number of clients" "$TMP/daemon.log" &&
	wait "$holder"; rcli config set maxclients 10000 | grep -q OK && wait_ready &&
	stop_daemon && [ "$daemon_rc" = 0 ]
'
test_done
