#!/usr/bin/env bash
# Install what is missing, build, and run every test (kernel and plugin) with CTest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure "$@"
