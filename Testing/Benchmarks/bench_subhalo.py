"""SubhaloFinder as a user sees it (not a test: nothing is asserted), side by
side with the FriendsOfFriends filter alone on the same points, each a fresh
pipeline per run, timed around UpdatePipeline, alternated; minima printed.

Snapshot mode (default): the Gadget-4 z = 0 box (32^3 particles, 50 Mpc/h)
read with h5py, FriendsOfFriends (periodic, b = 0.2, MinimumGroupSize 32,
with PotentialCentres) against FriendsOfFriends -> SubhaloFinder (G from the
snapshot's unit attributes, Softening its comoving softening). Prints the
ratio, the subhalo count and how often a group's main subhalo has the FoF
catalogue's MostBoundId.

Clustered mode (--halos N): N points of ../shared/anchors/halos.py (unit
periodic box, float32, particle mass 1/N, G = 1, softening 1/30 of the mean
spacing). Velocities: every FoF group (b = 0.2, MinimumGroupSize 20, from an
untimed run) gets an isotropic Gaussian of the singular isothermal sphere's
dispersion sigma^2 = G M / (2 R) (R its largest distance from the centre of
mass) about a random bulk velocity; the rest a Gaussian of the largest sigma.
Times FriendsOfFriends alone, then SubhaloFinder on that (cached) output, so
the SubhaloFinder's own time is the difference; ratios against FoF alone.
Memory: the peak resident set (VmHWM, reset before each stage) beyond the
resident set before it, per particle, for FoF and for SubhaloFinder.

  pvpython Testing/Benchmarks/bench_subhalo.py [snapshot] [threads=2] [repeats=3]
  pvpython Testing/Benchmarks/bench_subhalo.py --halos 1e6 [--threads 2] [--repeats 3]
With JZ_RUNINFO=1 the filters print their stage times.
"""
import argparse
import ctypes
import os
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("JZ_SHARED_DIR", os.path.join(ROOT, "..", "shared"))
sys.path.insert(0, os.path.join(ROOT, "Testing", "Python"))

import jztest  # noqa: E402  (loads the plugin)
from paraview import simple  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
import h5py  # noqa: E402  (after ParaView: its HDF5 first)

SNAPSHOT = os.path.join(SHARED, "data", "external", "gadget4-cosmobox-n32-l50",
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


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak():
    """Resets VmHWM (the peak resident set) to the current one."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def plugin_filter(name):
    return jztest.__dict__.get(name) or getattr(simple, name)


def fof_proxy(src, box, minimum, **extra):
    return plugin_filter("FriendsOfFriends")(
        Input=src, LinkingLengthMode="Relative", LinkingLength=0.2,
        MinimumGroupSize=minimum, Periodic=1, BoxFromData=0, BoxBounds=[0, box] * 3, **extra)


def subhalo_proxy(fof, box, G, eps):
    return plugin_filter("SubhaloFinder")(Input=fof, MassArray=["POINTS", "Masses"],
                                          VelocityArray=["POINTS", "Velocities"], Periodic=1,
                                          BoxFromData=0, BoxBounds=[0, box] * 3,
                                          Softening=eps, GravitationalConstant=G)


def update(proxy):
    """Wall and CPU seconds of UpdatePipeline, and the peak resident set
    beyond the one before it (KiB)."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # freed heap out of the resident set
    rss = status_kib("VmRSS")
    reset_peak()
    t0, c0 = time.perf_counter(), time.process_time()
    proxy.UpdatePipeline()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, status_kib("VmHWM") - rss


def run_snapshot(path, threads, repeats):
    x, v, ids, m, box, G, eps = snapshot(path)
    src = jztest.producer(jztest.polydata(x, {"Velocities": v, "Masses": m, "GlobalIds": ids}))
    best = {False: [1e30, 1e30], True: [1e30, 1e30]}
    for r in range(repeats):
        for sub in (False, True):
            fof = fof_proxy(src, box, 32, MassArray=["POINTS", "Masses"], PotentialCentres=1,
                            Softening=eps, GravitationalConstant=G)
            last = subhalo_proxy(fof, box, G, eps) if sub else fof
            wall, cpu, _ = update(last)
            best[sub] = [min(best[sub][0], wall), min(best[sub][1], cpu)]
            print("  run %d %-24s %.3f s wall, %.3f s CPU"
                  % (r, "FoF + SubhaloFinder" if sub else "FoF", wall, cpu))
            if sub:
                rank, gid = column(last, 1, "SubhaloRank"), column(last, 1, "GroupId")
                mb, fof_mb = column(last, 1, "MostBoundId"), column(fof, 1, "MostBoundId")
                main = rank == 0
                print("    %d subhalos; %d main subhalos of %d groups; main MostBoundId = FoF's in %d"
                      % (len(rank), int(main.sum()), len(fof_mb),
                         int((fof_mb[gid[main]] == mb[main]).sum())))
                simple.Delete(last)
            simple.Delete(fof)
    f, s = best[False], best[True]
    print("%s: %d particles, G = %.6g, softening %g, %s threads, minima of %d, load %s"
          % (os.path.basename(path), len(x), G, eps, threads, repeats, load()))
    print("FoF %.3f s (CPU %.3f s); FoF + SubhaloFinder %.3f s (CPU %.3f s); ratio %.2f (CPU %.2f)"
          % (f[0], f[1], s[0], s[1], s[0] / f[0], s[1] / f[1]))


def load():
    return " ".join("%.2f" % a for a in os.getloadavg())


def clustered(n, seed=2):
    """halos.py points with virialised velocities per FoF group (see above)."""
    sys.path.insert(0, os.path.join(SHARED, "anchors"))
    from halos import halos
    x = np.ascontiguousarray(np.mod(halos(n), 1.0).astype(np.float32))
    src = jztest.producer(jztest.polydata(x))
    fof = fof_proxy(src, 1.0, 20)
    fof.UpdatePipeline()
    gid = column(fof, 0, "GroupId").astype(np.int64)
    simple.Delete(fof)
    simple.Delete(src)
    rng = np.random.default_rng(seed)
    v = np.zeros((n, 3))
    sigma_max = 0.0
    grouped = gid >= 0
    if grouped.any():
        g = gid[grouped]
        xg = x[grouped].astype(np.float64)
        ng = int(g.max()) + 1
        _, first = np.unique(g, return_index=True)
        ref = np.zeros((ng, 3))
        ref[g[first]] = xg[first]
        d = xg - ref[g]
        d -= np.round(d)  # periodic unit box
        count = np.bincount(g, minlength=ng).astype(np.float64)
        com = np.stack([np.bincount(g, d[:, k], ng) for k in range(3)], 1) / np.maximum(count, 1)[:, None]
        r = np.linalg.norm(d - com[g], axis=1)
        radius = np.zeros(ng)
        np.maximum.at(radius, g, r)
        sigma = np.sqrt((count / n) / (2 * np.maximum(radius, 1e-12)))
        sigma_max = float(sigma.max())
        bulk = rng.normal(scale=sigma_max, size=(ng, 3))
        v[grouped] = bulk[g] + sigma[g][:, None] * rng.normal(size=(len(g), 3))
    v[~grouped] = rng.normal(scale=max(sigma_max, 1e-3), size=(int((~grouped).sum()), 3))
    return x, v


def run_halos(n, threads, repeats):
    x, v = clustered(n)
    m = np.full(n, 1.0 / n)
    eps = n ** (-1.0 / 3.0) / 30
    src = jztest.producer(jztest.polydata(x, {"Velocities": v, "Masses": m,
                                               "GlobalIds": np.arange(n, dtype=np.int64)}))
    del x, v, m
    best = [[1e30, 1e30], [1e30, 1e30]]
    peak = [0, 0]
    for r in range(repeats):
        fof = fof_proxy(src, 1.0, 20)
        sub = subhalo_proxy(fof, 1.0, 1.0, eps)
        for k, proxy in enumerate((fof, sub)):
            wall, cpu, kib = update(proxy)
            best[k] = [min(best[k][0], wall), min(best[k][1], cpu)]
            peak[k] = max(peak[k], kib)
            print("  run %d %-14s %.3f s wall, %.3f s CPU, peak +%.1f B/particle"
                  % (r, ("FoF", "SubhaloFinder")[k], wall, cpu, kib * 1024.0 / n))
        rank = column(sub, 1, "SubhaloRank")
        sid = column(sub, 0, "SubhaloId")
        print("    %d groups, %d subhalos (%d main), %.1f %% of particles in subhalos"
              % (len(column(fof, 1, "Count")), len(rank), int((rank == 0).sum()),
                 100.0 * (sid >= 0).mean()))
        simple.Delete(sub)
        simple.Delete(fof)
    f, s = best
    print("halos.py: %d particles, softening %g, %s threads, minima of %d, load %s"
          % (n, eps, threads, repeats, load()))
    print("FoF %.3f s (CPU %.3f s); SubhaloFinder %.3f s (CPU %.3f s): ratio %.2f (CPU %.2f); "
          "FoF + SubhaloFinder / FoF %.2f (CPU %.2f)"
          % (f[0], f[1], s[0], s[1], s[0] / f[0], s[1] / f[1],
             (f[0] + s[0]) / f[0], (f[1] + s[1]) / f[1]))
    print("peak beyond the resident set before the stage: FoF %.1f B/particle, "
          "SubhaloFinder %.1f B/particle" % (peak[0] * 1024.0 / n, peak[1] * 1024.0 / n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snapshot", nargs="?", default="")
    ap.add_argument("threads_pos", nargs="?", default=None)
    ap.add_argument("repeats_pos", nargs="?", default=None)
    ap.add_argument("--halos", type=float, default=0, help="clustered mode with N points")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    threads = a.threads_pos or a.threads
    repeats = int(a.repeats_pos) if a.repeats_pos else a.repeats
    os.environ["OMP_NUM_THREADS"] = threads
    if a.halos:
        run_halos(int(a.halos), threads, repeats)
    else:
        run_snapshot(a.snapshot or SNAPSHOT, threads, repeats)


main()
