"""FriendsOfFriends on the Gadget-4 snapshots read in pieces: every rank reads
its contiguous slice of PartType1 with h5py (as a parallel reader would) and
writes its GroupId/GroupSize and catalogue rows to OUT/<snap>.rank<r>.npz.
Run by test_mpi_gadget.py.

Usage: mpiexec -n P pvbatch --symmetric mpi_gadget_case.py DATA_DIR OUT SNAP...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5py  # noqa: E402
import numpy as np  # noqa: E402
from jztest import polydata  # noqa: E402
from test_fof import fof  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402

base, out = sys.argv[1], sys.argv[2]
ctl = vtkMultiProcessController.GetGlobalController()
rank, nranks = ctl.GetLocalProcessId(), ctl.GetNumberOfProcesses()
for snap in sys.argv[3:]:
    with h5py.File(os.path.join(base, f"snapshot_{snap}.hdf5"), "r") as f:
        n = f["PartType1/ParticleIDs"].shape[0]
        lo, hi = rank * n // nranks, (rank + 1) * n // nranks
        pos = f["PartType1/Coordinates"][lo:hi]
        pid = f["PartType1/ParticleIDs"][lo:hi].astype(np.int64)
        boxsize = float(f["Header"].attrs["BoxSize"])
    run = fof(polydata(pos, {"GlobalIds": pid}), LinkingLength=0.2, MinimumGroupSize=32,
              Periodic=1, BoxBounds=[0, boxsize] * 3, Device="CPU")
    res = dict(lo=lo, hi=hi, errors=np.array(" | ".join(run.errors)))
    for name in ("GroupId", "GroupSize"):
        a = run.array(name)
        res[name] = a if a is not None else np.zeros(0, np.int64)
    for name in ("GroupId", "Count"):
        a = run.array(name, port=1)
        res["cat_" + name] = a if a is not None else np.zeros(0, np.int64)
    np.savez(os.path.join(out, f"{snap}.rank{rank}.npz"), **res)
ctl.Barrier()
print(f"rank {rank}: done")
