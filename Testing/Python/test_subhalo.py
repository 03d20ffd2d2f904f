"""SubhaloFinder: a Hernquist host with Plummer satellites (own bulk
velocities, one falling through the centre, a satellite of a satellite, one at
the resolution limit) through FriendsOfFriends -> SubhaloFinder against the
known membership (recall and precision per satellite); the same definition
written here in numpy (brute-force densities, neighbours and direct-sum
potentials) at OpeningAngle 0 on small groups, with identical subhalos; the
catalogue's columns; bad input (no VelocityArray, no GroupId) and empty input.

Usage: pvpython test_subhalo.py SECTION   (see SECTIONS at the bottom)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
from checks import run_section  # noqa: E402
from jztest import polydata  # noqa: E402
from test_halo_properties import arr  # noqa: E402

import numpy as np  # noqa: E402
from scipy.spatial import cKDTree  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

SubhaloFinder = getattr(jztest.simple, "SubhaloFinder")
FriendsOfFriends = getattr(jztest.simple, "FriendsOfFriends")


def sphere(rng, n, radius_of, phi, centre, bulk, reach=0.6):
    """n unit-mass particles: radii from the inverse cumulative mass, speeds
    up to `reach` times the local escape speed (G = 1), isotropic directions."""
    r = radius_of(rng.random(n))
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    e = rng.normal(size=(n, 3))
    e /= np.linalg.norm(e, axis=1)[:, None]
    v = reach * rng.random(n) * np.sqrt(2 * np.abs(phi(r)))
    return np.asarray(centre) + r[:, None] * d, np.asarray(bulk) + v[:, None] * e


def plummer(rng, n, b, centre, bulk):
    fmax = 216.0 / 37.0 ** 1.5  # truncated at 6 b

    def radius(q):
        f = (q * fmax) ** (2.0 / 3.0)
        return b * np.sqrt(f / (1 - f))
    return sphere(rng, n, radius, lambda r: -n / np.sqrt(r * r + b * b), centre, bulk)


def hernquist(rng, n, a, reach=0.6):
    fmax = 100.0 / 121.0  # truncated at 10 a

    def radius(q):
        s = np.sqrt(q * fmax)
        return a * s / (1 - s)
    return sphere(rng, n, radius, lambda r: -n / (r + a), (0, 0, 0), (0, 0, 0), reach)


# (members, Plummer scale, position, bulk velocity); satellite 2 orbits satellite 1.
SATELLITES = [(2000, 0.03, (2.0, 0, 0), (0, 40, 0)),
              (200, 0.002, (2.09, 0, 0), (0, 40, 150)),
              (400, 0.008, (0, 0.5, 0), (0, -150, 0)),
              (500, 0.01, (0, 0, -1.5), (30, 0, 0)),
              (300, 0.008, (-1, 1, 0), (0, 0, 30)),
              (150, 0.005, (0.5, -2, 0.5), (-80, 0, 0)),
              (30, 0.002, (-2, -0.5, 1), (0, 20, 0))]


def host_with_satellites(host=8000, seed=7):
    """Points, velocities and the component of each particle (0 the host)."""
    rng = np.random.default_rng(seed)
    xs, vs, truth = [], [], []
    x, v = hernquist(rng, host, 1.0)
    xs.append(x), vs.append(v), truth.append(np.zeros(host, dtype=np.int64))
    for c, (n, b, pos, vel) in enumerate(SATELLITES, start=1):
        x, v = plummer(rng, n, b, pos, vel)
        xs.append(x), vs.append(v), truth.append(np.full(n, c, dtype=np.int64))
    return np.concatenate(xs), np.concatenate(vs), np.concatenate(truth)


def subhalos(data, **props):
    """SubhaloFinder on a data object: (particles, catalogue, errors)."""
    (parts, cat), errors = jztest.run_filter(SubhaloFinder, data, None, 2, **props)
    return parts, cat, errors


def section_satellites(c):
    x, v, truth = host_with_satellites()
    data = polydata(x, {"Velocities": v})
    src = jztest.producer(data)
    fof = FriendsOfFriends(Input=src, LinkingLengthMode="Absolute", LinkingLength=0.5)
    sub = SubhaloFinder(Input=fof, VelocityArray=["POINTS", "Velocities"])
    sub.UpdatePipeline()
    alg = sub.GetClientSideObject()
    parts, cat = jztest.output_copies(alg, 2)
    gid = arr(parts, "GroupId")
    sid = arr(parts, "SubhaloId")
    c.check(sid is not None and len(sid) == len(x), "SubhaloId on every particle")
    in_group = gid == gid[0]
    for comp in range(len(SATELLITES) + 1):
        mine = (truth == comp) & in_group
        n = int(mine.sum())
        ids, counts = np.unique(sid[mine & (sid >= 0)], return_counts=True)
        best = ids[np.argmax(counts)] if len(ids) else -1
        shared = counts.max() if len(ids) else 0
        recall = shared / max(n, 1)
        precision = shared / max(int((sid == best).sum()), 1) if best >= 0 else 0.0
        line = f"component {comp} ({n} members): recall {recall:.3f}, precision {precision:.3f}"
        if n > 100:
            c.check(recall >= 0.95 and precision >= 0.95, line)
        else:
            print("  info", line)
    # The catalogue: columns, counts, ranks, the host first, nesting.
    names = ["SubhaloId", "GroupId", "SubhaloRank", "Count", "Mass", "CentreOfPotential",
             "MostBoundId", "CenterOfMass", "MeanVelocity", "VelocityDispersion", "Vmax",
             "RVmax", "HalfMassRadius", "ParentSubhaloId"]
    c.check(all(arr(cat, n) is not None for n in names), "catalogue has every column")
    S = cat.GetNumberOfPoints()
    c.check(S >= len(SATELLITES) and np.array_equal(arr(cat, "SubhaloId"), np.arange(S)),
            f"{S} subhalos numbered 0..S-1")
    c.check(np.array_equal(arr(cat, "Count"), np.bincount(sid[sid >= 0], minlength=S)),
            "Count equals the particles per SubhaloId")
    pts = vtk_to_numpy(cat.GetPoints().GetData())
    c.check(np.array_equal(pts, arr(cat, "CentreOfPotential")), "vertices at CentreOfPotential")
    mb = arr(cat, "MostBoundId")
    c.check(np.array_equal(sid[mb], np.arange(S)), "MostBoundId is a member")
    sat = {comp: np.bincount(sid[(truth == comp) & (sid >= 0)]).argmax() for comp in (0, 1, 2)}
    parent = arr(cat, "ParentSubhaloId")
    c.check(sat[0] == 0 and parent[0] == -1, "the host is the main subhalo 0, no parent")
    c.check(parent[sat[2]] == sat[1] and parent[sat[1]] == 0,
            f"satellite of a satellite nests: parents {parent[sat[2]]}, {parent[sat[1]]}")
    rank = arr(cat, "SubhaloRank")
    c.check(np.array_equal(arr(parts, "SubhaloRank")[sid >= 0], rank[sid[sid >= 0]]),
            "per-particle SubhaloRank equals the catalogue's")
    c.check(bool(np.all(arr(cat, "Vmax") > 0) and np.all(arr(cat, "HalfMassRadius") > 0)),
            "Vmax and HalfMassRadius positive")
    jztest.simple.Delete(sub)
    jztest.simple.Delete(fof)
    jztest.simple.Delete(src)


def sph_density(x, m, k):
    d, idx = cKDTree(x).query(x, k)
    h = d[:, -1]
    q = d / h[:, None]
    w = np.where(q <= 0.5, 1 - 6 * q ** 2 + 6 * q ** 3, np.where(q <= 1, 2 * (1 - q) ** 3, 0.0))
    return (m[idx] * w).sum(axis=1) * 8 / (np.pi * h ** 3)


def reference_subhalos(x, v, m, ids, members, rho, nsad, nmin):
    """The definition, brute force: the set of member-id sets of the subhalos."""
    order = sorted(members, key=lambda i: (-rho[i], ids[i]))
    n = len(order)
    xs = x[order]
    d = np.sqrt(((xs[:, None, :] - xs[None, :, :]) ** 2).sum(axis=2))
    owner, sets, recorded = [None] * n, {}, []
    for p in range(n):
        near = sorted((q for q in range(n) if q != p), key=lambda q: (d[p, q], ids[order[q]]))
        denser = [q for q in near[:nsad] if q < p][:2]
        if not denser:
            owner[p], sets[p] = p, {p}
            continue
        roots = {owner[q] for q in denser}
        if len(roots) == 2:
            a, b = roots
            # the smaller: fewer members, ties: densest member of larger id
            key = lambda r: (len(sets[r]), -ids[order[min(sets[r])]])
            small, big = (a, b) if key(a) < key(b) else (b, a)
            if len(sets[small]) >= nmin:
                recorded.append(set(sets[small]))
            for q in sets[small]:
                owner[q] = big
            sets[big] |= sets.pop(small)
            root = big
        else:
            root = roots.pop()
        owner[p] = root
        sets[root].add(p)
    recorded.sort(key=lambda s: (len(s), -ids[order[min(s)]]))
    taken, found = set(), set()
    for cand in recorded + [set(range(n))]:
        mem = sorted(q for q in cand if q not in taken)
        while len(mem) >= nmin:
            idx = np.array([order[q] for q in mem])
            r = np.sqrt(((x[idx][:, None, :] - x[idx][None, :, :]) ** 2).sum(axis=2))
            with np.errstate(divide="ignore"):
                inv = np.where(r > 0, 1 / np.where(r > 0, r, 1), 0.0)
            phi = -(inv * m[idx][None, :]).sum(axis=1)
            vbar = (m[idx][:, None] * v[idx]).sum(axis=0) / m[idx].sum()
            e = 0.5 * ((v[idx] - vbar) ** 2).sum(axis=1) + phi
            keep = [q for q, ok in zip(mem, e <= 0) if ok]
            if len(keep) == len(mem):
                break
            mem = keep
        if len(mem) >= nmin:
            taken |= set(mem)
            found.add(frozenset(int(ids[order[q]]) for q in mem))
    return found


def section_reference(c):
    rng = np.random.default_rng(11)
    xs, vs, gs = [], [], []
    for g, (n, sat) in enumerate([(300, 60), (250, 40), (200, 0)]):
        x, v = plummer(rng, n, 0.2, (10 * g, 0, 0), (0, 0, 0))
        xs.append(x), vs.append(v * 0.5), gs.append(np.full(n, g))
        if sat:
            x, v = plummer(rng, sat, 0.01, (10 * g + 0.25, 0, 0), (3, 0, 0))
            xs.append(x), vs.append(v), gs.append(np.full(sat, g))
    x, v, gid = np.concatenate(xs), np.concatenate(vs), np.concatenate(gs).astype(np.int64)
    m = 1.0 + (np.arange(len(x)) % 3)
    ids = np.arange(len(x))
    parts, cat, errors = subhalos(polydata(x, {"Velocities": v, "GroupId": gid, "Masses": m}),
                                  VelocityArray=["POINTS", "Velocities"],
                                  MassArray=["POINTS", "Masses"], OpeningAngle=0.0)
    c.check(not errors, f"no errors: {errors[:1]}")
    sid = arr(parts, "SubhaloId")
    rho = sph_density(x, m, 32)
    for g in range(3):
        mem = np.flatnonzero(gid == g)
        want = reference_subhalos(x, v, m, ids, list(mem), rho, 20, 20)
        got = {frozenset(int(i) for i in mem[sid[mem] == s]) for s in set(sid[mem]) if s >= 0}
        c.check(got == want, f"group {g}: {len(got)} subhalos equal to the reference's "
                f"{len(want)} (sizes {sorted(len(s) for s in got)} vs {sorted(len(s) for s in want)})")


def section_errors(c):
    x, v, truth = host_with_satellites(host=500)
    gid = np.zeros(len(x), dtype=np.int64)
    parts, cat, errors = subhalos(polydata(x, {"GroupId": gid}), VelocityArray=["POINTS", "None"])
    c.check(any("VelocityArray" in e for e in errors), f"no VelocityArray: clear error {errors[:1]}")
    c.check(parts.GetNumberOfPoints() == 0 and cat.GetNumberOfPoints() == 0, "no VelocityArray: empty outputs")
    parts, cat, errors = subhalos(polydata(x, {"Velocities": v}), VelocityArray=["POINTS", "Velocities"])
    c.check(any("GroupId" in e for e in errors), f"no GroupId: clear error {errors[:1]}")
    c.check(parts.GetNumberOfPoints() == 0 and cat.GetNumberOfPoints() == 0, "no GroupId: empty outputs")
    bad = v.copy()
    bad[3, 1] = np.nan
    parts, cat, errors = subhalos(polydata(x, {"Velocities": bad, "GroupId": gid}),
                                  VelocityArray=["POINTS", "Velocities"])
    c.check(len(errors) > 0 and parts.GetNumberOfPoints() == 0, f"NaN velocity: error {errors[:1]}")
    for what, wrong in (("GroupId -5", np.where(np.arange(len(x)) == 7, -5, gid)),
                        ("GroupId 2.5", np.where(np.arange(len(x)) == 7, 2.5, gid.astype(float)))):
        parts, cat, errors = subhalos(polydata(x, {"Velocities": v, "GroupId": wrong}),
                                      VelocityArray=["POINTS", "Velocities"])
        c.check(any("GroupId of point 7" in e for e in errors) and parts.GetNumberOfPoints() == 0,
                f"{what}: clear error, empty outputs {errors[:1]}")
    parts, cat, errors = subhalos(polydata(x[:10], {"Velocities": v[:10], "GroupId": gid[:10]}),
                                  VelocityArray=["POINTS", "Velocities"])
    c.check(any("DensityNeighbors" in e for e in errors), f"DensityNeighbors > N: {errors[:1]}")
    # SaddleNeighbors as large as a big group: its lists (N x N neighbours,
    # terabytes) are refused with a clear error, no output and no crash.
    rng = np.random.default_rng(3)
    big = rng.normal(size=(200000, 3))
    parts, cat, errors = subhalos(polydata(big, {"Velocities": rng.normal(size=(200000, 3)),
                                                 "GroupId": np.zeros(200000, dtype=np.int64)}),
                                  VelocityArray=["POINTS", "Velocities"], SaddleNeighbors=200000)
    c.check(any("SaddleNeighbors" in e and "GiB" in e for e in errors)
            and parts.GetNumberOfPoints() == 0 and cat.GetNumberOfPoints() == 0,
            f"SaddleNeighbors = N = 200000: memory error, empty outputs {errors[:1]}")
    parts, cat, errors = subhalos(polydata(np.zeros((0, 3)), {"Velocities": np.zeros((0, 3)),
                                                              "GroupId": np.zeros(0, dtype=np.int64)}),
                                  VelocityArray=["POINTS", "Velocities"])
    c.check(not errors and parts.GetNumberOfPoints() == 0 and cat.GetNumberOfPoints() == 0,
            f"empty input: empty outputs, no error {errors[:1]}")


def direct_energies(x, v, m, G, eps, L=0.0):
    """1/2 |v - vbar|^2 + phi of each point under the others by direct
    summation (Plummer eps, nearest image when L > 0), and phi; in row blocks
    so that a large subhalo needs little memory."""
    x = np.asarray(x, dtype=np.float64)
    phi = np.empty(len(x))
    for a in range(0, len(x), 1024):
        b = min(a + 1024, len(x))
        d = x[a:b, None, :] - x[None, :, :]
        if L > 0:
            d -= L * np.round(d / L)
        r2 = (d ** 2).sum(axis=2) + eps * eps
        r2[np.arange(b - a), np.arange(a, b)] = np.inf
        phi[a:b] = -G * (m[None, :] / np.sqrt(r2)).sum(axis=1)
    vbar = (m[:, None] * v).sum(axis=0) / m.sum()
    return 0.5 * ((v - vbar) ** 2).sum(axis=1) + phi, phi


def gadget_snapshot(base, snap):
    """Points, velocities (scaled by the expansion factor as below), ids,
    masses, G from the units, softening and box of one Gadget-4 snapshot."""
    import h5py
    with h5py.File(os.path.join(base, f"snapshot_{snap}.hdf5"), "r") as f:
        p, h = f["Parameters"].attrs, f["Header"].attrs
        x = f["PartType1/Coordinates"][...]
        # Gadget's V = v_peculiar / sqrt(a) and comoving x: with v = a V the
        # energy 1/2 v^2 + phi(x) is a times the physical one (same sign).
        v = float(h["Time"]) * f["PartType1/Velocities"][...].astype(np.float64)
        ids = f["PartType1/ParticleIDs"][...].astype(np.int64)
        m = np.full(len(x), float(h["MassTable"][1]))
        G = 6.6743e-8 * p["UnitMass_in_g"] / (p["UnitLength_in_cm"] * p["UnitVelocity_in_cm_per_s"] ** 2)
        return x, v, ids, m, G, float(p["SofteningComovingClass0"]), float(h["BoxSize"])


GADGET_SNAPSHOTS = ("013", "020", "031", "046", "062")


def gadget_subhalos(x, v, ids, m, G, eps, L, theta):
    """FriendsOfFriends (b = 0.2, 32 members, centres of potential) ->
    SubhaloFinder at OpeningAngle theta on a snapshot: (particles, catalogue,
    FoF catalogue)."""
    src = jztest.producer(polydata(x, {"Velocities": v, "Masses": m, "GlobalIds": ids}))
    common = dict(MassArray=["POINTS", "Masses"], Periodic=1, BoxFromData=0, BoxBounds=[0, L] * 3,
                  Softening=eps, GravitationalConstant=G)
    fof = FriendsOfFriends(Input=src, LinkingLength=0.2, MinimumGroupSize=32, PotentialCentres=1,
                           **common)
    sub = SubhaloFinder(Input=fof, VelocityArray=["POINTS", "Velocities"], OpeningAngle=theta,
                        **common)
    sub.UpdatePipeline()
    parts, cat = jztest.output_copies(sub.GetClientSideObject(), 2)
    fcat = jztest.output_copies(fof.GetClientSideObject(), 2)[1]
    for proxy in (sub, fof, src):
        jztest.simple.Delete(proxy)
    return parts, cat, fcat


def section_gadget(c):
    """The five Gadget-4 snapshots (G from their units, their softening,
    velocities scaled by the expansion factor): every
    subhalo inside one FoF group and bound at OpeningAngle 0 under a direct
    sum here; the counts, the mass function and how often a main subhalo's
    MostBoundId is the FoF catalogue's are reported."""
    from test_fof import external_or_skip
    base = external_or_skip("gadget4-cosmobox-n32-l50")
    for snap in GADGET_SNAPSHOTS:
        x, v, ids, m, G, eps, L = gadget_snapshot(base, snap)
        parts, cat, fcat = gadget_subhalos(x, v, ids, m, G, eps, L, 0.0)
        gid, sid = arr(parts, "GroupId"), arr(parts, "SubhaloId")
        S = cat.GetNumberOfPoints()
        inside = all(len(set(gid[sid == s])) == 1 and gid[sid == s][0] == arr(cat, "GroupId")[s]
                     for s in range(S))
        c.check(inside, f"snapshot {snap}: each of {S} subhalos inside its FoF group")
        unbound = 0
        for s in range(S):
            mem = np.flatnonzero(sid == s)
            e, phi = direct_energies(x[mem], v[mem], m[mem], G, eps, L)
            unbound += int((e > 1e-9 * np.abs(phi)).sum())
        c.check(unbound == 0, f"snapshot {snap}: every member bound at OpeningAngle 0 ({unbound} not)")
        rank, sgid, smb = arr(cat, "SubhaloRank"), arr(cat, "GroupId"), arr(cat, "MostBoundId")
        main = rank == 0
        same = int((arr(fcat, "MostBoundId")[sgid[main]] == smb[main]).sum()) if S else 0
        hist = np.histogram(np.log10(arr(cat, "Mass")), bins=np.arange(2.5, 5.5, 0.5))[0] if S else []
        print(f"  info snapshot {snap}: {fcat.GetNumberOfPoints()} groups, {S} subhalos "
              f"({int(main.sum()) if S else 0} main); mass function per 0.5 dex from 10^2.5: "
              f"{list(hist)}; main MostBoundId = FoF's in {same} of {int(main.sum()) if S else 0}")


def unbound_members(x, v, m, sid, G, eps, L=0.0):
    """(members whose direct-sum energy is >= 0, all members, the largest
    E / |phi| of a member: how near E = 0 the closest one is) over the subhalos."""
    bad, nearest = 0, -np.inf
    for s in np.unique(sid[sid >= 0]):
        mem = np.flatnonzero(sid == s)
        e, phi = direct_energies(x[mem], v[mem], m[mem], G, eps, L)
        bad += int((e >= 0).sum())
        nearest = max(nearest, float((e / np.abs(phi)).max()))
    return bad, int((sid >= 0).sum()), nearest


# OpeningAngle -> the largest fraction of subhalo members allowed to be
# unbound under the direct sum (the tree potential's error decides near E = 0).
OPENING_BOUNDS = {0.5: 0.01, 1.5: 0.05}


def section_opening(c):
    """At OpeningAngle > 0 (the default 0.5, and the largest, 1.5) the
    unbinding's tree potential differs from the direct sum: the fraction of
    subhalo members whose direct-sum energy is >= 0 is reported and bounded,
    on the host with satellites, on one group of a Hernquist host whose speeds
    reach the escape speed (many members near E = 0, decided by the tree), and
    on the five Gadget-4 snapshots."""
    from test_fof import external_or_skip
    base = external_or_skip("gadget4-cosmobox-n32-l50")
    x, v, _ = host_with_satellites()
    hx, hv = hernquist(np.random.default_rng(11), 10000, 1.0, reach=1.2)
    snaps = [gadget_snapshot(base, snap) for snap in GADGET_SNAPSHOTS]
    for theta, bound in OPENING_BOUNDS.items():
        src = jztest.producer(polydata(x, {"Velocities": v}))
        fof = FriendsOfFriends(Input=src, LinkingLengthMode="Absolute", LinkingLength=0.5)
        sub = SubhaloFinder(Input=fof, VelocityArray=["POINTS", "Velocities"], OpeningAngle=theta)
        sub.UpdatePipeline()
        parts = jztest.output_copies(sub.GetClientSideObject(), 2)[0]
        for proxy in (sub, fof, src):
            jztest.simple.Delete(proxy)
        host = unbound_members(x, v, np.ones(len(x)), arr(parts, "SubhaloId"), 1.0, 0.0)
        one = polydata(hx, {"Velocities": hv, "GroupId": np.zeros(len(hx), dtype=np.int64)})
        parts = subhalos(one, VelocityArray=["POINTS", "Velocities"], OpeningAngle=theta)[0]
        escape = unbound_members(hx, hv, np.ones(len(hx)), arr(parts, "SubhaloId"), 1.0, 0.0)
        real = [0, 0, -np.inf]
        for xs, vs, ids, ms, G, eps, L in snaps:
            sid = arr(gadget_subhalos(xs, vs, ids, ms, G, eps, L, theta)[0], "SubhaloId")
            bad, total, nearest = unbound_members(xs, vs, ms, sid, G, eps, L)
            real = [real[0] + bad, real[1] + total, max(real[2], nearest)]
        for name, (bad, total, nearest) in (("host with satellites", host),
                                   ("Hernquist host to the escape speed", escape),
                                   ("Gadget-4 snapshots", real)):
            fraction = bad / max(total, 1)
            print(f"  info OpeningAngle {theta}: {name}: {bad} of {total} members "
                  f"unbound under the direct sum (fraction {fraction:.2e}; the nearest to "
                  f"E = 0 at E = {nearest:.1e} |phi|)")
            c.check(total > 0 and fraction <= bound,
                    f"OpeningAngle {theta}, {name}: unbound fraction {fraction:.2e} <= {bound}")


SECTIONS = dict(satellites=section_satellites, reference=section_reference, errors=section_errors,
                gadget=section_gadget, opening=section_opening)

if __name__ == "__main__":
    run_section(SECTIONS).finish()
