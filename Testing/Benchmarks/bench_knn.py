"""kNN density benchmark, side by side on the same machine and thread count:

  * the KNNDensity filter end to end in pvpython (Device=CPU),
  * the jz-tree kernel alone and nanoflann (build + OpenMP query), via the
    compiled jz_bench_knn program,
  * VTK's own path: vtkStatisticalOutlierRemoval (vtkStaticPointLocator::
    FindClosestNPoints for every point), with VTK's default SMP backend and,
    when asked, with VTK_SMP_BACKEND_IN_USE=STDThread in a child process.

Prints times and ratios. Not a test: nothing is asserted.

  pvpython Testing/Benchmarks/bench_knn.py [--n 1e6 1e7] [--kinds uniform clustered]
      [--k 16] [--threads 2] [--skip-vtk-above 2e6] [--vtk-stdthread]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("JZ_BUILD_DIR", os.path.join(ROOT, "build"))
PLUGIN = os.path.join(BUILD, "lib", "paraview-5.11", "plugins", "JZTree", "JZTree.so")
KERNEL_BENCH = os.path.join(BUILD, "bin", "jz_bench_knn")


def make_points(kind, n, seed=1):
    """Uniform in the unit cube, or 80% of the points in 18 Gaussian clumps."""
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 3))
    if kind == "clustered":
        centers = rng.random((18, 3))
        sizes = 0.002 + 0.03 * np.arange(18) / 18.0
        clumped = np.arange(n) % 5 != 0
        which = (np.arange(n) * 7919) % 18
        pts[clumped] = centers[which[clumped]] + sizes[which[clumped], None] * rng.standard_normal(
            (clumped.sum(), 3))
    return pts.astype(np.float32)


def to_polydata(pts):
    from vtkmodules.util.numpy_support import numpy_to_vtk
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkPolyData
    points = vtkPoints()
    points.SetData(numpy_to_vtk(pts, deep=True))
    poly = vtkPolyData()
    poly.SetPoints(points)
    return poly


def time_filter(poly, k):
    from paraview import simple
    producer = simple.TrivialProducer()
    producer.GetClientSideObject().SetOutput(poly)
    knn = KNNDensity(Input=producer, NumberOfNeighbors=k, Device="CPU")  # from LoadPlugin
    t0 = time.perf_counter()
    knn.UpdatePipeline()
    seconds = time.perf_counter() - t0
    simple.Delete(knn)
    simple.Delete(producer)
    return seconds


def time_vtk(poly, k):
    from vtkmodules.vtkFiltersPoints import vtkStatisticalOutlierRemoval
    f = vtkStatisticalOutlierRemoval()
    f.SetInputData(poly)
    f.SetSampleSize(k)
    t0 = time.perf_counter()
    f.Update()
    return time.perf_counter() - t0


def time_vtk_stdthread(kind, n, k):
    """VTK's path with the STDThread SMP backend, in a child pvpython."""
    env = dict(os.environ, VTK_SMP_BACKEND_IN_USE="STDThread")
    code = ("import sys; sys.path.insert(0, %r); import bench_knn as b; "
            "print('VTKTIME', b.time_vtk(b.to_polydata(b.make_points(%r, %d)), %d))"
            % (os.path.dirname(os.path.abspath(__file__)), kind, n, k))
    pvpython = shutil.which("pvpython") or "/usr/bin/pvpython"
    out = subprocess.run([pvpython, "-c", code], env=env, capture_output=True, text=True)
    m = re.search(r"VTKTIME ([0-9.eE+-]+)", out.stdout)
    return float(m.group(1)) if m else float("nan")


def kernel_and_nanoflann(kind, n, k, threads):
    out = subprocess.run([KERNEL_BENCH, str(n), str(k), kind, str(threads)], capture_output=True,
                         text=True).stdout
    m = re.search(r"jz_cpu=([0-9.]+) nanoflann=([0-9.]+)", out)
    return (float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", nargs="+", type=float, default=[1e6])
    ap.add_argument("--kinds", nargs="+", default=["uniform", "clustered"])
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-vtk-above", type=float, default=2e6)
    ap.add_argument("--vtk-stdthread", action="store_true")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    from paraview import simple
    simple.LoadPlugin(PLUGIN, ns=globals())

    rows = []
    for n in [int(x) for x in args.n]:
        for kind in args.kinds:
            poly = to_polydata(make_points(kind, n))
            t_filter = min(time_filter(poly, args.k) for _ in range(2))
            t_kernel, t_nano = kernel_and_nanoflann(kind, n, args.k, args.threads)
            t_vtk = time_vtk(poly, args.k) if n <= args.skip_vtk_above else float("nan")
            t_vtk_std = time_vtk_stdthread(kind, n, args.k) if args.vtk_stdthread else float("nan")
            rows.append((n, kind, t_filter, t_kernel, t_nano, t_vtk, t_vtk_std))
            print("N=%d %s K=%d: filter %.3f s, kernel %.3f s, nanoflann %.3f s, VTK %.2f s, "
                  "VTK STDThread %.2f s" % (n, kind, args.k, t_filter, t_kernel, t_nano, t_vtk, t_vtk_std),
                  flush=True)
    print("\n%-10s %-10s %14s %14s %12s %16s" % ("N", "kind", "nanoflann/flt", "nanoflann/krn",
                                                "VTK/filter", "VTK-STD/filter"))
    for n, kind, tf, tk, tn, tv, ts in rows:
        print("%-10d %-10s %13.2fx %13.2fx %11.2fx %15.2fx" % (n, kind, tn / tf, tn / tk, tv / tf, ts / tf))


if __name__ == "__main__":
    main()
