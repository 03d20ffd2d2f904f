#!/usr/bin/python3
"""Parallel runs of both filters under mpiexec pvbatch equal a serial run.

Runs mpi_cases.py once serially (the references for a P-rank split) and once
under `mpiexec -n P pvbatch --symmetric`, then compares per split (random,
slabs, one empty rank, all on one rank, multiblock and partitioned pieces):
NeighborIds, GroupId, GroupSize identical; SmoothingLength, Density,
distances and the catalogue equal to 1e-6 relative; every point exactly once
and on the rank and piece it came from; every catalogue row on exactly one
rank. With P > 1 also: bad input on one rank fails every rank with the
message, without hanging. Every process run is bounded by a timeout.

Usage: test_mpi.py P   (PVBATCH, MPIEXEC from the environment or PATH)
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checker  # noqa: E402
from mpi_env import mpiexec_command, pvbatch  # noqa: E402

SPLITS = ("random", "slabs", "empty", "one", "multiblock", "partitioned")
checker = Checker()
check = checker.check


def close(a, b, what, rtol=1e-6):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return check(False, f"{what}: shape {a.shape} != {b.shape}")
    err = np.abs(a - b) / np.maximum(np.abs(b), 1e-30)
    return check(bool(np.all(err <= rtol)), f"{what}: max rel. error {err.max() if err.size else 0:.2g}")


def run(cmd, timeout):
    print("+", " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    except subprocess.TimeoutExpired as e:
        print((e.stdout or "")[-3000:] if isinstance(e.stdout, str) else "")
        check(False, f"finished within {timeout} s (no hang)")
        return None
    if p.returncode != 0:
        print(p.stdout[-5000:])
    return p


def main():
    P = int(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix=f"jz-mpi{P}-")
    try:
        ref, par = os.path.join(tmp, "ref"), os.path.join(tmp, "par")
        cases = os.path.join(HERE, "mpi_cases.py")
        p = run([pvbatch(), cases, "serial", ref, str(P)], 300)
        if not check(p is not None and p.returncode == 0, "serial reference run"):
            return
        p = run(mpiexec_command(P) + [pvbatch(), "--symmetric", cases, "parallel", par], 300)
        if not check(p is not None and p.returncode == 0, f"mpiexec -n {P} pvbatch run"):
            return
        for case in ("periodic", "open"):
            for kind in SPLITS:
                compare(ref, par, case, kind, P)
        if P > 1:
            bad(par, P)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(ref_dir, par_dir, case, kind, P):
    tag = f"{case}.{kind}"
    ref = dict(np.load(os.path.join(ref_dir, tag + ".serial.npz")))
    ranks = [dict(np.load(os.path.join(par_dir, f"{tag}.rank{r}.npz"))) for r in range(P)]
    for r, d in enumerate(ranks):
        for key in ("knn_errors", "qknn_errors", "fof_errors", "emst_errors", "mrst_errors",
                    "hdb_errors"):
            if key in d and str(d[key]):
                check(False, f"{tag} rank {r}: {key}: {str(d[key])[:200]}")
                return
    # Every output piece equals its input piece (same points, same blocks).
    same = all(np.array_equal(d["in_blocks"], d.get("knn_blocks", d["in_blocks"] * 0))
               and np.array_equal(d["in_points"], d["knn_points"])
               and np.array_equal(d["in_blocks"], d["fof_blocks"])
               and np.array_equal(d["in_points"], d["fof_points"]) for d in ranks)
    check(same, f"{tag}: outputs keep each rank's points and pieces")
    total = sum(len(d["in_points"]) for d in ranks)
    check(total == len(ref["in_points"]), f"{tag}: {total} points over {P} ranks, none lost or duplicated")

    def cat(key):
        parts = [d[key] for d in ranks if key in d]
        return np.concatenate(parts) if parts else None

    for name in ("NeighborIds", "SmoothingLength", "Density", "NeighborDistances"):
        got = cat("knn_" + name)
        want = ref["knn_" + name]
        if name == "NeighborIds":
            check(got is not None and np.array_equal(got, want), f"{tag}: kNN NeighborIds identical")
        else:
            close(got, want, f"{tag}: kNN {name}")
    if "qknn_NeighborIds" in ref:
        check(np.array_equal(cat("qknn_NeighborIds"), ref["qknn_NeighborIds"]),
              f"{tag}: kNN with Query: NeighborIds identical")
        close(cat("qknn_Density"), ref["qknn_Density"], f"{tag}: kNN with Query: Density")
    for name in ("GroupId", "GroupSize"):
        got = cat("fof_" + name)
        check(got is not None and np.array_equal(got, ref["fof_" + name]), f"{tag}: FoF {name} identical")
    compare_trees(ref, ranks, cat, tag)
    gid = cat("cat_GroupId")
    gid = gid.ravel() if gid is not None else np.zeros(0, np.int64)
    G = len(ref["cat_GroupId"])
    check(np.array_equal(np.sort(gid), np.arange(G)),
          f"{tag}: {G} catalogue rows, each on exactly one rank")
    order = np.argsort(gid)
    for name in ("Count", "Mass", "CenterOfMass", "InertiaRadius", "MeanVelocity", "VelocityDispersion"):
        key = "cat_" + name
        if key in ref:
            got = cat(key)
            close(got[order] if got is not None else None, ref[key], f"{tag}: catalogue {name}",
                  rtol=1e-6 if name != "InertiaRadius" else 1e-6)


def compare_trees(ref, ranks, cat, tag):
    """EuclideanMST: the union of the ranks' edges is the serial edge set,
    each edge once; HDBSCAN: identical per point."""
    for key in ("emst", "mrst"):
        ends, length = cat(key + "_ends"), cat(key + "_length")
        got = sorted(zip(map(tuple, ends), length.ravel())) if ends is not None else []
        want = sorted(zip(map(tuple, ref[key + "_ends"]), ref[key + "_length"].ravel()))
        check(got == want, f"{tag}: {key}: union of the ranks' {len(got)} edges = serial {len(want)}")
    check(np.array_equal(cat("mrst_CoreDistance"), ref["mrst_CoreDistance"]),
          f"{tag}: CoreDistance identical")
    for name in ("ClusterId", "Probability", "OutlierScore"):
        check(np.array_equal(cat("hdb_" + name), ref["hdb_" + name]), f"{tag}: HDBSCAN {name} identical")


def bad(par_dir, P):
    ranks = [dict(np.load(os.path.join(par_dir, f"bad.rank{r}.npz"))) for r in range(P)]
    for what, key, points, word in (("NaN on rank 1, KNNDensity", "knn_errors", "knn_points", "non-finite"),
                                    ("NaN on rank 1, FriendsOfFriends", "fof_errors", "fof_points", "non-finite"),
                                    (f"wrong mass array on rank {P - 1}", "mass_errors", "mass_points", "Mass")):
        msgs = [str(d[key]) for d in ranks]
        check(all(word in m and "rank" in m for m in msgs),
              f"{what}: every rank reports it ({msgs[0][:110]!r})")
        check(all(int(d[points]) == 0 for d in ranks), f"{what}: no partial output on any rank")


if __name__ == "__main__":
    main()
    checker.finish()
