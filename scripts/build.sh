#!/usr/bin/env bash
# Configures and builds everything (kernels, plugin, tests) into build/,
# Release, with Ninja. CUDA is enabled automatically when nvcc is found.
# Usage: scripts/build.sh [extra cmake arguments]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc)}"
# CI (.ci/run sets JZ_CI=1) also checks that every output value is written
# and turns compiler warnings into errors.
ci=()
if [ -n "${JZ_CI:-}" ]; then
  ci=(-DJZ_OUTPUT_SENTINELS=ON -DJZ_WARNINGS_AS_ERRORS=ON)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${ci[@]}" "$@"
cmake --build build -j "$JOBS"
