"""HaloTracking (doc/filters/HaloTracking.md) against an independent numpy
tracker (tracking_reference.py): synthetic series with known answers served
by a programmable time-series source, the real Gadget-4 series through
ParticleSnapshotReader -> FriendsOfFriends -> HaloTracking checked against
the tracking of the snapshots' own Gadget-4 FOF groups (read with h5py) for
every link, the cache (FoF computations counted), the track history and
default views, and bad input.

Usage: pvpython test_halo_tracking.py SECTION
"""
import glob
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
import snapshot_files as sf  # noqa: E402
from checks import run_section  # noqa: E402
from jztest import (SERIES_INFO_SCRIPT, SERIES_OUTPUT_SCRIPT, SERIES_STEP_SCRIPT, SKIP,  # noqa: E402
                    count_fof_executions, data_leaves, simple, update_collecting_errors)
from tracking_reference import COLUMNS, reference_tree  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402



def plugin_proxy(name):
    return jztest.__dict__.get(name) or getattr(simple, name)


HaloTracking = plugin_proxy("HaloTracking")
FriendsOfFriends = plugin_proxy("FriendsOfFriends")
ParticleSnapshotReader = plugin_proxy("ParticleSnapshotReader")

DATA_SCRIPT = SERIES_STEP_SCRIPT + """
from vtkmodules.vtkCommonDataModel import vtkPolyData
ids, groups, masses = d['ids%d' % s], d['groups%d' % s], d['masses%d' % s]
def piece(sel):
    pd = vtkPolyData()
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.random.default_rng(s).random((int(sel.sum()), 3)), deep=1))
    pd.SetPoints(pts)
    arrays = [('Masses', numpy_to_vtk(masses[sel].astype(np.float64), deep=1))]
    if not d['no_groups']:
        arrays.append(('GroupId', numpy_to_vtkIdTypeArray(groups[sel].astype(np.int64), deep=1)))
    if not d['no_ids']:
        arrays.append(('GlobalIds', numpy_to_vtkIdTypeArray(ids[sel].astype(np.int64), deep=1)))
    for name, a in arrays:
        a.SetName(name)
        pd.GetPointData().AddArray(a)
    return pd
n = len(ids)
""" + SERIES_OUTPUT_SCRIPT


class Series:
    """A time series of particles (ids, GroupId, masses per step; -1 outside
    groups) served by a ProgrammableSource, whose executions are counted."""

    def __init__(self, steps, times=None, no_ids=False, blocks=False, no_groups=False):
        self.dir = tempfile.mkdtemp(prefix="jz-tracking-")
        path = os.path.join(self.dir, "series.npz")
        arrays = {"times": np.array(times if times is not None else np.arange(len(steps)) * 0.5 + 1,
                                    dtype=np.float64),
                  "no_ids": np.array(no_ids), "no_groups": np.array(no_groups)}
        for s, (ids, groups, masses) in enumerate(steps):
            arrays[f"ids{s}"], arrays[f"groups{s}"], arrays[f"masses{s}"] = ids, groups, masses
        np.savez(path, **arrays)
        self.steps = steps
        self.times = arrays["times"]
        self.source = simple.ProgrammableSource(
            OutputDataSetType="vtkMultiblockDataSet" if blocks else "vtkPolyData",
            Script=DATA_SCRIPT.format(path=path),
            ScriptRequestInformation=SERIES_INFO_SCRIPT.format(path=path))
        self.runs = 0
        self.source.GetClientSideObject().AddObserver(
            "EndEvent", lambda *a: setattr(self, "runs", self.runs + 1))

    def members(self):
        return [(i[g >= 0], g[g >= 0], m[g >= 0]) for i, g, m in self.steps]

    def close(self):
        simple.Delete(self.source)
        shutil.rmtree(self.dir, ignore_errors=True)


def make_step(groups_by_id, n_ids, masses=None):
    """(ids, groups, masses) of a step with particles 0..n_ids-1 (shuffled)."""
    ids = np.random.default_rng(n_ids + len(groups_by_id)).permutation(n_ids).astype(np.int64)
    groups = np.full(n_ids, -1, np.int64)
    for first, last, g in groups_by_id:
        groups[(ids >= first) & (ids <= last)] = g
    m = np.ones(n_ids) if masses is None else masses[ids]
    return ids * 3 + 7, groups, m


def run(proxy, time=None):
    """Updates the filter at `time`; returns its algorithm and the errors."""
    return update_collecting_errors(proxy, time)


def table(alg, port):
    t = alg.GetOutputDataObject(port)
    return {t.GetColumnName(i): vtk_to_numpy(t.GetColumn(i)) for i in range(t.GetNumberOfColumns())}


def points_arrays(alg, names=("GlobalIds", "GroupId", "TrackId")):
    """Point arrays of port 0 over all blocks, concatenated."""
    leaves = data_leaves(alg.GetOutputDataObject(0))
    res = {}
    for name in names:
        parts = [vtk_to_numpy(l.GetPointData().GetArray(name)) for l in leaves
                 if l.GetPointData().GetArray(name) is not None]
        res[name] = np.concatenate(parts) if parts else None
    return res


def check_tree(c, got, want, what, mass_rtol=1e-12):
    n = len(want["GroupId"])
    if not c.check(len(got.get("GroupId", [])) == n, f"{what}: {n} rows"):
        return False
    ok = True
    for col in COLUMNS:
        if col == "Mass":
            ok &= c.close(got[col], want[col], mass_rtol, f"{what}: Mass", atol=1e-300)
        else:
            ok &= c.check(np.array_equal(got[col].astype(np.int64), want[col]), f"{what}: {col}")
    return ok


def check_tracks_on_points(c, alg, tree, step, what):
    """Port 0's TrackId at `step` is the table's TrackId of the point's GroupId."""
    p = points_arrays(alg)
    rows = tree["TimeStep"] == step
    track_of = dict(zip(tree["GroupId"][rows].tolist(), tree["TrackId"][rows].tolist()))
    want = np.array([track_of.get(int(g), -1) if g >= 0 else -1 for g in p["GroupId"]])
    c.check(p["TrackId"] is not None and np.array_equal(p["TrackId"], want),
            f"{what}: TrackId of every point at step {step}")


def synthetic_steps():
    """Known answers: A and B merge at step 1; C flies by D exchanging two
    particles and both go on; the merged halo fragments at step 2 (the
    smaller piece starts a track); step 3 has no group; at step 4 groups
    appear again (new tracks); a triple merger at step 5 with a tie."""
    n = 120
    masses = 1.0 + (np.arange(n) % 3)
    return [
        make_step([(0, 29, 0), (30, 49, 1), (50, 59, 2), (60, 69, 3)], n, masses),
        make_step([(0, 49, 0), (50, 57, 1), (60, 61, 1), (58, 59, 2), (62, 69, 2)], n, masses),
        make_step([(0, 34, 0), (35, 49, 1), (50, 59, 2), (60, 69, 3)], n, masses),
        make_step([], n, masses),
        make_step([(0, 9, 1), (10, 19, 2), (20, 29, 0), (100, 119, 3)], n, masses),
        make_step([(0, 29, 0), (100, 119, 1)], n, masses),
    ]


def section_synthetic(c):
    for blocks in (False, True):
        series = Series(synthetic_steps(), blocks=blocks)
        what = "multiblock" if blocks else "polydata"
        for minimum_shared in (1, 3):
            ht = HaloTracking(Input=series.source, MinimumShared=minimum_shared,
                              MassArray=["POINTS", "Masses"])
            alg, errors = run(ht, series.times[2])
            c.check(not errors, f"{what}: no error ({errors[:1]})")
            got = table(alg, 1)
            want = reference_tree(series.members(), minimum_shared)
            check_tree(c, got, want, f"{what}, MinimumShared {minimum_shared}")
            c.check(np.allclose(got["Time"], series.times[got["TimeStep"]]), f"{what}: Time column")
            check_tracks_on_points(c, alg, want, 2, what)
            key = {(s, g): i for i, (s, g) in enumerate(zip(want["TimeStep"], want["GroupId"]))}
            row = lambda s, g: key[(s, g)]  # noqa: E731
            # The known answers, independent of the reference.
            c.check(want["DescendantGroupId"][row(0, 1)] == 0 and
                    want["IsMainProgenitor"][row(0, 0)] == 1 and
                    want["IsMainProgenitor"][row(0, 1)] == 0, "A and B merge, A is the main progenitor")
            c.check(want["TrackId"][row(1, 1)] == want["TrackId"][row(0, 2)] and
                    want["TrackId"][row(1, 2)] == want["TrackId"][row(0, 3)], "the fly-by keeps both tracks")
            c.check(want["TrackId"][row(2, 0)] == want["TrackId"][row(0, 0)] and
                    want["TrackId"][row(2, 1)] == 4, "the fragment starts track 4")
            c.check(not np.any(want["TimeStep"] == 3), "no rows at the step without groups")
            c.check(want["TrackId"][row(4, 0)] == 5 and want["DescendantGroupId"][row(2, 0)] == -1,
                    "groups after the empty step start new tracks")
            # Step 4 -> 5: three groups of 10 particles merge (equal shares and
            # Counts: the smallest GroupId is the main progenitor).
            c.check(want["IsMainProgenitor"][row(4, 0)] == 1 and want["IsMainProgenitor"][row(4, 1)] == 0,
                    "triple merger: the tie goes to the smallest GroupId")
            simple.Delete(ht)
        series.close()


def gadget4_groups(snapshot, fof_tab):
    """Gadget-4's own FOF groups of a snapshot: (ids, group index, mass) of
    the members (the file is in group order), from h5py alone."""
    import h5py
    with h5py.File(snapshot, "r") as f:
        pid = f["PartType1/ParticleIDs"][...].astype(np.int64)
        mass = float(f["Header"].attrs["MassTable"][1])
    with h5py.File(fof_tab, "r") as f:
        ng = int(f["Header"].attrs["Ngroups_Total"])
        length = f["Group/GroupLen"][...] if ng else np.zeros(0, np.int64)
        offset = f["Group/GroupOffsetType"][:, 1] if ng else np.zeros(0, np.int64)
    gid = np.full(len(pid), -1, np.int64)
    for k, (o, m) in enumerate(zip(offset, length)):
        gid[o:o + m] = k
    inside = gid >= 0
    return pid[inside], gid[inside], np.full(int(inside.sum()), mass)


def section_gadget(c):
    d = sf.gadget4_dir()
    if d is None:
        print("SKIP: ../shared/data/external/gadget4-cosmobox-n32-l50 is not available")
        sys.exit(SKIP)
    snaps = sorted(glob.glob(os.path.join(d, "snapshot_*.hdf5")))
    reader = ParticleSnapshotReader(FileName=snaps)
    fof = FriendsOfFriends(Input=reader, LinkingLength=0.2, MinimumGroupSize=32, Periodic=1)
    ht = HaloTracking(Input=fof, MassArray=["POINTS", "Masses"])
    times = list(reader.TimestepValues)
    alg, errors = run(ht, times[-1])
    c.check(not errors, f"Gadget-4 series: no error ({errors[:1]})")
    got = table(alg, 1)
    # The reference: Gadget-4's own groups, renamed to the filter's GroupIds
    # (the same member sets), tracked by the numpy rules.
    steps = []
    for s, (snap, t) in enumerate(zip(snaps, times)):
        ids, gadget, masses = gadget4_groups(snap, snap.replace("snapshot_", "fof_tab_"))
        run(ht, t)
        p = points_arrays(alg)
        ours = dict(zip(p["GlobalIds"].tolist(), p["GroupId"].tolist()))
        mine = np.array([ours[i] for i in ids.tolist()], np.int64)
        pairs = np.unique(np.stack([gadget, mine], 1), axis=0) if len(ids) else np.zeros((0, 2))
        c.check(len(pairs) == len(np.unique(gadget)) == len(np.unique(mine)) and
                int((p["GroupId"] >= 0).sum()) == len(ids),
                f"step {s}: FriendsOfFriends finds Gadget-4's {len(np.unique(gadget))} groups")
        steps.append((ids, mine, masses))
        check_tracks_on_points(c, alg, got, s, "Gadget-4 series")
    want = reference_tree(steps)
    check_tree(c, got, want, "Gadget-4 series, every link", mass_rtol=1e-12)
    links = int((want["DescendantGroupId"] >= 0).sum())
    mergers = int(((want["DescendantGroupId"] >= 0) & (want["IsMainProgenitor"] == 0)).sum())
    c.check(links > 100 and mergers > 0, f"the series has {links} links and {mergers} mergers")
    # The history of the default track: the most massive group at z = 0.
    hist = table(alg, 2)
    last = want["TimeStep"] == len(snaps) - 1
    top = np.flatnonzero(last)[np.argmax(want["Mass"][last])]
    rows = want["TrackId"] == want["TrackId"][top]
    c.check(np.allclose(hist["Mass"], want["Mass"][rows]) and
            np.array_equal(hist["Count"], want["Count"][rows]) and
            np.allclose(hist["Time"], np.array(times)[want["TimeStep"][rows]]),
            f"TrackHistory: the most massive z = 0 halo's main branch ({int(rows.sum())} steps)")
    ht.SelectedTrackId = 0
    alg, _ = run(ht, times[-1])
    hist = table(alg, 2)
    c.check(np.array_equal(hist["Count"], want["Count"][want["TrackId"] == 0]),
            "TrackHistory of SelectedTrackId 0")
    for p in (ht, fof, reader):
        simple.Delete(p)


def section_cache(c):
    d = sf.gadget4_dir()
    if d is None:
        print("SKIP: ../shared/data/external/gadget4-cosmobox-n32-l50 is not available")
        sys.exit(SKIP)
    reader = ParticleSnapshotReader(FileName=sorted(glob.glob(os.path.join(d, "snapshot_*.hdf5"))))
    fof = FriendsOfFriends(Input=reader, LinkingLength=0.2, MinimumGroupSize=32, Periodic=1)
    executions = count_fof_executions(fof)

    def computed():
        return executions["computing"]

    ht = HaloTracking(Input=fof)
    times = list(reader.TimestepValues)
    alg, _ = run(ht, times[2])
    c.check(computed() == len(times), f"first pass: one FoF computation per time step ({computed()})")
    first = table(alg, 1)
    run(ht, times[2])
    c.check(computed() == len(times), "the same time again: no FoF")
    # Scrubbing: each frame updates upstream for its own step, which FoF
    # serves from its per-step cache.
    for t in [times[0], times[4], times[1], times[3], times[2]]:
        before = executions["reusing"]
        alg, errors = run(ht, t)
        c.check(computed() == len(times) and executions["reusing"] == before + 1 and not errors,
                f"scrub to step {times.index(t)}: FoF executes and reuses its result, "
                f"no FoF computation ({computed()} in all)")
        check_tracks_on_points(c, alg, first, times.index(t), "after scrubbing")
    c.check(all(np.array_equal(first[k], v) for k, v in table(alg, 1).items()), "the tree is unchanged")
    before = computed()
    ht.MinimumShared = 40
    alg, _ = run(ht, times[3])
    relinked = table(alg, 1)
    c.check(computed() == before, "a new MinimumShared relinks the cached members: no FoF")
    c.check(np.all((relinked["SharedWithDescendant"] == 0) | (relinked["SharedWithDescendant"] >= 40)) and
            not np.array_equal(relinked["DescendantGroupId"], first["DescendantGroupId"]),
            "MinimumShared 40 drops the smaller links")
    ht.SelectedTrackId = 1
    run(ht, times[3])
    c.check(computed() == before, "a new SelectedTrackId: no FoF")
    fof.LinkingLength = 0.18
    alg, _ = run(ht, times[3])
    c.check(computed() == before + len(times),
            f"a new FoF LinkingLength: a new pass, one computation per step ({computed() - before})")
    c.check(len(table(alg, 1)["GroupId"]) < len(first["GroupId"]), "fewer groups at b = 0.18")
    for t in [times[1], times[4]]:
        run(ht, t)
    c.check(computed() == before + len(times), "scrubbing at b = 0.18: no FoF")
    fof.LinkingLength = 0.2
    alg, _ = run(ht, times[2])
    c.check(computed() == before + 2 * len(times),
            f"back to b = 0.2: recomputed, the cache was cleared ({computed() - before})")
    c.check(all(np.array_equal(relinked[k], v) for k, v in table(alg, 1).items()),
            "back to b = 0.2: the tree of MinimumShared 40 again")
    for p in (ht, fof, reader):
        simple.Delete(p)


def section_views(c):
    from paraview import servermanager as sm
    series = Series(synthetic_steps())
    ht = HaloTracking(Input=series.source)
    c.check(sorted(ht.ListProperties()) == ["Input", "MassArray", "MinimumShared", "SelectedTrackId"],
            f"properties {sorted(ht.ListProperties())}")
    c.check(ht.GetXMLLabel() == "Halo Tracking" and ht.MinimumShared == 1 and
            ht.SelectedTrackId == -1 and ht.MassArray[1] == "None",
            "label Halo Tracking; defaults MinimumShared 1, SelectedTrackId -1, MassArray None")
    menu = ht.SMProxy.GetHints().FindNestedElementByName("ShowInMenu")
    c.check(menu is not None and menu.GetAttribute("category") == "JZ-Tree", "menu category JZ-Tree")
    run(ht, series.times[-1])
    controller = sm.vtkSMParaViewPipelineControllerWithRendering()
    c.check(controller.GetPreferredViewType(ht.SMProxy, 2) == "XYChartView",
            "Track History opens in a line chart")
    c.check(controller.GetPreferredViewType(ht.SMProxy, 1) == "SpreadSheetView",
            "Merger Tree opens in a spreadsheet")
    view = simple.CreateView("RenderView")
    rep = simple.Show(simple.OutputPort(ht, 0), view)
    c.check(list(rep.ColorArrayName) == ["POINTS", "TrackId"], f"particles coloured by TrackId ({list(rep.ColorArrayName)})")
    chart = simple.CreateView("XYChartView")
    crep = simple.Show(simple.OutputPort(ht, 2), chart)
    c.check(crep.UseIndexForXAxis == 0 and crep.XArrayName == "Time",
            f"the chart plots against Time ({crep.XArrayName}, index {crep.UseIndexForXAxis})")
    visible = list(crep.SeriesVisibility)
    c.check("Mass" in visible, f"the chart shows Mass ({visible})")
    simple.Delete(crep)
    simple.Delete(rep)
    simple.Delete(ht)
    series.close()


def section_errors(c):
    steps = synthetic_steps()
    # No GlobalIds.
    series = Series(steps, no_ids=True)
    ht = HaloTracking(Input=series.source)
    alg, errors = run(ht, series.times[0])
    c.check(any("GlobalIds" in e for e in errors), f"no GlobalIds: error names them ({errors[:1]})")
    c.check(alg.GetOutputDataObject(0).GetNumberOfPoints() == 0 and
            alg.GetOutputDataObject(1).GetNumberOfRows() == 0, "no GlobalIds: empty outputs")
    simple.Delete(ht)
    series.close()
    # An id twice in one step.
    bad = [list(s) for s in steps]
    ids = bad[2][0].copy()
    ids[5] = ids[9]
    bad[2][0] = ids
    series = Series([tuple(s) for s in bad])
    ht = HaloTracking(Input=series.source)
    alg, errors = run(ht, series.times[0])
    c.check(any(f"particle id {ids[9]} appears twice at time step 2" in e for e in errors),
            f"duplicate id: error names it and the step ({errors[:1]})")
    c.check(alg.GetOutputDataObject(0).GetNumberOfPoints() == 0 and
            alg.GetOutputDataObject(1).GetNumberOfRows() == 0, "duplicate id: empty outputs")
    simple.Delete(ht)
    series.close()
    # No GroupId.
    series = Series(steps, no_groups=True)
    ht = HaloTracking(Input=series.source)
    alg, errors = run(ht, series.times[0])
    c.check(any("GroupId" in e for e in errors) and alg.GetOutputDataObject(1).GetNumberOfRows() == 0,
            f"no GroupId: error names it, empty outputs ({errors[:1]})")
    simple.Delete(ht)
    series.close()
    # A NaN or negative mass in the MassArray.
    for bad_mass in (float("nan"), -1.0):
        bad = [list(s) for s in steps]
        m = bad[1][2].copy()
        m[np.flatnonzero(bad[1][1] >= 0)[3]] = bad_mass
        bad[1][2] = m
        series = Series([tuple(s) for s in bad])
        ht = HaloTracking(Input=series.source, MassArray=["POINTS", "Masses"])
        alg, errors = run(ht, series.times[0])
        c.check(len(errors) > 0 and alg.GetOutputDataObject(1).GetNumberOfRows() == 0,
                f"mass {bad_mass}: an error, empty outputs ({errors[:1]})")
        simple.Delete(ht)
        series.close()
    # Ids at both ends of the 64-bit range are ids like any other.
    wide = [(np.where(i % 2 == 0, i - 2**62, i + 2**62).astype(np.int64), g, m) for i, g, m in steps]
    series = Series(wide)
    ht = HaloTracking(Input=series.source, MassArray=["POINTS", "Masses"])
    alg, errors = run(ht, series.times[0])
    check_tree(c, table(alg, 1), reference_tree(series.members()), "ids near -2^62 and 2^62")
    simple.Delete(ht)
    series.close()
    # One time step: every group starts a track, no links, no error.
    series = Series(steps[:1], times=[3.0])
    ht = HaloTracking(Input=series.source)
    alg, errors = run(ht)
    tree = table(alg, 1)
    c.check(not errors and np.array_equal(tree["TrackId"], [0, 1, 2, 3]) and
            np.all(tree["DescendantGroupId"] == -1), "a single step: four tracks, no links")
    simple.Delete(ht)
    series.close()
    # An Input without time steps is one step; an empty Input gives empty
    # outputs without error.
    ids = np.arange(100, dtype=np.int64) + 5
    groups = np.where(ids < 50, 0, np.where(ids < 70, 1, -1)).astype(np.int64)
    src = jztest.producer(jztest.polydata(np.random.default_rng(1).random((100, 3)),
                                          {"GlobalIds": ids, "GroupId": groups}))
    ht = HaloTracking(Input=src)
    alg, errors = run(ht)
    tree = table(alg, 1)
    c.check(not errors and np.array_equal(tree["Count"], [45, 20]) and
            np.array_equal(points_arrays(alg)["TrackId"], np.where(groups >= 0, groups, -1)),
            "an Input without time steps: one step, its groups' tracks")
    simple.Delete(ht)
    ht = HaloTracking(Input=jztest.producer(jztest.polydata(np.zeros((0, 3)))))
    alg, errors = run(ht)
    c.check(not errors and alg.GetOutputDataObject(1).GetNumberOfRows() == 0 and
            alg.GetOutputDataObject(0).GetNumberOfPoints() == 0, "an empty Input: empty outputs, no error")
    simple.Delete(ht)
    # Steps where no group exists.
    series = Series([steps[3], steps[3], steps[0]])
    ht = HaloTracking(Input=series.source)
    alg, errors = run(ht, series.times[1])
    tree = table(alg, 1)
    p = points_arrays(alg)
    c.check(not errors and np.all(tree["TimeStep"] == 2) and np.all(p["TrackId"] == -1),
            "steps without groups: no rows, TrackId -1 everywhere")
    simple.Delete(ht)
    series.close()


SECTIONS = {"synthetic": section_synthetic, "gadget": section_gadget, "cache": section_cache,
            "views": section_views, "errors": section_errors}

if __name__ == "__main__":
    run_section(SECTIONS).finish()
