"""The real workflow on a real simulation: a Gadget-4 snapshot opened through
the plugin's reader, kNN densities and friends-of-friends halos with the
periodic box taken from the file, and our halo catalogue put beside
Gadget-4's own FOF catalogue (read through the same reader).

Run with pvbatch (scripts/run-demo.sh runs it after scripts/demo.py):
    pvbatch scripts/demo_snapshot.py [--plugin PATH] [--snapshot FILE] [--out out]
The snapshot defaults to the Gadget-4 z = 0 box in
../shared/data/external/gadget4-cosmobox-n32-l50 (32^3 particles, 50 Mpc/h);
without it the script says so and exits 0 (exit code 125 with --strict).
Writes <out>/snapshot_halos.png (particles in halos coloured by GroupId, the
others faint, our catalogue's centres as rings) and <out>/snapshot_halos.csv
(our catalogue with Gadget-4's matching group), and prints the comparison:
group count, largest group, max |Delta CenterOfMass| against Gadget-4's GroupPos.
"""
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403 (pvbatch idiom)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demo_views import (ROOT, column, demo_parser, leaves, render_view, scalar_bar,  # noqa: E402
                        start_demo)

DEFAULT = os.path.join(ROOT, "..", "shared", "data", "external", "gadget4-cosmobox-n32-l50",
                       "snapshot_062.hdf5")

parser = demo_parser([1000, 1000])
parser.add_argument("--snapshot", default=DEFAULT)
parser.add_argument("--fof-tab", default=None, help="Gadget-4's catalogue (default: fof_tab_NNN "
                    "beside the snapshot)")
args, _ = parser.parse_known_args()  # run-demo.sh passes demo.py's arguments too

snapshot = os.path.abspath(args.snapshot)
fof_tab = args.fof_tab or os.path.join(
    os.path.dirname(snapshot), os.path.basename(snapshot).replace("snapshot_", "fof_tab_"))
start_demo(args, os.path.exists(snapshot) and os.path.exists(fof_tab),
           f"the snapshot workflow ({snapshot} and its fof_tab)", globals())

import numpy as np  # noqa: E402
from paraview import servermanager  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402


# 1. Open: File > Open's route (the reader factory recognises the snapshot).
start = time.perf_counter()
snap = OpenDataFile(snapshot)
snap.UpdatePipeline()
read_time = time.perf_counter() - start
field = servermanager.Fetch(snap).GetFieldData()
box = vtk_to_numpy(field.GetArray("BoxSize")).ravel()
redshift = float(vtk_to_numpy(field.GetArray("Redshift"))[0])
npart = snap.GetDataInformation().GetNumberOfPoints()
print(f"{os.path.basename(snapshot)}: {field.GetAbstractArray('SnapshotFormat').GetValue(0)}, "
      f"{npart} particles, BoxSize {box.tolist()}, z = {redshift:.3g}, read in {read_time:.2f} s "
      f"by {snap.GetXMLName()}")

# 2. Density and halos; Periodic on, the box [0, BoxSize] comes from the file.
density = KNNDensity(Input=snap, NumberOfNeighbors=32, MassArray=["POINTS", "Masses"], Periodic=1)
start = time.perf_counter()
density.UpdatePipeline()
knn_time = time.perf_counter() - start
fof = FriendsOfFriends(Input=density, LinkingLengthMode="Relative", LinkingLength=0.2,
                       MinimumGroupSize=32,  # Gadget-4's FOF_GROUP_MIN_LEN
                       Periodic=1, MassArray=["POINTS", "Masses"],
                       VelocityArray=["POINTS", "Velocities"])
start = time.perf_counter()
fof.UpdatePipeline()
fof_time = time.perf_counter() - start
ours = servermanager.Fetch(fof, idx=1)
particles = servermanager.Fetch(fof)
gid = column(particles, "GroupId")

# 3. Gadget-4's own catalogue, through the same reader.
tab = ParticleSnapshotReader(FileName=fof_tab)
gadget = leaves(servermanager.Fetch(tab))[0]
g_len = column(gadget, "GroupLen")
g_off = column(gadget, "GroupOffsetType")[:, 1]
g_pos = vtk_to_numpy(gadget.GetPoints().GetData()).astype(np.float64)

o_id = column(ours, "GroupId")
o_count = column(ours, "Count")
o_com = column(ours, "CenterOfMass").astype(np.float64)
order = np.argsort(o_id)
o_count, o_com = o_count[order], o_com[order]

# Gadget writes each group's members contiguously (GroupOffsetType): match
# each Gadget group to our GroupId of its members.
match = np.array([np.unique(gid[o:o + n]) for o, n in zip(g_off, g_len)], dtype=object)
one_to_one = all(len(m) == 1 and m[0] >= 0 for m in match)
mapped = np.array([m[0] for m in match]) if one_to_one else None
same_members = one_to_one and len(set(mapped.tolist())) == len(g_len) and \
    np.array_equal(o_count[mapped], g_len)
if one_to_one:
    delta = o_com[mapped] - g_pos
    delta -= box[:3] * np.round(delta / box[:3]) if len(box) == 3 else box[0] * np.round(delta / box[0])
    max_delta = float(np.sqrt((delta ** 2).sum(axis=1)).max())
else:
    max_delta = float("nan")

csv = os.path.join(args.out, "snapshot_halos.csv")
with open(csv, "w") as f:
    f.write("GroupId,Count,x,y,z,Gadget4_GroupNr,Gadget4_GroupLen,Gadget4_x,Gadget4_y,Gadget4_z\n")
    inverse = {int(m): k for k, m in enumerate(mapped)} if one_to_one else {}
    for i in range(len(o_count)):
        k = inverse.get(i)
        g = [k, g_len[k], *g_pos[k]] if k is not None else ["", "", "", "", ""]
        f.write(",".join(str(v) for v in [i, o_count[i], *o_com[i], *g]) + "\n")
print("wrote", csv)

# 4. The picture: halo members coloured by GroupId, the rest faint; our centres as rings.
view = render_view(args.size, [0.08, 0.08, 0.1])
merged = MergeBlocks(Input=fof)
field_members = Threshold(Input=merged, Scalars=["POINTS", "GroupId"])
field_members.LowerThreshold, field_members.UpperThreshold = 0, 1e9
field_rest = Threshold(Input=merged, Scalars=["POINTS", "GroupId"])
field_rest.LowerThreshold, field_rest.UpperThreshold = -1, -1
rest = Show(field_rest, view)
rest.SetRepresentationType("Points")
rest.PointSize = 2
rest.ColorArrayName = ["POINTS", ""]
rest.AmbientColor = rest.DiffuseColor = [0.5, 0.53, 0.62]
rest.Opacity = 0.45
outline = Box(XLength=box[0], YLength=box[-2 if len(box) == 3 else 0], ZLength=box[-1],
              Center=[box[0] / 2, box[-2 if len(box) == 3 else 0] / 2, box[-1] / 2])
od = Show(outline, view)
od.SetRepresentationType("Outline")
od.ColorArrayName = ["POINTS", ""]
od.AmbientColor = od.DiffuseColor = [0.7, 0.7, 0.75]
members = Show(field_members, view)
members.SetRepresentationType("Points")
members.PointSize = 3
ColorBy(members, ("POINTS", "GroupId"))
lut = GetColorTransferFunction("GroupId")
lut.ApplyPreset("Rainbow Uniform", True)
lut.RescaleTransferFunction(0, float(len(o_count) - 1))
bar = scalar_bar(members, view, lut, "GroupId", [1, 1, 1])
bar.RangeLabelFormat = "%.0f"
rings = Glyph(Input=OutputPort(fof, 1), GlyphType="Sphere")
rings.ScaleArray = ["POINTS", "InertiaRadius"]
rings.ScaleFactor = 3.0
rings.GlyphMode = "All Points"
rd = Show(rings, view)
rd.SetRepresentationType("Wireframe")
rd.ColorArrayName = ["POINTS", ""]
rd.AmbientColor = rd.DiffuseColor = [1, 1, 1]
rd.Opacity = 0.25
title = Text(Text=f"Gadget-4 box, 32^3 particles, z = 0: {len(o_count)} FoF halos (b = 0.2, "
                  f">= 32 members, periodic box {box[0]:g} Mpc/h from the file)")
td = Show(title, view)
td.FontSize = 13
td.WindowLocation = "Upper Center"
view.CameraPosition = [box[0] * 2.1, box[0] * 1.6, box[0] * 1.4]
view.CameraFocalPoint = [box[0] / 2] * 3
view.CameraViewUp = [0, 0, 1]
view.ResetCamera(False)
png = os.path.join(args.out, "snapshot_halos.png")
SaveScreenshot(png, view, ImageResolution=args.size)
print("wrote", png)

print()
print("Gadget-4 snapshot, our catalogue beside Gadget-4's fof_tab")
print(f"  groups                {len(o_count)} (ours)   {len(g_len)} (Gadget-4)")
print(f"  largest group         {int(o_count.max())} (ours)   {int(g_len.max())} (Gadget-4)")
print(f"  same members          {'yes, every group' if same_members else 'NO'}")
print(f"  max |Delta CenterOfMass| {max_delta:.3g} Mpc/h  (our CenterOfMass vs Gadget-4 GroupPos; "
      f"linking length {0.2 * box[0] / round(npart ** (1 / 3)):.4g})")
print(f"  times                 read {read_time:.2f} s, KNNDensity {knn_time:.2f} s, "
      f"FriendsOfFriends {fof_time:.2f} s")
if not (len(o_count) == len(g_len) and same_members and max_delta < 1e-3):
    raise RuntimeError("our catalogue does not match Gadget-4's")
