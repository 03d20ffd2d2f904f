#!/usr/bin/env bash
# Builds Kernels/ (CPU only) with AddressSanitizer and UndefinedBehaviorSanitizer
# and runs the kernel tests: any invalid access, leak or undefined behaviour
# fails the run. The CTest `sanitize` test (label `sanitize;long`) runs this.
# Usage: sanitize.sh KERNELS_SOURCE_DIR BUILD_DIR [extra ctest arguments]
set -euo pipefail
src="$(cd "$1" && pwd)"
build="$2"
shift 2
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJZ_ENABLE_CUDA=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build "$build" -j "${JOBS:-2}"
cd "$build"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --output-on-failure -j "${JOBS:-2}" -L kernels -LE "gpu|cross|sanitize" "$@"
