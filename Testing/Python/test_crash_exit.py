"""A crash never becomes a hang: after heap corruption (a double free that
glibc detects inside free, with the allocator's lock held) ParaView's crash
handler would wait forever on that lock while printing its stack trace. With
the plugin's watchdog armed by a filter run, pvpython, and pvbatch under
mpiexec, must exit, with a failure status, within the watchdog's grace time.

Run with Debian's python3:  test_crash_exit.py pvpython|pvbatch
(the child mode, `child`, is what pvpython/pvbatch run)."""
import os
import subprocess
import sys
import time

import mpi_env

HERE = os.path.dirname(os.path.abspath(__file__))
# The watchdog's grace time is 10 s; start-up and the crash handler's own
# printing take a few more. A hang is stopped (and fails) at the deadline.
DEADLINE = 90


def child():
    """Arms the watchdog with a filter run, then corrupts the heap."""
    import ctypes

    sys.path.insert(0, HERE)
    import jztest

    # A source every rank of pvbatch runs alike.
    points = jztest.simple.PointSource(NumberOfPoints=300, Radius=1)
    jztest.KNNDensity(Input=points, NumberOfNeighbors=8).UpdatePipeline()
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    # Beyond the thread cache's sizes, so that free() checks the chunk under
    # the arena lock and aborts while holding it.
    block = libc.malloc(4000)
    keep = libc.malloc(4000)
    libc.free(ctypes.c_void_p(block))
    libc.free(ctypes.c_void_p(block))
    print("the double free went unnoticed", keep, flush=True)
    sys.exit(3)


def run(command):
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        print(out[-3000:])
        print(f"FAIL: {' '.join(command)} still ran after {DEADLINE} s (a hang)")
        return False
    elapsed = time.monotonic() - start
    print(out[-2000:])
    ok = proc.returncode != 0 and proc.returncode != 3
    print(f"{'ok' if ok else 'FAIL'}: {' '.join(command)} exited with status "
          f"{proc.returncode} after {elapsed:.1f} s")
    return ok


def main():
    if sys.argv[1:2] == ["child"]:
        child()
        return 0
    which = sys.argv[1] if len(sys.argv) > 1 else "pvpython"
    script = os.path.abspath(__file__)
    if which == "pvpython":
        command = [mpi_env.pvpython(), script, "child"]
    else:
        command = mpi_env.mpiexec_command(2) + [mpi_env.pvbatch(), script, "child"]
    return 0 if run(command) else 1


if __name__ == "__main__":
    sys.exit(main())
