"""Tree gravity benchmark, side by side in one run: the jz-tree kernel
(jz_bench_gravity, Plummer softening) and pytreegrav 1.4 (numba Barnes-Hut,
its M4-spline softening), on the same points and thread count, each at several
opening angles, each against its own direct summation at the same targets
(1000 by default: the 99th percentile of 200 is their third largest error,
which moved a matched ratio by 10 % between runs). Prints
wall and CPU times (minima of 3), 99th-percentile errors, and the speed ratios at matched accuracy: for
each pytreegrav run, the fastest jz run whose 99th-percentile acceleration
error is not larger (the default jz angles step by 0.01 near 1.07, where
on halos.py points jz's p99 passes pytreegrav's at theta 0.5). Not a test:
nothing is asserted.

  /usr/bin/python3 Testing/Benchmarks/bench_gravity.py [--n 1e6] [--kinds uniform clustered]
      [--threads 2] [--jz-thetas 0.5,0.7,0.9,1.0,1.05,...,1.1] [--ptg-thetas 0.5,0.7] [--eps 1e-3]
      [--targets 1000]

pytreegrav: PYTREEGRAV_SRC (default /work/peers/pytreegrav/src, built outside the
repository; ../shared/anchors/README-arborx-pytreegrav.md). Clustered points:
halos(N) of ../shared/anchors/halos.py (JZ_SHARED_DIR).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("JZ_BUILD_DIR", os.path.join(ROOT, "build"))
SHARED = os.environ.get("JZ_SHARED_DIR", os.path.join(ROOT, "..", "shared"))


def kernel_bench():
    for path in (os.path.join(BUILD, "bin", "jz_bench_gravity"),
                 os.path.join(BUILD, "Kernels", "bench", "jz_bench_gravity"),
                 os.path.join(ROOT, "build-kernels", "bench", "jz_bench_gravity")):
        if os.path.exists(path):
            return path
    sys.exit("jz_bench_gravity not found: build first (scripts/build.sh)")


def points(kind, n):
    if kind == "uniform":
        return np.random.default_rng(1).random((n, 3))
    sys.path.insert(0, os.path.join(SHARED, "anchors"))
    from halos import halos
    return halos(n).astype(np.float64)


def run_jz(x, thetas, eps, threads, targets):
    with tempfile.NamedTemporaryFile(suffix=".f64") as f:
        x.astype(np.float64).tofile(f.name)
        # Every core for the kernel: once pytreegrav's OpenMP runtime has run
        # in this process under OMP_PROC_BIND, this thread is pinned to one
        # core, and a child would inherit that mask.
        out = subprocess.run([kernel_bench(), f.name, thetas, str(eps), str(threads), str(targets)],
                             check=True, capture_output=True, text=True,
                             preexec_fn=lambda: os.sched_setaffinity(0, range(os.cpu_count()))).stdout
    rows = []
    for line in out.splitlines():
        m = re.search(r"theta=(\S+) time=(\S+) cpu=(\S+) .*accel_p99=(\S+) .*phi_p99=(\S+)", line)
        if m:
            rows.append(dict(theta=float(m.group(1)), time=float(m.group(2)), cpu=float(m.group(3)),
                             acc=float(m.group(4)), phi=float(m.group(5)), line=line))
    return rows


def run_pytreegrav(x, thetas, eps, threads, targets):
    sys.path.insert(0, os.environ.get("PYTREEGRAV_SRC", "/work/peers/pytreegrav/src"))
    import numba
    from pytreegrav import Accel, Potential, AccelTarget, PotentialTarget
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    n = len(x)
    m = np.full(n, 1.0 / n)
    h = np.full(n, eps)
    # The jz kernel's targets (GravityTargets.h).
    idx = np.array([(t * 2654435761) % n for t in range(targets)])
    acc_ref = AccelTarget(x[idx], x, m, h[idx], h, method="bruteforce", parallel=True)
    phi_ref = PotentialTarget(x[idx], x, m, h[idx], h, method="bruteforce", parallel=True)
    rows = []
    for theta in thetas:
        Accel(x, m, h, theta=theta, parallel=True)  # JIT and caches
        best = best_cpu = 1e30
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            acc = Accel(x, m, h, theta=theta, parallel=True)
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        phi = Potential(x, m, h, theta=theta, parallel=True)
        ea = np.linalg.norm(acc[idx] - acc_ref, axis=1) / np.linalg.norm(acc_ref, axis=1)
        ep = np.abs(phi[idx] - phi_ref) / np.abs(phi_ref)
        rows.append(dict(theta=theta, time=best, cpu=best_cpu, acc=float(np.percentile(ea, 99)),
                         phi=float(np.percentile(ep, 99))))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--kinds", nargs="+", default=["uniform", "clustered"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--jz-thetas", default="0.5,0.7,0.9,1.0,1.05,1.06,1.07,1.08,1.1")
    ap.add_argument("--ptg-thetas", default="0.5,0.7")
    ap.add_argument("--eps", type=float, default=1e-3)
    ap.add_argument("--targets", type=int, default=1000)
    a = ap.parse_args()
    n = int(a.n)
    for kind in a.kinds:
        x = points(kind, n)
        jz = run_jz(x, a.jz_thetas, a.eps, a.threads, a.targets)
        ptg = run_pytreegrav(x, [float(t) for t in a.ptg_thetas.split(",")], a.eps, a.threads,
                             a.targets)
        print(f"\n{kind} N={n} eps={a.eps} threads={a.threads} targets={a.targets} "
              f"(accelerations + potentials for jz; "
              f"accelerations only for pytreegrav)")
        print(f"{'code':12s} {'theta':>6s} {'time s':>8s} {'cpu s':>8s} {'acc p99':>9s} {'phi p99':>9s}")
        for name, rs in (("jz-tree", jz), ("pytreegrav", ptg)):
            for r in rs:
                print(f"{name:12s} {r['theta']:6.2f} {r['time']:8.3f} {r['cpu']:8.3f} {r['acc']:9.2e} "
                      f"{r['phi']:9.2e}")
        for p in ptg:
            ok = [r for r in jz if r["acc"] <= p["acc"]]
            if not ok:
                print(f"  pytreegrav theta {p['theta']}: no jz run as accurate")
                continue
            best = min(ok, key=lambda r: r["time"])
            print(f"  matched error: pytreegrav theta {p['theta']:.2f} (p99 {p['acc']:.2e}, "
                  f"{p['time']:.3f} s) vs jz theta {best['theta']:.2f} (p99 {best['acc']:.2e}, "
                  f"{best['time']:.3f} s): jz {p['time'] / best['time']:.2f}x faster wall, "
                  f"{p['cpu'] / best['cpu']:.2f}x CPU")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
