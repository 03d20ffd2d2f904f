#!/usr/bin/env bash
# Builds Kernels/ (CPU only) with AddressSanitizer and UndefinedBehaviorSanitizer
# and runs the kernel tests: any invalid access, leak or undefined behaviour
# fails the run. The CTest tests kernels.sanitize (the default run: every
# kernel test but the long soaks) and kernels.sanitize.full (label `long`:
# the soaks too) run this.
# Usage: sanitize.sh KERNELS_SOURCE_DIR BUILD_DIR [quick|full] [extra ctest arguments]
set -euo pipefail
src="$(cd "$1" && pwd)"
build="$2"
scope="${3:-full}"
shift $(( $# >= 3 ? 3 : 2 ))
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
# -O1, not the release build's -O3: it builds in about half the time, runs
# the tests about as fast, and checks that the SPH maps' portable loops fuse
# as their intrinsic twins do below -O2 too (JZ_SPH_FUSED_OPTIONS,
# Kernels/CMakeLists.txt). No benchmarks: the tests do not run them.
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJZ_ENABLE_CUDA=OFF \
  -DJZ_BUILD_KERNEL_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build "$build" -j "${JOBS:-2}"
cd "$build"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
excluded="gpu|cross|sanitize"
if [ "$scope" = quick ]; then
  excluded="$excluded|long"
fi
ctest --output-on-failure -j "${JOBS:-2}" -L kernels -LE "$excluded" "$@"
