"""SPH maps of a real box: Gadget-4's gas (its own SmoothingLength and masses,
the periodic box from the file) projected into a surface density map and
deposited into a density volume, each drawn on a log colour scale.

Run with pvbatch (scripts/run-demo.sh runs it after scripts/demo_tracking.py):
    pvbatch scripts/demo_sph.py [--plugin PATH] [--snapshot FILE] [--out out]
The snapshot defaults to the gas run in
../shared/data/external/gadget4-lcdm-gas-sph-n2x32 (z = 0); without it the
script says so and exits 0 (exit code 125 with --strict). Writes
<out>/sph_projection.png (SPHProjection's SurfaceDensity, 1024^2, shown as an
image slice) and <out>/sph_volume.png (a volume rendering of SPHVolume's
Density, 96^3), and prints the projected mass against the particles' mass
(exit 1 when they differ by more than 1e-6).
"""
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403 (pvbatch idiom)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demo_views import ROOT, column, demo_parser, render_view, scalar_bar, start_demo  # noqa: E402

parser = demo_parser([900, 900])
parser.add_argument("--snapshot", default=os.path.join(
    ROOT, "..", "shared", "data", "external", "gadget4-lcdm-gas-sph-n2x32", "snapshot_004.hdf5"))
parser.add_argument("--resolution", type=int, default=1024)
parser.add_argument("--volume", type=int, default=96)
args, _ = parser.parse_known_args()  # run-demo.sh passes demo.py's arguments too
snapshot = os.path.abspath(args.snapshot)
start_demo(args, os.path.exists(snapshot), f"the SPH maps ({snapshot})", globals())

import numpy as np  # noqa: E402
from paraview import servermanager  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

# The gas only, with the arrays the maps need.
snap = ParticleSnapshotReader(FileName=snapshot)
snap.ParticleTypes = ["PartType0"]
snap.UpdatePipeline()
box = vtk_to_numpy(servermanager.Fetch(snap).GetFieldData().GetArray("BoxSize")).ravel()
gas = dict(SmoothingLengthArray=["POINTS", "SmoothingLength"], MassArray=["POINTS", "Masses"],
           Periodic=1)
masses = column(servermanager.Fetch(snap), "Masses")
print(f"{os.path.basename(snapshot)}: {len(masses)} gas particles, BoxSize {box.tolist()}")


def timed(proxy):
    start = time.perf_counter()
    proxy.UpdatePipeline()
    return time.perf_counter() - start


def save(view, name):
    png = os.path.join(args.out, name)
    SaveScreenshot(png, view, ImageResolution=args.size)
    print(f"wrote {png}")


white, ink = [1, 1, 1], [0.1, 0.1, 0.1]

# 1. The projected (column) density along z, on a log colour scale.
proj = SPHProjection(Input=snap, Resolution=[args.resolution] * 2, **gas)
t = timed(proj)
img = servermanager.Fetch(proj)
sd = vtk_to_numpy(img.GetPointData().GetArray("SurfaceDensity"))
cell = (box[0] / args.resolution) * (box[-1] / args.resolution)
projected = sd.sum() * cell
print(f"SPHProjection {args.resolution}^2: {t:.2f} s, projected mass {projected:.6g} "
      f"(particles: {masses.sum():.6g})")
if abs(projected - masses.sum()) > 1e-6 * masses.sum():
    sys.exit("the projection lost mass")
view = render_view(args.size, white)
d = Show(proj, view)  # the plugin's default look: an image slice, log scale
lut = GetColorTransferFunction("SurfaceDensity")
positive = sd[sd > 0]
lut.RescaleTransferFunction(float(np.percentile(positive, 1)), float(positive.max()))
scalar_bar(d, view, lut, "gas surface density", ink)
view.InteractionMode = "2D"
view.CameraParallelProjection = 1
Render(view)
view.CameraFocalPoint = [0.57 * box[0], box[-1] / 2, 0]  # room for the colour bar
view.CameraPosition = [0.57 * box[0], box[-1] / 2, 3 * box[0]]
view.CameraViewUp = [0, 1, 0]
view.CameraParallelScale = 0.58 * box[0]
Render(view)
save(view, "sph_projection.png")

# 2. The density on a 3-D grid, volume rendered.
vol = SPHVolume(Input=snap, Resolution=[args.volume] * 3, **gas)
t = timed(vol)
print(f"SPHVolume {args.volume}^3: {t:.2f} s")
view = render_view(args.size, [0, 0, 0])
d = Show(vol, view)  # the plugin's default look: a volume, log-spaced colours
scalar_bar(d, view, GetColorTransferFunction("Density", d, separate=True), "gas density",
           [0.9, 0.9, 0.9])
view.CameraPosition = [box[0] * 2.0, box[0] * 1.5, box[0] * 1.3]
view.CameraFocalPoint = [box[0] / 2] * 3
view.CameraViewUp = [0, 0, 1]
view.ResetCamera(False)
Render(view)
save(view, "sph_volume.png")
