"""ParticleSnapshotReader against h5py: every array of the real Gadget-4
snapshots and catalogues exactly (values and types), multi-file sets cut from
them, a SWIFT-layout file, time series, selections and Stride, the periodic
box taken from the data by the filters, the reader factory's content check,
every kind of bad input (a clear error naming file and dataset, no output),
the arrays made without fresh memory of their own, used alone and written,
and the direct (positioned) reads of HDF5 datasets against the HDF5 library's.

Usage: pvpython test_reader.py SECTION   (see SECTIONS at the bottom)
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
from checks import run_section  # noqa: E402
from jztest import SKIP, polydata, producer, simple  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import snapshot_files as sf  # noqa: E402
from paraview import servermanager as sm  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet, VTK_VERTEX  # noqa: E402

SNAPS = ("013", "020", "031", "046", "062")


def reader_proxy(files, **props):
    r = simple.ParticleSnapshotReader(FileName=files)
    for k, v in props.items():
        setattr(r, k, v)
    return r


class Read:
    """One reader execution: the blocks by name, the field data, the errors."""

    def __init__(self, files, time=None, **props):
        self.proxy = reader_proxy(files, **props)
        alg, self.errors, self.warnings = jztest.update_collecting(self.proxy, time)
        out = alg.GetOutputDataObject(0)
        self.output = out.NewInstance()
        self.output.ShallowCopy(out)
        self.blocks = {}
        for i in range(self.output.GetNumberOfBlocks()):
            name = self.output.GetMetaData(i).Get(vtkCompositeDataSet.NAME())
            self.blocks[name] = self.output.GetBlock(i)
        self.timesteps = list(self.proxy.TimestepValues) if self.proxy.TimestepValues else []
        simple.Delete(self.proxy)

    def points(self, block):
        return vtk_to_numpy(self.blocks[block].GetPoints().GetData())

    def array(self, block, name):
        arr = self.blocks[block].GetPointData().GetArray(name)
        if arr is None:
            return None
        a = vtk_to_numpy(arr)
        return a.reshape(len(a), arr.GetNumberOfComponents()) if arr.GetNumberOfComponents() > 1 else a

    def field(self, name, block=None):
        data = self.blocks[block] if block else self.output
        arr = data.GetFieldData().GetAbstractArray(name)
        if arr is None:
            return None
        if arr.IsA("vtkStringArray"):
            return arr.GetValue(0)
        return vtk_to_numpy(arr).ravel()

    def empty(self):
        return self.output.GetNumberOfBlocks() == 0


def same(c, actual, expected, what):
    """Exact equality, dtype and shape included (byte order aside)."""
    if actual is None:
        return c.check(False, f"{what}: array present")
    expected = np.asarray(expected)
    ok = actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("=") and \
        actual.shape == expected.shape and bool(np.array_equal(actual, expected))
    return c.check(ok, f"{what} == h5py ({actual.dtype}{list(actual.shape)} vs "
                       f"{expected.dtype}{list(expected.shape)})")


def check_snapshot(c, run, h5files, label):
    """Every block equals the concatenation of the h5py datasets of `h5files`."""
    files = [h5py.File(f, "r") for f in h5files]
    try:
        types = sorted({g for f in files for g in f if g.startswith("PartType")},
                       key=lambda g: int(g[8:]))
        c.check(sorted(run.blocks) == sorted(types), f"{label}: blocks {sorted(run.blocks)}")
        header = files[0]["Header"].attrs
        for t in types:
            if t not in run.blocks:
                continue
            parts = [f[t] for f in files if t in f]
            names = sorted({n for p in parts for n in p})
            ref = {n: np.concatenate([p[n][...] for p in parts]) for n in names}
            same(c, run.points(t), ref["Coordinates"], f"{label} {t}: points")
            block = run.blocks[t]
            n = block.GetNumberOfPoints()
            c.check(block.GetNumberOfCells() == n and block.GetNumberOfVerts() == n and
                    (n == 0 or block.GetCellType(n - 1) == VTK_VERTEX),
                    f"{label} {t}: one vertex per point ({n})")
            for name in names:
                if name != "Coordinates":
                    same(c, run.array(t, name), ref[name], f"{label} {t}: {name}")
            if "Masses" not in names:
                mass = header["MassTable"][int(t[8:])]
                same(c, run.array(t, "Masses"), np.full(n, mass), f"{label} {t}: Masses from MassTable")
            if "ParticleIDs" in names:
                gids = block.GetPointData().GetGlobalIds()
                c.check(gids is not None and gids.GetName() == "GlobalIds" and
                        np.array_equal(vtk_to_numpy(gids), ref["ParticleIDs"].astype(np.int64)),
                        f"{label} {t}: GlobalIds attribute == ParticleIDs")
    finally:
        for f in files:
            f.close()


def check_header_fields(c, run, path, label):
    with h5py.File(path, "r") as f:
        h = f["Header"].attrs
        p = f["Parameters"].attrs if "Parameters" in f else {}
        expected = {"BoxSize": h["BoxSize"], "Time": h["Time"], "Redshift": h["Redshift"]}
        for name in ("HubbleParam", "Omega0", "OmegaLambda", "UnitLength_in_cm", "UnitMass_in_g",
                     "UnitVelocity_in_cm_per_s"):
            if name in h:
                expected[name] = h[name]
            elif name in p:
                expected[name] = p[name]
    for block in [None] + sorted(run.blocks):
        for name, value in expected.items():
            got = run.field(name, block)
            c.check(got is not None and np.array_equal(got, np.atleast_1d(value).astype(np.float64)),
                    f"{label} field data {name} on {block or 'the multiblock'} = {value}")


def need_gadget4():
    d = sf.gadget4_dir()
    if d is None:
        print("SKIP: ../shared/data/external/gadget4-cosmobox-n32-l50 is not available")
        sys.exit(SKIP)
    return d


# ----------------------------------------------------------------------------
def read_gadget4_files(c, prefix):
    """Reads each of the Gadget-4 files <prefix>_<snap>.hdf5; yields the
    snapshot, its path and the run (checked to have no error)."""
    d = need_gadget4()
    for snap in SNAPS:
        path = os.path.join(d, f"{prefix}_{snap}.hdf5")
        run = Read(path)
        c.check(not run.errors, f"{prefix}_{snap}: no error {run.errors[:1]}")
        yield snap, path, run


def section_gadget4(c):
    d = need_gadget4()
    for snap, path, run in read_gadget4_files(c, "snapshot"):
        check_snapshot(c, run, [path], f"snapshot_{snap}")
        check_header_fields(c, run, path, f"snapshot_{snap}")
        c.check(run.field("SnapshotFormat") == "Gadget-4", f"snapshot_{snap}: format Gadget-4")
        with h5py.File(path, "r") as f:
            t = float(f["Header"].attrs["Time"])
        c.check(run.timesteps == [t], f"snapshot_{snap}: one time step at Header/Time {t}")
    # The pvpython route a user takes.
    r = simple.OpenDataFile(os.path.join(d, "snapshot_062.hdf5"))
    c.check(r is not None and r.GetXMLName() == "ParticleSnapshotReader",
            "OpenDataFile picks ParticleSnapshotReader")
    r.UpdatePipeline()
    c.check(r.GetDataInformation().GetNumberOfPoints() == 32768, "OpenDataFile: 32768 points")
    simple.Delete(r)


def section_catalogue(c):
    d = need_gadget4()
    for snap, path, run in read_gadget4_files(c, "fof_tab"):
        c.check(sorted(run.blocks) == ["Group"], f"fof_tab_{snap}: one block Group")
        with h5py.File(path, "r") as f:
            g = f["Group"]
            same(c, run.points("Group"), g["GroupPos"][...], f"fof_tab_{snap}: points = GroupPos")
            c.check(run.blocks["Group"].GetNumberOfVerts() == len(g["GroupPos"]),
                    f"fof_tab_{snap}: one vertex per group")
            for name in g:
                same(c, run.array("Group", name), g[name][...], f"fof_tab_{snap}: {name}")
            c.check(np.array_equal(run.field("BoxSize"), [50.0]), f"fof_tab_{snap}: BoxSize")
        c.check(run.field("SnapshotFormat") == "Gadget-4 group catalogue",
                f"fof_tab_{snap}: format {run.field('SnapshotFormat')}")
    tmp = tempfile.mkdtemp(prefix="jz-reader-cat-")
    try:
        # A multi-file catalogue, and a Gadget-4 fof_subhalo_tab with a Subhalo group.
        parts = sf.split(os.path.join(d, "fof_tab_062.hdf5"), os.path.join(tmp, "fof_tab_062"),
                         [30, 30, 50])
        run = Read(parts[2])
        with h5py.File(os.path.join(d, "fof_tab_062.hdf5"), "r") as f:
            for name in f["Group"]:
                same(c, run.array("Group", name), f["Group"][name][...],
                     f"4-part fof_tab (one part empty): {name}")
        sub = os.path.join(tmp, "fof_subhalo_tab_062.hdf5")
        shutil.copyfile(os.path.join(d, "fof_tab_062.hdf5"), sub)
        rng = np.random.default_rng(3)
        with h5py.File(sub, "a") as f:
            f["Header"].attrs["Nsubhalos_ThisFile"] = np.int32(120)
            f["Header"].attrs["Nsubhalos_Total"] = np.int32(120)
            s = f.create_group("Subhalo")
            s.create_dataset("SubhaloPos", data=rng.random((120, 3)).astype(np.float32) * 50)
            s.create_dataset("SubhaloLen", data=rng.integers(20, 500, 120).astype(np.int32))
            s.create_dataset("SubhaloGroupNr", data=rng.integers(0, 76, 120).astype(np.int64))
            s.create_dataset("SubhaloVel", data=rng.random((120, 3)).astype(np.float32))
        run = Read(sub)
        c.check(sorted(run.blocks) == ["Group", "Subhalo"], "fof_subhalo_tab: Group and Subhalo")
        with h5py.File(sub, "r") as f:
            same(c, run.points("Subhalo"), f["Subhalo/SubhaloPos"][...], "Subhalo points")
            for name in f["Subhalo"]:
                same(c, run.array("Subhalo", name), f["Subhalo"][name][...], f"Subhalo {name}")
        run = Read(sub, ParticleTypes=["Subhalo"])
        c.check(sorted(run.blocks) == ["Subhalo"], "ParticleTypes selects the Subhalo block")
    finally:
        shutil.rmtree(tmp)


def section_multifile(c):
    d = need_gadget4()
    tmp = tempfile.mkdtemp(prefix="jz-reader-multi-")
    try:
        src = os.path.join(d, "snapshot_062.hdf5")
        # Uneven parts, one without particles (and so without PartType1).
        parts = sf.split(src, os.path.join(tmp, "snapshot_062"), [5000, 5000, 17001, 30000])
        with h5py.File(parts[1], "r") as f:
            c.check("PartType1" not in f, "setup: part 1 has no PartType1 group")
        for which in (0, 1, 4):
            run = Read(parts[which])
            c.check(not run.errors, f"5-part set opened as part {which}: no error {run.errors[:1]}")
            check_snapshot(c, run, [src], f"5-part set opened as part {which}")
        # Header BoxSize etc. from the parts as well.
        check_header_fields(c, Read(parts[3]), src, "5-part set")
        # Parts in a series count once: all parts selected = one step.
        run = Read(parts)
        c.check(len(run.timesteps) == 1, f"all 5 parts as FileName: one time step ({run.timesteps})")
        check_snapshot(c, run, [src], "all 5 parts as FileName")
        # Stride across part boundaries.
        with h5py.File(src, "r") as f:
            for stride in (3, 7):
                run = Read(parts[0], Stride=stride)
                same(c, run.points("PartType1"), f["PartType1/Coordinates"][::stride],
                     f"5-part set, Stride {stride}: points")
                same(c, run.array("PartType1", "ParticleIDs"), f["PartType1/ParticleIDs"][::stride],
                     f"5-part set, Stride {stride}: ParticleIDs")
        # A synthetic multi-type set: double coordinates, gas masses, empty types.
        single = os.path.join(tmp, "mixed.hdf5")
        sf.write_gadget(single, [1000, 2000, 0, 0, 300], dtype=np.float64,
                        mass_table=[0, 0.5, 0, 0, 0], masses_for=(0, 4),
                        extra_float=("InternalEnergy",), id_dtype=np.int64)
        parts = sf.split(single, os.path.join(tmp, "mixed"), [700, 1500])
        run = Read(parts[1])
        check_snapshot(c, run, [single], "3-part gas/DM/stars set")
    finally:
        shutil.rmtree(tmp)


def section_swift(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-swift-")
    try:
        path = os.path.join(tmp, "swift_0042.hdf5")
        written = sf.write_swift(path)
        run = Read(path)
        c.check(not run.errors, f"SWIFT: no error {run.errors[:1]}")
        c.check(sorted(run.blocks) == ["PartType0", "PartType1", "PartType4"],
                f"SWIFT: blocks {sorted(run.blocks)} (aliases not doubled)")
        for t, data in written.items():
            same(c, run.points(t), data["Coordinates"], f"SWIFT {t}: double coordinates kept")
            for name, values in data.items():
                if name != "Coordinates":
                    same(c, run.array(t, name), values, f"SWIFT {t}: {name}")
            gids = run.blocks[t].GetPointData().GetGlobalIds()
            c.check(gids is not None and
                    np.array_equal(vtk_to_numpy(gids), data["ParticleIDs"].astype(np.int64)),
                    f"SWIFT {t}: GlobalIds from uint64 ParticleIDs")
            c.check(run.array(t, "ElementMassFractions") is None or
                    run.blocks[t].GetPointData().GetArray("ElementMassFractions")
                    .GetNumberOfComponents() == 9, f"SWIFT {t}: N x 9 dataset has 9 components")
        c.check(run.field("SnapshotFormat") == "SWIFT", "SWIFT: format detected")
        box = run.field("BoxSize")
        c.check(box is not None and box.tolist() == [25.0, 25.0, 30.0] and
                run.output.GetFieldData().GetArray("BoxSize").GetNumberOfTuples() == 1,
                f"SWIFT: BoxSize 3 values in one tuple ({box})")
        expected = {"Time": 0.123456789, "Redshift": 1.0, "HubbleParam": 0.6777, "Omega0": 0.307,
                    "OmegaLambda": 0.693, "Unit mass in cgs (U_M)": 1.98841e43,
                    "Unit length in cgs (U_L)": 3.08567758e24, "Unit time in cgs (U_t)": 3.08567758e19,
                    "Unit temperature in cgs (U_T)": 1.0, "Omega_b": 0.0482, "h": 0.6777,
                    "Scale-factor": 0.5, "Critical density [internal units]": 12.3,
                    "UnitLength_in_cm": 3.08567758e24, "UnitMass_in_g": 1.98841e43,
                    "UnitVelocity_in_cm_per_s": 3.08567758e24 / 3.08567758e19}
        for block in (None, "PartType0"):
            for name, value in expected.items():
                got = run.field(name, block)
                c.check(got is not None and np.allclose(got, value, rtol=1e-15, atol=0),
                        f"SWIFT field data {name} on {block or 'the multiblock'} = {value} ({got})")
        c.check(run.timesteps == [0.123456789], f"SWIFT: time step at Header/Time {run.timesteps}")
        # Only some arrays, only some types.
        run = Read(path, ParticleTypes=["PartType0", "PartType4"], PointArrays=["Densities", "Masses"])
        c.check(sorted(run.blocks) == ["PartType0", "PartType4"], "SWIFT: ParticleTypes selection")
        names0 = sorted(run.blocks["PartType0"].GetPointData().GetArrayName(i)
                        for i in range(run.blocks["PartType0"].GetPointData().GetNumberOfArrays()))
        c.check(names0 == ["Densities", "Masses"], f"SWIFT: PointArrays selection on gas {names0}")
        same(c, run.array("PartType0", "Densities"), written["PartType0"]["Densities"],
             "SWIFT selection: Densities")
        same(c, run.points("PartType4"), written["PartType4"]["Coordinates"],
             "SWIFT selection: star points still read")
        # SWIFT's FOF catalogue: one vertex per group at Centres.
        fof = os.path.join(tmp, "fof_output_0042.hdf5")
        groups = sf.write_swift_fof(fof)
        run = Read(fof)
        c.check(not run.errors and sorted(run.blocks) == ["Groups"] and
                run.field("SnapshotFormat") == "SWIFT FOF catalogue",
                f"SWIFT FOF catalogue: block Groups ({run.field('SnapshotFormat')}, {run.errors[:1]})")
        same(c, run.points("Groups"), groups["Centres"], "SWIFT FOF: points = Centres")
        for name, values in groups.items():
            same(c, run.array("Groups", name), values, f"SWIFT FOF: {name}")
        c.check(np.array_equal(run.field("BoxSize"), [25.0, 25.0, 30.0]) and
                np.array_equal(run.field("HubbleParam"), [0.7]), "SWIFT FOF: BoxSize, HubbleParam")
        # A distributed snapshot's meta-file: virtual datasets over the parts.
        meta, full = sf.write_swift_virtual(tmp, n_gas=900, n_dm=1100, n_stars=50)
        run = Read(meta)
        c.check(not run.errors, f"SWIFT meta-snapshot: no error {run.errors[:1]}")
        check_snapshot(c, run, [full], "SWIFT meta-snapshot (virtual datasets)")
    finally:
        shutil.rmtree(tmp)


def section_series(c):
    d = need_gadget4()
    paths = [os.path.join(d, f"snapshot_{s}.hdf5") for s in SNAPS]
    times = []
    for p in paths:
        with h5py.File(p, "r") as f:
            times.append(float(f["Header"].attrs["Time"]))
    # Given out of order: the steps follow Header/Time.
    shuffled = [paths[i] for i in (3, 0, 4, 2, 1)]
    r = reader_proxy(shuffled)
    c.check(list(r.TimestepValues) == sorted(times), f"series: TimestepValues = {sorted(times)}")
    simple.Delete(r)
    for i, (p, t) in enumerate(zip(paths, times)):
        run = Read(shuffled, time=t)
        check_snapshot(c, run, [p], f"series step {i} (t = {t:.4f})")
        c.check(np.array_equal(run.field("Time"), [t]), f"series step {i}: field data Time")
        c.check(run.output.GetInformation().Get(run.output.DATA_TIME_STEP()) == t,
                f"series step {i}: DATA_TIME_STEP")
    # Between steps: the last step not after the time.
    run = Read(paths, time=0.5 * (times[2] + times[3]))
    check_snapshot(c, run, [paths[2]], "series between steps 2 and 3")
    # OpenDataFile with the list (ParaView's file dialog passes the group so).
    r = simple.OpenDataFile(paths)
    c.check(r.GetXMLName() == "ParticleSnapshotReader" and list(r.TimestepValues) == sorted(times),
            "OpenDataFile(list): one reader with 5 time steps")
    simple.Delete(r)
    # A series of multi-file snapshots: every part given, one step per snapshot.
    tmp = tempfile.mkdtemp(prefix="jz-reader-series-")
    try:
        files = []
        for p in paths[3:]:
            base = os.path.join(tmp, os.path.basename(p)[:-5])
            files += sf.split(p, base, [10000, 20000])
        r = reader_proxy(files)
        c.check(list(r.TimestepValues) == times[3:], f"series of 3-part snapshots: 2 steps {list(r.TimestepValues)}")
        simple.Delete(r)
        run = Read(files, time=times[4])
        check_snapshot(c, run, [paths[4]], "series of 3-part snapshots, last step")
        # Files without Header/Time: numbered steps in the given order.
        for i, p in enumerate(paths[:2]):
            q = os.path.join(tmp, f"notime_{i}.hdf5")
            shutil.copyfile(p, q)
            with h5py.File(q, "a") as f:
                del f["Header"].attrs["Time"]
        run = Read([os.path.join(tmp, "notime_0.hdf5"), os.path.join(tmp, "notime_1.hdf5")], time=1)
        c.check(run.timesteps == [0.0, 1.0], f"no Header/Time: steps 0, 1 ({run.timesteps})")
        check_snapshot(c, run, [paths[1]], "no Header/Time: step 1")
    finally:
        shutil.rmtree(tmp)


def section_selection(c):
    d = need_gadget4()
    path = os.path.join(d, "snapshot_046.hdf5")
    with h5py.File(path, "r") as f:
        pos = f["PartType1/Coordinates"][...]
        vel = f["PartType1/Velocities"][...]
        ids = f["PartType1/ParticleIDs"][...]
    run = Read(path, PointArrays=["Velocities"])
    pd = run.blocks["PartType1"].GetPointData()
    c.check(pd.GetNumberOfArrays() == 1 and pd.GetArray("Velocities") is not None,
            "PointArrays ['Velocities']: only Velocities")
    c.check(pd.GetGlobalIds() is None, "no ParticleIDs: no GlobalIds")
    run = Read(path, PointArrays=[])
    c.check(run.blocks["PartType1"].GetPointData().GetNumberOfArrays() == 0 and
            run.blocks["PartType1"].GetNumberOfPoints() == 32768, "PointArrays []: points only")
    run = Read(path, ParticleTypes=[])
    c.check(run.empty() and not run.errors, "ParticleTypes []: no blocks, no error")
    for stride in (1, 2, 5, 32767, 32768, 100000):
        run = Read(path, Stride=stride)
        same(c, run.points("PartType1"), pos[::stride], f"Stride {stride}: points")
        same(c, run.array("PartType1", "Velocities"), vel[::stride], f"Stride {stride}: Velocities")
        same(c, run.array("PartType1", "ParticleIDs"), ids[::stride], f"Stride {stride}: ParticleIDs")
    # Piece requests (as ParaView makes under MPI): pieces in order = serial.
    for pieces in (2, 3, 7):
        got = []
        for piece in range(pieces):
            r = reader_proxy(path, Stride=3)
            alg = r.GetClientSideObject()
            alg.UpdatePiece(piece, pieces, 0)
            out = alg.GetOutputDataObject(0).GetBlock(0)
            got.append(vtk_to_numpy(out.GetPoints().GetData()).copy())
            simple.Delete(r)
        sizes = [len(g) for g in got]
        c.check(np.array_equal(np.concatenate(got), pos[::3]) and max(sizes) - min(sizes) <= 1,
                f"{pieces} pieces, Stride 3: contiguous near-equal shares {sizes} = serial")


def section_boxfromdata(c):
    d = need_gadget4()
    path = os.path.join(d, "snapshot_062.hdf5")
    KNNDensity = simple.KNNDensity
    FriendsOfFriends = simple.FriendsOfFriends

    def run_filter(make, src, **props):
        f = make(Input=src, **props)
        alg, errors = jztest.update_collecting_errors(f)
        copy = jztest.output_copies(alg)[0]
        simple.Delete(f)
        return copy, errors

    def point_array(data, name):
        it = data.NewIterator()
        it.InitTraversal()
        vals = []
        while not it.IsDoneWithTraversal():
            vals.append(vtk_to_numpy(it.GetCurrentDataObject().GetPointData().GetArray(name)))
            it.GoToNextItem()
        return np.concatenate(vals)

    reader = reader_proxy(path)
    # FoF with the box from the file (BoxBounds left at the unit box) = Gadget-4's groups.
    out, errors = run_filter(FriendsOfFriends, reader, Periodic=1, MinimumGroupSize=32,
                             LinkingLength=0.2, Device="CPU")
    c.check(not errors, f"FoF on the reader, Periodic, BoxFromData default: no error {errors[:1]}")
    gid = point_array(out, "GroupId")
    same, ngroups = sf.same_groups_as_gadget4(gid, os.path.join(d, "fof_tab_062.hdf5"))
    c.check(same, f"FoF with BoxSize 50 from the file: Gadget-4's {ngroups} groups")
    # The same with the box given by hand, and with BoxFromData off and the unit box.
    out2, _ = run_filter(FriendsOfFriends, reader, Periodic=1, MinimumGroupSize=32,
                         LinkingLength=0.2, Device="CPU", BoxFromData=0, BoxBounds=[0, 50] * 3)
    c.check(np.array_equal(point_array(out2, "GroupId"), gid), "BoxFromData=0 with BoxBounds [0,50]^3: same")
    out3, _ = run_filter(FriendsOfFriends, reader, Periodic=1, MinimumGroupSize=32,
                         LinkingLength=0.2, Device="CPU", BoxFromData=0)
    c.check(not np.array_equal(point_array(out3, "GroupId"), gid),
            "BoxFromData=0 with the unit box: a different (wrong) result, so the box was used")
    # KNNDensity: periodic densities from the file's box = with BoxBounds [0,50]^3.
    k1, e1 = run_filter(KNNDensity, reader, Periodic=1, NumberOfNeighbors=16, Device="CPU")
    k2, _ = run_filter(KNNDensity, reader, Periodic=1, NumberOfNeighbors=16, Device="CPU",
                       BoxFromData=0, BoxBounds=[0, 50] * 3)
    k3, _ = run_filter(KNNDensity, reader, Periodic=0, NumberOfNeighbors=16, Device="CPU")
    h1, h2, h3 = (point_array(k, "SmoothingLength") for k in (k1, k2, k3))
    c.check(not e1 and np.array_equal(h1, h2), "KNNDensity: BoxSize from the file = BoxBounds [0,50]^3")
    c.check(not np.array_equal(h1, h3), "KNNDensity: periodic differs from open boundaries")
    simple.Delete(reader)

    # Field data on plain point sets: 1 value, 3 values (as 1x3 and 3x1), malformed, non-positive.
    from vtkmodules.vtkCommonCore import vtkDoubleArray
    rng = np.random.default_rng(5)
    pts = rng.random((2000, 3)) * [2.0, 3.0, 4.0]

    def with_box(values, components=None):
        pd = polydata(pts)
        arr = vtkDoubleArray()
        arr.SetName("BoxSize")
        arr.SetNumberOfComponents(components or len(values))
        for v in values:
            arr.InsertNextValue(v)
        pd.GetFieldData().AddArray(arr)
        return pd

    ref_pd = polydata(pts)
    src = producer(ref_pd)
    ref, _ = run_filter(KNNDensity, src, Periodic=1, NumberOfNeighbors=8, Device="CPU",
                        BoxBounds=[0, 2, 0, 3, 0, 4])
    simple.Delete(src)
    for values, comps, label in (([2.0, 3.0, 4.0], 3, "1 x 3"), ([2.0, 3.0, 4.0], 1, "3 x 1")):
        src = producer(with_box(values, comps))
        got, errors = run_filter(KNNDensity, src, Periodic=1, NumberOfNeighbors=8, Device="CPU")
        c.check(not errors and np.array_equal(
            vtk_to_numpy(got.GetPointData().GetArray("Density")),
            vtk_to_numpy(ref.GetPointData().GetArray("Density"))), f"BoxSize {label}: box [0,L]")
        simple.Delete(src)
    src = producer(with_box([4.0]))
    cube, _ = run_filter(KNNDensity, src, Periodic=1, NumberOfNeighbors=8, Device="CPU")
    src2 = producer(polydata(pts))
    cube_ref, _ = run_filter(KNNDensity, src2, Periodic=1, NumberOfNeighbors=8, Device="CPU",
                             BoxBounds=[0, 4] * 3)
    c.check(np.array_equal(vtk_to_numpy(cube.GetPointData().GetArray("Density")),
                           vtk_to_numpy(cube_ref.GetPointData().GetArray("Density"))),
            "BoxSize with one value: the cube [0, L]^3")
    simple.Delete(src)
    simple.Delete(src2)
    for values, what in (([2.0, 3.0], "2 values"), ([0.0], "zero"), ([-5.0, 3.0, 4.0], "negative"),
                         ([float("nan")], "NaN")):
        src = producer(with_box(values))
        for make, name in ((KNNDensity, "KNNDensity"), (FriendsOfFriends, "FriendsOfFriends")):
            got, errors = run_filter(make, src, Periodic=1, Device="CPU")
            c.check(len(errors) == 1 and "BoxSize" in errors[0] and got.GetNumberOfPoints() == 0,
                    f"{name}: BoxSize {what} is an error naming BoxSize ({errors[:1]})")
        got, errors = run_filter(KNNDensity, src, Periodic=1, Device="CPU", BoxFromData=0,
                                 BoxBounds=[0, 2, 0, 3, 0, 4])
        c.check(not errors, f"BoxSize {what} is ignored with BoxFromData=0")
        simple.Delete(src)


def section_canread(c):
    d = need_gadget4()
    tmp = tempfile.mkdtemp(prefix="jz-reader-canread-")
    try:
        from paraview.modules.vtkRemotingServerManager import vtkSMProxyManager
        factory = vtkSMProxyManager.GetProxyManager().GetReaderFactory()
        factory.UpdateAvailableReaders()  # as OpenDataFile does
        session = sm.ActiveConnection.Session

        def readers(path):
            lst = factory.GetReaders(path, session)
            return [lst.GetString(i) for i in range(1, lst.GetLength(), 3)] if lst else []

        generic = os.path.join(tmp, "generic.h5")
        with h5py.File(generic, "w") as f:
            f.create_dataset("data", data=np.arange(10))
            f.create_group("Header")  # a Header alone is not enough
        text = os.path.join(tmp, "notes.hdf5")
        with open(text, "w") as f:
            f.write("not HDF5\n")
        truncated = os.path.join(tmp, "snapshot_cut.hdf5")
        sf.truncate(os.path.join(d, "snapshot_062.hdf5"), truncated, 0.3)
        cases = ((os.path.join(d, "snapshot_062.hdf5"), 1), (os.path.join(d, "fof_tab_046.hdf5"), 1),
                 (generic, 0), (text, 0), (truncated, 1), (os.path.join(tmp, "missing.hdf5"), 0))
        # GetReaders asks each candidate reader's CanReadFile.
        for path, expected in cases:
            got = readers(path)
            want = ["ParticleSnapshotReader"] if expected else []
            c.check(("ParticleSnapshotReader" in got) == bool(expected) and
                    "ParticleSnapshotReaderAlias" not in got,
                    f"reader factory for {os.path.basename(path)}: {got} (want {want} among them)")
        sw = os.path.join(tmp, "swift.hdf5")
        sf.write_swift(sw, n_gas=10, n_dm=10, n_stars=0)
        c.check(readers(sw) == ["ParticleSnapshotReader"], "reader factory for a SWIFT snapshot")
    finally:
        shutil.rmtree(tmp)


def expect_error(c, files, must_name, label, **props):
    run = Read(files, **props)
    text = " | ".join(run.errors)
    ok = len(run.errors) >= 1 and all(s in text for s in must_name) and run.empty()
    c.check(ok, f"{label}: error naming {must_name}, no output ({text[:300]})")


def section_errors(c):
    d = need_gadget4()
    tmp = tempfile.mkdtemp(prefix="jz-reader-errors-")
    try:
        src = os.path.join(d, "snapshot_062.hdf5")
        for fraction in (0.02, 0.3, 0.999):
            cut = os.path.join(tmp, f"cut{int(fraction * 1000)}.hdf5")
            sf.truncate(src, cut, fraction)
            expect_error(c, cut, [cut, "truncated"], f"truncated to {fraction:.0%}")
        cut = os.path.join(tmp, "cut5.hdf5")
        sf.truncate(src, cut, 0.0001)  # 93 bytes: no superblock left
        expect_error(c, cut, [cut], "truncated to 93 bytes")
        nocoords = os.path.join(tmp, "nocoords.hdf5")
        sf.copy_without(src, nocoords, "PartType1/Coordinates")
        expect_error(c, nocoords, [nocoords, "PartType1/Coordinates", "missing"], "missing Coordinates")
        for count, label in ((32000, "smaller"), (40000, "larger")):
            bad = os.path.join(tmp, f"numpart_{label}.hdf5")
            sf.copy_with_numpart(src, bad, 1, count)
            expect_error(c, bad, [bad, "PartType1/", "NumPart_ThisFile[1]", str(count)],
                         f"NumPart_ThisFile {label} than the datasets")
        bad = os.path.join(tmp, "numpart_phantom.hdf5")
        sf.copy_with_numpart(src, bad, 0, 10)
        # A cut-down file: the present types are read, a warning names the absent one.
        run = Read(bad)
        c.check(not run.errors and sorted(run.blocks) == ["PartType1"] and
                any("NumPart_ThisFile[0]" in w and "PartType0" in w for w in run.warnings),
                f"NumPart_ThisFile for an absent type: PartType1 read, a warning ({run.warnings[:1]})")
        # Multi-file sets with a bad part.
        base = os.path.join(tmp, "set")
        parts = sf.split(src, base, [10000, 20000])
        os.remove(parts[2])
        expect_error(c, parts[0], [parts[2]], "multi-file set with a missing part")
        parts = sf.split(src, base, [10000, 20000])
        sf.truncate(parts[1], parts[1] + ".cut", 0.5)
        os.replace(parts[1] + ".cut", parts[1])
        expect_error(c, parts[0], [parts[1], "truncated"], "multi-file set with a truncated part")
        parts = sf.split(src, base, [10000, 20000])
        with open(parts[1], "wb") as f:
            f.write(b"garbage" * 100)
        expect_error(c, parts[2], [parts[1], "not an HDF5"], "multi-file set with a non-HDF5 part")
        parts = sf.split(src, base, [10000, 20000])
        os.chmod(parts[1], 0)
        if not os.access(parts[1], os.R_OK):  # root can still read it
            expect_error(c, parts[0], [parts[1]], "multi-file set with an unreadable part")
        os.chmod(parts[1], 0o644)
        parts = sf.split(src, base, [10000, 20000])
        with h5py.File(parts[1], "a") as f:
            del f["PartType1/Velocities"]
        expect_error(c, parts[0], [parts[1], "PartType1/Velocities", "missing"],
                     "multi-file set, a part without Velocities")
        parts = sf.split(src, base, [10000, 20000])
        sf.copy_with_numpart(parts[2], parts[2] + ".bad", 1, 5)
        os.replace(parts[2] + ".bad", parts[2])
        expect_error(c, parts[0], [parts[2], "PartType1/", "NumPart_ThisFile[1]"],
                     "multi-file set, inconsistent NumPart_ThisFile in a part")
        # A name that hides the other parts.
        lone = os.path.join(tmp, "lonely.hdf5")
        shutil.copyfile(parts[0], lone)
        expect_error(c, lone, [lone, "NumFilesPerSnapshot"], "multi-file part renamed")
        # Not snapshots at all, and files that do not exist.
        generic = os.path.join(tmp, "generic.h5")
        with h5py.File(generic, "w") as f:
            f.create_dataset("data", data=np.arange(10))
        expect_error(c, generic, [generic, "Header"], "an HDF5 file that is not a snapshot")
        text = os.path.join(tmp, "text.hdf5")
        with open(text, "w") as f:
            f.write("hello\n")
        expect_error(c, text, [text, "not an HDF5"], "a text file")
        expect_error(c, os.path.join(tmp, "nothere.hdf5"), ["nothere.hdf5", "does not exist"],
                     "a missing file")
        expect_error(c, [src, os.path.join(tmp, "nothere.hdf5")], ["nothere.hdf5"],
                     "a series with a missing file")
        # Coordinates with 2 columns; a scalar and a string dataset are skipped with a warning.
        bad = os.path.join(tmp, "flat.hdf5")
        sf.write_gadget(bad, [0, 100])
        with h5py.File(bad, "a") as f:
            del f["PartType1/Coordinates"]
            f["PartType1/Coordinates"] = np.zeros((100, 2), np.float32)
        expect_error(c, bad, [bad, "PartType1/Coordinates", "3 columns"], "Coordinates with 2 columns")
        odd = os.path.join(tmp, "odd.hdf5")
        sf.write_gadget(odd, [0, 100])
        with h5py.File(odd, "a") as f:
            f["PartType1/Scalar"] = 3.0
            f["PartType1/Names"] = np.array([b"x"] * 100)
            f["PartType1/Flags"] = np.arange(100) % 2 == 0  # an h5py boolean (HDF5 enum)
        run = Read(odd)
        c.check(not run.errors and run.blocks["PartType1"].GetNumberOfPoints() == 100 and
                run.array("PartType1", "Scalar") is None and run.array("PartType1", "Names") is None,
                "scalar and string datasets are skipped (warning), the rest is read")
        flags = run.array("PartType1", "Flags")
        c.check(flags is not None and np.array_equal(flags, (np.arange(100) % 2 == 0).astype(np.int8)),
                "an h5py boolean dataset reads as 0/1")
        # After an error the same reader reads a good file again.
        r = reader_proxy(nocoords)
        r.UpdatePipeline()
        r.FileName = src
        alg, errors = jztest.update_collecting_errors(r)
        c.check(not errors and alg.GetOutputDataObject(0).GetNumberOfBlocks() == 1,
                "the reader recovers when given a good file")
        simple.Delete(r)
    finally:
        for root, dirs, files in os.walk(tmp):
            for name in files:
                os.chmod(os.path.join(root, name), 0o644)
        shutil.rmtree(tmp)


def check_layout(c, path, fmt, label, details=""):
    """One file of another code's layout: recognised as `fmt`, every block and
    the header fields equal h5py's read."""
    run = Read(path)
    c.check(not run.errors and run.field("SnapshotFormat") == fmt,
            f"{label}: format {run.field('SnapshotFormat')}")
    check_snapshot(c, run, [path], label + details)
    check_header_fields(c, run, path, label)


def section_formats(c):
    """Gadget-2/3 and AREPO headers, big-endian and compressed datasets, high-word counts."""
    tmp = tempfile.mkdtemp(prefix="jz-reader-formats-")
    try:
        gadget2 = os.path.join(tmp, "snap_gadget2.hdf5")
        sf.write_gadget(gadget2, [500, 700, 0, 0, 0, 3], mass_table=[0, 0.125, 0, 0, 0, 2.5],
                        masses_for=(0,), id_dtype=np.uint32, time=0.5, redshift=1.0)
        check_layout(c, gadget2, "Gadget-2/3", "Gadget-2 layout")

        arepo = os.path.join(tmp, "snap_arepo.hdf5")
        sf.write_gadget(arepo, [300, 400], masses_for=(0, 1), dtype=np.float64)
        with h5py.File(arepo, "a") as f:
            h = f["Header"]
            h.attrs["Composition_vector_length"] = np.int32(0)
            h.attrs["Git_commit"] = np.bytes_("abc")
            h.attrs["UnitLength_in_cm"] = 3.085678e21
            h.attrs["UnitMass_in_g"] = 1.989e43
            h.attrs["UnitVelocity_in_cm_per_s"] = 1e5
            g = f["PartType0"]
            g["Density"] = np.linspace(1, 2, 300, dtype=">f4")  # big-endian
            g["InternalEnergy"] = np.linspace(3, 4, 300).astype(np.float32)
            g.create_dataset("Potential", data=np.linspace(-1, 0, 300), chunks=(64,),
                             compression="gzip", shuffle=True)
            g["GFM_Metals"] = np.arange(300 * 10, dtype=np.float32).reshape(300, 10)
            g["HighResGasMass"] = np.arange(300, dtype=np.int16)
        check_layout(c, arepo, "AREPO", "AREPO layout", " (big-endian, gzip, N x 10, int16)")

        # More than 2^32 particles are announced with NumPart_Total_HighWord;
        # a total that disagrees with the files is a warning, the files are read.
        high = os.path.join(tmp, "snap_highword.hdf5")
        sf.write_gadget(high, [0, 1000])
        with h5py.File(high, "a") as f:
            f["Header"].attrs["NumPart_Total"] = np.array([0, 5, 0, 0, 0, 0], np.uint32)
            f["Header"].attrs["NumPart_Total_HighWord"] = np.array([0, 1, 0, 0, 0, 0], np.uint32)
        run = Read(high)
        c.check(not run.errors and run.blocks["PartType1"].GetNumberOfPoints() == 1000 and
                any("4294967301" in w and "1000" in w for w in run.warnings),
                f"NumPart_Total 2^32 + 5 vs 1000 in the file: a warning, the file is read "
                f"({run.warnings[:1]})")
        run = Read(gadget2)
        c.check(not run.warnings, f"a consistent NumPart_Total: no warning ({run.warnings[:1]})")
    finally:
        shutil.rmtree(tmp)


def section_large(c):
    """1.5e6 particles (arrays beyond the reader's large-allocation size, read
    while a second thread prepares the memory; with JZ_SNAPSHOT_HUGEPAGES=1
    on huge pages), read twice in one session, against h5py."""
    tmp = tempfile.mkdtemp(prefix="jz-reader-large-")
    try:
        path = os.path.join(tmp, "large.hdf5")
        sf.write_gadget(path, [500000, 1000000], mass_table=[0, 3.5], masses_for=(0,),
                        dtype=np.float64, id_dtype=np.int64)
        for attempt in (1, 2):
            run = Read(path)
            c.check(not run.errors, f"read {attempt}: no error {run.errors[:1]}")
            check_snapshot(c, run, [path], f"1.5e6 particles, read {attempt} "
                           f"(JZ_SNAPSHOT_HUGEPAGES={os.environ.get('JZ_SNAPSHOT_HUGEPAGES', '')})")
    finally:
        shutil.rmtree(tmp)


def section_memory(c):
    """The arrays the reader makes without fresh memory of their own (the
    vertex connectivity within the offsets, 64-bit GlobalIds within the
    ParticleIDs, MassTable masses one mapped value) against h5py, kept alone
    after the reader and its output are gone, grown (VTK reallocates) and
    written: each stays an array of its own values. 64-bit ids at and above
    2**63 keep their bits; 32-bit ids are converted."""
    tmp = tempfile.mkdtemp(prefix="jz-reader-memory-")
    try:
        path = os.path.join(tmp, "memory.hdf5")
        n0, n1 = 70001, 300007  # neither a whole number of pages of values
        sf.write_gadget(path, [n0, n1], mass_table=[2.25, 7.5], id_dtype=np.uint64)
        ids1 = (np.arange(n1, dtype=np.uint64) * np.uint64(3)) + np.uint64(2**63 - 1000)
        with h5py.File(path, "a") as f:
            del f["PartType0/ParticleIDs"]
            f["PartType0/ParticleIDs"] = np.arange(5, n0 + 5, dtype=np.uint32)
            f["PartType1/ParticleIDs"][...] = ids1
        run = Read(path)
        c.check(not run.errors, f"no error {run.errors[:1]}")
        check_snapshot(c, run, [path], "uint32 ids (gas), uint64 ids beyond 2**63 (dark matter)")
        kept = {}
        for t, n in (("PartType0", n0), ("PartType1", n1)):
            pd, verts = run.blocks[t].GetPointData(), run.blocks[t].GetVerts()
            kept[t] = dict(ids=pd.GetArray("ParticleIDs"), gids=pd.GetGlobalIds(),
                           masses=pd.GetArray("Masses"), offsets=verts.GetOffsetsArray(),
                           conn=verts.GetConnectivityArray())
            k = kept[t]
            print(f"{t}: connectivity within the offsets: "
                  f"{k['conn'].GetVoidPointer(0) == k['offsets'].GetVoidPointer(0)}; GlobalIds "
                  f"within ParticleIDs: {k['gids'].GetVoidPointer(0) == k['ids'].GetVoidPointer(0)}")
        del run
        with h5py.File(path, "r") as f:
            ref = {t: f[t]["ParticleIDs"][...] for t in ("PartType0", "PartType1")}
        for t, n, mass in (("PartType0", n0, 2.25), ("PartType1", n1, 7.5)):
            k = kept[t]
            iota = np.arange(n + 1)
            # Grow the offsets first (the connectivity must still read its own values).
            k["offsets"].InsertNextValue(n + 1)
            c.check(np.array_equal(vtk_to_numpy(k["offsets"]), np.arange(n + 2)) and
                    np.array_equal(vtk_to_numpy(k["conn"]), iota[:n]),
                    f"{t}: offsets grown by one, connectivity unchanged")
            k["conn"].InsertNextValue(-7)
            k["conn"].SetValue(0, 42)
            conn = vtk_to_numpy(k["conn"])
            c.check(conn[0] == 42 and conn[-1] == -7 and np.array_equal(conn[1:n], iota[1:n]) and
                    vtk_to_numpy(k["offsets"])[0] == 0, f"{t}: connectivity grown and written alone")
            del k["offsets"], k["conn"]
            gids = vtk_to_numpy(k["gids"])
            c.check(k["gids"].IsA("vtkIdTypeArray") and
                    np.array_equal(gids, ref[t].astype(np.int64)),
                    f"{t}: GlobalIds (vtkIdType) kept alone == ParticleIDs' bits")
            del k["ids"]
            c.check(np.array_equal(vtk_to_numpy(k["gids"]), ref[t].astype(np.int64)),
                    f"{t}: GlobalIds outlive ParticleIDs")
            masses = k["masses"]
            c.check(masses.IsA("vtkDoubleArray") and masses.GetNumberOfTuples() == n and
                    np.array_equal(vtk_to_numpy(masses), np.full(n, mass)),
                    f"{t}: Masses kept alone == MassTable")
            for i in (0, 1, 511, 512, n // 2, n - 1):
                masses.SetValue(i, -float(i) - 1)
            m = vtk_to_numpy(masses)
            written = np.zeros(n, bool)
            written[[0, 1, 511, 512, n // 2, n - 1]] = True
            c.check(np.array_equal(m[written], -np.flatnonzero(written) - 1.0) and
                    bool(np.all(m[~written] == mass)), f"{t}: Masses written value by value")
            masses.InsertNextValue(1.0)
            c.check(masses.GetNumberOfTuples() == n + 1 and vtk_to_numpy(masses)[n // 2 + 1] == mass,
                    f"{t}: Masses grown")
        # A second reader's masses are their own values, not the first's.
        again = Read(path)
        c.check(np.array_equal(again.array("PartType1", "Masses"), np.full(n1, 7.5)),
                "a second read: Masses from MassTable")
    finally:
        shutil.rmtree(tmp)


def write_storage_variant(path, data, storage, userblock=0):
    """A snapshot holding `data` ({type: {name: array}}) with every dataset
    stored as `storage` says: contiguous, chunked, gzip or big-endian."""
    kw = {"userblock_size": userblock} if userblock else {}
    with h5py.File(path, "w", **kw) as f:
        counts = [0] * 6
        for t, arrays in data.items():
            counts[int(t[8:])] = len(arrays["ParticleIDs"])
        h = f.create_group("Header")
        h.attrs["NumPart_ThisFile"] = np.array(counts, np.int32)
        h.attrs["NumPart_Total"] = np.array(counts, np.uint32)
        h.attrs["NumPart_Total_HighWord"] = np.zeros(6, np.uint32)
        h.attrs["MassTable"] = np.array([0, 2.5, 0, 0, 1.25, 0], np.float64)
        h.attrs["BoxSize"] = 100.0
        h.attrs["NumFilesPerSnapshot"] = np.int32(1)
        h.attrs["Time"] = 1.0
        for t, arrays in data.items():
            g = f.create_group(t)
            for name, a in arrays.items():
                kw = {}
                if storage in ("chunked", "gzip"):
                    kw["chunks"] = (max(1, len(a) // 7),) + a.shape[1:]
                if storage == "gzip":
                    kw["compression"] = "gzip"
                if storage == "bigendian":
                    a = a.astype(a.dtype.newbyteorder(">"))
                g.create_dataset(name, data=a, **kw)


def runinfo_counter(name, files, **props):
    """A Read with JZ_RUNINFO=1, and the value of its counter `name` (stderr)."""
    err = tempfile.TemporaryFile()
    saved = os.dup(2)
    os.environ["JZ_RUNINFO"] = "1"
    try:
        os.dup2(err.fileno(), 2)
        run = Read(files, **props)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        del os.environ["JZ_RUNINFO"]
    err.seek(0)
    text = err.read().decode(errors="replace")
    found = [float(v) for k, v in
             (line.rsplit(" ", 1) for line in text.splitlines() if f'counter "{name}"' in line)]
    return run, (found[0] if found else None)


def section_direct(c):
    """HDF5 datasets stored as they lie in memory (contiguous, no filter,
    native byte order) are read with positioned reads, in parallel, others
    by the HDF5 library: both against h5py and against each other
    (JZ_SNAPSHOT_DIRECT_READS=0 turns the first off) for contiguous, chunked,
    gzip and big-endian storage, a user block before the superblock, a
    dataset whose space was never written, float32/float64 positions and
    32/64-bit ids; Stride and Region; a file cut inside a dataset's values."""
    tmp = tempfile.mkdtemp(prefix="jz-reader-direct-")
    counter = "HDF5 datasets read directly"
    rng = np.random.default_rng(3)
    n0, n1, n4 = 50001, 2_900_003, 7001  # PartType1's arrays span several read slices
    data = {
        "PartType0": {"Coordinates": rng.random((n0, 3)) * 100.0,
                      "Velocities": rng.normal(0, 50, (n0, 3)).astype(np.float32),
                      "ParticleIDs": rng.permutation(n0).astype(np.uint32) + np.uint32(7),
                      "Masses": rng.random(n0).astype(np.float32)},
        "PartType1": {"Coordinates": (rng.random((n1, 3)) * 100.0).astype(np.float32),
                      "Velocities": rng.normal(0, 50, (n1, 3)),
                      "ParticleIDs": np.arange(n1, dtype=np.int64) * 3 + 2**40},
        "PartType4": {"Coordinates": (rng.random((n4, 3)) * 100.0).astype(np.float32),
                      "ParticleIDs": np.arange(n4, dtype=np.int32) - 5000,
                      "StellarAge": rng.integers(-2**62, 2**62, n4, dtype=np.int64)},
    }
    datasets = sum(len(a) for a in data.values())
    small = {t: {k: v[:3001] for k, v in arrays.items()} for t, arrays in data.items()}
    small_sets = sum(len(a) for a in small.values())
    try:
        variants = [("contiguous", data, 0, datasets), ("user block", data, 4096, datasets)] + \
            [(s, small, 0, 0) for s in ("chunked", "gzip", "bigendian")] + \
            [("contiguous, small", small, 0, small_sets)]
        for i, (storage, arrays, userblock, direct) in enumerate(variants):
            path = os.path.join(tmp, f"variant{i}.hdf5")
            write_storage_variant(path, arrays, storage.split(",")[0].replace("user block", "contiguous"),
                                  userblock)
            run, used = runinfo_counter(counter, path)
            c.check(not run.errors and used == direct,
                    f"{storage}: {used} of {datasets if arrays is data else small_sets} datasets "
                    f"read directly, {direct} expected {run.errors[:1]}")
            check_snapshot(c, run, [path], f"{storage} (direct reads)")
            os.environ["JZ_SNAPSHOT_DIRECT_READS"] = "0"
            try:
                library, used = runinfo_counter(counter, path)
            finally:
                del os.environ["JZ_SNAPSHOT_DIRECT_READS"]
            c.check(used == 0, f"{storage}, JZ_SNAPSHOT_DIRECT_READS=0: the HDF5 library reads all")
            check_snapshot(c, library, [path], f"{storage} (HDF5 library)")
            for t in arrays:
                c.check(np.array_equal(run.points(t), library.points(t)) and
                        all(np.array_equal(run.array(t, k), library.array(t, k)) for k in arrays[t]
                            if k != "Coordinates"),
                        f"{storage} {t}: direct reads == the HDF5 library's, every array")
        path = os.path.join(tmp, "variant0.hdf5")
        run, used = runinfo_counter(counter, path, Stride=3)
        same(c, run.points("PartType1"), data["PartType1"]["Coordinates"][::3], "Stride 3: points")
        same(c, run.array("PartType1", "Velocities"), data["PartType1"]["Velocities"][::3],
             "Stride 3: Velocities")
        c.check(used == 0, f"Stride 3: the HDF5 library reads ({used} direct)")
        box = [10.0, 40.0, 0.0, 100.0, 25.0, 60.0]
        run, used = runinfo_counter(counter, path, Region=box, ParticleTypes=["PartType1"])
        p = data["PartType1"]["Coordinates"]
        inside = (p[:, 0] >= 10) & (p[:, 0] < 40) & (p[:, 2] >= 25) & (p[:, 2] < 60)
        same(c, run.points("PartType1"), p[inside], "Region: points")
        same(c, run.array("PartType1", "ParticleIDs"), data["PartType1"]["ParticleIDs"][inside],
             "Region: ParticleIDs")
        c.check(used and used > 0, f"Region: chunks read directly ({used})")
        # A dataset whose space was never written reads as its fill value.
        unwritten = os.path.join(tmp, "unwritten.hdf5")
        write_storage_variant(unwritten, small, "contiguous")
        with h5py.File(unwritten, "a") as f:
            f["PartType1"].create_dataset("Potential", shape=(3001,), dtype=np.float32, fillvalue=-1.5)
        run, used = runinfo_counter(counter, unwritten)
        same(c, run.array("PartType1", "Potential"), np.full(3001, -1.5, np.float32),
             "a dataset never written: its fill value")
        c.check(used == small_sets, f"unwritten dataset: the HDF5 library reads it ({used} direct)")
        # Cut inside the last dataset's values, the superblock's end address
        # moved to the cut so that HDF5 opens the file: a clear error, no output.
        cut = os.path.join(tmp, "cut.hdf5")
        shutil.copyfile(path, cut)
        with h5py.File(cut, "r") as f:
            last = f["PartType4/StellarAge"].id
            start, end = last.get_offset(), last.get_offset() + last.get_storage_size()
        c.check(end == os.path.getsize(cut), "PartType4/StellarAge's values end the file")
        size = (start + end) // 2
        with open(cut, "r+b") as f:
            head = f.read(64)
            c.check(head[:8] == b"\x89HDF\r\n\x1a\n" and head[8] == 0, "superblock version 0")
            f.truncate(size)
            f.seek(40)
            f.write(size.to_bytes(8, "little"))
        expect_error(c, cut, [cut, "PartType4/StellarAge", "truncated"], "cut inside a dataset (direct)")
        os.environ["JZ_SNAPSHOT_DIRECT_READS"] = "0"
        try:
            expect_error(c, cut, [cut, "PartType4/StellarAge", "truncated"],
                         "cut inside a dataset (HDF5 library)")
        finally:
            del os.environ["JZ_SNAPSHOT_DIRECT_READS"]
    finally:
        shutil.rmtree(tmp)


SECTIONS = {
    "memory": section_memory,
    "gadget4": section_gadget4,
    "catalogue": section_catalogue,
    "multifile": section_multifile,
    "swift": section_swift,
    "formats": section_formats,
    "large": section_large,
    "series": section_series,
    "selection": section_selection,
    "boxfromdata": section_boxfromdata,
    "canread": section_canread,
    "errors": section_errors,
    "direct": section_direct,
}

if __name__ == "__main__":
    run_section(SECTIONS).finish()
