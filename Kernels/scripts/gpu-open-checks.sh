#!/usr/bin/env bash
# The GPU checks still open (doc/gpu/README.md, "Open"),
# for one device call of about 4 minutes with binaries built beforehand:
#   JZ_PYTHON_MODULE=build/python \
#     Kernels/scripts/prebuild-for-device.sh gpubin TestKnn TestFof jz_bench_knn_cuda
# (SPHProjection's GPU checks: gpu-sph.sh.)
#   (device tool, carry ["gpubin"]) Kernels/scripts/gpu-open-checks.sh $PWD/gpubin LOGDIR
# Steps, each under its own limit, a verdict line each in LOGDIR/summary.txt:
#   1. TestFof's FofAllKindsLargerSets on the GPU (200,000 points, every kind)
#      against the references prepared with the binaries;
#   2. the kNN targets: 1e7 (0.040 s) and 1e8 (0.300 s), K = 16, with --verify
#      at 1e7 (ids and distances identical to the CPU's);
#   3. when the Python module was carried (gpubin/python) and the machine's
#      python3 can load it: Python/tests/device_check.py, every function with
#      device="cuda" against device="cpu";
#   4. racecheck on TestKnn's KnnLeafBatchesSanitizerSmall (the batches at a
#      size racecheck finishes; KnnLeafBatches itself never did).
# Exits 1 if any step failed (a missed target included).
set -uo pipefail

# shellcheck source=gpu-steps.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpu-steps.sh"
prebuilt_run "${1:?folder of prebuilt binaries}" "${2:?log dir}"

step fof-all-kinds-larger 90 "$bin/tests/TestFof" --backend=cuda \
  --references="$bin/references" FofAllKindsLargerSets
step knn-1e7 60 "$bin/bench/jz_bench_knn_cuda" 1e7 16 uniform 5 --pinned --verify --target 0.040
step knn-1e8 90 "$bin/bench/jz_bench_knn_cuda" 1e8 16 uniform 3 --pinned --target 0.300
if [ -d "$bin/python/jztree" ]; then
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  step python-device 90 env PYTHONPATH="$bin/python" LD_LIBRARY_PATH="$bin/python/lib:$LD_LIBRARY_PATH" \
    python3 "$here/../../Python/tests/device_check.py"
fi
step racecheck-knn-batches 150 "$sanitizer" --tool racecheck --error-exitcode 3 \
  "$bin/tests/TestKnn" --backend=cuda KnnLeafBatchesSanitizerSmall

echo "failed steps: $failed" >> "$summary"
exit $failed
