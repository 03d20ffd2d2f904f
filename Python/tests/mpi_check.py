"""jztree under mpiexec with mpi4py: every function with comm= equals the
serial call on the points of all ranks (concatenated in rank order), per
point for the rank's own points, whole for the global results; bad input on
one rank raises the same ValueError on every rank.

    mpiexec -n 3 --oversubscribe python3 Python/tests/mpi_check.py
"""
import sys
import traceback

import numpy as np

try:
    from mpi4py import MPI
except ImportError:
    print("skipped: no mpi4py (Debian: python3-mpi4py)")
    sys.exit(125)

import jztree

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def clustered(n, seed, dtype):
    rng = np.random.default_rng(seed)
    centres = rng.random((12, 3))
    pts = centres[rng.integers(0, 12, n)] + 0.02 * rng.standard_normal((n, 3))
    pts = np.concatenate([pts, rng.random((n // 4, 3))])
    return np.mod(pts, 1.0).astype(dtype)


def my_slice(n, seed):
    """An uneven partition (rank 0 may get nothing with 3 ranks)."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, n + 1, size - 1))
    if size == 3:
        cuts[0] = 0  # an empty rank
    bounds = np.concatenate([[0], cuts, [n]])
    return slice(bounds[rank], bounds[rank + 1])


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def run(dtype):
    pts = clustered(4000, 7, dtype)
    n = len(pts)
    mine = my_slice(n, 11)
    local = pts[mine]
    masses = np.random.default_rng(3).random(n) + 0.5
    velocities = np.random.default_rng(4).standard_normal((n, 3))
    tol = 1e-5 if dtype == np.float32 else 1e-12

    # kNN and densities, open and periodic; separate queries per rank.
    for box in (None, 1.0):
        ids, dist = jztree.knn(pts, 8, box=box)
        lids, ldist = jztree.knn(local, 8, box=box, comm=comm)
        check(np.array_equal(lids, ids[mine]), f"knn ids {dtype} box={box}")
        check(np.array_equal(ldist, dist[mine]), f"knn distances {dtype} box={box}")
        h, rho = jztree.density(pts, 16, masses=masses, box=box)
        lh, lrho = jztree.density(local, 16, masses=masses[mine], box=box, comm=comm)
        check(np.array_equal(lh, h[mine]), f"density h {dtype} box={box}")
        check(np.allclose(lrho, rho[mine], rtol=tol), f"density rho {dtype} box={box}")
    queries = np.random.default_rng(5).random((300, 3)).astype(dtype)
    qmine = my_slice(len(queries), 12)
    ids, dist = jztree.knn(pts, 5, queries=queries)
    lids, ldist = jztree.knn(local, 5, queries=queries[qmine], comm=comm)
    check(np.array_equal(lids, ids[qmine]) and np.array_equal(ldist, dist[qmine]), "knn queries")

    # Friends-of-friends with the catalogue, open and periodic.
    for box in (None, 1.0):
        gid, gsize, cat = jztree.fof(pts, 0.2, min_size=10, masses=masses,
                                     velocities=velocities, box=box)
        lgid, lgsize, lcat = jztree.fof(local, 0.2, min_size=10, masses=masses[mine],
                                        velocities=velocities[mine], box=box, comm=comm)
        check(np.array_equal(lgid, gid[mine]), f"fof group_id {dtype} box={box}")
        check(np.array_equal(lgsize, gsize[mine]), f"fof group_size {dtype} box={box}")
        check(sorted(lcat) == sorted(cat), "fof catalogue columns")
        check(len(cat["Count"]) > 3, "fof finds groups")
        for key in ("GroupId", "Count"):
            check(np.array_equal(lcat[key], cat[key]), f"fof catalogue {key}")
        for key in ("Mass", "CenterOfMass", "InertiaRadius", "MeanVelocity",
                    "VelocityDispersion"):
            check(np.allclose(lcat[key], cat[key], rtol=1e-9, atol=1e-12),
                  f"fof catalogue {key} box={box}")

    # EMST (Euclidean and mutual reachability) and HDBSCAN*.
    sub = pts[:1500]
    smine = my_slice(len(sub), 13)
    for min_samples in (None, 4):
        edges, lengths = jztree.emst(sub, min_samples=min_samples, box=1.0)
        ledges, llengths = jztree.emst(sub[smine], min_samples=min_samples, box=1.0, comm=comm)
        check(np.array_equal(ledges, edges), f"emst edges min_samples={min_samples}")
        check(np.array_equal(llengths, lengths), f"emst lengths min_samples={min_samples}")
    labels, prob, score = jztree.hdbscan(sub, min_cluster_size=15)
    llabels, lprob, lscore = jztree.hdbscan(sub[smine], min_cluster_size=15, comm=comm)
    check(np.array_equal(llabels, labels[smine]), "hdbscan labels")
    check(np.allclose(lprob, prob[smine]) and np.allclose(lscore, score[smine]), "hdbscan scores")

    # Gravity: exact at theta = 0, within the opening angle's accuracy else.
    phi, acc = jztree.gravity(sub, masses=masses[:1500], theta=0.0, softening=1e-3)
    lphi, lacc = jztree.gravity(sub[smine], masses=masses[:1500][smine], theta=0.0,
                                softening=1e-3, comm=comm)
    check(np.allclose(lphi, phi[smine], rtol=1e-9), "gravity potential theta=0")
    check(np.allclose(lacc, acc[smine], rtol=1e-9, atol=1e-9), "gravity acceleration theta=0")
    lphi, _ = jztree.gravity(sub[smine], masses=masses[:1500][smine], theta=0.5,
                             softening=1e-3, comm=comm)
    check(np.allclose(lphi, phi[smine], rtol=2e-2), "gravity potential theta=0.5")

    # SPH maps: the whole image on every rank, equal to the serial image up
    # to summation order (computed h, given h, periodic; slice with arrays).
    region = (-0.2, 1.2, -0.1, 1.1, 0.0, 1.0)
    for box, hh in ((None, None), (1.0, None), (None, 0.05 + 0.05 * masses)):
        kwargs = dict(k=16, resolution=(40, 30), box=box)
        if box is None:
            kwargs["region"] = region
        image = jztree.sph_projection(pts, masses=masses, h=hh, **kwargs)
        limage = jztree.sph_projection(local, masses=masses[mine],
                                       h=None if hh is None else hh[mine], comm=comm, **kwargs)
        check(limage.shape == (30, 40) and image.any(), "sph_projection shape")
        check(np.allclose(limage, image, rtol=1e-9, atol=1e-12 * image.max()),
              f"sph_projection {dtype} box={box} h given={hh is not None}")
    maps = jztree.sph_slice(pts, 0.5, masses=masses, k=16, resolution=(20, 20),
                            kernel="wendland", arrays={"v": velocities})
    lmaps = jztree.sph_slice(local, 0.5, masses=masses[mine], k=16, resolution=(20, 20),
                             kernel="wendland", arrays={"v": velocities[mine]}, comm=comm)
    for key in ("density", "v"):
        check(np.allclose(lmaps[key], maps[key], rtol=1e-9, atol=1e-12 * np.abs(maps[key]).max()),
              f"sph_slice {key} {dtype}")
    volume = jztree.sph_volume(pts, masses=masses, k=16, resolution=(12, 12, 12), box=1.0)
    lvolume = jztree.sph_volume(local, masses=masses[mine], k=16, resolution=(12, 12, 12),
                                box=1.0, comm=comm)
    check(np.allclose(lvolume, volume, rtol=1e-9, atol=1e-12 * volume.max()), "sph_volume")

    # Bad input on one rank: the same ValueError on every rank, no hang.
    bad = local.copy()
    if rank == size - 1 and len(bad):
        bad[0, 0] = np.nan
    for call in (lambda: jztree.knn(bad, 4, comm=comm),
                 lambda: jztree.fof(bad, 0.2, comm=comm),
                 lambda: jztree.emst(bad, comm=comm)):
        try:
            call()
            check(False, "bad input did not raise")
        except ValueError as error:
            check("non-finite" in str(error), f"message: {error}")
    # Argument errors of one rank only (dtype, length, shape, queries on
    # some ranks): that rank raises its own error, the others ValueError.
    last = rank == size - 1
    local_cases = (
        lambda: jztree.knn(local.astype(np.int64) if last else local, 4, comm=comm),
        lambda: jztree.density(local, 4, masses=masses[mine][:-1] if last else masses[mine],
                               comm=comm),
        lambda: jztree.fof(local[:, :2] if last else local, 0.2, comm=comm),
        lambda: jztree.fof(local, 0.2, velocities=velocities[mine] if last else None,
                           comm=comm),
        lambda: jztree.emst(local, box=-1.0 if last else None, comm=comm),
        lambda: jztree.gravity(local, queries=local if last else None, comm=comm),
    )
    for number, call in enumerate(local_cases):
        if size == 1 and number in (3, 5):
            continue  # consistent on one rank: not an error
        try:
            call()
            check(False, f"local error {number} did not raise")
        except (ValueError, TypeError):
            pass
    # Float32 on some ranks, float64 on others: all in double, as serial on
    # the float64 values.
    rounded = pts.astype(np.float32).astype(np.float64)
    ids, dist = jztree.knn(rounded, 6)
    mixed = rounded[mine].astype(np.float32) if rank == 0 else rounded[mine]
    lids, ldist = jztree.knn(mixed, 6, comm=comm)
    check(ldist.dtype == (np.float32 if size == 1 else np.float64), "mixed precision dtype")
    check(np.array_equal(lids, ids[mine]) and np.allclose(ldist, dist[mine], rtol=1e-7),
          "mixed precision")
    try:
        jztree.knn(local, n + 1, comm=comm)
        check(False, "k > N did not raise")
    except ValueError as error:
        check("k" in str(error), f"message: {error}")


def main():
    try:
        for dtype in (np.float64, np.float32):
            run(dtype)
    except Exception:
        traceback.print_exc()
        sys.stdout.flush()
        comm.Abort(1)
    comm.Barrier()
    if rank == 0:
        print(f"jztree with comm= on {size} ranks equals the serial call")


if __name__ == "__main__":
    main()
