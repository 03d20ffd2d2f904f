"""SubhaloFinder on a real snapshot as a user sees it (not a test: nothing is
asserted): the Gadget-4 z = 0 box (32^3 particles, 50 Mpc/h) read with h5py,
FriendsOfFriends alone (periodic, b = 0.2, MinimumGroupSize 32, with
PotentialCentres) against FriendsOfFriends -> SubhaloFinder (G from the
snapshot's unit attributes, Softening its comoving softening), each a fresh
pipeline per run, timed around UpdatePipeline, alternated. Prints the minima,
the ratio, the subhalo count and how often a group's main subhalo has the
FoF catalogue's MostBoundId.

  pvpython Testing/Benchmarks/bench_subhalo.py [snapshot] [threads=2] [repeats=3]
"""
import os
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Testing", "Python"))

import jztest  # noqa: E402  (loads the plugin)
from paraview import simple  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
import h5py  # noqa: E402  (after ParaView: its HDF5 first)

SNAPSHOT = os.path.join(ROOT, "..", "shared", "data", "external", "gadget4-cosmobox-n32-l50",
                        "snapshot_062.hdf5")
G_CGS = 6.6743e-8


def snapshot(path):
    with h5py.File(path, "r") as f:
        p, h = f["Parameters"].attrs, f["Header"].attrs
        x = f["PartType1/Coordinates"][...].astype(np.float32)
        v = f["PartType1/Velocities"][...].astype(np.float64)
        ids = f["PartType1/ParticleIDs"][...].astype(np.int64)
        m = np.full(len(x), float(h["MassTable"][1]))
        G = G_CGS * p["UnitMass_in_g"] / (p["UnitLength_in_cm"] * p["UnitVelocity_in_cm_per_s"] ** 2)
        return x, v, ids, m, float(h["BoxSize"]), G, float(p["SofteningComovingClass0"])


def column(proxy, port, name):
    o = proxy.GetClientSideObject().GetOutputDataObject(port)
    return vtk_to_numpy(o.GetPointData().GetArray(name))


def timed(src, box, G, eps, subhalos):
    fof = simple.FriendsOfFriends(Input=src, LinkingLengthMode="Relative", LinkingLength=0.2,
                                  MinimumGroupSize=32, Periodic=1, BoxFromData=0,
                                  BoxBounds=[0, box] * 3, MassArray=["POINTS", "Masses"],
                                  PotentialCentres=1, Softening=eps, GravitationalConstant=G)
    last = fof
    if subhalos:
        last = simple.SubhaloFinder(Input=fof, MassArray=["POINTS", "Masses"],
                                    VelocityArray=["POINTS", "Velocities"], Periodic=1,
                                    BoxFromData=0, BoxBounds=[0, box] * 3, Softening=eps,
                                    GravitationalConstant=G)
    t0, c0 = time.perf_counter(), time.process_time()
    last.UpdatePipeline()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    info = None
    if subhalos:
        rank, gid = column(last, 1, "SubhaloRank"), column(last, 1, "GroupId")
        mb = column(last, 1, "MostBoundId")
        fof_mb = column(fof, 1, "MostBoundId")
        main = rank == 0
        same = int((fof_mb[gid[main]] == mb[main]).sum())
        info = (len(rank), int(main.sum()), len(fof_mb), same)
        simple.Delete(last)
    simple.Delete(fof)
    return wall, cpu, info


def main():
    path = (sys.argv[1] if len(sys.argv) > 1 else "") or SNAPSHOT
    threads = sys.argv[2] if len(sys.argv) > 2 else "2"
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    os.environ["OMP_NUM_THREADS"] = threads
    x, v, ids, m, box, G, eps = snapshot(path)
    src = jztest.producer(jztest.polydata(x, {"Velocities": v, "Masses": m, "GlobalIds": ids}))
    best = {False: [1e30, 1e30], True: [1e30, 1e30]}
    for r in range(repeats):
        for sub in (False, True):
            wall, cpu, info = timed(src, box, G, eps, sub)
            best[sub] = [min(best[sub][0], wall), min(best[sub][1], cpu)]
            print("  run %d %-24s %.3f s wall, %.3f s CPU" % (r, "FoF + SubhaloFinder" if sub else "FoF", wall, cpu))
            if info:
                print("    %d subhalos; %d main subhalos of %d groups; main MostBoundId = FoF's in %d"
                      % info)
    f, s = best[False], best[True]
    print("%s: %d particles, G = %.6g, softening %g, %s threads, minima of %d, load %s"
          % (os.path.basename(path), len(x), G, eps, threads, repeats,
             " ".join("%.2f" % a for a in os.getloadavg())))
    print("FoF %.3f s (CPU %.3f s); FoF + SubhaloFinder %.3f s (CPU %.3f s); ratio %.2f (CPU %.2f)"
          % (f[0], f[1], s[0], s[1], s[0] / f[0], s[1] / f[1]))


main()
