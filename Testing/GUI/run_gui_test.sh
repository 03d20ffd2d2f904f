#!/usr/bin/env bash
# The GUI test (CTest label gui): the paraview client, under a private Xvfb
# (scripts/with-display.sh), plays jztree_gui.xml (open Data/clustered.vtp,
# apply KNN Density and Friends Of Friends from the JZ-Tree menu, colour by
# Density and by GroupId) and compares the final render view with the
# baseline through ParaView's own test utility (--test-baseline, tolerant
# --test-threshold). The LinkingLength panel widget reports what it shows
# (JZTREE_WIDGET_LOG); the number of groups found must appear there.
# Usage: run_gui_test.sh PLUGIN_DIR OUT_DIR [BASELINE.png]
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
plugin_dir="$1"; out="$2"; baseline="${3:-$HERE/Baseline/jztree_gui.png}"
mkdir -p "$out"
rm -f "$out"/*.png
log="$out/paraview.log"
# Mesa's software rasteriser, no user settings, one OpenMP thread per core.
export LIBGL_ALWAYS_SOFTWARE=1 PV_PLUGIN_PATH="$plugin_dir" JZTREE_WIDGET_LOG=1
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$out}"
timeout 300 "$ROOT/scripts/with-display.sh" paraview --dr \
  --data-directory="$ROOT/Data" --test-directory="$out" \
  --test-script="$HERE/jztree_gui.xml" --test-baseline="$baseline" --test-threshold=15 \
  --exit >"$log" 2>&1
rc=$?
cat "$log"
if ! grep -q 'Test  "jztree_gui.xml" is finished. Success =  true' "$log"; then
  echo "run_gui_test: the event script did not finish successfully" >&2
  exit 1
fi
if ! grep -q "JZTree panel: .*Groups found: [1-9]" "$log"; then
  echo "run_gui_test: the LinkingLength panel did not show the groups found" >&2
  exit 1
fi
exit $rc
