#!/usr/bin/env bash
# The GPU checks still open (doc/gpu/README.md, "Open"),
# for one device call of about 4 minutes with binaries built beforehand
# (the module for the device's Python 3.12 and numpy 2, see prebuild-for-device.sh):
#   JZ_DEVICE_PYTHON=/path/to/python3.12 JZ_PYBIND11_DIR=/path/to/share/cmake/pybind11 \
#     Kernels/scripts/prebuild-for-device.sh gpubin TestSubhalo TestSphMaps
#   (device tool, carry ["gpubin"]) Kernels/scripts/gpu-open-checks.sh $PWD/gpubin LOGDIR
# Steps, each under its own limit, a verdict line each in LOGDIR/summary.txt:
#   1. SubhaloFinder with the GPU backend against the CPU, bit for bit (its
#      densities and candidates search on the GPU, its unbinding on the CPU);
#   2. when the Python module was carried (gpubin/python) and the machine's
#      python3 can load it: Python/tests/device_check.py, every function with
#      device="cuda" against device="cpu";
#   3. racecheck, synccheck and initcheck on the SPH projection's
#      GPU-against-CPU case (memcheck ran clean before).
# Exits 1 if any step failed.
set -uo pipefail

# shellcheck source=gpu-steps.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpu-steps.sh"
prebuilt_run "${1:?folder of prebuilt binaries}" "${2:?log dir}"

step subhalo-gpu-equals-cpu 120 "$bin/tests/TestSubhalo" --backend=cuda OnTheGpuEqualsTheCpu
if [ -d "$bin/python/jztree" ]; then
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  step python-device 90 env PYTHONPATH="$bin/python" LD_LIBRARY_PATH="$bin/python/lib:$LD_LIBRARY_PATH" \
    python3 "$here/../../Python/tests/device_check.py"
fi
for tool in racecheck synccheck initcheck; do
  step "$tool-sph" 120 "$sanitizer" --tool "$tool" --error-exitcode 3 \
    "$bin/tests/TestSphMaps" --backend=cuda ProjectionGpuEqualsCpu
done

echo "failed steps: $failed" >> "$summary"
exit $failed
