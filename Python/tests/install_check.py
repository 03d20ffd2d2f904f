"""The README's install command works: `cmake --install BUILD --component
python --prefix P` into a fresh prefix, then Debian's python3 imports jztree
from P's user site-packages, with nothing else on its path.

Usage: python3 install_check.py CMAKE BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile


def main():
    cmake, build = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run([cmake, "--install", build, "--component", "python", "--prefix", prefix],
                       check=True, stdout=subprocess.DEVNULL)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONUSERBASE"] = prefix  # what ~/.local is for a user
        code = ("import jztree, numpy as np; import os, sys; "
                "assert jztree.__file__.startswith(sys.argv[1]), jztree.__file__; "
                "ids, _ = jztree.knn(np.eye(3), 1); assert ids.ravel().tolist() == [0, 1, 2]; "
                "print('installed:', os.path.dirname(jztree.__file__))")
        subprocess.run([sys.executable, "-c", code, prefix], check=True, env=env)


if __name__ == "__main__":
    main()
