"""jztree.emst against scipy's minimum spanning tree of the Delaunay edges
(Euclidean) and of the dense mutual-reachability graph; jztree.hdbscan on
separated clusters."""
import numpy as np
import pytest
from conftest import clustered
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial import Delaunay, cKDTree
from scipy.spatial.distance import cdist

import jztree


def delaunay_mst_weight(points):
    tri = Delaunay(points)
    edges = set()
    for s in tri.simplices:
        for i in range(4):
            for j in range(i + 1, 4):
                edges.add((min(s[i], s[j]), max(s[i], s[j])))
    e = np.array(sorted(edges))
    w = np.linalg.norm(points[e[:, 0]] - points[e[:, 1]], axis=1)
    n = len(points)
    return minimum_spanning_tree(coo_matrix((w, (e[:, 0], e[:, 1])), shape=(n, n))).sum()


def test_emst_matches_delaunay_mst(dtype):
    pts = clustered(3000, 1, dtype)
    edges, lengths = jztree.emst(pts)
    assert edges.shape == (2999, 2) and edges.dtype == np.int64
    assert np.all(edges[:, 0] < edges[:, 1])
    assert np.all(np.diff(lengths) >= 0)
    p = pts.astype(np.float64)
    assert np.allclose(lengths, np.linalg.norm(p[edges[:, 0]] - p[edges[:, 1]], axis=1),
                       rtol=1e-15)
    assert np.isclose(lengths.sum(), delaunay_mst_weight(p), rtol=1e-12)
    # A spanning tree: N - 1 edges connecting every point.
    n = len(pts)
    graph = coo_matrix((np.ones(n - 1), (edges[:, 0], edges[:, 1])), shape=(n, n))
    from scipy.sparse.csgraph import connected_components
    assert connected_components(graph, directed=False)[0] == 1


def test_emst_periodic_and_mutual_reachability():
    pts = clustered(600, 2)
    box = 1.0
    d = pts[:, None, :] - pts[None, :, :]
    d -= box * np.round(d / box)
    dist = np.sqrt((d * d).sum(2))
    edges, lengths = jztree.emst(pts, box=box)
    assert np.isclose(lengths.sum(), minimum_spanning_tree(np.triu(dist)).sum(), rtol=1e-12)
    k = 5
    core = np.sort(dist, axis=1)[:, k]  # the k-th nearest other point
    mr = np.maximum(np.maximum(core[:, None], core[None, :]), dist)
    np.fill_diagonal(mr, 0)
    edges, lengths = jztree.emst(pts, min_samples=k, box=box)
    assert np.isclose(lengths.sum(), minimum_spanning_tree(np.triu(mr)).sum(), rtol=1e-12)


def test_emst_small_and_bad_input():
    edges, lengths = jztree.emst(np.zeros((1, 3)))
    assert edges.shape == (0, 2) and lengths.shape == (0,)
    edges, lengths = jztree.emst(np.empty((0, 3), np.float32))
    assert edges.shape == (0, 2)
    pts = clustered(100, 3)
    with pytest.raises(ValueError):
        jztree.emst(pts, min_samples=100)  # not below N
    with pytest.raises(ValueError):
        jztree.emst(pts, min_samples=0)
    with pytest.raises(TypeError):
        jztree.emst(pts, min_samples=2.5)
    bad = pts.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        jztree.emst(bad)


def test_hdbscan_separated_blobs(dtype):
    rng = np.random.default_rng(4)
    centres = np.array([[0.2, 0.2, 0.2], [0.8, 0.2, 0.5], [0.5, 0.8, 0.8]])
    sizes = [300, 200, 100]
    pts = np.concatenate([c + 0.02 * rng.standard_normal((s, 3)) for c, s in zip(centres, sizes)])
    pts = np.concatenate([pts, [[5.0, 5.0, 5.0]]]).astype(dtype)  # one far outlier
    labels, prob, score = jztree.hdbscan(pts, min_cluster_size=20)
    assert labels.dtype == np.int64 and prob.shape == score.shape == (601,)
    truth = np.repeat([0, 1, 2], sizes)  # clusters by descending size
    core = labels[:600] >= 0
    assert core.mean() > 0.9 and np.array_equal(labels[:600][core], truth[core])
    assert labels[600] == -1 and score[600] == score.max()
    assert np.all((prob >= 0) & (prob <= 1))
    labels_leaf, _, _ = jztree.hdbscan(pts, min_cluster_size=20, method="leaf")
    assert labels_leaf.max() >= 2


def test_hdbscan_bad_input():
    pts = clustered(200, 5)
    with pytest.raises(ValueError):
        jztree.hdbscan(pts, min_cluster_size=1)
    with pytest.raises(ValueError):
        jztree.hdbscan(pts, min_samples=-1)
    with pytest.raises(ValueError, match="method"):
        jztree.hdbscan(pts, method="dbscan")
    labels, prob, score = jztree.hdbscan(np.empty((0, 3)))
    assert labels.shape == (0,)
