#!/usr/bin/env bash
# Makes doc/gui_screenshot.png: the ParaView GUI in a 1920x1200 virtual
# display (Xvfb), set up by scripts/demo_gui_screenshot.py (the Gadget-4
# snapshot through the reader, density, halos coloured by GroupId, the
# catalogue, the Friends Of Friends panel), captured with xwd.
# Usage: scripts/demo_gui_screenshot.sh [OUT.png] [PLUGIN_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$ROOT/doc/gui_screenshot.png}"
plugin_dir="${2:-$ROOT/build/lib/paraview-5.11/plugins/JZTree}"
export JZ_SNAPSHOT="$ROOT/../shared/data/external/gadget4-cosmobox-n32-l50/snapshot_062.hdf5"
if [ ! -f "$JZ_SNAPSHOT" ]; then
  echo "demo_gui_screenshot: $JZ_SNAPSHOT is not available; nothing done"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export LIBGL_ALWAYS_SOFTWARE=1 PV_PLUGIN_PATH="$plugin_dir" XDG_RUNTIME_DIR="$work"
xvfb-run --auto-servernum --server-num=$((100 + RANDOM % 800)) \
  --server-args="-screen 0 1920x1200x24" bash -c '
    paraview --dr -geometry 1920x1200+0+0 --script="$0/scripts/demo_gui_screenshot.py" \
      --test-script="$0/scripts/demo_gui_screenshot.xml" \
      >"$1/paraview.log" 2>&1 &
    pid=$!
    sleep "${JZ_SCREENSHOT_WAIT:-45}"
    xwd -root -silent -out "$1/screen.xwd"
    kill "$pid"' "$ROOT" "$work"
/usr/bin/python3 "$ROOT/doc/tools/xwd2png.py" "$work/screen.xwd" "$out"
grep -v "^$" "$work/paraview.log" | tail -5 || true
echo "wrote $out"
