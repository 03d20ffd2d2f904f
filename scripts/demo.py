"""The main job: kNN density and friends-of-friends halos of the bundled
clustered particle set.

Run with pvbatch (see scripts/run-demo.sh):
    pvbatch scripts/demo.py [--plugin PATH] [--data Data/clustered.vtp] [--out out]
Writes
  <out>/knn_density.vtp  the particles with SmoothingLength and Density
  <out>/knn_density.png  3-D view coloured by log10 density
  <out>/halo_slab.png    a slab (0.3 < z < 0.7) coloured by log10 density, seen
                         from +z, with the FoF halo centres in the slab circled
  <out>/halos.csv        the FoF halo catalogue, one row per group by GroupId
and prints a summary (points, groups, largest group, time per filter, device).
"""
import argparse
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403 (pvbatch idiom)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from demo_views import point_splats, render_view, scalar_bar  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--plugin", default=os.path.join(
    ROOT, "build/lib/paraview-5.11/plugins/JZTree/JZTree.so"))
parser.add_argument("--data", default=os.path.join(ROOT, "Data/clustered.vtp"))
parser.add_argument("--out", default=os.path.join(ROOT, "out"))
parser.add_argument("--k", type=int, default=32)
parser.add_argument("--size", type=int, nargs=2, default=[1000, 800], help="PNG width height")
args = parser.parse_args()

LoadPlugin(args.plugin, ns=globals())
os.makedirs(args.out, exist_ok=True)

particles = XMLPolyDataReader(FileName=[args.data])
# The bundled set lives in the periodic unit box; masses are in "Mass".
density = KNNDensity(Input=particles, NumberOfNeighbors=args.k,
                     Estimator="SPH Cubic Spline", MassArray=["POINTS", "Mass"],
                     Periodic=1, BoxBounds=[0, 1, 0, 1, 0, 1])
start = time.perf_counter()
density.UpdatePipeline()
elapsed = time.perf_counter() - start
info = density.GetDataInformation()
rho_range = density.PointData["Density"].GetRange()
print(f"KNNDensity: {info.GetNumberOfPoints()} particles, K={args.k}, "
      f"{elapsed:.2f} s (including reading), density range {rho_range}")

# The job checks its own result: a density on every particle, all positive.
if info.GetNumberOfPoints() == 0 or not (rho_range[0] > 0 and rho_range[1] < float("inf")):
    raise RuntimeError(f"KNNDensity gave no usable density (range {rho_range})")

vtp = os.path.join(args.out, "knn_density.vtp")
SaveData(vtp, proxy=density)
print("wrote", vtp)

logDensity = Calculator(Input=density, ResultArrayName="log10Density",
                        Function="log10(Density)")
view = render_view(args.size, [1, 1, 1])
display = Show(logDensity, view)
point_splats(display, 0.0025, "log10Density")
lut = GetColorTransferFunction("log10Density")
lut.ApplyPreset("Turbo", True)
display.RescaleTransferFunctionToDataRange(False, True)
scalar_bar(display, view, lut, "log10 density", [0, 0, 0])
view.CameraPosition = [2.6, 1.9, 2.2]
view.CameraFocalPoint = [0.5, 0.5, 0.5]
view.CameraViewUp = [0, 0, 1]
view.ResetCamera(False)
GetActiveCamera().Dolly(1.3)
png = os.path.join(args.out, "knn_density.png")
SaveScreenshot(png, view, ImageResolution=args.size)
if not os.path.exists(png) or os.path.getsize(png) < 1000:
    raise RuntimeError(f"the rendering {png} was not written")
print("wrote", png)

# ---- Friends-of-friends halos: catalogue table and a density slab with halos.
from paraview import servermanager  # noqa: E402
import numpy as np  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

fof = FriendsOfFriends(Input=particles, LinkingLengthMode="Relative", LinkingLength=0.2,
                       MinimumGroupSize=20, Periodic=1, BoxBounds=[0, 1, 0, 1, 0, 1],
                       MassArray=["POINTS", "Mass"], VelocityArray=["POINTS", "Velocity"])
start = time.perf_counter()
fof.UpdatePipeline()
fof_time = time.perf_counter() - start
catalogue = servermanager.Fetch(fof, idx=1)
ngroups = catalogue.GetNumberOfPoints()
cpd = catalogue.GetPointData()
cols = {name: vtk_to_numpy(cpd.GetArray(name)).reshape(ngroups, -1)
        for name in ("GroupId", "Count", "Mass", "CenterOfMass", "InertiaRadius",
                     "MeanVelocity", "VelocityDispersion")} if ngroups else {}
if ngroups == 0:
    raise RuntimeError("FriendsOfFriends found no groups in the demo data")
csv = os.path.join(args.out, "halos.csv")
with open(csv, "w") as f:
    f.write("GroupId,Count,Mass,x,y,z,InertiaRadius,vx,vy,vz,VelocityDispersion\n")
    for i in np.argsort(cols["GroupId"][:, 0], kind="stable"):
        row = [cols["GroupId"][i, 0], cols["Count"][i, 0], cols["Mass"][i, 0],
               *cols["CenterOfMass"][i], cols["InertiaRadius"][i, 0],
               *cols["MeanVelocity"][i], cols["VelocityDispersion"][i, 0]]
        f.write(",".join(str(int(v)) if k < 2 else "%.7g" % v for k, v in enumerate(row)) + "\n")
print("wrote", csv)


def slab(source, port=0, lo=0.3, hi=0.7):
    """The points of source (port) with lo < z < hi, all point arrays kept."""
    return ProgrammableFilter(Input=OutputPort(source, port), OutputDataSetType="vtkPolyData",
                              Script=f"""
from vtkmodules.numpy_interface import dataset_adapter as dsa
inp = dsa.WrapDataObject(self.GetInputDataObject(0, 0))
out = dsa.WrapDataObject(self.GetOutputDataObject(0))
if inp.GetNumberOfPoints() > 0:
    z = inp.Points[:, 2]
    m = (z > {lo}) & (z < {hi})
    out.Points = inp.Points[m]
    for name in inp.PointData.keys():
        out.PointData.append(inp.PointData[name][m], name)
""")


slabView = render_view([900, 900], [0, 0, 0])
slabParticles = slab(logDensity)
sd = Show(slabParticles, slabView)
point_splats(sd, 0.0018, "log10Density")
sd.RescaleTransferFunctionToDataRange(False, True)
scalar_bar(sd, slabView, lut, "log10 density", [1, 1, 1])
# Halo centres in the slab: circles of radius 2 x the inertia radius (white).
slabHalos = slab(fof, port=1)
rings = Glyph(Input=slabHalos, GlyphType="2D Glyph")
rings.GlyphType.GlyphType = "Circle"
rings.ScaleArray = ["POINTS", "InertiaRadius"]
rings.ScaleFactor = 4.0  # circle diameter 4 x inertia radius
rings.GlyphMode = "All Points"
rd = Show(rings, slabView)
rd.ColorArrayName = ["POINTS", ""]
rd.AmbientColor = rd.DiffuseColor = [1, 1, 1]
rd.LineWidth = 2.0
rd.Position = [0, 0, 1]  # drawn above the slab
slabView.CameraPosition = [0.5, 0.5, 3]
slabView.CameraFocalPoint = [0.5, 0.5, 0.5]
slabView.CameraViewUp = [0, 1, 0]
slabView.CameraParallelProjection = 1
slabView.CameraParallelScale = 0.52
text = Text(Text=f"slab 0.3 < z < 0.7: log10 density (KNN, K={args.k}) and FoF halos (b = 0.2)")
td = Show(text, slabView)
td.FontSize = 14
td.WindowLocation = "Upper Center"
slab_png = os.path.join(args.out, "halo_slab.png")
SaveScreenshot(slab_png, slabView, ImageResolution=[900, 900])
if not os.path.exists(slab_png) or os.path.getsize(slab_png) < 1000:
    raise RuntimeError(f"the rendering {slab_png} was not written")
print("wrote", slab_png)

device = catalogue.GetFieldData().GetAbstractArray("JZDevice")
device = device.GetValue(0) if device is not None else "?"
print()
print("Summary")
print(f"  points         {density.GetDataInformation().GetNumberOfPoints()}")
print(f"  groups         {ngroups} (FoF b = 0.2, at least 20 members)")
print(f"  largest group  {int(cols['Count'][:, 0].max())} particles")
print(f"  KNNDensity     {elapsed:.2f} s (K = {args.k}, including reading)")
print(f"  FriendsOfFriends {fof_time:.2f} s")
print(f"  device         {device}")
