"""KNNDensity neighbour lists against scipy cKDTree on many point layouts.

Usage: pvpython test_knn_geometry.py CASE   (CASE from CASES below, or "all")
"""
import sys

import numpy as np

import jztest
from jztest import Checker, knn, polydata, verify_neighbors

rng = np.random.default_rng(12345)


def clustered(n, dtype):
    centres = rng.random((10, 3))
    which = rng.integers(0, 10, n)
    scale = rng.uniform(0.002, 0.05, 10)[which]
    pts = centres[which] + rng.normal(size=(n, 3)) * scale[:, None]
    return pts.astype(dtype)


def lattice(m, dtype):
    g = np.arange(m, dtype=np.float64)
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1).astype(dtype)


# name -> list of (label, points, k, extra properties)
def cases(name):
    if name == "uniform":
        for dtype in (np.float32, np.float64):
            for n, k in ((5, 1), (5, 5), (2000, 16), (50000, 32)):
                yield f"uniform n={n} k={k} {np.dtype(dtype).name}", rng.random((n, 3)).astype(dtype), k
    elif name == "large":
        yield "uniform n=200000 k=16 float32", rng.random((200000, 3)).astype(np.float32), 16
    elif name == "clustered":
        for dtype in (np.float32, np.float64):
            yield f"clustered n=30000 k=32 {np.dtype(dtype).name}", clustered(30000, dtype), 32
        yield "clustered n=20000 k=100 float32", clustered(20000, np.float32), 100
    elif name == "duplicates":
        base = rng.random((500, 3))
        pts = np.repeat(base, 7, axis=0)  # every point 7 times
        rng.shuffle(pts)
        for dtype in (np.float32, np.float64):
            yield f"duplicated x7 k=16 {np.dtype(dtype).name}", pts.astype(dtype), 16
            yield f"duplicated x7 k=40 {np.dtype(dtype).name}", pts.astype(dtype), 40
        yield "all points identical k=10", np.zeros((64, 3), np.float32), 10
    elif name == "lattice":
        for dtype in (np.float32, np.float64):
            pts = lattice(14, dtype)  # 2744 points, many exactly tied distances
            for k in (27, 50, 120):
                yield f"lattice 14^3 k={k} {np.dtype(dtype).name}", pts, k
    elif name == "planar":
        pts = rng.random((20000, 3))
        pts[:, 2] = 0.25
        yield "planar z=0.25 k=32 float32", pts.astype(np.float32), 32
        line = np.zeros((3000, 3))
        line[:, 0] = rng.random(3000)
        yield "collinear k=16 float64", line, 16
    elif name == "outliers":
        pts = rng.random((20000, 3))
        pts[:10] = rng.normal(size=(10, 3)) * 1e6  # far outliers
        pts[10] = (1e9, -1e9, 1e9)
        for dtype in (np.float32, np.float64):
            yield f"far outliers k=16 {np.dtype(dtype).name}", pts.astype(dtype), 16
    elif name == "offset":
        pts = 1e6 + rng.random((20000, 3)) * 1e-2
        yield "offset 1e6 + [0,1e-2) k=32 float64", pts, 32
        pts32 = (1e6 + rng.random((20000, 3)) * 1e3).astype(np.float32)
        yield "offset 1e6 + [0,1e3) k=32 float32", pts32, 32
        tiny = rng.random((5000, 3)) * 1e-30
        yield "tiny scale 1e-30 k=16 float64", tiny, 16
    elif name == "signs":
        pts = rng.normal(size=(20000, 3))
        pts[:100] = 0.0
        pts[100:200] *= 1e-40  # subnormal in float32
        for dtype in (np.float32, np.float64):
            yield f"mixed signs, zeros k=32 {np.dtype(dtype).name}", pts.astype(dtype), 32
    else:
        raise SystemExit(f"unknown case {name}")


def main(names):
    c = Checker()
    for name in names:
        for label, pts, k in cases(name):
            print(label)
            run = knn(polydata(pts), NumberOfNeighbors=k, OutputNeighbors=1, Device="CPU")
            c.check(not run.errors, f"{label}: no error {run.errors[:1]}")
            c.check(run.device() == "CPU", f"{label}: JZDevice == CPU")
            expected = np.float32 if pts.dtype == np.float32 else np.float64
            c.check(run.array("Density") is not None and run.array("Density").dtype == expected,
                    f"{label}: Density has the points' precision")
            verify_neighbors(c, run, pts, None, k, label=label)
    c.finish()


ALL = ["uniform", "large", "clustered", "duplicates", "lattice", "planar", "outliers", "offset", "signs"]
if __name__ == "__main__":
    arg = sys.argv[1] if len(sys.argv) > 1 else "all"
    main(ALL if arg == "all" else [arg])
