#!/usr/bin/python3
"""MPI benchmark of both filters (not a test): strong scaling and
communication volume, from mpiexec pvbatch runs of bench_mpi_rank.py with
JZ_RUNINFO=1 (per-rank stage times and counters of the distributed kernels).

  strong:  1e7 points (uniform, clustered), 1 rank x 1 thread vs 2 ranks x
           1 thread (and 1 rank x 2 threads for reference): wall time,
           parallel efficiency T1 / (P T_P), share of the slowest rank's time in
           communication stages (decomposition, ghost exchange, label
           agreement, sizes and numbering, results home); and the work:
           CPU time (user+sys) summed over the ranks, 2 ranks against 1
           (efficiency on two free cores is at most its inverse).
  volume:  1e6 points per rank on 2, 4, 8 ranks (oversubscribed is fine:
           counts do not depend on timing), uniform and clustered: ghost
           points received per local point, mean and max over ranks.

  --yield: waiting ranks yield their core (OpenMPI mpi_yield_when_idle), so
           the CPU figures count work, not busy waits (for a loaded machine;
           wall times on free cores are best without it).

  emst-volume: EuclideanMST on --ranks P (8) with --size points per rank:
           points received per local point (searches; decomposition apart).

Usage: bench_mpi.py [strong] [volume] [emst-volume] [--kinds uniform clustered] [--filters knn fof]
                    (strong also: emst, mrst, hdbscan; run EuclideanMST's two apart)
                    [--repeats N] [--size 1e7] [--no-threads-ref] [--yield]   (both parts by default)
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Python"))
from mpi_env import mpiexec_command, pvbatch  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
# Communication stages. The local trees and searches are computation, not
# counted: "local tree" is the one tree a single process builds too; kNN's
# "boundary search" (the boundary queries again, with the ghosts) is extra
# work of the distributed run. kNN's "ghost exchange" includes choosing the
# regions and selecting the ghosts.
COMM = ("decomposition", "ghost exchange", "label agreement", "sizes and numbering", "results home")
# The top-level stages of the distributed kernels (the others are nested in
# "local linking" / "local search"): with the rank's own update time they
# account for its whole time; the rest is the filter's glue (reading the
# input, global ids, outputs).
TOP = COMM + ("local tree", "local linking", "catalogue", "local search", "boundary search")


def run(P, threads, kind, size, filters="knn,fof"):
    launcher = mpiexec_command(P)  # also sets the OpenMPI environment
    env = dict(os.environ, JZ_RUNINFO="1", OMP_NUM_THREADS=str(threads))
    env.setdefault("PV_PLUGIN_PATH", os.path.join(ROOT, "build/lib/paraview-5.11/plugins/JZTree"))
    cmd = launcher + ["--bind-to", "none", pvbatch(), "--symmetric",
                                os.path.join(HERE, "bench_mpi_rank.py"), kind, size, filters]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=1800)
    if p.returncode != 0:
        print(p.stdout[-3000:])
        raise SystemExit("run failed")
    wall, stages, counters, cpu, own = {}, {}, {}, {}, {}
    # Stage lines name the filter class; EuclideanMST is emst or mrst, whichever runs.
    names = {"KNNDensity": "knn", "FriendsOfFriends": "fof", "HDBSCAN": "hdbscan",
             "EuclideanMST": "mrst" if "mrst" in filters.split(",") else "emst"}
    # The ranks' lines reach mpiexec's output interleaved, sometimes two on
    # one line: search the whole output for the CPU, OWN and WALL figures.
    per_rank = {}
    for m in re.finditer(r"CPU (\w+) (\d+) (\d+\.\d{3})", p.stdout):
        per_rank.setdefault(m.group(1), {})[int(m.group(2))] = float(m.group(3))
    for f, ranks in per_rank.items():
        cpu[f] = sum(ranks.values()) if len(ranks) == P else float("nan")
    for m in re.finditer(r"OWN (\w+) (\d+) (\d+\.\d{3})", p.stdout):
        own.setdefault(m.group(1), {})[int(m.group(2))] = float(m.group(3))
    for m in re.finditer(r"WALL (\w+) (\d+\.\d{3})", p.stdout):
        wall[m.group(1)] = float(m.group(2))
    for line in p.stdout.splitlines():
        m = re.match(r'JZRUNINFO (\w+) rank (\d+)/\d+ (seconds|counter) "([^"]+)" (\S+)', line)
        if m:
            f = names.get(m.group(1), "fof")
            d = stages if m.group(3) == "seconds" else counters
            d.setdefault(f, {}).setdefault(int(m.group(2)), {})[m.group(4)] = float(m.group(5))
    return wall, stages, counters, cpu, own


def strong(kinds=("uniform", "clustered"), filters=("knn", "fof"), repeats=1, size="1e7",
           threads_ref=True):
    """Each configuration `repeats` times, interleaved (1x1, 1x2, 2x1, ...);
    the minimum wall time of each, the stages of the fastest 2-rank run, and
    the minimum CPU time (user+sys summed over the ranks: the work)."""
    print(f"## Strong scaling, {size} points (K=16 periodic; FoF b=0.2 periodic), CPU, "
          f"minimum of {repeats}; load average before: {os.getloadavg()[0]:.1f}")
    print("| data | filter | 1 rank x1 thr [s] | 1 rank x2 thr [s] | 2 ranks x1 thr [s] | "
          "efficiency T1/(2 T2) | comm. share (2 ranks) | CPU 1 rank [s] | CPU 2 ranks [s] | "
          "work ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    names = ",".join(filters)
    configs = ((1, 1), (1, 2), (2, 1)) if threads_ref else ((1, 1), (2, 1))
    for kind in kinds:
        best, work = {}, {}
        for _ in range(repeats):
            for cfg in configs:
                wall, st, _, cpu, own = run(cfg[0], cfg[1], kind, size, names)
                for f in filters:
                    if cfg not in best.get(f, {}) or wall[f] < best[f][cfg][0]:
                        best.setdefault(f, {})[cfg] = (wall[f], st.get(f, {}), own.get(f, {}))
                    w = work.setdefault(f, {})
                    c = cpu.get(f, float("nan"))
                    if c == c:  # nan when a rank's figure was lost
                        w[cfg] = min(w.get(cfg, float("inf")), c)
        for f in filters:
            w11 = best[f][(1, 1)][0]
            w12 = f"{best[f][(1, 2)][0]:.2f}" if threads_ref else "-"
            w21, st, own = best[f][(2, 1)]
            share = max(sum(v for k, v in st[r].items() if k in COMM) for r in st) / w21
            c11 = work[f].get((1, 1), float("nan"))
            c21 = work[f].get((2, 1), float("nan"))
            print(f"| {kind} | {f} | {w11:.2f} | {w12} | {w21:.2f} | "
                  f"{w11 / (2 * w21):.0%} | {share:.0%} | {c11:.2f} | {c21:.2f} | "
                  f"{c21 / c11:.2f}x |", flush=True)
            for r in sorted(st):
                top = sum(v for k, v in st[r].items() if k in TOP)
                mine = own.get(r, float("nan"))
                print(f"    rank {r}: update {mine:.2f} s = stages {top:.2f} + glue {mine - top:.2f}; "
                      f"waits {w21 - mine:.2f} for the slowest rank | " +
                      ", ".join(f"{k} {v:.2f}" for k, v in st[r].items()), flush=True)
    print("Efficiency on two free cores is at most 1 / work ratio; CPU counts MPI's busy waits "
          "unless --yield.")


def emst_volume(ranks=(8,), size="perrank:1e5"):
    """EuclideanMST: points received per local point (the searches' queries
    and answers; the decomposition's moves apart, which these pieces, each
    spread over the whole box, make about (P - 1) / P)."""
    print(f"\n## EuclideanMST, {size}: points received per local point")
    print("| data | ranks | searches mean | searches max | decomposition mean | bytes mean |")
    print("|---|---|---|---|---|---|")
    n_local = float(size.split(":")[1])
    for kind in ("uniform", "clustered"):
        for P in ranks:
            _, _, c, _, _ = run(P, 1, kind, size, "emst")
            e = c["emst"]
            s = [e[r]["points received: searches"] / n_local for r in e]
            d = [e[r]["points received: decomposition"] / n_local for r in e]
            b = [e[r]["bytes received"] / n_local for r in e]
            print(f"| {kind} | {P} | {sum(s) / len(s):.3f} | {max(s):.3f} | {sum(d) / len(d):.3f} | "
                  f"{sum(b) / len(b):.1f} |", flush=True)


def volume():
    print("\n## Communication volume, 1e6 points per rank: ghost points received per local point")
    print("| data | ranks | kNN mean | kNN max | FoF mean | FoF max |")
    print("|---|---|---|---|---|---|")
    for kind in ("uniform", "clustered"):
        for P in (2, 4, 8):
            _, _, c, _, _ = run(P, 1, kind, "perrank:1e6")
            kr = [c["knn"][r]["ghost sources received"] / max(1.0, c["knn"][r]["local sources"]) for r in c["knn"]]
            fr = [c["fof"][r]["ghost points received"] / max(1.0, c["fof"][r]["local points"]) for r in c["fof"]]
            print(f"| {kind} | {P} | {sum(kr) / len(kr):.3f} | {max(kr):.3f} | "
                  f"{sum(fr) / len(fr):.3f} | {max(fr):.3f} |", flush=True)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("what", nargs="*", default=["strong", "volume"])
    # Lists as "a,b" or "a b".
    ap.add_argument("--kinds", nargs="+", default=["uniform,clustered"])
    ap.add_argument("--filters", nargs="+", default=["knn,fof"])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--size", default="1e7")
    ap.add_argument("--ranks", nargs="+", default=["8"], help="emst-volume: rank counts")
    ap.add_argument("--no-threads-ref", action="store_true",
                    help="skip the 1 rank x 2 threads reference runs")
    ap.add_argument("--yield", dest="yield_idle", action="store_true",
                    help="waiting ranks yield their core: CPU figures without busy waits")
    a = ap.parse_args()
    if a.yield_idle:
        os.environ["OMPI_MCA_mpi_yield_when_idle"] = "1"
    if "strong" in a.what:
        def items(values):
            return [v for arg in values for v in arg.split(",") if v]
        strong(items(a.kinds), items(a.filters), a.repeats, a.size, not a.no_threads_ref)
    if "volume" in a.what:
        volume()
    if "emst-volume" in a.what:
        emst_volume(tuple(int(p) for p in a.ranks), "perrank:" + a.size)
