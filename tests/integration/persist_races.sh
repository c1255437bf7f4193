#!/usr/bin/env bash
# persist_races.sh - the data dir equals memory's last acknowledged state of
# every name after concurrent writers (PUT/PUT, PUT/DELETE) and a restart,
# clean (SIGTERM) or not (kill -9); a FIFO named *.mesh never blocks start-up
# or shutdown. RACE_TRIALS (per kind and round, default 100) and RACE_ROUNDS
# (default 2, alternating SIGTERM and kill -9) make it longer: make stress-persist.
. "$(dirname "$0")/lib.sh"

TRIALS=${RACE_TRIALS:-100}
ROUNDS=${RACE_ROUNDS:-2}
DATA=$TMP/data
mkdir -p "$DATA"
RACES=tests/integration/persist_races.py

start_daemon --threads 8 --data-dir "$DATA" || { echo "not ok 1 - daemon starts"; exit 1; }
for ((round = 1; round <= ROUNDS; round++)); do
	if ((round % 2)); then sig=TERM; else sig=KILL; fi
	test_expect "round $round: $TRIALS PUT/PUT + $TRIALS PUT/DELETE races, all acknowledged" '
		python3 $RACES race "$URL" r$round $TRIALS "$TMP/state.$round" | tee "$TMP/summary"
	'
	grep "^#" "$TMP/summary"
	test_expect "round $round: after SIG$sig and restart the data dir equals memory (0 lost, 0 resurrected)" '
		stop_daemon $sig &&
		start_daemon --threads 8 --data-dir "$DATA" &&
		python3 $RACES check "$URL" r$round "$TMP/state.$round" | tee "$TMP/summary" &&
		grep -q "^lost 0 resurrected 0 wrong 0" "$TMP/summary"
	'
	sed -n "s/^lost/# round $round after SIG$sig: lost/p" "$TMP/summary"
done
stop_daemon

mkfifo "$DATA/pipe.mesh"
test_expect 'a FIFO named *.mesh does not block start-up' '
	start_daemon --threads 8 --data-dir "$DATA" &&
	grep -q "pipe.mesh: not a regular file" "$TMP/daemon.log"
'
test_expect 'SIGTERM stops the daemon promptly after that' '
	stop_daemon TERM && [ "$daemon_rc" = 0 ]
'
# loading many meshes is interrupted by SIGTERM: the loader stops between
# files and the daemon exits at once
BULK=$TMP/bulk
mkdir -p "$BULK"
python3 $RACES files "$BULK" 400 20000
test_expect 'SIGTERM during loading ends the daemon within 2 s, loading interrupted' '
	PORT=$(free_port)
	"$DAEMON" --bind 127.0.0.1 --port "$PORT" --data-dir "$BULK" --log-level info >"$TMP/bulk.log" 2>&1 &
	PID=$!; all_pids="$all_pids $PID"
	for ((k = 0; k < 100 * TIME_SCALE; k++)); do grep -q listening "$TMP/bulk.log" && break; sleep 0.02; done
	[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$PORT/readyz")" = 503 ] &&
	t0=$(date +%s%N) && stop_daemon TERM && [ "$daemon_rc" = 0 ] &&
	[ $(( ($(date +%s%N) - t0) / 1000000 )) -lt $((2000 * TIME_SCALE)) ] &&
	grep -q "(interrupted)" "$TMP/bulk.log"
'
test_done
