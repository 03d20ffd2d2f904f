#!/usr/bin/env bash
# The third device call: TestKnn on the GPU after the CPU's vectorised
# density weights were brought back to the kernel's own formula (the GPU
# evaluates jz::cubicSplineW; run 2 found the densities a last bit apart),
# KnnLeafBatchesSanitizerSmall under racecheck, and the kNN at 1e7, clustered,
# with --verify (smoothing lengths and densities, float32).
#   doc/gpu/2026-11-30/run3/command.sh LOGDIR
set -uo pipefail
. Kernels/scripts/gpu-steps.sh
b=$PWD/gpubin
prebuilt_run "$b" "${1:?log dir}"
step test-knn 110 "$b/tests/TestKnn" --backend=cuda
step racecheck-knn-batches 40 "$sanitizer" --tool racecheck --error-exitcode 3 \
  "$b/tests/TestKnn" --backend=cuda KnnLeafBatchesSanitizerSmall
step knn-1e7-lists 30 "$b/bench/jz_bench_knn_cuda" 1e7 16 clustered 3 --pinned --lists --verify
echo "failed steps: $failed" >> "$summary"
