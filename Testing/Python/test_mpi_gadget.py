#!/usr/bin/python3
"""FriendsOfFriends under mpiexec pvbatch on the Gadget-4 snapshots read in
pieces (each rank its slice): GroupId membership equals Gadget's own FOF
groups exactly, on every rank; the catalogue rows are spread over the ranks,
each group once. Skips (125) when ../shared/data/external is absent.

Usage: test_mpi_gadget.py P
"""
import os
import shutil
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checker  # noqa: E402
from mpi_env import mpiexec_command, pvbatch, run_pvbatch_ranks  # noqa: E402

SNAPS = ("020", "046", "062")
checker = Checker()
check = checker.check


def same_partition(a, b):
    if a.shape != b.shape:
        return False
    if a.size == 0:
        return True
    return len(np.unique(a)) == len(np.unique(b)) == len(np.unique(np.stack([a, b], 1), axis=0))


def main():
    P = int(sys.argv[1])
    shared = os.environ.get("JZ_SHARED_DIR") or os.path.join(HERE, "..", "..", "..", "shared")
    base = os.path.join(shared, "data/external/gadget4-cosmobox-n32-l50")
    if not os.path.isdir(base):
        print("SKIP: ../shared/data/external/gadget4-cosmobox-n32-l50 is not available")
        sys.exit(125)
    out = tempfile.mkdtemp(prefix="jz-mpi-gadget-")
    try:
        cmd = mpiexec_command(P) + [pvbatch(), "--symmetric", os.path.join(HERE, "mpi_gadget_case.py"),
                                    base, out, *SNAPS]
        if run_pvbatch_ranks(cmd, P, check) is None:
            return
        for snap in SNAPS:
            with h5py.File(os.path.join(base, f"fof_tab_{snap}.hdf5"), "r") as f:
                ng = int(f["Header"].attrs["Ngroups_Total"])
                glen = f["Group/GroupLen"][...] if ng > 0 else np.zeros(0, int)
                goff = f["Group/GroupOffsetType"][:, 1] if ng > 0 else np.zeros(0, int)
            ranks = [dict(np.load(os.path.join(out, f"{snap}.rank{r}.npz"))) for r in range(P)]
            errs = [str(d["errors"]) for d in ranks if str(d["errors"])]
            if not check(not errs, f"snapshot {snap}: no error ({errs[:1]})"):
                continue
            n = int(ranks[-1]["hi"])
            ref = np.full(n, -1, dtype=np.int64)
            for k, (o, m) in enumerate(zip(goff, glen)):
                ref[o:o + m] = k
            gid = np.concatenate([d["GroupId"] for d in ranks])
            gsize = np.concatenate([d["GroupSize"] for d in ranks])
            check(len(gid) == n, f"snapshot {snap}: {n} particles over {P} ranks, each once")
            check(int(gid.max()) + 1 == len(glen), f"snapshot {snap}: {len(glen)} groups")
            check(bool(np.array_equal(gid >= 0, ref >= 0)), f"snapshot {snap}: same particles in groups")
            check(same_partition(gid[ref >= 0], ref[ref >= 0]), f"snapshot {snap}: same membership as Gadget")
            sizes = np.bincount(gid[gid >= 0])
            check(bool(np.array_equal(gsize[gid >= 0], sizes[gid[gid >= 0]])), f"snapshot {snap}: GroupSize")
            cat_id = np.concatenate([d["cat_GroupId"] for d in ranks])
            cat_count = np.concatenate([d["cat_Count"] for d in ranks])
            check(np.array_equal(np.sort(cat_id), np.arange(len(glen))),
                  f"snapshot {snap}: catalogue rows on {sum(len(d['cat_GroupId']) > 0 for d in ranks)} "
                  f"ranks, each group once")
            check(np.array_equal(cat_count[np.argsort(cat_id)], sizes), f"snapshot {snap}: catalogue Count")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
    checker.finish()
