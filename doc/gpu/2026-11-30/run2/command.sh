#!/usr/bin/env bash
# The second device call over the binaries of run 1 (gpubin/base: TestKnn and
# the kNN benchmark of the commit before the leaf walk's change): TestKnn on
# the GPU again with its log, each failing case then rerun by the binary
# before the change; KnnLeafBatchesSanitizerSmall alone and under racecheck;
# the SPH projection's logs (the GPU against the CPU, memcheck, --verify at
# 1e6, the 1e8 target); the kNN at 1e8; the machine's python3; then ArborX
# beside ours (Kernels/scripts/gpu-peers.sh, 1e6 and 1e7).
#   doc/gpu/2026-11-30/run2/command.sh LOGDIR
set -uo pipefail
. Kernels/scripts/gpu-steps.sh
b=$PWD/gpubin
prebuilt_run "$b" "${1:?log dir}"
step test-knn 110 "$b/tests/TestKnn" --backend=cuda
for c in $(sed -n 's/^\[ FAIL \] //p' "$logs/test-knn.log"); do
  step "test-knn-before-$c" 60 "$b/base/TestKnn" --backend=cuda "$c"
done
step knn-leaf-batches-small 30 "$b/tests/TestKnn" --backend=cuda KnnLeafBatchesSanitizerSmall
step racecheck-knn-batches 60 "$sanitizer" --tool racecheck --error-exitcode 3 \
  "$b/tests/TestKnn" --backend=cuda KnnLeafBatchesSanitizerSmall
step sph-gpu-equals-cpu 30 "$b/tests/TestSphMaps" --backend=cuda ProjectionGpuEqualsCpu
step memcheck-sph 60 "$sanitizer" --tool memcheck --error-exitcode 3 \
  "$b/tests/TestSphMaps" --backend=cuda ProjectionGpuEqualsCpu
step sph-1e6 30 "$b/bench/jz_bench_sph_cuda" 1e6 1024 clustered 3 --verify
step sph-1e8 60 "$b/bench/jz_bench_sph_cuda" 1e8 4096 clustered 3 --pinned --target 1.0
step knn-1e8 40 "$b/bench/jz_bench_knn_cuda" 1e8 16 uniform 3 --pinned --target 0.300
step python-version 10 python3 -c "import sys, numpy; print(sys.version, numpy.__version__)"
echo "failed steps: $failed" >> "$summary"
Kernels/scripts/gpu-peers.sh "$b" "$logs/peers" 1e6 1e7
