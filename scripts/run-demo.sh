#!/usr/bin/env bash
# Main job: install what is missing, build, then compute the kNN density and
# the friends-of-friends halos of the bundled clustered particles
# (Data/clustered.vtp) with pvbatch, writing out/knn_density.vtp,
# out/knn_density.png, out/halo_slab.png and out/halos.csv, and printing a
# summary (points, groups, largest group, time per filter, device). Then the
# real workflow (scripts/demo_snapshot.py): the Gadget-4 z = 0 snapshot from
# ../shared/data opened through the plugin's reader, density and halos with
# the periodic box from the file, our catalogue compared with Gadget-4's
# (out/snapshot_halos.png, out/snapshot_halos.csv); skipped with a message
# when ../shared is absent. Last, halos through time (scripts/demo_tracking.py):
# the five Gadget-4 snapshots as a series, HaloTracking's merger tree of the
# largest z = 0 halo printed and its progenitors drawn per redshift
# (out/halo_progenitors.png). The largest z = 0 halo's subhalos
# (scripts/demo_subhalos.py): its particles by SubhaloId with each subhalo's
# Vmax circle (out/subhalos.png). Then SPH maps of a real box
# (scripts/demo_sph.py): Gadget-4's gas projected (out/sph_projection.png)
# and deposited into a volume, volume rendered (out/sph_volume.png).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/install-deps.sh
scripts/build.sh
# pvbatch on Debian renders through X: a virtual display when none is set.
scripts/with-display.sh pvbatch scripts/demo.py "$@"
scripts/with-display.sh pvbatch scripts/demo_snapshot.py "$@"
scripts/with-display.sh pvbatch scripts/demo_tracking.py "$@"
scripts/with-display.sh pvbatch scripts/demo_subhalos.py "$@"
scripts/with-display.sh pvbatch scripts/demo_sph.py "$@"
