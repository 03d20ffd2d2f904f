"""SPHProjection, SPHSlice and SPHVolume against numpy/scipy references: pixel
integrals of one particle's projected kernel (scipy.integrate), mass
conservation, the slice against direct kernel sums, the volume's mass, bad
input (a clear error, no output) and empty input.

Usage: pvpython test_sph_maps.py SECTION   (see SECTIONS at the bottom)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
from checks import run_section  # noqa: E402
from jztest import SKIP, polydata, producer, simple, update_collecting_errors  # noqa: E402

import numpy as np  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402


def W(r, h):
    q = r / h
    w = np.where(q <= 0.5, 1 - 6 * q**2 + 6 * q**3, np.where(q <= 1, 2 * (1 - q)**3, 0.0))
    return 8 / (np.pi * h**3) * w


def make(name, pts, arrays, **props):
    src = producer(polydata(pts, arrays))
    base = dict(SmoothingLengthArray=["POINTS", "h"] if "h" in arrays else ["POINTS", "None"],
                MassArray=["POINTS", "m"] if "m" in arrays else ["POINTS", "None"],
                DensityArray=["POINTS", "None"], PointArrays=[])
    base.update(props)
    f = (jztest.__dict__.get(name) or getattr(simple, name))(Input=src, **base)
    alg, errors = update_collecting_errors(f)
    out = alg.GetOutputDataObject(0)
    return out, errors


def image(out, name):
    a = out.GetPointData().GetArray(name)
    return None if a is None else vtk_to_numpy(a)


def section_pixels(c):
    from scipy import integrate
    h = 0.11
    pts = np.array([[0.4719, 0.5313, 0.5]])
    out, errors = make("SPHProjection", pts, {"h": np.array([h]), "m": np.array([2.0])},
                       Resolution=[8, 8], Region=[0, 1, 0, 1, 0, 1])
    c.check(not errors, f"no errors {errors}")
    sd = image(out, "SurfaceDensity").reshape(8, 8)

    def column(R):
        if R >= h:
            return 0.0
        top = np.sqrt(h * h - R * R)
        return 2 * integrate.quad(lambda z: W(np.sqrt(R * R + z * z), h), 0, top, epsabs=1e-13)[0]

    for (i, j) in [(3, 4), (4, 4), (3, 3), (2, 4)]:
        ref = integrate.dblquad(lambda y, x: column(np.hypot(x - pts[0, 0], y - pts[0, 1])),
                                i / 8, (i + 1) / 8, j / 8, (j + 1) / 8, epsabs=1e-10)[0]
        got = sd[j, i] / 64 / 2.0
        c.check(abs(got - ref) < 1e-6, f"pixel ({i},{j}) fraction {got} vs quadrature {ref}")
    c.check(abs(sd.sum() / 64 - 2.0) < 1e-9, "the mass is conserved")


def section_mass(c):
    rng = np.random.default_rng(3)
    n = 3000
    pts = rng.uniform(0.3, 0.7, (n, 3))
    m = rng.uniform(0.5, 2, n)
    for kernel in ("Cubic Spline", "Wendland C2"):
        out, errors = make("SPHProjection", pts, {"h": rng.uniform(0.001, 0.25, n), "m": m},
                           Resolution=[100, 70], Region=[0, 1, 0, 1, 0, 1], Kernel=kernel)
        total = image(out, "SurfaceDensity").sum() * (1 / 100) * (1 / 70)
        c.check(abs(total - m.sum()) < 1e-6 * m.sum(), f"{kernel}: projected mass {total} = {m.sum()}")
        out, errors = make("SPHVolume", pts, {"h": rng.uniform(0.001, 0.25, n), "m": m},
                           Resolution=[20, 20, 20], Region=[0, 1, 0, 1, 0, 1], Kernel=kernel)
        total = image(out, "Density").sum() / 8000
        c.check(abs(total - m.sum()) < 1e-6 * m.sum(), f"{kernel}: volume mass {total} = {m.sum()}")


def section_slice(c):
    rng = np.random.default_rng(5)
    n = 500
    pts = rng.uniform(0, 1, (n, 3))
    h = rng.uniform(0.05, 0.3, n)
    m = rng.uniform(0.5, 2, n)
    out, errors = make("SPHSlice", pts, {"h": h, "m": m}, Resolution=[12, 10],
                       Region=[0, 1, 0, 1, 0, 1], SlicePosition=0.42)
    c.check(not errors, f"no errors {errors}")
    rho = image(out, "Density").reshape(10, 12)
    xs = (np.arange(12) + 0.5) / 12
    ys = (np.arange(10) + 0.5) / 10
    X, Y = np.meshgrid(xs, ys)
    ref = np.zeros_like(X)
    for p, hh, mm in zip(pts, h, m):
        r = np.sqrt((X - p[0])**2 + (Y - p[1])**2 + (0.42 - p[2])**2)
        ref += mm * W(r, hh)
    c.check(np.allclose(rho, ref, rtol=1e-10, atol=1e-12), "slice Density = direct kernel sums")
    c.check(abs(out.GetOrigin()[2] - 0.42) < 1e-12, "the slice lies at SlicePosition")


def section_gadget(c):
    """Gadget-4's gas with its own SmoothingLength (the support radius) and
    Density: the projection conserves the mass, the slice equals a direct
    evaluation from those arrays (periodic), InternalEnergy mapped with them."""
    shared = os.environ.get("JZ_SHARED_DIR", os.path.join(jztest.ROOT, "..", "shared"))
    path = os.path.join(shared, "data", "external", "gadget4-lcdm-gas-sph-n2x32", "snapshot_004.hdf5")
    if not os.path.exists(path):
        print("skipped: no Gadget-4 gas snapshot")
        sys.exit(SKIP)
    import h5py
    with h5py.File(path, "r") as f:
        gas = f["PartType0"]
        pts = np.asarray(gas["Coordinates"], dtype=np.float64)
        h = np.asarray(gas["SmoothingLength"], dtype=np.float64)
        rho = np.asarray(gas["Density"], dtype=np.float64)
        u = np.asarray(gas["InternalEnergy"], dtype=np.float64)
        box = float(f["Header"].attrs["BoxSize"])
        m = np.full(len(pts), float(f["Header"].attrs["MassTable"][0]))
    arrays = {"h": h, "m": m, "Rho": rho, "InternalEnergy": u}
    out, errors = make("SPHProjection", pts, arrays, Resolution=[128, 128], Periodic=1,
                       BoxFromData=0, BoxBounds=[0, box, 0, box, 0, box])
    c.check(not errors, f"no errors {errors}")
    total = image(out, "SurfaceDensity").sum() * (box / 128) ** 2
    c.check(abs(total - m.sum()) < 1e-6 * m.sum(), f"Gadget-4 gas: projected mass {total} = {m.sum()}")
    n = 48
    zs = 0.37 * box
    out, errors = make("SPHSlice", pts, arrays, Resolution=[n, n], Periodic=1, BoxFromData=0,
                       BoxBounds=[0, box, 0, box, 0, box], SlicePosition=zs,
                       DensityArray=["POINTS", "Rho"], PointArrays=["InternalEnergy"])
    c.check(not errors, f"no errors {errors}")
    xs = (np.arange(n) + 0.5) * box / n
    X, Y = np.meshgrid(xs, xs)
    grid = np.stack([X.ravel(), Y.ravel(), np.full(X.size, zs)], axis=1)
    ref_rho = np.zeros(len(grid))
    ref_u = np.zeros(len(grid))
    near = np.abs(((pts[:, 2] - zs + box / 2) % box) - box / 2) < h
    for p, hh, rr, uu in zip(pts[near], h[near], rho[near], u[near]):
        d = grid - p
        d -= box * np.round(d / box)
        w = W(np.sqrt((d**2).sum(axis=1)), hh)
        ref_rho += m[0] * w
        ref_u += m[0] / rr * uu * w
    got_rho = image(out, "Density")
    got_u = image(out, "InternalEnergy")
    c.check(np.allclose(got_rho, ref_rho, rtol=1e-9, atol=1e-12 * ref_rho.max()),
            "Gadget-4 slice Density = direct sum with its SmoothingLength")
    c.check(np.allclose(got_u, ref_u, rtol=1e-9, atol=1e-12 * ref_u.max()),
            "Gadget-4 slice InternalEnergy = direct sum with its SmoothingLength and Density")
    with h5py.File(path, "r") as f:
        dm = np.asarray(f["PartType1"]["Coordinates"], dtype=np.float64)
    out, errors = make("SPHProjection", dm, {}, Resolution=[96, 96], Periodic=1, BoxFromData=0,
                       BoxBounds=[0, box, 0, box, 0, box])
    total = image(out, "SurfaceDensity").sum() * (box / 96) ** 2
    c.check(not errors and abs(total - len(dm)) < 1e-6 * len(dm),
            f"Gadget-4 dark matter (kNN smoothing lengths): projected count {total} = {len(dm)}")


def slice_reference(pts, h, m, rho, values, axis_point, periodic=False):
    """Density and sum_j m_j / rho_j A_j W at the given points, by direct sums."""
    dens = np.zeros(len(axis_point))
    mapped = np.zeros(len(axis_point))
    for p, hh, mm, rr, aa in zip(pts, h, m, rho, values):
        d = axis_point - p
        if periodic:
            d -= np.round(d)
        w = W(np.sqrt((d**2).sum(axis=1)), hh)
        dens += mm * w
        mapped += mm / rr * aa * w
    return dens, mapped


def section_knn_density(c):
    """h and rho computed on the fly equal KNNDensity's SmoothingLength and
    Density: the slice of a mapped array against direct sums with them."""
    rng = np.random.default_rng(8)
    n = 600
    pts = rng.uniform(0, 1, (n, 3))
    m = rng.uniform(0.5, 2, n)
    t = rng.uniform(1, 2, n)
    k = jztest.knn(polydata(pts, {"m": m}), NumberOfNeighbors=24, MassArray=["POINTS", "m"])
    h, rho = k.array("SmoothingLength"), k.array("Density")
    out, errors = make("SPHSlice", pts, {"m": m, "T": t}, Resolution=[10, 9], NumberOfNeighbors=24,
                       Region=[0, 1, 0, 1, 0, 1], SlicePosition=0.55, PointArrays=["T"])
    c.check(not errors, f"no errors {errors}")
    xs, ys = (np.arange(10) + 0.5) / 10, (np.arange(9) + 0.5) / 9
    X, Y = np.meshgrid(xs, ys)
    grid = np.stack([X.ravel(), Y.ravel(), np.full(X.size, 0.55)], axis=1)
    dens, mapped = slice_reference(pts, h, m, rho, t, grid)
    c.check(np.allclose(image(out, "Density"), dens, rtol=1e-9), "Density with the kNN's h")
    c.check(np.allclose(image(out, "T"), mapped, rtol=1e-9), "T with KNNDensity's h and Density")
    # The Wendland kernel's own density: rho_j = sum_k m_k W(r_jk, h_j) over the K neighbours.
    out, errors = make("SPHSlice", pts, {"m": m, "T": t}, Resolution=[10, 9], NumberOfNeighbors=24,
                       Region=[0, 1, 0, 1, 0, 1], SlicePosition=0.55, PointArrays=["T"],
                       Kernel="Wendland C2")
    d = np.sqrt(((pts[:, None, :] - pts[None, :, :])**2).sum(axis=2))

    def wendland(r, hh):
        q = r / hh
        return np.where(q <= 1, 21 / (2 * np.pi * hh**3) * (1 - q)**4 * (1 + 4 * q), 0.0)

    rho_w = (m[None, :] * wendland(d, h[:, None])).sum(axis=1)
    ref = np.zeros(len(grid))
    for p, hh, mm, rr, tt in zip(pts, h, m, rho_w, t):
        ref += mm / rr * tt * wendland(np.sqrt(((grid - p)**2).sum(axis=1)), hh)
    c.check(np.allclose(image(out, "T"), ref, rtol=1e-9), "Wendland C2: T with its own computed rho")


def section_periodic(c):
    """A particle across an edge or a corner of the periodic box equals the
    same particle moved by half the box, its image rolled by half the pixels."""
    for at in ([1 / 64, 0.5, 0.5], [63 / 64, 1 / 64, 61 / 64]):
        moved = [a + (0.5 if a < 0.5 else -0.5) for a in at]
        imgs = []
        for p in (at, moved):
            out, errors = make("SPHProjection", np.array([p]), {"h": np.array([0.2])},
                               Resolution=[16, 16], Periodic=1, BoxFromData=0)
            imgs.append(image(out, "SurfaceDensity").reshape(16, 16))
        c.check(np.allclose(imgs[0], np.roll(imgs[1], (8, 8), axis=(0, 1)), rtol=1e-9, atol=1e-12),
                f"periodic wrap at {at}")
        c.check(abs(imgs[0].sum() / 256 - 1) < 1e-9, f"periodic mass at {at}")


def section_composite(c):
    """A composite Input is one particle set; a block without a mapped array
    is an error naming the block."""
    from vtkmodules.vtkCommonDataModel import vtkMultiBlockDataSet
    rng = np.random.default_rng(4)
    a, b = rng.uniform(0.2, 0.8, (100, 3)), rng.uniform(0.2, 0.8, (80, 3))
    mb = vtkMultiBlockDataSet()
    mb.SetBlock(0, polydata(a, {"h": np.full(100, 0.1), "T": np.ones(100)}))
    mb.SetBlock(1, polydata(b, {"h": np.full(80, 0.1), "T": np.ones(80)}))
    f = (jztest.__dict__.get("SPHProjection") or simple.SPHProjection)(
        Input=producer(mb), SmoothingLengthArray=["POINTS", "h"], Resolution=[8, 8],
        Region=[0, 1, 0, 1, 0, 1], PointArrays=["T"])
    alg, errors = update_collecting_errors(f)
    sd = image(alg.GetOutputDataObject(0), "SurfaceDensity")
    c.check(not errors and abs(sd.sum() / 64 - 180) < 1e-9, "both blocks' mass in the image")
    c.check(np.allclose(image(alg.GetOutputDataObject(0), "T")[sd > 0], 1.0), "T's mean is 1")
    mb.SetBlock(1, polydata(b, {"h": np.full(80, 0.1)}))
    f2 = (jztest.__dict__.get("SPHProjection") or simple.SPHProjection)(
        Input=producer(mb), SmoothingLengthArray=["POINTS", "h"], Resolution=[8, 8],
        Region=[0, 1, 0, 1, 0, 1], PointArrays=["T"])
    alg, errors = update_collecting_errors(f2)
    c.check(errors and "block 1" in " ".join(errors), f"a clear error naming block 1 ({errors})")
    c.check(alg.GetOutputDataObject(0).GetNumberOfPoints() == 0, "no output")


def section_errors(c):
    pts = np.random.default_rng(1).uniform(0, 1, (50, 3))
    cases = [("negative h", dict(h=np.full(50, -0.1)), {}, "negative"),
             ("NaN h", dict(h=np.full(50, np.nan)), {}, ""),
             ("Resolution 0", dict(h=np.full(50, 0.1)), dict(Resolution=[0, 4]), "Resolution"),
             ("inverted Region", dict(h=np.full(50, 0.1)), dict(Region=[1, 0, 0, 1, 0, 1]), "Region"),
             ("PointArrays Density", dict(h=np.full(50, 0.1), Density=np.ones(50)),
              dict(PointArrays=["Density"]), "Density")]
    for label, arrays, props, word in cases:
        out, errors = make("SPHProjection", pts, arrays, **props)
        c.check(errors and word in " ".join(errors), f"{label}: a clear error ({errors})")
        c.check(out.GetNumberOfPoints() == 0 or image(out, "SurfaceDensity") is None,
                f"{label}: no output")
    # An infinite coordinate under the default Region (the points' bounds):
    # the point is named, on every map.
    inf_pts = pts.copy()
    inf_pts[7, 0] = np.inf
    for name in ("SPHProjection", "SPHSlice", "SPHVolume"):
        out, errors = make(name, inf_pts, dict(h=np.full(50, 0.1)),
                           Resolution=[4, 4, 4][:3 if name == "SPHVolume" else 2])
        c.check(errors and "point 7 has a non-finite coordinate" in " ".join(errors),
                f"{name}, an infinite coordinate: the point named ({errors})")
        c.check(out.GetNumberOfPoints() == 0, f"{name}, an infinite coordinate: no output")
    # A kernel wider than the periodic box (its images would number in the
    # millions) and an infinite h: clear errors, not a run without end, on
    # every map and on the densities the slice computes for its arrays.
    box = dict(Periodic=1, BoxBounds=[0, 1, 0, 1, 0, 1])
    for name in ("SPHProjection", "SPHSlice", "SPHVolume"):
        for label, h, props, word in (("h of 50 in a unit box", 50.0, box, "periodic box"),
                                      ("infinite h", np.inf, {}, "finite")):
            extra = dict(PointArrays=["T"]) if name == "SPHSlice" else {}
            out, errors = make(name, pts, dict(h=np.full(50, h), T=np.ones(50)),
                               Resolution=[16, 16, 16][:3 if name == "SPHVolume" else 2],
                               **props, **extra)
            c.check(errors and word in " ".join(errors), f"{name}, {label}: a clear error ({errors})")
            c.check(out.GetNumberOfPoints() == 0, f"{name}, {label}: no output")
    # A volume larger than the process may allocate (here under an address
    # space limit a few GiB above what it holds): a clear error, no output.
    import resource
    with open("/proc/self/statm") as statm:
        held = int(statm.read().split()[0]) * resource.getpagesize()
    limit = held + (3 << 30)
    before = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit, before[1]))
    try:
        out, errors = make("SPHVolume", pts, dict(h=np.full(50, 0.1)), Resolution=[1200, 1200, 1200])
    finally:
        resource.setrlimit(resource.RLIMIT_AS, before)
    # (Refused up front where 1200^3 voxels exceed the machine's memory.)
    c.check(errors and "memory" in " ".join(errors),
            f"SPHVolume of 1200^3 voxels beyond the memory limit: a clear error ({errors})")
    c.check(out.GetNumberOfPoints() == 0, "SPHVolume beyond the memory limit: no output")
    # A map larger than any machine's memory (2^31 pixels of a thousand
    # values each) is refused before anything is allocated.
    out, errors = make("SPHSlice", pts, dict(h=np.full(50, 0.1), T=np.ones((50, 1000))),
                       Resolution=[46340, 46340], PointArrays=["T"])
    c.check(errors and "GiB" in " ".join(errors),
            f"SPHSlice of 2^31 pixels of 1001 values: a clear error ({errors})")
    c.check(out.GetNumberOfPoints() == 0, "SPHSlice beyond the machine's memory: no output")


def section_layout(c):
    """A lone particle's largest pixel or voxel lies at the particle, in the
    output's own coordinates: along each axis (maps deposited straight into
    the output array and maps copied into it alike) and in a volume, on
    images that are not square, so that a transposed or shifted layout shows."""
    p = np.array([[0.23, 0.61, 0.82]])
    arrays = {"h": np.array([0.05]), "m": np.array([1.0])}
    cases = [("SPHProjection", dict(Resolution=[20, 16], Axis=a), "SurfaceDensity", d)
             for a, d in (("X", (1, 2)), ("Y", (2, 0)), ("Z", (0, 1)))]
    cases.append(("SPHVolume", dict(Resolution=[20, 16, 12]), "Density", (0, 1, 2)))
    for name, props, array, dims in cases:
        out, errors = make(name, p, arrays, Region=[0, 1, 0, 1, 0, 1], **props)
        c.check(not errors, f"{name} {props}: no errors {errors}")
        values = image(out, array)
        peak = np.array(out.GetPoint(int(np.argmax(values))))
        spacing = np.array(out.GetSpacing())
        near = all(abs(peak[d] - p[0, d]) <= spacing[d] for d in dims)
        c.check(near, f"{name} {props}: the peak at {peak[list(dims)]}, the particle at "
                      f"{p[0, list(dims)]}")
        c.check(abs(values.sum() * np.prod(spacing[list(dims)]) - 1) < 1e-6,
                f"{name} {props}: the mass")


def section_empty(c):
    out, errors = make("SPHProjection", np.zeros((0, 3)), {}, Resolution=[4, 4],
                       Region=[0, 1, 0, 1, 0, 1])
    c.check(not errors, f"no errors {errors}")
    sd = image(out, "SurfaceDensity")
    c.check(sd is not None and sd.size == 16 and not sd.any(), "the Region's image of zeros")


SECTIONS = dict(pixels=section_pixels, mass=section_mass, slice=section_slice,
                knn_density=section_knn_density, periodic=section_periodic,
                composite=section_composite,
                gadget=section_gadget, errors=section_errors, empty=section_empty,
                layout=section_layout)

if __name__ == "__main__":
    run_section(SECTIONS).finish()
