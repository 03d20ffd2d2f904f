"""HaloTracking's cost (not a test: nothing is asserted; doc/BENCHMARKS.md,
"Halo tracking", has the figures). A series through FriendsOfFriends ->
HaloTracking in pvpython, side by side in one run:
- FoF per step: FriendsOfFriends' own executions (its Start/End events);
- tracking per step pair: HaloTracking relinking its cached members after a
  change of MinimumShared (its "link" stage of JZ_RUNINFO: the id join,
  counts, descendants, progenitors and TrackIds over every step pair),
  divided by the step pairs; and its "read step" stage in the first pass
  (taking the members of each step);
- numpy per step pair: the same ids joined with numpy (np.intersect1d, the
  pair counts by np.unique, the descendant by np.lexsort), on the members
  taken from FoF's output.
Series: "gadget" (the five Gadget-4 snapshots of ../shared) or "synthetic"
(N particles, 60 % in drifting halos that merge, STEPS steps).

  pvpython Testing/Benchmarks/bench_tracking.py gadget|synthetic [N=1e6] [STEPS=5] [repeats=3]
"""
import glob
import os
import shutil
import sys
import tempfile
import time
from math import fsum  # ProgrammableSource scripts shadow the builtin sum here

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Testing", "Python"))

import jztest  # noqa: E402  (loads the plugin)
import snapshot_files as sf  # noqa: E402
from paraview import simple  # noqa: E402
from test_halo_tracking import INFO_SCRIPT, STEP_SCRIPT, plugin_proxy, points_arrays, run  # noqa: E402

SOURCE = STEP_SCRIPT + """
out = self.GetPolyDataOutput()
pts = vtkPoints()
pts.SetData(numpy_to_vtk(d['x%d' % s], deep=1))
out.SetPoints(pts)
ids = numpy_to_vtkIdTypeArray(d['ids%d' % s], deep=1)
ids.SetName('GlobalIds')
out.GetPointData().AddArray(ids)
out.GetInformation().Set(out.DATA_TIME_STEP(), float(times[s]))
"""

def synthetic_series(n, steps, path):
    """Halos on drifting orbits (pairs of them approach and merge), particles
    jittering inside, the rest uniform; each step in a new random order."""
    rng = np.random.default_rng(5)
    nh = max(1, n // 500)
    centres = rng.random((nh, 3))
    velocity = rng.normal(scale=0.01, size=(nh, 3))
    partner = rng.permutation(nh)
    host = rng.integers(0, nh, size=n)
    host[rng.random(n) > 0.6] = -1
    offset = rng.normal(scale=0.0015, size=(n, 3))
    background = rng.random((n, 3))
    arrays = {"times": np.arange(steps, dtype=np.float64)}
    for s in range(steps):
        c = centres + s * velocity + (s / max(1, steps - 1)) * 0.5 * (centres[partner] - centres)
        x = np.where(host[:, None] >= 0, c[np.maximum(host, 0)] + offset * (1 + 0.2 * s), background)
        x = np.mod(x + rng.normal(scale=0.0005, size=(n, 3)), 1.0).astype(np.float32)
        order = rng.permutation(n)
        arrays[f"x{s}"], arrays[f"ids{s}"] = x[order], (order * 7 + 11).astype(np.int64)
    np.savez(path, **arrays)


def numpy_link(a, b):
    """The join of two steps' members, (ids, groups) each: the shared count
    per pair of groups and each group's descendant (most shared, ties the
    smaller GroupId)."""
    _, ia, ib = np.intersect1d(a[0], b[0], assume_unique=True, return_indices=True)
    pairs, shared = np.unique(np.stack([a[1][ia], b[1][ib]], 1), axis=0, return_counts=True)
    order = np.lexsort((pairs[:, 1], -shared, pairs[:, 0]))
    first = np.ones(len(order), bool)
    first[1:] = pairs[order[1:], 0] != pairs[order[:-1], 0]
    return pairs[order[first]], shared[order[first]]


def timed_events(proxy):
    """A list that collects the wall time of each execution of `proxy`."""
    spans, start = [], [0.0]
    alg = proxy.GetClientSideObject()
    alg.AddObserver("StartEvent", lambda *a: start.__setitem__(0, time.perf_counter()))
    alg.AddObserver("EndEvent", lambda *a: spans.append(time.perf_counter() - start[0]))
    return spans


class StageLog:
    """HaloTracking's JZ_RUNINFO stage times (stderr, captured in a file)."""

    def __init__(self, path):
        os.environ["JZ_RUNINFO"] = "1"
        self.path = path
        self.saved = os.dup(2)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 2)
        os.close(fd)

    def seconds(self, stage):
        """The times of `stage` logged since the last call."""
        sys.stderr.flush()
        with open(self.path) as f:
            lines = f.read().splitlines()
        os.truncate(self.path, 0)
        key = f'seconds "{stage}" '
        return [float(l.split(key)[1]) for l in lines if l.startswith("JZRUNINFO HaloTracking")
                and key in l]

    def close(self):
        os.dup2(self.saved, 2)


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else "gadget"
    n = int(float(sys.argv[2])) if len(sys.argv) > 2 else 1000000
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    tmp = tempfile.mkdtemp(prefix="jz-bench-tracking-")
    try:
        if kind == "gadget":
            files = sorted(glob.glob(os.path.join(sf.gadget4_dir(), "snapshot_*.hdf5")))
            source = plugin_proxy("ParticleSnapshotReader")(FileName=files)
            fof = plugin_proxy("FriendsOfFriends")(Input=source, LinkingLength=0.2,
                                                   MinimumGroupSize=32, Periodic=1)
            label = "Gadget-4 32^3, 5 snapshots"
        else:
            path = os.path.join(tmp, "series.npz")
            synthetic_series(n, steps, path)
            source = simple.ProgrammableSource(OutputDataSetType="vtkPolyData",
                                               Script=SOURCE.format(path=path),
                                               ScriptRequestInformation=INFO_SCRIPT.format(path=path))
            fof = plugin_proxy("FriendsOfFriends")(Input=source, LinkingLength=0.2,
                                                   MinimumGroupSize=20, Periodic=1)
            label = f"synthetic {n:.0e} particles, {steps} steps"
        ht = plugin_proxy("HaloTracking")(Input=fof)
        fof_spans = timed_events(fof)
        times = list(source.TimestepValues)
        pairs = len(times) - 1
        log = StageLog(os.path.join(tmp, "stages.txt"))
        run(ht, times[-1])
        read_per_step = fsum(log.seconds("read step")) / len(times)
        fof_per_step = fsum(fof_spans) / len(times)
        members = []
        for t in times:
            alg, _ = run(ht, t)
            p = points_arrays(alg)
            keep = p["GroupId"] >= 0
            members.append((p["GlobalIds"][keep], p["GroupId"][keep]))
        relink, numpy_join = [], []
        for r in range(repeats):
            ht.MinimumShared = 2 + r % 2
            log.seconds("link")
            run(ht, times[-1])
            relink.append(fsum(log.seconds("link")) / pairs)
            t0 = time.perf_counter()
            for s in range(pairs):
                numpy_link(members[s], members[s + 1])
            numpy_join.append((time.perf_counter() - t0) / pairs)
        log.close()
        track = float(np.min(relink))
        print(f"{label}: {fsum(len(m[0]) for m in members) / len(members):.0f} members per step")
        print(f"FoF per step {fof_per_step * 1e3:.1f} ms; HaloTracking reading a step's members "
              f"{read_per_step * 1e3:.2f} ms ({fof_per_step / read_per_step:.0f}x less than FoF)")
        print(f"tracking per step pair {track * 1e3:.2f} ms: {fof_per_step / track:.1f}x faster than "
              f"FoF per step; numpy join per step pair {float(np.min(numpy_join)) * 1e3:.2f} ms "
              f"(numpy / ours {float(np.min(numpy_join)) / track:.2f}x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
