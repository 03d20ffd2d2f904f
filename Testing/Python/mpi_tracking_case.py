"""HaloTracking under mpiexec pvbatch --symmetric on the Gadget-4 series:
ParticleSnapshotReader (each rank reads its share of every snapshot; the
files are in group order, so particles change rank between steps) ->
FriendsOfFriends -> HaloTracking. Every rank writes, per time step, its
points' GlobalIds and TrackIds and the merger tree it holds (complete on
rank 0, empty elsewhere), FoF's computations and reuses (scrubbing reuses
its per-step results), the GroupIds of the last step shown again (reused)
and computed by a new FoF filter, and the errors of a series whose ids repeat over
the ranks, to OUT/rank<r>.npz. Run by test_halo_tracking_mpi.py.

Usage: mpiexec -n P pvbatch --symmetric mpi_tracking_case.py DATA_DIR OUT
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
from jztest import count_fof_executions  # noqa: E402
import numpy as np  # noqa: E402
from test_halo_tracking import Series, plugin_proxy, points_arrays, run, synthetic_steps, table  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402

base, out = sys.argv[1], sys.argv[2]
ctl = vtkMultiProcessController.GetGlobalController()
rank = ctl.GetLocalProcessId()
reader = plugin_proxy("ParticleSnapshotReader")(
    FileName=sorted(glob.glob(os.path.join(base, "snapshot_*.hdf5"))))
fof = plugin_proxy("FriendsOfFriends")(Input=reader, LinkingLength=0.2, MinimumGroupSize=32,
                                       Periodic=1, Device="CPU")
ht = plugin_proxy("HaloTracking")(Input=fof, MassArray=["POINTS", "Masses"])
fof_runs = count_fof_executions(fof)
res = {}
errors = []
times = list(reader.TimestepValues)
for s, t in enumerate(reversed(times)):  # the first pass ends at the last step
    alg, errs = run(ht, t)
    errors += errs
    if s == 0:
        res["fof_computed_first_pass"] = np.array(fof_runs["computing"])
    p = points_arrays(alg)
    step = len(times) - 1 - s
    for name in ("GlobalIds", "TrackId", "GroupId"):
        res[f"{name}{step}"] = p[name] if p[name] is not None else np.zeros(0, np.int64)
# Scrubbing reused FoF's results; the last step once more, from the cache,
# and from a new FoF filter on the same Input (a fresh computation).
alg, errs = run(ht, times[-1])
errors += errs
res["fof_computed"] = np.array(fof_runs["computing"])
res["fof_reused"] = np.array(fof_runs["reusing"])
fresh = plugin_proxy("FriendsOfFriends")(Input=reader, LinkingLength=0.2, MinimumGroupSize=32,
                                         Periodic=1, Device="CPU")
fresh_alg, errs = run(fresh, times[-1])
errors += errs
for tag, a in (("again", alg), ("fresh", fresh_alg)):
    p = points_arrays(a, ("GlobalIds", "GroupId"))
    for name in ("GlobalIds", "GroupId"):
        res[f"{tag}/{name}"] = p[name] if p[name] is not None else np.zeros(0, np.int64)
for name, column in table(alg, 1).items():
    res["tree/" + name] = column
res["errors"] = np.array(" | ".join(errors))
# The same synthetic series served whole on every rank: with several ranks
# every id appears once per rank, an id twice in one step, which every rank
# reports (the same message) without waiting for the others.
series = Series(synthetic_steps())
_, dup_errors = run(plugin_proxy("HaloTracking")(Input=series.source), series.times[1])
res["duplicate_errors"] = np.array(" | ".join(dup_errors))
series.close()
np.savez(os.path.join(out, f"rank{rank}.npz"), **res)
ctl.Barrier()
print(f"rank {rank}: done", flush=True)
