"""The SPH maps on every rank's piece, run by test_mpi_sph.py. Every rank
builds the same particle set (periodic unit box, clumps at faces and
corners), keeps a random share, and runs SPHProjection (kNN smoothing
lengths, periodic, a mapped vector), SPHSlice (given h, computed densities,
a mapped scalar) and SPHVolume (Wendland C2); each writes the extent of the
image it was given and its arrays to OUT/rank<r>.npz. In serial mode one
process runs the whole set (the reference).

Usage: mpiexec -n P pvbatch --symmetric mpi_sph_case.py parallel OUT
       pvbatch mpi_sph_case.py serial OUT P
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402
import numpy as np  # noqa: E402
from jztest import polydata, producer, simple, update_collecting_errors  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkParallelCore import vtkMultiProcessController  # noqa: E402

MAPS = {
    "projection": ("SPHProjection", dict(Resolution=[40, 30], Periodic=1, BoxFromData=0,
                                         BoxBounds=[0, 1, 0, 1, 0, 1], NumberOfNeighbors=16,
                                         PointArrays=["Velocity"], Axis="Y")),
    "slice": ("SPHSlice", dict(Resolution=[32, 24], SmoothingLengthArray=["POINTS", "h"],
                               Region=[0, 1, 0, 1, 0, 1], SlicePosition=0.31,
                               PointArrays=["Temperature"])),
    "volume": ("SPHVolume", dict(Resolution=[12, 10, 8], SmoothingLengthArray=["POINTS", "h"],
                                 Region=[0, 1, 0, 1, 0, 1], Kernel="Wendland C2",
                                 PointArrays=["Temperature"])),
}
ARRAYS = ("SurfaceDensity", "Density", "Velocity", "Temperature")


def dataset():
    rng = np.random.default_rng(41)
    parts = [rng.random((3000, 3))]
    for k, c in enumerate([[0.02, 0.5, 0.5], [0.98, 0.98, 0.02], [0.5, 0.3, 0.31]]):
        parts.append(np.array(c) + 0.02 * (1 + k) * rng.standard_normal((300, 3)))
    x = np.mod(np.concatenate(parts), 1.0)
    n = len(x)
    return x, dict(Mass=0.5 + rng.random(n), h=0.02 + 0.1 * rng.random(n),
                   Temperature=1 + rng.random(n), Velocity=rng.normal(size=(n, 3)))


def run(x, arrays, out):
    src = producer(polydata(x, arrays))
    res = {}
    for key, (name, props) in MAPS.items():
        f = (jztest.__dict__.get(name) or getattr(simple, name))(
            Input=src, MassArray=["POINTS", "Mass"], **props)
        alg, errors = update_collecting_errors(f)
        img = alg.GetOutputDataObject(0)
        res[key + "_errors"] = "\n".join(errors)
        res[key + "_extent"] = np.array(img.GetExtent())
        for a in ARRAYS:
            arr = img.GetPointData().GetArray(a)
            if arr is not None:
                res[key + "_" + a] = vtk_to_numpy(arr).copy()
        simple.Delete(f)
    np.savez(out, **res)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    x, arrays = dataset()
    if mode == "serial":
        run(x, arrays, os.path.join(out, "serial.npz"))
        return
    ctrl = vtkMultiProcessController.GetGlobalController()
    r, P = ctrl.GetLocalProcessId(), ctrl.GetNumberOfProcesses()
    owner = np.random.default_rng(9).integers(0, P, len(x))
    sel = np.flatnonzero(owner == r)
    run(x[sel], {k: v[sel] for k, v in arrays.items()}, os.path.join(out, f"rank{r}.npz"))


main()
