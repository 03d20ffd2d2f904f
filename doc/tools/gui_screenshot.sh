#!/usr/bin/env bash
# Regenerates a GUI screenshot (doc/gui_screenshot.png) from the paraview
# client itself: under a private Xvfb it plays a GUI event script of
# Testing/GUI (menus and Apply only, nothing set by hand), dumps the screen
# with xwd and converts it with xwd2png.py. Needs xwd (Debian: x11-apps).
# The data directory is Data/ unless JZ_GUI_DATA names another.
# Usage: doc/tools/gui_screenshot.sh PLUGIN_DIR OUT.png [EVENT_SCRIPT.xml] [WxH]
# The README's picture:
#   JZ_GUI_DATA=../shared/data/external/gadget4-cosmobox-n32-l50 doc/tools/gui_screenshot.sh \
#     build/lib/paraview-5.11/plugins/JZTree doc/gui_screenshot.png \
#     Testing/GUI/jztree_snapshot_gui.xml 1920x1200
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
plugin_dir="$1"; out="$2"
script="${3:-$ROOT/Testing/GUI/friends_of_friends.xml}"
size="${4:-1600x1000}"
command -v xwd >/dev/null || { echo "gui_screenshot: needs xwd (apt-get install x11-apps)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'kill "${pv:-}" "${xvfb:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
display=":$((100 + RANDOM % 800))"
Xvfb "$display" -screen 0 "${size}x24" -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb=$!
sleep 2
chmod 700 "$work"
DISPLAY="$display" LIBGL_ALWAYS_SOFTWARE=1 PV_PLUGIN_PATH="$plugin_dir" XDG_RUNTIME_DIR="$work" \
  paraview -geometry "${size}+0+0" --dr --data-directory="${JZ_GUI_DATA:-$ROOT/Data}" --test-directory="$work" \
  --test-script="$script" >"$work/paraview.log" 2>&1 &
pv=$!
for _ in $(seq 1 150); do
  sleep 2
  grep -q "is finished" "$work/paraview.log" && break
done
grep -q "is finished. Success =  true" "$work/paraview.log" ||
  { cat "$work/paraview.log"; echo "gui_screenshot: the event script failed" >&2; exit 1; }
sleep 3 # the last render
xwd -root -display "$display" -out "$work/screen.xwd"
/usr/bin/python3 "$HERE/xwd2png.py" "$work/screen.xwd" "$out"
echo "wrote $out"
