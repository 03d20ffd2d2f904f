#!/usr/bin/env bash
# Main job: install what is missing, build, then compute the kNN density of the
# bundled clustered particles (Data/clustered.vtp) with pvbatch, writing
# out/knn_density.vtp and out/knn_density.png.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/install-deps.sh
scripts/build.sh
# pvbatch on Debian renders through X: use a virtual display when none is set.
if [ -n "${DISPLAY:-}" ]; then
  pvbatch scripts/demo.py "$@"
else
  xvfb-run -a -s "-screen 0 1280x1024x24" pvbatch scripts/demo.py "$@"
fi
