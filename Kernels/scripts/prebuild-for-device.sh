#!/usr/bin/env bash
# Builds the CUDA tests and benchmarks here (sm_90, device asserts on) and
# gathers them with their OpenMP runtime into one folder to carry to a GPU
# machine, so that a short device lease spends no time compiling (binaries
# built on Debian 12 run on the device's image as they are). The folder keeps the layout gpu-first-run.sh and gpu-check.sh
# expect of a build directory (tests/, bench/) plus lib/.
#   Kernels/scripts/prebuild-for-device.sh OUTDIR [TARGET...]
# e.g., from the repository root (gpubin/ is git-ignored), then carry it
# with the device tool:
#   Kernels/scripts/prebuild-for-device.sh gpubin TestKnn jz_bench_knn_cuda
# Default targets: every kernel test and every CUDA benchmark. The build
# directory is build-gpu/ beside OUTDIR (JZ_PREBUILD_DIR to change it).
# With TestFof among the targets, the CPU references of its larger sets are
# prepared here too (OUTDIR/references, a few kilobytes), so that the GPU run
# (--references) does not spend its lease recomputing them. JZ_PYTHON_MODULE
# (a built jztree package folder, e.g. build/python) adds the Python module
# and the shared libraries it needs beyond the C and C++ runtimes
# (OUTDIR/python, OUTDIR/python/lib) for Python/tests/device_check.py.
# Where the device's Python differs from this machine's, JZ_DEVICE_PYTHON
# (an interpreter of the device's version with its headers, e.g. a pyenv
# one) builds the module for it instead, standalone (cmake -S Python, no MPI)
# with CUDA for sm_90, in build-gpu-python/ beside OUTDIR; JZ_PYBIND11_DIR
# (the CMake folder of pybind11 2.12 or later) where the device's numpy is 2.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(dirname "$here")"
out="${1:?output folder}"
shift
build="${JZ_PREBUILD_DIR:-$(dirname "$(realpath -m "$out")")/build-gpu}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(TestKnn TestFof TestGravity TestEmst TestSphMaps TestSubhalo jz_bench_knn_cuda
  jz_bench_fof_cuda jz_bench_gravity_cuda jz_bench_emst_cuda jz_bench_sph_cuda)

export CUDACXX="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJZ_ENABLE_CUDA=ON \
  -DJZ_CUDA_ASSERTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"

# Only our folders are replaced: a peer built beside them (peers/, by
# build-arborx-cuda.sh) stays.
rm -rf "$out/tests" "$out/bench" "$out/lib"
mkdir -p "$out/tests" "$out/bench" "$out/lib"
first=""
for t in "${targets[@]}"; do
  for d in tests bench; do
    if [ -x "$build/$d/$t" ]; then
      cp "$build/$d/$t" "$out/$d/"
      first="${first:-$build/$d/$t}"
    fi
  done
done
# The OpenMP runtime the binaries were linked against (the device's image
# may have another or none); gpu-first-run.sh puts lib/ on the library path.
gomp="$(ldd "$first" 2>/dev/null | awk '/libgomp/ {print $3}' || true)"
if [ -n "$gomp" ]; then cp "$gomp" "$out/lib/"; fi

if [ -x "$out/tests/TestFof" ]; then
  rm -rf "$out/references"
  mkdir -p "$out/references"
  "$out/tests/TestFof" --prepare-references="$out/references" FofAllKindsLargerSets > /dev/null
fi

if [ -n "${JZ_DEVICE_PYTHON:-}" ]; then
  pybuild="$(dirname "$build")/build-gpu-python"
  cmake -S "$(dirname "$src")/Python" -B "$pybuild" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DJZ_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DPython3_EXECUTABLE="$JZ_DEVICE_PYTHON" \
    ${JZ_PYBIND11_DIR:+-Dpybind11_DIR="$JZ_PYBIND11_DIR"} -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
    > /dev/null
  cmake --build "$pybuild" --parallel "$(nproc)" --target jz_python
  JZ_PYTHON_MODULE="$pybuild/python"
fi
if [ -n "${JZ_PYTHON_MODULE:-}" ]; then
  rm -rf "$out/python"
  mkdir -p "$out/python/lib"
  cp -r "$JZ_PYTHON_MODULE/jztree" "$out/python/"
  for so in "$out"/python/jztree/*.so; do
    ldd "$so" | awk '$3 ~ /^\// && $1 !~ /^lib(c|m|stdc\+\+|gcc_s)\.so/ {print $3}' |
      xargs -r cp -L -t "$out/python/lib/"
  done
fi
du -sh "$out"
echo "carry it with the device tool (64 MiB at most with the working tree): carry [\"$out\"]"
