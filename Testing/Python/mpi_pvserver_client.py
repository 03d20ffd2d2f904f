"""pvpython client of test_mpi_pvserver.py: connects to a 2-rank pvserver,
loads the plugin on both sides, reads a 2-piece .pvtp (one piece per rank),
runs both filters there, fetches the results, then runs the same filters in
a serial (built-in) session and compares. Exit 0 when everything matches.

Usage: pvpython mpi_pvserver_client.py PORT PLUGIN WORKDIR
"""
import os
import sys

import numpy as np
from paraview import servermanager
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checker  # noqa: E402
from pvserver_sessions import parallel_and_serial  # noqa: E402

port, plugin, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
checker = Checker()
check = checker.check


# Data: clustered points in a periodic box, written as two pieces.
rng = np.random.default_rng(5)
pts = np.concatenate([rng.random((3000, 3)),
                      np.mod(rng.normal([0.02, 0.5, 0.5], 0.03, (400, 3)), 1.0),
                      rng.normal([0.6, 0.4, 0.3], 0.02, (300, 3))]).astype(np.float32)
pts = pts[rng.permutation(len(pts))]
n = len(pts)
cut = n // 3
pieces = [np.arange(cut), np.arange(cut, n)]
names = []
for k, sel in enumerate(pieces):
    pd = vtkPolyData()
    p = vtkPoints()
    p.SetData(numpy_to_vtk(pts[sel], deep=1))
    pd.SetPoints(p)
    idx = numpy_to_vtk(sel.astype(np.float64), deep=1)
    idx.SetName("Index")
    pd.GetPointData().AddArray(idx)
    w = vtkXMLPolyDataWriter()
    w.SetFileName(os.path.join(work, f"piece{k}.vtp"))
    w.SetInputData(pd)
    w.Write()
    names.append(f"piece{k}.vtp")
with open(os.path.join(work, "points.pvtp"), "w") as f:
    f.write('<?xml version="1.0"?>\n<VTKFile type="PPolyData" version="0.1" byte_order="LittleEndian">\n'
            '<PPolyData GhostLevel="0">\n<PPointData><PDataArray type="Float64" Name="Index"/></PPointData>\n'
            '<PPoints><PDataArray type="Float32" NumberOfComponents="3"/></PPoints>\n')
    for name in names:
        f.write(f'<Piece Source="{name}"/>\n')
    f.write('</PPolyData>\n</VTKFile>\n')


def run_filters(ns):
    from paraview import simple
    for name in ("KNNDensity", "FriendsOfFriends"):
        if name not in ns:
            ns[name] = getattr(simple, name)
    reader = simple.OpenDataFile(os.path.join(work, "points.pvtp"))  # the .pvtp reader
    k = ns["KNNDensity"](Input=reader, NumberOfNeighbors=12, OutputNeighbors=1, Periodic=1,
                         BoxBounds=[0, 1, 0, 1, 0, 1], Device="CPU")
    f = ns["FriendsOfFriends"](Input=reader, LinkingLength=0.2, MinimumGroupSize=5, Periodic=1,
                               BoxBounds=[0, 1, 0, 1, 0, 1], Device="CPU")
    k.UpdatePipeline()
    f.UpdatePipeline()
    out = {}
    # Which rank holds which points (the reader gives each rank one piece).
    pid = servermanager.Fetch((getattr(simple, "ProcessIds", None) or simple.ProcessIdScalars)(Input=reader))
    out["ranks"] = np.bincount(vtk_to_numpy(pid.GetPointData().GetArray("ProcessId")), minlength=2)
    kd = servermanager.Fetch(k)
    fd = servermanager.Fetch(f)
    cat = servermanager.Fetch(f, idx=1)

    def arr(data, name):
        a = data.GetPointData().GetArray(name)
        v = vtk_to_numpy(a)
        return v.reshape(len(v), -1) if a.GetNumberOfComponents() > 1 else v
    order_k = np.argsort(arr(kd, "Index"))
    order_f = np.argsort(arr(fd, "Index"))
    out["points"] = kd.GetNumberOfPoints()
    for name in ("NeighborIds", "SmoothingLength", "Density"):
        out[name] = arr(kd, name)[order_k]
    for name in ("GroupId", "GroupSize"):
        out[name] = arr(fd, name)[order_f]
    cid = arr(cat, "GroupId")
    out["cat_GroupId"] = np.sort(cid)
    out["cat_Count"] = arr(cat, "Count")[np.argsort(cid)]
    out["cat_CenterOfMass"] = arr(cat, "CenterOfMass")[np.argsort(cid)]
    return out


# Parallel (2-rank pvserver), then the serial reference (the built-in session).
par, ref = parallel_and_serial(port, plugin, run_filters, check)

check(list(par["ranks"]) == [cut, n - cut], f"pvserver ranks hold {list(par['ranks'])} points")
check(par["points"] == n and ref["points"] == n, f"{n} points fetched from both runs")
check(np.array_equal(par["NeighborIds"], ref["NeighborIds"]), "NeighborIds identical")
for name in ("SmoothingLength", "Density"):
    err = np.abs(par[name] - ref[name]) / np.abs(ref[name])
    check(err.max() <= 1e-6, f"{name} equal (max rel. error {err.max():.2g})")
check(np.array_equal(par["GroupId"], ref["GroupId"]), "GroupId identical")
check(np.array_equal(par["GroupSize"], ref["GroupSize"]), "GroupSize identical")
check(np.array_equal(par["cat_GroupId"], np.arange(len(ref["cat_GroupId"]))) and len(ref["cat_GroupId"]) > 1,
      f"catalogue: {len(ref['cat_GroupId'])} rows, each once")
check(np.array_equal(par["cat_Count"], ref["cat_Count"]), "catalogue Count identical")
check(np.allclose(par["cat_CenterOfMass"], ref["cat_CenterOfMass"], rtol=1e-6, atol=0),
      "catalogue CenterOfMass equal")
checker.finish()
