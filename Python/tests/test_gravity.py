"""jztree.gravity against direct summation in numpy."""
import numpy as np
import pytest
from conftest import clustered

import jztree


def direct(points, masses, queries=None, eps=0.0, G=1.0):
    p = points.astype(np.float64)
    q = p if queries is None else queries.astype(np.float64)
    d = q[:, None, :] - p[None, :, :]
    r2 = (d * d).sum(2) + eps**2
    with np.errstate(divide="ignore"):
        inv = np.where(r2 > 0, 1 / np.sqrt(r2), 0.0)
    if queries is None:
        np.fill_diagonal(inv, 0.0)
    phi = -G * (masses[None, :] * inv).sum(1)
    acc = -G * (masses[None, :, None] * d * inv[:, :, None] ** 3).sum(1)
    return phi, acc


def test_gravity_direct_summation(dtype):
    pts = clustered(1500, 1, dtype)
    m = np.random.default_rng(2).random(1500) + 0.1
    phi, acc = jztree.gravity(pts, masses=m, theta=0.0, softening=0.01, G=2.0)
    ref_phi, ref_acc = direct(pts, m, eps=0.01, G=2.0)
    assert phi.dtype == np.float64 and acc.shape == (1500, 3)
    assert np.allclose(phi, ref_phi, rtol=1e-10)
    assert np.allclose(acc, ref_acc, rtol=1e-9, atol=1e-9 * np.abs(ref_acc).max())


def test_gravity_tree_accuracy_and_queries():
    pts = clustered(4000, 3)
    phi, acc = jztree.gravity(pts, softening=0.005)
    ref_phi, ref_acc = direct(pts, np.ones(4000), eps=0.005)
    assert np.percentile(np.abs(phi / ref_phi - 1), 99) < 1e-3
    err = np.linalg.norm(acc - ref_acc, axis=1) / np.linalg.norm(ref_acc, axis=1)
    assert np.percentile(err, 99) < 1e-2
    queries = np.random.default_rng(5).random((200, 3)) * 2 - 0.5
    phi, acc = jztree.gravity(pts, queries=queries, theta=0.0)
    ref_phi, ref_acc = direct(pts, np.ones(4000), queries)
    assert np.allclose(phi, ref_phi, rtol=1e-10) and np.allclose(acc, ref_acc, rtol=1e-9)


def test_gravity_bad_input():
    pts = clustered(200, 4)
    with pytest.raises(ValueError, match="masses"):
        jztree.gravity(pts, masses=-np.ones(200))
    with pytest.raises(ValueError, match="tuples"):
        jztree.gravity(pts, masses=np.ones(10))
    with pytest.raises(ValueError, match="theta"):
        jztree.gravity(pts, theta=-1)
    with pytest.raises(ValueError, match="softening"):
        jztree.gravity(pts, softening=-1)
    with pytest.raises(TypeError):
        jztree.gravity(pts, box=1.0)  # isolated only
    phi, acc = jztree.gravity(np.empty((0, 3)))
    assert phi.shape == (0,) and acc.shape == (0, 3)
