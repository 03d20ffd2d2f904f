#!/usr/bin/env bash
# A GUI test (CTest label gui): the paraview client, under a private Xvfb
# (scripts/with-display.sh), plays the event script NAME.xml of this folder
# (menus and Apply only, as a user would) and compares the final render view
# with Baseline/NAME.png through ParaView's own test utility (--test-baseline,
# tolerant --test-threshold). With LOG_REGEX, the client's output must also
# match it: the LinkingLength panel widget reports what it shows
# (JZTREE_WIDGET_LOG), e.g. the number of groups found.
# The data directory is Data/ unless JZ_GUI_DATA names another (the test
# skips, exit 125, when that is absent).
# Usage: run_gui_test.sh PLUGIN_DIR OUT_DIR NAME [LOG_REGEX]
# A run without a baseline (or a failed comparison) leaves the view it got in
# OUT_DIR/NAME/ for inspection; copy it to Baseline/NAME.png after looking at it.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
plugin_dir="$1"; name="$3"; log_regex="${4:-}"
out="$2/$name"
data="${JZ_GUI_DATA:-$ROOT/Data}"
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
  --test-script="$HERE/$name.xml" --test-baseline="$HERE/Baseline/$name.png" \
  --test-threshold=15 --exit >"$log" 2>&1
rc=$?
cat "$log"
if ! grep -q "Test  \"$name.xml\" is finished. Success =  true" "$log"; then
  echo "run_gui_test: the event script $name.xml did not finish successfully" >&2
  exit 1
fi
if [ -n "$log_regex" ] && ! grep -q "$log_regex" "$log"; then
  echo "run_gui_test: the client's output does not show '$log_regex'" >&2
  exit 1
fi
exit $rc
