"""memlib.py - shared helpers of the memory stress scripts (stdlib only).

Starts a collisiond on a free port, sends requests over one keep-alive
connection, and reads the daemon's memory from /proc: VmRSS (now) and VmHWM
(the peak), which /proc/PID/clear_refs ("5") resets so that each request's
own peak can be measured.
"""
import http.client
import os
import socket
import subprocess
import time

MiB = 1 << 20


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Daemon:
    """A collisiond child process; use as a context manager."""

    def __init__(self, binary, args=(), env=None, wrapper=()):
        self.port = free_port()
        e = dict(os.environ)
        e.update(env or {})
        self.log = open(os.environ.get("STRESS_LOG", "/dev/null"), "ab")
        self.proc = subprocess.Popen(
            list(wrapper) + [binary, "--bind", "127.0.0.1", "--port", str(self.port),
                             "--log-level", "warn"] + list(args),
            env=e, stdout=self.log, stderr=self.log)
        self.pid = self.proc.pid
        self.conn = None
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if self.request("GET", "/readyz")[0] == 200:
                    return
            except OSError:
                self.conn = None
            if self.proc.poll() is not None:
                raise RuntimeError("daemon exited at start-up")
            time.sleep(0.1)
        raise RuntimeError("daemon not ready")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self, timeout=30):
        if self.conn:
            self.conn.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def request(self, method, path, body=None, ctype=None, timeout=300):
        """(status, body bytes) over a kept-alive connection."""
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            headers = {"Content-Type": ctype} if ctype else {}
            try:
                self.conn.request(method, path, body=body, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, data
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def status_kb(self, field):
        pid = self.pid
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise KeyError(field)

    def rss(self):
        return self.status_kb("VmRSS") * 1024

    def reset_peak(self):
        """Peak := current RSS (Linux 4.0+: clear_refs 5)."""
        with open("/proc/%d/clear_refs" % self.pid, "w") as f:
            f.write("5")

    def peak(self):
        return self.status_kb("VmHWM") * 1024

    def measure(self, method, path, body=None, ctype=None):
        """(status, response body, peak RSS growth over the RSS before)."""
        self.reset_peak()
        before = self.rss()
        status, data = self.request(method, path, body, ctype)
        return status, data, self.peak() - before
