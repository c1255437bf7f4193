#!/usr/bin/env bash
# replicas.sh - three replicas sharing one Redis (--store) behind nginx:
# propagation of a PUT to every replica (median and max over 100 PUTs),
# concurrent writers on two replicas ending with one winner everywhere, a
# replica killed with -9 and restarted under load with 0 failed requests,
# Redis stopped (queries answer, writes 503 store_unavailable) and back.
# Needs redis-server and nginx (make deps-test installs them).
. "$(dirname "$0")/lib.sh"

REDIS=$(command -v redis-server || echo /usr/bin/redis-server)
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$REDIS" ] || [ ! -x "$NGINX" ]; then
	test_skip 'replicas behind nginx' 'redis-server or nginx missing (make deps-test)'
	test_done
fi
require_daemon
PY_R=tests/integration/replicas.py

# ---- redis-server on a free port, AOF on, everything in $TMP
RPORT=$(free_port)
mkdir -p "$TMP/redis"
start_redis() {
	"$REDIS" --port "$RPORT" --bind 127.0.0.1 --dir "$TMP/redis" --appendonly yes \
		--save "" --daemonize no --logfile "$TMP/redis/log" &
	REDIS_PID=$!
	all_pids="$all_pids $REDIS_PID"
	for ((i = 0; i < 50; i++)); do
		redis-cli -p "$RPORT" ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	return 1
}
stop_redis() {
	kill -TERM "$REDIS_PID" && wait "$REDIS_PID" 2>/dev/null
	return 0
}
STORE=redis://127.0.0.1:$RPORT/0

# ---- three replicas: RPORTS[i], RPIDS[i]
declare -a RPORTS RPIDS
start_replica() {
	local i=$1
	[ -n "${RPORTS[$i]:-}" ] || RPORTS[$i]=$(free_port)
	"$DAEMON" --bind 127.0.0.1 --port "${RPORTS[$i]}" --threads 2 --store "$STORE" \
		--log-level warn >>"$TMP/replica$i.log" 2>&1 &
	RPIDS[$i]=$!
	all_pids="$all_pids ${RPIDS[$i]}"
}
# ready_on PORT: /readyz answers 200 within 10 s (scaled)
ready_on() {
	local k
	for ((k = 0; k < 100 * TIME_SCALE; k++)); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz")" = 200 ] && return 0
		sleep 0.05
	done
	return 1
}
wait_replica() {
	ready_on "${RPORTS[$1]}" && return 0
	echo "replica $1 not ready"; tail -n 5 "$TMP/replica$1.log"
	return 1
}
# extra_replica PORT DB LOG [flags...]: one more replica, on database DB
extra_replica() {
	local port=$1 db=$2 log=$3
	shift 3
	"$DAEMON" --bind 127.0.0.1 --port "$port" --threads 2 --store "redis://127.0.0.1:$RPORT/$db" \
		--log-level warn "$@" >>"$TMP/$log.log" 2>&1 &
	all_pids="$all_pids $!"
}
R_URLS() { local i s=""; for i in 0 1 2; do s="$s${s:+,}http://127.0.0.1:${RPORTS[$i]}"; done; echo "$s"; }

# ---- nginx in front: round-robin, worlds by consistent hash, retries
NPORT=$(free_port)
NDIR=$TMP/nginx
mkdir -p "$NDIR"
write_nginx_conf() {
	local user=""
	[ "$(id -u)" = 0 ] && user="user root root;"
	cat >"$NDIR/nginx.conf" <<CONF
$user
worker_processes 1;
error_log $NDIR/error.log warn;
pid $NDIR/nginx.pid;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $NDIR/body;
	proxy_temp_path $NDIR/proxy;
	fastcgi_temp_path $NDIR/fastcgi;
	uwsgi_temp_path $NDIR/uwsgi;
	scgi_temp_path $NDIR/scgi;
	client_max_body_size 256m;
	map \$uri \$world { ~^/v1/worlds/(?<w>[^/]+) \$w; default ""; }
	map \$http_x_request_id \$rid { "" \$request_id; default \$http_x_request_id; }
	# max_fails=0: a 503 (store_unavailable, not_ready) or a refused
	# connection sends the request on to the next replica, but never takes a
	# replica out, so writes with Redis down end as 503, not 502
	upstream replicas {
		server 127.0.0.1:${RPORTS[0]} max_fails=0;
		server 127.0.0.1:${RPORTS[1]} max_fails=0;
		server 127.0.0.1:${RPORTS[2]} max_fails=0;
		keepalive 16;
	}
	upstream worlds {
		hash \$world consistent;
		server 127.0.0.1:${RPORTS[0]};
		server 127.0.0.1:${RPORTS[1]};
		server 127.0.0.1:${RPORTS[2]};
		keepalive 16;
	}
	server {
		listen 127.0.0.1:$NPORT;
		proxy_http_version 1.1;
		proxy_set_header Connection "";
		proxy_set_header X-Request-Id \$rid;
		proxy_connect_timeout 1s;
		proxy_next_upstream error timeout http_502 http_503 non_idempotent;
		proxy_next_upstream_tries 3;
		location /v1/worlds/ { proxy_pass http://worlds; }
		location / { proxy_pass http://replicas; }
	}
}
CONF
}

start_redis || { echo "not ok 1 - redis-server starts"; exit 1; }
for i in 0 1 2; do start_replica $i; done
test_expect 'three replicas are ready once loaded and subscribed' '
	wait_replica 0 && wait_replica 1 && wait_replica 2
'
write_nginx_conf
"$NGINX" -p "$NDIR" -c "$NDIR/nginx.conf" -g "daemon off;" >>"$NDIR/stderr" 2>&1 &
NGINX_PID=$!
all_pids="$all_pids $NGINX_PID"
URL=http://127.0.0.1:$NPORT
test_expect 'nginx answers in front of them' '
	for ((k = 0; k < 50; k++)); do
		[ "$(curl -s -o /dev/null -w "%{http_code}" "$URL/readyz")" = 200 ] && break; sleep 0.1
	done; expect 200 GET /readyz
'

test_expect 'a PUT through nginx is visible on every replica within 2 s (100 PUTs)' '
	python3 $PY_R propagate "$URL" "$(R_URLS)" 100 | tee "$TMP/prop"
'
sed 's/^/# /' "$TMP/prop"

test_expect 'concurrent writers on two replicas: one winner on every replica' '
	python3 $PY_R race "$(R_URLS | cut -d, -f1,2)" cw 60 &&
	python3 $PY_R agree "$(R_URLS)" cw 2 | tee "$TMP/agree"
'
sed 's/^/# /' "$TMP/agree"

test_expect 'the load mesh is stored through nginx' '
	put_cube load
'
test_expect 'through nginx every request is named: the client X-Request-Id comes back, else nginx own' '
	expect 200 GET /v1/meshes/load -H "X-Request-Id: tick-42-shot-7" &&
	header X-Request-Id "tick-42-shot-7[[:space:]]*$" &&
	expect 200 GET /v1/meshes/load && header X-Request-Id "[0-9a-f]{32}[[:space:]]*$"
'
# under load through nginx: replica 1 killed with -9, restarted, ready again
rm -f "$TMP/load.stop"
python3 $PY_R load "$URL" 20 4 "$TMP/load" &
LOAD_PID=$!
sleep 1
kill -KILL "${RPIDS[1]}"; wait "${RPIDS[1]}" 2>/dev/null
sleep 0.5
start_replica 1
test_expect 'the killed replica restarts, resyncs and is ready' '
	wait_replica 1
'
sleep 1
touch "$TMP/load.stop"
wait "$LOAD_PID"
test_expect 'under load through nginx, replica killed with -9 and restarted: 0 failed requests' '
	cat "$TMP/load" && grep -q "failed 0$" "$TMP/load" && ! grep -q "^requests 0 " "$TMP/load"
'
sed -n 's/^requests/# kill -9 under load: requests/p' "$TMP/load"
test_expect 'the restarted replica holds what the others hold' '
	python3 $PY_R agree "$(R_URLS)" cw 2 && python3 $PY_R agree "$(R_URLS)" prop 2
'

stop_redis
test_expect 'Redis stopped: queries through nginx still answer' '
	sleep 0.3 &&
	expect 200 POST /v1/meshes/load/raycast -H "Content-Type: application/json" \
		--data-binary "{\"origin\": [0.25, 0.25, 5], \"direction\": [0, 0, -1]}" &&
	jcheck "j[\"hit\"] is True"
'
test_expect 'Redis stopped: PUT and DELETE answer 503 store_unavailable' '
	req PUT /v1/meshes/down -H "Content-Type: application/json" --data-binary "$CUBE_JSON" &&
	[ "$status" = 503 ] && errcode store_unavailable && header Retry-After "1[[:space:]]*$" &&
	expect 503 DELETE /v1/meshes/load && errcode store_unavailable &&
	expect 200 GET /v1/meshes/load && ! grep -qi "^Retry-After" "$TMP/headers"
'
test_expect 'Redis stopped: the metric says so and each replica logs it' '
	curl -s "http://127.0.0.1:${RPORTS[0]}/metrics" | grep -q "^collisiond_store_up 0" &&
	grep -q "unavailable" "$TMP/replica0.log"
'
start_redis
test_expect 'Redis back: writes succeed again and reach every replica' '
	for ((k = 0; k < 100; k++)); do
		req PUT /v1/meshes/back -H "Content-Type: application/json" --data-binary "$CUBE_JSON"
		[ "$status" = 201 ] && break; sleep 0.1
	done; [ "$status" = 201 ] &&
	python3 $PY_R agree "$(R_URLS)" back 5 >/dev/null &&
	curl -s "http://127.0.0.1:${RPORTS[2]}/v1/meshes/back" | grep -q "\"triangles\":12" &&
	for ((k = 0; k < 50; k++)); do	# each replica reconnects on its own clock
		curl -s "http://127.0.0.1:${RPORTS[0]}/metrics" | grep -q "^collisiond_store_up 1" && break
		sleep 0.1
	done && curl -s "http://127.0.0.1:${RPORTS[0]}/metrics" | grep -q "^collisiond_store_up 1"
'
test_expect 'the meshes survived the Redis restart (AOF)' '
	expect 200 GET /v1/meshes/load && python3 $PY_R agree "$(R_URLS)" cw 2 >/dev/null
'

# A 60 k-triangle grid for the races below: its build (tens of ms on each
# replica) keeps a write on one replica apart from its event on another.
python3 - "$TMP/grid.json" <<"PY"
import json, sys
n = 175
json.dump({"vertices": [[i, 0, j] for i in range(n) for j in range(n)],
           "triangles": [t for i in range(n - 1) for j in range(n - 1)
                         for t in ([i * n + j, i * n + j + 1, (i + 1) * n + j],
                                   [i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j])]},
          open(sys.argv[1], "w"))
PY

# A DELETE is decided by Redis, not by what the replica that takes it has
# applied: a big mesh PUT on one replica and deleted at once on another
# (still building it, or not yet told) is deleted everywhere (it once got
# 404 there, and the mesh came back on every replica).
test_expect 'a DELETE on a replica behind a PUT made on another: 204, and gone everywhere' '
	python3 - "${RPORTS[0]}" "${RPORTS[1]}" "$RPORT" "$TMP/grid.json" <<"PY"
import json, subprocess, sys, time, urllib.request
a, b, rport, grid = sys.argv[1:5]
body = open(grid, "rb").read()
def call(port, method, data=None):
    rq = urllib.request.Request("http://127.0.0.1:%s/v1/meshes/behind" % port, data, method=method,
                                headers={"Content-Type": "application/json"})
    try:
        return urllib.request.urlopen(rq, timeout=20).status
    except urllib.error.HTTPError as e:
        return e.code
assert call(a, "PUT", body) == 201
got = call(b, "DELETE")
assert got == 204, got
time.sleep(3)
names = subprocess.run(["redis-cli", "-p", rport, "smembers", "collisiond:names"], capture_output=True, text=True).stdout.split()
assert "behind" not in names, names
assert call(a, "GET") == 404 and call(b, "GET") == 404
PY
'

# 201 or 200 is what the write was in Redis, not in the memory of the
# replica that takes it: a name Redis holds that no replica has applied
# (added here behind their backs) is replaced (it once answered 201), and a
# name Redis no longer holds is created, whatever a replica still has.
test_expect 'a PUT answers 200 for a name the store holds that the replica has not applied, 201 for one it does not hold' '
	[ "$(redis-cli -p "$RPORT" sadd collisiond:names unseen)" = 1 ] &&
	URL=http://127.0.0.1:${RPORTS[0]} jexpect 200 PUT /v1/meshes/unseen "$CUBE_JSON" &&
	URL=http://127.0.0.1:${RPORTS[1]} expect 204 DELETE /v1/meshes/unseen &&
	URL=http://127.0.0.1:${RPORTS[2]} jexpect 201 PUT /v1/meshes/unseen "$CUBE_JSON" &&
	URL=http://127.0.0.1:${RPORTS[0]} jexpect 200 PUT /v1/meshes/unseen "$CUBE_JSON" &&
	URL=http://127.0.0.1:${RPORTS[1]} expect 204 DELETE /v1/meshes/unseen
'

# Redis going back (restored from an older snapshot, emptied, failed over
# to a replica behind) is seen at the next resync: its sequence is below
# the versions applied, so a replica starts over from what Redis holds
# (they once kept ignoring new writes whose versions reused old numbers).
# Simulated on a database of its own: the sequence set back and a mesh's
# version with it, then every subscriber's connection cut.
tri() { printf '{"vertices": [[0,0,0], [%s,0,0], [0,0,1]], "triangles": [[0,1,2]]}' "$1"; }
BPORTS=("$(free_port)" "$(free_port)")
for i in 0 1; do extra_replica "${BPORTS[$i]}" 2 "back$i"; done
resyncs() { curl -s "http://127.0.0.1:$1/metrics" | awk '$1 == "collisiond_store_resyncs_total" { print $2 }'; }
maxx() { curl -s "http://127.0.0.1:$1/v1/meshes/m" | python3 -c "import json, sys; print(json.load(sys.stdin).get(\"bounds\", {}).get(\"max\", [None])[0])"; }
test_expect 'Redis gone back: the replicas resync from what it holds and take the writes after it' '
	ready_on "${BPORTS[0]}" && ready_on "${BPORTS[1]}" &&
	A=http://127.0.0.1:${BPORTS[0]} && B=http://127.0.0.1:${BPORTS[1]} &&
	URL=$A jexpect 201 PUT /v1/meshes/m "$(tri 1)" && URL=$A jexpect 201 PUT /v1/meshes/k "$(tri 1)" &&
	URL=$A jexpect 200 PUT /v1/meshes/m "$(tri 2)" && URL=$A jexpect 200 PUT /v1/meshes/m "$(tri 3)" &&
	for ((k = 0; k < 40; k++)); do [ "$(maxx ${BPORTS[1]})" = 3 ] && break; sleep 0.05; done &&
	r0=$(resyncs ${BPORTS[0]}) && r1=$(resyncs ${BPORTS[1]}) &&
	redis-cli -p "$RPORT" -n 2 set collisiond:seq 2 >/dev/null &&
	redis-cli -p "$RPORT" -n 2 hset collisiond:mesh:m v 1 >/dev/null &&
	redis-cli -p "$RPORT" client kill type pubsub >/dev/null &&
	for ((k = 0; k < 100; k++)); do
		[ "$(resyncs ${BPORTS[0]})" != "$r0" ] && [ "$(resyncs ${BPORTS[1]})" != "$r1" ] && break
		sleep 0.1
	done &&
	URL=$B jexpect 200 PUT /v1/meshes/m "$(tri 9)" &&
	for ((k = 0; k < 40; k++)); do [ "$(maxx ${BPORTS[0]})" = 9 ] && break; sleep 0.05; done &&
	echo "A: $(maxx ${BPORTS[0]}) B: $(maxx ${BPORTS[1]})" &&
	[ "$(maxx ${BPORTS[0]})" = 9 ] && [ "$(maxx ${BPORTS[1]})" = 9 ] &&
	grep -q "went back" "$TMP/back0.log" &&
	redis-cli -p "$RPORT" -n 2 flushdb >/dev/null &&
	redis-cli -p "$RPORT" client kill type pubsub >/dev/null &&
	for ((k = 0; k < 100; k++)); do
		[ "$(curl -s -o /dev/null -w "%{http_code}" "$A/v1/meshes/k")" = 404 ] &&
		[ "$(curl -s -o /dev/null -w "%{http_code}" "$B/v1/meshes/m")" = 404 ] && break
		sleep 0.1
	done &&
	URL=$A expect 200 GET /v1/meshes && jcheck "j[\"meshes\"] == []" &&
	URL=$B expect 200 GET /v1/meshes && jcheck "j[\"meshes\"] == []"
'

# --max-meshes holds for the store the replicas share (decided in Redis's
# script, where writes are ordered): two replicas with --max-meshes 2 on a
# database of their own; new names created at once on both, one slot left:
# exactly one is taken, every replica holds the same names, and a refused
# PUT removes nothing (it once deleted the other replica's acknowledged mesh).
LPORTS=("$(free_port)" "$(free_port)")
for i in 0 1; do extra_replica "${LPORTS[$i]}" 1 "limited$i" --max-meshes 2; done
test_expect '--max-meshes 2 on two replicas: the limit holds for the shared store, a refused PUT removes nothing' '
	ready_on "${LPORTS[0]}" && ready_on "${LPORTS[1]}" &&
	URL=http://127.0.0.1:${LPORTS[0]} jexpect 201 PUT /v1/meshes/first "$CUBE_JSON" &&
	python3 - "${LPORTS[0]}" "${LPORTS[1]}" "$TMP/grid.json" <<"PY" &&
import json, sys, threading, urllib.request
ports = sys.argv[1:3]
body = open(sys.argv[3], "rb").read()
got = {}
def put(port, name):
    rq = urllib.request.Request("http://127.0.0.1:%s/v1/meshes/%s" % (port, name), body, method="PUT",
                                headers={"Content-Type": "application/json"})
    try:
        got[name] = urllib.request.urlopen(rq, timeout=10).status
    except urllib.error.HTTPError as e:
        got[name] = e.code
t = [threading.Thread(target=put, args=(p, n)) for p, n in zip(ports, ("x", "y"))]
[x.start() for x in t]; [x.join() for x in t]
assert sorted(got.values()) == [201, 413], got
PY
	names=$(redis-cli -p "$RPORT" -n 1 smembers collisiond:names | sort | tr "\n" " ") &&
	echo "names: $names" && [ "$(echo $names | wc -w)" = 2 ] &&
	for n in x y; do
		case " $names " in *" $n "*) kept=$n;; *) gone=$n;; esac
	done &&
	for i in 0 1; do	# the other replica builds the grid too (slow under ASan)
		for ((k = 0; k < 100 * TIME_SCALE; k++)); do
			[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:${LPORTS[$i]}/v1/meshes/$kept")" = 200 ] && break
			sleep 0.1
		done
		URL=http://127.0.0.1:${LPORTS[$i]} expect 200 GET /v1/meshes &&
		jcheck "sorted(m[\"name\"] for m in j[\"meshes\"]) == sorted(\"$names\".split())" || exit 1
	done &&
	URL=http://127.0.0.1:${LPORTS[0]} jexpect 413 PUT /v1/meshes/$gone "$CUBE_JSON" &&
	URL=http://127.0.0.1:${LPORTS[1]} jexpect 413 PUT /v1/meshes/third "$CUBE_JSON" &&
	URL=http://127.0.0.1:${LPORTS[1]} jexpect 200 PUT /v1/meshes/$kept "$CUBE_JSON" &&
	[ "$(redis-cli -p "$RPORT" -n 1 smembers collisiond:names | sort | tr "\n" " ")" = "$names" ]
'
test_done
