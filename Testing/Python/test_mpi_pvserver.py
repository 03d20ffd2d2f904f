#!/usr/bin/python3
"""Both filters on a parallel pvserver (mpiexec -n P pvserver on localhost, a
free port) driven by a pvpython client that loads the plugin on both sides,
fetches the results and compares them with a serial run
(mpi_pvserver_client.py). Server and client are bounded by timeouts and the
server is stopped at the end.

Usage: test_mpi_pvserver.py P [CLIENT.py]   (default mpi_pvserver_client.py;
the client's exit code is the test's, 125 included)
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mpi_env import mpiexec_command, pvpython, pvserver  # noqa: E402


def plugin_path():
    for d in os.environ.get("PV_PLUGIN_PATH", "").split(os.pathsep):
        if d and os.path.exists(os.path.join(d, "JZTree.so")):
            return os.path.join(d, "JZTree.so")
    return os.path.join(HERE, "..", "..", "build/lib/paraview-5.11/plugins/JZTree/JZTree.so")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    P = int(sys.argv[1])
    plugin = os.path.abspath(plugin_path())
    work = tempfile.mkdtemp(prefix="jz-pvserver-")
    port = free_port()
    log = open(os.path.join(work, "server.log"), "w+")
    cmd = ["timeout", "300"] + mpiexec_command(P) + [pvserver(), f"--server-port={port}"]
    print("+", " ".join(cmd), flush=True)
    # Neither side finds the plugin by itself: the client loads it on both.
    env = dict(os.environ)
    env.pop("PV_PLUGIN_PATH", None)
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                              env=env)
    rc = 1
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            log.seek(0)
            if "Accepting connection" in log.read():
                break
            if server.poll() is not None:
                break
            time.sleep(0.5)
        else:
            print("FAIL: pvserver did not start within 120 s")
        script = sys.argv[2] if len(sys.argv) > 2 else "mpi_pvserver_client.py"
        client = [pvpython(), os.path.join(HERE, script), str(port), plugin, work]
        print("+", " ".join(client), flush=True)
        try:
            rc = subprocess.run(client, timeout=240, env=env).returncode
        except subprocess.TimeoutExpired:
            print("FAIL: the client did not finish within 240 s")
            rc = 1
    finally:
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        log.seek(0)
        text = log.read()
        if rc != 0:
            print("server log:\n" + text[-4000:])
        log.close()
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()
