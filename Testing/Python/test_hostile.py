"""Randomised hostile input through the filters, every case checked.

Each case draws a filter (KNNDensity, FriendsOfFriends with its catalogue
additions, EuclideanMST, HDBSCAN, TreeGravity), float32 or float64 points of a
random kind, and one of:
- scale: the points and every length parameter times 2^k, k in [-99, 99]
  (1e-30 to 1e30). The outputs must be the unit-scale run's scaled back,
  exactly: lengths times 2^k, densities times 2^-3k, potentials times 2^-k,
  accelerations times 2^-2k, the same ids, groups, edges and clusters. A
  density that the output precision cannot hold must be inf or 0 with a
  warning. Some cases take a non-power-of-two scale (centimetres: 3.0857e24
  per Mpc), where the coordinates round: KNNDensity's distances within
  what that rounding can move them (neighbours at near-tied distances may
  differ), its Density the estimator on its own neighbours; TreeGravity
  against the float64 direct sum.
- parameter: one property set outside its range, or a NaN coordinate or mass:
  an error naming it, and every output empty.
- composite: the points split over blocks, some empty, float32 and float64
  mixed: the outputs, block after block, equal a run on the concatenated
  points (float64 unless every block is float32).
- file: a snapshot (HDF5, Gadget binary or TIPSY) truncated or with bytes
  overwritten at random: a clear
  error and an empty output, or (bytes in a dataset's values) a complete one;
  never a crash.

Usage: pvpython test_hostile.py [NUMBER_OF_CASES] [SEED] [CASE]
(JZ_HOSTILE_CASES and JZ_HOSTILE_SEED are the defaults: 300 and 1). Each
case draws from its own generator (seed, case number) and is printed, so a
failure replays alone: pvpython test_hostile.py 1 SEED CASE.
"""
import math
import os
import sys
import tempfile

import numpy as np

import jztest
from jztest import Checker, simple
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkMultiBlockDataSet

FILTERS = {name: jztest.__dict__.get(name) or getattr(simple, name)
           for name in ("KNNDensity", "FriendsOfFriends", "EuclideanMST", "HDBSCAN",
                        "TreeGravity", "ParticleSnapshotReader")}
MPC_CM = 3.0857e24


# ----------------------------------------------------------------------------
# Points and runs
def unit_points(rng, kind, n, dtype):
    """n points in [0, 1) on a grid of 2^-20, so that any 2^k scaling in the
    tested range is exact in float32 (no subnormal coordinates)."""
    if kind == "uniform":
        p = rng.random((n, 3))
    elif kind == "clustered":
        centres = rng.random((4, 3))
        p = centres[rng.integers(0, 4, n)] + 0.02 * rng.normal(size=(n, 3))
    elif kind == "duplicates":
        base = rng.random((max(n // 5, 1), 3))
        p = base[rng.integers(0, len(base), n)]
    elif kind == "plane":
        p = rng.random((n, 3))
        p[:, 2] = 0.5
    elif kind == "line":
        p = np.zeros((n, 3)) + 0.25
        p[:, 0] = rng.random(n)
    else:  # lattice
        side = int(math.ceil(n ** (1 / 3)))
        idx = np.arange(n)
        p = np.stack([idx % side, (idx // side) % side, idx // side ** 2], 1) / side
    p = np.mod(p, 1.0)
    return (np.floor(p * 2.0 ** 20) / 2.0 ** 20).astype(dtype)


class Outcome:
    def __init__(self, outputs, errors, warnings):
        self.outputs, self.errors, self.warnings = outputs, errors, warnings

    def empty(self):
        return all(o.GetNumberOfPoints() == 0 for o in self.outputs)

    def arrays(self, port=0):
        """Every point array of an output port, blocks concatenated."""
        out = self.outputs[port]
        pieces = []
        if out.IsA("vtkCompositeDataSet"):
            it = out.NewIterator()
            it.InitTraversal()
            while not it.IsDoneWithTraversal():
                pieces.append(it.GetCurrentDataObject())
                it.GoToNextItem()
        else:
            pieces = [out]
        found = {}
        for piece in pieces:
            pd = piece.GetPointData()
            for i in range(pd.GetNumberOfArrays()):
                a = pd.GetArray(i)
                if a is None:
                    continue
                found.setdefault(a.GetName(), []).append(vtk_to_numpy(a))
        return {k: np.concatenate(v) for k, v in found.items()}

    def cells(self, port):
        out = self.outputs[port]
        cd = out.GetCellData()
        return {cd.GetArray(i).GetName(): vtk_to_numpy(cd.GetArray(i))
                for i in range(cd.GetNumberOfArrays())}


def run(name, data, ports, props):
    """Runs a filter on a data object; its outputs, errors and warnings."""
    return Outcome(*jztest.run_filter_collecting(FILTERS[name], data, ports=ports, **props))


# ----------------------------------------------------------------------------
# What scales how: (array, port, power of the length scale), and the filters'
# length-valued properties.
SCALED_ARRAYS = {
    "KNNDensity": [("SmoothingLength", 0, 1), ("Density", 0, -3), ("NeighborIds", 0, 0),
                   ("NeighborDistances", 0, 1)],
    "FriendsOfFriends": [("GroupId", 0, 0), ("GroupSize", 0, 0), ("Count", 1, 0), ("Mass", 1, 0),
                         ("CenterOfMass", 1, 1), ("InertiaRadius", 1, 1),
                         ("CentreOfPotential", 1, 1), ("MostBoundId", 1, 0), ("SORadius", 1, 1),
                         ("SOMass", 1, 0), ("SOCount", 1, 0)],
    "EuclideanMST": [("CoreDistance", 0, 1)],
    "HDBSCAN": [("ClusterId", 0, 0), ("Probability", 0, 0), ("OutlierScore", 0, 0),
                ("CoreDistance", 0, 1)],
    "TreeGravity": [("Potential", 0, -1), ("Acceleration", 0, -2)],
}
PORTS = {"KNNDensity": 1, "FriendsOfFriends": 2, "EuclideanMST": 2, "HDBSCAN": 1,
         "TreeGravity": 1}


def valid_props(name, rng, n, periodic):
    """Random valid properties at unit scale."""
    p = {}
    if name in ("KNNDensity", "FriendsOfFriends", "EuclideanMST", "HDBSCAN"):
        p["Periodic"] = int(periodic)
        p["BoxBounds"] = [0, 1, 0, 1, 0, 1]
    if name == "KNNDensity":
        p.update(NumberOfNeighbors=int(rng.integers(1, min(n, 40) + 1)),
                 Estimator=int(rng.integers(0, 2)), OutputNeighbors=1)
    elif name == "FriendsOfFriends":
        p.update(LinkingLengthMode="Absolute",
                 LinkingLength=float(rng.choice([0.3, 0.6, 1.0, 2.0])) / n ** (1 / 3),
                 MinimumGroupSize=int(rng.integers(1, 10)),
                 PotentialCentres=int(rng.integers(0, 2)),
                 Softening=float(rng.choice([0.0, 1e-3])),
                 SphericalOverdensity=int(rng.integers(0, 2)),
                 OverdensityReference="Critical", CriticalDensity=float(n), Overdensity=50.0)
    elif name == "EuclideanMST":
        p.update(Metric=int(rng.integers(0, 2)), MinSamples=int(rng.integers(1, min(n - 1, 12) + 1)))
    elif name == "HDBSCAN":
        p.update(MinClusterSize=int(rng.integers(2, 30)), MinSamples=int(rng.integers(0, 10)),
                 ClusterSelectionMethod=int(rng.integers(0, 2)))
    elif name == "TreeGravity":
        p.update(OpeningAngle=float(rng.choice([0.0, 0.5, 1.0])),
                 Softening=float(rng.choice([0.0, 1e-3])))
    return p


def scale_props(name, props, factor):
    """The same properties for the points times `factor`."""
    p = dict(props)
    if "BoxBounds" in p:
        p["BoxBounds"] = [v * factor for v in p["BoxBounds"]]
    if name == "FriendsOfFriends":
        p["LinkingLength"] *= factor
        p["Softening"] *= factor
        p["CriticalDensity"] /= factor ** 3
    if name == "TreeGravity":
        p["Softening"] *= factor
    return p


def masses_for(name, rng, n):
    if name in ("KNNDensity", "FriendsOfFriends", "TreeGravity"):
        return {"Mass": rng.random(n) + 0.5}
    return {}


def mass_property(name, arrays):
    return {"MassArray": ["POINTS", "Mass"]} if "Mass" in arrays else {}


# ----------------------------------------------------------------------------
# The cases
def representable(value, dtype):
    info = np.finfo(dtype)
    a = np.abs(value)
    return (a == 0) | np.isinf(value) | ((a >= info.tiny) & (a <= info.max))


def out_of_range(array, g, held, warnings):
    """Values the output precision cannot hold (held false) must be inf, 0 or
    subnormal, with a warning."""
    lost = g[~held]
    if lost.size and not (np.all((lost == 0) | np.isinf(lost) | (np.abs(lost) < np.finfo(g.dtype).tiny))
                          and warnings):
        return [f"{array}: {lost.size} values out of range without inf/0 and a warning"]
    return []


# At a non-power-of-two scale the scaled coordinates round: each by at most
# half an ulp, u |x| (u the unit roundoff of the points' type). Seen at unit
# scale a point moves by at most sqrt(3) u max|x|, so the offset between two
# points by twice that: the "shift". Any distance moves by at most the shift,
# and so does the k-th smallest distance of a point (1-Lipschitz in the
# points), whichever neighbours are at near-tied distances. Computing a
# distance (differences, squares, sum, sqrt) and writing it round by a few u
# of the distance itself at each scale: 8 u d covers both runs.
def rescaled_shift(unit):
    u = np.finfo(unit.dtype).eps / 2
    return 2 * math.sqrt(3) * u * float(np.abs(unit.astype(np.float64)).max()), u


def rescaled_knn(ref, got, warnings, unit, arrays, props, factor):
    """KNNDensity at a non-power-of-two scale against its unit-scale run:
    distances and h within the shift; the neighbour ids may differ among
    near-ties (any is correct) but each must be at its reported distance;
    Density the estimator on the scaled run's own neighbours, within what the
    shift can move it."""
    shift, u = rescaled_shift(unit)
    slack = lambda d: shift + 8 * u * d  # noqa: E731
    box = props["BoxBounds"] if props["Periodic"] else None
    bad = []
    h_ref, h = ref["SmoothingLength"].astype(np.float64), got["SmoothingLength"] / factor
    rows = (len(h), -1)  # K = 1: one component
    d_ref = ref["NeighborDistances"].astype(np.float64).reshape(rows)
    d = got["NeighborDistances"].reshape(rows) / factor
    ids = got["NeighborIds"].astype(np.int64).reshape(rows)
    if np.any(np.abs(h - h_ref) > slack(h_ref)):
        bad.append(f"SmoothingLength off by {np.abs(h / np.maximum(h_ref, 1e-300) - 1).max():.2e}")
    if np.any(np.abs(d - d_ref) > slack(d_ref)):
        bad.append("NeighborDistances: a k-th distance moved by more than rounding")
    true = jztest.true_distances(unit, None, ids, box)
    distinct = all(len(set(row)) == len(row) for row in ids.tolist())
    if not distinct or np.any(np.abs(true - d) > slack(true)):
        bad.append("NeighborIds: not distinct, or not at their reported distances")
    m = arrays["Mass"][ids] if "Mass" in arrays else np.ones(ids.shape)
    g = got["Density"]
    zero = h == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        hh = np.where(zero, 1.0, h)
        s = slack(hh) / hh  # relative move of h, and (twice) of each q = r/h
        if props["Estimator"] == 1:
            want = jztest.tophat_density(hh, m)
            tol = want * (3 * s + 8 * u)
        else:
            # |dW/dq| <= 2 for the M4 shape; h^3 moves by 3 s relative.
            want = jztest.sph_density(true, hh, m)
            scale = 8.0 / (np.pi * hh ** 3) * m.sum(axis=1)
            tol = want * 3 * s + scale * (4 * s + 8 * u)
    want_scaled = want * factor ** -3.0
    held = representable(want_scaled, g.dtype) & ~zero
    if not np.all(np.isinf(g[zero])):
        bad.append("Density: not inf where h = 0")
    gd = g.astype(np.float64) * factor ** 3.0
    if np.any(np.abs(gd[held] - want[held]) > tol[held]):
        rel = np.abs(gd[held] / want[held] - 1)
        bad.append(f"Density off its own neighbours' estimate by {rel.max():.2e}")
    bad += out_of_range("Density", g, held | zero, warnings)
    return bad


def direct_gravity(unit, m, eps):
    """Float64 direct sums at unit scale: potential, acceleration, and the
    sums of the terms' magnitudes and of their sensitivities to the shift."""
    x = unit.astype(np.float64)
    diff = x[:, None, :] - x[None, :, :]
    r2 = (diff ** 2).sum(axis=2)
    s2 = r2 + eps ** 2
    # No self term; coincident points without softening: no term either.
    live = (s2 > 0) & ~np.eye(len(x), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(live, 1 / np.sqrt(np.where(live, s2, 1)), 0.0) * m[None, :]
        inv3 = inv / np.where(live, s2, 1)
    phi = -inv.sum(axis=1)
    acc = -(diff * inv3[:, :, None]).sum(axis=1)
    slope = inv3 * np.sqrt(r2)  # m r / s^3
    return phi, acc, {"phi": inv.sum(axis=1), "dphi": slope.sum(axis=1), "acc": slope.sum(axis=1),
                      "dacc": inv3.sum(axis=1)}


def rescaled_gravity(got, warnings, unit, arrays, props, factor):
    """TreeGravity at a non-power-of-two scale against the float64 direct sum
    at unit scale (the scaled points build a different tree: its cells come
    from the coordinates' bits, so at theta > 0 the two runs are two
    different approximations and only each against the direct sum means
    anything). Per point: the shift moves a pair term by at most
    |d term / d offset| times the shift (|grad (m/s)| = m r/s^3 for the
    potential, at most 2 m/s^3 for the acceleration, s^2 = r^2 + eps^2),
    plus 16 u of the terms' magnitudes for summing (theta > 0 sums in single
    precision: u of float32). At theta > 0 add the opening criterion's
    truncation: a node passes with its points within b < beta d of its centre
    of mass, beta = sqrt(0.7) theta, and its quadrupole expansion leaves out
    terms of order beta^3 of the node's own term, which is at most (1 + beta)^2
    (potential: 1 + beta) times the sum of its points' term magnitudes."""
    shift, u = rescaled_shift(unit)
    m = arrays["Mass"]
    theta, eps = props["OpeningAngle"], props["Softening"]
    phi, acc, mag = direct_gravity(unit, m, eps)
    if theta > 0:
        u = max(u, np.finfo(np.float32).eps / 2)
    beta = math.sqrt(0.7) * theta
    bad = []
    for array, power, want, size, slope, grow in (
            ("Potential", -1, phi, mag["phi"], mag["dphi"], 1 + beta),
            ("Acceleration", -2, acc, mag["acc"], 2 * mag["dacc"], (1 + beta) ** 2)):
        g = got[array]
        gd = g.astype(np.float64) * factor ** -power
        held = np.all(representable(want * factor ** power, g.dtype).reshape(len(want), -1), axis=1)
        tol = shift * slope + 16 * u * size + (beta ** 3 * grow * size if theta > 0 else 0)
        err = np.abs(gd - want) if want.ndim == 1 else np.linalg.norm(gd - want, axis=1)
        if np.any(~(err[held] <= tol[held])):
            worst = np.max(err[held] / np.maximum(tol[held], 1e-300))
            bad.append(f"{array} off the direct sum by {worst:.2e} of its tolerance")
        bad += out_of_range(array, g, held if g.ndim == 1 else np.repeat(held[:, None], 3, 1), warnings)
    return bad


def case_scale(c, rng, label):
    name = rng.choice(list(SCALED_ARRAYS))
    dtype = rng.choice([np.float32, np.float64])
    n = int(rng.integers(30, 500))
    kind = rng.choice(["uniform", "clustered", "duplicates", "plane", "line", "lattice"])
    periodic = bool(rng.integers(0, 2))
    pow2 = rng.random() < 0.85
    k = int(rng.integers(-99, 100))
    factor = 2.0 ** k if pow2 else MPC_CM
    label += f" scale {name} {np.dtype(dtype).name} n={n} {kind}{' periodic' if periodic else ''}" \
             f" x{'2^%d' % k if pow2 else '%g' % factor}"
    unit = unit_points(rng, kind, n, dtype)
    arrays = masses_for(name, rng, n)
    props = {**valid_props(name, rng, n, periodic), **mass_property(name, arrays)}
    ref = run(name, jztest.polydata(unit, arrays), PORTS[name], props)
    big = (unit.astype(np.float64) * factor).astype(dtype)
    got = run(name, jztest.polydata(big, arrays), PORTS[name], scale_props(name, props, factor))
    if not c.check(not ref.errors and not got.errors, f"{label}: ran ({(ref.errors + got.errors)[:1]})"):
        return
    bad = []
    for array, port, power in SCALED_ARRAYS[name]:
        r, g = ref.arrays(port).get(array), got.arrays(port).get(array)
        if r is None and g is None:
            continue
        if r is None or g is None or r.shape != g.shape:
            bad.append(f"{array} missing or misshapen")
            continue
        if not pow2:
            continue  # checked below, per filter
        if power == 0:
            if not np.array_equal(r, g):
                bad.append(f"{array} differs")
            continue
        want = r.astype(np.float64) * factor ** power
        exact = representable(want, g.dtype)
        if not np.array_equal(g[exact], want[exact].astype(g.dtype)):
            bad.append(f"{array} not exactly scaled")
        bad += out_of_range(array, g, exact, got.warnings)
    if not pow2 and name == "KNNDensity":
        bad += rescaled_knn(ref.arrays(), got.arrays(), got.warnings, unit, arrays, props, factor)
    elif not pow2 and name == "TreeGravity":
        bad += rescaled_gravity(got.arrays(), got.warnings, unit, arrays, props, factor)
    elif not pow2 and "CoreDistance" in ref.arrays() and "CoreDistance" in got.arrays():
        # A k-th nearest distance too: within the shift.
        shift, u = rescaled_shift(unit)
        core, core_ref = got.arrays()["CoreDistance"] / factor, ref.arrays()["CoreDistance"]
        if np.any(np.abs(core - core_ref) > shift + 8 * u * core_ref):
            bad.append("CoreDistance moved by more than rounding")
    c.check(not bad, f"{label}: {'; '.join(bad) if bad else 'outputs scaled back'}")


BAD_PARAMETERS = {
    "KNNDensity": [("NumberOfNeighbors", 0), ("NumberOfNeighbors", -3), ("NumberOfNeighbors", "n+1"),
                   ("Estimator", 2), ("Estimator", -1), ("Device", 3), ("Device", -1),
                   ("BoxBounds", [0, 1, 0, 0, 0, 1]), ("BoxBounds", [0, 1, 0, 1, 1, 0]),
                   ("BoxBounds", [0, math.nan, 0, 1, 0, 1])],
    "FriendsOfFriends": [("LinkingLength", 0.0), ("LinkingLength", -1.0), ("LinkingLength", math.nan),
                         ("LinkingLength", math.inf), ("MinimumGroupSize", 0),
                         ("MinimumGroupSize", -2), ("LinkingLengthMode", 2),
                         ("Softening", -1.0), ("Softening", math.nan),
                         ("GravitationalConstant", 0.0), ("GravitationalConstant", -1.0),
                         ("Overdensity", 0.0), ("Overdensity", -5.0), ("CriticalDensity", 0.0),
                         ("OverdensityReference", 2), ("Device", 5)],
    "EuclideanMST": [("Metric", 2), ("Metric", -1), ("MinSamples", 0), ("MinSamples", "n"),
                     ("Device", 3)],
    "HDBSCAN": [("MinClusterSize", 0), ("MinClusterSize", 1), ("MinSamples", -1),
                ("ClusterSelectionMethod", 2), ("Device", -2)],
    "TreeGravity": [("OpeningAngle", -0.1), ("OpeningAngle", 1.6), ("OpeningAngle", math.nan),
                    ("Softening", -1.0), ("GravitationalConstant", 0.0),
                    ("GravitationalConstant", math.nan), ("Device", 4)],
}


def case_parameter(c, rng, label):
    name = rng.choice(list(BAD_PARAMETERS))
    dtype = rng.choice([np.float32, np.float64])
    n = int(rng.integers(30, 300))
    pts = unit_points(rng, "uniform", n, dtype)
    arrays = masses_for(name, rng, n)
    props = {**valid_props(name, rng, n, False), **mass_property(name, arrays)}
    choice = rng.integers(0, len(BAD_PARAMETERS[name]) + 2)
    if choice < len(BAD_PARAMETERS[name]):
        prop, value = BAD_PARAMETERS[name][choice]
        value = {"n": n, "n+1": n + 1}.get(value, value) if isinstance(value, str) else value
        props[prop] = value
        if prop == "BoxBounds":
            props["Periodic"] = 1
        if name == "FriendsOfFriends" and prop in ("Softening", "GravitationalConstant"):
            props["PotentialCentres"] = 1
        if name == "FriendsOfFriends" and prop in ("Overdensity", "CriticalDensity"):
            props["SphericalOverdensity"] = 1
        if name == "EuclideanMST" and prop == "MinSamples":
            props["Metric"] = 1
        expect = prop
    elif choice == len(BAD_PARAMETERS[name]):
        pts = pts.copy()
        pts[int(rng.integers(0, n)), int(rng.integers(0, 3))] = rng.choice([np.nan, np.inf, -np.inf])
        expect = "non-finite"
    else:
        if not arrays:
            arrays = {"Mass": np.ones(n)}
            props["MassArray"] = ["POINTS", "Mass"]
            if name in ("EuclideanMST", "HDBSCAN"):
                c.check(True, f"{label}: {name} has no mass array")
                return
        arrays = {"Mass": arrays["Mass"].copy()}
        arrays["Mass"][int(rng.integers(0, n))] = np.nan
        expect = "non-finite"
    label += f" parameter {name} {expect}={props.get(expect, '')}"
    out = run(name, jztest.polydata(pts, arrays), PORTS[name], props)
    text = " | ".join(out.errors)
    c.check(bool(out.errors) and expect in text and out.empty(),
            f"{label}: error naming {expect}, outputs empty ({text[-160:]})")


def case_composite(c, rng, label):
    name = rng.choice(list(SCALED_ARRAYS))
    n = int(rng.integers(40, 400))
    kind = rng.choice(["uniform", "clustered", "duplicates"])
    pts = unit_points(rng, kind, n, np.float64)
    arrays = masses_for(name, rng, n)
    props = {**valid_props(name, rng, n, False), **mass_property(name, arrays)}
    cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(1, 4))))
    bounds = [0, *cuts.tolist(), n]
    mb = vtkMultiBlockDataSet()
    kinds = []
    for b in range(len(bounds) - 1):
        lo, hi = bounds[b], bounds[b + 1]
        dtype = rng.choice([np.float32, np.float64])
        block_pts = pts[lo:hi].astype(dtype)  # exact: the grid fits float32
        mb.SetBlock(b, jztest.polydata(block_pts, {k: v[lo:hi] for k, v in arrays.items()}))
        kinds.append(f"{hi - lo}{'f' if dtype == np.float32 else 'd'}")
    label += f" composite {name} n={n} blocks {'+'.join(kinds)}"
    # Float32 only when every non-empty block is (the filters' rule: an empty
    # piece, e.g. a rank without particles, has no say), else float64.
    whole = pts.astype(np.float32) if all(k.endswith("f") or k[0] == "0" for k in kinds) else pts
    ref = run(name, jztest.polydata(whole, arrays), PORTS[name], props)
    got = run(name, mb, PORTS[name], props)
    if not c.check(not ref.errors and not got.errors, f"{label}: ran ({(ref.errors + got.errors)[:1]})"):
        return
    bad = []
    for array, port, _ in SCALED_ARRAYS[name]:
        if port != 0:
            continue
        r, g = ref.arrays(0).get(array), got.arrays(0).get(array)
        if (r is None) != (g is None) or (r is not None and not np.array_equal(r, g.astype(r.dtype))):
            bad.append(array)
    c.check(not bad, f"{label}: {'differs: ' + ', '.join(bad) if bad else 'blocks equal the whole'}")


def case_file(c, rng, label, workdir):
    import snapshot_files

    import binary_snapshots

    fmt = int(rng.integers(0, 3))  # HDF5, Gadget binary, TIPSY
    path = os.path.join(workdir, f"snap_{int(rng.integers(0, 1 << 30))}" + (".hdf5", "", ".std")[fmt])
    n, seed = int(rng.integers(50, 500)), int(rng.integers(0, 1000))
    if fmt == 0:
        snapshot_files.write_gadget(path, [0, n, 0, 0, 0, 0], seed=seed)
    elif fmt == 1:
        binary_snapshots.write_gadget_binary(path, [int(rng.integers(0, 50)), n], seed=seed,
                                             fmt=int(rng.integers(1, 3)), endian="<>"[seed % 2])
    else:
        binary_snapshots.write_tipsy(path, (int(rng.integers(0, 50)), n, int(rng.integers(0, 9))),
                                     endian="<>"[seed % 2], seed=seed)
    label += " " + ("HDF5", "Gadget binary", "TIPSY")[fmt]
    data = bytearray(open(path, "rb").read())
    truncate = rng.random() < 0.5
    if truncate:
        cut = int(rng.integers(1, len(data)))
        data = data[:cut]
        label += f" file truncated at {cut}/{len(data)}"
    else:
        at = int(rng.integers(0, len(data)))
        count = int(rng.integers(1, 64))
        data[at:at + count] = rng.integers(0, 256, min(count, len(data) - at), dtype=np.uint8).tobytes()
        label += f" file with {count} bytes overwritten at {at}"
    with open(path, "wb") as f:
        f.write(data)
    reader = FILTERS["ParticleSnapshotReader"](FileName=[path])
    alg, errors = jztest.update_collecting_errors(reader)
    out = alg.GetOutputDataObject(0)
    blocks = out.GetNumberOfBlocks() if out is not None else 0
    simple.Delete(reader)
    os.remove(path)
    if truncate:
        c.check(bool(errors) and blocks == 0, f"{label}: an error, no output ({errors[-1:]})")
    else:
        c.check((bool(errors) and blocks == 0) or (not errors and blocks >= 1),
                f"{label}: an error and no output, or an output ({len(errors)} errors, {blocks} blocks)")


def main():
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("JZ_HOSTILE_CASES", 300))
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int(os.environ.get("JZ_HOSTILE_SEED", 1))
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    print(f"{cases} cases from {first}, seed {seed}")
    c = Checker()
    with tempfile.TemporaryDirectory() as workdir:
        for i in range(first, first + cases):
            rng = np.random.default_rng([seed, i])
            draw = rng.random()
            label = f"case {i} (seed {seed})"
            if draw < 0.5:
                case_scale(c, rng, label)
            elif draw < 0.75:
                case_parameter(c, rng, label)
            elif draw < 0.9:
                case_composite(c, rng, label)
            else:
                case_file(c, rng, label, workdir)
    c.finish()


if __name__ == "__main__":
    main()
