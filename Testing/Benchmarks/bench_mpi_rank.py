"""One rank of bench_mpi.py (run under mpiexec pvbatch --symmetric): builds
this rank's points, runs KNNDensity (K=16) and FriendsOfFriends (b=0.2) (or
EuclideanMST: emst, mrst with MinSamples 10; HDBSCAN: hdbscan) and
prints rank 0's wall time and every rank's CPU time per filter; JZ_RUNINFO=1 makes the filters print
their stage times and counters per rank.

Usage: pvbatch --symmetric bench_mpi_rank.py uniform|clustered TOTAL|perrank:N [knn,fof,emst,mrst,hdbscan]
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Python"))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
from jztest import polydata, producer, simple  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402
import jztest  # noqa: E402
from barrier_timing import timed_update_per_rank  # noqa: E402

ctl = vtkMultiProcessController.GetGlobalController()
rank = ctl.GetLocalProcessId() if ctl else 0
P = ctl.GetNumberOfProcesses() if ctl else 1
kind, size = sys.argv[1], sys.argv[2]
filters = sys.argv[3].split(",") if len(sys.argv) > 3 else ["knn", "fof"]
n_local = int(float(size.split(":")[1])) if size.startswith("perrank:") else int(float(size)) // P
rng = np.random.default_rng(1000 + rank)
if kind == "uniform":
    pts = rng.random((n_local, 3), dtype=np.float32)
else:
    # Half the points in 2000 Gaussian clusters (the same centres on every
    # rank), half uniform; each rank's points spread over the whole box, as
    # a reader of an unsorted snapshot would hand them out.
    centres = np.random.default_rng(3).random((2000, 3))
    widths = 0.002 + 0.01 * np.random.default_rng(4).random(2000)
    m = n_local // 2
    c = rng.integers(0, 2000, m)
    clustered = centres[c] + rng.normal(size=(m, 3)) * widths[c, None]
    pts = np.concatenate([np.mod(clustered, 1.0), rng.random((n_local - m, 3))]).astype(np.float32)
src = producer(polydata(pts))
for name in filters:
    if name == "knn":
        f = jztest.KNNDensity(Input=src, NumberOfNeighbors=16, Periodic=1, Device="CPU")
    elif name in ("emst", "mrst"):
        # The distributed EMST (Euclidean, or mutual reachability, MinSamples 10).
        extra = dict(Metric="Mutual Reachability", MinSamples=10) if name == "mrst" else {}
        f = simple.EuclideanMST(Input=src, Periodic=1, Device="CPU", **extra)
    elif name == "hdbscan":
        f = simple.HDBSCAN(Input=src, MinClusterSize=25, Periodic=1, Device="CPU")
    else:
        FoF = getattr(simple, "FriendsOfFriends")
        f = FoF(Input=src, LinkingLength=0.2, MinimumGroupSize=20, Periodic=1, Device="CPU")
    cpu0 = time.process_time()
    dt, own = timed_update_per_rank(f, ctl)
    # This rank's CPU time (user+sys, all its threads) in the update: the
    # work, which a loaded machine does not inflate as it does wall time
    # (MPI's busy waits at collectives count as work, though); and its own
    # wall time in the update (the stages plus the filter's glue).
    print(f"CPU {name} {rank} {time.process_time() - cpu0:.3f}", flush=True)
    print(f"OWN {name} {rank} {own:.3f}", flush=True)
    if rank == 0:
        print(f"WALL {name} {dt:.3f}", flush=True)
    simple.Delete(f)
