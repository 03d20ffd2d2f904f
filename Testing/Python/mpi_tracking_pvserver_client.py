"""pvpython client for HaloTracking on a 2-rank pvserver (run by
test_mpi_pvserver.py with this script): the Gadget-4 series through
ParticleSnapshotReader -> FriendsOfFriends -> HaloTracking on the server,
the time moved through every step, and the merger tree, the track history
and every particle's TrackId fetched to the client and compared with a
serial (built-in) session; the tables also shown in the views the GUI opens
for them (a spreadsheet, a line chart), which deliver all their rows. Exit 0
when everything matches, 125 without ../shared.

Usage: pvpython mpi_tracking_pvserver_client.py PORT PLUGIN WORKDIR
"""
import glob
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
files = [os.path.abspath(f) for f in sorted(glob.glob(os.path.join(d, "snapshot_*.hdf5")))]


def columns(table):
    return {table.GetColumnName(i): vtk_to_numpy(table.GetColumn(i)) for i in range(table.GetNumberOfColumns())}


def run(ns):
    from paraview import simple
    reader = simple.OpenDataFile(files)  # the reader factory on the server, one series
    proxy = lambda name: ns.get(name) or getattr(simple, name)  # noqa: E731
    fof = proxy("FriendsOfFriends")(Input=reader, LinkingLength=0.2, MinimumGroupSize=32, Periodic=1,
                                 Device="CPU")
    ht = proxy("HaloTracking")(Input=fof, MassArray=["POINTS", "Masses"])
    times = list(reader.TimestepValues)
    out = {}
    for s, t in enumerate(times):
        ht.UpdatePipeline(t)
        blocks = [leaf.VTKObject for leaf in CompositeDataIterator(servermanager.Fetch(ht))]
        ids = np.concatenate([vtk_to_numpy(b.GetPointData().GetArray("GlobalIds")) for b in blocks])
        tracks = np.concatenate([vtk_to_numpy(b.GetPointData().GetArray("TrackId")) for b in blocks])
        order = np.argsort(ids)
        out[f"ids{s}"], out[f"tracks{s}"] = ids[order], tracks[order]
    out["tree"] = columns(servermanager.Fetch(ht, idx=1))
    out["history"] = columns(servermanager.Fetch(ht, idx=2))
    sheet = simple.CreateView("SpreadSheetView")
    simple.Show(simple.OutputPort(ht, 1), sheet)
    sheet.Update()
    chart = simple.CreateView("XYChartView")
    simple.Show(simple.OutputPort(ht, 2), chart)
    chart.Update()
    out["rows shown"] = (simple.OutputPort(ht, 1).GetDataInformation().GetNumberOfRows(),
                         simple.OutputPort(ht, 2).GetDataInformation().GetNumberOfRows())
    for p in (ht, fof, reader):
        simple.Delete(p)
    return out


par, ref = parallel_and_serial(port, plugin, run, check)
check(len(ref["tree"]["GroupId"]) > 100, f"serial session: {len(ref['tree']['GroupId'])} rows")
for name in ("tree", "history"):
    same = sorted(par[name]) == sorted(ref[name]) and all(
        np.allclose(par[name][k], ref[name][k], rtol=1e-12, atol=0) if k == "Mass"
        else np.array_equal(par[name][k], ref[name][k]) for k in ref[name])
    check(same, f"the {name} table fetched from 2 ranks equals the serial session's")
steps = sorted(int(k[3:]) for k in ref if k.startswith("ids"))
check(all(np.array_equal(par[f"ids{s}"], ref[f"ids{s}"]) and
          np.array_equal(par[f"tracks{s}"], ref[f"tracks{s}"]) for s in steps),
      f"every particle's TrackId at each of the {len(steps)} steps equals the serial session's")
check(par["rows shown"] == (len(ref["tree"]["GroupId"]), len(ref["history"]["Time"])),
      f"the views get every row: {par['rows shown']}")
checker.finish()
