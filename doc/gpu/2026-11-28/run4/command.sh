#!/usr/bin/env bash
# This session's fourth device call (binaries carried in gpubin/): the EMST's
# edges split on the device and copied straight into the output vectors,
# checked (the GPU cases, memcheck, --verify against the CPU) and timed; and
# gravity's 1e7 uniform figure beside run 1's clustered one.
#   doc/gpu/2026-11-28/run4/command.sh LOGDIR
set -uo pipefail
B=$PWD/gpubin
L=${1:?log dir}
mkdir -p "$L"
export LD_LIBRARY_PATH=$B/lib
S=/usr/local/cuda/bin/compute-sanitizer
{
  timeout 60 $B/tests/TestEmst --backend=cuda Cuda; echo "test-emst rc=$?"
  timeout 40 $S --tool memcheck --error-exitcode 3 $B/tests/TestEmst --backend=cuda CudaSanitizerSmall
  echo "memcheck emst rc=$?"
} > "$L/emst-checks.log" 2>&1
{
  timeout 30 $B/bench/jz_bench_emst_cuda 1e6 clustered 1 0 --verify; echo "rc=$?"
  timeout 30 $B/bench/jz_bench_emst_cuda 1e7 uniform 2 0 --pinned; echo "rc=$?"
  timeout 30 $B/bench/jz_bench_emst_cuda 1e7 clustered 2 0 --pinned; echo "rc=$?"
  timeout 40 $B/bench/jz_bench_gravity_cuda 1e7 uniform 3 0.5 1e-4 1000 --pinned; echo "rc=$?"
} > "$L/bench.log" 2>&1
grep -hE "rc=|SUMMARY|FAIL" "$L/emst-checks.log"
grep -hE "rc=|RESULT|stage |VERIFY|ACCURACY" "$L/bench.log"
