"""Real data: reproduce an external 32-NN SPH density (N-BodyShop "lambs").

../shared/data/external/nbodyshop-lambs-30k (relative to the repository root)
holds 30,000 dark-matter particles of an LCDM run in the periodic unit box
[-0.5, 0.5)^3 (tipsy, XDR big-endian) and bench.den, the density made by the
UW `smooth` program with its symmetric kernel (smDensitySym). We rebuild that
density from OUR NeighborIds (K = 32, periodic) and compare to rel 1e-5.
Skips (exit code 125) when the shared data is absent.
"""
import os
import sys

import numpy as np

import jztest
from jztest import Checker, knn, polydata, verify_neighbors

DATA = os.environ.get("JZ_SHARED_DIR", os.path.join(os.path.dirname(jztest.ROOT), "shared"))
DATA = os.path.join(DATA, "data/external/nbodyshop-lambs-30k")
particles_file = os.path.join(DATA, "lambs.00200_subsamp_30K")
density_file = os.path.join(DATA, "bench.den")
if not (os.path.exists(particles_file) and os.path.exists(density_file)):
    print(f"SKIP: shared data not found at {DATA}")
    sys.exit(jztest.SKIP)


def read_tipsy(path):
    """Tipsy standard binary (big-endian): header, then dark particles."""
    with open(path, "rb") as f:
        header = np.frombuffer(f.read(32), dtype=np.dtype(
            [("time", ">f8"), ("nbodies", ">i4"), ("ndim", ">i4"), ("nsph", ">i4"),
             ("ndark", ">i4"), ("nstar", ">i4"), ("pad", ">i4")]))[0]
        assert header["nsph"] == 0 and header["nstar"] == 0, "only dark particles expected"
        dark = np.frombuffer(f.read(), dtype=np.dtype(
            [("mass", ">f4"), ("pos", ">f4", 3), ("vel", ">f4", 3), ("eps", ">f4"), ("phi", ">f4")]),
            count=header["ndark"])
    return dark["pos"].astype(np.float32), dark["mass"].astype(np.float64)


pos, mass = read_tipsy(particles_file)
bench = np.loadtxt(density_file, skiprows=1)
n, k = len(pos), 32
c = Checker()
c.check(n == 30000 and len(bench) == n, f"{n} particles, {len(bench)} reference densities")

box = [-0.5, 0.5, -0.5, 0.5, -0.5, 0.5]
run = knn(polydata(pos, {"Mass": mass}), NumberOfNeighbors=k, OutputNeighbors=1, Periodic=1,
          BoxBounds=box, MassArray=["POINTS", "Mass"], Device="CPU")
c.check(not run.errors, f"no error {run.errors[:1]}")
verify_neighbors(c, run, pos, None, k, box=box, label="lambs K=32 periodic")

ids = run.array("NeighborIds").reshape(n, k)
r32 = run.array("SmoothingLength").astype(np.float64)
# Pair distances recomputed in float64 from the positions (periodic metric).
diff = pos[ids].astype(np.float64) - pos[:, None, :].astype(np.float64)
diff = np.mod(diff + 0.5, 1.0) - 0.5
r = np.sqrt((diff ** 2).sum(axis=2))


def w_smooth(r, h):
    """smooth's M4 kernel, support 2h, normalised 1/(pi h^3)."""
    q = r / h[:, None]
    w = np.where(q < 1, 1 - 1.5 * q**2 + 0.75 * q**3, np.where(q < 2, 0.25 * (2 - q) ** 3, 0.0))
    return w / (np.pi * h[:, None] ** 3)


h = 0.5 * r32
wij = w_smooth(r, h)  # W(r_ij, h_i) for j in N32(i)
rho = np.zeros(n)
# gather: sum_{j in N(i)} 0.5 m_j W(r_ij, h_i)
rho += (0.5 * mass[ids] * wij).sum(axis=1)
# scatter: i in N(j) adds 0.5 m_i W(r_ij, h_i) to j (symmetric half)
np.add.at(rho, ids.ravel(), (0.5 * mass[:, None] * wij).ravel())
rel = np.abs(rho - bench) / bench
print(f"lambs: max rel diff {rel.max():.2e}, median {np.median(rel):.2e}")
c.check(rel.max() < 1e-5, "smDensitySym from our NeighborIds reproduces bench.den to 1e-5")

# our own SPH density (gather only, support h = r32) must be a different,
# positive estimate of the same field: same order of magnitude.
ratio = np.median(run.array("Density") / bench)
c.check(0.3 < ratio < 3, f"our SPH Density / bench.den median {ratio:.3f} is of order 1")
c.finish()
