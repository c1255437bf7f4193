# ports.sh - sourced by the bench scripts:
#   free_port        prints a free TCP port on 127.0.0.1, chosen by the kernel;
#   wait_port PORT   returns once something accepts connections on
#                    127.0.0.1:PORT (10 s at most, else 1).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() {
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "${0##*/}: nothing listens on port $1" >&2
	return 1
}
