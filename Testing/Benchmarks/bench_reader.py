"""Snapshot reading benchmark, side by side on one machine in one run:

  * ParticleSnapshotReader (pvpython serially; mpiexec -n P pvbatch in
    parallel, each rank its share), the whole UpdatePipeline: HDF5 reads,
    vertex cells, GlobalIds, Masses from the MassTable, field data;
  * h5py reading the same datasets (Coordinates, Velocities, ParticleIDs)
    into numpy arrays (python3; in parallel each of P mpi4py ranks reads its
    contiguous share with a slice).

The snapshot is generated once (Gadget-4 style, dark matter only: float32
Coordinates and Velocities, uint64 ParticleIDs, a MassTable entry) and read
from the page cache. Every measurement is the first read of a fresh process
(what a user opening the file gets), the two sides alternating, --repeats
times each; the medians (and the best times) are compared, wall time and
(steadier on a shared machine) rank 0's CPU time of the read, for the reader
as it is and with JZ_SNAPSHOT_HUGEPAGES=1 (transparent huge pages). A second
read in the same reader process is printed too: with huge pages the output
memory it gets back is already mapped, so it is much faster than the first.
Not a test: nothing is asserted.

  python3 Testing/Benchmarks/bench_reader.py [--n 2e7] [--ranks 1 2] [--repeats 5]
      [--dir /tmp] [--keep]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Testing", "Python"))
sys.path.insert(0, HERE)
BUILD = os.environ.get("JZ_BUILD_DIR", os.path.join(ROOT, "build"))
PLUGIN = os.path.join(BUILD, "lib", "paraview-5.11", "plugins", "JZTree", "JZTree.so")
DATASETS = ("Coordinates", "Velocities", "ParticleIDs")


def worker_h5py(path, repeats):
    """Under mpiexec python3: each rank reads its share; rank 0 prints times."""
    import h5py
    import numpy as np  # noqa: F401
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    for _ in range(repeats):
        comm.Barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        with h5py.File(path, "r") as f:
            g = f["PartType1"]
            n = g["Coordinates"].shape[0]
            lo, hi = rank * n // size, (rank + 1) * n // size
            arrays = [g[name][lo:hi] for name in DATASETS]
        cpu = time.process_time() - c0
        comm.Barrier()
        if rank == 0:
            print(f"TIME h5py {time.perf_counter() - t0:.4f} CPU {cpu:.4f} "
                  f"rows {sum(len(a) for a in arrays[:1])}", flush=True)
        del arrays


def worker_reader(path, repeats):
    """Under pvpython (serial) or mpiexec pvbatch --symmetric: rank 0 prints times."""
    from paraview import simple
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    from barrier_timing import timed_update

    ns = {}
    simple.LoadPlugin(PLUGIN, ns=ns)
    make_reader = ns.get("ParticleSnapshotReader") or getattr(simple, "ParticleSnapshotReader")
    ctl = vtkMultiProcessController.GetGlobalController()
    for _ in range(repeats):
        reader = make_reader(FileName=path)
        reader.UpdatePipelineInformation()
        c0 = time.process_time()
        elapsed = timed_update(reader, ctl)
        cpu = time.process_time() - c0
        if not ctl or ctl.GetLocalProcessId() == 0:
            n = reader.GetClientSideObject().GetOutputDataObject(0).GetBlock(0).GetNumberOfPoints()
            print(f"TIME reader {elapsed:.4f} CPU {cpu:.4f} rows {n}", flush=True)
        simple.Delete(reader)


def mpiexec(n):
    from mpi_env import mpiexec_command
    return mpiexec_command(n)


def run_side(side, path, ranks, repeats, env_extra=None):
    if side == "h5py":
        cmd = mpiexec(ranks) + [sys.executable, __file__, "worker-h5py", path, str(repeats)]
    elif ranks == 1:
        cmd = ["pvpython", __file__, "worker-reader", path, str(repeats)]
    else:
        cmd = mpiexec(ranks) + ["pvbatch", "--symmetric", __file__, "worker-reader", path,
                                str(repeats)]
    env = dict(os.environ, OMP_NUM_THREADS="1", **(env_extra or {}))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    times = [float(t) for t in re.findall(rf"TIME {side} (\S+)", p.stdout)]
    cpus = [float(t) for t in re.findall(rf"TIME {side} \S+ CPU (\S+)", p.stdout)]
    if p.returncode != 0 or len(times) != repeats:
        print(p.stdout[-3000:])
        raise SystemExit(f"{side} on {ranks} rank(s) failed")
    return times, cpus


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=2e7)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    import numpy as np
    import snapshot_files as sf

    n = int(args.n)
    tmp = tempfile.mkdtemp(prefix="jz-bench-reader-", dir=args.dir)
    path = os.path.join(tmp, "snapshot_bench.hdf5")
    try:
        t0 = time.perf_counter()
        sf.write_gadget(path, [0, n], box=500.0, mass_table=[0, 8.6], id_dtype=np.uint64)
        size = os.path.getsize(path)
        print(f"snapshot: {n:.3g} particles, {size / 2**20:.0f} MiB, written in "
              f"{time.perf_counter() - t0:.1f} s ({path})", flush=True)
        print(f"datasets read by both: PartType1/{{{', '.join(DATASETS)}}}; the reader also builds "
              f"{n:.3g} vertex cells, GlobalIds and Masses", flush=True)
        run_side("h5py", path, 1, 1)  # page cache warm-up
        for ranks in args.ranks:
            times = {"h5py": [], "reader": [], "huge pages": []}
            cpus = {"h5py": [], "reader": [], "huge pages": []}
            second = {"reader": [], "huge pages": []}
            for _ in range(args.repeats):
                t, c = run_side("h5py", path, ranks, 1)
                times["h5py"] += t
                cpus["h5py"] += c
                for label, extra in (("reader", {}), ("huge pages", {"JZ_SNAPSHOT_HUGEPAGES": "1"})):
                    both, c = run_side("reader", path, ranks, 2, extra)
                    times[label].append(both[0])
                    cpus[label].append(c[0])
                    second[label].append(both[1])
            h, hc = np.median(times["h5py"]), np.median(cpus["h5py"])
            print(f"ranks {ranks}: h5py median {h:.3f} s (CPU {hc:.3f} s) "
                  f"{['%.2f' % t for t in times['h5py']]}")
            for label in ("reader", "huge pages"):
                r = np.median(times[label])
                name = "ParticleSnapshotReader" + (" (JZ_SNAPSHOT_HUGEPAGES=1)" if label != "reader" else "")
                print(f"  {name}: first read median {r:.3f} s, ratio reader/h5py {r / h:.3f} "
                      f"(best {min(times[label]) / min(times['h5py']):.3f}; CPU "
                      f"{np.median(cpus[label]) / hc:.3f}) "
                      f"{['%.2f' % t for t in times[label]]}; second read in the same process "
                      f"median {np.median(second[label]):.3f} s, ratio {np.median(second[label]) / h:.3f}",
                      flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker-h5py":
        worker_h5py(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "worker-reader":
        worker_reader(sys.argv[2], int(sys.argv[3]))
    else:
        main()
