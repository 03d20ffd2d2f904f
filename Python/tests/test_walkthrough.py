"""The walk-through of doc/python.md runs as written on the Gadget-4 box
(skipped without ../shared) and finds Gadget-4's haloes."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_walkthrough(tmp_path):
    shared = os.environ.get("JZ_SHARED_DIR", os.path.join(ROOT, "..", "shared"))
    if not os.path.exists(os.path.join(shared, "data/external/gadget4-cosmobox-n32-l50")):
        pytest.skip("no ../shared/data/external/gadget4-cosmobox-n32-l50")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "doc/tools/python_walkthrough.py"),
                          str(tmp_path)], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, JZ_SHARED_DIR=shared))
    assert run.returncode == 0, run.stderr
    assert "76 haloes (Gadget-4: 76)" in run.stdout
    assert (tmp_path / "python_walkthrough.png").stat().st_size > 10000
