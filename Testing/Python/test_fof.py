"""FriendsOfFriends against scipy: cKDTree.query_pairs(l) plus
scipy.sparse.csgraph.connected_components, computed in double from the input
coordinates, compared label-agnostically; labels, catalogue, options, errors,
real data (Gadget-4 FOF catalogues, hfof domain counts) and the per-time-step
result cache.

Usage: pvpython test_fof.py SECTION   (see SECTIONS at the bottom)
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
from checks import run_section  # noqa: E402
from jztest import (SERIES_INFO_SCRIPT, SERIES_OUTPUT_SCRIPT, SERIES_STEP_SCRIPT, SKIP,  # noqa: E402
                    count_fof_executions, data_leaves, polydata, producer, simple)

import numpy as np  # noqa: E402
from scipy.sparse import coo_matrix  # noqa: E402
from scipy.sparse.csgraph import connected_components  # noqa: E402
from scipy.spatial import cKDTree  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

FriendsOfFriends = jztest.__dict__.get("FriendsOfFriends") or getattr(simple, "FriendsOfFriends")


class FofRun:
    """One FriendsOfFriends execution: both outputs and the captured errors."""

    def __init__(self, particles, catalogue, errors):
        self.particles = particles
        self.catalogue = catalogue
        self.errors = errors

    def array(self, name, port=0):
        data = self.particles if port == 0 else self.catalogue
        arr = data.GetPointData().GetArray(name)
        if arr is None:
            return None
        a = vtk_to_numpy(arr)
        return a.reshape(len(a), -1) if arr.GetNumberOfComponents() > 1 else a

    def device(self, port=0):
        data = self.particles if port == 0 else self.catalogue
        arr = data.GetFieldData().GetAbstractArray("JZDevice")
        return arr.GetValue(0) if arr is not None else None


def fof(data, **props):
    outs, errors = jztest.run_filter(FriendsOfFriends, data, None, 2, **props)
    return FofRun(outs[0], outs[1], errors)


def scipy_groups(points, l, box=None):
    """Per-point component labels of the friends graph d <= l (scipy)."""
    p = points.astype(np.float64)
    n = len(p)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if box is None:
        tree = cKDTree(p)
    else:
        lo = np.array(box[0::2], dtype=np.float64)
        length = np.array(box[1::2], dtype=np.float64) - lo
        w = lo + np.mod(p - lo, length)
        w = np.where(w >= lo + length, lo, w)
        q = w - lo
        q = np.where(q >= length, 0.0, q)
        tree = cKDTree(q, boxsize=length)
    pairs = tree.query_pairs(l, output_type="ndarray")
    g = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(g, directed=False)
    return labels


def same_partition(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.size == 0:
        return True
    na = len(np.unique(a))
    nb = len(np.unique(b))
    nab = len(np.unique(np.stack([a, b], axis=1), axis=0))
    return na == nb == nab


def expected_ids(labels, min_size, ids=None):
    """The GroupId rule: kept groups by descending size, ties by smallest id."""
    n = len(labels)
    ids = np.arange(n) if ids is None else ids
    sizes = np.bincount(labels)
    minid = np.full(len(sizes), np.iinfo(np.int64).max)
    np.minimum.at(minid, labels, ids)
    kept = np.nonzero(sizes >= min_size)[0]
    order = kept[np.lexsort((minid[kept], -sizes[kept]))]
    gid_of = np.full(len(sizes), -1, dtype=np.int64)
    gid_of[order] = np.arange(len(order))
    return gid_of[labels], sizes[labels]


def check_run(c, pts, l, label, box=None, min_size=1, ids=None):
    """Runs the filter in Absolute mode and compares with scipy."""
    props = dict(LinkingLengthMode="Absolute", LinkingLength=l, MinimumGroupSize=min_size)
    if box is not None:
        props.update(Periodic=1, BoxBounds=list(box))
    arrays = {} if ids is None else {"GlobalIds": ids}
    run = fof(polydata(pts, arrays), **props)
    if not c.check(not run.errors, f"{label}: no error {run.errors[:1]}"):
        return None
    ref = scipy_groups(pts, l, box)
    gid = run.array("GroupId")
    gsize = run.array("GroupSize")
    if not c.check(gid is not None and gsize is not None, f"{label}: GroupId/GroupSize present"):
        return None
    want_gid, want_size = expected_ids(ref, min_size, ids)
    c.check(bool(np.array_equal(gsize, want_size)), f"{label}: GroupSize == scipy")
    c.check(bool(np.array_equal(gid, want_gid)),
            f"{label}: GroupId == scipy partition with the ordering rule "
            f"({int(gid.max()) + 1 if len(gid) else 0} groups)")
    return run


def clustered(n, rng, dtype, box=1.0, frac=0.8, nhalo=200):
    """Most points in Gaussian halos with a power-law size distribution."""
    nh = int(frac * n)
    w = rng.pareto(1.0, nhalo) + 1
    counts = rng.multinomial(nh, w / w.sum())
    centres = rng.random((nhalo, 3)) * box
    radii = 0.003 * box * counts ** (1 / 3) / 4
    parts = [rng.random((n - nh, 3)) * box]
    for cnt, ce, r in zip(counts, centres, radii):
        parts.append(ce + r * rng.standard_normal((cnt, 3)))
    p = np.concatenate(parts)
    p = np.mod(p, box)
    p = np.where(p >= box, 0.0, p)
    return p.astype(dtype)


def sec_uniform(c):
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        for n in (1, 2, 1000, 30000, 200000):
            pts = rng.random((n, 3)).astype(dtype)
            for b in (0.2, 0.75):
                l = b * (1.0 / n) ** (1 / 3)
                for box in (None, (0, 1, 0, 1, 0, 1)):
                    if n == 200000 and (box is None or dtype == np.float32) and b == 0.2:
                        continue  # keep the test short; the other cases cover these
                    check_run(c, pts, l, f"uniform {np.dtype(dtype).name} n={n} b={b} "
                              f"{'periodic' if box else 'open'}", box=box)


def sec_clustered(c):
    rng = np.random.default_rng(2)
    for dtype in (np.float32, np.float64):
        for n in (5000, 100000):
            pts = clustered(n, rng, dtype)
            l = 0.2 * (1.0 / n) ** (1 / 3)
            check_run(c, pts, l, f"clustered {np.dtype(dtype).name} n={n} periodic",
                      box=(0, 1, 0, 1, 0, 1), min_size=20)
            check_run(c, pts, l, f"clustered {np.dtype(dtype).name} n={n} open", min_size=20)


def sec_chains(c):
    # Chains along each axis crossing the periodic boundary of a box not at
    # the origin, with spacing exactly l (exact in binary).
    box = (-4.0, 4.0, 10.0, 12.0, -1.0, 0.0)
    pts = []
    for k in range(12):
        pts.append((3.0 + 0.25 * k, 11.0, -0.5))  # crosses x = 4 == -4
        pts.append((0.0, 11.5 + 0.25 * k, -0.25))  # crosses y = 12 == 10
        pts.append((-2.0, 10.5, -0.625 + 0.125 * k))  # crosses z
    pts = np.array(pts)
    lo = np.array(box[0::2])
    length = np.array(box[1::2]) - lo
    pts = lo + np.mod(pts - lo, length)
    for dtype in (np.float32, np.float64):
        p = pts.astype(dtype)
        run = check_run(c, p, 0.25, f"chains {np.dtype(dtype).name} l=0.25", box=box)
        if run is not None:
            c.check(int(run.array("GroupSize").max()) >= 12, "chains: a chain closes across the box")
        check_run(c, p, 0.2499, f"chains {np.dtype(dtype).name} below", box=box)
        check_run(c, p, 0.25, f"chains {np.dtype(dtype).name} open")
    # Random points crowding the faces.
    rng = np.random.default_rng(3)
    t = rng.random((20000, 3))
    t = np.where(t < 0.5, 0.05 * t, 1 - 0.05 * (1 - t))
    p = lo + length * t
    p = np.where(p >= lo + length, lo, p)
    check_run(c, p, 0.02, "faces periodic double", box=box)
    check_run(c, p.astype(np.float32), 0.02, "faces periodic float", box=box)


def sec_lattice(c):
    h = 0.125
    side = 16
    g = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)
    pts = np.array([1.0, -2.0, 0.0]) + h * g
    box = (1.0, 1.0 + side * h, -2.0, -2.0 + side * h, 0.0, side * h)
    for dtype in (np.float32, np.float64):
        p = pts.astype(dtype)
        for b in (None, box):
            tag = f"lattice {np.dtype(dtype).name} {'periodic' if b else 'open'}"
            run = check_run(c, p, h, tag + " at l", box=b)
            if run is not None:
                c.check(int(run.array("GroupSize")[0]) == len(p), tag + ": one group at l")
            run = check_run(c, p, np.nextafter(h, 0), tag + " just below l", box=b)
            if run is not None:
                c.check(int(run.array("GroupSize").max()) == 1, tag + ": singletons below l")
            check_run(c, p, h * np.sqrt(2), tag + " at h sqrt2", box=b)


def sec_duplicates(c):
    rng = np.random.default_rng(4)
    base = rng.random((3000, 3))
    pts = np.concatenate([base, base[:1500], base[:300], np.repeat(base[:1], 500, axis=0)])
    rng.shuffle(pts)
    for dtype in (np.float32, np.float64):
        p = pts.astype(dtype)
        check_run(c, p, 1e-9, f"duplicates {np.dtype(dtype).name} tiny l", min_size=2)
        check_run(c, p, 0.2 * (1 / 3000) ** (1 / 3), f"duplicates {np.dtype(dtype).name}",
                  box=(0, 1, 0, 1, 0, 1), min_size=20)


def sec_offset(c):
    rng = np.random.default_rng(5)
    box = (-1000.0, -990.0, 5e3, 5.01e3, 2.0, 6.0)
    lo = np.array(box[0::2])
    length = np.array(box[1::2]) - lo
    for dtype in (np.float32, np.float64):
        p = (lo + length * clustered(50000, rng, np.float64)).astype(dtype)
        p = np.where(p.astype(np.float64) >= lo + length, lo, p).astype(dtype)
        l = 0.2 * (length.prod() / len(p)) ** (1 / 3)
        check_run(c, p, l, f"offset box {np.dtype(dtype).name} periodic", box=box, min_size=20)
        check_run(c, p, l, f"offset box {np.dtype(dtype).name} open", min_size=20)
        # Points outside the box are wrapped in.
        q = p.astype(np.float64) + length * rng.integers(-2, 3, size=p.shape)
        check_run(c, q, l, "offset box: points outside wrapped", box=box, min_size=20)


def sec_groupid(c):
    rng = np.random.default_rng(6)
    pts = clustered(40000, rng, np.float64)
    ids = rng.permutation(10 ** 6)[: len(pts)].astype(np.int64) + 7
    l = 0.2 * (1 / len(pts)) ** (1 / 3)
    # With GlobalIds the tie break uses them; check_run checks the rule.
    run = check_run(c, pts, l, "GroupId rule with GlobalIds", box=(0, 1, 0, 1, 0, 1),
                    min_size=20, ids=ids)
    # Equal-size groups: pairs of points, ties broken by the smallest id.
    pairs = np.repeat(rng.random((100, 3)) * 0.9, 2, axis=0)
    pairs[1::2, 0] += 1e-4
    pid = rng.permutation(len(pairs)).astype(np.int64)
    check_run(c, pairs, 1e-3, "equal sizes: ties by smallest GlobalId", min_size=2, ids=pid)
    check_run(c, pairs, 1e-3, "equal sizes: ties by smallest index", min_size=2)
    # Input order does not change GroupId per global id.
    if run is not None:
        perm = rng.permutation(len(pts))
        run2 = fof(polydata(pts[perm], {"GlobalIds": ids[perm]}), LinkingLengthMode="Absolute",
                   LinkingLength=l, MinimumGroupSize=20, Periodic=1)
        c.check(bool(np.array_equal(run2.array("GroupId"), run.array("GroupId")[perm])),
                "GroupId independent of the input order")
        # Default MinimumGroupSize is 20.
        run3 = fof(polydata(pts), LinkingLengthMode="Absolute", LinkingLength=l, Periodic=1)
        gs = run3.array("GroupSize")
        gid = run3.array("GroupId")
        c.check(bool(np.all((gid >= 0) == (gs >= 20))), "default MinimumGroupSize 20")


def catalogue_reference(pts, gid, G, masses, vel, box):
    lo = np.array(box[0::2])
    length = np.array(box[1::2]) - lo
    out = []
    for g in range(G):
        idx = np.nonzero(gid == g)[0]
        x = pts[idx].astype(np.float64)
        m = masses[idx]
        ref = x[0]
        d = x - ref
        d -= length * np.round(d / length)
        M = m.sum()
        cm = (m[:, None] * d).sum(0) / M
        r = np.sqrt((m * ((d - cm) ** 2).sum(1)).sum() / M)
        com = lo + np.mod(ref + cm - lo, length)
        v = vel[idx]
        vm = (m[:, None] * v).sum(0) / M
        sig = np.sqrt((m * ((v - vm) ** 2).sum(1)).sum() / (3 * M))
        out.append((len(idx), M, com, r, vm, sig))
    return out


def sec_catalogue(c):
    rng = np.random.default_rng(7)
    box = (0.0, 2.0, -1.0, 1.0, 0.0, 1.0)
    lo = np.array(box[0::2])
    length = np.array(box[1::2]) - lo
    centres = np.array([[1.999, 0.999, 0.999], [1.0, 0.0, 0.5], [0.3, -0.7, 0.001]])
    parts = []
    for k, ce in enumerate(centres):
        parts.append(ce + 0.01 * rng.standard_normal((300 + 100 * k, 3)))
    parts.append(lo + length * rng.random((2000, 3)))
    pts = np.concatenate(parts)
    pts = lo + np.mod(pts - lo, length)
    pts = np.where(pts >= lo + length, lo, pts)
    masses = 0.5 + rng.random(len(pts))
    vel = rng.standard_normal((len(pts), 3)) * 30 + 5
    for dtype in (np.float64, np.float32):
        p = pts.astype(dtype)
        data = polydata(p, {"Mass": masses, "Velocity": vel})
        run = fof(data, LinkingLengthMode="Absolute", LinkingLength=0.005, MinimumGroupSize=20,
                  Periodic=1, BoxBounds=list(box), MassArray=["POINTS", "Mass"],
                  VelocityArray=["POINTS", "Velocity"])
        tag = f"catalogue {np.dtype(dtype).name}"
        if not c.check(not run.errors, f"{tag}: no error {run.errors[:1]}"):
            continue
        gid = run.array("GroupId")
        G = int(gid.max()) + 1
        cat = run.catalogue
        c.check(cat.GetClassName() == "vtkPolyData" and cat.GetNumberOfPoints() == G
                and cat.GetNumberOfVerts() == G, f"{tag}: one vertex per group ({G})")
        c.check(G >= 3, f"{tag}: the three halos are found")
        ref = catalogue_reference(p, gid, G, masses, vel, box)
        c.check(bool(np.array_equal(run.array("GroupId", 1), np.arange(G))), f"{tag}: GroupId")
        c.check(bool(np.array_equal(run.array("Count", 1), [r[0] for r in ref])), f"{tag}: Count")
        c.close(run.array("Mass", 1), [r[1] for r in ref], 1e-12, f"{tag}: Mass")
        com = run.array("CenterOfMass", 1)
        want = np.array([r[2] for r in ref])
        d = np.abs(com - want)
        d = np.minimum(d, length - d)
        c.check(bool(np.all(d < 1e-10)), f"{tag}: CenterOfMass (max err {d.max():.1e})")
        c.check(bool(np.all((com >= lo) & (com < lo + length))), f"{tag}: CenterOfMass in the box")
        pos = vtk_to_numpy(cat.GetPoints().GetData())
        c.check(bool(np.allclose(pos, com, rtol=0, atol=0)), f"{tag}: vertices at the CoM")
        c.close(run.array("InertiaRadius", 1), [r[3] for r in ref], 1e-9, f"{tag}: InertiaRadius")
        c.close(run.array("MeanVelocity", 1), np.array([r[4] for r in ref]), 1e-10,
                f"{tag}: MeanVelocity")
        c.close(run.array("VelocityDispersion", 1), [r[5] for r in ref], 1e-10,
                f"{tag}: VelocityDispersion")
        # The straddling halo's centre is near the corner, not the box middle.
        k = int(np.argmin(((com - centres[0]) ** 2).sum(1)))
        c.check(bool(np.all(np.minimum(np.abs(com[k] - centres[0]),
                                       length - np.abs(com[k] - centres[0])) < 0.005)),
                f"{tag}: straddling halo's CoM at the corner {com[k]}")
        c.check(run.device(0) == "CPU" and run.device(1) == "CPU", f"{tag}: JZDevice CPU")
    # No velocity array: no velocity statistics, unit masses.
    run = fof(polydata(pts), LinkingLengthMode="Absolute", LinkingLength=0.005, Periodic=1,
              BoxBounds=list(box))
    c.check(run.array("MeanVelocity", 1) is None and run.array("VelocityDispersion", 1) is None,
            "no velocity array: no MeanVelocity/VelocityDispersion")
    c.check(bool(np.array_equal(run.array("Mass", 1), run.array("Count", 1).astype(float))),
            "unit masses: Mass == Count")


def sec_relative(c):
    rng = np.random.default_rng(8)
    pts = clustered(30000, rng, np.float64)
    box = (0, 1, 0, 1, 0, 1)
    run = fof(polydata(pts), LinkingLength=0.2, MinimumGroupSize=1, Periodic=1,
              BoxBounds=list(box))
    ref = scipy_groups(pts, 0.2 * (1 / len(pts)) ** (1 / 3), box)
    c.check(same_partition(run.array("GroupId"), ref), "Relative mode, periodic: b (V/N)^(1/3)")
    sub = pts * np.array([1.0, 0.5, 0.25])
    vol = np.prod(sub.max(0) - sub.min(0))
    run = fof(polydata(sub), LinkingLength=0.2, MinimumGroupSize=1)
    ref = scipy_groups(sub, 0.2 * (vol / len(sub)) ** (1 / 3))
    c.check(same_partition(run.array("GroupId"), ref), "Relative mode, open: bounding box")


def sec_errors(c):
    pts = np.random.default_rng(9).random((100, 3))
    bad = pts.copy()
    bad[17, 1] = np.nan
    cases = [
        ("NaN coordinate", polydata(bad), {}),
        ("infinite coordinate", polydata(np.where(np.arange(300).reshape(100, 3) == 5, np.inf, pts)), {}),
        ("linking length 0", polydata(pts), dict(LinkingLength=0.0)),
        ("negative linking length", polydata(pts), dict(LinkingLengthMode="Absolute", LinkingLength=-1.0)),
        ("bad box", polydata(pts), dict(Periodic=1, BoxBounds=[0, 1, 1, 1, 0, 1])),
        ("inverted box", polydata(pts), dict(Periodic=1, BoxBounds=[0, 1, 0, 1, 1, 0])),
        ("mass tuples", polydata(pts, {"Mass": np.ones((100, 2))}), dict(MassArray=["POINTS", "Mass"])),
        ("velocity components", polydata(pts, {"Velocity": np.ones(100)}),
         dict(VelocityArray=["POINTS", "Velocity"])),
        ("flat data in Relative mode", polydata(pts * [1, 1, 0]), {}),
    ]
    for what, data, props in cases:
        run = fof(data, **props)
        c.check(len(run.errors) > 0, f"{what}: error reported ({run.errors[0][:90] if run.errors else ''})")
        c.check(run.particles.GetNumberOfPoints() == 0 and run.catalogue.GetNumberOfPoints() == 0,
                f"{what}: no partial output")


def sec_empty(c):
    run = fof(polydata(np.zeros((0, 3))))
    c.check(not run.errors, "empty input: no error")
    c.check(run.particles.GetNumberOfPoints() == 0 and run.catalogue.GetNumberOfPoints() == 0,
            "empty input: empty outputs")
    run = fof(polydata(np.array([[0.5, 0.5, 0.5]])), LinkingLengthMode="Absolute", MinimumGroupSize=1)
    c.check(not run.errors and list(run.array("GroupId")) == [0] and list(run.array("GroupSize")) == [1],
            "one point: one group")


def sec_device(c):
    pts = clustered(20000, np.random.default_rng(10), np.float32)
    ref = scipy_groups(pts, 0.2 * (1 / len(pts)) ** (1 / 3), (0, 1, 0, 1, 0, 1))
    cuda = fof(polydata(pts), Device="CUDA", Periodic=1, MinimumGroupSize=1)
    gpu = not cuda.errors
    if gpu:
        c.check(cuda.device(0) == "CUDA" and cuda.device(1) == "CUDA", "Device CUDA: JZDevice CUDA")
        c.check(same_partition(cuda.array("GroupId"), ref), "Device CUDA: partition == scipy")
    else:
        c.check(cuda.particles.GetNumberOfPoints() == 0 and cuda.catalogue.GetNumberOfPoints() == 0,
                f"Device CUDA without a usable GPU: error, no output ({cuda.errors[0][:80]})")
    for dev, want in (("CPU", "CPU"), ("Auto", "CUDA" if gpu else "CPU")):
        run = fof(polydata(pts), Device=dev, Periodic=1, MinimumGroupSize=1)
        c.check(not run.errors and run.device(0) == want and run.device(1) == want,
                f"Device {dev}: JZDevice {want}")
        c.check(same_partition(run.array("GroupId"), ref), f"Device {dev}: partition == scipy")


def external_or_skip(rel):
    """../shared/data/external/REL (JZ_SHARED_DIR overrides ../shared); exits
    SKIP when it is not available."""
    sd = os.environ.get("JZ_SHARED_DIR") or os.path.join(jztest.ROOT, "..", "shared")
    path = os.path.join(sd, "data/external", rel)
    if not os.path.exists(path):
        print(f"SKIP: ../shared/data/external/{rel.split('/')[0]} is not available")
        sys.exit(SKIP)
    return path


def sec_gadget(c):
    import h5py
    base = external_or_skip("gadget4-cosmobox-n32-l50")
    for snap in ("013", "020", "031", "046", "062"):
        with h5py.File(os.path.join(base, f"snapshot_{snap}.hdf5"), "r") as f:
            pos = f["PartType1/Coordinates"][...]
            pid = f["PartType1/ParticleIDs"][...].astype(np.int64)
            boxsize = float(f["Header"].attrs["BoxSize"])
        with h5py.File(os.path.join(base, f"fof_tab_{snap}.hdf5"), "r") as f:
            glen = f["Group/GroupLen"][...] if f["Header"].attrs["Ngroups_Total"] > 0 else np.zeros(0, int)
            goff = f["Group/GroupOffsetType"][:, 1] if len(glen) else np.zeros(0, int)
        ref = np.full(len(pos), -1, dtype=np.int64)
        for k, (o, n) in enumerate(zip(goff, glen)):
            ref[o:o + n] = k
        box = [0, boxsize] * 3
        run = fof(polydata(pos, {"GlobalIds": pid}), LinkingLength=0.2, MinimumGroupSize=32,
                  Periodic=1, BoxBounds=box)
        if not c.check(not run.errors, f"snapshot {snap}: no error"):
            continue
        gid = run.array("GroupId")
        c.check(int(gid.max()) + 1 == len(glen), f"snapshot {snap}: {len(glen)} groups")
        c.check(bool(np.array_equal(gid >= 0, ref >= 0)), f"snapshot {snap}: same particles in groups")
        c.check(same_partition(gid[ref >= 0], ref[ref >= 0]), f"snapshot {snap}: same membership")
        sizes = np.bincount(gid[gid >= 0])
        c.check(bool(np.array_equal(np.sort(sizes)[::-1], np.sort(glen)[::-1])),
                f"snapshot {snap}: group sizes")


def sec_hfof(c):
    f = external_or_skip("hfof-cosmo32768/cosmo32768.dat")
    pos = np.fromfile(f, dtype="<u2").reshape(-1, 3).astype(np.float64) / 65536.0
    table = {0.3: (None, 1), 0.1: (2, 1), 0.05: (461, 396), 0.01: (9600, 9580),
             0.005: (14497, 14488), 0.001: (27824, 27823)}
    for r, (iso, per) in table.items():
        for periodic, want in ((0, iso), (1, per)):
            if want is None:
                continue
            run = fof(polydata(pos), LinkingLengthMode="Absolute", LinkingLength=r,
                      MinimumGroupSize=1, Periodic=periodic)
            got = int(run.array("GroupId").max()) + 1
            c.check(got == want, f"hfof r={r} {'periodic' if periodic else 'isolated'}: "
                    f"{got} domains (hfof {want})")
    run = fof(polydata(pos), LinkingLength=0.2, MinimumGroupSize=20, Periodic=1)
    gs = run.array("GroupSize")
    c.check(len(np.unique(run.array("GroupId"))) - 1 == 70 and int(gs.max()) == 4897,
            "hfof data b=0.2 periodic: 70 groups >= 20, largest 4897")


def sec_progress(c):
    pts = np.random.default_rng(11).random((300000, 3)).astype(np.float32)
    src = producer(polydata(pts))
    f = FriendsOfFriends(Input=src, Device="CPU", Periodic=1)
    jztest.check_progress_in_steps(c, f)
    f.LinkingLength = 0.21
    alg = jztest.update_aborting(f)
    out = alg.GetOutputDataObject(0)
    c.check(out.GetPointData().GetArray("GroupId") is None
            and alg.GetOutputDataObject(1).GetNumberOfPoints() == 0, "aborted run: no output")
    alg.SetAbortExecute(0)
    f.LinkingLength = 0.22
    f.UpdatePipeline()
    c.check(alg.GetOutputDataObject(0).GetPointData().GetArray("GroupId") is not None,
            "the next run completes")
    simple.Delete(f)
    simple.Delete(src)


def sec_pointsets(c):
    """Port 0 keeps the Input's type (vtkUnstructuredGrid here)."""
    from vtkmodules.vtkCommonDataModel import vtkUnstructuredGrid
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.util.numpy_support import numpy_to_vtk
    pts = clustered(20000, np.random.default_rng(12), np.float64)
    ug = vtkUnstructuredGrid()
    vp = vtkPoints()
    vp.SetData(numpy_to_vtk(pts, deep=1))
    ug.SetPoints(vp)
    run = fof(ug, Periodic=1, MinimumGroupSize=1)
    c.check(run.particles.GetClassName() == "vtkUnstructuredGrid", "port 0 is a vtkUnstructuredGrid")
    c.check(run.catalogue.GetClassName() == "vtkPolyData", "port 1 is a vtkPolyData")
    ref = scipy_groups(pts, 0.2 * (1 / len(pts)) ** (1 / 3), (0, 1, 0, 1, 0, 1))
    c.check(same_partition(run.array("GroupId"), ref), "unstructured grid input: partition == scipy")


def sec_relative_lattice(c):
    """Relative b = 1 on an n^3 lattice in the unit periodic box is exactly
    Absolute l = 1/n: every neighbour pair is at d = l, so one group
    holds all points. (V/N)^(1/3) must be exact: std::cbrt alone gives a value
    below 1/32 for 32^3 and links nothing."""
    for n in (16, 32):
        g = np.arange(n) / n
        lattice = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
        for dtype in (np.float32, np.float64):
            tag = f"{n}^3 {np.dtype(dtype).name}"
            data = polydata(lattice.astype(dtype))
            rel = fof(data, LinkingLengthMode="Relative", LinkingLength=1.0, Periodic=1,
                      BoxBounds=[0, 1, 0, 1, 0, 1])
            ab = fof(data, LinkingLengthMode="Absolute", LinkingLength=1.0 / n, Periodic=1,
                     BoxBounds=[0, 1, 0, 1, 0, 1])
            if not c.check(not rel.errors and not ab.errors, f"{tag}: no error {rel.errors[:1]}"):
                continue
            count = rel.array("Count", 1)
            c.check(count is not None and len(count) == 1 and int(count[0]) == n ** 3,
                    f"{tag}: Relative b=1, the largest group has all {n ** 3} points "
                    f"({None if count is None else count.tolist()[:3]})")
            c.check(bool(np.array_equal(rel.array("GroupId"), ab.array("GroupId")))
                    and bool(np.array_equal(rel.array("GroupSize"), ab.array("GroupSize"))),
                    f"{tag}: Relative b=1 == Absolute l=1/{n}")
        # Just below: nothing links (the comparison d <= l is exact).
        below = fof(polydata(lattice), LinkingLengthMode="Relative", LinkingLength=1 - 1e-9,
                    Periodic=1, BoxBounds=[0, 1, 0, 1, 0, 1], MinimumGroupSize=1)
        c.check(int(below.array("Count", 1).max()) == 1, f"{n}^3: b = 1 - 1e-9 links nothing")


# A time series served by a ProgrammableSource from an npz file that the test
# may rewrite: the data then change without a new time or MTime.
SERIES_DATA = SERIES_STEP_SCRIPT + """
from vtkmodules.vtkCommonDataModel import vtkPolyData
def piece(sel):
    pd = vtkPolyData()
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(d['pts%d' % s][sel]), deep=1))
    pd.SetPoints(pts)
    for name, a in (('GlobalIds', numpy_to_vtkIdTypeArray(d['ids%d' % s][sel], deep=1)),
                    ('Mass', numpy_to_vtk(d['mass%d' % s][sel], deep=1)),
                    ('Velocity', numpy_to_vtk(np.ascontiguousarray(d['vel%d' % s][sel]), deep=1))):
        a.SetName(name)
        pd.GetPointData().AddArray(a)
    return pd
n = len(d['ids%d' % s])
""" + SERIES_OUTPUT_SCRIPT


def series_arrays(steps, rng, dtype):
    """npz arrays of `steps` clustered snapshots with ids, masses, velocities."""
    arrays = {"times": np.arange(steps, dtype=np.float64) * 0.25 + 1.0}
    for s in range(steps):
        pts = clustered(4000, rng, dtype)
        arrays[f"pts{s}"] = pts
        arrays[f"ids{s}"] = rng.permutation(len(pts)).astype(np.int64) * 5 + 11
        arrays[f"mass{s}"] = 0.5 + rng.random(len(pts))
        arrays[f"vel{s}"] = rng.standard_normal((len(pts), 3)) * 10
    return arrays


def fof_outputs(alg):
    """Deep copies of every point array of both ports (port 0 over its
    blocks, concatenated), the catalogue's points and the JZDevice."""
    res = {}
    for port in (0, 1):
        out = alg.GetOutputDataObject(port)
        for leaf in data_leaves(out):
            pd = leaf.GetPointData()
            for i in range(pd.GetNumberOfArrays()):
                key = f"{port}/{pd.GetArrayName(i)}"
                a = np.array(vtk_to_numpy(pd.GetArray(i)), copy=True)
                res[key] = np.concatenate([res[key], a]) if key in res else a
            fd = leaf.GetFieldData().GetAbstractArray("JZDevice")
            res[f"{port}/JZDevice"] = fd.GetValue(0) if fd is not None else None
        if port == 1:
            res["1/points"] = np.array(vtk_to_numpy(out.GetPoints().GetData()), copy=True)
    return res


def identical(a, b):
    return sorted(a) == sorted(b) and bool(np.all([
        a[k] == b[k] if isinstance(a[k], str) or a[k] is None else
        (a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and
         np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8))) for k in a]))


def sec_stepcache(c):
    """The per-time-step result cache: a step shown again reuses its result,
    bit-identical to a fresh computation (catalogue and its additions
    included, composite input too); data that change without a new time are
    recomputed; a property change recomputes; the memory budget evicts the
    least recently used step; a single data set is never cached."""
    tmp = tempfile.mkdtemp(prefix="jz-fof-steps-")
    path = os.path.join(tmp, "series.npz")
    rng = np.random.default_rng(21)
    props = dict(LinkingLength=0.2, MinimumGroupSize=5, MassArray=["POINTS", "Mass"],
                 VelocityArray=["POINTS", "Velocity"], PotentialCentres=1,
                 SphericalOverdensity=1, OverdensityReference="Critical", CriticalDensity=50.0)

    def source(blocks):
        return simple.ProgrammableSource(
            OutputDataSetType="vtkMultiblockDataSet" if blocks else "vtkPolyData",
            Script=SERIES_DATA.format(path=path),
            ScriptRequestInformation=SERIES_INFO_SCRIPT.format(path=path))

    def fresh(src, t):
        """The outputs of a new filter at time t (always computed)."""
        f = FriendsOfFriends(Input=src, **props)
        f.UpdatePipeline(t)
        res = fof_outputs(f.GetClientSideObject())
        simple.Delete(f)
        return res

    try:
        for dtype, blocks in ((np.float64, False), (np.float32, True)):
            tag = f"{np.dtype(dtype).name}{' blocks' if blocks else ''}"
            arrays = series_arrays(3, rng, dtype)
            np.savez(path, **arrays)
            times = [float(t) for t in arrays["times"]]
            src = source(blocks)
            f = FriendsOfFriends(Input=src, **props)
            alg = f.GetClientSideObject()
            n = count_fof_executions(f)
            first = []
            for t in times:
                f.UpdatePipeline(t)
                first.append(fof_outputs(alg))
            c.check(n == {"computing": 3, "reusing": 0}, f"{tag}: one computation per step {n}")
            c.check(bool(np.all([int(o["1/GroupId"].size) > 3 and "1/SOMass" in o and
                                 "1/MostBoundId" in o for o in first])),
                    f"{tag}: groups and the catalogue additions at every step")
            c.check("Cached time steps: 3" in str(alg), f"{tag}: three steps cached")
            for s in (0, 2, 1, 0):
                f.UpdatePipeline(times[s])
                again = fof_outputs(alg)
                want = fresh(src, times[s])
                c.check(n["computing"] == 3 and identical(again, first[s]) and identical(again, want),
                        f"{tag}: step {s} again reuses its result, bit-identical to a fresh "
                        f"computation ({len(want)} arrays) {n}")
            c.check(n["reusing"] == 4, f"{tag}: four reused executions {n}")
            # The points of step 1 move (same time, no MTime): recomputed.
            arrays["pts1"] = (arrays["pts1"] * 0.999).astype(dtype)
            np.savez(path, **arrays)
            f.UpdatePipeline(times[1])
            moved = fof_outputs(alg)
            c.check(n["computing"] == 4 and identical(moved, fresh(src, times[1])) and
                    not identical(moved, first[1]),
                    f"{tag}: moved points at the same time are recomputed {n}")
            # Only the masses of step 2 change: the catalogue's Mass must follow.
            arrays["mass2"] = arrays["mass2"] * 2.0
            np.savez(path, **arrays)
            f.UpdatePipeline(times[2])
            heavier = fof_outputs(alg)
            c.check(n["computing"] == 5 and np.array_equal(heavier["1/Mass"], 2 * first[2]["1/Mass"]),
                    f"{tag}: new masses at the same time are recomputed {n}")
            f.UpdatePipeline(times[0])
            c.check(n["computing"] == 5 and identical(fof_outputs(alg), first[0]),
                    f"{tag}: an unchanged step is still reused {n}")
            # A property change clears the cache.
            f.MinimumGroupSize = 6
            for t in times:
                f.UpdatePipeline(t)
            c.check(n["computing"] == 8, f"{tag}: a new MinimumGroupSize recomputes every step {n}")
            simple.Delete(f)
            simple.Delete(src)

        # The budget: room for two steps of the last series keeps the two most
        # recently used; a budget smaller than one step keeps none.
        np.savez(path, **arrays)
        src = source(False)
        f = FriendsOfFriends(Input=src, **props)
        alg = f.GetClientSideObject()
        n = count_fof_executions(f)
        f.UpdatePipeline(times[0])
        step_bytes = 1024 * (alg.GetOutputDataObject(0).GetPointData().GetArray("GroupId")
                             .GetActualMemorySize() * 2 + alg.GetOutputDataObject(1).GetActualMemorySize())
        os.environ["JZ_FOF_RESULT_CACHE_BYTES"] = str(int(2.5 * step_bytes))
        for t in (times[1], times[2], times[1]):
            f.UpdatePipeline(t)
        c.check(n == {"computing": 3, "reusing": 1}, f"budget of 2.5 steps: step 1 kept {n}")
        f.UpdatePipeline(times[0])
        f.UpdatePipeline(times[2])
        c.check(n == {"computing": 5, "reusing": 1} and "Cached time steps: 2" in str(alg),
                f"budget of 2.5 steps: the least recently used step was evicted {n}")
        os.environ["JZ_FOF_RESULT_CACHE_BYTES"] = "1"
        f.UpdatePipeline(times[1])
        f.UpdatePipeline(times[0])
        c.check(n == {"computing": 7, "reusing": 1} and "Cached time steps: 0" in str(alg) and
                identical(fof_outputs(alg), fresh(src, times[0])),
                f"a budget below one step: the cache empties, results unchanged {n}")
        del os.environ["JZ_FOF_RESULT_CACHE_BYTES"]
        # A time between steps: the step's data and its time, so reused.
        f.UpdatePipeline(times[2])
        f.UpdatePipeline(times[2] + 0.01)
        c.check(n == {"computing": 8, "reusing": 2}, f"a time within step 2 reuses step 2 {n}")
        simple.Delete(f)
        simple.Delete(src)

        # A single data set (no time): computed at each execution, never cached.
        data = polydata(clustered(3000, rng, np.float64))
        prod = producer(data)
        f = FriendsOfFriends(Input=prod, MinimumGroupSize=5)
        alg = f.GetClientSideObject()
        n = count_fof_executions(f)
        f.UpdatePipeline()
        f.LinkingLength = 0.21
        f.UpdatePipeline()
        c.check(n == {"computing": 2, "reusing": 0} and "Cached time steps: 0" in str(alg),
                f"a single data set: computed, nothing cached {n}")
        simple.Delete(f)
        simple.Delete(prod)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


SECTIONS = {
    "uniform": sec_uniform, "clustered": sec_clustered, "chains": sec_chains,
    "lattice": sec_lattice, "duplicates": sec_duplicates, "offset": sec_offset,
    "groupid": sec_groupid, "catalogue": sec_catalogue, "relative": sec_relative,
    "relative_lattice": sec_relative_lattice,
    "errors": sec_errors, "empty": sec_empty, "device": sec_device,
    "gadget": sec_gadget, "hfof": sec_hfof, "progress": sec_progress,
    "pointsets": sec_pointsets, "stepcache": sec_stepcache,
}

if __name__ == "__main__":
    run_section(SECTIONS).finish()
