"""pvpython client for the reader on a parallel pvserver (run by
test_mpi_pvserver.py with this script): opens the real Gadget-4 snapshot with
OpenDataFile on a 2-rank pvserver (the plugin loaded on both sides), checks
that each rank holds a contiguous half of the particles, runs
FriendsOfFriends with Periodic on (the box from the file), fetches the
results and compares them with a serial (built-in) session and with
Gadget-4's catalogue. Exit 0 when everything matches, 125 without ../shared.

Usage: pvpython mpi_reader_pvserver_client.py PORT PLUGIN WORKDIR
"""
import os
import sys

import numpy as np
from paraview import servermanager
from vtkmodules.numpy_interface.dataset_adapter import CompositeDataIterator
from vtkmodules.util.numpy_support import vtk_to_numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapshot_files as sf  # noqa: E402
from checks import Checker  # noqa: E402
from pvserver_sessions import parallel_and_serial  # noqa: E402

port, plugin, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
checker = Checker()
check = checker.check
d = sf.gadget4_dir()
if d is None:
    print("SKIP: ../shared/data/external/gadget4-cosmobox-n32-l50 is not available")
    sys.exit(125)
snapshot = os.path.abspath(os.path.join(d, "snapshot_062.hdf5"))


def leaves(data):
    """The leaves of a fetched composite in order (rank 0's blocks first)."""
    return [leaf.VTKObject for leaf in CompositeDataIterator(data)]


def column(blocks, name):
    return np.concatenate([vtk_to_numpy(b.GetPointData().GetArray(name)) for b in blocks])


def run(ns):
    from paraview import simple
    reader = simple.OpenDataFile(snapshot)  # the reader factory on the server
    fof = ns.get("FriendsOfFriends", getattr(simple, "FriendsOfFriends", None))(
        Input=reader, LinkingLength=0.2, MinimumGroupSize=32, Periodic=1, Device="CPU")
    fof.UpdatePipeline()
    out = {"reader": reader.GetXMLName()}
    ids = (getattr(simple, "ProcessIds", None) or simple.ProcessIdScalars)(Input=reader)
    blocks = leaves(servermanager.Fetch(ids))
    out["ProcessId"] = column(blocks, "ProcessId")
    out["ParticleIDs"] = column(blocks, "ParticleIDs")
    out["points"] = np.concatenate([vtk_to_numpy(b.GetPoints().GetData()) for b in blocks])
    out["BoxSize"] = vtk_to_numpy(blocks[-1].GetFieldData().GetArray("BoxSize"))
    groups = leaves(servermanager.Fetch(fof))
    out["GroupId"] = column(groups, "GroupId")
    out["gid_ids"] = column(groups, "ParticleIDs")
    return out


par, ref = parallel_and_serial(port, plugin, run, check)

import h5py  # noqa: E402
with h5py.File(snapshot, "r") as f:
    pos = f["PartType1/Coordinates"][...]
    pid = f["PartType1/ParticleIDs"][...]
n = len(pid)
check(par["reader"] == "ParticleSnapshotReader", "OpenDataFile on the server picks the reader")
check(np.array_equal(par["ProcessId"], np.repeat([0, 1], [n // 2, n - n // 2])),
      "rank 0 holds the first half of the particles, rank 1 the second")
check(np.array_equal(par["points"], pos) and np.array_equal(par["ParticleIDs"], pid),
      "the ranks' pieces in order equal h5py's read")
check(list(par["BoxSize"].ravel()) == [50.0], "BoxSize field data on the server's output")
check(np.array_equal(par["GroupId"], ref["GroupId"]) and np.array_equal(par["gid_ids"], ref["gid_ids"]),
      "GroupId identical to the serial session")
same, ngroups = sf.same_groups_as_gadget4(par["GroupId"], os.path.join(d, "fof_tab_062.hdf5"))
check(same, f"Gadget-4's {ngroups} groups with the box from the file")
checker.finish()
