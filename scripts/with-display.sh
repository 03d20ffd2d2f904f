#!/usr/bin/env bash
# Runs a command with an X display (Debian's pvbatch renders through X): the
# current one when DISPLAY is set, else a private Xvfb.
#
# Xvfb picks a free display number itself (-displayfd) and reports it once
# it accepts connections, so concurrent runs (parallel CTest, CI jobs) never
# race for a number. It runs without an authority file: clients connect over
# its local socket only (-nolisten tcp), so no cookie has to match the host
# name. -noreset keeps the server up between a client's connections. The
# display is probed before the command runs (xdpyinfo, where x11-utils is
# installed); a server that does not answer, or a command that loses its
# connection ("bad X server connection"), gets a fresh server, up to four
# attempts, with the server's own log printed for diagnosis.
set -euo pipefail
if [ -n "${DISPLAY:-}" ]; then
  exec "$@"
fi

work="$(mktemp -d)"
xvfb=""
stop_server() {
  if [ -n "$xvfb" ]; then
    kill "$xvfb" 2>/dev/null || true
    wait "$xvfb" 2>/dev/null || true
    xvfb=""
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT

# Starts Xvfb and sets `display`; returns 1 when it does not come up usable.
start_server() {
  rm -f "$work/ready"
  mkfifo "$work/ready"
  Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp -noreset \
    3>"$work/ready" >"$work/xvfb.log" 2>&1 &
  xvfb=$!
  # The FIFO gives EOF (no number) if the server exits before it is ready.
  local number=""
  read -r -t 60 number <"$work/ready" || true
  [ -n "$number" ] || return 1
  display=":$number"
  ! command -v xdpyinfo >/dev/null || timeout 30 xdpyinfo -display "$display" >/dev/null 2>&1
}

report() {
  echo "with-display: $1 (attempt $2 of 4); the server's log:" >&2
  sed 's/^/  Xvfb: /' "$work/xvfb.log" >&2 || true
}

rc=1
for attempt in 1 2 3 4; do
  [ "$attempt" -eq 1 ] || sleep "$((attempt - 1))"
  if ! start_server; then
    report "Xvfb did not come up usable" "$attempt"
    stop_server
    continue
  fi
  rc=0
  DISPLAY="$display" "$@" 2>&1 | tee "$work/command.log" || rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ] || ! grep -q "bad X server connection" "$work/command.log"; then
    exit "$rc"
  fi
  report "the command lost its X connection" "$attempt"
  stop_server
done
exit "$rc"
