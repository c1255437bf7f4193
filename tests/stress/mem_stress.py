#!/usr/bin/env python3
"""mem_stress.py - peak RSS per request kind (make stress).

Each request runs against a fresh peak (clear_refs) of one daemon; the
figure is VmHWM after the answer minus VmRSS before the request, i.e. what
that request cost at its worst moment, the received body included. Bodies
are generated here. Prints one line per kind and, with --check, fails when a
bar is missed:
  mesh uploads (JSON/OBJ/STL):  peak <= 4 x body size
  the big response:             answered 413 within the response cap, or
                                a body no larger than the cap
Usage: mem_stress.py BINARY [--size-mib N] [--check] [--only KIND,...]
"""
import argparse
import json
import struct
import sys

from memlib import MiB, Daemon

CAP_DEFAULT = 64 * MiB


def json_zeros(size):
    """Flat zeros, {"vertices":[0,...],"triangles":[0,...]}: every triangle
    degenerate, the last index out of range, so the answer is a 400 after the
    whole body was read."""
    n = (size - 40) // 4 // 3 * 3
    return (b'{"vertices":[' + b"0," * (n - 1) + b'0],"triangles":[' + b"0," * (n - 1) +
            b'4000000000]}')


def grid(size_hint_tris):
    """A w x w grid of unit squares (2 triangles each), vertices and triangles."""
    w = 1
    while 2 * (w + 1) * (w + 1) <= size_hint_tris:
        w += 1
    verts = [(float(x), float(y), float((x * 7 + y * 3) % 5) * 0.25)
             for y in range(w + 1) for x in range(w + 1)]
    tris = []
    for y in range(w):
        for x in range(w):
            a = y * (w + 1) + x
            tris.append((a, a + 1, a + w + 1))
            tris.append((a + 1, a + w + 2, a + w + 1))
    return verts, tris


def json_grid(size):
    verts, tris = grid(size // 40)
    return json.dumps({"vertices": verts, "triangles": tris}, separators=(",", ":")).encode()


def obj_f_lines(size):
    """'f 1 2 3' lines: one triangle repeated (the issue's 10 M-line case)."""
    n = (size - 30) // 8
    return b"v 0 0 0\nv 1 0 0\nv 0 1 0\n" + b"f 1 2 3\n" * n


def obj_long_f(size):
    """One 'f' line with ~size/2 references (a fan of that many triangles)."""
    n = (size - 40) // 2
    return b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf" + b" 1" * n + b"\n"


def obj_f_lines_400(size):
    """The same, with an out-of-range index on the last line: a 400 after the
    whole body was parsed (what the reader alone costs)."""
    return obj_f_lines(size - 8) + b"f 1 2 9\n"


def obj_grid(size):
    verts, tris = grid(size // 30)
    out = ["v %g %g %g" % v for v in verts] + ["f %d %d %d" % (a + 1, b + 1, c + 1) for a, b, c in tris]
    return ("\n".join(out) + "\n").encode()


def stl_binary(size):
    n = (size - 84) // 50
    rec = struct.pack("<12fH", 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0)
    return b"\0" * 80 + struct.pack("<I", n) + rec * n


def stl_binary_400(size):
    """The same with a non-finite coordinate in the last facet (400)."""
    body = bytearray(stl_binary(size))
    body[-14:-10] = struct.pack("<f", float("inf"))
    return bytes(body)


def stl_ascii(size):
    facet = (b"facet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n"
             b"  vertex 0 1 0\n endloop\nendfacet\n")
    n = (size - 30) // len(facet)
    return b"solid s\n" + facet * n + b"endsolid s\n"


# (kind, content type, generator, checked against the 4x bar): the two
# dense OBJ cases are reported, not checked: at 8 and 2 bytes of body per
# triangle, the 12 bytes of indices per triangle and mesh_build's own
# per-triangle transient (core/) exceed 4x whatever the reader does; their
# cost is stated in README's Limits section and bounded by --max-triangles.
UPLOADS = [
    ("json_zeros", "application/json", json_zeros, True),
    ("obj_f_400", "model/obj", obj_f_lines_400, True),
    ("stl_bin_400", "model/stl", stl_binary_400, True),
    ("json_grid", "application/json", json_grid, True),
    ("obj_grid", "model/obj", obj_grid, True),
    ("stl_binary", "model/stl", stl_binary, True),
    ("stl_ascii", "model/stl", stl_ascii, True),
    ("obj_f_lines", "model/obj", obj_f_lines, False),
    ("obj_long_f", "model/obj", obj_long_f, False),
]


def stacked_planes(n):
    """n unit squares stacked along z (2 triangles each), as JSON."""
    verts, tris = [], []
    for k in range(n):
        z = float(k)
        b = len(verts)
        verts += [(-1.0, -1.0, z), (1.0, -1.0, z), (1.0, 1.0, z), (-1.0, 1.0, z)]
        tris += [(b, b + 1, b + 2), (b, b + 2, b + 3)]
    return json.dumps({"vertices": verts, "triangles": tris}, separators=(",", ":")).encode()


def big_response(d, check):
    """2000 rays, mode all, max_hits 1000 through 1000 stacked planes."""
    st, _ = d.request("PUT", "/v1/meshes/planes", stacked_planes(1000), "application/json")
    assert st in (200, 201), st
    rays = [{"origin": [0.001 * (i % 100) - 0.05, 0.0005 * i - 0.5, -1], "direction": [0, 0, 1]}
            for i in range(2000)]
    body = json.dumps({"rays": rays, "mode": "all", "max_hits": 1000}, separators=(",", ":")).encode()
    status, answer, peak = d.measure("POST", "/v1/meshes/planes/raycast", body, "application/json")
    nbytes = len(answer)
    ok = status == 413 or (status == 200 and nbytes <= CAP_DEFAULT)
    print("%-12s body %7.2f MiB  status %d  answer %8.2f MiB  peak +%7.1f MiB  %s"
          % ("big_response", len(body) / MiB, status, nbytes / MiB, peak / MiB,
             "ok" if ok else "OVER THE CAP"))
    return ok or not check


def query_zeros(d, size_mib):
    """A query body at --max-query-bytes (16 MiB) of flat zeros: the tree
    parser (api/json.c) costs one 64-byte node per number before the 400."""
    size = int(size_mib * MiB) - 64
    body = b'{"origin":[0,0,1],"direction":[0,0,-1],"rays":[' + b"0," * (size // 2 - 40) + b'0]}'
    status, _, peak = d.measure("POST", "/v1/meshes/none/raycast", body, "application/json")
    print("%-12s body %7.2f MiB  status %d  peak +%7.1f MiB  = %5.2f x body  (stated cost)"
          % ("query_zeros", len(body) / MiB, status, peak / MiB, peak / len(body)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--size-mib", type=float, default=32)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    size = int(a.size_mib * MiB)
    good = True
    with Daemon(a.binary) as d:
        for kind, ctype, gen, barred in UPLOADS:
            if only and kind not in only:
                continue
            body = gen(size)
            status, answer, peak = d.measure("PUT", "/v1/meshes/m_" + kind, body, ctype)
            info = json.loads(answer) if status in (200, 201) else {}
            held = info.get("memory_bytes", 0)
            # the bar is on what the upload costs beyond the mesh it leaves
            # in the store (memory_bytes, reported by the daemon)
            ratio = (peak - held) / len(body)
            ok = ratio <= 4.0
            good &= ok or not a.check or not barred
            print("%-12s body %7.2f MiB  status %d  %9d tris  peak +%7.1f MiB  mesh held %7.1f MiB"
                  "  (peak - mesh) = %5.2f x body  %s"
                  % (kind, len(body) / MiB, status, info.get("triangles", 0), peak / MiB,
                     held / MiB, ratio, "ok" if ok else "OVER 4x" if barred else "over 4x (stated cost)"))
            d.request("DELETE", "/v1/meshes/m_" + kind)
            del body
        if not only or "query_zeros" in only:
            query_zeros(d, 16)
        if not only or "big_response" in only:
            good &= big_response(d, a.check)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
