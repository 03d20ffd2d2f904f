"""How jztree runs: the GIL is released during a kernel, Ctrl-C stops a long
call through the kernels' abort hook, device="cuda" without a GPU says so,
and the documentation and type stubs are where help() and editors look."""
import os
import pydoc
import signal
import threading
import time

import numpy as np
import pytest

import jztree


def big_points(n=1_500_000):
    return np.random.default_rng(0).random((n, 3))


def test_gil_released_during_kernel():
    pts = big_points(600_000)
    window = {}
    stamps = []

    def worker():
        window["in"] = time.perf_counter()
        jztree.density(pts, k=48)
        window["out"] = time.perf_counter()

    t = threading.Thread(target=worker)
    t.start()
    while t.is_alive():  # Python code on this thread while the kernel runs
        stamps.append(time.perf_counter())
        sum(range(200))
    t.join()
    # The kernel holds no GIL: this thread ran through the middle of the call
    # (with the GIL held it could not have run there at all).
    span = window["out"] - window["in"]
    middle = [s for s in stamps if window["in"] + span / 4 < s < window["out"] - span / 4]
    assert len(middle) > 10


def test_keyboard_interrupt_stops_kernel():
    pts = big_points()
    before = jztree._jztree._interrupted_kernels()
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        jztree.density(pts, k=64)
    timer.join()
    # The kernel stopped midway (through its abort hook), not after finishing.
    assert jztree._jztree._interrupted_kernels() == before + 1
    ids, _ = jztree.knn(pts[:1000], 2)  # and the module works on
    assert ids[0, 0] == 0


def test_device():
    pts = np.random.default_rng(1).random((500, 3))
    ids_cpu, _ = jztree.knn(pts, 4, device="cpu")
    ids_auto, _ = jztree.knn(pts, 4, device="auto")  # falls back to the CPU without a GPU
    assert np.array_equal(ids_cpu, ids_auto)
    if jztree._jztree._cuda_usable():
        ids_gpu, _ = jztree.knn(pts, 4, device="cuda")
        assert np.array_equal(ids_cpu, ids_gpu)
    else:
        with pytest.raises(jztree.DeviceError, match="GPU") as raised:
            jztree.knn(pts, 4, device="cuda")
        assert isinstance(raised.value, ValueError) and isinstance(raised.value, RuntimeError)


def test_docstrings_and_stubs():
    for name in ("knn", "density", "fof", "emst", "hdbscan", "gravity"):
        fn = getattr(jztree, name)
        text = pydoc.render_doc(fn)
        assert "Parameters" in text and "Returns" in text and "comm" in text
    assert "mean interparticle spacing" in jztree.fof.__doc__
    assert "smaller index" in jztree.knn.__doc__  # the tie rule
    folder = os.path.dirname(jztree.__file__)
    stub = open(os.path.join(folder, "__init__.pyi")).read()
    assert all(f"def {name}(" in stub or f"class {name}(" in stub for name in jztree.__all__)
    assert os.path.exists(os.path.join(folder, "py.typed"))


def test_comm_without_mpi4py_object():
    pts = np.random.default_rng(2).random((50, 3))
    with pytest.raises((TypeError, RuntimeError, ImportError)):
        jztree.knn(pts, 2, comm="not a communicator")
