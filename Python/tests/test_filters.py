"""jztree equals the plugin's filters on the same points (run under pvpython
with the plugin; skipped without them)."""
import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import clustered

import jztree

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def filters(tmp_path_factory):
    pvpython = os.environ.get("JZ_PVPYTHON") or shutil.which("pvpython")
    plugin_path = os.environ.get("PV_PLUGIN_PATH", "")
    if not pvpython or not any(os.path.exists(os.path.join(d, "JZTree.so"))
                               for d in plugin_path.split(os.pathsep) if d):
        pytest.skip("no pvpython or no JZTree plugin (PV_PLUGIN_PATH)")
    folder = tmp_path_factory.mktemp("filters")
    rng = np.random.default_rng(7)
    data = dict(points=clustered(3000, 7), masses=rng.random(3000) + 0.5,
                velocities=rng.standard_normal((3000, 3)), box=np.array(1.0))
    np.savez(folder / "in.npz", **data)
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    subprocess.run([pvpython, "--force-offscreen-rendering",
                    os.path.join(HERE, "filters_reference.py"), str(folder / "in.npz"),
                    str(folder / "out.npz")], check=True, timeout=300, env=env)
    return data, dict(np.load(folder / "out.npz"))


def test_knn_density_equal_filter(filters):
    data, out = filters
    ids, dist = jztree.knn(data["points"], 12, box=1.0)
    assert np.array_equal(ids, out["knn_NeighborIds"])
    assert np.array_equal(dist, out["knn_NeighborDistances"])
    h, rho = jztree.density(data["points"], 12, masses=data["masses"], box=1.0)
    assert np.array_equal(h, out["knn_SmoothingLength"])
    assert np.allclose(rho, out["knn_Density"], rtol=1e-13)


def test_fof_equals_filter(filters):
    data, out = filters
    gid, gsize, cat = jztree.fof(data["points"], 0.2, min_size=8, masses=data["masses"],
                                 velocities=data["velocities"], box=1.0)
    assert np.array_equal(gid, out["fof_GroupId"]) and np.array_equal(gsize, out["fof_GroupSize"])
    for name, values in cat.items():
        ref = out["cat_" + name]
        assert np.allclose(values, ref.reshape(values.shape), rtol=1e-12, atol=1e-14), name


def test_trees_equal_filters(filters):
    data, out = filters
    for key, min_samples in (("emst", None), ("mrst", 5)):
        edges, lengths = jztree.emst(data["points"], min_samples=min_samples, box=1.0)
        ref = out[key + "_EndpointIds"]
        mine = {tuple(e): w for e, w in zip(edges.tolist(), lengths)}
        theirs = {tuple(e): w for e, w in zip(ref.tolist(), out[key + "_Length"])}
        assert mine.keys() == theirs.keys()
        assert np.allclose([mine[e] for e in mine], [theirs[e] for e in mine], rtol=1e-15)
    labels, prob, score = jztree.hdbscan(data["points"], min_cluster_size=15, box=1.0)
    assert np.array_equal(labels, out["hdb_ClusterId"])
    assert np.allclose(prob, out["hdb_Probability"]) and np.allclose(score, out["hdb_OutlierScore"])


def test_gravity_equals_filter(filters):
    data, out = filters
    phi, acc = jztree.gravity(data["points"], masses=data["masses"], softening=0.01)
    assert np.allclose(phi, out["grav_Potential"], rtol=1e-12)
    assert np.allclose(acc, out["grav_Acceleration"], rtol=1e-12, atol=1e-12)
