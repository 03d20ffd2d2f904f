#!/usr/bin/python3
"""SPHSmooth under mpiexec pvbatch equals a serial run: mpi_sph_smooth_case.py
once serially (the reference for a P-rank split) and once on P ranks, then
per case and split: every point exactly once and in the order its rank held
it, SmoothingLength identical, Density and every smoothed array, gradient,
divergence, curl and dispersion equal up to summation order (1e-9 relative to
the array's scale). With P > 1 also: a NaN on one rank fails every rank with
the message and an empty output, without hanging.

Usage: test_mpi_sph_smooth.py P   (PVBATCH, MPIEXEC from the environment or PATH)
"""
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checker  # noqa: E402
from mpi_env import mpiexec_command, pvbatch, run_pvbatch_ranks  # noqa: E402

OUTPUTS = ("SmoothingLength", "Density", "Velocity_Smoothed", "Velocity_Divergence",
           "Velocity_Curl", "Velocity_Dispersion", "Temperature_Smoothed", "Temperature_Gradient")
SPLITS = ("random", "slabs", "empty", "one", "multiblock", "partitioned")
c = Checker()


def run(cmd, ranks):
    return run_pvbatch_ranks(cmd, ranks, c.check) is not None


def compare(tmp, case, kind, P):
    tag = f"{case}.{kind}"
    ref = dict(np.load(os.path.join(tmp, tag + ".serial.npz")))
    ranks = [dict(np.load(os.path.join(tmp, f"{tag}.rank{r}.npz"))) for r in range(P)]
    errors = [str(d["errors"]) for d in ranks]
    if not c.check(not any(errors) and not str(ref["errors"]), f"{tag}: no errors {errors}"):
        return
    index = np.concatenate([d["index"] for d in ranks])
    c.check(np.array_equal(index, ref["index"]), f"{tag}: every point once, in its rank's order")
    for name in OUTPUTS:
        got = np.concatenate([d[name] for d in ranks if name in d])
        want = ref[name]
        if not c.check(got.shape == want.shape, f"{tag}: {name} shape {got.shape}"):
            continue
        if name == "SmoothingLength":
            c.check(np.array_equal(got, want), f"{tag}: SmoothingLength identical")
            continue
        scale = np.abs(want).max()
        err = np.abs(got - want).max() / scale
        c.check(err <= 1e-9, f"{tag}: {name} equal up to summation order ({err:.1e} of its scale)")


def main():
    P = int(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix=f"jz-sph-smooth-mpi{P}-")
    try:
        case = os.path.join(HERE, "mpi_sph_smooth_case.py")
        if not run([pvbatch(), case, "serial", tmp, str(P)], 1):
            return
        if not run(mpiexec_command(P) + [pvbatch(), "--symmetric", case, "parallel", tmp], P):
            return
        for name in ("periodic", "open"):
            for kind in SPLITS:
                compare(tmp, name, kind, P)
        if P > 1:
            bad = [dict(np.load(os.path.join(tmp, f"bad.rank{r}.npz"))) for r in range(P)]
            c.check(all("non-finite" in str(d["errors"]) and "Velocity" in str(d["errors"]) and
                        int(d["points"]) == 0 for d in bad),
                    "a NaN on rank 1 fails every rank with the message and no output")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
c.finish()
