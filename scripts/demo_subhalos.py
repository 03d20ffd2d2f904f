"""Subhalos of the largest real halo: the Gadget-4 z = 0 snapshot opened
through the plugin's reader, FriendsOfFriends (periodic, b = 0.2, >= 32
members), then SubhaloFinder (G from the snapshot's unit attributes, its
comoving softening). The picture shows the largest FoF halo's particles
coloured by SubhaloId (grey: in no subhalo) and each of its subhalos' Vmax
circle (radius RVmax around the subhalo's CentreOfPotential), seen along z.

Run with pvbatch (scripts/run-demo.sh runs it after scripts/demo_snapshot.py):
    pvbatch scripts/demo_subhalos.py [--plugin PATH] [--snapshot FILE] [--out out]
The snapshot defaults to ../shared/data/external/gadget4-cosmobox-n32-l50/
snapshot_062.hdf5; without it the script says so and exits 0 (exit code 125
with --strict). Writes <out>/subhalos.png and prints the halo's subhalos
(Count, Mass, Vmax, RVmax, ParentSubhaloId).
"""
import os
import sys

from paraview.simple import *  # noqa: F401,F403 (pvbatch idiom)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demo_views import ROOT, column, demo_parser, render_view, scalar_bar, start_demo  # noqa: E402

DEFAULT = os.path.join(ROOT, "..", "shared", "data", "external", "gadget4-cosmobox-n32-l50",
                       "snapshot_062.hdf5")
G_CGS = 6.6743e-8  # cm^3 g^-1 s^-2
# Distinct colours for the subhalos (ColorBrewer Set1 and Dark2), in turn.
PALETTE = [[0.89, 0.10, 0.11], [0.22, 0.49, 0.72], [0.30, 0.69, 0.29], [0.60, 0.31, 0.64],
           [1.00, 0.50, 0.00], [1.00, 1.00, 0.20], [0.65, 0.34, 0.16], [0.97, 0.51, 0.75],
           [0.11, 0.62, 0.47], [0.85, 0.37, 0.01], [0.46, 0.44, 0.70], [0.90, 0.67, 0.01]]

parser = demo_parser([1000, 1000])
parser.add_argument("--snapshot", default=DEFAULT)
parser.add_argument("--min-subhalo", type=int, default=20, help="MinimumSubhaloSize")
args, _ = parser.parse_known_args()  # run-demo.sh passes demo.py's arguments too
snapshot = os.path.abspath(args.snapshot)
start_demo(args, os.path.exists(snapshot), f"the subhalo picture ({snapshot})", globals())

import numpy as np  # noqa: E402
from paraview import servermanager  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
import h5py  # noqa: E402  (after ParaView: its HDF5 first)

# 1. The snapshot, G in its units (from the reader's field data) and its softening.
snap = OpenDataFile(snapshot)
snap.UpdatePipeline()
field = servermanager.Fetch(snap).GetFieldData()


def unit(name):
    return float(vtk_to_numpy(field.GetArray(name))[0])


G = G_CGS * unit("UnitMass_in_g") / (unit("UnitLength_in_cm") * unit("UnitVelocity_in_cm_per_s") ** 2)
with h5py.File(snapshot, "r") as f:
    softening = float(f["Parameters"].attrs["SofteningComovingClass0"])

# 2. Halos, then their subhalos (the box [0, BoxSize] from the file).
fof = FriendsOfFriends(Input=snap, LinkingLengthMode="Relative", LinkingLength=0.2,
                       MinimumGroupSize=32, Periodic=1, MassArray=["POINTS", "Masses"])
sub = SubhaloFinder(Input=fof, MassArray=["POINTS", "Masses"],
                    VelocityArray=["POINTS", "Velocities"], Periodic=1, Softening=softening,
                    GravitationalConstant=G, MinimumSubhaloSize=args.min_subhalo)
sub.UpdatePipeline()
fof_cat = servermanager.Fetch(fof, idx=1)
sub_cat = servermanager.Fetch(sub, idx=1)
counts, group_ids = column(fof_cat, "Count"), column(fof_cat, "GroupId")
largest = int(group_ids[np.argmax(counts)])
mine = column(sub_cat, "GroupId") == largest
print(f"{os.path.basename(snapshot)}: {len(counts)} FoF halos, {len(mine)} subhalos "
      f"(G = {G:.6g}, softening {softening:g}); the largest halo, GroupId {largest}, "
      f"{int(counts.max())} particles, {int(mine.sum())} subhalos:")
print("  SubhaloId  SubhaloRank  Count        Mass     Vmax    RVmax  ParentSubhaloId")
for s in np.flatnonzero(mine):
    print(f"  {column(sub_cat, 'SubhaloId')[s]:9d}  {column(sub_cat, 'SubhaloRank')[s]:11d}  "
          f"{column(sub_cat, 'Count')[s]:5d}  {column(sub_cat, 'Mass')[s]:10.4g}  "
          f"{column(sub_cat, 'Vmax')[s]:7.1f}  {column(sub_cat, 'RVmax')[s]:7.4f}  "
          f"{column(sub_cat, 'ParentSubhaloId')[s]:15d}")



def vmax_circles(centres, radii, subhalo_ids, segments=128):
    """A closed polyline of radius RVmax around each centre, in the plane
    z = centre z (the view looks along z), with the SubhaloId of its subhalo."""
    from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
    t = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(t), np.sin(t), np.zeros_like(t)], axis=1)
    xyz = (centres[:, None, :] + radii[:, None, None] * ring[None]).reshape(-1, 3)
    n = len(centres)
    conn = (np.arange(n)[:, None] * segments + np.append(np.arange(segments), 0)[None]).ravel()
    cells = vtkCellArray()
    cells.SetData(numpy_to_vtkIdTypeArray(np.arange(n + 1) * (segments + 1), deep=1),
                  numpy_to_vtkIdTypeArray(conn.astype(np.int64), deep=1))
    pd = vtkPolyData()
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(xyz), deep=1))
    pd.SetPoints(pts)
    pd.SetLines(cells)
    sid = numpy_to_vtkIdTypeArray(np.repeat(subhalo_ids.astype(np.int64), segments), deep=1)
    sid.SetName("SubhaloId")
    pd.GetPointData().AddArray(sid)
    return pd


# 3. The picture: the halo's particles by SubhaloId, the Vmax circles on top.
view = render_view(args.size, [0.08, 0.08, 0.1])
halo = Threshold(Input=MergeBlocks(Input=sub), Scalars=["POINTS", "GroupId"])
halo.LowerThreshold = halo.UpperThreshold = largest
members = Show(halo, view)
members.SetRepresentationType("Points")
members.PointSize = 4
ColorBy(members, ("POINTS", "SubhaloId"))
ids = column(sub_cat, "SubhaloId")[mine]
lut = GetColorTransferFunction("SubhaloId")
lut.InterpretValuesAsCategories = 1
lut.Annotations = sum([[str(int(i)), str(int(i))] for i in ids], []) + ["-1", "in no subhalo"]
lut.IndexedColors = sum([PALETTE[k % len(PALETTE)] for k in range(len(ids))], []) + [0.5, 0.5, 0.55]
scalar_bar(members, view, lut, "SubhaloId", [1, 1, 1])
circles = TrivialProducer()
circles.GetClientSideObject().SetOutput(vmax_circles(
    column(sub_cat, "CentreOfPotential")[mine], column(sub_cat, "RVmax")[mine], ids))
rings = Show(circles, view)
ColorBy(rings, ("POINTS", "SubhaloId"))
rings.LineWidth = 3
main = np.flatnonzero(mine & (column(sub_cat, "SubhaloRank") == 0))
speed = "km/s" if unit("UnitVelocity_in_cm_per_s") == 1e5 else "velocity units"
length = "Mpc/h" if abs(unit("UnitLength_in_cm") / 3.085678e24 - 1) < 1e-4 else "length units"
peak = (f"; the main one's Vmax {column(sub_cat, 'Vmax')[main[0]]:.0f} {speed} at RVmax "
        f"{column(sub_cat, 'RVmax')[main[0]]:.3g} {length}" if len(main) else "")
title = Text(Text=f"Largest FoF halo of the Gadget-4 box at z = 0 ({int(counts.max())} particles): "
                  f"{int(mine.sum())} subhalo(s), particles by SubhaloId{peak}\ncircles: radius "
                  f"RVmax (where the circular velocity peaks at Vmax) around each "
                  f"CentreOfPotential; view along z")
td = Show(title, view)
td.FontSize = 13
td.WindowLocation = "Upper Center"
view.CameraParallelProjection = 1
bounds = halo.GetDataInformation().GetBounds()
centre = [(bounds[2 * k] + bounds[2 * k + 1]) / 2 for k in range(3)]
view.CameraFocalPoint = centre
view.CameraPosition = [centre[0], centre[1], centre[2] + 10 * (bounds[5] - bounds[4] + 1)]
view.CameraViewUp = [0, 1, 0]
view.ResetCamera(False)
view.CameraParallelScale = 0.6 * max(bounds[1] - bounds[0], bounds[3] - bounds[2])
png = os.path.join(args.out, "subhalos.png")
SaveScreenshot(png, view, ImageResolution=args.size)
print("wrote", png)
