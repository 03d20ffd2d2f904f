# Sourced by the short device scripts (gpu-first-run.sh, gpu-open-checks.sh,
# gpu-sph.sh, gpu-peers.sh): each step under its own time limit, so that one
# hang costs that step and not the lease. Needs $logs (a folder) and
# $summary (a file); sets failed=1 when a step fails.
failed=0

# prebuilt_run BIN LOGDIR: the scripts that run binaries built beforehand
# (prebuild-for-device.sh): their OpenMP runtime (BIN/lib) on the library
# path, $logs, $summary (started with the GPU's name) and $sanitizer.
prebuilt_run() {
  bin="$1"
  logs="$2"
  mkdir -p "$logs"
  export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  sanitizer="${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer"
  summary="$logs/summary.txt"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$summary" 2>&1
}

# step NAME SECONDS COMMAND...: runs it into $logs/NAME.log, records the
# verdict in $summary.
step() {
  local name="$1" limit="$2"
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  local verdict="ok"
  [ $rc -eq 0 ] || { verdict="FAILED (exit $rc$([ $rc -eq 124 ] && echo ', timed out'))"; failed=1; }
  printf '%-28s %-28s %4ds\n' "$name" "$verdict" $((SECONDS - t0)) | tee -a "$summary"
}
