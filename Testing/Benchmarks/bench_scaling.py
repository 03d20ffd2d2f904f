"""How the cost grows with N: jz-tree against its peers, side by side, for one
algorithm, written as a CSV and a log-log figure (doc/<algorithm>_scaling.png).

Every program runs as its own process on the same points (or the same
distribution) and thread count; per N the programs are interleaved, repeated,
and the minimum wall time is kept (the CPU time of that process is recorded
too: on a shared machine it is the steadier of the two). Not a test: nothing
is asserted.

  /usr/bin/python3 Testing/Benchmarks/bench_scaling.py --algorithm knn|fof
      [--n 1e4 3e4 1e5 ... 5e7] [--k 16] [--threads 2] [--repeats 2] [--points halos]
      [--max-n-peer NAME=N ...] [--csv FILE] [--png FILE] [--merge] [--plot-only]

The CSV is rewritten after every N, so a long run that is stopped keeps what
it measured. --merge keeps the rows already in the CSV (a row measured now
replaces the one for the same program and N), so the large N can be run on
another occasion; --plot-only redraws the figure from the CSV.

Algorithms register their runners in ALGORITHMS (name -> program -> runner);
a runner takes (n, points_file, args) and returns the seconds the program
reports for build + query, or None when it is not available. knn: jz-tree
(jz_bench_knn, kernel alone), nanoflann and ArborX 2.1 (Kokkos OpenMP), built
outside the repository (../shared/anchors/README.md; JZ_PEERS, default
/work/peers), and scipy's cKDTree (Debian's python3-scipy). fof: the
FriendsOfFriends filter end to end (pvpython), hfof (serial C, labels only;
HFOF_PATH, default /tmp/hfof) and scipy (cKDTree.query_pairs + csgraph).
"""
import argparse
import csv
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PEERS = os.environ.get("JZ_PEERS", "/work/peers")


def find_program(candidates):
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


JZ_BENCH_KNN = find_program([
    os.environ.get("JZ_BENCH_KNN"),
    os.path.join(os.environ.get("JZ_BUILD_DIR", os.path.join(ROOT, "build")), "bin", "jz_bench_knn"),
    os.path.join(ROOT, "build-cpu", "bench", "jz_bench_knn"),
])
NANOFLANN = find_program([os.path.join(PEERS, "nanoflann_knn")])
ARBORX_KNN = find_program([os.path.join(PEERS, "build-anchors", "arborx_knn")])


def run_timed(cmd, pattern, env=None):
    """Runs cmd; returns (seconds matched by pattern in its output, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    m = re.search(pattern, out.stdout)
    if not m:
        sys.stderr.write("no timing from %s:\n%s%s\n" % (" ".join(cmd), out.stdout[-500:],
                                                         out.stderr[-500:]))
        return None, cpu
    return float(m.group(1)), cpu


# --- kNN ------------------------------------------------------------------------

def knn_ours(n, points, args):
    if not JZ_BENCH_KNN:
        return None, None
    return run_timed([JZ_BENCH_KNN, str(n), str(args.k), points, str(args.threads), "jzonly"],
                     r"jz_cpu=([0-9.]+)")


def knn_nanoflann(n, points, args):
    if args.points == "uniform" and NANOFLANN:
        # The anchor draws its own uniform points (std::mt19937_64(1)).
        return run_timed([NANOFLANN, str(n), str(args.k)], r"total=([0-9.]+)s")
    if not JZ_BENCH_KNN:
        return None, None
    # Other points: the same library inside jz_bench_knn, on the same file
    # (its CPU time then includes three jz-tree runs).
    return run_timed([JZ_BENCH_KNN, str(n), str(args.k), points, str(args.threads)],
                     r"nanoflann build\+query: ([0-9.]+) s")


def knn_arborx(n, points, args):
    if not ARBORX_KNN:
        return None, None
    return run_timed([ARBORX_KNN, str(n), str(args.k), points], r"total=([0-9.]+)s")


SCIPY_KNN = """
import sys, time, numpy as np
from scipy.spatial import cKDTree
n, k, threads, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
p = np.fromfile(path, dtype=np.float32, count=3 * n).reshape(n, 3)
t0 = time.perf_counter()
d, i = cKDTree(p).query(p, k=k, workers=threads)
print("total=%.4fs" % (time.perf_counter() - t0))
"""


def knn_scipy(n, points, args):
    return run_timed(["/usr/bin/python3", "-c", SCIPY_KNN, str(n), str(args.k), str(args.threads),
                      points], r"total=([0-9.]+)s")


# --- friends of friends ---------------------------------------------------------
# Linking length b = 0.2 in the periodic unit box; every program reads the same
# float32 file. Ours is the FriendsOfFriends filter end to end in pvpython (the
# plugin from PV_PLUGIN_PATH, default build/), timed around Update() on new
# points, so never a re-cut of its cached tree.

FOF_FILTER = r"""
import sys, time, numpy as np
from paraview import simple
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkPolyData
pts = np.fromfile(sys.argv[1], dtype=np.float32).reshape(-1, 3)
pd = vtkPolyData(); vp = vtkPoints(); vp.SetData(numpy_to_vtk(pts, deep=1)); pd.SetPoints(vp)
tp = simple.TrivialProducer(); tp.GetClientSideObject().SetOutput(pd)
f = simple.FriendsOfFriends(Input=tp, LinkingLength=0.2, Periodic=1, Device="CPU")
t = time.perf_counter(); f.GetClientSideObject().Update()
print("total=%.4fs" % (time.perf_counter() - t))
"""

FOF_HFOF = """
import sys, time, numpy as np
sys.path.insert(0, sys.argv[3])
from hfof import fof
p = np.fromfile(sys.argv[1], dtype=np.float32).reshape(-1, 3).astype(np.float64)
t = time.perf_counter(); fof(p, float(sys.argv[2]), boxsize=1.0)
print("total=%.4fs" % (time.perf_counter() - t))
"""

FOF_SCIPY = """
import sys, time, numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree
p = np.fromfile(sys.argv[1], dtype=np.float32).reshape(-1, 3).astype(np.float64)
n = len(p)
t = time.perf_counter()
pairs = cKDTree(p, boxsize=1.0).query_pairs(float(sys.argv[2]), output_type="ndarray")
g = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
connected_components(g, directed=False)
print("total=%.4fs" % (time.perf_counter() - t))
"""


def fof_linking_length(n):
    return 0.2 * (1.0 / n) ** (1.0 / 3.0)


def fof_ours(n, points, args):
    env = dict(os.environ)
    env.setdefault("PV_PLUGIN_PATH", os.path.join(ROOT, "build/lib/paraview-5.11/plugins/JZTree"))
    return run_timed(["pvpython", "-c", FOF_FILTER, points], r"total=([0-9.]+)s", env=env)


def fof_hfof(n, points, args):
    path = os.environ.get("HFOF_PATH", "/tmp/hfof")
    if not os.path.isdir(os.path.join(path, "hfof")):
        return None, None
    return run_timed(["/usr/bin/python3", "-c", FOF_HFOF, points, repr(fof_linking_length(n)),
                      path], r"total=([0-9.]+)s")


def fof_scipy(n, points, args):
    return run_timed(["/usr/bin/python3", "-c", FOF_SCIPY, points, repr(fof_linking_length(n))],
                     r"total=([0-9.]+)s")


ALGORITHMS = {
    "knn": {
        "title": "kNN, K=%(k)d, self query, %(points)s float32, %(threads)d threads",
        "programs": [("jz-tree", knn_ours), ("nanoflann", knn_nanoflann), ("ArborX", knn_arborx),
                     ("scipy cKDTree", knn_scipy)],
    },
    "fof": {
        "title": "Friends of friends, b = 0.2, periodic, %(points)s float32, %(threads)d threads",
        "programs": [("jz-tree", fof_ours), ("hfof", fof_hfof), ("scipy cKDTree", fof_scipy)],
    },
}


def write_points(kind, n, path):
    if kind == "halos":
        sys.path.insert(0, os.path.join(ROOT, "..", "shared", "anchors"))
        from halos import halos
        halos(n).tofile(path)
    else:
        np.random.default_rng(1).random((n, 3)).astype(np.float32).tofile(path)


FIELDS = ["algorithm", "n", "program", "wall", "cpu", "threads", "k", "points", "load", "date"]


def read_rows(path):
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["n"] = int(float(r["n"]))
        r["wall"] = float(r["wall"]) if r.get("wall") else None
    return rows


def write_rows(path, rows):
    rows = sorted(rows, key=lambda r: (r["n"], r["program"]))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def plot(rows, programs, title, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    for name in programs:
        pts = sorted((r["n"], r["wall"]) for r in rows if r["program"] == name and r["wall"])
        if pts:
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=name)
    ns = sorted({r["n"] for r in rows})
    if ns:
        ax.loglog(ns, [1e-7 * n for n in ns], "k:", lw=0.8, label="slope 1 (reference)")
    ax.set_xlabel("N (points)")
    ax.set_ylabel("time (s), minimum of the repeats")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", lw=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def measure(n, algo, limits, args, tmp):
    """Runs every program at n, interleaved, repeats times; returns name -> (min wall, its CPU)."""
    points = os.path.join(tmp, "points.f32")
    write_points(args.points, n, points)
    best = {}
    for rep in range(args.repeats):
        for name, runner in algo["programs"]:
            if n > limits.get(name, float("inf")):
                continue
            wall, cpu = runner(n, points, args)
            if wall is not None and (name not in best or wall < best[name][0]):
                best[name] = (wall, cpu)
    os.remove(points)
    ours = best.get("jz-tree", (None,))[0]
    print("N=%-9d " % n + "  ".join(
        "%s %.3f s%s" % (name, w, " (%.2fx)" % (w / ours) if ours and name != "jz-tree" else "")
        for name, (w, c) in best.items()), flush=True)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--algorithm", default="knn", choices=sorted(ALGORITHMS))
    ap.add_argument("--n", nargs="+", type=float,
                    default=[1e4, 3e4, 1e5, 3e5, 1e6, 3e6, 1e7, 5e7])
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--points", default="uniform", choices=["uniform", "halos"],
                    help="uniform in the unit cube, or ../shared/anchors/halos.py")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--max-n-peer", nargs="*", default=[],
                    help="NAME=N: skip program NAME above N points (slow peers)")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--png", default=None)
    ap.add_argument("--merge", action="store_true",
                    help="keep the CSV's rows for other N and programs")
    ap.add_argument("--plot-only", action="store_true", help="redraw the figure from the CSV")
    args = ap.parse_args()
    algo = ALGORITHMS[args.algorithm]
    csv_path = args.csv or os.path.join(ROOT, "doc", "%s_scaling.csv" % args.algorithm)
    png_path = args.png or os.path.join(ROOT, "doc", "%s_scaling.png" % args.algorithm)
    limits = {}
    for item in args.max_n_peer:
        name, _, value = item.partition("=")
        limits[name] = float(value)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)

    rows = read_rows(csv_path) if (args.merge or args.plot_only) else []
    if not args.plot_only:
        with tempfile.TemporaryDirectory() as tmp:
            for n in [int(x) for x in args.n]:
                best = measure(n, algo, limits, args, tmp)
                rows = [r for r in rows if not (r["n"] == n and r["program"] in best)]
                stamp = {"load": "%.1f" % os.getloadavg()[0],
                         "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
                for name, (wall, cpu) in best.items():
                    rows.append(dict(stamp, algorithm=args.algorithm, n=n, program=name, wall=wall,
                                     cpu="%.3f" % cpu, threads=args.threads, k=args.k,
                                     points=args.points))
                write_rows(csv_path, rows)
    plot(rows, [name for name, _ in algo["programs"]], algo["title"] % vars(args), png_path)
    print("wrote %s and %s" % (csv_path, png_path))

if __name__ == "__main__":
    main()
