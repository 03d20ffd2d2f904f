"""EMST and HDBSCAN* benchmarks, side by side on the same machine and thread
count (not a test: nothing is asserted; doc/BENCHMARKS.md has the figures):

  * EMST: the jz-tree kernel (jz_bench_emst) and ArborX 2.1's
    MinimumSpanningTree (arborx_emst, built outside the repository, see
    ../shared/anchors/README-arborx-pytreegrav.md) on the same float32
    points, uniform (arborx's own mt19937_64 stream) and clustered
    (../shared/anchors/halos.py); scipy Delaunay + MST for context (--scipy N);
  * HDBSCAN*: the kernel (jz_hdbscan) against the hdbscan library 0.8.33
    (HDBSCAN_PATH, exact MST) on halos.py points, with the agreement of the
    labels (fraction of points in the same cluster up to renumbering).

  * --mutual 5 16: the kernel's mutual-reachability tree at those MinSamples
    on the same points, as a ratio to its Euclidean time (mutual / Euclidean);
  * --filter: the EuclideanMST filter end to end in pvpython on the same
    points (uniform: numpy's, seed 1), wall time and peak memory beyond the
    input (VmHWM reset after the input is built, in bytes per point);
    --filter-hdbscan N: the HDBSCAN filter on N halos.py points, the same way.

  /usr/bin/python3 Testing/Benchmarks/bench_emst.py [--n 1e6] [--threads 2] [--repeats 2]
      [--arborx PATH] [--scipy 1e5] [--hdbscan-n 1e5] [--hdbscan-jz-n 1e6] (0 leaves a run out)
      [--sets uniform halos] [--mutual 5 16] [--filter] [--filter-hdbscan 1e7]
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("JZ_BUILD_DIR", os.path.join(ROOT, "build"))
SHARED = os.environ.get("JZ_SHARED_DIR", os.path.join(ROOT, "..", "shared"))


def tool(name):
    for d in ("bin", "Kernels/bench", "bench"):
        p = os.path.join(BUILD, d, name)
        if os.path.exists(p):
            return p
    sys.exit("not built: " + name)


def halos(n, path):
    sys.path.insert(0, os.path.join(SHARED, "anchors"))
    from halos import halos as make
    make(int(n)).tofile(path)


CPU = []  # user + sys seconds of each timed() child (the whole process, setup included)


def timed(cmd, env, pattern):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    m = re.search(pattern, out)
    return float(m.group(1)), out


# The filter end to end: points from a float32 file into a vtkPolyData, the
# peak reset once they are built, then one update (the plugin from
# PV_PLUGIN_PATH, default build/).
FILTER = r"""
import sys, time, numpy as np
from paraview import simple
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkPolyData
def kb(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])
pts = np.fromfile(sys.argv[1], dtype=np.float32).reshape(-1, 3)
pd = vtkPolyData(); vp = vtkPoints(); vp.SetData(numpy_to_vtk(pts, deep=1)); pd.SetPoints(vp)
del pts
tp = simple.TrivialProducer(); tp.GetClientSideObject().SetOutput(pd)
if sys.argv[2] == "emst":
    f = simple.EuclideanMST(Input=tp, Device="CPU")
else:
    f = simple.HDBSCAN(Input=tp, MinClusterSize=20, Device="CPU")
open("/proc/self/clear_refs", "w").write("5")
before = kb("VmRSS:")
t = time.perf_counter(); f.GetClientSideObject().Update()
wall = time.perf_counter() - t
print("total=%.4fs peak_beyond_input=%.1f B/point" % (wall, 1024.0 * (kb("VmHWM:") - before) / pd.GetNumberOfPoints()))
"""


def filter_run(path, what, env):
    env = dict(env)
    env.setdefault("PV_PLUGIN_PATH", os.path.join(BUILD, "lib/paraview-5.11/plugins/JZTree"))
    t, out = timed(["pvpython", "-c", FILTER, path, what], env, r"total=([0-9.]+)s")
    return t, float(re.search(r"peak_beyond_input=([0-9.]+)", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--arborx", default="/work/peers/build-anchors/arborx_emst")
    ap.add_argument("--scipy", type=float, default=0)
    ap.add_argument("--hdbscan-n", type=float, default=1e5)
    ap.add_argument("--hdbscan-jz-n", type=float, default=1e6)
    ap.add_argument("--hdbscan-path", default=os.environ.get("HDBSCAN_PATH", "/work/peers/hdbscan"))
    ap.add_argument("--tmp", default="/tmp/jz_bench_emst")
    ap.add_argument("--sets", nargs="*", default=["uniform", "halos"])
    ap.add_argument("--mutual", nargs="*", type=int, default=[])
    ap.add_argument("--filter", action="store_true")
    ap.add_argument("--filter-hdbscan", type=float, default=0)
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OMP_PROC_BIND="spread",
               OMP_PLACES="threads")
    n = int(a.n)
    hal = os.path.join(a.tmp, "halos%d.f32" % n)
    if not os.path.exists(hal):
        halos(n, hal)
    jz = tool("jz_bench_emst")
    print("EMST, %d points, %d threads, minimum of %d runs each, interleaved, load average %s"
          % (n, a.threads, a.repeats, " ".join("%.2f" % x for x in os.getloadavg())))
    if a.filter and "uniform" in a.sets:
        uni = os.path.join(a.tmp, "uniform%d.f32" % n)
        if not os.path.exists(uni):
            np.random.default_rng(1).random((n, 3)).astype(np.float32).tofile(uni)
    for kind in a.sets:
        tj, ta, cj, ca = [], [], [], []
        tm = {ms: [] for ms in a.mutual}
        tf, mf = [], []
        for _ in range(a.repeats):
            src = "uniform" if kind == "uniform" else hal
            t, out = timed([jz, str(n), src], env, r"total=([0-9.]+)s")
            tj.append(t)
            cj.append(CPU[-1])
            wj = re.search(r"weight=([0-9.e+]+)", out).group(1)
            mem = re.search(r"peak_beyond_input=([0-9.]+)", out).group(1)
            if os.path.exists(a.arborx):
                cmd = [a.arborx, str(n), "uniform"] if kind == "uniform" else [a.arborx, str(n), "halos", hal]
                t, out = timed(cmd, env, r"total=([0-9.]+)s")
                ta.append(t)
                ca.append(CPU[-1])
                wa = re.search(r"weight=([0-9.e+]+)", out).group(1)
            for ms in a.mutual:
                cmd = [jz, str(n), src, "mutual", "1", str(ms)]
                tm[ms].append(timed(cmd, env, r"total=([0-9.]+)s")[0])
            if a.filter:
                t, peak = filter_run(uni if kind == "uniform" else hal, "emst", env)
                tf.append(t)
                mf.append(peak)
        line = "  %-8s jz-tree %.2f s (weight %s, peak %s B/point beyond input)" % (kind, min(tj), wj, mem)
        for ms in a.mutual:
            line += " | mutual MinSamples %d %.2f s = %.2fx Euclidean" % (ms, min(tm[ms]), min(tm[ms]) / min(tj))
        if tf:
            line += " | filter %.2f s, peak %.1f B/point" % (min(tf), max(mf))
            if ta:
                line += ", ArborX/filter = %.2fx" % (min(ta) / min(tf))
        if ta:
            line += " | ArborX %.2f s (weight %s) | ArborX/jz = %.2fx" % (min(ta), wa, min(ta) / min(tj))
            line += (" | process CPU (user+sys, setup included): jz %.2f s, ArborX %.2f s, ArborX/jz = %.2fx"
                     % (min(cj), min(ca), min(ca) / min(cj)))
        print(line, flush=True)
    if a.scipy:
        m = int(a.scipy)
        pts = os.path.join(a.tmp, "halos%d.f32" % m)
        halos(m, pts)
        x = np.fromfile(pts, np.float32).reshape(-1, 3)
        sys.path.insert(0, os.path.join(ROOT, "Testing", "Python"))
        import mst_reference
        t0 = time.perf_counter()
        w, _ = mst_reference.scipy_emst(x)
        ts = time.perf_counter() - t0
        tj, out = timed([jz, str(m), pts], env, r"total=([0-9.]+)s")
        print("  scipy Delaunay+MST, %d halos points: %.2f s (weight %.6f) | jz-tree %.3f s | scipy/jz = %.1fx"
              % (m, ts, w, tj, ts / tj))
    if a.filter_hdbscan:
        hn = int(a.filter_hdbscan)
        pts = os.path.join(a.tmp, "halos%d.f32" % hn)
        if not os.path.exists(pts):
            halos(hn, pts)
        t, peak = filter_run(pts, "hdbscan", env)
        print("HDBSCAN filter, %d halos points (MinClusterSize 20): %.2f s, peak %.1f B/point beyond input"
              % (hn, t, peak), flush=True)
    hdb = tool("jz_hdbscan")
    for hn, lib in ((int(a.hdbscan_n), True), (int(a.hdbscan_jz_n), False)):
        if hn <= 0:  # --hdbscan-n 0 / --hdbscan-jz-n 0: leave that run out
            continue
        pts32 = os.path.join(a.tmp, "halos%d.f32" % hn)
        if not os.path.exists(pts32):
            halos(hn, pts32)
        x = np.fromfile(pts32, np.float32).reshape(-1, 3).astype(np.float64)
        f64 = os.path.join(a.tmp, "halos%d.f64" % hn)
        x.tofile(f64)
        out_bin = os.path.join(a.tmp, "hdbscan.bin")
        tj, out = timed([hdb, f64, out_bin, "20", "0", "eom", "0"], env, r"time=([0-9.]+)s")
        peak = float(re.search(r"peak_beyond_input=([0-9.]+)", out).group(1))
        raw = np.fromfile(out_bin, np.uint8)
        labels = raw[:8 * hn].view(np.int64)
        line = ("HDBSCAN* %d halos points (min_cluster_size 20): jz-tree %.2f s, %d clusters, "
                "peak %.1f B/point beyond the float64 input" % (hn, tj, labels.max() + 1, peak))
        if lib and os.path.isdir(a.hdbscan_path):
            code = ("import sys, time, numpy as np; sys.path.insert(0, %r); import hdbscan\n"
                    "x = np.fromfile(%r).reshape(-1, 3); t = time.perf_counter()\n"
                    "c = hdbscan.HDBSCAN(min_cluster_size=20, approx_min_span_tree=False, core_dist_n_jobs=%d).fit(x)\n"
                    "print('time=%%.3fs' %% (time.perf_counter() - t)); np.save(%r, c.labels_)"
                    % (a.hdbscan_path, f64, a.threads, os.path.join(a.tmp, "lib.npy")))
            tl, _ = timed([sys.executable, "-c", code], env, r"time=([0-9.]+)s")
            ref = np.load(os.path.join(a.tmp, "lib.npy"))
            agree = label_agreement(labels, ref)
            line += " | hdbscan 0.8.33 %.2f s, %d clusters | lib/jz = %.1fx | same cluster for %.4f of the points" % (
                tl, ref.max() + 1, tl / tj, agree)
        print(line, flush=True)


def label_agreement(a, b):
    """Fraction of points whose label matches under the best one-to-one
    renumbering by overlap (noise must match noise)."""
    good = np.sum((a < 0) & (b < 0))
    pairs = {}
    for x, y in zip(a[(a >= 0) & (b >= 0)], b[(a >= 0) & (b >= 0)]):
        pairs[(x, y)] = pairs.get((x, y), 0) + 1
    used_a, used_b = set(), set()
    for (x, y), k in sorted(pairs.items(), key=lambda t: -t[1]):
        if x not in used_a and y not in used_b:
            used_a.add(x)
            used_b.add(y)
            good += k
    return good / len(a)


if __name__ == "__main__":
    main()
