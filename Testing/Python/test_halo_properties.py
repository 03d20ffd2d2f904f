"""FriendsOfFriends catalogue additions against brute force in numpy:
CentreOfPotential / MostBoundId from O(n^2) potentials of each group's own
members (unwrapped around the smallest-id member when periodic), and
SORadius / SOMass / SOCount from every particle's sorted distance to the
centre (the discrete definition in doc/filters/FriendsOfFriends.md);
uniform and clustered (../shared/anchors/halos.py) sets, float and double,
periodic and open, bulk duplicates; bad options fail with a clear error.

Usage: pvpython test_halo_properties.py SECTION   (see SECTIONS at the bottom)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
from checks import run_section  # noqa: E402
from jztest import polydata  # noqa: E402
from test_fof import fof  # noqa: E402

import numpy as np  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

SHARED = os.environ.get("JZ_SHARED_DIR", os.path.join(jztest.ROOT, "..", "shared"))


def run_fof(data, **props):
    """FriendsOfFriends on a data object: (particles, catalogue, errors)."""
    r = fof(data, **props)
    return r.particles, r.catalogue, r.errors


def arr(data, name):
    a = data.GetPointData().GetArray(name)
    if a is None:
        return None
    v = vtk_to_numpy(a)
    return v.reshape(len(v), -1) if a.GetNumberOfComponents() > 1 else v


def fold(d, box):
    return d - box * np.round(d / box) if box is not None else d


def reference(x, m, gid, G, eps, grav, delta, rho_ref, box, centres_from_cop, com):
    """Brute-force centres and SO rows for GroupIds 0..G-1 (ids = point index)."""
    x = x.astype(np.float64)
    cop = np.zeros((G, 3))
    most = np.zeros(G, dtype=np.int64)
    for g in range(G):
        mem = np.flatnonzero(gid == g)  # ascending index = ascending id
        u = x[mem[0]] + fold(x[mem] - x[mem[0]], box)
        d = u[:, None, :] - u[None, :, :]
        s2 = (d ** 2).sum(axis=2) + eps * eps
        np.fill_diagonal(s2, 0.0)
        with np.errstate(divide="ignore"):
            inv = np.where(s2 > 0, 1.0 / np.sqrt(np.where(s2 > 0, s2, 1.0)), 0.0)
        phi = -grav * (inv * m[mem][None, :]).sum(axis=1)
        best = int(np.argmin(phi))  # first minimum = smallest id
        most[g] = mem[best]
        cop[g] = x[mem[best]]
    centres = cop if centres_from_cop else com
    rad, mass, cnt = np.zeros(G), np.zeros(G), np.zeros(G, dtype=np.int64)
    for g in range(G):
        r2 = (fold(x - centres[g], box) ** 2).sum(axis=1)
        order = np.lexsort((m, r2))
        r2s, ms = r2[order], m[order]
        cum = np.cumsum(ms)
        k, R, M = 0, 0.0, 0.0
        i = 0
        while i < len(r2s):
            j = i
            while j < len(r2s) and r2s[j] == r2s[i]:
                j += 1
            r = np.sqrt(r2s[i])
            if r > 0 and cum[j - 1] / (4.0 / 3.0 * np.pi * r ** 3) < delta * rho_ref:
                break
            k, R, M = j, r, cum[j - 1]
            i = j
        rad[g], mass[g], cnt[g] = R, M, k
    return cop, most, rad, mass, cnt


def check_case(c, x, label, periodic=True, reference_mode="Mean", delta=200.0, centres=True,
               eps=1e-3, grav=1.0):
    n = len(x)
    rng = np.random.default_rng(9)
    m = 0.5 + rng.random(n)
    props = dict(LinkingLengthMode="Relative", LinkingLength=0.2, MinimumGroupSize=20,
                 Periodic=int(periodic), BoxBounds=[0, 1, 0, 1, 0, 1],
                 MassArray=["POINTS", "Mass"], PotentialCentres=int(centres), Softening=eps,
                 GravitationalConstant=grav, SphericalOverdensity=1, Overdensity=delta,
                 OverdensityReference=reference_mode, CriticalDensity=3.0 * m.sum())
    parts, cat, errors = run_fof(polydata(x, {"Mass": m}), **props)
    if not c.check(not errors, f"{label}: no errors {errors[:1]}"):
        return
    gid = arr(parts, "GroupId")
    G = cat.GetNumberOfPoints()
    c.check(G >= 3, f"{label}: {G} groups")
    cat_gid = arr(cat, "GroupId")
    rho_ref = m.sum() if reference_mode == "Mean" else 3.0 * m.sum()
    com = arr(cat, "CenterOfMass")[np.argsort(cat_gid)]
    cop, most, rad, mass, cnt = reference(x, m, gid, G, eps, grav, delta, rho_ref,
                                          1.0 if periodic else None, centres, com)
    order = np.argsort(cat_gid)
    if centres:
        c.check(np.array_equal(arr(cat, "MostBoundId")[order], most), f"{label}: MostBoundId == brute force")
        c.close(arr(cat, "CentreOfPotential")[order], cop, 0.0, f"{label}: CentreOfPotential == that member")
    else:
        c.check(arr(cat, "MostBoundId") is None, f"{label}: no MostBoundId without PotentialCentres")
    got_cnt = arr(cat, "SOCount")[order]
    c.check(np.array_equal(got_cnt, cnt), f"{label}: SOCount == sorted-distance profile "
            f"({int((got_cnt != cnt).sum())} differ; {int((cnt > 0).sum())} non-zero)")
    c.close(arr(cat, "SORadius")[order], rad, 1e-12, f"{label}: SORadius", atol=1e-300)
    c.close(arr(cat, "SOMass")[order], mass, 1e-12, f"{label}: SOMass", atol=1e-300)
    c.check(int((cnt > 20).sum()) >= 2, f"{label}: non-trivial SO spheres ({int((cnt > 20).sum())})")


def halos(n):
    sys.path.insert(0, os.path.join(SHARED, "anchors"))
    from halos import halos as make
    return make(n)


def section_clustered(c):
    if not os.path.exists(os.path.join(SHARED, "anchors", "halos.py")):
        sys.exit(jztest.SKIP)
    x = halos(20000)
    check_case(c, x, "halos float periodic Mean")
    check_case(c, x.astype(np.float64), "halos double periodic Critical", reference_mode="Critical",
               delta=100.0)
    check_case(c, x.astype(np.float64), "halos double, SO around the centre of mass", centres=False)


def section_uniform(c):
    rng = np.random.default_rng(3)
    x = rng.random((15000, 3))
    # a few dense clumps so that groups exist
    for k in range(6):
        x[k * 400:(k + 1) * 400] = rng.random(3) + 0.01 * rng.standard_normal((400, 3))
    x %= 1.0
    check_case(c, x, "uniform+clumps double periodic", delta=50.0)
    check_case(c, x.astype(np.float32), "uniform+clumps float open box Critical",
               periodic=False, reference_mode="Critical", delta=30.0)


def section_duplicates(c):
    rng = np.random.default_rng(4)
    base = rng.random((4000, 3))
    clump = 0.3 + 0.01 * rng.standard_normal((300, 3))
    clump2 = 0.55 + 0.02 * rng.standard_normal((400, 3))
    # every clump point twice, and 100 particles at one position
    x = np.concatenate([base, clump, clump, clump2, clump2, np.full((100, 3), 0.7)])
    check_case(c, x, "duplicates double periodic", delta=50.0, eps=0.0)


def section_errors(c):
    x = np.random.default_rng(5).random((2000, 3))
    cases = [("Mean without Periodic", dict(SphericalOverdensity=1, Periodic=0), "Periodic"),
             ("Overdensity <= 0", dict(SphericalOverdensity=1, Periodic=1, Overdensity=0.0), "Overdensity"),
             ("Softening < 0", dict(PotentialCentres=1, Softening=-1.0), "Softening"),
             ("CriticalDensity <= 0", dict(SphericalOverdensity=1, OverdensityReference="Critical",
                                           CriticalDensity=0.0), "CriticalDensity")]
    for label, props, word in cases:
        parts, cat, errors = run_fof(polydata(x), **props)
        c.check(any(word in e for e in errors), f"{label}: error names {word!r}: {errors[:1]}")
        c.check(parts.GetNumberOfPoints() == 0 and cat.GetNumberOfPoints() == 0, f"{label}: no output")


SECTIONS = dict(clustered=section_clustered, uniform=section_uniform,
                duplicates=section_duplicates, errors=section_errors)

if __name__ == "__main__":
    run_section(SECTIONS).finish()
