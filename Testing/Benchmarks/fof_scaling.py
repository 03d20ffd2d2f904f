#!/usr/bin/python3
"""How friends-of-friends cost grows with N (not a test): the FriendsOfFriends
filter end to end (CPU, OMP_NUM_THREADS threads), hfof (serial C, labels only)
and scipy (cKDTree.query_pairs + connected_components), side by side on the
same points: the shared anchors' halos.py set (60% in isothermal halos),
periodic unit box, b = 0.2. Minimum of --repeats per point, the tools
interleaved. Writes a CSV and a log-log PNG.

  OMP_NUM_THREADS=2 /usr/bin/python3 Testing/Benchmarks/fof_scaling.py \\
      [--sizes 1e4,1e5,1e6,1e7] [--scipy-max 1e6] [--repeats 2] [--out doc/fof_scaling]

The filter runs in pvpython (one process per size, FILTER_TIMER below);
hfof must be importable from HFOF_PATH (default /tmp/hfof; built outside the
repository, never shipped).
"""
import argparse
import csv
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "..", "shared", "anchors"))
from halos import halos  # noqa: E402

# Run inside pvpython: times the filter on a raw float32 file (min of repeats).
FILTER_TIMER = r"""
import sys, time, numpy as np
from paraview import simple
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkPolyData
pts = np.fromfile(sys.argv[1], dtype=np.float32).reshape(-1, 3)
pd = vtkPolyData(); vp = vtkPoints(); vp.SetData(numpy_to_vtk(pts, deep=1)); pd.SetPoints(vp)
tp = simple.TrivialProducer(); tp.GetClientSideObject().SetOutput(pd)
f = simple.FriendsOfFriends(Input=tp, LinkingLength=0.2, Periodic=1, Device="CPU")
alg = f.GetClientSideObject()
best = 1e30
for _ in range(int(sys.argv[2])):
    # New points each time: a full run, never a re-cut of the filter's cached tree.
    vp.GetData().Modified(); alg.Modified()
    t = time.perf_counter(); alg.Update(); best = min(best, time.perf_counter() - t)
print("FILTER", best)
"""


def time_filter(pts, repeats, tmp):
    pts.astype(np.float32).tofile(tmp)
    env = dict(os.environ)
    env.setdefault("PV_PLUGIN_PATH", os.path.join(ROOT, "build/lib/paraview-5.11/plugins/JZTree"))
    p = subprocess.run(["pvpython", "-c", FILTER_TIMER, tmp, str(repeats)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("FILTER"):
            return float(line.split()[1])
    raise SystemExit("filter run failed:\n" + p.stdout[-2000:])


def time_hfof(pts, l, repeats):
    sys.path.insert(0, os.environ.get("HFOF_PATH", "/tmp/hfof"))
    from hfof import fof
    p64 = pts.astype(np.float64)
    best = 1e30
    for _ in range(repeats):
        t = time.perf_counter()
        fof(p64, l, boxsize=1.0)
        best = min(best, time.perf_counter() - t)
    return best


def time_scipy(pts, l):
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree
    n = len(pts)
    t = time.perf_counter()
    pairs = cKDTree(pts.astype(np.float64), boxsize=1.0).query_pairs(l, output_type="ndarray")
    g = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    connected_components(g, directed=False)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e4,3e4,1e5,3e5,1e6,3e6,1e7")
    ap.add_argument("--scipy-max", type=float, default=1e6)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "doc", "fof_scaling"))
    a = ap.parse_args()
    tmp = "/tmp/fof_scaling_points.f32"
    rows = []
    print(f"FoF b=0.2, halos.py points, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '?')}")
    for s in a.sizes.split(","):
        n = int(float(s))
        pts = halos(n)
        l = 0.2 * (1.0 / n) ** (1 / 3)
        jz = time_filter(pts, a.repeats, tmp)
        hf = time_hfof(pts, l, a.repeats)
        sp = time_scipy(pts, l) if n <= a.scipy_max else float("nan")
        rows.append((n, jz, hf, sp))
        print(f"N={n:>9} jz-tree filter {jz:8.3f} s  hfof {hf:8.3f} s ({hf / jz:4.1f}x)  "
              f"scipy {sp:8.3f} s", flush=True)
    os.remove(tmp)
    with open(a.out + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["N", "jztree_filter_s", "hfof_s", "scipy_s"])
        w.writerows(rows)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    r = np.array(rows, dtype=float)
    plt.figure(figsize=(6, 4.5))
    for col, name in ((1, "jz-tree FriendsOfFriends (filter, end to end)"),
                      (2, "hfof (serial C, labels only)"), (3, "scipy cKDTree + csgraph")):
        ok = np.isfinite(r[:, col])
        plt.loglog(r[ok, 0], r[ok, col], "o-", label=name)
    plt.xlabel("N (points)")
    plt.ylabel("time [s], minimum of repeats")
    plt.title("Friends-of-friends, b = 0.2, halos.py, periodic")
    plt.grid(True, which="both", alpha=0.3)
    plt.legend()
    plt.tight_layout()
    plt.savefig(a.out + ".png", dpi=110)
    print("wrote", a.out + ".csv", a.out + ".png")


if __name__ == "__main__":
    main()
