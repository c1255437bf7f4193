#!/usr/bin/env python3
"""soak.py - mixed traffic against one daemon, RSS sampled (issue 10).

Several client threads, each on its own keep-alive connection, send for
--seconds: raycast batches of 1, 10 and 500 rays, PUTs of meshes of 2 to
20002 triangles (JSON, OBJ or STL, over a small set of names so they replace
each other), DELETEs, and bad requests (broken JSON, unknown fields, unknown
meshes and paths). The daemon's VmRSS is sampled every --sample seconds.

Growth is measured after warm-up (--warmup, a fraction of the run): the
baseline is the median RSS over the first window after warm-up and the end
is the median over the last window, so one sample taken mid-upload does not
decide. With --max-growth PCT the script fails when growth is over PCT.
Prints one summary line (soak: ...) and, with --csv FILE, every sample.

Usage: soak.py BINARY [--seconds N] [--clients N] [--max-growth PCT]
                      [--wrapper "valgrind ..."] [--csv FILE]
"""
import argparse
import json
import random
import shlex
import statistics
import struct
import sys
import threading
import time

from memlib import MiB, Daemon

NAMES = ["soak%d" % k for k in range(6)]


def grid_mesh(ntri, rng):
    """About ntri triangles: a strip of quads with some height noise."""
    w = max(1, ntri // 2)
    verts = []
    for x in range(w + 1):
        h = rng.random()
        verts += [(float(x), 0.0, h), (float(x), 1.0, h)]
    tris = []
    for x in range(w):
        a = 2 * x
        tris += [(a, a + 2, a + 1), (a + 1, a + 2, a + 3)]
    return verts, tris[:max(2, ntri)]


def body_json(verts, tris, rng):
    if rng.random() < 0.5:
        return json.dumps({"vertices": verts, "triangles": tris}).encode(), "application/json"
    flat_v = [c for v in verts for c in v]
    flat_t = [i for t in tris for i in t]
    return json.dumps({"vertices": flat_v, "triangles": flat_t}).encode(), "application/json"


def body_obj(verts, tris):
    lines = ["v %r %r %r" % v for v in verts] + ["f %d %d %d" % (a + 1, b + 1, c + 1) for a, b, c in tris]
    return ("\n".join(lines) + "\n").encode(), "model/obj"


def body_stl(verts, tris):
    out = [b"\0" * 80, struct.pack("<I", len(tris))]
    for a, b, c in tris:
        out.append(struct.pack("<12fH", 0, 0, 1, *verts[a], *verts[b], *verts[c], 0))
    return b"".join(out), "model/stl"


def rays_body(n, rng):
    rays = [{"origin": [rng.uniform(0, 100), rng.uniform(0, 1), 5.0],
             "direction": [rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1), -1.0]} for _ in range(n)]
    opts = {}
    r = rng.random()
    if r < 0.2:
        opts = {"mode": "all", "max_hits": 8}
    elif r < 0.3:
        opts = {"mode": "any"}
    if n == 1:
        return json.dumps(dict(rays[0], **opts)).encode()
    return json.dumps(dict({"rays": rays}, **opts)).encode()


BAD = [
    ("POST", "/v1/meshes/soak0/raycast", b'{"origin":[0,0,', "application/json"),
    ("POST", "/v1/meshes/soak0/raycast", b'{"origin":[0,0,1],"direction":[0,0,-1],"max_distnace":3}',
     "application/json"),
    ("POST", "/v1/meshes/nosuch/raycast", b'{"origin":[0,0,1],"direction":[0,0,-1]}', "application/json"),
    ("PUT", "/v1/meshes/soakbad", b'{"vertices":[[0,0,0]],"triangles":[[0,1,2]]}', "application/json"),
    ("PUT", "/v1/meshes/soakbad", b"v 0 0 0\nf 1 2 3\n", "model/obj"),
    ("PUT", "/v1/meshes/soakbad", b"\0" * 84, "model/stl"),
    ("GET", "/v1/nothing", None, None),
    ("POST", "/v1/obb/raycast", b'{"origin":[0,0,1],"direction":[0,0,0],"boxes":[]}', "application/json"),
]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.count = {}
        self.errors = []

    def add(self, kind, status, ok):
        with self.lock:
            self.count[kind] = self.count.get(kind, 0) + 1
            if not ok and len(self.errors) < 10:
                self.errors.append("%s -> %s" % (kind, status))


class Gate:
    """Lets the main thread pause every client between two requests."""

    def __init__(self, clients):
        self.cv = threading.Condition()
        self.open = True
        self.clients = clients
        self.idle = 0

    def wait_open(self):
        with self.cv:
            if self.open:
                return
            self.idle += 1
            self.cv.notify_all()
            while not self.open:
                self.cv.wait()
            self.idle -= 1

    def close_and_drain(self, stop):
        with self.cv:
            self.open = False
            while self.idle < self.clients and not stop.is_set():
                self.cv.wait(0.1)

    def reopen(self):
        with self.cv:
            self.open = True
            self.cv.notify_all()


def client(port_daemon, seed, stop, stats, budget=None, gate=None):
    """Send mixed requests until stop is set (or budget requests were sent)."""
    rng = random.Random(seed)
    d = port_daemon
    conn = ClientConn(d.port)
    while not stop.is_set() and (budget is None or budget > 0):
        if gate:
            gate.wait_open()
        if budget is not None:
            budget -= 1
        r = rng.random()
        try:
            if r < 0.55:
                n = rng.choice([1, 1, 10, 10, 500])
                name = rng.choice(NAMES)
                st, _ = conn.request("POST", "/v1/meshes/%s/raycast" % name, rays_body(n, rng),
                                     "application/json")
                stats.add("raycast%d" % n, st, st in (200, 404))
            elif r < 0.75:
                ntri = rng.choice([2, 20, 200, 2000, 20002]) if rng.random() < 0.9 else rng.randint(2, 20002)
                verts, tris = grid_mesh(ntri, rng)
                fmt = rng.random()
                body, ctype = (body_json(verts, tris, rng) if fmt < 0.5 else
                               body_obj(verts, tris) if fmt < 0.8 else body_stl(verts, tris))
                st, _ = conn.request("PUT", "/v1/meshes/" + rng.choice(NAMES), body, ctype)
                stats.add("put", st, st in (200, 201))
            elif r < 0.82:
                st, _ = conn.request("DELETE", "/v1/meshes/" + rng.choice(NAMES))
                stats.add("delete", st, st in (204, 404))
            elif r < 0.85:
                st, _ = conn.request("GET", "/v1/meshes")
                stats.add("list", st, st == 200)
            else:
                m, p, b, ct = rng.choice(BAD)
                st, _ = conn.request(m, p, b, ct)
                stats.add("bad", st, 400 <= st < 500)
        except Exception as e:  # a dropped connection is a failure too
            stats.add("exception", repr(e), False)
            conn = ClientConn(d.port)
            time.sleep(0.05)


def mesh_bytes(conn):
    """collisiond_mesh_bytes from /metrics: what the stored meshes hold."""
    st, body = conn.request("GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith("collisiond_mesh_bytes "):
            return int(float(line.split()[1]))
    return 0


class ClientConn:
    """One keep-alive connection (memlib.Daemon.request without the process)."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    request = Daemon.request


def phases(d, a, stats):
    """Bounded mode: K phases of N requests per client; after each, every mesh
    is deleted and RSS sampled, so stored meshes do not blur the figure.
    Returns the RSS after each phase."""
    out = []
    probe = ClientConn(d.port)
    for k in range(a.phases):
        stop = threading.Event()
        threads = [threading.Thread(target=client, args=(d, a.seed * 1000 + 100 * k + c, stop, stats,
                                                         a.phase_requests), daemon=True)
                   for c in range(a.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name in NAMES:
            probe.request("DELETE", "/v1/meshes/" + name)
        time.sleep(a.settle)
        out.append(d.rss())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--sample", type=float, default=1.0)
    ap.add_argument("--warmup", type=float, default=0.3, help="fraction of the run")
    ap.add_argument("--window", type=float, default=0.1, help="fraction of the run per median")
    ap.add_argument("--max-growth", type=float, default=None)
    ap.add_argument("--wrapper", default="")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--args", default="")
    ap.add_argument("--csv", default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--phases", type=int, default=0, help="bounded mode (see phases())")
    ap.add_argument("--phase-requests", type=int, default=300)
    ap.add_argument("--settle", type=float, default=2.5,
                    help="seconds before a quiescent sample (the daemon trims every 2 s)")
    ap.add_argument("--slack-mib", type=float, default=1.0,
                    help="bounded mode: growth allowed on top of --max-phase-growth")
    ap.add_argument("--checkpoint", type=float, default=0,
                    help="timed mode: every N s, pause, delete every mesh, sample RSS")
    ap.add_argument("--max-phase-growth", type=float, default=None,
                    help="percent, last phase over the first (bounded mode)")
    ap.add_argument("--no-rss-check", action="store_true", help="sanitizer builds: answers only")
    a = ap.parse_args()
    if a.phases:
        return main_phases(a)
    env = dict(e.split("=", 1) for e in a.env)
    stats = Stats()
    samples = []
    checkpoints = []
    with Daemon(a.binary, shlex.split(a.args), env, shlex.split(a.wrapper)) as d:
        stop = threading.Event()
        gate = Gate(a.clients)
        threads = [threading.Thread(target=client, args=(d, a.seed * 1000 + k, stop, stats, None, gate),
                                    daemon=True)
                   for k in range(a.clients)]
        t0 = time.time()
        for t in threads:
            t.start()
        probe = ClientConn(d.port)
        next_cp = a.checkpoint
        while time.time() - t0 < a.seconds:
            time.sleep(a.sample)
            samples.append((time.time() - t0, d.rss(), mesh_bytes(probe)))
            if a.checkpoint and time.time() - t0 >= next_cp:
                # quiescent point: no request in flight, no mesh stored
                gate.close_and_drain(stop)
                for name in NAMES:
                    probe.request("DELETE", "/v1/meshes/" + name)
                time.sleep(a.settle)
                checkpoints.append((time.time() - t0, d.rss()))
                gate.reopen()
                next_cp += a.checkpoint
        stop.set()
        gate.reopen()
        for t in threads:
            t.join(60)
        rc = d.stop(timeout=120)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("t_s,rss_bytes,mesh_bytes\n")
            for t, r, m in samples:
                f.write("%.1f,%d,%d\n" % (t, r, m))
    n = len(samples)
    w0 = int(n * a.warmup)
    win = max(1, int(n * a.window))
    base = statistics.median(r for _, r, _ in samples[w0:w0 + win])
    end = statistics.median(r for _, r, _ in samples[-win:])
    growth = 100.0 * (end - base) / base
    # the same without what the stored meshes hold at each sample (their
    # number and sizes vary with the random PUTs and DELETEs)
    obase = statistics.median(r - m for _, r, m in samples[w0:w0 + win])
    oend = statistics.median(r - m for _, r, m in samples[-win:])
    ogrowth = 100.0 * (oend - obase) / base
    total = sum(stats.count.values())
    print("soak: %.0f s, %d requests (%s), RSS start %.1f MiB, after warm-up %.1f MiB, "
          "end %.1f MiB, max %.1f MiB: growth after warm-up %+.2f %% (RSS less mesh bytes: "
          "%.1f -> %.1f MiB, %+.2f %% of RSS), daemon exit %s"
          % (a.seconds, total, ", ".join("%s %d" % kv for kv in sorted(stats.count.items())),
             samples[0][1] / MiB, base / MiB, end / MiB, max(r for _, r, _ in samples) / MiB,
             growth, obase / MiB, oend / MiB, ogrowth, rc))
    if checkpoints:
        after = [r for t, r in checkpoints if t >= a.seconds * a.warmup] or [checkpoints[-1][1]]
        cgrowth = 100.0 * (after[-1] - after[0]) / after[0]
        print("soak: quiescent RSS (no request in flight, no mesh stored) at %s: %s MiB; "
              "growth after warm-up %+.2f %%"
              % (" ".join("%.0fs" % t for t, _ in checkpoints),
                 " ".join("%.1f" % (r / MiB) for _, r in checkpoints), cgrowth))
        growth = cgrowth	# the figure the bar is checked on
    ok = True
    if stats.errors:
        print("soak: unexpected answers: " + "; ".join(stats.errors))
        ok = False
    if a.max_growth is not None and growth > a.max_growth:
        print("soak: FAIL: RSS grew %.2f %% after warm-up (limit %.2f %%)" % (growth, a.max_growth))
        ok = False
    if rc != 0:
        print("soak: FAIL: daemon exit status %s" % rc)
        ok = False
    return 0 if ok else 1


def main_phases(a):
    env = dict(e.split("=", 1) for e in a.env)
    stats = Stats()
    with Daemon(a.binary, shlex.split(a.args), env, shlex.split(a.wrapper)) as d:
        rss = phases(d, a, stats)
        rc = d.stop(timeout=120)
    growth = 100.0 * (rss[-1] - rss[0]) / rss[0]
    total = sum(stats.count.values())
    print("soak (bounded): %d phases x %d x %d clients, %d requests, RSS after each phase "
          "(meshes deleted): %s MiB; last over first %+.2f %%, daemon exit %s"
          % (a.phases, a.phase_requests, a.clients, total,
             " ".join("%.1f" % (r / MiB) for r in rss), growth, rc))
    ok = True
    if stats.errors:
        print("soak: unexpected answers: " + "; ".join(stats.errors))
        ok = False
    if (a.max_phase_growth is not None and not a.no_rss_check and
            rss[-1] > rss[0] * (1 + a.max_phase_growth / 100.0) + a.slack_mib * MiB):
        print("soak: FAIL: RSS grew %.2f %% from the first phase to the last (limit %.2f %% + %.1f MiB)"
              % (growth, a.max_phase_growth, a.slack_mib))
        ok = False
    if rc != 0:
        print("soak: FAIL: daemon exit status %s" % rc)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
