"""Shared point sets and references of the jztree tests (scipy and numpy
share no code with the jz-tree kernels)."""
import numpy as np
import pytest


def clustered(n, seed=0, dtype=np.float64, box=1.0):
    """Gaussian clumps plus a uniform background, wrapped into [0, box)."""
    rng = np.random.default_rng(seed)
    centres = rng.random((max(n // 200, 2), 3)) * box
    pts = centres[rng.integers(0, len(centres), n - n // 4)]
    pts = pts + 0.01 * box * rng.standard_normal(pts.shape)
    pts = np.concatenate([pts, rng.random((n // 4, 3)) * box])
    return np.mod(pts, box).astype(dtype)


def brute_knn(points, queries, k, box=None):
    """Exact neighbours in double from the given coordinates: distance ties
    broken by the smaller index."""
    p = points.astype(np.float64)
    q = queries.astype(np.float64)
    d = q[:, None, :] - p[None, :, :]
    if box is not None:
        d -= box * np.round(d / box)
    d2 = (d * d).sum(axis=2)
    order = np.lexsort((np.broadcast_to(np.arange(len(p)), d2.shape), d2), axis=1)[:, :k]
    return order, np.sqrt(np.take_along_axis(d2, order, axis=1))


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return request.param
