"""SPHSmooth against a numpy/scipy evaluation of its definitions.

The reference finds the K nearest neighbours with scipy's cKDTree (no code
shared with the jz-tree kernels), takes h = the K-th distance, the SPH
cubic-spline density, and evaluates A_Smoothed, A_Gradient, A_Divergence,
A_Curl and A_Dispersion as doc/filters/SPHSmooth.md defines them. Sections:
  reference  random and clustered points, float32 and float64, masses, arrays
             of 1, 2 and 3 components, an Input array called Density
  periodic   a periodic box (from BoxBounds and from a BoxSize field array),
             points outside it wrapped in, a field periodic in the box
  gadget     the Gadget-4 gas of ../shared (periodic box, float32): the velocity
             dispersion and the smoothed density against the reference
  errors     K > N, NaN coordinates and values, wrong mass tuples, a missing
             array, Device CUDA without a GPU: a clear error and no output;
             an empty Input: an empty output without error

Usage: pvpython test_sph_smooth.py SECTION
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from scipy.spatial import cKDTree  # noqa: E402

import jztest  # noqa: E402  (loads the plugin into its namespace)
from checks import run_section  # noqa: E402
from jztest import SKIP, Run, polydata, run_filter, wrap  # noqa: E402
from vtkmodules.util.numpy_support import numpy_to_vtk  # noqa: E402
from vtkmodules.vtkCommonCore import vtkDoubleArray  # noqa: E402

SPHSmooth = jztest.SPHSmooth


def smooth(data, **props):
    props.setdefault("Device", "CPU")
    (out,), errors = run_filter(SPHSmooth, data, **props)
    return Run(out, errors)


def kernel_w(q, h):
    w = np.where(q <= 0.5, 1 - 6 * q**2 + 6 * q**3, np.where(q <= 1.0, 2 * (1 - q) ** 3, 0.0))
    return w * 8.0 / (np.pi * h**3)


def kernel_dwdr(q, h):
    d = np.where(q <= 0.5, -12 * q + 18 * q**2, np.where(q <= 1.0, -6 * (1 - q) ** 2, 0.0))
    return d * 8.0 / (np.pi * h**4)


def reference(points, masses, fields, k, box=None):
    """The definitions in float64 on the points as the filter reads them
    (wrapped into the box, in their own precision). Returns (h, rho, out,
    scale): out[name] the outputs of each field, scale[name] the sum of the
    magnitudes of each value's terms (what rounding is relative to)."""
    p = points.astype(np.float64)
    if box is not None:
        p, lo, length = wrap(points, box)
        p = p.astype(points.dtype).astype(np.float64)
        tree = cKDTree(p - lo, boxsize=length)
        dist, nb = tree.query(p - lo, k)
    else:
        length = None
        tree = cKDTree(p)
        dist, nb = tree.query(p, k)
    dist, nb = dist.reshape(len(p), k), nb.reshape(len(p), k)
    h = dist[:, -1].astype(points.dtype).astype(np.float64)
    m = np.ones(len(p)) if masses is None else masses.astype(np.float64)
    h0 = h == 0  # the K nearest coincide: rho = +inf, the mass-weighted mean
    hs = np.where(h0, 1.0, dist[:, -1])[:, None]
    rho = (m[nb] * kernel_w(dist / hs, hs)).sum(axis=1)
    rho = np.where(h0, np.inf, rho.astype(points.dtype).astype(np.float64))
    dx = p[:, None, :] - p[nb]  # x_i - x_j
    if length is not None:
        dx -= length * np.round(dx / length)
    r = np.sqrt((dx**2).sum(axis=2))
    hq = np.where(h0, 1.0, h)[:, None]
    q = r / hq
    vol = np.where(np.isfinite(rho[nb]), m[nb] / rho[nb], 0.0)
    w = np.where(h0[:, None], m[nb] / m[nb].sum(axis=1, keepdims=True), vol * kernel_w(q, hq))
    g = np.where((r > 0) & ~h0[:, None], vol * kernel_dwdr(q, hq) / np.where(r > 0, r, 1), 0.0)
    gw = g[:, :, None] * dx  # (m_j / rho_j) grad_i W_ij
    out, scale = {}, {}
    for name, a in fields.items():
        a2 = a.reshape(len(p), -1).astype(np.float64)
        aj = a2[nb]
        sm = (w[:, :, None] * aj).sum(axis=1)
        out[name + "_Smoothed"] = sm
        scale[name + "_Smoothed"] = (np.abs(w[:, :, None] * aj)).sum(axis=1)
        da = aj - a2[:, None, :]
        if a2.shape[1] == 1:
            out[name + "_Gradient"] = (da * gw).sum(axis=1)
            scale[name + "_Gradient"] = np.abs(da * gw).sum(axis=1)
        if a2.shape[1] == 3:
            out[name + "_Divergence"] = (da * gw).sum(axis=(1, 2))
            scale[name + "_Divergence"] = np.abs(da * gw).sum(axis=(1, 2))
            out[name + "_Curl"] = np.cross(gw, da).sum(axis=1)
            scale[name + "_Curl"] = (np.abs(gw[:, :, [1, 2, 0]] * da[:, :, [2, 0, 1]]) +
                                     np.abs(gw[:, :, [2, 0, 1]] * da[:, :, [1, 2, 0]])).sum(axis=1)
            mj = m[nb]
            d2 = ((aj - sm[:, None, :]) ** 2).sum(axis=2)
            out[name + "_Dispersion"] = np.sqrt((mj * d2).sum(axis=1) / mj.sum(axis=1))
            big = ((np.abs(aj) + np.abs(sm[:, None, :])) ** 2).sum(axis=2)
            scale[name + "_Dispersion"] = np.sqrt((mj * big).sum(axis=1) / mj.sum(axis=1))
    return h, rho, out, scale


def check_against(c, run, points, masses, fields, k, box, label, rtol):
    """Every output array of the run against the reference."""
    if not c.check(not run.errors, f"{label}: no errors {run.errors}"):
        return
    h, rho, out, scale = reference(points, masses, fields, k, box)
    c.close(run.array("SmoothingLength"), h, rtol, f"{label}: SmoothingLength")
    got_rho = run.array("Density")
    inf = np.isinf(rho)
    c.check(bool(np.array_equal(np.isinf(got_rho), inf)), f"{label}: Density +inf where h = 0 ({inf.sum()})")
    c.close(got_rho[~inf], rho[~inf], rtol * 10, f"{label}: Density")
    for name, want in out.items():
        got = run.array(name)
        if not c.check(got is not None, f"{label}: {name} present"):
            continue
        got = np.asarray(got, dtype=np.float64).reshape(want.shape)
        s = scale[name].reshape(want.shape)
        err = np.abs(got - want) / np.maximum(s, 1e-300)
        c.check(bool(np.all(np.abs(got - want) <= rtol * 10 * s + 1e-300)),
                f"{label}: {name} (max error {err.max():.2e} of its terms' magnitude)")
    wanted = {"SmoothingLength", "Density"} | set(out)
    pd = run.output.GetPointData()
    names = {pd.GetArrayName(i) for i in range(pd.GetNumberOfArrays())}
    extra = {n for n in names - wanted if n.endswith(("_Smoothed", "_Gradient", "_Divergence",
                                                      "_Curl", "_Dispersion"))}
    c.check(not extra, f"{label}: no other derived arrays ({sorted(extra)})")


def clustered(rng, n):
    centres = rng.random((8, 3))
    pts = [rng.random((n // 4, 3))]
    for i, cen in enumerate(centres):
        pts.append(cen + rng.normal(scale=0.01 + 0.01 * i, size=(n // 8 * 3 // 4, 3)))
    return np.concatenate(pts)[:n]


def fields_of(points, rng):
    n = len(points)
    x = points.astype(np.float64)
    return {
        "Temperature": np.sin(4 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.1 * rng.random(n),
        "Velocity": np.stack([x[:, 1] - x[:, 2], 2 * x[:, 0] + x[:, 2], -x[:, 1]], axis=1)
        + 0.2 * rng.normal(size=(n, 3)),
        "Pair": rng.random((n, 2)),
        "Density": 1 + rng.random(n),  # smoothed into Density_Smoothed
    }


def section_reference(c):
    rng = np.random.default_rng(3)
    for kind in ("random", "clustered"):
        base = rng.random((4000, 3)) if kind == "random" else clustered(rng, 4000)
        for dtype in (np.float64, np.float32):
            pts = base.astype(dtype)
            masses = 0.5 + rng.random(len(pts))
            fields = fields_of(pts, rng)
            arrays = dict(fields, Mass=masses)
            for k in (1, 16, 40):
                run = smooth(polydata(pts, arrays), NumberOfNeighbors=k, MassArray=["POINTS", "Mass"],
                             PointArrays=["Temperature", "Velocity", "Pair", "Density"])
                rtol = 1e-5 if dtype == np.float32 else 1e-11
                check_against(c, run, pts, masses, fields, k, None,
                              f"{kind} {np.dtype(dtype).name} K={k}", rtol)
            # Unit masses, one array, and the input Density replaced by ours.
            run = smooth(polydata(pts, arrays), NumberOfNeighbors=32, PointArrays=["Velocity"])
            check_against(c, run, pts, None, {"Velocity": fields["Velocity"]}, 32, None,
                          f"{kind} {np.dtype(dtype).name} unit mass", 1e-5 if dtype == np.float32 else 1e-11)
            c.check(not np.allclose(run.array("Density"), fields["Density"]),
                    "the filter's Density replaces the Input's")
            c.check(run.output.GetPointData().GetArray("Temperature") is not None,
                    "the Input's other arrays pass through")


def section_periodic(c):
    rng = np.random.default_rng(5)
    box = [-1.0, 3.0, 0.0, 2.0, 1.0, 2.5]
    lo = np.array(box[0::2])
    length = np.array(box[1::2]) - lo
    for dtype in (np.float64, np.float32):
        pts = (lo + rng.random((5000, 3)) * length).astype(dtype)
        pts[::9] += (length * rng.integers(-2, 3, size=(len(pts[::9]), 3))).astype(dtype)  # outside
        wave = np.sin(2 * np.pi * (pts[:, 0] - lo[0]) / length[0])
        fields = {"Wave": wave, "Velocity": rng.normal(size=(len(pts), 3))}
        run = smooth(polydata(pts, fields), NumberOfNeighbors=32, Periodic=1, BoxBounds=box,
                     PointArrays=["Wave", "Velocity"])
        check_against(c, run, pts, None, fields, 32, box, f"periodic {np.dtype(dtype).name}",
                      1e-5 if dtype == np.float32 else 1e-11)
    # The box from the Input's BoxSize field array, BoxBounds ignored.
    pts = rng.random((3000, 3)) * 5.0
    pd = polydata(pts, {"Velocity": rng.normal(size=(3000, 3))})
    bs = vtkDoubleArray()
    bs.SetName("BoxSize")
    bs.InsertNextValue(5.0)
    pd.GetFieldData().AddArray(bs)
    run = smooth(pd, NumberOfNeighbors=24, Periodic=1, BoxBounds=[0, 1, 0, 1, 0, 1],
                 PointArrays=["Velocity"])
    check_against(c, run, pts, None, {"Velocity": vtk_values(pd, "Velocity")}, 24, [0, 5.0] * 3,
                  "periodic box from BoxSize", 1e-11)


def vtk_values(pd, name):
    from vtkmodules.util.numpy_support import vtk_to_numpy
    return vtk_to_numpy(pd.GetPointData().GetArray(name)).copy()


def section_gadget(c):
    base = os.path.join(os.environ.get("JZ_SHARED_DIR", os.path.join(os.path.dirname(__file__),
                                                                     "../../../shared")),
                        "data/external/gadget4-lcdm-gas-sph-n2x32")
    path = os.path.join(base, "snapshot_004.hdf5")
    if not os.path.exists(path):
        print(f"SKIP: {path} is not available")
        sys.exit(SKIP)
    import h5py
    with h5py.File(path, "r") as f:
        pos = f["PartType0/Coordinates"][:]
        vel = f["PartType0/Velocities"][:]
        rho_gadget = f["PartType0/Density"][:]
        box = float(f["Header"].attrs["BoxSize"])
        mass = float(f["Header"].attrs["MassTable"][0])
    masses = np.full(len(pos), mass)
    pd = polydata(pos, {"Velocity": vel, "Density": rho_gadget, "Mass": masses})
    run = smooth(pd, NumberOfNeighbors=64, Periodic=1, BoxBounds=[0, box] * 3,
                 MassArray=["POINTS", "Mass"], PointArrays=["Velocity", "Density"])
    fields = {"Velocity": vel, "Density": rho_gadget}
    check_against(c, run, pos, masses, fields, 64, [0, box] * 3, "Gadget-4 gas z=0", 1e-5)
    disp = run.array("Velocity_Dispersion")
    if disp is not None:
        c.check(bool(np.all(np.isfinite(disp)) and np.median(disp) > 0),
                f"velocity dispersion finite and positive (median {np.median(disp):.1f} km/s)")
    # Our K = 64 gather density is close to Gadget-4's own (h from a weighted neighbour count).
    ours = run.array("Density")
    if ours is not None:
        ratio = np.median(ours / rho_gadget)
        c.check(0.7 < ratio < 1.4, f"median Density / Gadget-4 Density = {ratio:.3f}")


def section_errors(c):
    rng = np.random.default_rng(1)
    pts = rng.random((200, 3))
    good = {"Mass": np.ones(200), "Velocity": rng.normal(size=(200, 3))}

    def fails(run, words, what):
        msg = " ".join(run.errors)
        c.check(bool(run.errors) and all(w in msg for w in words) and
                run.output.GetNumberOfPoints() == 0, f"{what}: error naming {words}, empty output ({msg[:160]})")

    fails(smooth(polydata(pts, good), NumberOfNeighbors=201, PointArrays=["Velocity"]),
          ["NumberOfNeighbors", "201"], "K > N")
    # Neighbour lists larger than any machine's memory (400000 x 400000 ids,
    # terabytes) are refused before they are allocated.
    many = rng.random((400000, 3))
    fails(smooth(polydata(many, {"Velocity": np.ones((400000, 3))}), NumberOfNeighbors=400000,
                 PointArrays=["Velocity"]), ["GiB", "memory"], "K = N = 400000")
    bad = pts.copy()
    bad[17, 1] = np.nan
    fails(smooth(polydata(bad, good), PointArrays=["Velocity"]), ["non-finite"], "NaN coordinate")
    v = good["Velocity"].copy()
    v[5, 2] = np.inf
    fails(smooth(polydata(pts, dict(good, Velocity=v)), PointArrays=["Velocity"]),
          ["Velocity", "non-finite"], "infinite value in a smoothed array")
    pd = polydata(pts, {"Velocity": good["Velocity"]})
    m = numpy_to_vtk(np.ones(150), deep=1)
    m.SetName("Mass")
    pd.GetPointData().AddArray(m)
    fails(smooth(pd, MassArray=["POINTS", "Mass"], PointArrays=["Velocity"]),
          ["MassArray", "Mass", "tuples"], "mass array with the wrong number of tuples")
    fails(smooth(polydata(pts, good), PointArrays=["Nonexistent"]), ["Nonexistent"],
          "missing selected array")
    from vtkmodules.vtkCommonCore import vtkStringArray  # noqa: F401 (a non-numeric array)
    fails(smooth(polydata(pts, good), Periodic=1, BoxBounds=[0, 1, 0, 0, 0, 1],
                 PointArrays=["Velocity"]), ["BoxBounds"], "non-positive box")
    run = smooth(polydata(pts, good), Device="CUDA", PointArrays=["Velocity"])
    if run.errors:
        fails(run, ["CUDA"], "Device CUDA without a usable GPU")
    else:
        c.check(run.device() == "CUDA", "Device CUDA ran on the GPU")
    run = smooth(polydata(np.zeros((0, 3))), PointArrays=[])
    c.check(not run.errors and run.output.GetNumberOfPoints() == 0, "empty Input: empty output, no error")
    # Nothing selected: SmoothingLength and Density only.
    run = smooth(polydata(pts, good), NumberOfNeighbors=8)
    c.check(not run.errors and run.array("Density") is not None and
            run.array("Velocity_Smoothed") is None, "no arrays selected: SmoothingLength and Density only")


if __name__ == "__main__":
    run_section({
        "reference": section_reference,
        "periodic": section_periodic,
        "gadget": section_gadget,
        "errors": section_errors,
    }).finish()
