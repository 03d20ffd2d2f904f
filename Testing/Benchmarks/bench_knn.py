"""kNN density benchmark, side by side in one run, interleaved: the KNNDensity
filter end to end in pvpython (Device=CPU, float32 points, density only), the
jz-tree kernel alone (jz_bench_knn), nanoflann and ArborX 2.1 (Kokkos OpenMP),
the anchors of ../shared/anchors built in /work/peers (JZ_PEERS). Every
program runs each repeat in turn; the minima of wall and CPU seconds (user +
sys of the process, OpenMP spin included) are reported, with the ratios
peer / filter and peer / kernel. Not a test: nothing is asserted.

  pvpython Testing/Benchmarks/bench_knn.py [--n 1e6 1e7] [--points uniform halos]
      [--k 16 64] [--threads 2] [--repeats 3] [--vtk] [--vtk-stdthread]

--vtk adds VTK's own path, vtkStatisticalOutlierRemoval (vtkStaticPointLocator::
FindClosestNPoints for every point) with VTK's default SMP backend, once per
case; --vtk-stdthread also with VTK_SMP_BACKEND_IN_USE=STDThread in a child.

Points: numpy uniform in the unit cube (seed 1) or ../shared/anchors/halos.py,
written to one float32 file that every program reads (the nanoflann anchor
draws its own uniform points; on halos nanoflann runs inside jz_bench_knn,
nanoflannonly, with the anchor's leaf size).
"""
import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_scaling as bs  # noqa: E402  (programs, points, run_timed)

import numpy as np  # noqa: E402

PLUGIN = os.path.join(os.environ.get("JZ_BUILD_DIR", os.path.join(bs.ROOT, "build")), "lib",
                      "paraview-5.11", "plugins", "JZTree", "JZTree.so")


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
    """(wall, CPU) seconds of one KNNDensity update; CPU of this process."""
    from paraview import simple
    producer = simple.TrivialProducer()
    producer.GetClientSideObject().SetOutput(poly)
    knn = KNNDensity(Input=producer, NumberOfNeighbors=k, Device="CPU")  # noqa: F821 (LoadPlugin)
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    knn.UpdatePipeline()
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    simple.Delete(knn)
    simple.Delete(producer)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def time_vtk(poly, k):
    from vtkmodules.vtkFiltersPoints import vtkStatisticalOutlierRemoval
    f = vtkStatisticalOutlierRemoval()
    f.SetInputData(poly)
    f.SetSampleSize(k)
    t0 = time.perf_counter()
    f.Update()
    return time.perf_counter() - t0


def time_vtk_stdthread(path, n, k):
    """VTK's path with the STDThread SMP backend, in a child pvpython."""
    env = dict(os.environ, VTK_SMP_BACKEND_IN_USE="STDThread")
    code = ("import sys, numpy as np; sys.path.insert(0, %r); import bench_knn as b; "
            "p = np.fromfile(%r, dtype=np.float32).reshape(%d, 3); "
            "print('VTKTIME', b.time_vtk(b.to_polydata(p), %d))"
            % (os.path.dirname(os.path.abspath(__file__)), path, n, k))
    pvpython = shutil.which("pvpython") or "/usr/bin/pvpython"
    out = subprocess.run([pvpython, "-c", code], env=env, capture_output=True, text=True)
    m = re.search(r"VTKTIME ([0-9.eE+-]+)", out.stdout)
    return float(m.group(1)) if m else float("nan")


def peer_nanoflann(n, path, args):
    if args.points == "uniform" and bs.NANOFLANN:
        return bs.run_timed([bs.NANOFLANN, str(n), str(args.k)], r"total=([0-9.]+)s")
    return bs.run_timed([bs.JZ_BENCH_KNN, str(n), str(args.k), path, str(args.threads),
                         "nanoflannonly"], r"nanoflann=([0-9.]+)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", nargs="+", type=float, default=[1e6])
    ap.add_argument("--points", nargs="+", default=["uniform", "halos"])
    ap.add_argument("--k", nargs="+", type=int, default=[16, 64])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--vtk", action="store_true")
    ap.add_argument("--vtk-stdthread", action="store_true")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    from paraview import simple
    simple.LoadPlugin(PLUGIN, ns=globals())

    programs = [
        ("filter", None),
        ("kernel", lambda n, path, a: bs.knn_ours(n, path, a)),
        ("nanoflann", peer_nanoflann),
        ("ArborX", lambda n, path, a: bs.knn_arborx(n, path, a)),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.n]:
            for points in args.points:
                path = os.path.join(tmp, "points.f32")
                bs.write_points(points, n, path)
                poly = to_polydata(np.fromfile(path, dtype=np.float32).reshape(n, 3))
                for k in args.k:
                    run = argparse.Namespace(k=k, threads=args.threads, points=points)
                    best = {name: [float("inf"), float("inf")] for name, _ in programs}
                    for _ in range(args.repeats):
                        for name, runner in programs:
                            wall, cpu = time_filter(poly, k) if runner is None else runner(n, path, run)
                            if wall is not None:
                                best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
                    rows.append((n, points, k, best))
                    print("N=%d %s K=%d: " % (n, points, k) + ", ".join(
                        "%s %.3f s / %.3f s CPU" % (name, *best[name]) for name, _ in programs),
                        flush=True)
                    if args.vtk:
                        t = time_vtk(poly, k)
                        print("  VTK StatisticalOutlierRemoval %.2f s: %.1fx the filter" %
                              (t, t / best["filter"][0]), flush=True)
                    if args.vtk_stdthread:
                        t = time_vtk_stdthread(path, n, k)
                        print("  VTK (STDThread) %.2f s: %.1fx the filter" %
                              (t, t / best["filter"][0]), flush=True)
    print("\nload average %.1f %.1f %.1f; wall (CPU) ratios, minima of %d" %
          (*os.getloadavg(), args.repeats))
    print("%-9s %-8s %3s %22s %22s %22s %22s" % ("N", "points", "K", "nanoflann/filter",
                                                 "ArborX/filter", "nanoflann/kernel",
                                                 "ArborX/kernel"))
    for n, points, k, b in rows:
        cells = []
        for ours in ("filter", "kernel"):
            for peer in ("nanoflann", "ArborX"):
                cells.append("%.2fx (%.2fx)" % (b[peer][0] / b[ours][0], b[peer][1] / b[ours][1]))
        print("%-9d %-8s %3d %22s %22s %22s %22s" % (n, points, k, *cells))


if __name__ == "__main__":
    main()
