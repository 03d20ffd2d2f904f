#!/usr/bin/env bash
# Runs a command with an X display (Debian's pvbatch renders through X): the
# current one when DISPLAY is set, else a private Xvfb. The server number
# search starts at a random place so that concurrent runs (parallel CTest, CI
# jobs) do not race for the same display, and a run that loses its fresh
# Xvfb connection ("bad X server connection", seen now and then right after
# start-up) is retried up to twice.
set -euo pipefail
if [ -n "${DISPLAY:-}" ]; then
  exec "$@"
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for attempt in 1 2 3; do
  rc=0
  xvfb-run --auto-servernum --server-num=$((100 + RANDOM % 800)) \
    --server-args="-screen 0 1280x1024x24" "$@" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ] || ! grep -q "bad X server connection\|Xvfb failed to start" "$log"; then
    exit "$rc"
  fi
  echo "with-display: the X server was not usable (attempt $attempt); retrying" >&2
done
exit "$rc"
