#!/usr/bin/env bash
# Our kNN and EMST beside ArborX's (Kokkos CUDA) on the same GPU and the same
# points, with everything built beforehand:
#   Kernels/scripts/prebuild-for-device.sh gpubin jz_bench_knn_cuda jz_bench_emst_cuda
#   Kernels/scripts/build-arborx-cuda.sh KOKKOS_SRC ARBORX_SRC ../shared/anchors gpubin/peers
#   (device tool, carry ["gpubin"]) Kernels/scripts/gpu-peers.sh $PWD/gpubin LOGDIR [SIZES...]
# For each size (default 1e6 1e7 1e8 for the kNN; the EMST up to 1e7) and
# point kind (uniform, clustered), our benchmark writes its points (--dump)
# and reports its best wall time; ArborX then runs on that file. kNN: K = 16,
# ours returning neighbour lists as ArborX does. The ratios lean ArborX's
# way: our wall time includes the points' upload and the input-order
# results' download, while the anchors start their clock with the points on
# the GPU and leave the results there (and load every kernel before it:
# CUDA_MODULE_LOADING=EAGER, as they time one run). Each step's log goes to
# LOGDIR/<step>.log, a verdict line each to LOGDIR/summary.txt, and the
# ratios (ArborX / ours, wall) to LOGDIR/ratios.txt. The three sizes take
# about 8 minutes: pass 1e6 1e7, then 1e8, in two calls where a call is
# limited to less.
set -uo pipefail

# shellcheck source=gpu-steps.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpu-steps.sh"
prebuilt_run "${1:?folder of prebuilt binaries}" "${2:?log dir}"
shift 2
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1e6 1e7 1e8)
export LD_LIBRARY_PATH="$bin/peers/lib:$LD_LIBRARY_PATH"
: > "$logs/ratios.txt"
points="${TMPDIR:-/tmp}/jz-peer-points.f32"

# ratio NAME OURS_LOG PEER_LOG: ours from "best wall S s", ArborX's from
# "total=Ss".
ratio() {
  local ours peer
  ours="$(sed -n 's/.*best wall \([0-9.]*\) s.*/\1/p' "$logs/$2.log" | head -1)"
  peer="$(sed -n 's/.*total=\([0-9.]*\)s.*/\1/p' "$logs/$3.log" | head -1)"
  if [ -n "$ours" ] && [ -n "$peer" ]; then
    awk -v n="$1" -v o="$ours" -v p="$peer" \
      'BEGIN { printf "%-24s ours %.4f s  ArborX %.4f s  ArborX/ours %.2fx\n", n, o, p, p / o }'
  else
    echo "$1: no figure (see $2.log, $3.log)"
  fi | tee -a "$logs/ratios.txt"
}

for n in "${sizes[@]}"; do
  for kind in uniform clustered; do
    step "knn-$n-$kind" 180 "$bin/bench/jz_bench_knn_cuda" "$n" 16 "$kind" 3 --lists --pinned \
      --dump "$points"
    step "arborx-knn-$n-$kind" 240 env CUDA_MODULE_LOADING=EAGER \
      "$bin/peers/bin/arborx_knn" "$n" 16 "$points"
    ratio "kNN $n $kind" "knn-$n-$kind" "arborx-knn-$n-$kind"
    [ "$n" = 1e8 ] && continue
    step "emst-$n-$kind" 180 "$bin/bench/jz_bench_emst_cuda" "$n" "$kind" 3 --pinned --dump "$points"
    step "arborx-emst-$n-$kind" 240 env CUDA_MODULE_LOADING=EAGER \
      "$bin/peers/bin/arborx_emst" "$n" "$kind" "$points"
    ratio "EMST $n $kind" "emst-$n-$kind" "arborx-emst-$n-$kind"
  done
done
rm -f "$points"

echo "failed steps: $failed" >> "$summary"
exit $failed
