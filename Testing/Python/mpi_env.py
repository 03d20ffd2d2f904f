"""How the MPI tests start processes: mpiexec (OpenMPI) oversubscribed on a
small machine, as root inside a container, over shared memory and TCP on the
loopback interface only."""
import os
import shutil
import subprocess


def pvbatch():
    return os.environ.get("JZ_PVBATCH") or shutil.which("pvbatch") or "/usr/bin/pvbatch"


def pvserver():
    return os.environ.get("JZ_PVSERVER") or shutil.which("pvserver") or "/usr/bin/pvserver"


def pvpython():
    return os.environ.get("JZ_PVPYTHON") or shutil.which("pvpython") or "/usr/bin/pvpython"


def mpiexec_command(n):
    exe = os.environ.get("JZ_MPIEXEC") or shutil.which("mpiexec") or "mpiexec"
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    os.environ.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    os.environ.setdefault("OMPI_MCA_btl", "self,vader,tcp")
    os.environ.setdefault("OMPI_MCA_btl_tcp_if_include", "lo")
    os.environ.setdefault("OMPI_MCA_oob_tcp_if_include", "lo")
    os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return [exe, "--oversubscribe", "-n", str(n)]


def run_pvbatch_ranks(cmd, P, check, env=None, timeout=300):
    """Runs an `mpiexec -n P pvbatch` command line; checks that it ends in
    time and exits 0 (printing the end of its output otherwise). Returns the
    finished process when both hold, else None."""
    print("+", " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=env)
    except subprocess.TimeoutExpired:
        check(False, f"mpiexec pvbatch finished within {timeout} s (no hang)")
        return None
    if not check(p.returncode == 0, f"mpiexec -n {P} pvbatch run"):
        print(p.stdout[-5000:])
        return None
    return p
