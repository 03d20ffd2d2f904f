"""TreeGravity under MPI, 1 against 2 ranks, side by side in one run: this
build's plugin and optionally another (--before, e.g. main's build, for a
before/after comparison), interleaved, minima of the repeats. Prints per
configuration rank 0's wall time of the update (between barriers) and the
CPU time of all ranks together (user+sys of each rank in the update, summed),
and rank 0's "received bytes per local point" counter (a run missing a rank's
CPU line is dropped, not counted as cheaper). OMP_NUM_THREADS=1 per
rank: one rank uses one core, two ranks two. Not a test: nothing is asserted.

  /usr/bin/python3 Testing/Benchmarks/bench_gravity_mpi.py [--n 1e6] [--kinds uniform clustered]
      [--pieces interleaved] [--ranks 1,2] [--repeats 3] [--before DIR_WITH_JZTree.so]

Rank mode (run by the above under mpiexec pvbatch --symmetric):
  bench_gravity_mpi.py rank KIND N PIECES
Every rank makes the same N points (uniform, or clustered: half in 2000
Gaussian clusters) and keeps its piece: "interleaved" (point i on rank
i % P: every rank's points spread over the box) or "slabs" (x quantiles).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def make_points(kind, n):
    import numpy as np
    rng = np.random.default_rng(7)
    if kind == "uniform":
        return rng.random((n, 3))
    centres = np.random.default_rng(3).random((2000, 3))
    widths = 0.002 + 0.01 * np.random.default_rng(4).random(2000)
    m = n // 2
    c = rng.integers(0, 2000, m)
    clustered = centres[c] + rng.normal(size=(m, 3)) * widths[c, None]
    return np.concatenate([clustered, rng.random((n - m, 3))])


def rank_main(kind, n, pieces):
    import time
    import numpy as np
    sys.path.insert(0, os.path.join(HERE, "..", "Python"))
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    from jztest import polydata, producer, simple
    from barrier_timing import timed_update
    ctl = vtkMultiProcessController.GetGlobalController()
    rank = ctl.GetLocalProcessId() if ctl else 0
    P = ctl.GetNumberOfProcesses() if ctl else 1
    x = make_points(kind, n)
    if pieces == "slabs":
        order = np.argsort(x[:, 0], kind="stable")
        mine = order[n * rank // P:n * (rank + 1) // P]
    else:
        mine = np.arange(rank, n, P)
    src = producer(polydata(x[mine]))
    g = simple.TreeGravity(Input=src, OpeningAngle=0.5, Softening=1e-3, Device="CPU")
    cpu0 = time.process_time()
    dt = timed_update(g, ctl)
    print(f"CPU {rank} {time.process_time() - cpu0:.3f}", flush=True)
    if rank == 0:
        print(f"WALL {dt:.3f}", flush=True)


def run(plugin_dir, kind, n, pieces, P):
    sys.path.insert(0, os.path.join(HERE, "..", "Python"))
    from mpi_env import mpiexec_command, pvbatch
    mpiexec = mpiexec_command(P)  # sets OpenMPI's environment first
    env = dict(os.environ, PV_PLUGIN_PATH=plugin_dir, OMP_NUM_THREADS="1", JZ_RUNINFO="1")
    cmd = mpiexec + [pvbatch(), "--symmetric", os.path.abspath(__file__), "rank", kind,
                                str(n), pieces]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       timeout=1200)
    # Lines of the ranks may be interleaved with each other's output: the
    # markers are found anywhere, every rank's CPU line must be there.
    wall = re.search(r"WALL (\d+\.\d{3})", p.stdout)
    cpus = {int(r): float(c) for r, c in re.findall(r"CPU (\d+) (\d+\.\d{3})", p.stdout)}
    recv = re.search(r"rank 0/\d+ counter \"received bytes per local point\" ([\d.e+]+)", p.stdout)
    if p.returncode != 0 or not wall or sorted(cpus) != list(range(P)):
        print(p.stdout[-3000:])
        return None
    return float(wall.group(1)), sum(cpus.values()), float(recv.group(1)) if recv else 0.0


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1e6")
    ap.add_argument("--kinds", nargs="+", default=["uniform", "clustered"])
    ap.add_argument("--pieces", default="interleaved")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before", default=None)
    a = ap.parse_args()
    n = int(float(a.n))
    after = os.path.join(ROOT, "build", "lib", "paraview-5.11", "plugins", "JZTree")
    builds = [("after", after)] + ([("before", a.before)] if a.before else [])
    ranks = [int(r) for r in a.ranks.split(",")]
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}", flush=True)
    for kind in a.kinds:
        best = {}
        for rep in range(a.repeats):
            for P in ranks:
                for name, d in builds:
                    r = run(d, kind, n, a.pieces, P)
                    if r is None:
                        continue
                    print(f"  {kind} {name} P={P} rep {rep}: wall {r[0]:.2f} s cpu {r[1]:.2f} s "
                          f"received {r[2]:.1f} B/pt", flush=True)
                    k = (name, P)
                    b = best.get(k, (1e9, 1e9, r[2]))
                    best[k] = (min(b[0], r[0]), min(b[1], r[1]), r[2])
        for (name, P), (w, c, recv) in sorted(best.items()):
            base = best.get((name, ranks[0]))
            print(f"RESULT {kind} n={n} {a.pieces} {name} P={P}: wall {w:.2f} s cpu {c:.2f} s "
                  f"(vs P={ranks[0]}: wall x{base[0] / w:.2f}, cpu x{c / base[1]:.2f}); "
                  f"received {recv:.1f} B/pt", flush=True)
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "rank":
        rank_main(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        main()
