"""jztree with device="cuda" against device="cpu" on a GPU machine: numpy
and the built module only (no pytest), one line per function, exit status 1
when any differs. kNN, density, FoF, EMST and HDBSCAN* must agree bit for
bit; gravity within the tree code's own accuracy; the SPH projection up to
summation order.
    PYTHONPATH=<folder holding jztree> python3 device_check.py [N]
"""
import sys
import time

import numpy as np

print(f"python {sys.version.split()[0]}, numpy {np.__version__}", flush=True)
try:
    import jztree
except ImportError as e:  # e.g. a module built for another Python
    sys.exit(f"cannot load jztree: {e}")


def clustered(n, seed):
    rng = np.random.default_rng(seed)
    centres = rng.random((max(n // 2000, 4), 3))
    pick = rng.integers(0, len(centres), n)
    pts = centres[pick] + rng.normal(scale=0.01, size=(n, 3))
    pts[: n // 4] = rng.random((n // 4, 3))
    return np.mod(pts, 1.0)


def same(a, b):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def close(rtol):
    def check(a, b):
        return all(np.allclose(x, y, rtol=rtol, atol=rtol * np.abs(y).max())
                   for x, y in zip(a if isinstance(a, tuple) else (a,),
                                   b if isinstance(b, tuple) else (b,)))
    return check


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 200000
    if not jztree._jztree._cuda_usable():
        print("SKIPPED: no usable CUDA GPU")
        return 77
    pts = clustered(n, 3)
    cases = [
        ("knn", lambda d: jztree.knn(pts, 16, device=d), same),
        ("knn periodic", lambda d: jztree.knn(pts, 16, box=1.0, device=d), same),
        ("density", lambda d: jztree.density(pts, 32, device=d), same),
        ("fof", lambda d: jztree.fof(pts, 0.2, box=1.0, device=d)[:2], same),
        ("emst", lambda d: jztree.emst(pts[: n // 4], device=d), same),
        ("hdbscan", lambda d: jztree.hdbscan(pts[: n // 4], 20, device=d), same),
        ("gravity", lambda d: jztree.gravity(pts, theta=0.5, device=d), close(5e-3)),
        ("sph_projection", lambda d: jztree.sph_projection(pts, resolution=(512, 512), device=d),
         close(1e-6)),
    ]
    failed = 0
    for name, run, agree in cases:
        try:
            t0 = time.perf_counter()
            gpu = run("cuda")
            t1 = time.perf_counter()
            cpu = run("cpu")
            t2 = time.perf_counter()
            ok = agree(gpu, cpu)
            print(f"{name:16s} {'ok' if ok else 'DIFFERS'}  cuda {t1 - t0:.3f} s  cpu {t2 - t1:.3f} s",
                  flush=True)
        except Exception as e:  # report and go on to the next function
            ok = False
            print(f"{name:16s} ERROR {type(e).__name__}: {e}", flush=True)
        failed += not ok
    print(f"{failed} of {len(cases)} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
