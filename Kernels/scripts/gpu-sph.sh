#!/usr/bin/env bash
# SPHProjection's deposition on the GPU (narrow columns a warp each, wide
# ones by tiles), for one device call of about 4 minutes with binaries
# built beforehand:
#   Kernels/scripts/prebuild-for-device.sh gpubin TestSphMaps jz_bench_sph_cuda
#   (device tool, carry ["gpubin"]) Kernels/scripts/gpu-sph.sh $PWD/gpubin LOGDIR
# Steps, each under its own limit, a verdict line each in LOGDIR/summary.txt:
#   1. TestSphMaps's cases on the GPU (projections against the test's
#      quadrature references, and against the CPU's sums);
#   2. the benchmark at 1e6 (1024 x 1024) with --verify;
#   3. the target: a 4096 x 4096 projection of 1e8 particles in 1 s;
#   4. memcheck on the GPU-against-CPU case (last: the slowest).
# Exits 1 if any step failed (a missed target included).
set -uo pipefail

# shellcheck source=gpu-steps.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpu-steps.sh"
prebuilt_run "${1:?folder of prebuilt binaries}" "${2:?log dir}"

step test-sph-maps 90 "$bin/tests/TestSphMaps" --backend=cuda
step sph-1e6 60 "$bin/bench/jz_bench_sph_cuda" 1e6 1024 clustered 3 --verify
step sph-1e8 150 "$bin/bench/jz_bench_sph_cuda" 1e8 4096 clustered 3 --pinned --target 1.0
step memcheck-sph 120 "$sanitizer" --tool memcheck --error-exitcode 3 \
  "$bin/tests/TestSphMaps" --backend=cuda ProjectionGpuEqualsCpu

echo "failed steps: $failed" >> "$summary"
exit $failed
