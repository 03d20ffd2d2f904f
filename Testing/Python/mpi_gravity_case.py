"""TreeGravity and the FoF catalogue additions on every rank's piece, run by
test_mpi_gravity.py. Every rank builds the same deterministic particle set
(periodic unit box, halos at the box faces and corners so that groups cross
the boundary and rank borders, masses, GlobalIds), keeps a random share, runs
both filters (TreeGravity also with a float32 Query grid, in slabs over the
ranks but the last) and writes OUT/rank<r>.npz. In serial mode one process runs the
whole set (the reference).

Usage: mpiexec -n P pvbatch --symmetric mpi_gravity_case.py parallel OUT
       pvbatch mpi_gravity_case.py serial OUT P
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from jztest import polydata  # noqa: E402
from test_gravity import gravity  # noqa: E402
from test_halo_properties import arr, run_fof  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402


def dataset():
    rng = np.random.default_rng(31)
    parts = [rng.random((4000, 3))]
    for k, c in enumerate([[0.02, 0.5, 0.5], [0.98, 0.98, 0.02], [0.5, 0.5, 0.5], [0.3, 0.7, 0.2]]):
        parts.append(np.array(c) + 0.01 * (1 + k) * rng.standard_normal((400 + 100 * k, 3)))
    x = np.mod(np.concatenate(parts), 1.0)
    n = len(x)
    return x, 0.5 + rng.random(n), np.arange(n, dtype=np.int64) * 7 + 11


def query_grid():
    """A float32 grid over the box and beyond it, with its own index array."""
    g = (np.arange(9, dtype=np.float32) - 1) / np.float32(6)
    q = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    return q, np.arange(len(q), dtype=np.int64)


def run(x, m, ids, out, q, qids):
    pd = polydata(x, {"Mass": m, "GlobalIds": ids})
    g = gravity(pd, OpeningAngle=0.5, Softening=1e-3, MassArray=["POINTS", "Mass"])
    # The potential on a grid (Query input), its points spread over the ranks too.
    gq = gravity(pd, polydata(q, {"QueryIndex": qids}), OpeningAngle=0.5, Softening=1e-3,
                 MassArray=["POINTS", "Mass"])
    parts, cat, errors = run_fof(pd, LinkingLengthMode="Relative", LinkingLength=0.2,
                                 MinimumGroupSize=20, Periodic=1, BoxBounds=[0, 1, 0, 1, 0, 1],
                                 MassArray=["POINTS", "Mass"], PotentialCentres=1,
                                 Softening=1e-3, SphericalOverdensity=1, Overdensity=200.0)
    res = dict(ids=ids, x=x, m=m, q=q, gravity_errors="\n".join(g.errors + gq.errors),
               fof_errors="\n".join(errors))
    if g.array("Potential") is not None:
        res["Potential"] = g.array("Potential")
        res["Acceleration"] = g.array("Acceleration")
    if gq.array("Potential") is not None and len(qids) > 0:
        res["q_index"] = gq.array("QueryIndex")
        res["q_Potential"] = gq.array("Potential")
        res["q_Acceleration"] = gq.array("Acceleration")
    for name in ("GroupId", "MostBoundId", "CentreOfPotential", "SORadius", "SOMass", "SOCount"):
        a = arr(cat, name)
        if a is not None:
            res["cat_" + name] = a
    np.savez(out, **res)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    x, m, ids = dataset()
    q, qids = query_grid()
    if mode == "serial":
        run(x, m, ids, os.path.join(out, "serial.npz"), q, qids)
        return
    ctrl = vtkMultiProcessController.GetGlobalController()
    r, P = ctrl.GetLocalProcessId(), ctrl.GetNumberOfProcesses()
    owner = np.random.default_rng(5).integers(0, P, len(x))
    sel = np.flatnonzero(owner == r)
    # The grid in slabs of its first axis, rank P - 1 without any (when P > 1).
    qsel = np.flatnonzero(np.arange(len(q)) * max(P - 1, 1) // len(q) == r) if P > 1 else qids
    run(x[sel], m[sel], ids[sel], os.path.join(out, f"rank{r}.npz"), q[qsel], qids[qsel])


main()
