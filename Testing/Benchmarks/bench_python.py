"""The jztree Python module against scipy, side by side in one run,
interleaved: jztree.knn against cKDTree(points).query(points, k, workers=-1)
(both return ids and distances, tree build included), jztree.fof (groups,
their numbering and the catalogue of groups of at least min_size) against
cKDTree.query_pairs(l) + csgraph.connected_components (the groups of the same
linking length), and the Python call's overhead over its kernel run
(jztree._jztree._kernel_seconds(): the kernel alone, timed inside the call).
Minima over the repeats; ratios are scipy's time over jztree's. Not a test:
nothing is asserted.

  OMP_NUM_THREADS=2 PYTHONPATH=build/python /usr/bin/python3 \\
      Testing/Benchmarks/bench_python.py [--n 1e6] [--k 16] [--b 0.2] [--repeats 3]
      [--min-size 20] [--dtypes float32 float64]

Points: numpy uniform in the unit cube (seed 1). workers=-1 gives scipy every
core the machine has; OMP_NUM_THREADS sets jztree's threads.
"""
import argparse
import os
import time

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

import jztree


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def scipy_knn(pts, k):
    tree = cKDTree(pts)
    return tree.query(pts, k, workers=-1)


def scipy_fof(pts, l):
    pairs = cKDTree(pts).query_pairs(l, output_type="ndarray")
    n = len(pts)
    graph = coo_matrix((np.ones(len(pairs), np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--b", type=float, default=0.2, help="FoF linking length over the spacing")
    ap.add_argument("--min-size", type=int, default=20, help="jztree.fof's min_size")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    args = ap.parse_args()
    n = int(args.n)
    print(f"N = {n:.0e} uniform, K = {args.k}, b = {args.b}, OMP_NUM_THREADS = "
          f"{os.environ.get('OMP_NUM_THREADS', 'all')}, scipy workers = -1 "
          f"({os.cpu_count()} cores)")
    l = args.b * (1.0 / n) ** (1 / 3)
    for dtype in args.dtypes:
        pts = np.random.default_rng(1).random((n, 3)).astype(dtype)
        best = {}

        def keep(name, seconds):
            best[name] = min(best.get(name, np.inf), seconds)

        for _ in range(args.repeats):
            t, (ids, _) = timed(lambda: jztree.knn(pts, args.k))
            keep("knn", t)
            keep("knn kernel", jztree._jztree._kernel_seconds())
            t, (_, ref_ids) = timed(lambda: scipy_knn(pts, args.k))
            keep("scipy knn", t)
            t, (gid, gsize, _) = timed(lambda: jztree.fof(pts, l, min_size=args.min_size,
                                                        relative=False))
            keep("fof", t)
            keep("fof kernel", jztree._jztree._kernel_seconds())
            t, comp = timed(lambda: scipy_fof(pts, l))
            keep("scipy fof", t)
        same_knn = np.mean(ids == ref_ids)
        same_fof = np.array_equal(np.bincount(comp)[comp], gsize)
        print(f"\n{dtype}: minima of {args.repeats}")
        print(f"  knn  jztree {best['knn']:.3f} s (kernel {best['knn kernel']:.3f} s, overhead "
              f"{100 * (best['knn'] / best['knn kernel'] - 1):.1f} %), scipy cKDTree "
              f"{best['scipy knn']:.3f} s: ratio {best['scipy knn'] / best['knn']:.2f}x "
              f"(ids equal: {100 * same_knn:.3f} %)")
        print(f"  fof  jztree {best['fof']:.3f} s (kernel {best['fof kernel']:.3f} s, overhead "
              f"{100 * (best['fof'] / best['fof kernel'] - 1):.1f} %), scipy query_pairs + "
              f"connected_components {best['scipy fof']:.3f} s: ratio "
              f"{best['scipy fof'] / best['fof']:.2f}x (group sizes equal: {same_fof})")


if __name__ == "__main__":
    main()
