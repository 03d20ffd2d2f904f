#!/usr/bin/env bash
# One device call over binaries built on the development machine and carried
# in gpubin/ (Kernels/scripts/prebuild-for-device.sh, JZ_PYTHON_MODULE set;
# gpubin/base holds the kNN benchmark of the commit before the leaf walk's
# change, for a side-by-side timing): the kNN leaf walk with sources staged
# in double against the one before it, and its tests and --verify; the SPH
# projection's first GPU run (tests, --verify, the 1e8 target); FoF's larger
# sets against prepared references; the Python module with device="cuda";
# then the sanitizers.
#   doc/gpu/2026-11-30/run1/command.sh LOGDIR
set -uo pipefail
. Kernels/scripts/gpu-steps.sh
b=$PWD/gpubin
prebuilt_run "$b" "${1:?log dir}"
knn=(16 uniform 5 --pinned)
step knn-1e7-before 45 "$b/base/jz_bench_knn_cuda" 1e7 "${knn[@]}"
step knn-1e7 60 "$b/bench/jz_bench_knn_cuda" 1e7 "${knn[@]}" --verify --target 0.040
step knn-1e7-before-again 45 "$b/base/jz_bench_knn_cuda" 1e7 "${knn[@]}"
step knn-1e7-again 45 "$b/bench/jz_bench_knn_cuda" 1e7 "${knn[@]}"
step test-knn 120 "$b/tests/TestKnn" --backend=cuda
step test-sph-maps 90 "$b/tests/TestSphMaps" --backend=cuda
step sph-1e6 60 "$b/bench/jz_bench_sph_cuda" 1e6 1024 clustered 3 --verify
step sph-1e8 150 "$b/bench/jz_bench_sph_cuda" 1e8 4096 clustered 3 --pinned --target 1.0
step fof-all-kinds-larger 90 "$b/tests/TestFof" --backend=cuda --references="$b/references" \
  FofAllKindsLargerSets
step python-device 90 env PYTHONPATH="$b/python" LD_LIBRARY_PATH="$b/python/lib:$LD_LIBRARY_PATH" \
  python3 Python/tests/device_check.py
step knn-1e8-before 60 "$b/base/jz_bench_knn_cuda" 1e8 16 uniform 3 --pinned
step knn-1e8 60 "$b/bench/jz_bench_knn_cuda" 1e8 16 uniform 3 --pinned --target 0.300
step knn-1e7-k64-before 60 "$b/base/jz_bench_knn_cuda" 1e7 64 uniform 3 --pinned
step knn-1e7-k64 60 "$b/bench/jz_bench_knn_cuda" 1e7 64 uniform 3 --pinned --target 0.120
step memcheck-sph 120 "$sanitizer" --tool memcheck --error-exitcode 3 \
  "$b/tests/TestSphMaps" --backend=cuda ProjectionGpuEqualsCpu
step racecheck-knn-batches 150 "$sanitizer" --tool racecheck --error-exitcode 3 \
  "$b/tests/TestKnn" --backend=cuda KnnLeafBatchesSanitizerSmall
echo "failed steps: $failed" >> "$summary"
