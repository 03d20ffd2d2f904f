"""ParticleSnapshotReader under mpiexec pvbatch --symmetric: every rank reads
its piece of each case (test_reader_mpi.py prepares the files) and writes its
blocks' points and arrays, and the errors it saw, to OUT/<case>.rank<r>.npz.

Usage: mpiexec -n P pvbatch --symmetric mpi_reader_case.py CASES.json OUT
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from jztest import simple, update_collecting_errors  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402

cases_file, out = sys.argv[1], sys.argv[2]
ctl = vtkMultiProcessController.GetGlobalController()
rank = ctl.GetLocalProcessId()
with open(cases_file) as f:
    cases = json.load(f)
for case in cases:
    os.environ["JZ_SNAPSHOT_MPIIO"] = case.get("mpiio", "1")
    reader = simple.ParticleSnapshotReader(FileName=case["files"], **case.get("props", {}))
    alg, errors = update_collecting_errors(reader)
    data = alg.GetOutputDataObject(0)
    res = {"errors": np.array(" | ".join(errors))}
    names = []
    for i in range(data.GetNumberOfBlocks()):
        name = data.GetMetaData(i).Get(vtkCompositeDataSet.NAME())
        block = data.GetBlock(i)
        names.append(name)
        res[f"{name}/points"] = vtk_to_numpy(block.GetPoints().GetData())
        pd = block.GetPointData()
        for j in range(pd.GetNumberOfArrays()):
            res[f"{name}/{pd.GetArrayName(j)}"] = vtk_to_numpy(pd.GetArray(j))
        res[f"{name}/verts"] = np.array(block.GetNumberOfVerts())
    res["blocks"] = np.array(names)
    if case.get("fof"):
        fof = simple.FriendsOfFriends(Input=reader, Periodic=1, LinkingLength=0.2,
                                      MinimumGroupSize=32, Device="CPU")
        falg, ferrors = update_collecting_errors(fof)
        it = falg.GetOutputDataObject(0).NewIterator()
        it.InitTraversal()
        res["GroupId"] = vtk_to_numpy(it.GetCurrentDataObject().GetPointData().GetArray("GroupId"))
        res["fof_errors"] = np.array(" | ".join(ferrors))
        simple.Delete(fof)
    np.savez(os.path.join(out, f"{case['name']}.rank{rank}.npz"), **res)
    simple.Delete(reader)
ctl.Barrier()
print(f"rank {rank}: done", flush=True)
