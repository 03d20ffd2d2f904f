#!/usr/bin/env bash
# scripts/with-display.sh without a display: the command sees one that
# answers, concurrent runs get distinct ones, exit codes pass through, a
# command that keeps losing its X connection is tried four times and keeps
# its own code, and a server that never comes up is reported with its log.
# shellcheck disable=SC2016  # the quoted commands expand in their own shell
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
run="$HERE/../scripts/with-display.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
check() { # check DESCRIPTION CONDITION...
  local what="$1"
  shift
  if "$@"; then
    echo "ok: $what"
  else
    echo "FAILED: $what" >&2
    failures=$((failures + 1))
  fi
}
unset DISPLAY
if ! command -v Xvfb >/dev/null || ! command -v xdpyinfo >/dev/null; then
  echo "skipped: needs Xvfb and xdpyinfo (x11-utils)"
  exit 125
fi

# Three at once: each display answers and none is shared.
for k in 1 2 3; do
  "$run" bash -c 'xdpyinfo >/dev/null && echo "$DISPLAY"' >"$work/display.$k" 2>&1 &
done
wait
check "three concurrent displays answer and differ" \
  test "$(sort -u "$work"/display.* | grep -c '^:[0-9][0-9]*$')" -eq 3

"$run" bash -c 'exit 7' >/dev/null 2>&1
rc=$?
check "an exit code passes through" test "$rc" -eq 7

"$run" bash -c 'echo run >>"$0"; echo "bad X server connection"; exit 3' "$work/lost" \
  >/dev/null 2>"$work/lost.err"
rc=$?
check "a lost connection is tried four times, its code kept" \
  test "$rc" -eq 3 -a "$(wc -l <"$work/lost")" -eq 4
check "each lost attempt is reported" test "$(grep -c 'lost its X connection' "$work/lost.err")" -eq 4

# A stand-in Xvfb that fails at once: reported with its log, no hang.
mkdir -p "$work/bin"
printf '#!/bin/sh\necho "stand-in server: cannot start" >&2\nexit 1\n' >"$work/bin/Xvfb"
chmod +x "$work/bin/Xvfb"
PATH="$work/bin:$PATH" timeout 60 "$run" true >/dev/null 2>"$work/broken.err"
rc=$?
check "a server that never comes up fails the run" test "$rc" -eq 1
check "its log is printed" grep -q "Xvfb: stand-in server: cannot start" "$work/broken.err"

[ "$failures" -eq 0 ]
