"""Checks a Catalyst run of jz_catalyst_particles + Catalyst/jztree_pipeline.py
against an offline pvpython run on the same particles: the particles the
pipeline saved for the last step go through FriendsOfFriends again here, and
the catalogue must match halos_NNNN.csv (same groups, counts and masses;
centres, radii and velocities to 1e-5 relative). Also checks that a catalogue
exists for every step and that an image was written.

Usage: pvpython check_catalyst.py OUT_DIR STEPS
"""
import glob
import os
import sys

import numpy as np

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager
from vtkmodules.util.numpy_support import vtk_to_numpy

out, steps = sys.argv[1], int(sys.argv[2])
failures = []


def check(ok, what):
    print("  ok  " if ok else "  FAIL", what)
    if not ok:
        failures.append(what)


for s in range(steps):
    check(os.path.exists(os.path.join(out, "halos_%04d.csv" % s)), f"catalogue of step {s}")
check(len(glob.glob(os.path.join(out, "image_*.png"))) >= 1, "images written")
last = steps - 1
vtp = os.path.join(out, "particles_%04d.vtp" % last)
check(os.path.exists(vtp), "particles of the last step saved")
if failures:
    sys.exit(1)

insitu = np.genfromtxt(os.path.join(out, "halos_%04d.csv" % last), delimiter=",", names=True)
insitu = np.atleast_1d(insitu)

reader = XMLPolyDataReader(FileName=[vtp])
fof = FriendsOfFriends(Input=reader, LinkingLengthMode="Relative", LinkingLength=0.2,
                       MinimumGroupSize=20, Periodic=1, BoxBounds=[0, 1, 0, 1, 0, 1],
                       MassArray=["POINTS", "Mass"], VelocityArray=["POINTS", "Velocity"],
                       Device="CPU")
cat = servermanager.Fetch(fof, idx=1)
pd = cat.GetPointData()
n = cat.GetNumberOfPoints()
print(f"offline: {n} groups; in situ: {len(insitu)} groups")
check(n == len(insitu) and n > 0, "same number of groups")
if n == len(insitu) and n > 0:
    gid = vtk_to_numpy(pd.GetArray("GroupId"))
    order = np.argsort(gid)
    get = lambda name: vtk_to_numpy(pd.GetArray(name)).reshape(n, -1)[order]
    check(np.array_equal(gid[order], insitu["GroupId"].astype(np.int64)), "GroupIds")
    check(np.array_equal(get("Count")[:, 0], insitu["Count"].astype(np.int64)), "Counts")
    for name, cols in (("Mass", ["Mass"]), ("CenterOfMass", ["x", "y", "z"]),
                       ("InertiaRadius", ["InertiaRadius"]), ("MeanVelocity", ["vx", "vy", "vz"]),
                       ("VelocityDispersion", ["VelocityDispersion"])):
        ref = get(name)
        got = np.stack([insitu[c] for c in cols], axis=1)
        scale = max(np.abs(ref).max(), 1e-12)
        err = np.abs(ref - got).max() / scale
        check(err < 1e-5, f"{name} agrees (max relative error {err:.2e})")
sys.exit(1 if failures else 0)
