#!/usr/bin/python3
"""TreeGravity and the FoF catalogue additions under mpiexec pvbatch equal a
serial run: Potential and Acceleration within the accuracy contract of the
serial values (99th percentiles 1e-4 and 1e-3 relative), both, and a float32
Query grid spread over the ranks, within it of float64 direct summation in
numpy; MostBoundId, CentreOfPotential and SOCount identical,
SORadius and SOMass to 1e-12; every catalogue row on exactly one rank.

Usage: test_mpi_gravity.py P   (PVBATCH, MPIEXEC from the environment or PATH)
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mpi_env import mpiexec_command, pvbatch  # noqa: E402

failures = 0


def check(ok, what):
    global failures
    print(("  ok  " if ok else "  FAIL") + " " + what, flush=True)
    failures += 0 if ok else 1
    return ok


def direct(q, x, m, eps, self_from=None):
    """Float64 direct summation (G = 1) at the points q; q[i] is source
    self_from[i] (excluded) when given."""
    phi = np.zeros(len(q))
    acc = np.zeros((len(q), 3))
    for a in range(0, len(q), 256):
        d = x[None, :, :] - q[a:a + 256, None, :]
        s2 = (d * d).sum(axis=2) + eps * eps
        w = np.where(s2 > 0, m[None, :] / np.sqrt(np.where(s2 > 0, s2, 1)), 0.0)
        if self_from is not None:
            w[np.arange(len(w)), self_from[a:a + 256]] = 0
        phi[a:a + 256] = -w.sum(axis=1)
        acc[a:a + 256] = (w[:, :, None] / s2[:, :, None] * d).sum(axis=1)
    return phi, acc


def p99(got, ref):
    if ref.ndim == 2:
        e = np.linalg.norm(got - ref, axis=1) / np.linalg.norm(ref, axis=1)
    else:
        e = np.abs(got - ref) / np.abs(ref)
    return float(np.percentile(e, 99))


def run(cmd, timeout):
    print("+", " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    except subprocess.TimeoutExpired:
        return check(False, f"finished within {timeout} s")
    if p.returncode != 0:
        print(p.stdout[-4000:])
    return check(p.returncode == 0, " ".join(os.path.basename(c) for c in cmd[-4:]))


def main():
    P = int(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix=f"jz-grav-mpi{P}-")
    try:
        case = os.path.join(HERE, "mpi_gravity_case.py")
        if not run([pvbatch(), case, "serial", tmp, str(P)], 300):
            return
        if not run(mpiexec_command(P) + [pvbatch(), "--symmetric", case, "parallel", tmp], 300):
            return
        ref = dict(np.load(os.path.join(tmp, "serial.npz")))
        ranks = [dict(np.load(os.path.join(tmp, f"rank{r}.npz"))) for r in range(P)]
        for r, d in enumerate(ranks):
            check(not str(d["gravity_errors"]) and not str(d["fof_errors"]), f"rank {r}: no errors")
        # Gravity: per particle (matched by GlobalIds), against the serial values.
        ids = np.concatenate([d["ids"] for d in ranks])
        pos = {int(g): i for i, g in enumerate(ref["ids"])}
        at = np.array([pos[int(g)] for g in ids])
        check(len(ids) == len(ref["ids"]) and len(set(ids.tolist())) == len(ids),
              f"{len(ids)} particles over {P} ranks, each once")
        phi = np.concatenate([d["Potential"] for d in ranks])
        acc = np.concatenate([d["Acceleration"] for d in ranks])
        ep = np.abs(phi - ref["Potential"][at]) / np.abs(ref["Potential"][at])
        ea = np.linalg.norm(acc - ref["Acceleration"][at], axis=1) / np.linalg.norm(
            ref["Acceleration"][at], axis=1)
        check(np.percentile(ep, 99) <= 1e-4, f"Potential: p99 difference to serial {np.percentile(ep, 99):.2e}")
        check(np.percentile(ea, 99) <= 1e-3, f"Acceleration: p99 difference to serial {np.percentile(ea, 99):.2e}")
        # Both against float64 direct summation (the accuracy contract).
        x, m = ref["x"], ref["m"]
        dphi, dacc = direct(x[at], x, m, 1e-3, self_from=at)
        check(p99(phi, dphi) <= 1e-4 and p99(acc, dacc) <= 1e-3,
              f"parallel vs direct summation: p99 phi {p99(phi, dphi):.2e} acc {p99(acc, dacc):.2e}")
        sphi, sacc = ref["Potential"][at], ref["Acceleration"][at]
        check(p99(sphi, dphi) <= 1e-4 and p99(sacc, dacc) <= 1e-3,
              f"serial vs direct summation: p99 phi {p99(sphi, dphi):.2e} acc {p99(sacc, dacc):.2e}")
        # The Query grid: every grid point once over the ranks, within the contract.
        qi = np.concatenate([d["q_index"] for d in ranks if "q_index" in d])
        check(np.array_equal(np.sort(qi), np.arange(len(ref["q"]))), f"{len(qi)} query points, each once")
        qphi = np.concatenate([d["q_Potential"] for d in ranks if "q_index" in d])
        qacc = np.concatenate([d["q_Acceleration"] for d in ranks if "q_index" in d])
        dphi, dacc = direct(ref["q"][qi].astype(np.float64), x, m, 1e-3)
        check(p99(qphi, dphi) <= 1e-4 and p99(qacc, dacc) <= 1e-3,
              f"Query: p99 phi {p99(qphi, dphi):.2e} acc {p99(qacc, dacc):.2e} against direct summation")
        # Catalogue: rows by GroupId, each on one rank, equal to the serial ones.
        gid = np.concatenate([d.get("cat_GroupId", np.zeros(0, np.int64)) for d in ranks])
        check(np.array_equal(np.sort(gid), np.sort(ref["cat_GroupId"])),
              f"{len(gid)} catalogue rows, each on exactly one rank")
        o, ro = np.argsort(gid), np.argsort(ref["cat_GroupId"])
        for name in ("MostBoundId", "SOCount", "CentreOfPotential"):
            got = np.concatenate([d["cat_" + name] for d in ranks if "cat_" + name in d])[o]
            check(np.array_equal(got, ref["cat_" + name][ro]), f"{name} identical")
        for name in ("SORadius", "SOMass"):
            got = np.concatenate([d["cat_" + name] for d in ranks if "cat_" + name in d])[o]
            want = ref["cat_" + name][ro]
            check(np.allclose(got, want, rtol=1e-12, atol=0), f"{name} equal to 1e-12")
        check(int((ref["cat_SOCount"] > 20).sum()) >= 2, "non-trivial SO spheres in the reference")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
# Here, not in main(): a failed run returns from main() early.
if failures:
    print(f"{failures} check(s) failed")
    sys.exit(1)
print("all checks passed")
