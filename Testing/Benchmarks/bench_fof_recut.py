"""FriendsOfFriends re-cut from its cached tree (not a test: nothing is
asserted; doc/BENCHMARKS.md, "FoF re-cut", has the figures). One proxy on
halos.py points, periodic unit box, Relative b = 0.2 first (a walk), then
LinkingLength changes: the first builds the cached edges (up to 5x the
longest length so far), the later ones only cut them.
Each execution is timed around UpdatePipeline (kernel, labels, catalogue
and the pipeline); ratios to the first run are printed.

  pvpython Testing/Benchmarks/bench_fof_recut.py [N=1e6] [threads=2] [repeats=2]
  (PV_PLUGIN_PATH=build/lib/paraview-5.11/plugins/JZTree or the plugin in build/)
"""
import os
import resource
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Testing", "Python"))
sys.path.insert(0, os.path.join(ROOT, "..", "shared", "anchors"))

import jztest  # noqa: E402  (loads the plugin)
from paraview import simple  # noqa: E402


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1000000
    threads = sys.argv[2] if len(sys.argv) > 2 else "2"
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    os.environ["OMP_NUM_THREADS"] = threads
    from halos import halos
    x = np.ascontiguousarray(halos(n).astype(np.float32))
    src = jztest.producer(jztest.polydata(x))
    FriendsOfFriends = jztest.__dict__.get("FriendsOfFriends") or getattr(simple, "FriendsOfFriends")
    lengths = [0.2, 0.15, 0.25, 0.1, 0.3, 0.2]
    best = bestCpu = None
    for _ in range(repeats):
        fof = FriendsOfFriends(Input=src, LinkingLengthMode="Relative", LinkingLength=lengths[0],
                               Periodic=1)
        times, cpus, faults = [], [], []
        for i, b in enumerate(lengths):
            if i > 0:
                fof.LinkingLength = b
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0, c0 = time.perf_counter(), time.process_time()
            fof.UpdatePipeline()
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        simple.Delete(fof)
        print("  page faults per execution: %s" % " ".join(str(f) for f in faults))
        best = times if best is None else [min(a, b) for a, b in zip(best, times)]
        bestCpu = cpus if bestCpu is None else [min(a, b) for a, b in zip(bestCpu, cpus)]
    print("FoF re-cut, %d halos.py points, periodic, %s threads, minimum of %d runs, load average %s"
          % (n, threads, repeats, " ".join("%.2f" % a for a in os.getloadavg())))
    for what, t in (("wall", best), ("CPU (process, all threads)", bestCpu)):
        first, build, later = t[0], t[1], t[2:]
        print(" %s:" % what)
        print("  first run (walk, b = 0.2): %.3f s" % first)
        print("  first change (builds the edges up to 5x, cuts): %.3f s = %.2fx the first run"
              % (build, build / first))
        print("  later changes (cut only): %s s = %.1f%%-%.1f%% of the first run"
              % (", ".join("%.3f" % x for x in later), 100 * min(later) / first,
                 100 * max(later) / first))


if __name__ == "__main__":
    main()
