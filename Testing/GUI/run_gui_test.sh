#!/usr/bin/env bash
# The GUI test (CTest label gui): the paraview client, under a private Xvfb
# (scripts/with-display.sh), plays jztree_gui.xml (open Data/clustered.vtp,
# apply KNN Density and Friends Of Friends from the JZ-Tree menu, colour by
# Density and by GroupId) and compares the final render view with the
# baseline through ParaView's own test utility (--test-baseline, tolerant
# --test-threshold). The LinkingLength panel widget reports what it shows
# (JZTREE_WIDGET_LOG); the number of groups found must appear there.
# Other event scripts: JZ_GUI_SCRIPT (an XML file in Testing/GUI), with its
# data directory JZ_GUI_DATA (skips, exit 125, when absent) and lines the
# panel must also log, JZ_GUI_EXPECT (grep patterns separated by @@).
# Usage: run_gui_test.sh PLUGIN_DIR OUT_DIR [BASELINE.png]
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
script="${JZ_GUI_SCRIPT:-jztree_gui.xml}"
data="${JZ_GUI_DATA:-$ROOT/Data}"
plugin_dir="$1"; out="$2"; baseline="${3:-$HERE/Baseline/${script%.xml}.png}"
if [ ! -d "$data" ]; then
  echo "SKIP: the data directory $data is not available"
  exit 125
fi
mkdir -p "$out"
rm -f "$out"/*.png
log="$out/paraview.log"
# Mesa's software rasteriser, no user settings, one OpenMP thread per core.
export LIBGL_ALWAYS_SOFTWARE=1 PV_PLUGIN_PATH="$plugin_dir" JZTREE_WIDGET_LOG=1
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$out}"
timeout 300 "$ROOT/scripts/with-display.sh" paraview --dr \
  --data-directory="$data" --test-directory="$out" \
  --test-script="$HERE/$script" --test-baseline="$baseline" --test-threshold=15 \
  --exit >"$log" 2>&1
rc=$?
cat "$log"
if ! grep -q "Test  \"$script\" is finished. Success =  true" "$log"; then
  echo "run_gui_test: the event script did not finish successfully" >&2
  exit 1
fi
if ! grep -q "JZTree panel: .*Groups found: [1-9]" "$log"; then
  echo "run_gui_test: the LinkingLength panel did not show the groups found" >&2
  exit 1
fi
expect="${JZ_GUI_EXPECT:-}"
while [ -n "$expect" ]; do
  pattern="${expect%%@@*}"
  if ! grep -q "$pattern" "$log"; then
    echo "run_gui_test: the panel did not show: $pattern" >&2
    exit 1
  fi
  [ "$pattern" = "$expect" ] && break
  expect="${expect#*@@}"
done
exit $rc
