#!/usr/bin/python3
"""SubhaloFinder under mpiexec pvbatch equals a serial run: SubhaloId and
SubhaloRank identical per particle (matched by GlobalIds), every catalogue row
on exactly one rank with the serial row's integers identical and its values
equal up to summation order; GroupId missing on one rank fails every rank.

Usage: test_mpi_subhalo.py P   (PVBATCH, MPIEXEC from the environment or PATH)
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

c = Checker()


def main():
    P = int(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix=f"jz-subhalo-mpi{P}-")
    try:
        case = os.path.join(HERE, "mpi_subhalo_case.py")
        if not run_pvbatch_ranks([pvbatch(), case, "serial", tmp, str(P)], 1, c.check):
            return
        if not run_pvbatch_ranks(mpiexec_command(P) + [pvbatch(), "--symmetric", case, "parallel",
                                                       tmp], P, c.check):
            return
        ref = dict(np.load(os.path.join(tmp, "serial.npz")))
        ranks = [dict(np.load(os.path.join(tmp, f"rank{r}.npz"))) for r in range(P)]
        for r, d in enumerate(ranks):
            c.check(not str(d["errors"]), f"rank {r}: no errors {str(d['errors'])[:200]}")
        c.check(all("GroupId" in str(d["bad_errors"]) and int(d["bad_points"]) == 0 for d in ranks),
                "GroupId missing on the last rank: every rank reports it, empty outputs, no hang")
        ids = np.concatenate([d["ids"] for d in ranks])
        pos = {int(g): i for i, g in enumerate(ref["ids"])}
        at = np.array([pos[int(g)] for g in ids])
        c.check(len(ids) == len(ref["ids"]), f"{len(ids)} particles over {P} ranks")
        for name in ("SubhaloId", "SubhaloRank"):
            got = np.concatenate([d[name] for d in ranks if name in d])
            c.check(len(got) == len(at) and np.array_equal(got, ref[name][at]), f"{name} identical")
        S = len(ref["cat_SubhaloId"])
        c.check(S >= 8, f"{S} subhalos in the reference")
        sid = np.concatenate([d.get("cat_SubhaloId", np.zeros(0, np.int64)) for d in ranks])
        c.check(np.array_equal(np.sort(sid), np.arange(S)), f"{len(sid)} catalogue rows, each on one rank")
        o = np.argsort(sid)
        for name in ("GroupId", "SubhaloRank", "Count", "MostBoundId", "ParentSubhaloId"):
            got = np.concatenate([d["cat_" + name] for d in ranks if "cat_" + name in d])[o]
            c.check(np.array_equal(got, ref["cat_" + name]), f"{name} identical")
        for name in ("Mass", "Vmax", "RVmax", "HalfMassRadius", "CentreOfPotential",
                     "CenterOfMass", "MeanVelocity", "VelocityDispersion"):
            got = np.concatenate([d["cat_" + name] for d in ranks if "cat_" + name in d])[o]
            c.check(np.allclose(got, ref["cat_" + name], rtol=1e-12, atol=1e-12), f"{name} equal")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
c.finish()
