#!/usr/bin/env bash
# http_scale.sh - collisiond's HTTP rate against nginx's on N cores, for a
# many-core machine (issue 11's table).
#
#   bench/http_scale.sh MESH.obj [N...]        (default N: 1 2 4 8)
#
# For each N, ROUNDS times, in turn: nginx with N workers answering a fixed
# JSON body, then collisiond --threads N answering one raycast on MESH (the
# harness's level.obj; the ray is the harness's), each server pinned to cores
# 0..N-1 with taskset and wrk pinned to WRK_CPUS with WRK_THREADS threads and
# 64*N keep-alive connections for DURATION seconds after a 1 s warm-up. Then
# collisiond with the access log off (--log-level warn) at the largest N, to
# show the log's cost in the same run. Prints one JSON line per wrk run and a
# Markdown table of medians: requests/s, their ratio, p99 latencies and
# theirs, and each round's ratio (a round's two runs are seconds apart) with
# the median of those.
# With COLLISIOND_BASE=another/collisiond, that binary too, in the same
# rounds (a before/after comparison on the same machine).
# With EXTRA_TARGETS="label=BINARY [flags];label2=BINARY2 [flags]", those
# daemons too (e.g. "epoll=build/collisiond --http-engine epoll"), each with
# its own table row set against nginx.
# With MHD_FLOOR=build/mhd-floor (make build/mhd-floor), that server too:
# libmicrohttpd under collisiond's settings answering the fixed body, the
# ceiling of any server on it.
# env: COLLISIOND (build/collisiond), NGINX_BIN (nginx), WRK (wrk), MHD_FLOOR,
#      WRK_CPUS (8-15), WRK_THREADS (8), DURATION (5), ROUNDS (2)
set -euo pipefail
MESH=${1:?usage: http_scale.sh MESH.obj [N...]}
shift
NS=("$@")
[ ${#NS[@]} -gt 0 ] || NS=(1 2 4 8)
COLLISIOND=${COLLISIOND:-build/collisiond}
NGINX_BIN=${NGINX_BIN:-nginx}
WRK=${WRK:-wrk}
WRK_CPUS=${WRK_CPUS:-8-15}
WRK_THREADS=${WRK_THREADS:-8}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}
PORT_NGINX=18280
PORT_C=18290
BODY='{"origin":[123.456,7.891,-234.567],"direction":[0.57735,-0.0735,0.81321],"max_distance":200.0}'
ANSWER='{"hit":true,"distance":1.5,"point":[12.25,3.5,-40.125],"normal":[0.0,1.0,0.0],"triangle":123456,"mesh":"level","query":"raycast","t_us":3,"request_id":12345}'

TMP=$(mktemp -d)
PID=
stop() {
	if [ -n "$PID" ]; then
		kill "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
	PID=
}
trap 'stop; rm -rf "$TMP"' EXIT

cat >"$TMP/post.lua" <<EOF
wrk.method = "POST"
wrk.path = os.getenv("WRK_PATH")
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
done = function(s, lat, req)
	local e = s.errors
	io.write(string.format('{"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_us":%d,"p99_us":%d,"max_us":%d,"errors":%d,"non2xx":%d}\n',
		s.requests, s.duration / 1e6, s.requests / (s.duration / 1e6), lat:percentile(50), lat:percentile(99),
		lat.max, e.connect + e.read + e.write + e.timeout, e.status))
end
EOF

# shellcheck source=bench/ports.sh
. "$(dirname "$0")/ports.sh"

start_nginx() {	# N
	local d="$TMP/nginx$1" user=""
	mkdir -p "$d"
	[ "$(id -u)" = 0 ] && user="user root;"
	cat >"$d/nginx.conf" <<EOF
worker_processes $1;
$user
daemon off;
master_process on;
pid $d/nginx.pid;
error_log $d/error.log warn;
events { worker_connections 8192; }
http {
	access_log off;
	keepalive_requests 10000000;
	keepalive_timeout 300s;
	client_body_buffer_size 16k;
	client_body_temp_path $d/body;
	proxy_temp_path $d/proxy;
	fastcgi_temp_path $d/fastcgi;
	uwsgi_temp_path $d/uwsgi;
	scgi_temp_path $d/scgi;
	server {
		listen 127.0.0.1:$PORT_NGINX;
		location / {
			default_type application/json;
			return 200 '$ANSWER';
		}
	}
}
EOF
	taskset -c "0-$(($1 - 1))" "$NGINX_BIN" -p "$d" -c "$d/nginx.conf" -e "$d/error.log" &
	PID=$!
	wait_port $PORT_NGINX
}

start_collisiond() {	# N [extra flags]
	local n=$1
	shift
	taskset -c "0-$((n - 1))" "$COLLISIOND" --port $PORT_C --threads "$n" "$@" >"$TMP/collisiond.log" 2>&1 &
	PID=$!
	wait_port $PORT_C
	curl -sf -X PUT -H 'Content-Type: model/obj' --data-binary @"$MESH" \
		"http://127.0.0.1:$PORT_C/v1/meshes/level" >/dev/null
}

measure() {	# TARGET N PORT PATH
	local url="http://127.0.0.1:$3"
	WRK_PATH=$4 taskset -c "$WRK_CPUS" "$WRK" -t"$WRK_THREADS" -c$((64 * $2)) -d1s -s "$TMP/post.lua" "$url" >/dev/null
	local line
	line=$(WRK_PATH=$4 taskset -c "$WRK_CPUS" "$WRK" -t"$WRK_THREADS" -c$((64 * $2)) -d"${DURATION}s" \
		-s "$TMP/post.lua" "$url" | grep '^{"requests"')
	echo "{\"target\":\"$1\",\"n\":$2,${line#\{}" | tee -a "$TMP/runs.jsonl"
}

for _ in $(seq "$ROUNDS"); do
	for n in "${NS[@]}"; do
		start_nginx "$n"
		measure nginx "$n" $PORT_NGINX /
		stop
		if [ -n "${MHD_FLOOR:-}" ]; then
			taskset -c "0-$((n - 1))" "$MHD_FLOOR" $PORT_C "$n" &
			PID=$!
			wait_port $PORT_C
			measure mhd_floor "$n" $PORT_C /
			stop
		fi
		start_collisiond "$n"
		measure collisiond "$n" $PORT_C /v1/meshes/level/raycast
		stop
		if [ -n "${COLLISIOND_BASE:-}" ]; then
			COLLISIOND=$COLLISIOND_BASE start_collisiond "$n"
			measure collisiond_base "$n" $PORT_C /v1/meshes/level/raycast
			stop
		fi
		if [ -n "${EXTRA_TARGETS:-}" ]; then
			IFS=';' read -ra extras <<<"$EXTRA_TARGETS"
			for x in "${extras[@]}"; do
				read -ra cmd <<<"${x#*=}"
				COLLISIOND=${cmd[0]} start_collisiond "$n" "${cmd[@]:1}"
				measure "${x%%=*}" "$n" $PORT_C /v1/meshes/level/raycast
				stop
			done
		fi
	done
	nmax=${NS[${#NS[@]} - 1]}
	start_collisiond "$nmax" --log-level warn
	measure collisiond_nolog "$nmax" $PORT_C /v1/meshes/level/raycast
	stop
done

python3 - "$TMP/runs.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(t, n, k):
    v = [r[k] for r in rows if r['target'] == t and r['n'] == n]
    return statistics.median(v) if v else float('nan')
# each round's ratio: the k-th collisiond run at N over the k-th nginx run
def rounds(n):
    a = [r['rps'] for r in rows if r['target'] == 'nginx' and r['n'] == n]
    b = [r['rps'] for r in rows if r['target'] == 'collisiond' and r['n'] == n]
    return [y / x for x, y in zip(a, b)]
print('| cores N | nginx req/s | collisiond req/s | ratio | nginx p99 | collisiond p99 | p99 ratio '
      '| median of the rounds\' ratios | the rounds\' ratios |')
print('|---|---|---|---|---|---|---|---|---|')
for n in sorted({r['n'] for r in rows}):
    a, b = med('nginx', n, 'rps'), med('collisiond', n, 'rps')
    pa, pb = med('nginx', n, 'p99_us'), med('collisiond', n, 'p99_us')
    rs = rounds(n)
    print('| %d | %.0f | %.0f | %.2f | %.2f ms | %.2f ms | %.2f | %.2f | %s |' % (
        n, a, b, b / a, pa / 1e3, pb / 1e3, pb / pa,
        statistics.median(rs) if rs else float('nan'), ' '.join('%.2f' % x for x in rs)))
if any(r['target'] == 'mhd_floor' for r in rows):
    print('\n| cores N | libmicrohttpd floor req/s | floor / nginx | collisiond / floor | floor p99 |')
    print('|---|---|---|---|---|')
    for n in sorted({r['n'] for r in rows if r['target'] == 'mhd_floor'}):
        f = med('mhd_floor', n, 'rps')
        print('| %d | %.0f | %.2f | %.2f | %.2f ms |' % (n, f, f / med('nginx', n, 'rps'),
              med('collisiond', n, 'rps') / f, med('mhd_floor', n, 'p99_us') / 1e3))
if any(r['target'] == 'collisiond_base' for r in rows):
    print('\n| cores N | COLLISIOND_BASE req/s | collisiond / base | base / nginx |')
    print('|---|---|---|---|')
    for n in sorted({r['n'] for r in rows if r['target'] == 'collisiond_base'}):
        b = med('collisiond_base', n, 'rps')
        print('| %d | %.0f | %.2f | %.2f |' % (n, b, med('collisiond', n, 'rps') / b, b / med('nginx', n, 'rps')))
known = {'nginx', 'collisiond', 'collisiond_base', 'collisiond_nolog', 'mhd_floor'}
for t in sorted({r['target'] for r in rows} - known):
    print('\n| cores N | %s req/s | / nginx | / collisiond | p99 | p99 / nginx\'s |' % t)
    print('|---|---|---|---|---|---|')
    for n in sorted({r['n'] for r in rows if r['target'] == t}):
        x, p = med(t, n, 'rps'), med(t, n, 'p99_us')
        print('| %d | %.0f | %.2f | %.2f | %.2f ms | %.2f |' % (n, x, x / med('nginx', n, 'rps'),
              x / med('collisiond', n, 'rps'), p / 1e3, p / med('nginx', n, 'p99_us')))
for n in sorted({r['n'] for r in rows if r['target'] == 'collisiond_nolog'}):
    on, off = med('collisiond', n, 'rps'), med('collisiond_nolog', n, 'rps')
    print('access log on / off at N = %d: %.0f / %.0f req/s = %.3f' % (n, on, off, on / off))
print('errors: %d, non-2xx: %d' % (sum(r['errors'] for r in rows), sum(r['non2xx'] for r in rows)))
PY
