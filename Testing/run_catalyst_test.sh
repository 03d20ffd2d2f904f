#!/usr/bin/env bash
# Catalyst test (CTest label catalyst): runs the mini-app with the JZ-Tree
# Catalyst script on RANKS MPI ranks (1: no mpirun), through a private Xvfb
# for the images, then checks the catalogues against an offline pvpython run.
# Usage: run_catalyst_test.sh APP PLUGIN_SO OUT_DIR RANKS [PARTICLES STEPS]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
app="$1"; plugin="$2"; out="$3"; ranks="$4"; particles="${5:-20000}"; steps="${6:-10}"
rm -rf "$out"; mkdir -p "$out"
export JZ_OUT="$out" JZ_PLUGIN="$plugin" JZ_STEPS="$steps" JZ_IMAGE_EVERY=5
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmd=("$app" "$ROOT/Catalyst/jztree_pipeline.py" --particles "$particles" --steps "$steps")
if [ "$ranks" -gt 1 ]; then
  cmd=(mpiexec --oversubscribe -n "$ranks" "${cmd[@]}")
fi
"$ROOT/scripts/with-display.sh" "${cmd[@]}" 2>&1 | tee "$out/run.log"
# An attempt that with-display.sh retried (the command lost its X
# connection) leaves its "bad X server connection" error in the log too.
grep -v "bad X server connection" "$out/run.log" > "$out/run.checked.log" || true
if grep -q "Traceback\|ERR|" "$out/run.checked.log"; then
  echo "run_catalyst_test: the Catalyst pipeline reported errors" >&2
  exit 1
fi
PV_PLUGIN_PATH="$(dirname "$plugin")" pvpython "$HERE/Python/check_catalyst.py" "$out" "$steps"
