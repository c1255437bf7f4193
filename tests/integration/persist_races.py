#!/usr/bin/env python3
"""persist_races.py - concurrent writers on one name against a daemon with a
data dir (or a Redis store), for tests/integration/persist_races.sh.

  race URL PREFIX TRIALS STATE   run TRIALS PUT/PUT and TRIALS PUT/DELETE races
                                 on names PREFIX-pp-N / PREFIX-pd-N, two
                                 requests fired together per name; then write
                                 memory's acknowledged state (name -> triangles)
                                 to STATE as JSON and print a summary
  files DIR N TRIS               write N mesh files DIR/bulk-K.mesh of TRIS
                                 triangles each (the data-dir form, persist.h)
  check URL PREFIX STATE         compare the daemon's meshes under PREFIX with
                                 STATE: prints "lost N resurrected N wrong N"
                                 and exits 1 unless all are 0
"""
import http.client
import json
import sys
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

def tetras(k):
    """k disjoint tetrahedra: 4k triangles, so a count names the writer."""
    v, t = [], []
    for i in range(k):
        o = 3.0 * i
        b = len(v)
        v += [[o, 0, 0], [o + 1, 0, 0], [o, 1, 0], [o, 0, 1]]
        t += [[b, b + 2, b + 1], [b, b + 1, b + 3], [b, b + 3, b + 2], [b + 1, b + 2, b + 3]]
    return json.dumps({"vertices": v, "triangles": t}).encode()

BODY = {n: tetras(n) for n in (1, 2, 3)}

def conn(url):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.connect()
    return c

def request(c, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    return r.status, data

def one_trial(url, name, kind):
    """Fire two writers at name together; both must be acknowledged (or one
    DELETE may find nothing). Returns an error string or None."""
    path = "/v1/meshes/" + name
    setup = conn(url)
    st, _ = request(setup, "PUT", path, BODY[1])
    setup.close()
    if st not in (200, 201):
        return "setup PUT %s: %d" % (name, st)
    a, b = conn(url), conn(url)
    go = threading.Barrier(2)
    out = [None, None]
    ops = [("PUT", BODY[2]), ("PUT", BODY[3])] if kind == "pp" else [("PUT", BODY[2]), ("DELETE", None)]

    def fire(i, c):
        go.wait()
        out[i] = request(c, ops[i][0], path, ops[i][1])[0]

    ts = [threading.Thread(target=fire, args=(i, c)) for i, c in enumerate((a, b))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    a.close()
    b.close()
    for (m, _), st in zip(ops, out):
        if m == "PUT" and st not in (200, 201):
            return "PUT %s: %s" % (name, st)
        if m == "DELETE" and st not in (204, 404):
            return "DELETE %s: %s" % (name, st)
    return None

def state(url, prefix):
    c = conn(url)
    st, data = request(c, "GET", "/v1/meshes")
    c.close()
    if st != 200:
        raise SystemExit("GET /v1/meshes: %d" % st)
    return {m["name"]: m["triangles"] for m in json.loads(data)["meshes"]
            if m["name"].startswith(prefix + "-")}

def race(url, prefix, trials, path):
    names = [("%s-pp-%d" % (prefix, i), "pp") for i in range(trials)] + \
            [("%s-pd-%d" % (prefix, i), "pd") for i in range(trials)]
    with ThreadPoolExecutor(max_workers=6) as ex:
        errs = [e for e in ex.map(lambda nk: one_trial(url, *nk), names) if e]
    if errs:
        print("# %d writes not acknowledged, e.g. %s" % (len(errs), errs[0]))
        return 1
    s = state(url, prefix)
    with open(path, "w") as f:
        json.dump(s, f)
    deleted = sum(1 for n, k in names if k == "pd" and n not in s)
    print("# %d PUT/PUT and %d PUT/DELETE races acknowledged; %d names deleted last" %
          (trials, trials, deleted))
    return 0

def check(url, prefix, path):
    want = json.load(open(path))
    got = state(url, prefix)
    lost = [n for n in want if n not in got]
    resurrected = [n for n in got if n not in want]
    wrong = [n for n in want if n in got and got[n] != want[n]]
    print("lost %d resurrected %d wrong %d (of %d names)" %
          (len(lost), len(resurrected), len(wrong), len(want)))
    for n in (lost + resurrected + wrong)[:5]:
        print("#   %s: memory had %s, after restart %s" % (n, want.get(n), got.get(n)))
    return 0 if not (lost or resurrected or wrong) else 1

def mesh_file(path, ntri):
    """persist.h's form of a wavy n x n grid of about ntri triangles: header,
    float32 vertices, uint32 triangles, the FNV-style hash of all words."""
    import array
    import math
    import struct
    n = max(1, int(math.sqrt(ntri / 2)))
    nvert, ntri = (n + 1) * (n + 1), 2 * n * n
    v = array.array("f", [0.0]) * (3 * nvert)
    k = 0
    for i in range(n + 1):
        for j in range(n + 1):
            v[k], v[k + 1], v[k + 2] = i, j, math.sin(i * 0.05) * math.cos(j * 0.07) * 4
            k += 3
    t = array.array("I", [0]) * (3 * ntri)
    k = 0
    for i in range(n):
        for j in range(n):
            a = i * (n + 1) + j
            t[k:k + 6] = array.array("I", (a, a + 1, a + n + 2, a, a + n + 2, a + n + 1))
            k += 6
    body = b"CLDMESH\0" + struct.pack("<IIQQ", 1, 0, nvert, ntri) + v.tobytes() + t.tobytes()
    h = 0xcbf29ce484222325
    for (w,) in struct.iter_unpack("<I", body):
        h = ((h ^ w) * 0x100000001b3) & 0xffffffffffffffff
    with open(path, "wb") as f:
        f.write(body + struct.pack("<Q", h))

def files(d, n, ntri):
    import os
    import shutil
    first = os.path.join(d, "bulk-0.mesh")
    mesh_file(first, ntri)
    for k in range(1, n):
        shutil.copyfile(first, os.path.join(d, "bulk-%d.mesh" % k))
    return 0

if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "race" and len(a) == 5:
        sys.exit(race(a[1], a[2], int(a[3]), a[4]))
    if a and a[0] == "files" and len(a) == 4:
        sys.exit(files(a[1], int(a[2]), int(a[3])))
    if a and a[0] == "check" and len(a) == 4:
        sys.exit(check(a[1], a[2], a[3]))
    sys.exit(__doc__)
