"""SPHSmooth on every rank's piece, run by test_mpi_sph_smooth.py. Every rank
builds the same deterministic particle sets ("periodic": float32 in a box,
clusters at its faces and corners, no GlobalIds; "open": float64 with
scattered GlobalIds), keeps the points a split of mpi_cases.py assigns to it (random,
slabs, an empty rank, all on one rank, multiblock and partitioned pieces), runs SPHSmooth and
writes what it got to OUT/<case>.<split>.rank<r>.npz. In serial mode one
process runs the concatenation of what the ranks of a P-rank run hold, in
rank order (the reference: without GlobalIds the ids are indices in it).
With P > 1 also bad input on one rank only (OUT/bad.rank<r>.npz).

Usage: mpiexec -n P pvbatch --symmetric mpi_sph_smooth_case.py parallel OUT
       pvbatch mpi_sph_smooth_case.py serial OUT P
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from jztest import polydata  # noqa: E402
from mpi_cases import leaves, piece, split  # noqa: E402  (the splits and pieces of mpi_cases.py)
from test_sph_smooth import smooth  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402

SPLITS = ("random", "slabs", "empty", "one", "multiblock", "partitioned")
OUTPUTS = ("SmoothingLength", "Density", "Velocity_Smoothed", "Velocity_Divergence",
           "Velocity_Curl", "Velocity_Dispersion", "Temperature_Smoothed", "Temperature_Gradient")


def dataset(name):
    rng = np.random.default_rng(11 if name == "periodic" else 12)
    if name == "periodic":
        parts = [rng.random((2500, 3)) * 4]
        for c in ([0.05, 2, 3.95], [3.98, 3.98, 0.02], [2, 0.01, 2], [1, 1, 1]):
            parts.append(np.array(c) + 0.08 * rng.standard_normal((300, 3)))
        pts = np.mod(np.concatenate(parts), 4.0).astype(np.float32)
        ids = None
    else:
        parts = [rng.random((2500, 3)) * [3, 2, 1]]
        for c in rng.random((4, 3)):
            parts.append(c + 0.03 * rng.standard_normal((300, 3)))
        pts = np.concatenate(parts)
        ids = rng.permutation(len(pts)).astype(np.int64) * 17 + 10**11
    n = len(pts)
    return dict(points=pts, ids=ids, periodic=name == "periodic",
                arrays={"Mass": 0.5 + rng.random(n), "Velocity": rng.normal(size=(n, 3)),
                        "Temperature": rng.random(n)})


def run_case(data, idx, kind, path):
    props = dict(NumberOfNeighbors=24, MassArray=["POINTS", "Mass"],
                 PointArrays=["Velocity", "Temperature"])
    if data["periodic"]:
        props.update(Periodic=1, BoxBounds=[0, 4] * 3)
    r = smooth(piece(data, idx, kind, True), **props)
    res = dict(errors=np.array(" | ".join(r.errors)), index=idx)
    for name in OUTPUTS:
        parts = []
        for leaf in leaves(r.output):
            a = leaf.GetPointData().GetArray(name)
            if a is not None and a.GetNumberOfTuples() > 0:
                v = vtk_to_numpy(a)
                parts.append(v.reshape(len(v), -1))
        if parts:
            res[name] = np.concatenate(parts)
    np.savez(path, **res)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    ctl = vtkMultiProcessController.GetGlobalController()
    rank = ctl.GetLocalProcessId() if ctl else 0
    nranks = ctl.GetNumberOfProcesses() if ctl else 1
    if mode == "serial":
        nranks = int(sys.argv[3])
    for case in ("periodic", "open"):
        data = dataset(case)
        for kind in SPLITS:
            parts = split("random" if kind in ("multiblock", "partitioned") else kind, data["points"],
                          nranks, 0)
            if mode == "serial":
                run_case(data, np.concatenate(parts), "poly",
                         os.path.join(out, f"{case}.{kind}.serial.npz"))
            else:
                run_case(data, parts[rank], kind, os.path.join(out, f"{case}.{kind}.rank{rank}.npz"))
    if mode == "parallel" and nranks > 1:
        # A NaN in a smoothed array on rank 1 only: every rank fails, none hangs.
        pts = np.random.default_rng(rank).random((300, 3))
        vel = np.ones((300, 3))
        if rank == 1:
            vel[7, 0] = np.nan
        r = smooth(polydata(pts, {"Velocity": vel}), NumberOfNeighbors=8, PointArrays=["Velocity"])
        np.savez(os.path.join(out, f"bad.rank{rank}.npz"), errors=np.array(" | ".join(r.errors)),
                 points=np.array(r.output.GetNumberOfPoints()))
    if ctl:
        ctl.Barrier()
    print(f"rank {rank}: done")


main()
