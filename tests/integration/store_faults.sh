#!/usr/bin/env bash
# store_faults.sh - replicas on one --store Redis that answers oddly: an
# error reply to a fetch (a command refused, every client slot taken, a
# script past its time limit) is not a mesh gone: the resync fails and is
# retried (it once counted the mesh fetched, said ready and never held it),
# and an event whose fetch fails is applied once Redis answers again.
# Needs redis-server (make deps-test installs it).
. "$(dirname "$0")/lib.sh"

REDIS=$(command -v redis-server || echo /usr/bin/redis-server)
if [ ! -x "$REDIS" ]; then
	test_skip '--store faults' 'redis-server missing (make deps-test)'
	test_done
fi
require_daemon

RPORT=$(free_port)
mkdir -p "$TMP/redis"
"$REDIS" --port "$RPORT" --bind 127.0.0.1 --dir "$TMP/redis" --save "" --appendonly no \
	--daemonize no --logfile "$TMP/redis/log" &
all_pids="$all_pids $!"
rcli() { redis-cli -p "$RPORT" "$@"; }
for ((k = 0; k < 50; k++)); do rcli ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
STORE=redis://127.0.0.1:$RPORT/0

# replica NAME: one more daemon on the store, PORT_NAME its port, not waited for
replica() {
	local port
	port=$(free_port)
	"$DAEMON" --bind 127.0.0.1 --port "$port" --threads 2 --store "$STORE" --log-level warn \
		>>"$TMP/$1.log" 2>&1 &
	all_pids="$all_pids $!"
	eval "PORT_$1=$port"
}
# code PORT PATH: the HTTP status of a GET
code() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1$2"; }
# within S CMD...: CMD succeeds within S seconds (scaled)
within() {
	local s=$1 k
	shift
	for ((k = 0; k < s * 10 * TIME_SCALE; k++)); do "$@" && return 0; sleep 0.1; done
	return 1
}
is() { [ "$(code "$1" "$2")" = "$3" ]; }

replica a
test_expect 'a replica on the store is ready and stores two meshes' '
	within 10 is "$PORT_a" /readyz 200 &&
	URL=http://127.0.0.1:$PORT_a put_cube one && URL=http://127.0.0.1:$PORT_a put_cube two
'
# Redis refuses the replicas' fetches (HMGET) for a while: an error reply,
# not "no such mesh".
rcli acl setuser default -hmget >/dev/null
replica b
test_expect 'fetches refused by Redis at start: not ready, and says why' '
	sleep 1.5 && is "$PORT_b" /readyz 503 && grep -q "fetching .*NOPERM" "$TMP/b.log"
'
rcli acl setuser default +hmget >/dev/null
test_expect 'fetches answered again: ready, holding both meshes' '
	within 10 is "$PORT_b" /readyz 200 &&
	is "$PORT_b" /v1/meshes/one 200 && is "$PORT_b" /v1/meshes/two 200
'
# An event whose fetch is refused: applied once Redis answers again (it
# was dropped, and the replica kept the old mesh until the next write).
rcli acl setuser default -hmget >/dev/null
test_expect 'an event fetched while Redis refuses, then answers: the replica takes the write' '
	URL=http://127.0.0.1:$PORT_a put_cube three && sleep 0.5 &&
	rcli acl setuser default +hmget >/dev/null &&
	within 10 is "$PORT_b" /v1/meshes/three 200
'
test_done
