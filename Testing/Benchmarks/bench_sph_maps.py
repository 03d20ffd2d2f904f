"""SPH maps against their peers, side by side in one run on the same particles
(../shared/anchors/halos.py, clustered, periodic unit box, unit total mass,
h = the distance to the 32nd neighbour from KNNDensity):
- SPHProjection against yt (Debian's python3-yt; ../shared/anchors/yt_sph_projection.py,
  which computes the same h with cKDTree) on a RES^2 projection;
- SPHSlice (a RES^2 plane) and SPHVolume (VOL^3) against ParaView's own
  vtkSPHInterpolator (SPHCubicKernel, SpatialStep = half the median h, since its
  cubic kernel reaches two SpatialSteps; a fixed smoothing length), on the same grids.
Prints wall times (CPU times of this process in brackets; yt runs in its own
process and gives only its wall time), the ratios peer / ours, and each map's
mass-conservation error |sum(map) x cell - M| / M (a slice has none).

Usage: pvpython Testing/Benchmarks/bench_sph_maps.py [--n 1e6] [--res 1024] [--vol 128]
       [--slice-res 512] [--skip yt,vtk,proj,slice,vol]
(--skip proj,vol times the slice alone, against its peer unless vtk is skipped too.)
"""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Python"))
import jztest  # noqa: E402  (loads the plugin)
from jztest import polydata, producer, simple  # noqa: E402

import numpy as np  # noqa: E402
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy  # noqa: E402
from vtkmodules.vtkCommonDataModel import vtkImageData  # noqa: E402
from vtkmodules.vtkFiltersPoints import vtkSPHCubicKernel, vtkSPHInterpolator  # noqa: E402

SHARED = os.environ.get("JZ_SHARED_DIR", os.path.join(jztest.ROOT, "..", "shared"))
ANCHORS = os.path.join(SHARED, "anchors")
sys.path.insert(0, ANCHORS)
from halos import halos  # noqa: E402


class Clock:
    """Wall and CPU seconds of a block."""

    def __enter__(self):
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = time.process_time() - self.c0

    def __str__(self):
        return f"{self.wall:.2f} s ({self.cpu:.2f} s CPU)"

    def ratio(self, peer):
        return f"{peer.wall / self.wall:.2f}x ({peer.cpu / self.cpu:.2f}x CPU)"


def timed(proxy):
    with Clock() as c:
        proxy.UpdatePipeline()
    return c, proxy.GetClientSideObject().GetOutputDataObject(0)


def vtk_sph(pd, dims, origin, spacing, step):
    grid = vtkImageData()
    grid.SetDimensions(*dims)
    grid.SetOrigin(*origin)
    grid.SetSpacing(*spacing)
    kernel = vtkSPHCubicKernel()
    kernel.SetSpatialStep(step)
    f = vtkSPHInterpolator()
    f.SetInputData(grid)
    f.SetSourceData(pd)
    f.SetKernel(kernel)
    f.SetMassArrayName("Mass")
    f.SetDensityArrayName("Density")
    with Clock() as c:
        f.Update()
    return c, vtk_to_numpy(f.GetOutput().GetPointData().GetArray("Density"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--res", type=int, default=1024)
    ap.add_argument("--slice-res", type=int, default=512)
    ap.add_argument("--vol", type=int, default=128)
    ap.add_argument("--skip", default="")
    a = ap.parse_args()
    n = int(a.n)
    skip = a.skip.split(",")
    x = halos(n).astype(np.float64)
    m = np.full(n, 1.0 / n)
    src = producer(polydata(x, {"Mass": m}))
    knn = jztest.KNNDensity(Input=src, NumberOfNeighbors=32, MassArray=["POINTS", "Mass"],
                            Periodic=1, BoxFromData=0)
    t_knn, kout = timed(knn)
    h = vtk_to_numpy(kout.GetPointData().GetArray("SmoothingLength")).copy()
    rho = vtk_to_numpy(kout.GetPointData().GetArray("Density")).copy()
    pd = polydata(x, {"Mass": m, "h": h, "Density": rho})
    src2 = producer(pd)
    common = dict(SmoothingLengthArray=["POINTS", "h"], MassArray=["POINTS", "Mass"], Periodic=1,
                  BoxFromData=0)
    print(f"N = {n} halos.py, kNN h (K = 32): {t_knn}; median h {np.median(h):.4g}")

    src2.UpdatePipeline()  # the maps time only themselves
    if "proj" not in skip:
        proj_vs_yt(src2, a.res, n, skip, common)
    if "slice" not in skip:
        slice_vs_vtk(src2, pd, a.slice_res, h, skip, common)
    if "vol" not in skip:
        volume_vs_vtk(src2, pd, a.vol, h, skip, common)


def proj_vs_yt(src2, res, n, skip, common):
    proj = jztest.__dict__.get("SPHProjection") or simple.SPHProjection
    t_proj, img = timed(proj(Input=src2, Resolution=[res, res], **common))
    sd = vtk_to_numpy(img.GetPointData().GetArray("SurfaceDensity"))
    err = abs(sd.sum() / res**2 - 1.0)
    print(f"SPHProjection {res}^2: {t_proj}, mass error {err:.2e}")
    if "yt" not in skip:
        p = subprocess.run(["/usr/bin/python3", os.path.join(ANCHORS, "yt_sph_projection.py"),
                            str(n), str(res)], capture_output=True, text=True)
        got = re.search(r": ([0-9.]+) s, image sum ([0-9.e+-]+)", p.stdout)
        if got:
            t_yt, s_yt = float(got.group(1)), float(got.group(2))
            print(f"yt projection {res}^2: {t_yt:.2f} s, mass ratio {s_yt / res**2:.4f}; "
                  f"yt / ours = {t_yt / t_proj.wall:.2f}x (wall)")
        else:
            print("yt: not run:", (p.stdout + p.stderr)[-300:])


def slice_vs_vtk(src2, pd, res, h, skip, common):
    slc = jztest.__dict__.get("SPHSlice") or simple.SPHSlice
    t_slice, _ = timed(slc(Input=src2, Resolution=[res, res], SlicePosition=0.5, **common))
    print(f"SPHSlice {res}^2: {t_slice}")
    if "vtk" not in skip:
        s = 1.0 / res
        t_vs, _ = vtk_sph(pd, (res, res, 1), (s / 2, s / 2, 0.5), (s, s, s), 0.5 * float(np.median(h)))
        print(f"vtkSPHInterpolator plane {res}^2: {t_vs}; vtk / ours = {t_slice.ratio(t_vs)}")


def volume_vs_vtk(src2, pd, res, h, skip, common):
    vol = jztest.__dict__.get("SPHVolume") or simple.SPHVolume
    t_vol, vimg = timed(vol(Input=src2, Resolution=[res] * 3, **common))
    dv = vtk_to_numpy(vimg.GetPointData().GetArray("Density"))
    verr = abs(dv.sum() / res**3 - 1.0)
    print(f"SPHVolume {res}^3: {t_vol}, mass error {verr:.2e}")
    if "vtk" not in skip:
        s = 1.0 / res
        t_vv, d = vtk_sph(pd, (res,) * 3, (s / 2,) * 3, (s,) * 3, 0.5 * float(np.median(h)))
        print(f"vtkSPHInterpolator volume {res}^3: {t_vv}, mass error "
              f"{abs(d.sum() / res**3 - 1):.2e}; vtk / ours = {t_vol.ratio(t_vv)}")


if __name__ == "__main__":
    main()
