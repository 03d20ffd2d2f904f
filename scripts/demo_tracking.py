"""Halos through time: the five Gadget-4 snapshots of ../shared opened as one
series, friends-of-friends halos at every step, and HaloTracking's merger
tree. Prints the tree of the largest z = 0 halo (every progenitor at every
redshift, with its TrackId, Count and whether it is the main progenitor) and
writes <out>/halo_progenitors.png: one panel per redshift, the halo's
progenitors coloured by TrackId (one colour per track through all panels),
the other particles around them faint.

Run with pvbatch (scripts/run-demo.sh runs it after the others):
    pvbatch scripts/demo_tracking.py [--plugin PATH] [--data DIR] [--out out]
Without the data the script says so and exits 0 (exit code 125 with --strict).
"""
import argparse
import glob
import os
import sys

from paraview.simple import *  # noqa: F401,F403 (pvbatch idiom)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from demo_views import render_view, scalar_bar  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--plugin", default=os.path.join(
    ROOT, "build/lib/paraview-5.11/plugins/JZTree/JZTree.so"))
parser.add_argument("--data", default=os.path.join(
    ROOT, "..", "shared", "data", "external", "gadget4-cosmobox-n32-l50"))
parser.add_argument("--out", default=os.path.join(ROOT, "out"))
parser.add_argument("--panel", type=int, default=400, help="pixels per panel")
parser.add_argument("--strict", action="store_true", help="exit 125 when the data are absent")
args, _ = parser.parse_known_args()  # run-demo.sh passes demo.py's arguments too

files = sorted(glob.glob(os.path.join(args.data, "snapshot_*.hdf5")))
if len(files) < 2:
    print(f"Skipping the tracking demo: no snapshot series in {args.data} "
          f"(it lives in ../shared/data/external beside the repository).")
    sys.exit(125 if args.strict else 0)

LoadPlugin(args.plugin, ns=globals())
os.makedirs(args.out, exist_ok=True)

import numpy as np  # noqa: E402
from paraview import servermanager  # noqa: E402
from vtkmodules.numpy_interface.dataset_adapter import CompositeDataIterator  # noqa: E402
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy  # noqa: E402
from vtkmodules.vtkCommonCore import vtkPoints  # noqa: E402
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkImageData, vtkPolyData  # noqa: E402
from vtkmodules.vtkIOImage import vtkPNGReader, vtkPNGWriter  # noqa: E402

reader = ParticleSnapshotReader(FileName=files)
fof = FriendsOfFriends(Input=reader, LinkingLength=0.2, MinimumGroupSize=32, Periodic=1,
                       MassArray=["POINTS", "Masses"])
tracking = HaloTracking(Input=fof, MassArray=["POINTS", "Masses"])
times = list(reader.TimestepValues)
tracking.UpdatePipeline(times[-1])
table = servermanager.Fetch(tracking, idx=1)
tree = {table.GetColumnName(i): vtk_to_numpy(table.GetColumn(i)) for i in range(table.GetNumberOfColumns())}
last = len(times) - 1


def redshift(a):
    return 1.0 / a - 1.0


# The largest z = 0 halo and its progenitors, step by step back in time.
final = np.flatnonzero(tree["TimeStep"] == last)
root = final[np.argmax(tree["Mass"][final])]
progenitors = {last: [int(tree["GroupId"][root])]}
for s in range(last - 1, -1, -1):
    rows = np.flatnonzero((tree["TimeStep"] == s) & np.isin(tree["DescendantGroupId"], progenitors[s + 1]))
    progenitors[s] = [int(g) for g in tree["GroupId"][rows]]
print(f"Merger tree of the largest z = 0 halo (GroupId {progenitors[last][0]}, "
      f"TrackId {int(tree['TrackId'][root])}, {int(tree['Count'][root])} particles):")
for s in range(last, -1, -1):
    rows = np.flatnonzero((tree["TimeStep"] == s) & np.isin(tree["GroupId"], progenitors[s]))
    rows = rows[np.argsort(-tree["Count"][rows])]
    parts = [f"GroupId {int(tree['GroupId'][r])} (TrackId {int(tree['TrackId'][r])}, "
             f"{int(tree['Count'][r])}{', main' if tree['IsMainProgenitor'][r] else ''})" for r in rows]
    print(f"  z = {redshift(times[s]):5.2f}: " + ("; ".join(parts) if parts else "no progenitor yet"))


def particles_at(t):
    """Positions, GroupId and TrackId of every particle at time t."""
    tracking.UpdatePipeline(t)
    data = servermanager.Fetch(tracking)
    leaves = [leaf.VTKObject for leaf in CompositeDataIterator(data)] if data.IsA("vtkCompositeDataSet") else [data]
    x = np.concatenate([vtk_to_numpy(d.GetPoints().GetData()) for d in leaves]).astype(np.float64)
    arr = {n: np.concatenate([vtk_to_numpy(d.GetPointData().GetArray(n)) for d in leaves])
           for n in ("GroupId", "TrackId")}
    return x, arr["GroupId"], arr["TrackId"]


box = float(vtk_to_numpy(servermanager.Fetch(reader).GetFieldData().GetArray("BoxSize")).ravel()[0])
x, gid, _ = particles_at(times[-1])
members = x[gid == progenitors[last][0]]
centre = members[0] + np.mean((members - members[0] + box / 2) % box - box / 2, axis=0)
half = 7.0  # Mpc/h around the halo
tracks = np.unique(tree["TrackId"][np.isin(tree["TimeStep"], list(progenitors)) & np.concatenate(
    [np.isin(tree["GroupId"][tree["TimeStep"] == s], progenitors[s]) for s in range(last + 1)])])


def polydata(points, track):
    """Points with one vertex each (rendered as points) and TrackId."""
    pd = vtkPolyData()
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(points), deep=1))
    pd.SetPoints(pts)
    verts = vtkCellArray()
    n = len(points)
    verts.SetData(numpy_to_vtkIdTypeArray(np.arange(n + 1, dtype=np.int64), deep=1),
                  numpy_to_vtkIdTypeArray(np.arange(n, dtype=np.int64), deep=1))
    pd.SetVerts(verts)
    arr = numpy_to_vtk(track.astype(np.float64), deep=1)
    arr.SetName("TrackId")
    pd.GetPointData().AddArray(arr)
    return pd


panels = []
lut = GetColorTransferFunction("TrackId")
lut.ApplyPreset("Rainbow Uniform", True)
lut.RescaleTransferFunction(float(tracks.min()), float(tracks.max()))
for s, t in enumerate(times):
    x, gid, tid = particles_at(t)
    rel = (x - centre + box / 2) % box - box / 2
    near = np.all(np.abs(rel) < half, axis=1)
    inside = near & np.isin(gid, progenitors[s])
    view = render_view([args.panel, args.panel], [0.08, 0.08, 0.1])
    shown = []
    for sel, size, faint in ((near & ~inside, 2, True), (inside, 4, False)):
        if not sel.any():
            continue
        src = TrivialProducer()
        src.GetClientSideObject().SetOutput(polydata(rel[sel], tid[sel]))
        d = Show(src, view)
        d.SetRepresentationType("Points")
        d.PointSize = size
        if faint:
            d.ColorArrayName = ["POINTS", ""]
            d.AmbientColor = d.DiffuseColor = [0.5, 0.53, 0.62]
            d.Opacity = 0.35
        else:
            ColorBy(d, ("POINTS", "TrackId"))
            d.LookupTable = lut
        shown.append(src)
    label = Text(Text=f"z = {redshift(t):.2f}: {len(progenitors[s])} progenitor(s)")
    ld = Show(label, view)
    ld.FontSize = 12
    ld.WindowLocation = "Upper Center"
    view.CameraPosition = [half * 3.2, half * 2.4, half * 2.0]
    view.CameraFocalPoint = [0, 0, 0]
    view.CameraViewUp = [0, 0, 1]
    view.ResetCamera(-half, half, -half, half, -half, half)
    png = os.path.join(args.out, f"halo_progenitors_{s}.png")
    SaveScreenshot(png, view, ImageResolution=[args.panel, args.panel])
    panels.append(png)
    for p in shown + [label]:
        Delete(p)
    Delete(view)

images = []
for png in panels:  # the panels side by side
    r = vtkPNGReader()
    r.SetFileName(png)
    r.Update()
    w, h, _ = r.GetOutput().GetDimensions()
    scalars = r.GetOutput().GetPointData().GetScalars()
    images.append(vtk_to_numpy(scalars).reshape(h, w, scalars.GetNumberOfComponents()))
strip = np.ascontiguousarray(np.concatenate(images, axis=1))
image = vtkImageData()
image.SetDimensions(strip.shape[1], strip.shape[0], 1)
pixels = numpy_to_vtk(strip.reshape(-1, strip.shape[2]), deep=1)
image.GetPointData().SetScalars(pixels)
writer = vtkPNGWriter()
writer.SetInputData(image)
out = os.path.join(args.out, "halo_progenitors.png")
writer.SetFileName(out)
writer.Write()
for png in panels:
    os.remove(png)
print("wrote", out)
