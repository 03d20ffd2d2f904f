#!/usr/bin/env python3
"""The jz-tree reference implementation (jstuecker/jztree, JAX + CUDA) timed on
the points our GPU benchmarks wrote with --dump, for side-by-side ratios.

  jztree_reference.py knn FILE [K=16] [reps=5]
  jztree_reference.py fof FILE LINKING_LENGTH [BOX=1.0] [reps=3]

FILE holds raw float32 x,y,z. The points are uploaded once; each timed call
runs the whole jitted function on the device-resident points (sort, tree,
walks, input-order output for kNN; labels and the catalogue for FoF) and waits
for its results. Prints one RESULT line with the best time. jztree is not part
of this repository: build it on the GPU machine from a fetched copy
(Kernels/scripts/build-jztree-reference.sh; gpu-check.sh runs it with JZ_JZTREE_PATH).
"""
import sys
import time

import numpy as np


def best_time(fn, reps):
    out = fn()  # compiles and warms up
    _block(out)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        _block(fn())
        times.append(time.perf_counter() - t0)
    return min(times), times


def _block(tree):
    import jax
    for leaf in jax.tree_util.tree_leaves(tree):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


def main(argv):
    import jax
    import jax.numpy as jnp
    import jztree as jz

    mode, path = argv[1], argv[2]
    xyz = np.fromfile(path, dtype=np.float32).reshape(-1, 3)
    x = jnp.asarray(xyz)
    print(f"jztree reference on {jax.devices()[0].device_kind}: {mode}, N={len(xyz)}", flush=True)
    if mode == "knn":
        k = int(argv[3]) if len(argv) > 3 else 16
        reps = int(argv[4]) if len(argv) > 4 else 5
        best, times = best_time(lambda: jz.knn.knn.jit(x, k=k), reps)
        print("  runs: " + " ".join(f"{t:.4f}" for t in times))
        print(f"RESULT JZTREE knn N={len(xyz)} K={k} best {best:.4f} s")
    elif mode == "fof":
        rlink = float(argv[3])
        box = float(argv[4]) if len(argv) > 4 else 1.0
        reps = int(argv[5]) if len(argv) > 5 else 3
        best, times = best_time(lambda: jz.fof.fof_labels.jit(x, rlink=rlink, boxsize=box), reps)
        print("  labels runs: " + " ".join(f"{t:.4f}" for t in times))
        print(f"RESULT JZTREE fof-labels N={len(xyz)} l={rlink:.6g} best {best:.4f} s")
        try:
            part = jz.data.ParticleData(pos=x) if hasattr(jz.data, "ParticleData") else x
            cat = jax.jit(jz.fof.fof_and_catalogue, static_argnames=["rlink", "boxsize", "cfg"])
            best, times = best_time(lambda: cat(part, rlink=rlink, boxsize=box), reps)
            print(f"RESULT JZTREE fof-catalogue N={len(xyz)} l={rlink:.6g} best {best:.4f} s")
        except Exception as e:  # the catalogue's API differs between versions
            print(f"  (fof_and_catalogue not timed: {type(e).__name__}: {e})")
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv)
