"""On more than one MPI process FriendsOfFriends must stop with a clear error
on every rank (parallel runs come with a later issue), without hanging.

Usage: mpiexec -n 2 pvbatch --symmetric test_fof_mpi.py
"""
import os
import sys

import numpy as np
from vtkmodules.vtkParallelCore import vtkMultiProcessController

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jztest import Checker, polydata  # noqa: E402
from test_fof import fof  # noqa: E402

controller = vtkMultiProcessController.GetGlobalController()
nprocs = controller.GetNumberOfProcesses() if controller else 1
rank = controller.GetLocalProcessId() if controller else 0
c = Checker()
if not c.check(nprocs > 1, f"rank {rank}: running on {nprocs} processes"):
    sys.exit(1)
pts = np.random.default_rng(rank).random((1000, 3)).astype(np.float32)
run = fof(polydata(pts), Device="CPU")
text = " ".join(run.errors)
c.check("parallel runs are not supported" in text, f"rank {rank}: error says so: {text[:120]!r}")
c.check(run.particles.GetNumberOfPoints() == 0 and run.catalogue.GetNumberOfPoints() == 0,
        f"rank {rank}: no output")
if c.failures:
    print(f"rank {rank}: {c.failures} check(s) failed")
    sys.exit(1)
print(f"rank {rank}: all checks passed")
