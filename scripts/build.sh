#!/usr/bin/env bash
# Configures and builds everything (kernels, plugin, tests) into build/,
# Release, with Ninja. CUDA is enabled automatically when nvcc is found.
# Usage: scripts/build.sh [extra cmake arguments]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc)}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j "$JOBS"
