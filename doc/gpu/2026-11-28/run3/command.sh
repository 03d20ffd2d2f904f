#!/usr/bin/env bash
# This session's third device call (binaries built on the development machine,
# carried in gpubin/): the FoF catalogue's warp per group checked (the GPU
# cases against the CPU bit for bit, memcheck and racecheck) and timed at
# 1e7 and 512^3, the kNN targets on the H200, then the whole CUDA kNN and
# FoF tests for the rest of the call.
#   doc/gpu/2026-11-28/run3/command.sh LOGDIR
set -uo pipefail
B=$PWD/gpubin
L=${1:?log dir}
mkdir -p "$L"
export LD_LIBRARY_PATH=$B/lib
S=/usr/local/cuda/bin/compute-sanitizer
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$L/gpu.txt" 2>&1
{
  timeout 90 $B/tests/TestFof --backend=cuda FofHalos; echo "test-fof-halos rc=$?"
  for t in memcheck racecheck; do
    timeout 60 $S --tool $t --error-exitcode 3 $B/tests/TestFof --backend=cuda FofHalosSanitizerSmall
    echo "$t fof-halos rc=$?"
  done
} > "$L/fof-halos-checks.log" 2>&1
{
  timeout 60 $B/bench/jz_bench_fof_cuda 1e7 clustered double 3 --pinned --verify; echo "rc=$?"
  timeout 80 $B/bench/jz_bench_fof_cuda 134217728 clustered float 2 --pinned; echo "rc=$?"
  timeout 80 $B/bench/jz_bench_fof_cuda 134217728 clustered double 2 --pinned; echo "rc=$?"
  timeout 40 $B/bench/jz_bench_knn_cuda 1e7 16 uniform 5 --pinned; echo "rc=$?"
  timeout 60 $B/bench/jz_bench_knn_cuda 1e8 16 uniform 3 --pinned; echo "rc=$?"
} > "$L/bench.log" 2>&1
export OMP_NUM_THREADS=8
timeout 170 $B/tests/TestKnn --backend=cuda > "$L/test-knn-cuda.log" 2>&1 &
timeout 170 $B/tests/TestFof --backend=cuda > "$L/test-fof-cuda.log" 2>&1 &
wait
grep -hE "rc=|SUMMARY|FAIL" "$L/fof-halos-checks.log"
grep -hE "rc=|RESULT|stages|VERIFY|largest" "$L/bench.log"
grep -hE "FAIL|passed" "$L"/test-*-cuda.log
