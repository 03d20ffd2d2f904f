"""Degenerate particle sets: each case side by side with a uniform
set of the same size, in the same run, with scipy as the named peer.

    /usr/bin/python3 Testing/Benchmarks/bench_degenerate.py RUNNER [RUNNER_BEFORE]
        [--repeats 2] [--cases a,b,...] [--timeout 150] [--threads N] [--relative]
        [--backend cpu|cuda]

RUNNER is build/bin/jz_degen_runner (Kernels/tests/DegenRunner.cpp);
RUNNER_BEFORE the same source built against the checkout before the change.
Times are the kernel call only (the minimum over the repeats), peak memory is
what the call added beyond the input (VmHWM), outputs included. A run past
--timeout (or killed by the address-space cap --vmem-gb) is reported as such.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree


def uniform(n, rng):
    return rng.random((n, 3))


def identical(n, rng):
    return np.tile(rng.random(3), (n, 1))


def sites(n, rng, nsites=20, copies=1000):
    p = rng.random((n, 3))
    centres = rng.random((nsites, 3))
    p[: nsites * copies] = np.repeat(centres, copies, axis=0)
    return p[rng.permutation(n)]


def half_identical(n, rng):
    p = rng.random((n, 3))
    p[: n // 2] = rng.random(3)
    return p[rng.permutation(n)]


def lattice(m):
    g = (np.arange(m) + 0.5) / m
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)


def plane(n, rng):
    p = rng.random((n, 3))
    p[:, 2] = 0.5
    return p


def line(n, rng):
    p = rng.random((n, 3))
    p[:, 1] = 0.5
    p[:, 2] = 0.5
    return p


# name: (mode, param, periodic, generator of the degenerate set)
def cases(rng):
    b = 0.2
    return {
        "identical_30k_k32": ("density", 32, True, lambda: identical(30000, rng)),
        "identical_1e5_k32": ("density", 32, True, lambda: identical(100000, rng)),
        "sites_2e5_k32": ("density", 32, True, lambda: sites(200000, rng)),
        "fof_1e6_half_identical": ("fof", b * 1e-2, True, lambda: half_identical(1000000, rng)),
        "lattice_64_k32": ("density", 32, True, lambda: lattice(64)),
        "lattice_128_k32": ("density", 32, True, lambda: lattice(128)),
        "plane_1e6_k32": ("density", 32, True, lambda: plane(1000000, rng)),
        "line_1e6_k32": ("density", 32, True, lambda: line(1000000, rng)),
    }


BACKEND = "cpu"


def run_jz(runner, mode, param, periodic, pts, tmp, timeout, threads, vmem_gb):
    path = os.path.join(tmp, "points.bin")
    pts.astype(np.float64).tofile(path)
    cmd = [runner, mode, "double", path, repr(float(param)), "1" if periodic else "0",
           "0", "0", "0", "1", "1", "1", "-", "-", BACKEND]
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)

    def cap():
        if BACKEND == "cuda":
            return  # the CUDA runtime reserves far more address space than it uses
        lim = int(vmem_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           preexec_fn=cap)
    except subprocess.TimeoutExpired:
        return None, None, "> %d s (stopped)" % timeout
    if r.returncode != 0:
        return None, None, "failed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:60]
    f = r.stdout.split()
    return float(f[1]), float(f[3]), ""


def run_scipy(mode, param, periodic, pts, timeout):
    """cKDTree (all cores) for kNN; query_pairs + connected_components for
    FoF. Skipped where the pair count alone would not fit in memory."""
    t0 = time.perf_counter()
    tree = cKDTree(pts, boxsize=1.0 if periodic else None)
    if mode == "fof":
        uniq, inverse, counts = np.unique(pts, axis=0, return_inverse=True, return_counts=True)
        note = ""
        if (counts.astype(np.float64) ** 2).sum() / 2 > 2e8:
            # Every pair of a run is a friend pair: too many for query_pairs.
            # Link the distinct positions instead (what a scipy user would do).
            t0 = time.perf_counter()
            tree, note = cKDTree(uniq, boxsize=1.0 if periodic else None), " (deduplicated)"
        pairs = tree.query_pairs(param, output_type="ndarray")
        n = tree.n
        g = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
        _, comp = connected_components(g, directed=False)
        if note:
            comp = comp[inverse.ravel()]
        return time.perf_counter() - t0, note
    tree.query(pts, k=int(param), workers=-1)
    return time.perf_counter() - t0, ""


def relative_lattices(runner, tmp):
    """FoF in Relative mode, b = 1, on periodic m^3 lattices
    in the unit box links every point (l = 1/m exactly)."""
    print("\n| lattice | FoF Relative b=1: largest group | points | time (s) |")
    print("|---|---|---|---|")
    for m in (16, 32, 64, 128):
        path, out = os.path.join(tmp, "lattice.bin"), os.path.join(tmp, "labels.bin")
        lattice(m).tofile(path)
        r = subprocess.run([runner, "fof", "double", path, "rel:1", "1", "0", "0", "0", "1", "1",
                            "1", "-", out], capture_output=True, text=True)
        if r.returncode != 0:
            print("| %d^3 | failed: %s | | |" % (m, r.stderr.strip()))
            continue
        labels = np.fromfile(out, dtype=np.int64)
        largest = np.unique(labels, return_counts=True)[1].max()
        print("| %d^3 | %d | %d | %s |" % (m, largest, m ** 3, r.stdout.split()[1]), flush=True)


def fmt(t, missing="", suffix=""):
    return missing if t is None else "%.3g%s" % (t, suffix)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runner")
    ap.add_argument("before", nargs="?")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--cases", default="")
    ap.add_argument("--timeout", type=int, default=150)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--vmem-gb", type=float, default=8.0)
    ap.add_argument("--no-scipy", action="store_true")
    ap.add_argument("--relative", action="store_true",
                    help="also FoF Relative b=1 on 16^3..128^3 lattices (item 3)")
    ap.add_argument("--backend", default="cpu", help="cpu or cuda (the runners' device)")
    a = ap.parse_args()
    global BACKEND
    BACKEND = a.backend
    rng = np.random.default_rng(12345)
    table = cases(rng)
    names = a.cases.split(",") if a.cases else list(table)
    print("| case | N | jz before (s) | jz after (s) | uniform after (s) | after/uniform | "
          "after B/point (uniform) | scipy (s) | scipy uniform (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            mode, param, periodic, gen = table[name]
            pts = gen()
            uni = uniform(len(pts), rng)
            run = lambda runner, p: run_jz(runner, mode, param, periodic, p, tmp, a.timeout,
                                          a.threads, a.vmem_gb)
            after, uafter, mem, umem = [], [], None, None
            for _ in range(a.repeats):
                t, m, note = run(a.runner, pts)
                if t is None:
                    after = [None]
                    break
                after.append(t)
                mem = m if mem is None else max(mem, m)
                tu, mu, _ = run(a.runner, uni)
                uafter.append(tu)
                umem = mu if umem is None else max(umem, mu)
            before_t, before_note = (None, "-")
            if a.before:
                before_t, _, before_note = run(a.before, pts)
            st, snote = (None, "-") if a.no_scipy else run_scipy(mode, param, periodic, pts,
                                                                   a.timeout)
            su, _ = (None, "-") if a.no_scipy else run_scipy(mode, param, periodic, uni,
                                                               a.timeout)
            t_after = None if None in after else min(after)
            t_uni = min(uafter) if uafter else None
            ratio = "%.2f" % (t_after / t_uni) if t_after and t_uni else "-"
            print("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                name, len(pts), fmt(before_t, before_note), fmt(t_after, note), fmt(t_uni, "-"),
                ratio, "%s (%s)" % (fmt(mem, "-"), fmt(umem, "-")), fmt(st, snote, snote), fmt(su, "-")),
                flush=True)
        if a.relative:
            relative_lattices(a.runner, tmp)


if __name__ == "__main__":
    sys.exit(main())
