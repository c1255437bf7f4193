#!/usr/bin/env python3
"""replicas.py - measurements for tests/integration/replicas.sh.

  propagate LB R1,R2,R3 N   N PUTs of mesh "prop" through the balancer LB,
                            each a different shape; after each acknowledgement
                            poll every replica until it serves the new shape.
                            Prints "propagation median MS max MS over N PUTs";
                            exits 1 if one took over 2 s.
  load LB SECONDS THREADS OUT
                            raycasts and mesh reads through LB from THREADS
                            keep-alive clients for SECONDS (or until the file
                            OUT.stop exists); writes "requests N failed N" to OUT.
  race R1,R2 PREFIX N       N names, each PUT concurrently on R1 and R2 with
                            different shapes (both must be acknowledged)
  agree R1,R2,R3 PREFIX S   within S seconds every replica lists the same
                            meshes under PREFIX; prints the disagreements
"""
import http.client
import json
import os
import statistics
import sys
import threading
import time
import urllib.parse

def conn(url, timeout=10):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)

def request(c, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    return r.status, r.read()

def shape(k):
    """A triangle whose bounds' max x is k + 1: the shape names the PUT."""
    return json.dumps({"vertices": [[0, 0, 0], [k + 1, 0, 0], [0, 1, 0]],
                       "triangles": [[0, 1, 2]]}).encode()

def propagate(lb, replicas, n):
    front = conn(lb)
    backs = [conn(r) for r in replicas]
    delays = []
    for k in range(n):
        st, body = request(front, "PUT", "/v1/meshes/prop", shape(k))
        if st not in (200, 201):
            print("PUT %d: %d %r" % (k, st, body[:200]))
            return 1
        t0 = time.monotonic()
        pending = set(range(len(backs)))
        while pending:
            for i in list(pending):
                st, body = request(backs[i], "GET", "/v1/meshes/prop")
                if st == 200 and json.loads(body)["bounds"]["max"][0] == k + 1:
                    pending.discard(i)
            if pending:
                if time.monotonic() - t0 > 2.0:
                    print("PUT %d not visible on replicas %s after 2 s" % (k, sorted(pending)))
                    return 1
                time.sleep(0.0005)
        delays.append((time.monotonic() - t0) * 1e3)
    print("propagation median %.1f ms max %.1f ms over %d PUTs" %
          (statistics.median(delays), max(delays), n))
    return 0

def load(lb, seconds, threads, out):
    ray = json.dumps({"rays": [{"origin": [0.25, 0.25, 5], "direction": [0, 0, -1]}] * 8}).encode()
    counts = {"requests": 0, "failed": 0}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    fails = []

    def worker(i):
        c = conn(lb)
        n = f = 0
        while time.monotonic() < stop_at and not os.path.exists(out + ".stop"):
            try:
                if n % 4 == 3:
                    st, body = request(c, "GET", "/v1/meshes/load")
                else:
                    st, body = request(c, "POST", "/v1/meshes/load/raycast", ray)
                ok = st == 200 and (b"results" in body or n % 4 == 3)
            except (OSError, http.client.HTTPException) as e:
                ok, st, body = False, 0, str(e).encode()
                c.close()
                c = conn(lb)
            n += 1
            if not ok:
                f += 1
                if len(fails) < 5:
                    fails.append("%d %r" % (st, body[:120]))
        with lock:
            counts["requests"] += n
            counts["failed"] += f

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    with open(out, "w") as f:
        f.write("requests %d failed %d\n" % (counts["requests"], counts["failed"]))
        for line in fails:
            f.write("# %s\n" % line)
    return 0

def race(replicas, prefix, n):
    errs = []

    def one(k):
        name = "/v1/meshes/%s-%d" % (prefix, k)
        cs = [conn(r) for r in replicas[:2]]
        for c in cs:
            c.connect()
        go = threading.Barrier(2)
        out = [None, None]

        def fire(i):
            go.wait()
            out[i] = request(cs[i], "PUT", name, shape(1000 * (i + 1) + k))[0]

        ts = [threading.Thread(target=fire, args=(i,)) for i in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if any(s not in (200, 201) for s in out):
            errs.append("%s: %s" % (name, out))

    for k in range(0, n, 10):
        ts = [threading.Thread(target=one, args=(j,)) for j in range(k, min(n, k + 10))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    if errs:
        print("not acknowledged: %s" % errs[:3])
        return 1
    return 0

def listing(url, prefix):
    c = conn(url)
    st, body = request(c, "GET", "/v1/meshes")
    c.close()
    if st != 200:
        return None
    return {m["name"]: m["bounds"]["max"][0] for m in json.loads(body)["meshes"]
            if m["name"].startswith(prefix + "-")}

def agree(replicas, prefix, seconds):
    t0 = time.monotonic()
    while True:
        views = [listing(r, prefix) for r in replicas]
        if views[0] is not None and all(v == views[0] for v in views):
            print("%d names agree on %d replicas after %.0f ms" %
                  (len(views[0]), len(replicas), (time.monotonic() - t0) * 1e3))
            return 0
        if time.monotonic() - t0 > seconds:
            for i, v in enumerate(views[1:], 1):
                diff = sorted(n for n in set(v or {}) | set(views[0] or {})
                              if (v or {}).get(n) != (views[0] or {}).get(n))
                print("replica %d differs from replica 0 on %d names, e.g. %s" % (i, len(diff), diff[:3]))
            return 1
        time.sleep(0.05)

if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["propagate"] and len(a) == 4:
        sys.exit(propagate(a[1], a[2].split(","), int(a[3])))
    if a[:1] == ["load"] and len(a) == 5:
        sys.exit(load(a[1], float(a[2]), int(a[3]), a[4]))
    if a[:1] == ["race"] and len(a) == 4:
        sys.exit(race(a[1].split(","), a[2], int(a[3])))
    if a[:1] == ["agree"] and len(a) == 4:
        sys.exit(agree(a[1].split(","), a[2], float(a[3])))
    sys.exit(__doc__)
