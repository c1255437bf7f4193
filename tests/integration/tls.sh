#!/usr/bin/env bash
# TLS: --tls-cert/--tls-key with a self-signed certificate made by openssl.
. "$(dirname "$0")/lib.sh"
require_daemon

case " ${EXTRA_DAEMON_FLAGS:-} ${COLLISIOND_HTTP_ENGINE:-} " in
*epoll*)	# TLS is served by libmicrohttpd only: epoll with TLS flags is refused
	test_skip 'TLS' 'the epoll engine serves plain HTTP only'
	test_done ;;
esac
if ! command -v openssl >/dev/null 2>&1; then
	test_skip 'TLS' 'openssl not installed'
	test_done
fi
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1

SCHEME=https
CURL_TLS="--cacert $TMP/cert.pem"
test_expect 'the daemon starts with --tls-cert and --tls-key and is ready over https' '
	start_daemon --demo --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem"
'
test_expect 'https: /healthz verifies against the certificate' '
	expect 200 GET /healthz && jcheck "j == {\"status\": \"ok\"}"
'
test_expect 'https: a raycast answers' '
	jexpect 200 POST /v1/meshes/demo/raycast "{\"origin\": [5.5, 10, 0.25], \"direction\": [0, -1, 0]}" &&
	jcheck "near(j[\"distance\"], 10)"
'
test_expect 'https: an upload and a keep-alive second request on one connection' '
	curl -s --cacert "$TMP/cert.pem" -o /dev/null -w "%{http_code} %{num_connects}\n" \
		-X PUT -H "Content-Type: application/json" --data-binary "$CUBE_JSON" "$URL/v1/meshes/cube" \
		--next --cacert "$TMP/cert.pem" -o /dev/null -w "%{http_code} %{num_connects}\n" "$URL/v1/meshes/cube" >"$TMP/out" &&
	cat "$TMP/out" && [ "$(cat "$TMP/out" | tr "\n" " ")" = "201 1 200 0 " ]
'
test_expect 'https: the certificate is refused without --cacert (it is self-signed)' '
	! curl -s -o /dev/null "$URL/healthz"
'
test_expect 'plain http to the TLS port gets no answer' '
	code=$(curl -s -o /dev/null -w "%{http_code}" --max-time 3 "http://127.0.0.1:$PORT/healthz"); echo "$code"; [ "$code" != 200 ]
'
test_expect 'the daemon still serves https after the plain attempt' '
	expect 200 GET /healthz
'
# Each plain-HTTP client on the TLS port is one libmicrohttpd message: 200
# of them must not be 200 log lines (at most 20 per 10 s, the rest counted).
test_expect '200 plain-HTTP clients on the TLS port: at most 20 libmicrohttpd lines logged' '
	before=$(grep -c "libmicrohttpd:" "$TMP/daemon.log") &&
	python3 - "$PORT" <<"PY" &&
import socket, sys
for _ in range(200):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    try:
        s.recv(100)
    except OSError:
        pass
    s.close()
PY
	sleep 0.5 && after=$(grep -c "libmicrohttpd:" "$TMP/daemon.log") &&
	echo "libmicrohttpd lines: $before before, $after after" && [ $((after - before)) -le 20 ] &&
	expect 200 GET /healthz
'
test_expect 'a port in use, with a good certificate and key, still exits 1 naming the port' '
	rc=0; timeout $((10 * TIME_SCALE)) "$DAEMON" --bind 127.0.0.1 --port "$PORT" \
		--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" >"$TMP/err" 2>&1 || rc=$?
	cat "$TMP/err"; [ "$rc" = 1 ] && grep -q "cannot start serving on 127.0.0.1 port $PORT: Address already in use" "$TMP/err"
'
test_expect 'SIGTERM: exit status 0' '
	stop_daemon && [ "$daemon_rc" = 0 ]
'
test_expect 'a missing key file: the daemon exits non-zero naming the flag' '
	"$DAEMON" --bind 127.0.0.1 --port 0 --tls-cert "$TMP/cert.pem" --tls-key "$TMP/nope.pem" >"$TMP/err" 2>&1 & p=$!; all_pids="$all_pids $p"
	for i in $(seq 50); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
	cat "$TMP/err"; ! kill -0 $p 2>/dev/null && ! wait $p && grep -q "tls-key" "$TMP/err"
'
test_expect '--tls-cert without --tls-key exits non-zero' '
	"$DAEMON" --bind 127.0.0.1 --port 0 --tls-cert "$TMP/cert.pem" >"$TMP/err" 2>&1 & p=$!; all_pids="$all_pids $p"
	for i in $(seq 50); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
	cat "$TMP/err"; ! kill -0 $p 2>/dev/null && ! wait $p
'
# A certificate and key libmicrohttpd cannot use together are a bad flag
# value: exit 2 and one line naming both flags. It once exited 1, blaming
# the port ("cannot start serving on ..."), after two libmicrohttpd warnings.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/other.pem" >/dev/null 2>&1
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -aes256 -pass pass:secret \
	-out "$TMP/encrypted.pem" >/dev/null 2>&1
# bad_pair CERT KEY: start with them; exit 2, one line naming --tls-cert and --tls-key
bad_pair() {
	local rc=0
	timeout $((10 * TIME_SCALE)) "$DAEMON" --bind 127.0.0.1 --port 0 --tls-cert "$1" --tls-key "$2" \
		>"$TMP/err" 2>&1 || rc=$?
	cat "$TMP/err"
	[ "$rc" = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
		grep -q "^collisiond: --tls-cert / --tls-key: libmicrohttpd could not start TLS with this certificate and key" "$TMP/err"
}
test_expect "a key that is not the certificate's: exit 2, one line naming --tls-cert and --tls-key" '
	bad_pair "$TMP/cert.pem" "$TMP/other.pem" && grep -q "do not match" "$TMP/err"
'
test_expect 'an encrypted key: exit 2, one line naming --tls-cert and --tls-key' '
	bad_pair "$TMP/cert.pem" "$TMP/encrypted.pem"
'
test_expect 'the certificate and key swapped: exit 2, one line naming --tls-cert and --tls-key' '
	bad_pair "$TMP/key.pem" "$TMP/cert.pem"
'
test_done
