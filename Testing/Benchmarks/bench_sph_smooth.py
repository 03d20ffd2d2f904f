"""SPHSmooth benchmark, side by side in one pvpython process, interleaved:
KNNDensity alone (K = 32, SPH cubic spline density: what the smoothing needs
first), SPHSmooth end to end (the same kNN, then a 3-component Velocity and a
1-component scalar: smoothed values, gradient, divergence, curl, dispersion),
and scipy's cKDTree (query with `workers`) plus numpy evaluating the same
definitions in chunks. Float32 points, unit masses, Device=CPU. Prints the
minima of wall and CPU seconds (user + sys of the process) over the repeats,
the ratio SPHSmooth / KNNDensity (what the smoothing costs on top of the kNN)
and scipy+numpy / SPHSmooth. Not a test: nothing is asserted; the numpy
results are compared with the filter's once, as a sanity check.

  pvpython Testing/Benchmarks/bench_sph_smooth.py [--n 1e6] [--points uniform halos]
      [--k 32] [--threads 2] [--repeats 3]

Points: numpy uniform in the unit cube (seed 1) or ../shared/anchors/halos.py.
"""
import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from scipy.spatial import cKDTree  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("JZ_SHARED_DIR", os.path.join(ROOT, "..", "shared"))
PLUGIN = os.path.join(os.environ.get("JZ_BUILD_DIR", os.path.join(ROOT, "build")), "lib",
                      "paraview-5.11", "plugins", "JZTree", "JZTree.so")


def make_points(kind, n):
    if kind == "uniform":
        return np.random.default_rng(1).random((n, 3)).astype(np.float32)
    sys.path.insert(0, os.path.join(SHARED, "anchors"))
    from halos import halos
    return np.ascontiguousarray(halos(n), dtype=np.float32)


def polydata(pts, arrays):
    from vtkmodules.util.numpy_support import numpy_to_vtk
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkPolyData
    points = vtkPoints()
    points.SetData(numpy_to_vtk(pts, deep=True))
    poly = vtkPolyData()
    poly.SetPoints(points)
    for name, values in arrays.items():
        a = numpy_to_vtk(np.ascontiguousarray(values), deep=True)
        a.SetName(name)
        poly.GetPointData().AddArray(a)
    return poly


def timed(fn):
    """(wall, cpu, result) of fn()."""
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), out


def w_cubic(q, h):
    w = np.where(q <= 0.5, 1 - 6 * q**2 + 6 * q**3, np.where(q <= 1.0, 2 * (1 - q) ** 3, 0.0))
    return w * (8.0 / np.pi) / h**3


def dwdr_cubic(q, h):
    d = np.where(q <= 0.5, -12 * q + 18 * q**2, np.where(q <= 1.0, -6 * (1 - q) ** 2, 0.0))
    return d * (8.0 / np.pi) / h**4


def scipy_smooth(pts, vel, scalar, k, workers, chunk=100000):
    """The definitions of doc/filters/SPHSmooth.md with cKDTree + numpy (unit
    masses): rho first (it is needed at the neighbours), then the sums."""
    p = pts.astype(np.float64)
    tree = cKDTree(p)
    dist, nb = tree.query(p, k, workers=workers)
    h = dist[:, -1]
    rho = np.empty(len(p))
    for a in range(0, len(p), chunk):
        s = slice(a, a + chunk)
        rho[s] = w_cubic(dist[s] / h[s, None], h[s, None]).sum(axis=1)
    out = {n: np.empty(len(p)) for n in ("div", "disp")}
    out["vs"] = np.empty((len(p), 3))
    out["curl"] = np.empty((len(p), 3))
    out["grad"] = np.empty((len(p), 3))
    for a in range(0, len(p), chunk):
        s = slice(a, a + chunk)
        j = nb[s]
        dx = p[s, None, :] - p[j]
        r = dist[s]
        q = r / h[s, None]
        vol = 1.0 / rho[j]
        w = vol * w_cubic(q, h[s, None])
        g = np.where(r > 0, vol * dwdr_cubic(q, h[s, None]) / np.where(r > 0, r, 1), 0.0)
        gw = g[:, :, None] * dx
        vj = vel[j]
        vs = (w[:, :, None] * vj).sum(axis=1)
        dv = vj - vel[s, None, :]
        out["vs"][s] = vs
        out["div"][s] = (dv * gw).sum(axis=(1, 2))
        out["curl"][s] = np.cross(gw, dv).sum(axis=1)
        out["disp"][s] = np.sqrt(((vj - vs[:, None, :]) ** 2).sum(axis=2).mean(axis=1))
        out["grad"][s] = ((scalar[j] - scalar[s, None])[:, :, None] * gw).sum(axis=1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--points", nargs="+", default=["uniform", "halos"])
    ap.add_argument("--k", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-scipy", action="store_true", help="KNNDensity and SPHSmooth only")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)

    from paraview.simple import Delete, LoadPlugin, TrivialProducer
    LoadPlugin(PLUGIN, ns=globals())
    KNNDensity, SPHSmooth = globals()["KNNDensity"], globals()["SPHSmooth"]
    from vtkmodules.util.numpy_support import vtk_to_numpy

    n = int(args.n)
    for kind in args.points:
        pts = make_points(kind, n)
        rng = np.random.default_rng(2)
        vel = rng.normal(size=(n, 3)) + pts.astype(np.float64)
        scalar = np.sin(4 * pts[:, 0].astype(np.float64)) + rng.random(n)
        src = TrivialProducer()
        src.GetClientSideObject().SetOutput(polydata(pts, {"Velocity": vel, "Temperature": scalar}))

        def run_knn():
            f = KNNDensity(Input=src, NumberOfNeighbors=args.k, Device="CPU")
            f.UpdatePipeline()
            Delete(f)

        def run_smooth():
            f = SPHSmooth(Input=src, NumberOfNeighbors=args.k, Device="CPU",
                          PointArrays=["Velocity", "Temperature"])
            f.UpdatePipeline()
            out = f.GetClientSideObject().GetOutputDataObject(0)
            pd = out.GetPointData()
            got = {name: vtk_to_numpy(pd.GetArray(name)).copy() for name in
                   ("Velocity_Smoothed", "Velocity_Divergence", "Velocity_Dispersion")}
            Delete(f)
            return got

        def run_scipy():
            return scipy_smooth(pts, vel, scalar, args.k, args.threads)

        programs = [("KNNDensity", run_knn), ("SPHSmooth", run_smooth)]
        if not args.no_scipy:
            programs.append(("scipy+numpy", run_scipy))
        best = {name: [1e30, 1e30] for name, _ in programs}
        results = {}
        for _ in range(args.repeats):
            for name, fn in programs:
                wall, cpu, out = timed(fn)
                best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
                results[name] = out
        print(f"{kind} n={n:.0e} K={args.k} threads={args.threads} repeats={args.repeats}")
        for name, (wall, cpu) in best.items():
            print(f"  {name:12s} wall {wall:8.3f} s  cpu {cpu:8.3f} s")
        s, kd = best["SPHSmooth"], best["KNNDensity"]
        print(f"  SPHSmooth / KNNDensity   wall {s[0] / kd[0]:.2f}x  cpu {s[1] / kd[1]:.2f}x")
        if not args.no_scipy:
            sc, ref, got = best["scipy+numpy"], results["scipy+numpy"], results["SPHSmooth"]
            diff = max(np.abs(got["Velocity_Smoothed"] - ref["vs"]).max() / np.abs(ref["vs"]).max(),
                       np.abs(got["Velocity_Dispersion"] - ref["disp"]).max() / ref["disp"].max())
            print(f"  scipy+numpy / SPHSmooth  wall {sc[0] / s[0]:.2f}x  cpu {sc[1] / s[1]:.2f}x")
            print(f"  largest difference filter vs numpy (relative to the array's max): {diff:.1e}")
        Delete(src)


main()
