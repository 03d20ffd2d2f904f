"""EuclideanMST and HDBSCAN against independent references (mst_reference.py):
scipy's Delaunay + csgraph MST, a brute-force Prim on the complete graph
under the tie order (weight, smaller id, larger id), and HDBSCAN* written
from the definitions of Campello et al. 2015; the edges' geometry, the
scripting names, options and bad input.

Usage: pvpython test_emst.py SECTION   (see SECTIONS at the bottom)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
from jztest import Checker, polydata, producer, simple  # noqa: E402

import numpy as np  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

import mst_reference as ref  # noqa: E402

EuclideanMST = jztest.__dict__.get("EuclideanMST") or getattr(simple, "EuclideanMST")
HDBSCAN = jztest.__dict__.get("HDBSCAN") or getattr(simple, "HDBSCAN")


def run(make, data, ports, **props):
    return jztest.run_filter(make, data, None, ports, **props)


def cell_array(data, name):
    arr = data.GetCellData().GetArray(name)
    a = vtk_to_numpy(arr)
    return a.reshape(len(a), -1) if arr.GetNumberOfComponents() > 1 else a


def point_array(data, name):
    arr = data.GetPointData().GetArray(name)
    return None if arr is None else vtk_to_numpy(arr)


def emst(points, **props):
    (particles, edges), errors = run(EuclideanMST, polydata(points), 2, **props)
    return particles, edges, errors


_gpu = []


def gpu_usable():
    """Whether Device CUDA runs the EMST here (probed once with a small set):
    Auto then takes the GPU, so the sections test whichever device ran."""
    if not _gpu:
        pts = np.random.default_rng(11).random((64, 3))
        _gpu.append(not emst(pts, Device="CUDA")[2])
    return _gpu[0]


def edge_tuples(edges):
    ends = cell_array(edges, "EndpointIds")
    length = cell_array(edges, "Length")
    return length, ends


def make_points(kind, n, dtype, seed=3):
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        x = rng.random((n, 3))
    elif kind == "clustered":
        centers = rng.random((8, 3))
        x = centers[rng.integers(0, 8, n)] + 0.02 * rng.standard_normal((n, 3))
        x[::7] = rng.random((len(x[::7]), 3))
    elif kind == "duplicates":
        base = rng.random((n // 10, 3))
        x = base[rng.integers(0, len(base), n)]
    elif kind == "lattice":
        s = int(np.ceil(n ** (1 / 3)))
        g = np.stack(np.meshgrid(*[np.arange(s)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n]
        x = g / s
    return x.astype(dtype)


def check_emst_case(c, kind, n, dtype, periodic=False, mutual=False, min_samples=4):
    x = make_points(kind, n, dtype)
    box = [0, 1, 0, 1, 0, 1]
    props = dict(Periodic=int(periodic), BoxBounds=box)
    if mutual:
        props.update(Metric="Mutual Reachability", MinSamples=min_samples)
    particles, edges, errors = emst(x, **props)
    what = "%s n=%d %s periodic=%s mutual=%s" % (kind, n, np.dtype(dtype).name, periodic, mutual)
    if not c.check(not errors and edges.GetNumberOfCells() == n - 1, what + ": N-1 edges, no error"):
        return
    length, ends = edge_tuples(edges)
    c.check((ends[:, 0] < ends[:, 1]).all(), what + ": EndpointIds smaller first")
    d2 = ref.squared_distances(x, box if periodic else None)
    w2 = d2
    if mutual:
        core2 = ref.core_distances2(d2, min_samples)
        w2 = ref.mutual_reachability2(d2, core2)
        core = point_array(particles, "CoreDistance")
        c.check(core is not None and np.array_equal(core, np.sqrt(core2)), what + ": CoreDistance")
    want = ref.brute_mst(w2)
    got = sorted(zip(length ** 2, ends[:, 0], ends[:, 1]))
    same = [(a[1], a[2]) == (b[1], b[2]) for a, b in zip(got, want)]
    c.check(all(same), what + ": edge set equals Prim's under the tie order (%d differ)"
            % (len(same) - sum(same)))
    total = np.sqrt([e[0] for e in want]).sum()
    c.check(abs(length.sum() - total) <= 1e-12 * total, what + ": total weight")
    # Each line: its own two points, Length = their distance, the first at the point.
    pts = vtk_to_numpy(edges.GetPoints().GetData())
    c.check(pts.dtype == np.dtype(dtype), what + ": edge points in the input's precision (%s)" % pts.dtype)
    pts = pts.astype(np.float64)
    a, b = pts[0::2], pts[1::2]
    # (float32 periodic: the kernel wraps in float, the lines start at the input point)
    tol = 1e-6 if (periodic and dtype == np.float32) else 1e-12
    line = np.sqrt(((a - b) ** 2).sum(1))
    if mutual:
        ok = (line <= length * (1 + 1e-12) + tol).all()
    else:
        ok = np.allclose(line, length, rtol=1e-9, atol=tol)
    c.check(ok, what + ": line length %s Length (second endpoint at the nearest image)"
            % ("<=" if mutual else "="))
    c.check(np.allclose(a, x[ends[:, 0]].astype(np.float64)), what + ": first point is the smaller id")


def section_euclidean(c):
    for dtype in (np.float64, np.float32):
        for kind in ("uniform", "clustered", "duplicates", "lattice"):
            check_emst_case(c, kind, 700, dtype)


def section_scipy(c):
    # Delaunay + csgraph MST: the classic reference (no ties in these sets).
    for dtype in (np.float64, np.float32):
        for kind in ("uniform", "clustered"):
            x = make_points(kind, 5000, dtype, seed=11)
            _, edges, errors = emst(x)
            length, ends = edge_tuples(edges)
            total, pairs = ref.scipy_emst(x)
            what = "%s %s 5000 vs scipy Delaunay+MST" % (kind, np.dtype(dtype).name)
            c.check(not errors and abs(length.sum() - total) <= 1e-9 * total, what + ": weight")
            c.check({(int(a), int(b)) for a, b in ends} == pairs, what + ": edge set")


def section_periodic(c):
    for dtype in (np.float64, np.float32):
        for kind in ("uniform", "clustered", "lattice"):
            check_emst_case(c, kind, 600, dtype, periodic=True)


def section_mutual(c):
    for dtype in (np.float64, np.float32):
        for kind in ("uniform", "clustered", "duplicates"):
            check_emst_case(c, kind, 600, dtype, mutual=True)
    check_emst_case(c, "clustered", 500, np.float64, periodic=True, mutual=True, min_samples=7)


def section_names(c):
    c.check(hasattr(simple, "EuclideanMST") and hasattr(simple, "EuclideanMinimumSpanningTree"),
            "EuclideanMST and EuclideanMinimumSpanningTree in paraview.simple")
    c.check(hasattr(simple, "HDBSCAN") and hasattr(simple, "HDBSCANClusters"),
            "HDBSCAN and HDBSCANClusters in paraview.simple")
    x = make_points("uniform", 50, np.float64)
    (p, e), errors = run(simple.EuclideanMinimumSpanningTree, polydata(x), 2)
    c.check(not errors and e.GetNumberOfCells() == 49, "the label-named proxy runs")
    dev = e.GetFieldData().GetAbstractArray("JZDevice")
    want = "CUDA" if gpu_usable() else "CPU"
    c.check(dev is not None and dev.GetValue(0) == want, "JZDevice %s on the edges (Device Auto)" % want)


def section_errors(c):
    x = make_points("uniform", 100, np.float64)
    bad = x.copy()
    bad[17, 1] = np.nan
    _, edges, errors = emst(bad)
    c.check(errors and "non-finite" in errors[0] and edges.GetNumberOfCells() == 0,
            "NaN coordinate: error, no edges (%s)" % errors[:1])
    _, edges, errors = emst(x, Metric="Mutual Reachability", MinSamples=100)
    c.check(errors and "MinSamples" in errors[0] and edges.GetNumberOfCells() == 0,
            "MinSamples >= N: error (%s)" % errors[:1])
    _, edges, errors = emst(x, Periodic=1, BoxBounds=[0, 1, 0, 0, 0, 1])
    c.check(errors and edges.GetNumberOfCells() == 0, "bad periodic box: error (%s)" % errors[:1])
    _, edges, errors = emst(np.zeros((0, 3)))
    c.check(not errors and edges.GetNumberOfCells() == 0, "empty input: empty output")
    (out,), errors = run(HDBSCAN, polydata(bad), 1)
    c.check(errors and point_array(out, "ClusterId") is None, "HDBSCAN NaN: error, no output")
    _, edges, errors = emst(x, Device="CUDA")
    if gpu_usable():
        c.check(not errors and edges.GetNumberOfCells() == 99, "Device CUDA: the GPU's tree")
    else:
        c.check(errors and edges.GetNumberOfCells() == 0, "Device CUDA without a GPU: error, no edges")
    (out,), errors = run(HDBSCAN, polydata(x), 1, Device="CUDA")
    if not gpu_usable():
        c.check(errors and point_array(out, "ClusterId") is None,
                "HDBSCAN Device CUDA without a GPU: error, no output")


def hdbscan(points, **props):
    (out,), errors = run(HDBSCAN, polydata(points), 1, **props)
    return out, errors


def section_hdbscan(c):
    rng = np.random.default_rng(5)
    centers = np.array([[0.2, 0.2, 0.2], [0.7, 0.3, 0.5], [0.4, 0.8, 0.7], [0.75, 0.75, 0.2]])
    sizes = [120, 80, 60, 40]
    x = np.concatenate([c0 + s * rng.standard_normal((m, 3))
                        for c0, m, s in zip(centers, sizes, [0.03, 0.05, 0.02, 0.04])]
                       + [rng.random((60, 3))])
    for mcs, ms, method in ((15, 0, "eom"), (10, 5, "eom"), (8, 3, "leaf"), (25, 10, "leaf")):
        props = dict(MinClusterSize=mcs, MinSamples=ms,
                     ClusterSelectionMethod="Excess of Mass" if method == "eom" else "Leaf")
        out, errors = hdbscan(x, **props)
        what = "HDBSCAN mcs=%d ms=%d %s" % (mcs, ms, method)
        if not c.check(not errors, what + ": runs"):
            continue
        label = point_array(out, "ClusterId")
        prob = point_array(out, "Probability")
        glosh = point_array(out, "OutlierScore")
        want_label, clusters, want_prob, want_glosh, leaf = ref.hdbscan_star(x, mcs, ms or mcs, method)
        got = {frozenset(np.where(label == k)[0]) for k in range(label.max() + 1)}
        c.check(got == clusters, what + ": clusters (%d vs %d)" % (len(got), len(clusters)))
        sizes_ = [np.sum(label == k) for k in range(label.max() + 1)]
        c.check(sizes_ == sorted(sizes_, reverse=True), what + ": ClusterIds by descending size")
        c.check(np.allclose(prob, want_prob, rtol=1e-12, atol=0), what + ": Probability")
        c.check(np.allclose(glosh[leaf], want_glosh[leaf], rtol=1e-12, atol=1e-15)
                and (glosh >= 0).all() and (glosh <= 1).all(),
                what + ": GLOSH (points of leaf clusters; all in [0, 1])")
        core = point_array(out, "CoreDistance")
        d2 = ref.squared_distances(x)
        c.check(np.array_equal(core, np.sqrt(ref.core_distances2(d2, ms or mcs))),
                what + ": CoreDistance = MinSamples-th other point")


def section_hdbscan_duplicates(c):
    # Blobs of identical points die at lambda = inf: the points that leave a
    # cluster above them at a finite lambda score 1 (the library's inf / inf is NaN).
    rng = np.random.default_rng(1)
    x = np.concatenate([np.repeat([[0.2, 0.2, 0.2]], 50, 0), np.repeat([[0.8, 0.8, 0.8]], 40, 0),
                        0.5 + 0.01 * rng.standard_normal((30, 3)), rng.random((20, 3))])
    out, errors = hdbscan(x, MinClusterSize=10)
    if not c.check(not errors, "HDBSCAN on blobs of identical points: runs"):
        return
    glosh = point_array(out, "OutlierScore")
    label = point_array(out, "ClusterId")
    c.check(np.isfinite(glosh).all() and (glosh >= 0).all() and (glosh <= 1).all(),
            "HDBSCAN duplicates: OutlierScore finite, in [0, 1] (%d NaN)" % np.isnan(glosh).sum())
    c.check((glosh[:90] == 0).all() and (label[:50] == label[0]).all() and (label[50:90] == label[50]).all()
            and label[0] >= 0 and label[50] >= 0 and label[0] != label[50],
            "HDBSCAN duplicates: each blob one cluster, its points score 0")
    want_label, _, _, want_glosh, _ = ref.hdbscan_star(x, 10, 10, "eom")
    undefined = np.isnan(want_glosh)  # the formula's inf / inf
    c.check(undefined.any() and (glosh[undefined] == 1).all(),
            "HDBSCAN duplicates: points under an infinite death score 1 (%d)" % undefined.sum())
    c.check(np.allclose(glosh[~undefined], want_glosh[~undefined], rtol=1e-12, atol=1e-15),
            "HDBSCAN duplicates: the other scores as the reference's")


def fof_outputs(proxy):
    alg, errors = jztest.update_collecting_errors(proxy)
    p, cat = alg.GetOutputDataObject(0), alg.GetOutputDataObject(1)
    arrays = {n: point_array(p, n).copy() for n in ("GroupId", "GroupSize")}
    for n in ("GroupId", "Count", "Mass", "CenterOfMass", "InertiaRadius"):
        arrays["cat." + n] = point_array(cat, n).copy()
    return arrays, errors


def section_fofcut(c):
    """One FriendsOfFriends proxy whose LinkingLength and MinimumGroupSize
    change (the cached tree is cut) against a fresh proxy for every setting
    (a walk): identical GroupId, GroupSize and catalogue, for many l, also
    exactly at the tree's edge lengths and beyond the cached edges."""
    FriendsOfFriends = jztest.__dict__.get("FriendsOfFriends") or getattr(simple, "FriendsOfFriends")
    for dtype, periodic in ((np.float64, False), (np.float32, False), (np.float64, True)):
        x = make_points("clustered", 6000, dtype, seed=4)
        data = polydata(x)
        _, edges, _ = emst(x, Periodic=int(periodic))
        lengths = np.sort(cell_array(edges, "Length"))
        ls = [lengths[int(q * (len(lengths) - 1))] for q in (0.2, 0.5, 0.8, 0.9, 0.97)]
        ls += [0.5 * lengths[len(lengths) // 2], 1.7 * lengths[-1] / 10]
        # Beyond the cached edges (built up to 5x the longest length so far):
        # a rebuild, then a cut of the rebuilt edges.
        ls += [1.01 * lengths[-1], ls[1]]
        src = producer(data)
        cached = FriendsOfFriends(Input=src, LinkingLengthMode="Absolute", Periodic=int(periodic))
        # First MinimumGroupSize alone (the walk's groups numbered again), then
        # both.
        settings = [(ls[1], 20), (ls[1], 5), (ls[1], 1), (ls[1], 20)]
        settings += [(l, 20 if i % 2 == 0 else 5) for i, l in enumerate(ls)]
        bad = []
        for l, mgs in settings:
            cached.LinkingLength = float(l)
            cached.MinimumGroupSize = mgs
            got, errors = fof_outputs(cached)
            fresh = FriendsOfFriends(Input=src, LinkingLengthMode="Absolute", LinkingLength=float(l),
                                     MinimumGroupSize=mgs, Periodic=int(periodic))
            want, _ = fof_outputs(fresh)
            simple.Delete(fresh)
            same = not errors and all(np.array_equal(got[k], want[k]) for k in want)
            if not same:
                bad.append(l)
        simple.Delete(cached)
        simple.Delete(src)
        c.check(not bad, "%s periodic=%s: %d settings, cut == walk (bad: %s)"
                % (np.dtype(dtype).name, periodic, len(settings), bad))


SECTIONS = {
    "euclidean": section_euclidean,
    "scipy": section_scipy,
    "periodic": section_periodic,
    "mutual": section_mutual,
    "names": section_names,
    "errors": section_errors,
    "hdbscan": section_hdbscan,
    "hdbscan_duplicates": section_hdbscan_duplicates,
    "fofcut": section_fofcut,
}

if __name__ == "__main__":
    c = Checker()
    SECTIONS[sys.argv[1]](c)
    sys.exit(1 if c.failures else 0)
