#!/usr/bin/env python3
"""abuse.py - slow and abusive clients against a collisiond on 127.0.0.1:PORT
(with the unit cube stored as "cube") while one well-behaved keep-alive client
keeps querying; prints the good client's success rate and latency and exits
1 unless every good request was answered correctly within MAX_LATENCY_S.

Abusers, all at once for SECONDS:
  - IDLE idle keep-alive connections (one request each, then silence);
  - SLOW slowloris connections (one header line per second, reconnecting
    when cut);
  - two clients sending 64 KiB header blocks in a loop (must get a 4xx);
  - one upload announcing 100 MB and trickling it at ~32 KiB/s.

usage: abuse.py PORT [SECONDS IDLE SLOW]   (defaults 4 2000 200)
"""
import http.client
import json
import resource
import selectors
import socket
import statistics
import sys
import threading
import time

PORT = int(sys.argv[1])
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 4
IDLE = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
SLOW = int(sys.argv[4]) if len(sys.argv) > 4 else 200
MAX_LATENCY_S = 2.0

# descriptors for the abusers plus headroom, within the hard limit
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = IDLE + SLOW + 256
if soft < want:
    new = want if hard == resource.RLIM_INFINITY else min(want, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    soft = new
if IDLE + SLOW + 64 > soft:
    IDLE = max(0, soft - SLOW - 64)
    print("# descriptor limit %d: %d idle connections" % (soft, IDLE))

stop = threading.Event()
idle_ready = threading.Event()  # every idle connection is open (or failed)
notes = {"idle_open": 0, "slow_cuts": 0, "big_header_answers": {}, "upload": "not cut"}
lock = threading.Lock()


def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.setblocking(False)
    return s


def idle_clients():
    socks = []
    for _ in range(IDLE):
        if stop.is_set():
            break
        try:
            s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(4096)
            socks.append(s)
        except OSError:
            break
    with lock:
        notes["idle_open"] = len(socks)
    idle_ready.set()
    stop.wait()
    for s in socks:
        s.close()


def slowloris():
    sel = selectors.DefaultSelector()
    conns = {}

    def open_one():
        try:
            s = connect()
        except OSError:
            return
        try:
            s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            s.close()
            return
        conns[s] = 0
        sel.register(s, selectors.EVENT_READ)

    for _ in range(SLOW):
        open_one()
    while not stop.is_set():
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:  # cut by the server: come back, as an attacker would
                sel.unregister(s)
                s.close()
                del conns[s]
                with lock:
                    notes["slow_cuts"] += 1
                open_one()
        for s in list(conns):
            conns[s] += 1
            try:
                s.send(b"X-Slow-%d: 1\r\n" % conns[s])
            except OSError:
                pass
    for s in conns:
        s.close()


def big_headers():
    header = b"X-Big: " + b"a" * 65536 + b"\r\n"
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n")
            line = s.recv(64).split(b"\r\n")[0]
            code = line.split(b" ")[1].decode() if line.startswith(b"HTTP/") else "none"
        except OSError as e:
            code = type(e).__name__
        finally:
            s.close()
        with lock:
            notes["big_header_answers"][code] = notes["big_header_answers"].get(code, 0) + 1
        time.sleep(0.05)


def slow_upload():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=2)
    s.sendall(b"PUT /v1/meshes/upload HTTP/1.1\r\nHost: x\r\nContent-Type: model/obj\r\n"
              b"Content-Length: 100000000\r\n\r\n")
    t0 = time.time()
    chunk = b"v 0 0 0\n" * 512  # 4 KiB, 8 per second
    while not stop.is_set():
        try:
            s.sendall(chunk)
        except OSError:
            with lock:
                notes["upload"] = "cut after %.1f s" % (time.time() - t0)
            break
        time.sleep(0.125)
    s.close()


def good_client(lat, bad):
    body = json.dumps({"origin": [0.25, 5, 0.5], "direction": [0, -1, 0]})
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    while not stop.is_set():
        t = time.perf_counter()
        try:
            c.request("POST", "/v1/meshes/cube/raycast", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            j = json.loads(r.read())
            ok = r.status == 200 and j.get("hit") is True and abs(j["distance"] - 4) < 1e-5
        except (OSError, http.client.HTTPException, ValueError) as e:
            ok = False
            j = repr(e)
            c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
        lat.append(time.perf_counter() - t)
        if not ok:
            bad.append(str(j)[:200])
        time.sleep(0.002)


def main():
    threads = [threading.Thread(target=f) for f in (idle_clients, slowloris, big_headers, big_headers,
                                                     slow_upload)]
    for t in threads:
        t.start()
    idle_ready.wait(timeout=30)  # the idle connections are all open before measuring
    time.sleep(min(1.0, SECONDS / 4))  # let the abusers settle in
    lat, bad = [], []
    g = threading.Thread(target=good_client, args=(lat, bad))
    g.start()
    time.sleep(SECONDS)
    stop.set()
    g.join()
    for t in threads:
        t.join()
    lat_ms = sorted(x * 1000 for x in lat)
    n = len(lat_ms)
    p99 = lat_ms[min(n - 1, int(n * 0.99))] if n else float("nan")
    print("good client: %d/%d answered correctly (%.2f %%), latency median %.2f ms, p99 %.2f ms, max %.2f ms"
          % (n - len(bad), n, 100.0 * (n - len(bad)) / max(n, 1), statistics.median(lat_ms) if n else 0,
             p99, lat_ms[-1] if n else 0))
    print("abusers: %d idle keep-alive open, %d slowloris (%d cut and reconnected), 64 KiB headers answered %s,"
          " 100 MB trickled upload %s" % (notes["idle_open"], SLOW, notes["slow_cuts"],
                                          notes["big_header_answers"], notes["upload"]))
    for b in bad[:5]:
        print("bad answer:", b)
    big_ok = all(k.startswith("4") or k in ("ConnectionResetError", "BrokenPipeError")
                 for k in notes["big_header_answers"])
    ok = n > 0 and not bad and lat_ms[-1] <= MAX_LATENCY_S * 1000 and big_ok and notes["idle_open"] == IDLE
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
