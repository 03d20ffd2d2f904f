"""KNNDensity options, densities and error handling against numpy/cKDTree.

Usage: pvpython test_knn_options.py SECTION   (SECTION from SECTIONS, or "all")
"""
import sys

import numpy as np
from vtkmodules.vtkCommonDataModel import vtkImageData, vtkPolyData, vtkUnstructuredGrid

import jztest
from jztest import (Checker, knn, polydata, reference, sph_density, tolerance,
                    tophat_density, verify_neighbors)

rng = np.random.default_rng(777)
c = Checker()


def periodic():
    box = [-2.0, 1.0, 0.5, 2.5, 10.0, 11.5]  # not at the origin, not cubic
    lo = np.array(box[0::2])
    length = np.array(box[1::2]) - lo
    for dtype in (np.float32, np.float64):
        pts = lo + rng.random((20000, 3)) * length
        # some points outside the box, up to two periods away
        pts[:500] += rng.integers(-2, 3, (500, 3)) * length
        pts = pts.astype(dtype)
        for k in (1, 32, 64):
            label = f"periodic k={k} {np.dtype(dtype).name}"
            print(label)
            run = knn(polydata(pts), NumberOfNeighbors=k, OutputNeighbors=1, Periodic=1,
                      BoxBounds=box, Device="CPU")
            c.check(not run.errors, f"{label}: no error {run.errors[:1]}")
            if dtype == np.float32:
                # Wrapping a float32 point into the box rounds it to the
                # nearest float32 (up to half an ulp of the box coordinates),
                # so compare with the float32-rounded wrapped points.
                wrapped, _, _ = jztest.wrap(pts, box)
                ulp = np.spacing(np.float32(np.abs(box).max()))
                verify_neighbors(c, run, wrapped.astype(np.float32), None, k, box=box,
                                 label=label, atol=2 * float(ulp))
            else:
                verify_neighbors(c, run, pts, None, k, box=box, label=label)
            # the output keeps the points as given (not wrapped)
            out = jztest.vtk_to_numpy(run.output.GetPoints().GetData())
            c.check(np.array_equal(out, pts), f"{label}: output points unchanged")


def query():
    pts = rng.random((30000, 3)).astype(np.float32)
    # image grid query: double points; the output is a vtkImageData
    img = vtkImageData()
    img.SetDimensions(20, 15, 10)
    img.SetOrigin(-0.1, 0.05, 0.2)
    img.SetSpacing(0.06, 0.07, 0.05)
    grid = np.array([img.GetPoint(i) for i in range(img.GetNumberOfPoints())])
    for k in (1, 32, 100):
        label = f"image query k={k}"
        print(label)
        run = knn(polydata(pts), img, NumberOfNeighbors=k, OutputNeighbors=1, Device="CPU")
        c.check(not run.errors, f"{label}: no error {run.errors[:1]}")
        c.check(run.output.IsA("vtkImageData") and run.output.GetDimensions() == (20, 15, 10),
                f"{label}: output is the query vtkImageData")
        verify_neighbors(c, run, pts.astype(np.float64), grid, k, label=label)
        c.check(run.array("Density").dtype == np.float64, f"{label}: double arrays for a double query")
    # point-set query of the same precision: float arrays
    q = (rng.random((5000, 3)) * 1.2 - 0.1).astype(np.float32)
    run = knn(polydata(pts), polydata(q), NumberOfNeighbors=16, OutputNeighbors=1, Device="CPU")
    verify_neighbors(c, run, pts, q, 16, label="polydata query k=16 float32")
    c.check(run.array("Density").dtype == np.float32, "float query: float arrays")
    c.check(run.output.GetNumberOfPoints() == 5000, "polydata query: output has the query points")
    # float particles, double query points
    qd = q.astype(np.float64) + 1e-9
    run = knn(polydata(pts), polydata(qd), NumberOfNeighbors=16, OutputNeighbors=1, Device="CPU")
    verify_neighbors(c, run, pts.astype(np.float64), qd, 16, label="double query on float particles")
    # unstructured-grid Input
    ug = vtkUnstructuredGrid()
    ug.SetPoints(polydata(pts).GetPoints())
    run = knn(ug, NumberOfNeighbors=8, OutputNeighbors=1, Device="CPU")
    c.check(run.output.IsA("vtkUnstructuredGrid"), "vtkUnstructuredGrid input gives one")
    verify_neighbors(c, run, pts, None, 8, label="unstructured grid input k=8")


def density():
    for dtype in (np.float32, np.float64):
        pts = rng.random((20000, 3)).astype(dtype)
        pts[:5000] = (0.5 + 0.05 * rng.normal(size=(5000, 3))).astype(dtype)
        mass = rng.uniform(0.5, 2.0, 20000)
        for k in (1, 16, 32, 100):
            ref_d, ref_i = reference(pts, None, k)
            h = ref_d[:, -1]
            for masses in (None, mass):
                tag = f"k={k} {np.dtype(dtype).name} {'mass' if masses is not None else 'unit'}"
                arrays = {"Mass": masses} if masses is not None else {}
                props = dict(NumberOfNeighbors=k, Device="CPU")
                if masses is not None:
                    props["MassArray"] = ["POINTS", "Mass"]
                m = np.ones_like(ref_d) if masses is None else masses[ref_i]
                sph = knn(polydata(pts, arrays), Estimator="SPH Cubic Spline", **props)
                c.check(not sph.errors, f"SPH {tag}: no error")
                c.check(not sph.has("NeighborIds") and not sph.has("NeighborDistances"),
                        f"SPH {tag}: no neighbour arrays without OutputNeighbors")
                if k > 1:  # h = 0 for k = 1 (self query): density is infinite
                    c.close(sph.array("Density"), sph_density(ref_d, h, m), tolerance(dtype),
                            f"SPH density {tag}")
                th = knn(polydata(pts, arrays), Estimator="Top Hat", **props)
                if k > 1:
                    c.close(th.array("Density"), tophat_density(h, m), tolerance(dtype),
                            f"Top Hat density {tag}")
                c.close(th.array("SmoothingLength"), h, tolerance(dtype), f"SmoothingLength {tag}")
    # mass arrays of other types are converted
    pts = rng.random((3000, 3))
    m32 = rng.uniform(1, 3, 3000).astype(np.float32)
    run = knn(polydata(pts, {"M": m32}), NumberOfNeighbors=8, Estimator="Top Hat",
              MassArray=["POINTS", "M"], Device="CPU")
    ref_d, ref_i = reference(pts, None, 8)
    c.close(run.array("Density"), tophat_density(ref_d[:, -1], m32.astype(np.float64)[ref_i]),
            1e-10, "float32 mass array on double points")
    # a density with query points (not self): reference neighbours of the grid
    q = rng.random((2000, 3))
    run = knn(polydata(pts), polydata(q), NumberOfNeighbors=10, Device="CPU")
    ref_d, _ = reference(pts, q, 10)
    c.close(run.array("Density"), sph_density(ref_d, ref_d[:, -1], np.ones_like(ref_d)), 1e-10,
            "SPH density at query points")


def globalids():
    n = 4000
    pts = rng.random((n, 3)).astype(np.float32)
    gids = (rng.permutation(n) * 3 + 10**12).astype(np.int64)  # large, not indices
    run = knn(polydata(pts, {"GlobalIds": gids}), NumberOfNeighbors=12, OutputNeighbors=1,
              Device="CPU")
    nid = run.array("NeighborIds")
    c.check(set(np.unique(nid)) <= set(gids.tolist()), "NeighborIds are GlobalIds")
    c.check(bool(np.all(nid[:, 0] == gids)), "first neighbour of a point is its own GlobalId")
    verify_neighbors(c, run, pts, None, 12, ids_map=gids, label="GlobalIds (int64)")
    # an int32 GlobalIds array is used too
    g32 = (rng.permutation(n) + 7).astype(np.int32)
    run = knn(polydata(pts, {"GlobalIds": g32}), NumberOfNeighbors=4, OutputNeighbors=1,
              Device="CPU")
    c.check(bool(np.all(run.array("NeighborIds")[:, 0] == g32)), "int32 GlobalIds reported")
    c.check(run.output.GetPointData().GetArray("NeighborIds").IsA("vtkIdTypeArray"),
            "NeighborIds is a vtkIdTypeArray")


def expect_error(label, run, words):
    text = " ".join(run.errors)
    c.check(bool(run.errors), f"{label}: an error is reported")
    c.check(all(w.lower() in text.lower() for w in words),
            f"{label}: the message names the problem {words}: {text[:200]!r}")
    c.check(run.output.GetNumberOfPoints() == 0 and not run.has("Density")
            and not run.has("SmoothingLength"), f"{label}: no output")


def errors():
    pts = rng.random((100, 3))
    bad = pts.copy()
    bad[17, 1] = np.nan
    expect_error("NaN coordinate", knn(polydata(bad), NumberOfNeighbors=4, Device="CPU"),
                 ["finite"])
    inf = pts.astype(np.float32)
    inf[3, 0] = np.inf
    expect_error("Inf coordinate", knn(polydata(inf), NumberOfNeighbors=4, Device="CPU"),
                 ["finite"])
    expect_error("K > N", knn(polydata(pts), NumberOfNeighbors=101, Device="CPU"),
                 ["NumberOfNeighbors", "101", "100"])
    expect_error("K = 0", knn(polydata(pts), NumberOfNeighbors=0, Device="CPU"),
                 ["NumberOfNeighbors"])
    # a mass array with one tuple too few
    pd = polydata(pts)
    m = jztest.numpy_to_vtk(np.ones(99), deep=1)
    m.SetName("Mass")
    pd.GetPointData().AddArray(m)
    expect_error("mass array with 99 tuples",
                 knn(pd, NumberOfNeighbors=4, MassArray=["POINTS", "Mass"], Device="CPU"),
                 ["MassArray", "99", "100"])
    expect_error("mass array that does not exist",
                 knn(polydata(pts), NumberOfNeighbors=4, MassArray=["POINTS", "Nope"],
                     Device="CPU"), ["Nope"])
    for box in ([0, 1, 0, 0, 0, 1], [0, 1, 0, 1, 2, 1]):
        expect_error(f"periodic box {box}",
                     knn(polydata(pts), NumberOfNeighbors=4, Periodic=1, BoxBounds=box,
                         Device="CPU"), ["BoxBounds"])
    # Neighbour lists larger than any machine's memory (400000 x 400000
    # neighbours, terabytes) are refused before anything is allocated.
    many = rng.random((400000, 3))
    expect_error("OutputNeighbors with K = N = 400000",
                 knn(polydata(many), NumberOfNeighbors=400000, OutputNeighbors=1, Device="CPU"),
                 ["GiB", "memory", "NumberOfNeighbors"])
    # the same data with the problem fixed runs (the checks above can tell)
    ok = knn(polydata(pts), NumberOfNeighbors=100, Periodic=1, BoxBounds=[0, 1, 0, 1, 0, 1],
             Device="CPU")
    c.check(not ok.errors and ok.has("Density"), "valid input after errors: output present")


def empty():
    run = knn(polydata(np.zeros((0, 3), np.float32)), NumberOfNeighbors=32, Device="CPU")
    c.check(not run.errors, "empty input: no error")
    c.check(run.output.GetNumberOfPoints() == 0, "empty input: empty output")
    run = knn(vtkPolyData(), NumberOfNeighbors=32)
    c.check(not run.errors and run.output.GetNumberOfPoints() == 0, "input without points")


def neighbors_off():
    pts = rng.random((1000, 3))
    run = knn(polydata(pts), NumberOfNeighbors=5, OutputNeighbors=0, Device="CPU")
    c.check(run.has("Density") and run.has("SmoothingLength"), "Density and SmoothingLength")
    c.check(not run.has("NeighborIds") and not run.has("NeighborDistances"),
            "OutputNeighbors off: no neighbour arrays")
    run = knn(pts_pd := polydata(pts), NumberOfNeighbors=5, OutputNeighbors=1, Device="CPU")
    c.check(run.output.GetPointData().GetArray("NeighborIds").GetNumberOfComponents() == 5,
            "OutputNeighbors on: K components")
    c.check(pts_pd.GetPointData().GetNumberOfArrays() == 0, "the input is not modified")


def device():
    pts = rng.random((2000, 3)).astype(np.float32)
    run = knn(polydata(pts), NumberOfNeighbors=8, Device="CPU")
    c.check(run.device() == "CPU", f"Device=CPU: JZDevice == CPU ({run.device()})")
    run = knn(polydata(pts), NumberOfNeighbors=8, Device="Auto")
    c.check(run.device() in ("CPU", "CUDA") and not run.errors, f"Device=Auto runs ({run.device()})")
    cuda = knn(polydata(pts), NumberOfNeighbors=8, Device="CUDA")
    if run.device() == "CUDA":
        c.check(cuda.device() == "CUDA", "Device=CUDA with a GPU: JZDevice == CUDA")
    else:
        expect_error("Device=CUDA without a usable GPU", cuda, ["CUDA"])


def progress():
    pts = rng.random((200000, 3)).astype(np.float32)
    src = jztest.producer(polydata(pts))
    f = jztest.KNNDensity(Input=src, NumberOfNeighbors=16, Device="CPU")
    jztest.check_progress_in_steps(c, f)
    # aborting from a progress callback stops the run with an empty output
    f.NumberOfNeighbors = 17
    alg = jztest.update_aborting(f)
    out = alg.GetOutputDataObject(0)
    c.check(out.GetPointData().GetArray("Density") is None, "aborted run: no Density")
    alg.SetAbortExecute(0)
    f.NumberOfNeighbors = 18
    f.UpdatePipeline()
    out = alg.GetOutputDataObject(0)
    c.check(out.GetPointData().GetArray("Density") is not None, "the next run completes")


def composite():
    from vtkmodules.vtkCommonDataModel import vtkMultiBlockDataSet, vtkPartitionedDataSet
    sizes = [3000, 0, 1200, 5000]
    parts = [rng.random((n, 3)).astype(np.float32) for n in sizes]
    parts[2] += 0.5  # overlapping blocks: neighbours cross block boundaries
    masses = [rng.uniform(1, 2, n) for n in sizes]
    allp = np.concatenate(parts)
    allm = np.concatenate(masses)
    for kind in ("multiblock", "partitioned"):
        mb = vtkMultiBlockDataSet() if kind == "multiblock" else vtkPartitionedDataSet()
        for i, (p, m) in enumerate(zip(parts, masses)):
            if kind == "multiblock":
                mb.SetBlock(i, polydata(p, {"Mass": m}))
            else:
                mb.SetPartition(i, polydata(p, {"Mass": m}))
        run = knn(mb, NumberOfNeighbors=20, OutputNeighbors=1, Estimator="Top Hat",
                  MassArray=["POINTS", "Mass"], Device="CPU")
        c.check(not run.errors and run.output.IsA(mb.GetClassName()),
                f"{kind}: runs, output is a {mb.GetClassName()} {run.errors[:1]}")
        got = {}
        for name in ("NeighborIds", "NeighborDistances", "SmoothingLength", "Density"):
            pieces = []
            for i in range(len(sizes)):
                blk = run.output.GetBlock(i) if kind == "multiblock" else run.output.GetPartition(i)
                arr = blk.GetPointData().GetArray(name) if blk is not None else None
                if arr is not None and arr.GetNumberOfTuples() > 0:
                    a = jztest.vtk_to_numpy(arr)
                    pieces.append(a.reshape(len(a), -1))
            got[name] = np.concatenate(pieces) if pieces else None
        c.check(got["NeighborIds"] is not None and len(got["NeighborIds"]) == len(allp),
                f"{kind}: arrays on every block")

        class Whole:
            output = None

            def array(self, name):
                return got[name] if got[name].shape[1] > 1 else got[name][:, 0]

        verify_neighbors(c, Whole(), allp, None, 20, label=f"{kind}: all blocks as one set")
        ref_d, ref_i = reference(allp, None, 20)
        c.close(got["Density"][:, 0], tophat_density(ref_d[:, -1], allm[ref_i]), 1e-5,
                f"{kind}: Top Hat density with per-block masses")
    bad = vtkMultiBlockDataSet()
    bad.SetBlock(0, polydata(parts[0]))
    img = vtkImageData()
    img.SetDimensions(3, 3, 3)
    bad.SetBlock(1, img)
    expect_error("multiblock Input with an image block", knn(bad, NumberOfNeighbors=4), ["point set"])
    mixed = vtkMultiBlockDataSet()
    mixed.SetBlock(0, polydata(parts[0], {"GlobalIds": np.arange(3000, dtype=np.int64)}))
    mixed.SetBlock(1, polydata(parts[2]))
    expect_error("GlobalIds in some blocks only", knn(mixed, NumberOfNeighbors=4), ["GlobalIds"])


SECTIONS = dict(composite=composite, progress=progress, periodic=periodic, query=query, density=density, globalids=globalids,
                errors=errors, empty=empty, neighbors=neighbors_off, device=device)
if __name__ == "__main__":
    arg = sys.argv[1] if len(sys.argv) > 1 else "all"
    for name in (SECTIONS if arg == "all" else [arg]):
        print(f"== {name}")
        SECTIONS[name]()
    c.finish()
