#!/usr/bin/env bash
# Runs a command with an X display (Debian's pvbatch renders through X): the
# current one when DISPLAY is set, else a private Xvfb. The server number
# search starts at a random place so that concurrent runs (parallel CTest, CI
# jobs) do not race for the same display.
set -euo pipefail
if [ -n "${DISPLAY:-}" ]; then
  exec "$@"
fi
exec xvfb-run --auto-servernum --server-num=$((100 + RANDOM % 800)) \
  --server-args="-screen 0 1280x1024x24 -nolisten tcp" "$@"
