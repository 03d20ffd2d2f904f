#!/usr/bin/env bash
# Builds jz-tree's kernels standalone with CUDA on a GPU machine (device-side
# post-conditions on) and runs: every kernel test, the GPU instantiations of
# the kNN, FoF, gravity and EMST tests (which must run, not skip),
# compute-sanitizer's memcheck, racecheck, synccheck and initcheck on all four,
# and the GPU benchmarks against their targets (gravity: accuracy on a sample
# against direct sums; EMST: the CPU's edges bit for bit; no time targets for
# these two). Needs only nvcc, CMake >= 3.20, ninja (or
# make) and a C++17 compiler with OpenMP: no ParaView, no package registry, no
# GoogleTest. Runs everything, then exits 1 if any step failed or a benchmark
# missed its target (the failures are listed last).
#   Kernels/scripts/gpu-check.sh [build-dir]      (default /tmp/jz-kernels-gpu)
# Environment: JZ_BENCH_N (default 1e7), JZ_BENCH_K (16), JZ_BENCH_FOF_N (512^3),
# JZ_BENCH_GRAVITY_N (1e7), JZ_ONLY_GRAVITY=1 (the gravity steps alone: its
# tests, sanitizer cases and benchmark), JZ_BENCH_EMST_N (1e7),
# JZ_ONLY_EMST=1 (the EMST steps alone, likewise),
# JZ_SKIP_TESTS=1, JZ_SKIP_SANITIZER=1, JZ_SKIP_BENCH=1, CUDACXX (path to nvcc,
# default /usr/local/cuda/bin/nvcc), CUDAARCHS (default 80;90), JZ_JZTREE_PATH
# (PYTHONPATH of a jz-tree reference built by build-jztree-reference.sh: the
# benchmarks then also time it on the same points, side by side).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(dirname "$here")"
build="${1:-/tmp/jz-kernels-gpu}"
export CUDACXX="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
export PATH="$(dirname "$CUDACXX"):$PATH"

failures=()
# Runs a step; a non-zero exit is recorded (2 from a benchmark: target missed).
step() {
  echo "-- $*"
  "$@"
  local rc=$?
  if [ $rc -ne 0 ]; then
    failures+=("exit $rc: $*")
  fi
  return 0
}

# With JZ_JZTREE_PATH set: `dump NAME` is the benchmark flag that writes the
# points to $build/NAME.f32, and `reference MODE FILE ARGS...` times the
# jz-tree reference on them (bench/jztree_reference.py); both do nothing
# otherwise. (Used below since e587b20 but never defined until now.)
dump() {
  if [ -n "${JZ_JZTREE_PATH:-}" ]; then echo "--dump $build/$1.f32"; fi
}
reference() {
  if [ -n "${JZ_JZTREE_PATH:-}" ]; then
    step env PYTHONPATH="$JZ_JZTREE_PATH" python3 "$src/bench/jztree_reference.py" "$@"
  fi
  return 0
}

echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "(nvidia-smi not found)"

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

echo "== configure and build ($build)"
cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DJZ_ENABLE_CUDA=ON \
  -DJZ_CUDA_ASSERTS=ON || exit 1
targets=()
if [ "${JZ_ONLY_GRAVITY:-0}" = 1 ]; then targets=(--target TestGravity jz_bench_gravity_cuda); fi
if [ "${JZ_ONLY_EMST:-0}" = 1 ]; then targets=(--target TestEmst jz_bench_emst_cuda); fi
# EMST only: every other step is left out.
only_emst() { [ "${JZ_ONLY_EMST:-0}" = 1 ]; }
cmake --build "$build" --parallel "$(nproc)" "${targets[@]}" || exit 1

if [ "${JZ_SKIP_TESTS:-0}" != 1 ]; then
  echo "== kernel tests (labels kernels and gpu)"
  [ "${JZ_ONLY_GRAVITY:-0}" = 1 ] || only_emst || step ctest --test-dir "$build" --output-on-failure -LE long --parallel 4
  # The GPU instantiations must have run, not been skipped (77: no usable GPU).
  [ "${JZ_ONLY_GRAVITY:-0}" = 1 ] || only_emst || for t in TestKnn TestFof; do
    step "$build/tests/$t" --backend=cuda AutoBackend
  done
  # FoF end to end on the device (computeFofHalos: GroupId, GroupSize and the
  # catalogue against the CPU bit for bit).
  [ "${JZ_ONLY_GRAVITY:-0}" = 1 ] || step "$build/tests/TestFof" --backend=cuda FofHalos
  # Gravity on the GPU: every case (those of the CPU alone print SKIP), each
  # against direct sums and the CPU.
  only_emst || step "$build/tests/TestGravity" --backend=cuda
  # The EMST on the GPU: every case, the device self-checks on
  # (JZ_CUDA_ASSERTS); each compares with the CPU bit for bit.
  [ "${JZ_ONLY_GRAVITY:-0}" = 1 ] || step "$build/tests/TestEmst" --backend=cuda
fi

if [ "${JZ_SKIP_SANITIZER:-0}" != 1 ]; then
  sanitizer="$(dirname "$CUDACXX")/compute-sanitizer"
  command -v "$sanitizer" >/dev/null 2>&1 || sanitizer=compute-sanitizer
  # Small cases that reach every kernel: K <= 32 and K > 32 lists (shared and
  # global memory), leaf batches, separate queries; FoF at every plane.
  knn_cases=(KnnSmallSizesAndKEqualsN KnnLeafBatches KnnVeryLargeK)
  fof_cases=(FofMatchesBruteForceFloat FofLatticeAtLinkingLength FofPeriodicChains
    FofHalosSanitizerSmall)
  # Gravity: two planes, point masses, direct sums, queries from sources,
  # leaf batches; and bulk duplicates with the repeatability check.
  gravity_cases=(GpuSanitizerSmall BulkDuplicatesAreSkippedPairs GpuRunsAreRepeatable)
  # EMST: node planes and leaves, mutual reachability (core distances from
  # the kNN), periodic, a bulk duplicate, leaf batches, a finite maximum length.
  emst_cases=(GpuSanitizerSmall)
  if [ "${JZ_ONLY_GRAVITY:-0}" = 1 ]; then knn_cases=(); fof_cases=(); emst_cases=(); fi
  if only_emst; then knn_cases=(); fof_cases=(); gravity_cases=(); fi
  # One tool's cases in sequence; the four tools run side by side, each with
  # its own log (racecheck alone takes minutes).
  # run_cases TOOL TEST CASE...: the cases of one test binary under one tool.
  run_cases() {
    local tool=$1 test=$2 rc=0
    shift 2
    for c in "$@"; do
      echo "-- $tool $test $c"
      "$sanitizer" --tool "$tool" --error-exitcode 3 "$build/tests/$test" --backend=cuda "$c" || rc=1
    done
    return $rc
  }
  run_tool() {
    local rc=0
    run_cases "$1" TestKnn "${knn_cases[@]}" || rc=1
    run_cases "$1" TestFof "${fof_cases[@]}" || rc=1
    run_cases "$1" TestGravity "${gravity_cases[@]}" || rc=1
    run_cases "$1" TestEmst "${emst_cases[@]}" || rc=1
    return $rc
  }
  tools=(memcheck racecheck synccheck initcheck)
  pids=()
  for tool in "${tools[@]}"; do
    run_tool "$tool" > "$build/sanitizer-$tool.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!tools[@]}"; do
    wait "${pids[$i]}" || failures+=("compute-sanitizer ${tools[$i]}: see $build/sanitizer-${tools[$i]}.log")
    echo "== compute-sanitizer ${tools[$i]}"
    grep -E "^-- |SUMMARY|passed" "$build/sanitizer-${tools[$i]}.log"
  done
fi

if [ "${JZ_SKIP_BENCH:-0}" != 1 ] && ! only_emst; then
  gn="${JZ_BENCH_GRAVITY_N:-1e7}"
  # Exit 1: the sample broke the accuracy contract; 77: no GPU (a failure here).
  echo "== GPU gravity benchmark N=$gn theta 0.5 (stage times; p99 errors at 1000 particles vs direct sums)"
  step "$build/bench/jz_bench_gravity_cuda" 1e6 clustered 3 0.5 1e-4 1000 --verify
  step "$build/bench/jz_bench_gravity_cuda" "$gn" uniform 3 0.5 0 1000 --pinned
  step "$build/bench/jz_bench_gravity_cuda" "$gn" clustered 3 0.5 1e-4 1000 --pinned
fi

if [ "${JZ_SKIP_BENCH:-0}" != 1 ] && [ "${JZ_ONLY_GRAVITY:-0}" != 1 ]; then
  en="${JZ_BENCH_EMST_N:-1e7}"
  # Exit 1: --verify found an edge that differs from the CPU's; 77: no GPU
  # (a failure here). No time target.
  echo "== GPU EMST benchmark N=$en (stage times per round; --verify: the CPU's edges bit for bit at 1e6)"
  step "$build/bench/jz_bench_emst_cuda" 1e6 uniform 1 0 --verify
  step "$build/bench/jz_bench_emst_cuda" 1e6 clustered 1 0 --verify
  step "$build/bench/jz_bench_emst_cuda" 1e6 clustered 1 5 --verify
  step "$build/bench/jz_bench_emst_cuda" "$en" uniform 2 0 --pinned
  step "$build/bench/jz_bench_emst_cuda" "$en" clustered 2 0 --pinned
  step "$build/bench/jz_bench_emst_cuda" "$en" clustered 2 5 --pinned
fi

if [ "${JZ_SKIP_BENCH:-0}" != 1 ] && [ "${JZ_ONLY_GRAVITY:-0}" != 1 ] && ! only_emst; then
  n="${JZ_BENCH_N:-1e7}"
  k="${JZ_BENCH_K:-16}"
  # Targets apply to page-locked host arrays (transfers at the bus's speed);
  # the pageable runs (as a filter passes VTK arrays) are printed beside them.
  echo "== GPU kNN benchmark N=$n K=$k (target 0.040 s at 1e7, input-order output included)"
  step "$build/bench/jz_bench_knn_cuda" "$n" "$k" uniform 5 --verify
  step "$build/bench/jz_bench_knn_cuda" "$n" "$k" uniform 5 --pinned --target 0.040 $(dump knn1e7)
  reference knn "$build/knn1e7.f32" "$k" 5
  step "$build/bench/jz_bench_knn_cuda" "$n" "$k" clustered 5 --pinned
  step "$build/bench/jz_bench_knn_cuda" 1e6 "$k" uniform 3 --lists
  step "$build/bench/jz_bench_knn_cuda" 1e6 64 clustered 3 --lists --verify
  echo "== GPU kNN benchmark N=1e8 K=$k (target 0.300 s)"
  step "$build/bench/jz_bench_knn_cuda" 1e8 "$k" uniform 3 --pinned --target 0.300 $(dump knn1e8)
  reference knn "$build/knn1e8.f32" "$k" 3
  rm -f "$build"/knn1e*.f32
  fof_n="${JZ_BENCH_FOF_N:-134217728}"
  echo "== GPU FoF benchmark N=$fof_n clustered (target 0.6 s at 512^3 with the catalogue, all on the GPU)"
  # --verify: GroupId, GroupSize and the catalogue against the CPU, bit for bit.
  step "$build/bench/jz_bench_fof_cuda" 1e6 clustered float 1 --verify
  step "$build/bench/jz_bench_fof_cuda" 1e7 clustered double 1 --pinned --verify
  step "$build/bench/jz_bench_fof_cuda" "$fof_n" clustered float 3 --pinned --target 0.6 $(dump fof)
  # b = 0.2 in the unit periodic box, as the benchmark uses.
  reference fof "$build/fof.f32" "$(python3 -c "print(0.2 / round($fof_n ** (1 / 3)))")" 1.0 3
  rm -f "$build/fof.f32"
  step "$build/bench/jz_bench_fof_cuda" "$fof_n" clustered float 2
fi

echo "== gpu-check done"
if [ ${#failures[@]} -ne 0 ]; then
  echo "FAILED steps (${#failures[@]}):" >&2
  printf '  %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "all steps passed"
