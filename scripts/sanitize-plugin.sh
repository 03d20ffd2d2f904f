#!/usr/bin/env bash
# Builds the plugin (CPU only) with AddressSanitizer and UndefinedBehaviorSanitizer
# into BUILD_DIR and runs plugin tests with it in pvpython: the randomised
# hostile cases and the filters' option and error sections. ParaView itself is
# not instrumented; the sanitizer runtimes are preloaded, leak checks are off
# (ParaView and Python keep their allocations to the end). Any invalid access
# or undefined behaviour in our code fails the run. CTest: plugin.sanitize
# (labels sanitize;long).
# Usage: scripts/sanitize-plugin.sh BUILD_DIR [NUMBER_OF_HOSTILE_CASES]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(mkdir -p "$1" && cd "$1" && pwd)"
cases="${2:-1000}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
cmake -S "$ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJZ_ENABLE_CUDA=OFF \
  -DBUILD_TESTING=OFF -DJZ_BUILD_KERNEL_TESTS=OFF -DJZ_OUTPUT_SENTINELS=ON \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build "$build" -j "${JOBS:-2}"

export PV_PLUGIN_PATH="$build/lib/paraview-5.11/plugins/JZTree"
export LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:handle_segv=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export OMP_NUM_THREADS=2
py="$ROOT/Testing/Python"
cd "$ROOT"
status=0
run() {
  echo "+ pvpython $*"
  if ! pvpython "$@" > "$build/last.log" 2>&1; then
    tail -60 "$build/last.log"
    echo "FAIL: pvpython $*"
    status=1
  fi
  grep -E "ERROR: AddressSanitizer|runtime error:" "$build/last.log" && status=1 || true
}
run "$py/test_hostile.py" "$cases" 3
for section in periodic query density globalids errors empty neighbors composite; do
  run "$py/test_knn_options.py" "$section"
done
for section in clustered catalogue errors empty; do
  run "$py/test_fof.py" "$section"
done
for section in mutual errors hdbscan hdbscan_duplicates; do
  run "$py/test_emst.py" "$section"
done
for section in clustered errors; do
  run "$py/test_gravity.py" "$section"
done
run "$py/test_halo_properties.py" clustered
exit $status
