#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build and test JZ-Tree for ParaView.
# Fast no-op when everything is installed; otherwise apt-get (as root, or via
# sudo). Non-interactive.
set -euo pipefail

PACKAGES=(
  # build tools
  cmake ninja-build g++ xvfb x11-utils
  # ParaView 5.11 with its development files and Python
  paraview paraview-dev python3-paraview
  # what find_package(ParaView) looks for through VTK's and ParaView's modules
  qtbase5-dev qttools5-dev libqt5svg5-dev libqt5opengl5-dev libqt5x11extras5-dev
  qtxmlpatterns5-dev-tools libxml2-dev libhdf5-openmpi-dev libnetcdf-dev libgdal-dev
  libeigen3-dev libgl-dev libutfcpp-dev libogg-dev libtheora-dev libavcodec-dev
  libavformat-dev libavutil-dev libswscale-dev libgl2ps-dev libglew-dev
  libdouble-conversion-dev
  # MPI (ParaView is built with it)
  openmpi-bin libopenmpi-dev
  # benchmark reference and test references
  libnanoflann-dev python3-numpy python3-scipy python3-h5py
  # the scaling figures (Testing/Benchmarks/bench_scaling.py)
  python3-matplotlib
  # the jztree Python module (Python/): its build, its tests, comm= under MPI
  python3-dev pybind11-dev python3-pybind11 python3-pytest python3-mpi4py
  # the `cross` test: Kernels/ cross-built for aarch64 and run under qemu-user
  g++-aarch64-linux-gnu qemu-user
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install-deps: missing ${missing[*]}; run as root or install sudo" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
