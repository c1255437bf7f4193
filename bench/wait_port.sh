# wait_port.sh - sourced by the bench scripts: wait_port PORT returns once
# something accepts connections on 127.0.0.1:PORT (10 s at most, else 1).
wait_port() {
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "${0##*/}: nothing listens on port $1" >&2
	return 1
}
