#!/usr/bin/python3
"""HaloTracking under mpiexec pvbatch on 1, 2 and 3 ranks (the Gadget-4
series, read in pieces): identical merger trees (complete on rank 0, empty
on the other ranks) and the same TrackId and GroupId for every particle at
every step; FoF computes each step once on every rank, scrubbing reuses its
results (agreed over the ranks) and they equal the computed ones; an id
repeated over the ranks fails every rank with the same error.
Skips (125) when ../shared/data/external is absent.

Usage: test_halo_tracking_mpi.py P...
"""
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checker  # noqa: E402
from mpi_env import mpiexec_command, pvbatch, run_pvbatch_ranks  # noqa: E402

checker = Checker()
check = checker.check


def run_ranks(base, P):
    """Per rank the arrays of mpi_tracking_case.py, or None after a failure."""
    out = tempfile.mkdtemp(prefix="jz-mpi-tracking-")
    try:
        cmd = mpiexec_command(P) + [pvbatch(), "--symmetric",
                                    os.path.join(HERE, "mpi_tracking_case.py"), base, out]
        if run_pvbatch_ranks(cmd, P, check) is None:
            return None
        return [dict(np.load(os.path.join(out, f"rank{r}.npz"))) for r in range(P)]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def tracks_by_id(ranks, step, name="TrackId"):
    ids = np.concatenate([d[f"GlobalIds{step}"] for d in ranks])
    tracks = np.concatenate([d[f"{name}{step}"] for d in ranks])
    order = np.argsort(ids)
    return ids[order], tracks[order]


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 2, 3]
    shared = os.environ.get("JZ_SHARED_DIR") or os.path.join(HERE, "..", "..", "..", "shared")
    base = os.path.join(shared, "data/external/gadget4-cosmobox-n32-l50")
    if not os.path.isdir(base):
        print("SKIP: ../shared/data/external/gadget4-cosmobox-n32-l50 is not available")
        sys.exit(125)
    runs = {P: run_ranks(base, P) for P in counts}
    ref = runs[counts[0]]
    if ref is None:
        return
    columns = sorted(k for k in ref[0] if k.startswith("tree/"))
    steps = sorted(int(k[len("GlobalIds"):]) for k in ref[0] if k.startswith("GlobalIds"))
    check(len(ref[0]["tree/GroupId"]) > 100, f"{counts[0]} rank(s): {len(ref[0]['tree/GroupId'])} rows")
    for P, ranks in runs.items():
        if ranks is None:
            continue
        errs = [str(d["errors"]) for d in ranks if str(d["errors"])]
        check(not errs, f"{P} ranks: no error ({errs[:1]})")
        check(all(len(d["tree/GroupId"]) == 0 for d in ranks[1:]), f"{P} ranks: no rows on ranks > 0")
        dups = [str(d["duplicate_errors"]) for d in ranks]
        if P == 1:
            check(dups == [""], "1 rank: the synthetic series has no duplicate id")
        else:
            messages = {m[m.find("particle id"):].strip() for m in dups}
            check(all("appears twice at time step" in m for m in dups) and len(messages) == 1,
                  f"{P} ranks: ids repeated over the ranks: every rank reports the same error "
                  f"({sorted(messages)[:1]})")
        for col in columns:
            a, b = ranks[0][col], ref[0][col]
            same = a.shape == b.shape and (np.allclose(a, b, rtol=1e-12, atol=0) if col == "tree/Mass"
                                           else np.array_equal(a, b))
            check(same, f"{P} ranks: {col[5:]} equals {counts[0]} rank(s)'")
        for s in steps:
            ids, tracks = tracks_by_id(ranks, s)
            rids, rtracks = tracks_by_id(ref, s)
            moved = ""
            if P > 1 and s > 0:
                prev = {int(i): r for r, d in enumerate(ranks) for i in d[f"GlobalIds{s - 1}"]}
                now = {int(i): r for r, d in enumerate(ranks) for i in d[f"GlobalIds{s}"]}
                moved = f", {sum(prev[i] != now[i] for i in now)} particles changed rank"
            check(np.array_equal(ids, rids) and np.array_equal(tracks, rtracks),
                  f"{P} ranks, step {s}: every particle's TrackId{moved}")
            check(np.array_equal(tracks_by_id(ranks, s, "GroupId")[1],
                                 tracks_by_id(ref, s, "GroupId")[1]),
                  f"{P} ranks, step {s}: every particle's GroupId (after scrubbing)")
        last = len(steps) - 1
        computed = [int(d["fof_computed"]) for d in ranks]
        check([int(d["fof_computed_first_pass"]) for d in ranks] == [len(steps)] * P and
              computed == [len(steps)] * P and
              [int(d["fof_reused"]) for d in ranks] == [len(steps)] * P,
              f"{P} ranks: one FoF computation per step on every rank, none when scrubbing "
              f"(computed {computed}, reused {[int(d['fof_reused']) for d in ranks]})")
        check(all(np.array_equal(d["again/GlobalIds"], d["fresh/GlobalIds"]) and
                  np.array_equal(d["again/GroupId"], d["fresh/GroupId"]) for d in ranks) and
              sum(len(d["fresh/GroupId"]) for d in ranks) == sum(len(d[f"GroupId{last}"]) for d in ranks),
              f"{P} ranks: the last step's reused GroupIds equal a new FoF filter's on every rank")
    checker.finish()


if __name__ == "__main__":
    main()
