#!/usr/bin/python3
"""The SPH maps under mpiexec pvbatch equal a serial run up to summation
order (1e-12 relative): each rank's image extent, wherever ParaView puts it
(whole or split over the ranks), holds the serial image's values there, and
the ranks' extents cover the whole image.

Usage: test_mpi_sph.py P   (PVBATCH, MPIEXEC from the environment or PATH)
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mpi_env import mpiexec_command, pvbatch  # noqa: E402

failures = 0


def check(ok, what):
    global failures
    print(("  ok  " if ok else "  FAIL") + " " + what, flush=True)
    failures += 0 if ok else 1
    return ok


def run(cmd, timeout):
    print("+", " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    except subprocess.TimeoutExpired:
        return check(False, f"finished within {timeout} s")
    if p.returncode != 0:
        print(p.stdout[-4000:])
    return check(p.returncode == 0, " ".join(os.path.basename(c) for c in cmd[-4:]))


def cells(extent):
    """The (i, j, k) index triples of an extent, x fastest (VTK's point order)."""
    i, j, k = [np.arange(extent[2 * d], extent[2 * d + 1] + 1) for d in range(3)]
    K, J, I = np.meshgrid(k, j, i, indexing="ij")
    return np.stack([I.ravel(), J.ravel(), K.ravel()], axis=1)


def main():
    P = int(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix=f"jz-sph-mpi{P}-")
    try:
        case = os.path.join(HERE, "mpi_sph_case.py")
        if not run([pvbatch(), case, "serial", tmp, str(P)], 300):
            return
        if not run(mpiexec_command(P) + [pvbatch(), "--symmetric", case, "parallel", tmp], 300):
            return
        ref = dict(np.load(os.path.join(tmp, "serial.npz")))
        ranks = [dict(np.load(os.path.join(tmp, f"rank{r}.npz"))) for r in range(P)]
        for key in ("projection", "slice", "volume"):
            check(str(ref[key + "_errors"]) == "", f"{key}: serial run without errors")
            whole = ref[key + "_extent"]
            index = {tuple(c): n for n, c in enumerate(cells(whole))}
            covered = np.zeros(len(index), dtype=bool)
            for r, d in enumerate(ranks):
                check(str(d[key + "_errors"]) == "", f"{key}: rank {r} without errors")
                ext = d[key + "_extent"]
                if ext[1] < ext[0] or ext[3] < ext[2] or ext[5] < ext[4]:
                    continue
                at = np.array([index[tuple(c)] for c in cells(ext)])
                covered[at] = True
                for a in ("SurfaceDensity", "Density", "Velocity", "Temperature"):
                    if key + "_" + a not in ref:
                        continue
                    want = ref[key + "_" + a][at]
                    got = d.get(key + "_" + a)
                    ok = got is not None and got.shape == want.shape and np.allclose(
                        got, want, rtol=1e-12, atol=1e-12 * np.abs(ref[key + "_" + a]).max())
                    check(ok, f"{key}: rank {r} extent {list(ext)} {a} = the serial image's")
            check(covered.all(), f"{key}: the ranks' extents cover the image")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("all checks passed" if failures == 0 else f"{failures} checks FAILED")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
