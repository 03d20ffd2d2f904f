#!/usr/bin/env bash
# Cross-builds Kernels/ for aarch64 (Debian's g++-aarch64-linux-gnu, no CUDA)
# and runs the kernel tests under qemu-user: the portable code paths (no x86
# intrinsics) must build and give the same results as on x86-64, which the
# tests check against brute-force references. The CTest `cross` test (label
# `cross;long`) runs this; scripts/install-deps.sh installs the tools.
# Usage: cross-aarch64.sh KERNELS_SOURCE_DIR BUILD_DIR [extra ctest arguments]
set -euo pipefail
src="$(cd "$1" && pwd)"
build="$2"
shift 2
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "cross-aarch64: $tool is not installed (scripts/install-deps.sh installs it); skipped"
    exit 77
  fi
done
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$src/scripts/aarch64-linux-gnu.cmake" -DJZ_ENABLE_CUDA=OFF
cmake --build "$build" -j "${JOBS:-2}"
aarch64-linux-gnu-readelf -h "$build/tests/TestKnn" | grep -q AArch64 || {
  echo "cross-aarch64: the tests were not built for aarch64" >&2
  exit 1
}
cd "$build"
# The kernel tests under qemu (the CUDA ones skip; the cross and sanitizer
# builds are not nested).
ctest --output-on-failure -j "${JOBS:-2}" -L kernels -LE "gpu|cross|sanitize" "$@"
