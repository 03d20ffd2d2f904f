"""On more than one MPI process KNNDensity must stop with a clear error on
every rank (parallel runs come with a later issue), without hanging.

Usage: mpiexec -n 2 pvbatch --symmetric test_knn_mpi.py
"""
import sys

import numpy as np
from vtkmodules.vtkParallelCore import vtkMultiProcessController

import jztest
from jztest import Checker, knn, polydata

controller = vtkMultiProcessController.GetGlobalController()
nprocs = controller.GetNumberOfProcesses() if controller else 1
rank = controller.GetLocalProcessId() if controller else 0
c = Checker()
if not c.check(nprocs > 1, f"rank {rank}: running on {nprocs} processes"):
    sys.exit(1)
pts = np.random.default_rng(rank).random((1000, 3)).astype(np.float32)
run = knn(polydata(pts), NumberOfNeighbors=8, Device="CPU")
text = " ".join(run.errors)
c.check("parallel runs are not supported" in text, f"rank {rank}: error says so: {text[:120]!r}")
c.check(not run.has("Density") and run.output.GetNumberOfPoints() == 0, f"rank {rank}: no output")
# Exit through pvbatch (MPI_Finalize) on success; sys.exit would skip it.
if c.failures:
    print(f"rank {rank}: {c.failures} check(s) failed")
    sys.exit(1)
print(f"rank {rank}: all checks passed")
