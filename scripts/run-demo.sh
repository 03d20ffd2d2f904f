#!/usr/bin/env bash
# Main job: install what is missing, build, then compute the kNN density of the
# bundled clustered particles (Data/clustered.vtp) with pvbatch, writing
# out/knn_density.vtp and out/knn_density.png.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/install-deps.sh
scripts/build.sh
# pvbatch on Debian renders through X: a virtual display when none is set.
scripts/with-display.sh pvbatch scripts/demo.py "$@"
