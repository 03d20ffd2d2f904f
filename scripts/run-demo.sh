#!/usr/bin/env bash
# Main job: install what is missing, build, then compute the kNN density and
# the friends-of-friends halos of the bundled clustered particles
# (Data/clustered.vtp) with pvbatch, writing out/knn_density.vtp,
# out/knn_density.png, out/halo_slab.png and out/halos.csv, and printing a
# summary (points, groups, largest group, time per filter, device).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/install-deps.sh
scripts/build.sh
# pvbatch on Debian renders through X: a virtual display when none is set.
scripts/with-display.sh pvbatch scripts/demo.py "$@"
