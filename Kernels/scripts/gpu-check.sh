#!/usr/bin/env bash
# Builds jz-tree's kernels standalone with CUDA on a GPU machine and runs all
# kernel tests (CPU and GPU), compute-sanitizer on the CUDA test, and the GPU
# benchmark. Needs only nvcc, CMake >= 3.20, ninja (or make) and a C++17
# compiler with OpenMP: no ParaView, no package registry, no GoogleTest.
#   Kernels/scripts/gpu-check.sh [build-dir]      (default /tmp/jz-kernels-gpu)
# Environment: JZ_BENCH_N (default 1e7), JZ_BENCH_K (16), JZ_BENCH_FOF_N (512^3),
# JZ_SKIP_SANITIZER=1,
# JZ_SKIP_BENCH=1, CUDACXX (path to nvcc, default /usr/local/cuda/bin/nvcc).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(dirname "$here")"
build="${1:-/tmp/jz-kernels-gpu}"
export CUDACXX="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
export PATH="$(dirname "$CUDACXX"):$PATH"

echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "(nvidia-smi not found)"

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

echo "== configure and build ($build)"
cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DJZ_ENABLE_CUDA=ON
cmake --build "$build" --parallel "$(nproc)"

echo "== kernel tests (labels kernels and gpu)"
ctest --test-dir "$build" --output-on-failure
# The GPU test must have run, not been skipped, on a GPU machine.
if ! "$build/tests/TestKnnCuda" auto_picks_cuda; then
  echo "TestKnnCuda did not pass on this machine (exit code 77 means: no usable GPU)" >&2
  exit 1
fi
if ! "$build/tests/TestFofCuda" auto_picks_cuda; then
  echo "TestFofCuda did not pass on this machine (exit code 77 means: no usable GPU)" >&2
  exit 1
fi

if [ "${JZ_SKIP_SANITIZER:-0}" != 1 ]; then
  sanitizer="$(dirname "$CUDACXX")/compute-sanitizer"
  command -v "$sanitizer" >/dev/null 2>&1 || sanitizer=compute-sanitizer
  echo "== compute-sanitizer memcheck and racecheck (small cases)"
  "$sanitizer" --tool memcheck --error-exitcode 3 "$build/tests/TestKnnCuda" small_
  "$sanitizer" --tool racecheck --error-exitcode 3 "$build/tests/TestKnnCuda" small_
  "$sanitizer" --tool memcheck --error-exitcode 3 "$build/tests/TestFofCuda" small_
fi

if [ "${JZ_SKIP_BENCH:-0}" != 1 ]; then
  n="${JZ_BENCH_N:-1e7}"
  k="${JZ_BENCH_K:-16}"
  echo "== GPU benchmark N=$n K=$k (density only, then pinned, then with neighbour lists)"
  "$build/bench/jz_bench_knn_cuda" "$n" "$k" uniform 5 --verify
  "$build/bench/jz_bench_knn_cuda" "$n" "$k" uniform 5 --pinned
  "$build/bench/jz_bench_knn_cuda" "$n" "$k" clustered 5 --pinned
  "$build/bench/jz_bench_knn_cuda" 1e6 "$k" uniform 3 --lists
  fof_n="${JZ_BENCH_FOF_N:-134217728}"
  echo "== GPU FoF benchmark N=$fof_n clustered (512^3 target on an H100: 0.6 s with the host catalogue)"
  "$build/bench/jz_bench_fof_cuda" 1e6 clustered float 1 --verify
  "$build/bench/jz_bench_fof_cuda" "$fof_n" clustered float 3 --pinned
fi
echo "== gpu-check done"
