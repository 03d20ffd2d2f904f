"""Union-find stress test of the CPU friends-of-friends: large percolating and
clustered point sets, run many times with far more OpenMP threads than cores
(8 and 16), every run compared with scipy (cKDTree.query_pairs plus
csgraph.connected_components, distances in double from the same coordinates).
A racing contraction that leaves a pointer at a non-root shows up as a wrong
label in some run.

Usage: python3 fof_stress.py RUNNER [--long]
  RUNNER  the jz_fof_stress_runner executable
  --long  larger sets and more repetitions (CTest label "long")
Exit codes: 0 passed, 1 a run failed, 77 skipped (no numpy/scipy).
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree
except ImportError as e:  # a case that cannot run says so (CTest: SKIP_RETURN_CODE 77)
    print("skipped: the references need numpy and scipy (%s)" % e)
    sys.exit(77)


def percolating(n, rng):
    """Uniform points; with b = 0.7 (above the percolation threshold ~0.65) a
    giant group spans the box, so union-find trees get deep."""
    return rng.random((n, 3)), 0.7


def clustered(n, rng):
    """85% of the points in isothermal spheres of 20 to 20000 points at an
    overdensity of ~200, the rest uniform; b = 0.2 as in cosmology."""
    parts, placed = [], 0
    in_halos = int(0.85 * n)
    while placed < in_halos:
        m = min(int(20 / max(rng.random(), 1e-9)), 20000, in_halos - placed)
        radius = (3 * m / (4 * np.pi * 200 * n)) ** (1 / 3)
        v = rng.standard_normal((m, 3))
        v *= (radius * rng.random(m) / np.linalg.norm(v, axis=1))[:, None]
        parts.append(rng.random(3) + v)
        placed += m
    parts.append(rng.random((n - placed, 3)))
    return np.concatenate(parts), 0.2


def wrap(points, dtype):
    """Into [0, 1) in the stored precision (rounding may give exactly 1)."""
    p = np.mod(points, 1.0).astype(dtype)
    p[p >= 1] = 0
    return p


def scipy_labels(points, l, periodic):
    """Per point the smallest input index of its group."""
    p = points.astype(np.float64)
    tree = cKDTree(p, boxsize=1.0 if periodic else None)
    pairs = tree.query_pairs(l, output_type="ndarray")
    n = len(p)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    smallest = np.full(comp.max() + 1, n, dtype=np.int64)
    np.minimum.at(smallest, comp, np.arange(n, dtype=np.int64))
    return smallest[comp]


def main():
    runner = sys.argv[1]
    long_mode = "--long" in sys.argv[2:]
    n = 2_000_000 if long_mode else 300_000
    repeats = 25 if long_mode else 6
    rng = np.random.default_rng(16)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (("percolating", percolating), ("clustered", clustered)):
            raw, b = make(n, rng)
            for dtype, periodic in ((np.float32, True), (np.float64, False)):
                pts = wrap(raw, dtype)
                l = b * len(pts) ** (-1 / 3)
                ref = scipy_labels(pts, l, periodic)
                groups = len(np.unique(ref))
                pts_file = os.path.join(tmp, "points.bin")
                ref_file = os.path.join(tmp, "reference.bin")
                pts.tofile(pts_file)
                ref.tofile(ref_file)
                precision = "float" if dtype == np.float32 else "double"
                for threads in (8, 16):
                    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
                    done = subprocess.run(
                        os.environ.get("JZ_RUNNER_EMULATOR", "").split() +
                        [runner, pts_file, precision, repr(l), "1" if periodic else "0",
                         ref_file, str(repeats)],
                        env=env, capture_output=True, text=True)
                    what = (f"{name} {precision} {'periodic' if periodic else 'open'} "
                            f"N={len(pts)} groups={groups} threads={threads}")
                    print(f"{what}: {done.stdout.strip()}")
                    if done.returncode != 0:
                        failures += 1
                        print(f"FAILED {what}:\n{done.stderr}")
    print("fof_stress:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
