#!/usr/bin/env bash
# Install what is missing, build, and run every test (kernel and plugin) with CTest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/install-deps.sh
scripts/build.sh
cd build
# Without arguments: every test but the long ones (label "long": soak runs,
# cross-architecture builds); `./scripts/run-tests.sh -L long` runs those.
if [ $# -eq 0 ]; then
  set -- -LE long
fi
# Two tests at a time (JOBS): most are single-threaded pvpython and pvbatch
# runs; the MPI drivers and the sanitizer builds run alone (RUN_SERIAL).
ctest --output-on-failure -j "${JOBS:-2}" "$@"
