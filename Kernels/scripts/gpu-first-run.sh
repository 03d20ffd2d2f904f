#!/usr/bin/env bash
# One device call of about 6-9 minutes for the CUDA paths that have never run on
# a GPU (gravity, the EMST, FoF's groups and catalogue on the device), sized
# for a session lent 15 minutes of device time in all: builds only what they
# need (sm_90, device-side post-conditions on), then, each step under its
# own time limit so that one hang cannot eat the rest:
#   1. their GPU test cases (each compares with the CPU or with direct sums);
#   2. compute-sanitizer memcheck on their small cases;
#   3. their benchmarks at 1e6 with --verify, then at 1e7 (stage times).
# Every step's output goes to LOGDIR/<step>.log and a one-line verdict to
# LOGDIR/summary.txt; exits 1 if any step failed. gpu-check.sh is the full
# check (all four sanitizers, kNN and FoF targets) for a session with more
# time.
#   Kernels/scripts/gpu-first-run.sh BUILD_DIR LOGDIR
# e.g. through the device tool, from the repository root:
#   Kernels/scripts/gpu-first-run.sh $PWD/build-gpu $OUT; tail -40 $OUT/summary.txt
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(dirname "$here")"
build="${1:?build dir}"
logs="${2:?log dir}"
mkdir -p "$logs"
export CUDACXX="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
summary="$logs/summary.txt"
: > "$summary"
# shellcheck source=gpu-steps.sh
. "$here/gpu-steps.sh"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt" >> "$summary"

# BUILD_DIR may hold binaries built elsewhere with the same options (tests/ and
# bench/, and lib/ with their OpenMP runtime): used as they are when they load
# here, which saves the lease the build's minutes.
prebuilt_loads() {
  [ -x "$build/tests/TestEmst" ] || return 1
  [ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  ! ldd "$build/tests/TestEmst" "$build/tests/TestGravity" "$build/tests/TestFof" 2>&1 | grep -q "not found"
}
if prebuilt_loads; then
  echo "prebuilt binaries in $build load here: no build" | tee -a "$summary"
else
  step configure 120 cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DJZ_ENABLE_CUDA=ON -DJZ_CUDA_ASSERTS=ON -DCMAKE_CUDA_ARCHITECTURES=90
  step build 360 cmake --build "$build" --parallel "$(nproc)" --target TestGravity TestEmst TestFof \
    jz_bench_gravity_cuda jz_bench_emst_cuda jz_bench_fof_cuda
fi
[ -x "$build/tests/TestEmst" ] || { echo "build failed: see $logs/build.log" | tee -a "$summary"; exit 1; }

# 1. The GPU cases: every case of TestGravity and TestEmst (those of the CPU
# alone print SKIP); without a usable GPU the run exits 77, which fails the
# step.
step test-gravity 120 "$build/tests/TestGravity" --backend=cuda
step test-emst 120 "$build/tests/TestEmst" --backend=cuda
step test-fof-halos 90 "$build/tests/TestFof" --backend=cuda FofHalos

# 2. memcheck on the small cases that reach every kernel.
sanitizer="$(dirname "$CUDACXX")/compute-sanitizer"
step memcheck-gravity 90 "$sanitizer" --tool memcheck --error-exitcode 3 \
  "$build/tests/TestGravity" --backend=cuda GpuSanitizerSmall
step memcheck-emst 90 "$sanitizer" --tool memcheck --error-exitcode 3 \
  "$build/tests/TestEmst" --backend=cuda GpuSanitizerSmall
step memcheck-fof-halos 60 "$sanitizer" --tool memcheck --error-exitcode 3 \
  "$build/tests/TestFof" --backend=cuda FofHalosSanitizerSmall

# 3. Benchmarks: the CPU's results at 1e6, then stage times at 1e7.
step bench-gravity-1e6 60 "$build/bench/jz_bench_gravity_cuda" 1e6 clustered 3 0.5 1e-4 1000 --verify
step bench-gravity-1e7 90 "$build/bench/jz_bench_gravity_cuda" 1e7 clustered 3 0.5 1e-4 1000 --pinned
step bench-emst-1e6 60 "$build/bench/jz_bench_emst_cuda" 1e6 clustered 1 0 --verify
step bench-emst-1e7 90 "$build/bench/jz_bench_emst_cuda" 1e7 uniform 2 0 --pinned
step bench-fof-1e7 60 "$build/bench/jz_bench_fof_cuda" 1e7 clustered double 1 --pinned --verify

echo "failed steps: $failed" >> "$summary"
exit $failed
