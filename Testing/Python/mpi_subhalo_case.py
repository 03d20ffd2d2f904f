"""SubhaloFinder on every rank's piece, run by test_mpi_subhalo.py. Every rank
builds the same host with satellites (test_subhalo.py) plus a second group
and a third that straddles the periodic box's boundary, with GroupIds,
masses, velocities and GlobalIds, keeps a random share, runs SubhaloFinder
and writes OUT/rank<r>.npz. In serial mode one process runs the whole set
(the reference).

Usage: mpiexec -n P pvbatch --symmetric mpi_subhalo_case.py parallel OUT
       pvbatch mpi_subhalo_case.py serial OUT P
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from jztest import polydata  # noqa: E402
from test_subhalo import arr, host_with_satellites, plummer, subhalos  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402

CATALOGUE = ("SubhaloId", "GroupId", "SubhaloRank", "Count", "Mass", "MostBoundId",
             "ParentSubhaloId", "Vmax", "RVmax", "HalfMassRadius", "CentreOfPotential",
             "CenterOfMass", "MeanVelocity", "VelocityDispersion")


def dataset():
    x, v, truth = host_with_satellites(host=3000, seed=3)
    rng = np.random.default_rng(9)
    x2, v2 = plummer(rng, 600, 0.1, (20, 20, 20), (5, 0, 0))
    x3, v3 = plummer(rng, 500, 0.1, (49.95, 25, 25), (0, 0, 0))
    x = np.mod(np.concatenate([x + 25, x2, x3]), 50.0)  # in the box [0, 50)^3
    v = np.concatenate([v, v2, v3])
    gid = np.concatenate([np.zeros(len(truth)), np.ones(600), np.full(500, 2)]).astype(np.int64)
    n = len(x)
    ids = np.arange(n, dtype=np.int64) * 5 + 3
    return x, v, 1.0 + (np.arange(n) % 2), gid, ids


def run(x, v, m, gid, ids, out, without_groups=False):
    arrays = {"Velocities": v, "Mass": m, "GroupId": gid, "GlobalIds": ids}
    props = dict(VelocityArray=["POINTS", "Velocities"], MassArray=["POINTS", "Mass"],
                 Periodic=1, BoxBounds=[0, 50, 0, 50, 0, 50])
    parts, cat, errors = subhalos(polydata(x, arrays), **props)
    # Bad input on one rank only (its piece without GroupId): every rank fails.
    if without_groups:
        del arrays["GroupId"]
    bad, _, bad_errors = subhalos(polydata(x, arrays), **props)
    res = dict(ids=ids, errors="\n".join(errors), bad_errors="\n".join(bad_errors),
               bad_points=bad.GetNumberOfPoints())
    for name in ("SubhaloId", "SubhaloRank"):
        a = arr(parts, name)
        if a is not None:
            res[name] = a
    for name in CATALOGUE:  # a rank may own no rows
        if cat.GetNumberOfPoints() > 0 and arr(cat, name) is not None:
            res["cat_" + name] = arr(cat, name)
    np.savez(out, **res)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    x, v, m, gid, ids = dataset()
    if mode == "serial":
        run(x, v, m, gid, ids, os.path.join(out, "serial.npz"))
        return
    ctrl = vtkMultiProcessController.GetGlobalController()
    r, P = ctrl.GetLocalProcessId(), ctrl.GetNumberOfProcesses()
    sel = np.flatnonzero(np.random.default_rng(5).integers(0, P, len(x)) == r)
    run(x[sel], v[sel], m[sel], gid[sel], ids[sel], os.path.join(out, f"rank{r}.npz"),
        without_groups=(r == P - 1))


main()
