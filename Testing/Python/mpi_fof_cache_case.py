"""FriendsOfFriends' per-time-step result cache under mpiexec pvbatch
--symmetric: a time series served by a ProgrammableSource, each rank its own
share of every step (from its own npz file). The first pass computes each
step once; scrubbing reuses every step on every rank, the outputs equal a
new FoF filter's; then only one rank's data of a step change (same time, no
MTime): that rank misses, the others would hit, and all ranks compute
(agreed, no hang), giving a new filter's outputs. Every rank writes its
counts and checks to OUT/rank<r>.npz. Run by test_fof_cache_mpi.py.

Usage: mpiexec -n P pvbatch --symmetric mpi_fof_cache_case.py OUT
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
import numpy as np  # noqa: E402
from jztest import count_fof_executions, simple  # noqa: E402
from jztest import SERIES_INFO_SCRIPT  # noqa: E402
from test_fof import SERIES_DATA, clustered, fof_outputs, identical  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402

out = sys.argv[1]
ctl = vtkMultiProcessController.GetGlobalController()
rank, nranks = ctl.GetLocalProcessId(), ctl.GetNumberOfProcesses()
FriendsOfFriends = jztest.__dict__.get("FriendsOfFriends") or getattr(simple, "FriendsOfFriends")

# The same global series on every rank; rank r keeps every nranks-th point.
rng = np.random.default_rng(5)
arrays = {"times": np.array([0.5, 1.0, 1.5])}
for s in range(3):
    pts = clustered(6000, rng, np.float64)
    mine = np.arange(len(pts)) % nranks == rank
    arrays[f"pts{s}"] = pts[mine]
    arrays[f"ids{s}"] = np.flatnonzero(mine).astype(np.int64)
    arrays[f"mass{s}"] = (0.5 + rng.random(len(pts)))[mine]
    arrays[f"vel{s}"] = rng.standard_normal((len(pts), 3))[mine]
path = os.path.join(out, f"series{rank}.npz")
np.savez(path, **arrays)
times = [float(t) for t in arrays["times"]]
src = simple.ProgrammableSource(OutputDataSetType="vtkPolyData",
                                Script=SERIES_DATA.format(path=path),
                                ScriptRequestInformation=SERIES_INFO_SCRIPT.format(path=path))
props = dict(LinkingLengthMode="Absolute", LinkingLength=0.004, MinimumGroupSize=5,
             MassArray=["POINTS", "Mass"], VelocityArray=["POINTS", "Velocity"], Device="CPU")
fof = FriendsOfFriends(Input=src, **props)
alg = fof.GetClientSideObject()
n = count_fof_executions(fof)


def fresh(t):
    f = FriendsOfFriends(Input=src, **props)
    f.UpdatePipeline(t)
    res = fof_outputs(f.GetClientSideObject())
    simple.Delete(f)
    return res


res = {}
for t in times:
    fof.UpdatePipeline(t)
res["first_pass"] = np.array([n["computing"], n["reusing"]])
same = []
for t in (times[0], times[2], times[1]):  # the pass ended at times[2]
    fof.UpdatePipeline(t)
    got = fof_outputs(alg)
    same.append(identical(got, fresh(t)) and len(got["0/GroupId"]) == len(arrays["ids1"]))
res["scrubbed"] = np.array([n["computing"], n["reusing"]])
res["scrubbed_same"] = np.array(same)
res["groups"] = np.array(int(np.max(fof_outputs(alg)["0/GroupId"], initial=-1)))
# Only the last rank's points of step 1 move.
if rank == nranks - 1:
    arrays["pts1"] = arrays["pts1"] * 0.99
    np.savez(path, **arrays)
ctl.Barrier()
fof.UpdatePipeline(times[0])
fof.UpdatePipeline(times[1])
res["changed"] = np.array([n["computing"], n["reusing"]])
res["changed_same"] = np.array(identical(fof_outputs(alg), fresh(times[1])))
np.savez(os.path.join(out, f"rank{rank}.npz"), **res)
ctl.Barrier()
print(f"rank {rank}: done", flush=True)
