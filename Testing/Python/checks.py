"""The tally every JZTree Python test reports through: one "  ok  "/"  FAIL"
line per check, every broken case reported, then exit 1 when any failed.

Plain Python and numpy only (no ParaView), so the MPI drivers that run under
python3 and the pvpython clients share it with jztest's tests.
"""
import os
import sys

import numpy as np


class Checker:
    """Collects failures so one test reports every broken case, then exits 1."""

    def __init__(self):
        self.failures = 0
        self.checks = 0

    def check(self, ok, what):
        self.checks += 1
        print("  ok  " if ok else "  FAIL", what, flush=True)
        if not ok:
            self.failures += 1
        return ok

    def close(self, actual, expected, rtol, what, atol=0.0):
        actual = np.asarray(actual, dtype=np.float64)
        expected = np.asarray(expected, dtype=np.float64)
        if actual.shape != expected.shape:
            return self.check(False, f"{what}: shape {actual.shape} != {expected.shape}")
        err = np.abs(actual - expected) / np.maximum(np.abs(expected), 1e-300)
        ok = bool(np.all(np.abs(actual - expected) <= atol + rtol * np.abs(expected)))
        return self.check(ok, f"{what} (max rel err {err.max() if err.size else 0:.2e}, rtol {rtol:g})")

    def finish(self):
        # A section that checked nothing proves nothing: it fails (a section
        # that cannot run exits with the skip code before it gets here).
        if self.checks == 0:
            print("FAIL: the section ran no check")
            sys.exit(1)
        if self.failures:
            print(f"{self.failures} check(s) failed")
            sys.exit(1)
        print("all checks passed")
        sys.exit(0)


def run_section(sections):
    """Runs the section named by the first argument, sections[name](checker),
    and returns its Checker (to finish); exit 2 with the usage otherwise."""
    if len(sys.argv) < 2 or sys.argv[1] not in sections:
        print(f"usage: {os.path.basename(sys.argv[0])} " + "|".join(sections))
        sys.exit(2)
    checker = Checker()
    sections[sys.argv[1]](checker)
    return checker
