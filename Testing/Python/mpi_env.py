"""How the MPI tests start processes: mpiexec (OpenMPI) oversubscribed on a
small machine, as root inside a container, over shared memory and TCP on the
loopback interface only."""
import os
import shutil


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
