"""Runs the plugin's filters on the points of an .npz file and saves their
outputs, for test_filters.py to compare with jztree on the same points.

Usage: pvpython filters_reference.py IN.npz OUT.npz
IN holds "points", "masses", "velocities" and "box" (a length, periodic).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Testing", "Python"))
import jztest  # noqa: E402  (loads the plugin)
from jztest import polydata, run_filter  # noqa: E402

import numpy as np  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402


def filter_named(name):
    return jztest.__dict__.get(name) or getattr(jztest.simple, name)


def arrays(data, names, cells=False):
    out = {}
    fields = data.GetCellData() if cells else data.GetPointData()
    for name in names:
        a = fields.GetArray(name)
        if a is not None:
            v = vtk_to_numpy(a).copy()
            out[name] = v.reshape(len(v), -1) if a.GetNumberOfComponents() > 1 else v
    return out


def main():
    data = np.load(sys.argv[1])
    pts, box = data["points"], float(data["box"])
    obj = polydata(pts, {"Mass": data["masses"], "Velocity": data["velocities"]})
    periodic = dict(Periodic=1, BoxFromData=0, BoxBounds=[0, box, 0, box, 0, box])
    res = {}
    mass = dict(MassArray=["POINTS", "Mass"])
    (out,), _ = run_filter(filter_named("KNNDensity"), obj, None, 1, NumberOfNeighbors=12,
                           OutputNeighbors=1, Device="CPU", **mass, **periodic)
    for k, v in arrays(out, ["SmoothingLength", "Density", "NeighborIds",
                             "NeighborDistances"]).items():
        res["knn_" + k] = v
    (particles, catalogue), _ = run_filter(
        filter_named("FriendsOfFriends"), obj, None, 2, LinkingLength=0.2, MinimumGroupSize=8,
        Device="CPU", VelocityArray=["POINTS", "Velocity"], **mass, **periodic)
    for k, v in arrays(particles, ["GroupId", "GroupSize"]).items():
        res["fof_" + k] = v
    for k, v in arrays(catalogue, ["GroupId", "Count", "Mass", "CenterOfMass", "InertiaRadius",
                                   "MeanVelocity", "VelocityDispersion"]).items():
        res["cat_" + k] = v
    for key, extra in (("emst", {}), ("mrst", dict(Metric="Mutual Reachability", MinSamples=5))):
        (_, edges), _ = run_filter(filter_named("EuclideanMST"), obj, None, 2, Device="CPU",
                                   **periodic, **extra)
        for k, v in arrays(edges, ["EndpointIds", "Length"], cells=True).items():
            res[key + "_" + k] = v
    (out,), _ = run_filter(filter_named("HDBSCAN"), obj, None, 1, MinClusterSize=15,
                           Device="CPU", **periodic)
    for k, v in arrays(out, ["ClusterId", "Probability", "OutlierScore"]).items():
        res["hdb_" + k] = v
    (out,), _ = run_filter(filter_named("TreeGravity"), obj, None, 1, OpeningAngle=0.5,
                           Softening=0.01, Device="CPU", **mass)
    for k, v in arrays(out, ["Potential", "Acceleration"]).items():
        res["grav_" + k] = v
    np.savez(sys.argv[2], **res)


if __name__ == "__main__":
    main()
