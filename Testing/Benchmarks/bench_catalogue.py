"""The halo catalogue additions as a user sees them (not a test: nothing is
asserted). Two FriendsOfFriends filters on the same halos.py points, periodic
unit box, Relative b = 0.2: one plain (groups, labels, catalogue), one with
PotentialCentres and SphericalOverdensity (Delta 200, Mean) on, each a fresh
proxy per run (no cached walk), timed around UpdatePipeline, alternated.
Prints the minima and the ratio (the target: at most 2x the FoF time), wall
and CPU. The kernels alone: build/bin/jz_bench_halo_properties (its own
clustered generator).

  pvpython Testing/Benchmarks/bench_catalogue.py [N=1e6] [threads=2] [repeats=3] [softening=1e-4]
"""
import os
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Testing", "Python"))
sys.path.insert(0, os.path.join(ROOT, "..", "shared", "anchors"))

import jztest  # noqa: E402  (loads the plugin)
from paraview import simple  # noqa: E402


def timed(src, softening, additions):
    FriendsOfFriends = jztest.__dict__.get("FriendsOfFriends") or getattr(simple, "FriendsOfFriends")
    fof = FriendsOfFriends(Input=src, LinkingLengthMode="Relative", LinkingLength=0.2,
                           Periodic=1, BoxFromData=0, BoxBounds=[0, 1, 0, 1, 0, 1],
                           PotentialCentres=int(additions), SphericalOverdensity=int(additions))
    if additions:
        fof.Softening = softening
    t0, c0 = time.perf_counter(), time.process_time()
    fof.UpdatePipeline()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rows = fof.GetDataInformation(1).GetNumberOfPoints()
    simple.Delete(fof)
    return wall, cpu, rows


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1000000
    threads = sys.argv[2] if len(sys.argv) > 2 else "2"
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    softening = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
    os.environ["OMP_NUM_THREADS"] = threads
    from halos import halos
    x = np.ascontiguousarray(np.mod(halos(n), 1.0).astype(np.float32))
    src = jztest.producer(jztest.polydata(x))
    best = {False: [1e30, 1e30], True: [1e30, 1e30]}
    for r in range(repeats):
        for additions in (False, True):
            wall, cpu, rows = timed(src, softening, additions)
            best[additions] = [min(best[additions][0], wall), min(best[additions][1], cpu)]
            print("  run %d %-22s %.3f s wall, %.3f s CPU, %d catalogue rows"
                  % (r, "FoF + centres + SO" if additions else "FoF", wall, cpu, rows))
    fof, both = best[False], best[True]
    print("FriendsOfFriends, %d halos.py points, periodic, b = 0.2, %s threads, softening %g, "
          "minima of %d, load average %s" % (n, threads, softening, repeats,
                                             " ".join("%.2f" % a for a in os.getloadavg())))
    print("  FoF %.3f s (CPU %.3f), with centres + SO %.3f s (CPU %.3f): ratio %.2f wall, "
          "%.2f CPU (target <= 2)"
          % (fof[0], fof[1], both[0], both[1], both[0] / fof[0], both[1] / fof[1]))


if __name__ == "__main__":
    main()
