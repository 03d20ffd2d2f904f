"""jztree.fof against scipy: cKDTree.query_pairs(l) and csgraph's connected
components (the pair-set FoF), and the catalogue against numpy."""
import numpy as np
import pytest
from conftest import clustered
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

import jztree


def reference_groups(points, l, min_size, box=None):
    """(group_id, group_size) with the documented numbering: kept groups by
    descending size, equal sizes by the smaller smallest member index."""
    p = points.astype(np.float64)
    tree = cKDTree(p if box is None else np.mod(p, box), boxsize=box)
    pairs = tree.query_pairs(l, output_type="ndarray")
    n = len(p)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    sizes = np.bincount(comp)
    first = np.full(len(sizes), n)
    np.minimum.at(first, comp, np.arange(n))
    kept = [c for c in np.lexsort((first, -sizes)) if sizes[c] >= min_size]
    number = np.full(len(sizes), -1)
    number[kept] = np.arange(len(kept))
    return number[comp], sizes[comp]


@pytest.mark.parametrize("box", [None, 1.0])
def test_fof_matches_pair_set(dtype, box):
    pts = clustered(6000, 1, dtype)
    l = 0.004
    gid, gsize, cat = jztree.fof(pts, l, min_size=5, relative=False, box=box)
    ref_id, ref_size = reference_groups(pts, l, 5, box)
    assert gid.dtype == np.int64 and np.array_equal(gid, ref_id)
    assert np.array_equal(gsize, ref_size)
    assert len(cat["Count"]) == gid.max() + 1 > 10
    assert np.array_equal(cat["GroupId"], np.arange(len(cat["Count"])))
    assert np.array_equal(cat["Count"], np.bincount(gid[gid >= 0]))


def test_fof_relative_is_mean_spacing():
    pts = clustered(5000, 2)
    b = 0.2
    box_volume = 2.0 * 1.0 * 1.0
    gid, _, _ = jztree.fof(pts * [2, 1, 1], b, min_size=3, box=(2.0, 1.0, 1.0))
    ref, _ = reference_groups(pts * [2, 1, 1], b * (box_volume / 5000) ** (1 / 3), 3,
                              np.array([2.0, 1.0, 1.0]))
    assert np.array_equal(gid, ref)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    l = b * (np.prod(hi - lo) / 5000) ** (1 / 3)  # open: the bounding box
    gid, _, _ = jztree.fof(pts, b, min_size=3)
    assert np.array_equal(gid, reference_groups(pts, l, 3)[0])
    with pytest.raises(ValueError, match="volume"):
        jztree.fof(np.c_[pts[:, :2], np.zeros(5000)], 0.2)  # flat: no volume


def test_fof_catalogue_columns():
    rng = np.random.default_rng(3)
    pts = clustered(4000, 3)
    masses = rng.random(4000) + 0.5
    vel = rng.standard_normal((4000, 3))
    gid, gsize, cat = jztree.fof(pts, 0.005, min_size=8, relative=False, masses=masses,
                                 velocities=vel)
    assert sorted(cat) == sorted(["GroupId", "Count", "Mass", "CenterOfMass", "InertiaRadius",
                                  "MeanVelocity", "VelocityDispersion"])
    for g in range(len(cat["Count"])):
        m, x, v = masses[gid == g], pts[gid == g], vel[gid == g]
        com = (m[:, None] * x).sum(0) / m.sum()
        mv = (m[:, None] * v).sum(0) / m.sum()
        assert cat["Count"][g] == len(m)
        assert np.isclose(cat["Mass"][g], m.sum(), rtol=1e-12)
        assert np.allclose(cat["CenterOfMass"][g], com, rtol=1e-12)
        r2 = ((x - com) ** 2).sum(1)
        assert np.isclose(cat["InertiaRadius"][g], np.sqrt((m * r2).sum() / m.sum()), rtol=1e-9)
        assert np.allclose(cat["MeanVelocity"][g], mv, rtol=1e-9, atol=1e-12)
        disp = np.sqrt((m * ((v - mv) ** 2).sum(1)).sum() / (3 * m.sum()))
        assert np.isclose(cat["VelocityDispersion"][g], disp, rtol=1e-9)
    _, _, plain = jztree.fof(pts, 0.005, min_size=8, relative=False)
    assert "MeanVelocity" not in plain and np.array_equal(plain["Mass"], plain["Count"])


def test_fof_periodic_centre_wraps():
    # One group straddling the box corner: its centre of mass lies in the box.
    rng = np.random.default_rng(4)
    pts = np.mod(0.002 * rng.standard_normal((200, 3)), 1.0)
    _, _, cat = jztree.fof(pts, 0.01, min_size=10, relative=False, box=1.0)
    assert len(cat["Count"]) == 1 and cat["Count"][0] == 200
    c = cat["CenterOfMass"][0]
    assert np.all((c >= 0) & (c < 1))
    assert np.all(np.minimum(c, 1 - c) < 1e-3)


def test_fof_empty_one_point_and_bad_input():
    gid, gsize, cat = jztree.fof(np.empty((0, 3)), 0.2)
    assert gid.shape == (0,) and len(cat["Count"]) == 0
    gid, gsize, cat = jztree.fof(np.zeros((1, 3), np.float32), 0.1, min_size=1, relative=False)
    assert gid.tolist() == [0] and gsize.tolist() == [1] and cat["Count"].tolist() == [1]
    pts = clustered(500, 5)
    for l in (-1.0, 0.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="linking_length"):
            jztree.fof(pts, l)
    with pytest.raises(ValueError, match="min_size"):
        jztree.fof(pts, 0.2, min_size=0)
    with pytest.raises(ValueError, match="tuples"):
        jztree.fof(pts, 0.2, masses=np.ones(499))
    with pytest.raises(ValueError, match="shape"):
        jztree.fof(pts, 0.2, velocities=np.ones(500))
    bad = np.ones(500)
    bad[9] = np.inf
    with pytest.raises(ValueError, match="masses"):
        jztree.fof(pts, 0.2, masses=bad)
    bad = pts.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        jztree.fof(bad, 0.2)
    with pytest.raises(TypeError):
        jztree.fof(pts.astype(np.int32), 0.2)
