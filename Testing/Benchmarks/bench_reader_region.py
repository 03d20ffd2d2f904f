"""Reading a Region of a large snapshot, side by side in one run:

  * ParticleSnapshotReader (pvpython, one process) reading the whole file and
    a Region holding about 1 % of the particles, in each format: Gadget-2
    binary, TIPSY and Gadget-style HDF5;
  * plain numpy reading the same file (np.fromfile of the blocks at their
    offsets; h5py for HDF5): the whole file, and the region the plain way
    (read the positions, mask, then gather the other arrays).

The files are generated one at a time, each deleted after its reads (dark
matter only: float32 positions and velocities, 32-bit ids, a MassTable mass;
written in chunks), and read from the page cache. Every measurement is a
fresh process: its wall time for the read, its CPU time (steadier on a
shared machine) and its peak resident memory (ru_maxrss) above the
process's own footprint before the read. Not a test: nothing is asserted.

  python3 Testing/Benchmarks/bench_reader_region.py [--n 2e7] [--formats gadget tipsy hdf5]
      [--repeats 3] [--dir /tmp] [--keep] [--region-only]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("JZ_BUILD_DIR", os.path.join(ROOT, "build"))
PLUGIN = os.path.join(BUILD, "lib", "paraview-5.11", "plugins", "JZTree", "JZTree.so")
BOX = 100.0
# A cube of side 0.2154 BOX holds 1 % of a uniform box.
REGION = [10.0, 31.54, 40.0, 61.54, 70.0, 91.54]
CHUNK = 1 << 22


def write_files(directory, n, formats):
    import numpy as np
    rng = np.random.default_rng(1)
    paths = {}
    chunks = [(i, min(CHUNK, n - i)) for i in range(0, n, CHUNK)]
    def gen(kind, i, k):
        r = np.random.default_rng([kind, i])
        if kind == 0:
            return (r.random((k, 3)) * BOX).astype(np.float32)
        if kind == 1:
            return r.normal(0, 100, (k, 3)).astype(np.float32)
        return np.arange(i + 1, i + k + 1, dtype=np.uint32)
    if "gadget" in formats:
        path = paths["gadget"] = os.path.join(directory, "snap_gadget")
        with open(path, "wb") as f:
            def record(nbytes, writer):
                m = np.array([nbytes], "<u4").tobytes()
                f.write(m)
                writer()
                f.write(m)
            h = bytearray(256)
            h[0:24] = np.array([0, n, 0, 0, 0, 0], "<i4").tobytes()
            h[24:72] = np.array([0, 1.5, 0, 0, 0, 0], "<f8").tobytes()
            h[96:120] = np.array([0, n, 0, 0, 0, 0], "<u4").tobytes()
            h[124:128] = np.array([1], "<i4").tobytes()
            h[128:136] = np.array([BOX], "<f8").tobytes()
            record(256, lambda: f.write(bytes(h)))
            for kind, width in ((0, 12), (1, 12), (2, 4)):
                record(n * width, lambda: [f.write(gen(kind, i, k).tobytes()) for i, k in chunks])
    if "tipsy" in formats:
        path = paths["tipsy"] = os.path.join(directory, "snap.std")
        dt = np.dtype([("m", ">f4"), ("pos", ">f4", 3), ("vel", ">f4", 3), ("eps", ">f4"),
                       ("phi", ">f4")])
        with open(path, "wb") as f:
            f.write(np.array([1.0], ">f8").tobytes() + np.array([n, 3, 0, n, 0, 0], ">i4").tobytes())
            for i, k in chunks:
                rec = np.zeros(k, dt)
                rec["m"], rec["pos"], rec["vel"] = 1.5, gen(0, i, k), gen(1, i, k)
                f.write(rec.tobytes())
    if "hdf5" in formats:
        import h5py
        path = paths["hdf5"] = os.path.join(directory, "snap.hdf5")
        with h5py.File(path, "w") as f:
            h = f.create_group("Header")
            h.attrs["NumPart_ThisFile"] = np.array([0, n, 0, 0, 0, 0], np.int32)
            h.attrs["NumPart_Total"] = np.array([0, n, 0, 0, 0, 0], np.uint32)
            h.attrs["MassTable"] = np.array([0, 1.5, 0, 0, 0, 0])
            h.attrs["BoxSize"] = BOX
            h.attrs["Time"] = 1.0
            g = f.create_group("PartType1")
            ds = [g.create_dataset("Coordinates", (n, 3), np.float32),
                  g.create_dataset("Velocities", (n, 3), np.float32),
                  g.create_dataset("ParticleIDs", (n,), np.uint32)]
            for i, k in chunks:
                for kind, d in enumerate(ds):
                    d[i:i + k] = gen(kind, i, k)
    del rng
    return paths


READER = r'''
import json, os, resource, sys, time
from paraview import simple
simple.LoadPlugin(sys.argv[1], ns=globals())
path, region = sys.argv[2], json.loads(sys.argv[3])
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
r = ParticleSnapshotReader(FileName=path)
if region:
    r.Region = region
r.UpdatePipelineInformation()
before = rss()
t0, c0 = time.perf_counter(), time.process_time()
r.UpdatePipeline()
t, c = time.perf_counter() - t0, time.process_time() - c0
out = r.GetClientSideObject().GetOutputDataObject(0)
print(json.dumps({"time": t, "cpu": c, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before,
                  "rows": out.GetNumberOfPoints()}))
'''

NUMPY = r'''
import json, os, resource, sys, time
import numpy as np
fmt, path, region, n = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
if fmt == "hdf5":
    import h5py
before = rss()
t0, c0 = time.perf_counter(), time.process_time()
if fmt == "gadget":
    def block(i, width, dtype, comps):
        off = 4 + 256 + 4 + sum(8 + n * w for w in (12, 12, 4)[:i]) + 4
        return np.fromfile(path, dtype, n * comps, offset=off).reshape(n, comps) if comps > 1 \
            else np.fromfile(path, dtype, n, offset=off)
    pos = block(0, 12, "<f4", 3)
    get = lambda: [block(1, 12, "<f4", 3), block(2, 4, "<u4", 1)]
elif fmt == "tipsy":
    dt = np.dtype([("m", ">f4"), ("pos", ">f4", 3), ("vel", ">f4", 3), ("eps", ">f4"), ("phi", ">f4")])
    rec = np.fromfile(path, dt, n, offset=32)
    pos = rec["pos"].astype("<f4")
    get = lambda: [rec["vel"].astype("<f4"), rec["m"].astype("<f4"), rec["eps"].astype("<f4"),
                   rec["phi"].astype("<f4")]
else:
    f = h5py.File(path, "r")
    g = f["PartType1"]
    pos = g["Coordinates"][...]
    get = lambda: [g["Velocities"][...], g["ParticleIDs"][...]]
if region:
    lo, hi = np.array(region[0::2]), np.array(region[1::2])
    keep = np.all((pos >= lo) & (pos < hi), axis=1)
    pos = pos[keep]
    others = [a[keep] for a in get()]
else:
    others = get()
t, c = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"time": t, "cpu": c, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before,
                  "rows": len(pos)}))
'''


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(p.stdout[-2000:] + p.stderr[-2000:])


def median(values):
    v = sorted(values)
    return v[len(v) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=2e7)
    ap.add_argument("--formats", nargs="+", default=["gadget", "tipsy", "hdf5"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--region-only", action="store_true",
                    help="only the Region reads (files larger than memory allows to read whole)")
    args = ap.parse_args()
    n = int(args.n)
    directory = tempfile.mkdtemp(prefix="jz-bench-region-", dir=args.dir)
    try:
        script = os.path.join(directory, "reader.py")
        with open(script, "w") as f:
            f.write(READER)
        mib = 1024.0 ** 2
        print(f"{n:.3g} particles; Region {REGION} (about 1 %); medians of {args.repeats}, "
              f"fresh processes, page cache warm")
        print(f"{'format':8} {'file MiB':>9} {'what':7} {'reader s':>9} {'numpy s':>8} "
              f"{'time ratio':>10} {'CPU ratio':>9} {'reader peak MiB':>15} {'numpy peak MiB':>14} "
              f"{'rows':>10}")
        for fmt in args.formats:  # one file at a time: large ones take much of the disk
            path = write_files(directory, n, [fmt])[fmt]
            size = os.path.getsize(path) / mib
            with open(path, "rb") as f:  # into the page cache
                while f.read(1 << 26):
                    pass
            for label, region in (("whole", None), ("region", REGION))[args.region_only:]:
                ours, peer = [], []
                for _ in range(args.repeats):
                    ours.append(run(["pvpython", script, PLUGIN, path, json.dumps(region)]))
                    peer.append(run([sys.executable, "-c", NUMPY, fmt, path, json.dumps(region),
                                     str(n)]))
                t_ours, t_peer = median([o["time"] for o in ours]), median([p["time"] for p in peer])
                c_ours, c_peer = median([o["cpu"] for o in ours]), median([p["cpu"] for p in peer])
                m_ours, m_peer = median([o["peak"] for o in ours]), median([p["peak"] for p in peer])
                print(f"{fmt:8} {size:9.0f} {label:7} {t_ours:9.3f} {t_peer:8.3f} "
                      f"{t_ours / t_peer:10.2f} {c_ours / c_peer:9.2f} {m_ours / mib:15.0f} {m_peer / mib:14.0f} "
                      f"{ours[0]['rows']:>10}", flush=True)
            if not args.keep:
                os.remove(path)
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
