"""The MPI test cases of the filters, run by test_mpi.py.

Every rank builds the same deterministic global point sets, keeps the points
a split assigns to it, runs KNNDensity and FriendsOfFriends on them and
writes what it got to OUT/<case>.<split>.rank<r>.npz. In serial mode (one
process) the same script runs each filter on the concatenation of what the
ranks of a P-rank run would hold, in rank order, which is the reference the
parallel results must equal (without GlobalIds the global ids are indices
in that concatenation; doc/filters, "Parallel runs").

Usage: mpiexec -n P pvbatch --symmetric mpi_cases.py parallel OUT
       pvbatch mpi_cases.py serial OUT P
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from jztest import knn, polydata  # noqa: E402
from test_fof import fof  # noqa: E402
from test_emst import EuclideanMST, HDBSCAN, run as run_filter  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkCommonDataModel import (vtkMultiBlockDataSet,  # noqa: E402
                                           vtkPartitionedDataSet, vtkPolyData)
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402

SPLITS = ("random", "slabs", "empty", "one", "multiblock", "partitioned")


def dataset(name):
    """Global points and arrays of a case (the same on every rank)."""
    rng = np.random.default_rng(2024 if name == "periodic" else 7)
    if name == "periodic":
        # Box [0, 10)^3; clusters (FoF halos) at the box corner and faces, so
        # groups and neighbour lists cross the box boundary and rank borders.
        box = [0.0, 10.0] * 3
        centres = np.array([[0.1, 0.2, 9.9], [9.95, 5, 5], [5, 0.05, 5], [3, 3, 3], [7, 7, 2],
                            [5, 5, 5], [1, 8, 4], [8, 1, 9.8]])
        parts = [rng.random((3000, 3)) * 10]
        for k, c in enumerate(centres):
            parts.append(c + rng.normal(scale=0.12 + 0.03 * k, size=(300 + 60 * k, 3)))
        pts = np.mod(np.concatenate(parts), 10.0).astype(np.float32)
        n = len(pts)
        return dict(points=pts, box=box, periodic=True,
                    arrays={"Mass": 0.5 + rng.random(n), "Velocity": rng.normal(size=(n, 3))},
                    ids=None, queries=None)
    # Open boundaries, double, GlobalIds, a separate query set.
    parts = [rng.random((2500, 3)) * [4, 3, 2] - 1]
    for c in rng.random((6, 3)) * [4, 3, 2] - 1:
        parts.append(c + rng.normal(scale=0.05, size=(400, 3)))
    pts = np.concatenate(parts)
    n = len(pts)
    ids = (rng.permutation(n).astype(np.int64) * 13 + 10**12)
    queries = rng.random((1500, 3)) * [5, 4, 3] - 1.5
    return dict(points=pts, box=None, periodic=False, arrays={"Mass": 1 + rng.random(n)},
                ids=ids, queries=queries)


def split(name, points, nranks, salt):
    """Per-rank index lists (each rank's points, in the order it holds them)."""
    n = len(points)
    rng = np.random.default_rng(99 + salt)
    if name == "slabs":
        order = np.argsort(points[:, 0], kind="stable")
        return np.array_split(order, nranks)
    if name == "one":
        return [np.array([], dtype=np.int64)] * (nranks - 1) + [rng.permutation(n)]
    owner = rng.integers(0, nranks, n)
    if name == "empty" and nranks > 1:
        owner = np.where(owner == 1, 0, owner)
    perm = rng.permutation(n)
    return [perm[owner[perm] == r] for r in range(nranks)]


def piece(data, idx, kind, with_ids):
    """The data object a rank holds: one polydata, or a composite of pieces."""
    def poly(sel):
        arrays = {k: v[sel] for k, v in data["arrays"].items()}
        if with_ids and data["ids"] is not None:
            arrays["GlobalIds"] = data["ids"][sel]
        return polydata(data["points"][sel], arrays)
    if kind == "multiblock":
        mb = vtkMultiBlockDataSet()
        h = len(idx) // 2
        mb.SetBlock(0, poly(idx[:h]))
        mb.SetBlock(1, vtkPolyData())  # an empty block without arrays
        mb.SetBlock(2, poly(idx[h:]))
        return mb
    if kind == "partitioned":
        pds = vtkPartitionedDataSet()
        h = len(idx) // 3
        pds.SetPartition(0, poly(idx[:h]))
        pds.SetPartition(1, poly(idx[h:]))
        return pds
    return poly(idx)


def leaves(obj):
    if obj.IsA("vtkCompositeDataSet"):
        out = []
        it = obj.NewIterator()
        it.SkipEmptyNodesOn()
        it.InitTraversal()
        while not it.IsDoneWithTraversal():
            out.append(it.GetCurrentDataObject())
            it.GoToNextItem()
        return out
    return [obj]


def arrays_of(obj, names):
    """Concatenated point arrays of all leaves, plus per-leaf point counts and coordinates."""
    out = {}
    ls = leaves(obj)
    out["blocks"] = np.array([leaf.GetNumberOfPoints() for leaf in ls], dtype=np.int64)
    pts = [vtk_to_numpy(leaf.GetPoints().GetData()).astype(np.float64)
           for leaf in ls if leaf.GetNumberOfPoints() > 0]
    out["points"] = np.concatenate(pts) if pts else np.zeros((0, 3))
    for name in names:
        parts = []
        for leaf in ls:
            a = leaf.GetPointData().GetArray(name)
            if a is not None and a.GetNumberOfTuples() > 0:
                v = vtk_to_numpy(a)
                parts.append(v.reshape(len(v), -1))
        if parts:
            out[name] = np.concatenate(parts)
    return out


def run_case(case, data, idx, kind, with_ids, out, tag, qidx=None):
    res = {}
    obj = piece(data, idx, kind, with_ids)
    res.update({"in_" + k: v for k, v in arrays_of(obj, []).items()})
    props = dict(NumberOfNeighbors=16, OutputNeighbors=1, Device="CPU")
    if data["periodic"]:
        props.update(Periodic=1, BoxBounds=data["box"])
    props["MassArray"] = ["POINTS", "Mass"]
    r = knn(obj, **props)
    res["knn_errors"] = np.array(" | ".join(r.errors))
    for k, v in arrays_of(r.output, ["SmoothingLength", "Density", "NeighborIds",
                                     "NeighborDistances"]).items():
        res["knn_" + k] = v
    if qidx is not None:
        q = polydata(data["queries"][qidx])
        r = knn(obj, query=q, NumberOfNeighbors=8, OutputNeighbors=1, Estimator="Top Hat",
                Device="CPU", MassArray=["POINTS", "Mass"])
        res["qknn_errors"] = np.array(" | ".join(r.errors))
        for k, v in arrays_of(r.output, ["SmoothingLength", "Density", "NeighborIds"]).items():
            res["qknn_" + k] = v
    fprops = dict(LinkingLength=0.2, MinimumGroupSize=10, Device="CPU", MassArray=["POINTS", "Mass"])
    if data["periodic"]:
        fprops.update(Periodic=1, BoxBounds=data["box"], VelocityArray=["POINTS", "Velocity"])
    f = fof(obj, **fprops)
    res["fof_errors"] = np.array(" | ".join(f.errors))
    for k, v in arrays_of(f.particles, ["GroupId", "GroupSize"]).items():
        res["fof_" + k] = v
    cat = f.catalogue
    for name in ("GroupId", "Count", "Mass", "CenterOfMass", "InertiaRadius", "MeanVelocity",
                 "VelocityDispersion"):
        a = cat.GetPointData().GetArray(name)
        if a is not None:
            v = vtk_to_numpy(a)
            res["cat_" + name] = v.reshape(len(v), a.GetNumberOfComponents())
    run_trees(data, obj, res)
    np.savez(os.path.join(out, tag + ".npz"), **res)


def run_trees(data, obj, res):
    """EuclideanMST (Euclidean and mutual reachability) and HDBSCAN."""
    props = dict(Device="CPU")
    if data["periodic"]:
        props.update(Periodic=1, BoxBounds=data["box"])
    for key, extra in (("emst", {}), ("mrst", dict(Metric="Mutual Reachability", MinSamples=6))):
        (particles, edges), errors = run_filter(EuclideanMST, obj, 2, **dict(props, **extra))
        res[key + "_errors"] = np.array(" | ".join(errors))
        if edges.GetNumberOfCells() > 0:
            res[key + "_ends"] = vtk_to_numpy(edges.GetCellData().GetArray("EndpointIds")).copy()
            res[key + "_length"] = vtk_to_numpy(edges.GetCellData().GetArray("Length")).copy()
        for k, v in arrays_of(particles, ["CoreDistance"]).items():
            res[key + "_" + k] = v
    (out,), errors = run_filter(HDBSCAN, obj, 1, MinClusterSize=25, **props)
    res["hdb_errors"] = np.array(" | ".join(errors))
    for k, v in arrays_of(out, ["ClusterId", "Probability", "OutlierScore"]).items():
        res["hdb_" + k] = v


def main():
    mode, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    ctl = vtkMultiProcessController.GetGlobalController()
    rank = ctl.GetLocalProcessId() if ctl else 0
    nranks = ctl.GetNumberOfProcesses() if ctl else 1
    if mode == "serial":
        assert nranks == 1
        nranks = int(sys.argv[3])
    for case in ("periodic", "open"):
        data = dataset(case)
        for kind in SPLITS:
            rule = "random" if kind in ("multiblock", "partitioned") else kind
            parts = split(rule, data["points"], nranks, 0)
            qparts = split("slabs" if rule == "random" else "random", data["queries"], nranks, 1) \
                if data["queries"] is not None else None
            tag = f"{case}.{kind}"
            if mode == "serial":
                idx = np.concatenate(parts)
                qidx = np.concatenate(qparts) if qparts is not None else None
                run_case(case, data, idx, "poly", True, out, tag + ".serial", qidx)
            else:
                run_case(case, data, parts[rank], kind, True, out, f"{tag}.rank{rank}",
                         qparts[rank] if qparts is not None else None)
    if mode == "parallel" and nranks > 1:
        # Bad input on one rank only: every rank fails with the message.
        pts = np.random.default_rng(rank).random((500, 3))
        if rank == 1:
            pts[17, 2] = np.nan
        res = {}
        r = knn(polydata(pts), NumberOfNeighbors=8, Device="CPU")
        res["knn_errors"] = np.array(" | ".join(r.errors))
        res["knn_points"] = np.array(r.output.GetNumberOfPoints())
        f = fof(polydata(pts), Device="CPU")
        res["fof_errors"] = np.array(" | ".join(f.errors))
        res["fof_points"] = np.array(f.particles.GetNumberOfPoints() + f.catalogue.GetNumberOfPoints())
        # A mass array with the wrong number of components on the last rank.
        pts = np.random.default_rng(rank).random((500, 3))
        mass = np.ones((500, 2)) if rank == nranks - 1 else np.ones(500)
        f = fof(polydata(pts, {"Mass": mass}), Device="CPU", MassArray=["POINTS", "Mass"])
        res["mass_errors"] = np.array(" | ".join(f.errors))
        res["mass_points"] = np.array(f.particles.GetNumberOfPoints())
        np.savez(os.path.join(out, f"bad.rank{rank}.npz"), **res)
    if ctl:
        ctl.Barrier()
    print(f"rank {rank}: done")


if __name__ == "__main__":
    main()
