#!/usr/bin/env bash
# Contract test: the running daemon against api/openapi.yaml. Portman turns
# the spec into a Postman collection (every operation's documented success
# answer, its content type and schema, plus variations for 400, 401, 403 and
# 404), Newman runs it against a daemon started with --demo and keys, and
# each Newman assertion becomes one TAP line. Skipped when npm is missing.
# Dependencies (tests/contract/package.json, pinned by package-lock.json) are
# installed into tests/contract/node_modules on first use.
. "$(dirname "$0")/lib.sh"
require_daemon

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	test_skip 'contract test against api/openapi.yaml' 'npm not installed'
	test_done
fi

CDIR=tests/contract
if [ ! -x "$CDIR/node_modules/.bin/portman" ] || [ ! -x "$CDIR/node_modules/.bin/newman" ]; then
	if ! (cd "$CDIR" && timeout 300 npm ci --no-audit --no-fund --loglevel=error) >"$TMP/npm.log" 2>&1; then
		echo "not ok 1 - npm ci in $CDIR"
		sed 's/^/#   /' "$TMP/npm.log" | tail -n 15
		exit 1
	fi
fi

start_daemon --demo --api-key contract-write --read-key contract-read ||
	{ echo "not ok 1 - daemon starts"; exit 1; }

# Portman writes its own files under the working directory: run it in $TMP.
# It only generates the collection; Newman then runs all of it (Portman's
# own Newman run stops at the first failure).
mkdir -p "$TMP/portman"
root=$PWD
(cd "$TMP/portman" && timeout 60 "$root/$CDIR/node_modules/.bin/portman" \
	-l "$root/api/openapi.yaml" -b "$URL" -c "$root/$CDIR/portman-config.json" \
	-o "$TMP/collection.json") >"$TMP/portman.log" 2>&1
prc=$?
if [ ! -s "$TMP/collection.json" ]; then
	echo "not ok 1 - portman generates a collection from api/openapi.yaml (exit $prc)"
	sed 's/^/#   /' "$TMP/portman.log" | tail -n 30
	exit 1
fi
timeout 90 "$CDIR/node_modules/.bin/newman" run "$TMP/collection.json" \
	--env-var apiKey=contract-write --env-var readKey=contract-read \
	--timeout-request 10000 --ignore-redirects \
	-r json --reporter-json-export "$TMP/newman.json" >"$TMP/newman.log" 2>&1
if [ ! -s "$TMP/newman.json" ]; then
	echo "not ok 1 - newman runs the collection"
	sed 's/^/#   /' "$TMP/newman.log" | tail -n 30
	exit 1
fi

# One TAP line per assertion, "METHOD path [variation]: assertion".
python3 - "$TMP/newman.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["run"]
n = 0; failed = 0
for ex in run["executions"]:
    item = ex["item"]["name"]
    req = ex.get("request", {})
    url = req.get("url", {})
    path = "/" + "/".join(url.get("path", [])) if isinstance(url, dict) else str(url)
    method = req.get("method", "?")
    code = ex.get("response", {}).get("code", "-")
    for a in ex.get("assertions", []) or []:
        n += 1
        desc = "%s %s (%s) -> %s: %s" % (method, path, item, code, a["assertion"])
        if a.get("error"):
            failed += 1
            print("not ok %d - %s" % (n, desc))
            print("#   %s" % a["error"].get("message", "")[:300].replace("\n", " "))
        else:
            print("ok %d - %s" % (n, desc))
if n == 0:
    print("not ok 1 - the collection ran no assertions")
    sys.exit(1)
print("# %d assertions, %d failed" % (n, failed))
sys.exit(1 if failed else 0)
PY
