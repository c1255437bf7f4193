#!/usr/bin/env bash
# manifests.sh - docker/kubernetes/*.yaml validated against the Kubernetes
# schemas (kubernetes-models, npm) plus the project's rules, the replicas'
# compose file checked, and docker/nginx.conf accepted by `nginx -t`.
# Each validator line becomes one TAP line. Skipped without npm / nginx.
# Dependencies (tests/k8s/package.json, pinned by package-lock.json) are
# installed into tests/k8s/node_modules on first use.
. "$(dirname "$0")/lib.sh"

KDIR=tests/k8s
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	test_skip 'Kubernetes manifests against their schemas' 'npm not installed'
else
	if [ ! -d "$KDIR/node_modules/kubernetes-models" ] || [ ! -d "$KDIR/node_modules/yaml" ]; then
		if ! (cd "$KDIR" && timeout 300 npm ci --no-audit --no-fund --loglevel=error) >"$TMP/npm.log" 2>&1; then
			echo "not ok 1 - npm ci in $KDIR"
			sed 's/^/#   /' "$TMP/npm.log" | tail -n 15
			exit 1
		fi
	fi
	node "$KDIR/validate.mjs" --compose docker/compose.replicas.yaml docker/kubernetes/*.yaml \
		>"$TMP/validate.out" 2>&1
	vrc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) test_count=$((test_count + 1)); echo "ok $test_count - ${line#ok * - }" ;;
		"not ok "*) test_count=$((test_count + 1)); test_failed=$((test_failed + 1))
			echo "not ok $test_count - ${line#not ok * - }" ;;
		"#   "*) echo "$line" ;;
		esac
	done <"$TMP/validate.out"
	test_expect 'the validator ran and agreed (exit 0)' '[ "$vrc" = 0 ] || { tail -n 5 "$TMP/validate.out"; false; }'
	# the validator can fail: a wrong type and a probe on the wrong path
	mkdir -p "$TMP/bad"
	sed -e 's/replicas: 3/replicas: "three"/' -e 's|path: /readyz|path: /healthz|' \
		-e 's/value: "1G"/value: "1536M"/' \
		docker/kubernetes/collisiond.yaml >"$TMP/bad/collisiond.yaml"
	test_expect 'a broken Deployment is refused (schema: replicas type; rules: readiness path, memory budget)' '
		! node "$KDIR/validate.mjs" "$TMP/bad/collisiond.yaml" docker/kubernetes/redis.yaml >"$TMP/bad.out" 2>&1 &&
		grep -q "not ok .*Deployment collisiond: valid against" "$TMP/bad.out" &&
		grep -q "not ok .*readiness probe on /readyz" "$TMP/bad.out" &&
		grep -q "not ok .*COLLISIOND_MAX_MEMORY set, at most half" "$TMP/bad.out"
	'
	# "2G" in Kubernetes is 2e9 bytes: a 1G (GiB) budget is over half of it
	sed -e 's/memory: 2Gi/memory: 2G/' docker/kubernetes/collisiond.yaml >"$TMP/bad/decimal.yaml"
	test_expect 'the memory limit is read as Kubernetes reads it: a 1G budget under a 2G (2e9 bytes) limit is refused' '
		! node "$KDIR/validate.mjs" "$TMP/bad/decimal.yaml" docker/kubernetes/redis.yaml >"$TMP/dec.out" 2>&1 &&
		grep -q "not ok .*COLLISIOND_MAX_MEMORY set, at most half" "$TMP/dec.out" &&
		grep -q "budget 1073741824, limit 2000000000" "$TMP/dec.out"
	'
fi

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ -x "$NGINX" ]; then
	mkdir -p "$TMP/nginx"
	# the compose service names resolve only inside compose: use loopback
	sed -e 's/replica\([123]\):8080/127.0.0.1:1808\1/' docker/nginx.conf >"$TMP/nginx/nginx.conf"
	test_expect 'docker/nginx.conf passes nginx -t' '
		"$NGINX" -t -q -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -g "pid $TMP/nginx/pid;"
	'
else
	test_skip 'docker/nginx.conf passes nginx -t' 'nginx not installed'
fi
test_done
