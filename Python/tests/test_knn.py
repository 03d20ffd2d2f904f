"""jztree.knn and jztree.density against scipy's cKDTree and brute force."""
import numpy as np
import pytest
from conftest import brute_knn, clustered
from scipy.spatial import cKDTree

import jztree


@pytest.mark.parametrize("box", [None, 1.0, (1.0, 2.0, 0.5)])
def test_knn_matches_brute_force(dtype, box):
    lengths = np.ones(3) if box is None else np.broadcast_to(np.asarray(box, float), 3)
    pts = (clustered(1500, 1) * lengths).astype(dtype)
    ids, dist = jztree.knn(pts, 10, box=box)
    assert ids.shape == (1500, 10) and ids.dtype == np.int64 and dist.dtype == dtype
    ref_ids, ref_d = brute_knn(pts, pts, 10, None if box is None else lengths)
    assert np.array_equal(ids, ref_ids)
    assert np.allclose(dist, ref_d, rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_knn_matches_ckdtree_with_queries(dtype):
    pts = clustered(20000, 2, dtype)
    queries = np.random.default_rng(3).random((3000, 3)).astype(dtype)
    ids, dist = jztree.knn(pts, 16, queries=queries)
    ref_d, ref_i = cKDTree(pts.astype(np.float64)).query(queries.astype(np.float64), 16)
    assert np.allclose(dist, ref_d, rtol=1e-6 if dtype == np.float32 else 1e-14)
    assert (ids == ref_i).mean() > 0.999  # equal up to the order of exact ties


def test_knn_duplicates_ties_by_index():
    base = np.random.default_rng(4).random((50, 3))
    pts = np.repeat(base, 6, axis=0)  # every point six times
    ids, dist = jztree.knn(pts, 8)
    ref_ids, _ = brute_knn(pts, pts, 8)
    assert np.array_equal(ids, ref_ids)
    assert np.all(dist[:, :6] == 0)


def test_knn_layouts_same_result_and_conversions():
    pts = clustered(3000, 5)
    ids, dist = jztree.knn(pts, 6)
    before = jztree._jztree._conversions()
    jztree.knn(pts, 6)  # C-contiguous float64: used in place
    jztree.knn(pts.astype(np.float32), 6)
    assert jztree._jztree._conversions() == before
    for layout in (np.asfortranarray(pts), np.hstack([pts, pts])[:, ::2][:, :3], pts.tolist()):
        count = jztree._jztree._conversions()
        lids, ldist = jztree.knn(layout, 6)
        assert jztree._jztree._conversions() == count + 1  # converted exactly once
    unaligned = np.frombuffer(b"x" + pts.tobytes(), np.float64, offset=1).reshape(3000, 3)
    for other in (pts.astype(">f8"), pts.astype(np.longdouble), unaligned):
        count = jztree._jztree._conversions()
        lids, ldist = jztree.knn(other, 6)
        assert jztree._jztree._conversions() == count + 1
        assert np.array_equal(lids, ids) and np.array_equal(ldist, dist)
    strided = np.empty((3000, 6))
    strided[:, ::2] = pts
    lids, ldist = jztree.knn(strided[:, ::2], 6)
    assert np.array_equal(lids, ids) and np.array_equal(ldist, dist)
    lids, ldist = jztree.knn(np.asfortranarray(pts), 6)
    assert np.array_equal(lids, ids) and np.array_equal(ldist, dist)


def test_knn_empty_and_one_point(dtype):
    ids, dist = jztree.knn(np.empty((0, 3), dtype), 3)
    assert ids.shape == (0, 3) and dist.shape == (0, 3)
    ids, dist = jztree.knn(np.zeros((1, 3), dtype), 1)
    assert ids.tolist() == [[0]] and dist.tolist() == [[0.0]]
    h, rho = jztree.density(np.zeros((1, 3), dtype), k=1)
    assert h.shape == (1,) and rho.shape == (1,)


def test_knn_bad_input():
    pts = clustered(100, 6)
    with pytest.raises(ValueError, match="k"):
        jztree.knn(pts, 101)  # K larger than N
    with pytest.raises(ValueError):
        jztree.knn(pts, 0)
    bad = pts.copy()
    bad[7, 2] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        jztree.knn(bad, 4)
    with pytest.raises(ValueError, match="non-finite"):
        jztree.knn(pts, 4, queries=np.array([[0.0, np.inf, 0.0]]))
    # Neighbour lists larger than any machine's memory (terabytes) are refused
    # before they are allocated.
    many = np.random.default_rng(3).random((400000, 3))
    with pytest.raises(ValueError, match="GiB"):
        jztree.knn(many, 400000)
    with pytest.raises(ValueError, match="shape"):
        jztree.knn(pts[:, :2], 4)
    with pytest.raises(ValueError, match="shape"):
        jztree.knn(pts.ravel(), 4)
    with pytest.raises(TypeError, match="dtype"):
        jztree.knn(pts.astype(np.int64), 4)
    with pytest.raises(TypeError, match="dtype"):
        jztree.knn(pts.astype(np.complex128), 4)
    with pytest.raises(ValueError, match="box"):
        jztree.knn(pts, 4, box=-1.0)
    with pytest.raises(ValueError, match="box"):
        jztree.knn(pts, 4, box=(1.0, 2.0))
    with pytest.raises(ValueError, match="device"):
        jztree.knn(pts, 4, device="tpu")


def sph_w(r, h):
    q = r / h
    w = np.where(q <= 0.5, 1 - 6 * q**2 + 6 * q**3, np.where(q <= 1, 2 * (1 - q) ** 3, 0.0))
    return 8 / (np.pi * h**3) * w


@pytest.mark.parametrize("box", [None, 1.0])
def test_density_brute_force(dtype, box):
    pts = clustered(1200, 7, dtype)
    masses = np.random.default_rng(8).random(1200) + 0.5
    h, rho = jztree.density(pts, 24, masses=masses, box=box)
    ids, dist = brute_knn(pts, pts, 24, box)
    ref_h = dist[:, -1]
    ref_rho = (masses[ids] * sph_w(dist, ref_h[:, None])).sum(axis=1)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert h.dtype == dtype and np.allclose(h, ref_h, rtol=tol)
    assert np.allclose(rho, ref_rho, rtol=tol * 10)
    h, rho = jztree.density(pts, 24, masses=masses, estimator="tophat", box=box)
    ref_top = masses[ids].sum(axis=1) / (4 / 3 * np.pi * ref_h**3)
    assert np.allclose(rho, ref_top, rtol=tol * 10)


def test_density_queries_and_errors():
    pts = clustered(2000, 9)
    queries = np.random.default_rng(10).random((100, 3))
    h, rho = jztree.density(pts, 32, queries=queries)
    ref_d, _ = cKDTree(pts).query(queries, 32)
    assert np.allclose(h, ref_d[:, -1], rtol=1e-14)
    with pytest.raises(ValueError, match="tuples"):
        jztree.density(pts, masses=np.ones(1999))
    with pytest.raises(ValueError, match="estimator"):
        jztree.density(pts, estimator="gauss")
    bad = np.ones(2000)
    bad[3] = np.nan
    with pytest.raises(ValueError, match="masses"):
        jztree.density(pts, masses=bad)
    with pytest.raises(TypeError):
        jztree.density(pts, masses=np.ones(2000, complex))
