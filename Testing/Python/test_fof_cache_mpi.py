#!/usr/bin/python3
"""FriendsOfFriends' per-time-step result cache under mpiexec pvbatch on P
ranks (mpi_fof_cache_case.py): one computation per step in the first pass on
every rank, none when scrubbing (every rank reuses), outputs equal to a new
filter's; a step whose data change on one rank only is computed again on
every rank (the reuse is agreed, nothing hangs).

Usage: test_fof_cache_mpi.py P...
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


def main():
    for P in [int(a) for a in sys.argv[1:]] or [2]:
        out = tempfile.mkdtemp(prefix="jz-mpi-fof-cache-")
        try:
            cmd = mpiexec_command(P) + [pvbatch(), "--symmetric",
                                        os.path.join(HERE, "mpi_fof_cache_case.py"), out]
            if run_pvbatch_ranks(cmd, P, check, timeout=200) is None:
                continue
            ranks = [dict(np.load(os.path.join(out, f"rank{r}.npz"))) for r in range(P)]
        finally:
            shutil.rmtree(out, ignore_errors=True)
        counts = lambda key: [d[key].tolist() for d in ranks]  # noqa: E731
        check(counts("first_pass") == [[3, 0]] * P,
              f"{P} ranks: first pass, one computation per step on every rank {counts('first_pass')}")
        check(counts("scrubbed") == [[3, 3]] * P,
              f"{P} ranks: scrubbing to every step, no computation on any rank {counts('scrubbed')}")
        check(all(bool(np.all(d["scrubbed_same"])) for d in ranks) and
              ranks[0]["groups"] > 3,
              f"{P} ranks: every reused step equals a new filter's outputs on every rank "
              f"({int(ranks[0]['groups']) + 1} groups)")
        check(counts("changed") == [[4, 4]] * P,
              f"{P} ranks: data changed on rank {P - 1} only: every rank computes that step "
              f"again {counts('changed')}")
        check(all(bool(d["changed_same"]) for d in ranks),
              f"{P} ranks: and gets a new filter's outputs")
    checker.finish()


if __name__ == "__main__":
    main()
