"""ParticleSnapshotReader on the formats beyond HDF5 and on regions: the real
Gadget-2 example initial conditions (both byte orders, the gassphere with a
MASS block) against their documented values, an independent numpy reader and
the Gadget-4 HDF5 run of the same initial condition; synthetic Gadget binary
files of every variant (SnapFormat 1 and 2, either byte order, float and
double, 32- and 64-bit ids, mass blocks present or absent, multi-file);
TIPSY (the real XDR files with and without .iord, synthetic native and XDR,
an empty family), the lambs density reference through the reader; Region
with Stride and ParticleTypes in every format against numpy masks, over
chunk boundaries; SWIFT's cell index (only overlapping cells are read); the
BoxSize override; content recognition by the reader factory; cut-down files;
and bad input (truncated, disagreeing record markers, counts against block
and file sizes, absurd counts, a missing part, an inverted Region).

Usage: pvpython test_reader_formats.py SECTION   (see SECTIONS at the bottom)
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jztest  # noqa: E402  (loads the plugin)
from checks import run_section  # noqa: E402
from jztest import SKIP  # noqa: E402

import binary_snapshots as bs  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import snapshot_files as sf  # noqa: E402
from paraview import servermanager as sm  # noqa: E402
from test_reader import Read, expect_error, same  # noqa: E402

EXT = os.path.join(sf.shared_dir(), "data", "external")


def need(name):
    d = os.path.join(EXT, name)
    if not os.path.isdir(d):
        print(f"SKIP: {d} is not available")
        sys.exit(SKIP)
    return d


def check_blocks(c, run, expected, label, stride=1, mask=None):
    """Every array of every block equals the expected arrays exactly (dtype
    included); expected = {block: {array: values}}; rows [mask][::stride]."""
    c.check(not run.errors, f"{label}: no error {run.errors[:1]}")
    c.check(sorted(run.blocks) == sorted(expected), f"{label}: blocks {sorted(run.blocks)}")
    for block, arrays in expected.items():
        if block not in run.blocks:
            continue
        keep = mask[block] if mask is not None else slice(None)
        for name, values in arrays.items():
            values = np.asarray(values)[keep][::stride]
            got = run.points(block) if name == "Coordinates" else run.array(block, name)
            if got is not None and values.ndim == 2:
                got = got.reshape(-1, values.shape[1])
            if name == "GlobalIds":
                values = values.astype(np.int64)
            same(c, got, values.astype(values.dtype.newbyteorder("=")), f"{label} {block}/{name}")
        n = len(np.asarray(arrays["Coordinates"])[keep][::stride])
        c.check(run.blocks[block].GetNumberOfVerts() == n, f"{label} {block}: {n} vertices")


def section_gadget_real(c):
    d = need("gadget2-example-ics")
    runs = {}
    for order in ("little", "big"):
        path = os.path.join(d, f"lcdm_gas_{order}endian.dat")
        header, data = bs.read_gadget_binary(path)
        run = runs[order] = Read(path)
        check_blocks(c, run, bs.gadget_expected(data, header["mass"]), f"lcdm {order}-endian")
        c.check(run.field("SnapshotFormat") == f"Gadget-2 binary (SnapFormat 1, {order}-endian)",
                f"lcdm {order}: SnapshotFormat {run.field('SnapshotFormat')}")
        c.check(abs(run.field("Time")[0] - 0.0909091) < 1e-6 and
                abs(run.field("Redshift")[0] - 10.0) < 1e-9, "lcdm: Time 0.0909091, z = 10")
        c.check(run.field("BoxSize") is None, "lcdm: BoxSize 0 in the IC header: no BoxSize")
        ids0, ids1 = run.array("PartType0", "GlobalIds"), run.array("PartType1", "GlobalIds")
        c.check(np.array_equal(ids0, np.arange(1, 32769)) and
                np.array_equal(ids1, np.arange(32769, 65537)),
                "lcdm: gas ids 1..32768, dark matter 32769..65536 (README)")
        c.check(np.allclose(run.array("PartType0", "Masses"), 4.23507638, rtol=1e-8, atol=0) and
                np.allclose(run.array("PartType1", "Masses"), 27.5279965, rtol=1e-8, atol=0),
                "lcdm: masses from the MassTable [4.23507638, 27.5279965]")
    for name in ("Coordinates", "Velocities", "ParticleIDs"):
        a = runs["little"].points("PartType1") if name == "Coordinates" else \
            runs["little"].array("PartType1", name)
        b = runs["big"].points("PartType1") if name == "Coordinates" else \
            runs["big"].array("PartType1", name)
        c.check(np.array_equal(a, b), f"lcdm: both byte orders give the same {name}")
    # The Gadget-4 run of this IC: same masses, counts and id ranges.
    g4 = os.path.join(EXT, "gadget4-lcdm-gas-sph-n2x32", "snapshot_000.hdf5")
    if os.path.exists(g4):
        h5 = Read(g4)
        with h5py.File(g4, "r") as f:
            table = f["Header"].attrs["MassTable"]
        for t in (0, 1):
            block = f"PartType{t}"
            c.check(np.array_equal(np.sort(h5.array(block, "GlobalIds")),
                                   np.sort(runs["little"].array(block, "GlobalIds"))),
                    f"Gadget-4 HDF5 of the same IC: {block} ids are the binary IC's")
            c.check(np.allclose(runs["little"].array(block, "Masses"), table[t], rtol=1e-7),
                    f"Gadget-4 HDF5 MassTable[{t}] = {table[t]} = the IC's")
    path = os.path.join(d, "gassphere_littleendian.dat")
    header, data = bs.read_gadget_binary(path)
    run = Read(path)
    check_blocks(c, run, bs.gadget_expected(data, header["mass"]), "gassphere")
    m = run.array("PartType0", "Masses")
    r = np.linalg.norm(run.points("PartType0"), axis=1)
    c.check(len(m) == 1472 and abs(m.sum() - 1.0) < 1e-4 and np.allclose(m, 6.7935e-4, rtol=1e-4),
            f"gassphere: 1472 particles of mass 6.7935e-4 from the MASS block, total {m.sum():.5f}")
    c.check(np.allclose(run.array("PartType0", "InternalEnergy"), 0.05) and r.max() < 1,
            "gassphere: u = 0.05, all radii < 1")
    c.check(abs(m[r < 0.5].sum() - 0.245) < 0.01, f"gassphere: M(<0.5) = {m[r < 0.5].sum():.3f}")


def section_gadget_synthetic(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-gadgetbin-")
    try:
        variants = [
            dict(fmt=1, endian="<"), dict(fmt=1, endian=">"), dict(fmt=2, endian="<"),
            dict(fmt=2, endian=">", double=True), dict(fmt=1, id64=True),
            dict(fmt=2, id64=True, mass_table=[0, 0.5, 0, 0, 0, 0]),
            dict(fmt=1, mass_table=[0.1, 0.5, 0.2, 0, 0, 0.3], gas_blocks=1),
            dict(fmt=2, numfiles=3), dict(fmt=1, numfiles=2, endian=">", id64=True),
            dict(fmt=1, numfiles=3, splits={0: [500, 0, 300], 1: [0, 0, 900], 4: [10, 20, 0]}),
        ]
        for i, kw in enumerate(variants):
            base = os.path.join(tmp, f"snap{i}")
            counts = [800, 900, 0, 0, 30, 0]
            files, data = bs.write_gadget_binary(base, counts, seed=i, **kw)
            table = (kw.get("mass_table") or [0.0] * 6)
            expected = bs.gadget_expected(data, table)
            label = f"Gadget binary {kw}"
            for opened in sorted({files[0], files[-1]}):
                run = Read(opened)
                check_blocks(c, run, expected, f"{label} via {os.path.basename(opened)}")
            c.check(abs(run.field("BoxSize")[0] - 100.0) < 1e-12 and run.field("Time")[0] == 0.5 and
                    run.field("Redshift")[0] == 1.0 and run.field("Omega0")[0] == 0.3 and
                    run.field("HubbleParam")[0] == 0.7 and run.field("OmegaLambda")[0] == 0.7,
                    f"{label}: field data BoxSize, Time, Redshift, Omega0, OmegaLambda, HubbleParam")
            if i == 0:
                run = Read(files[0], Stride=7)
                check_blocks(c, run, expected, f"{label} Stride 7", stride=7)
                run = Read(files[0], PointArrays=["Velocities"], ParticleTypes=["PartType1"])
                c.check(sorted(run.blocks) == ["PartType1"] and
                        run.array("PartType1", "Velocities") is not None and
                        run.array("PartType1", "Masses") is None,
                        "ParticleTypes and PointArrays select blocks and arrays")
        # Series of binary snapshots: time steps from the headers.
        paths = []
        for step, time in enumerate((0.3, 0.1, 0.2)):
            path = os.path.join(tmp, f"series_{step:03d}")
            bs.write_gadget_binary(path, [10, 20], time=time, seed=step)
            paths.append(path)
        run = Read(paths)
        c.check(run.timesteps == [0.1, 0.2, 0.3], f"binary series: time steps {run.timesteps}")
    finally:
        shutil.rmtree(tmp)


def tipsy_expected(path):
    time, fam, _ = bs.read_tipsy(path)
    out = {}
    index = 0
    iord = None
    if os.path.exists(path + ".iord"):
        raw = open(path + ".iord", "rb").read()
        iord = np.frombuffer(raw[4:], ">i4").astype(np.int64)
    for family, rec in fam.items():
        n = len(rec)
        if n:
            out[family] = {name: rec[name] for name in rec.dtype.names}
            out[family]["GlobalIds"] = iord[index:index + n] if iord is not None else \
                np.arange(index, index + n)
        index += n
    return time, out


def section_tipsy_real(c):
    d = need("tipsy-tangos-tiny-gas-star")
    for snap, counts, time in (("tiny.000640", (171, 3078, 49), 0.252281),
                               ("tiny.000832", (161, 3079, 104), 0.300919)):
        path = os.path.join(d, snap)
        t, expected = tipsy_expected(path)
        run = Read(path)
        check_blocks(c, run, expected, snap)
        c.check([run.blocks[b].GetNumberOfPoints() for b in ("gas", "dark", "star")] == list(counts),
                f"{snap}: gas, dark, star = {counts}")
        c.check(abs(run.field("Time")[0] - time) < 1e-6, f"{snap}: Time {time}")
        c.check(np.allclose(run.array("gas", "SmoothingLength"), 7.0e-6),
                f"{snap}: hsmooth 7e-6 as SmoothingLength, unchanged")
        ids = np.concatenate([run.array(b, "GlobalIds") for b in ("gas", "dark", "star")])
        c.check(len(np.unique(ids)) == len(ids) and ids.max() > 3.2e7,
                f"{snap}: GlobalIds from the .iord (unique, up to {ids.max()})")
    d = need("nbodyshop-lambs-30k")
    path = os.path.join(d, "lambs.00200_subsamp_30K")
    _, expected = tipsy_expected(path)
    run = Read(path)
    check_blocks(c, run, expected, "lambs")
    c.check(np.allclose(run.array("dark", "Masses"), 1.004e-7, rtol=1e-3) and
            np.allclose(run.array("dark", "Softening"), 2.5e-4, rtol=1e-6),
            "lambs: masses 1.004e-7, eps 2.5e-4")
    c.check(np.array_equal(run.array("dark", "GlobalIds"), np.arange(30000)),
            "lambs: no .iord: GlobalIds are the indices in the file")
    # The density reference through the reader: KNNDensity K = 32, smooth's symmetric form.
    from paraview import simple
    reader = simple.ParticleSnapshotReader(FileName=path)
    knn = simple.KNNDensity(Input=reader, NumberOfNeighbors=32, OutputNeighbors=1, Periodic=1,
                            BoxFromData=0, BoxBounds=[-0.5, 0.5, -0.5, 0.5, -0.5, 0.5],
                            Device="CPU")
    knn.UpdatePipeline()
    out = sm.Fetch(knn)
    block = out.GetBlock(0)
    from vtkmodules.util.numpy_support import vtk_to_numpy
    pos = vtk_to_numpy(block.GetPoints().GetData()).astype(np.float64)
    mass = vtk_to_numpy(block.GetPointData().GetArray("Masses")).astype(np.float64)
    n, k = len(pos), 32
    ids = vtk_to_numpy(block.GetPointData().GetArray("NeighborIds")).reshape(n, k)
    gid = vtk_to_numpy(block.GetPointData().GetGlobalIds())
    c.check(np.array_equal(gid, np.arange(n)), "lambs through KNNDensity: ids are row indices")
    diff = pos[ids] - pos[:, None, :]
    diff = np.mod(diff + 0.5, 1.0) - 0.5
    r = np.sqrt((diff ** 2).sum(axis=2))
    h = 0.5 * r.max(axis=1)
    q = r / h[:, None]
    w = np.where(q < 1, 1 - 1.5 * q**2 + 0.75 * q**3, np.where(q < 2, 0.25 * (2 - q) ** 3, 0.0))
    w /= np.pi * h[:, None] ** 3
    rho = (0.5 * mass[ids] * w).sum(axis=1)
    np.add.at(rho, ids.ravel(), (0.5 * mass[:, None] * w).ravel())
    bench = np.loadtxt(os.path.join(d, "bench.den"), skiprows=1)
    rel = np.abs(rho - bench) / bench
    c.check(rel.max() < 1e-5, f"lambs reader -> KNNDensity K=32: smDensitySym reproduces "
                              f"bench.den (max rel {rel.max():.1e})")
    simple.Delete(knn)
    simple.Delete(reader)


def section_tipsy_synthetic(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-tipsy-")
    try:
        for i, (endian, counts, iord, name) in enumerate((
                ("<", (100, 200, 50), None, "snap.std"), (">", (100, 200, 50), ">i4", "snap.bin"),
                ("<", (0, 300, 0), "<i4", "run.00128"), (">", (40, 0, 7), ">i8", "x.tipsy"),
                ("<", (13, 17, 0), ">i4", "noext"))):
            path = os.path.join(tmp, f"{i}_{name}")
            expected = bs.write_tipsy(path, counts, endian=endian, iord=iord, seed=i, time=0.1 * i)
            run = Read(path)
            label = f"TIPSY {endian} {counts} iord={iord}"
            check_blocks(c, run, expected, label)
            c.check(run.field("Time")[0] == np.float64(0.1 * i), f"{label}: Time")
            want = "TIPSY (XDR, big-endian)" if endian == ">" else "TIPSY (native, little-endian)"
            c.check(run.field("SnapshotFormat") == want, f"{label}: {run.field('SnapshotFormat')}")
        # An ASCII .iord (the count, then one id per line), read as it streams, also
        # through a Region and with Stride.
        path = os.path.join(tmp, "ascii")
        expected = bs.write_tipsy(path, (30, 40, 20), seed=9)
        ids = 5000 + 11 * np.arange(90)
        with open(path + ".iord", "w") as f:
            f.write("90\n" + "\n".join(str(i) for i in ids) + "\n")
        start = 0
        for family in ("gas", "dark", "star"):
            n = len(expected[family]["Masses"])
            expected[family]["GlobalIds"] = ids[start:start + n]
            start += n
        check_blocks(c, Read(path), expected, "TIPSY with an ASCII .iord")
        check_blocks(c, Read(path, Stride=3), expected, "ASCII .iord, Stride 3", stride=3)
        region = [-0.2, 0.3, -0.5, 0.5, -0.5, 0.1]
        check_blocks(c, Read(path, Region=region), expected, "ASCII .iord, Region", 1,
                     bs.region_mask(expected, region))
        with open(path + ".iord", "w") as f:
            f.write("90\n" + "\n".join(str(i) for i in ids[:50]) + "\n")
        expect_error(c, path, [path + ".iord", "ends after 50"], "ASCII .iord with too few ids")
        # An .iord that does not fit: a warning, ids are the indices.
        path = os.path.join(tmp, "badiord")
        expected = bs.write_tipsy(path, (5, 6, 0))
        with open(path + ".iord", "w") as f:
            f.write("3\n1\n2\n3\n")  # 3 ids for 11 particles
        run = Read(path)
        check_blocks(c, run, expected, "TIPSY with an unusable .iord")
        c.check(any(".iord" in w for w in run.warnings), f"unusable .iord: a warning {run.warnings[:1]}")
    finally:
        shutil.rmtree(tmp)


def section_region(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-region-")
    try:
        cases = []
        h5 = os.path.join(tmp, "snap.hdf5")
        sf.write_gadget(h5, [3000, 4000, 0, 0, 500], mass_table=[0, 0.25, 0, 0, 0],
                        masses_for=(0, 4), extra_float=("Density",))
        with h5py.File(h5, "r") as f:
            exp = {}
            for t in (0, 1, 4):
                g = f[f"PartType{t}"]
                e = {k: g[k][...] for k in g}
                e["GlobalIds"] = e["ParticleIDs"]
                if "Masses" not in e:
                    e["Masses"] = np.full(len(e["ParticleIDs"]), 0.25)
                exp[f"PartType{t}"] = e
        cases.append(("HDF5", h5, exp))
        files, data = bs.write_gadget_binary(os.path.join(tmp, "bin"), [3000, 4000, 0, 0, 500],
                                             fmt=2, endian=">", numfiles=2)
        cases.append(("Gadget binary", files[1], bs.gadget_expected(data, [0.0] * 6)))
        tip = os.path.join(tmp, "t.std")
        cases.append(("TIPSY", tip, bs.write_tipsy(tip, (3000, 4000, 500), box=100.0)))
        for label, path, expected in cases:
            for region, stride in (((10, 60, 0, 100, 20, 90), 1), ((10, 60, 0, 100, 20, 90), 3),
                                   ((-1e30, 1e30, -1e30, 1e30, 50, 50.5), 2),
                                   ((200, 300, 0, 1, 0, 1), 1), ((-20, 0, -50, 0, -50, 50), 1)):
                run = Read(path, Region=list(region), Stride=stride)
                check_blocks(c, run, expected, f"{label} Region {region} Stride {stride}", 1,
                             bs.stride_in_region(expected, region, stride))
            run = Read(path, Region=[0, 50, 0, 50, 0, 50], ParticleTypes=[sorted(expected)[1]])
            c.check(sorted(run.blocks) == [sorted(expected)[1]], f"{label}: Region with ParticleTypes")
        # Exactly on the faces: min included, max excluded.
        grid = os.path.join(tmp, "grid.std")
        expected = bs.write_tipsy(grid, (0, 1000, 0))
        with open(grid, "r+b") as f:
            rec = bs.tipsy_dtype("dark", ">")
            arr = np.frombuffer(bytearray(f.read()[32:]), rec).copy()
            arr["Coordinates"] = np.stack(np.meshgrid(np.arange(10), np.arange(10), np.arange(10),
                                                      indexing="ij"), -1).reshape(-1, 3) * 0.5
            f.seek(32)
            f.write(arr.tobytes())
        _, expected = tipsy_expected(grid)
        run = Read(grid, Region=[1, 2, 1, 2, 0, 4.5])
        check_blocks(c, run, expected, "faces", 1, bs.region_mask(expected, [1, 2, 1, 2, 0, 4.5]))
        c.check(run.blocks["dark"].GetNumberOfPoints() == 2 * 2 * 9,
                f"half-open faces: {run.blocks['dark'].GetNumberOfPoints()} of 36 grid points")
        # More than one chunk (2^20 rows): stride counted across chunks and parts.
        files, data = bs.write_gadget_binary(os.path.join(tmp, "big"), [0, 1300000], numfiles=2,
                                             mass_table=[0, 1.5])
        expected = bs.gadget_expected(data, [0, 1.5])
        for region, stride in (((0, 100, 0, 100, 0, 100), 5), ((0, 33, 10, 90, 0, 100), 7)):
            run = Read(files[0], Region=list(region), Stride=stride)
            check_blocks(c, run, expected, f"1.3e6 particles Region {region} Stride {stride}", 1,
                         bs.stride_in_region(expected, region, stride))
        run = Read(files[0], Stride=5)
        check_blocks(c, run, expected, "1.3e6 particles Stride 5 without Region", 5)
    finally:
        shutil.rmtree(tmp)


def section_swift_cells(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-swiftcells-")
    try:
        for bounds in (False, True):
            path = os.path.join(tmp, f"swift{int(bounds)}.hdf5")
            expected = sf.write_swift_cells(path, bounds=bounds)
            region = [24, 27, 24, 27, 24, 27]  # cell 0, even widened by a cell, is far from it
            run = Read(path, Region=region)
            masks = bs.region_mask(expected, region)
            planted = {b: np.zeros(len(m), bool) for b, m in masks.items()}
            for b in planted:
                counts = None
                with h5py.File(path, "r") as f:
                    counts = f[f"Cells/Counts/{b}"][...]
                planted[b][counts[0] - 1] = True
            seen = {b: masks[b] & ~planted[b] for b in masks}
            c.check(all(masks[b][planted[b]].all() for b in masks),
                    "the planted particles lie inside the region")
            check_blocks(c, run, expected, f"SWIFT cells (bounding boxes {bounds}) Region", 1, seen)
            # A region touching cell 0 (and the periodic wrap) reads it: planted particles too
            # when inside.
            region = [0, 25, 0, 25, 0, 25]
            run = Read(path, Region=region)
            check_blocks(c, run, expected, f"SWIFT cells (bounding boxes {bounds}) corner Region",
                         1, bs.region_mask(expected, region))
            region = [39, 40, 0, 40, 0, 40]
            run = Read(path, Region=region, Stride=2)
            check_blocks(c, run, expected, f"SWIFT cells edge Region Stride 2", 1,
                         bs.stride_in_region(expected, region, 2))
    finally:
        shutil.rmtree(tmp)


def section_boxsize(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-boxsize-")
    try:
        files, _ = bs.write_gadget_binary(os.path.join(tmp, "nobox"), [10, 10], box=0.0)
        c.check(Read(files[0]).field("BoxSize") is None, "Gadget binary with BoxSize 0: no BoxSize")
        run = Read(files[0], BoxSize=50000.0)
        c.check(list(run.field("BoxSize")) == [50000.0] and
                list(run.field("BoxSize", "PartType0")) == [50000.0],
                "BoxSize override: field data on the output and the blocks")
        tip = os.path.join(tmp, "t.std")
        bs.write_tipsy(tip, (5, 5, 5))
        c.check(Read(tip).field("BoxSize") is None, "TIPSY stores no box: no BoxSize")
        c.check(list(Read(tip, BoxSize=1.0).field("BoxSize")) == [1.0], "TIPSY with BoxSize 1")
        h5 = os.path.join(tmp, "s.hdf5")
        sf.write_gadget(h5, [10, 10], box=25.0)
        c.check(list(Read(h5).field("BoxSize")) == [25.0], "HDF5: BoxSize from the file")
        c.check(list(Read(h5, BoxSize=7.5).field("BoxSize")) == [7.5], "HDF5: BoxSize overridden")
        expect_error(c, h5, ["BoxSize"], "negative BoxSize", BoxSize=-1.0)
    finally:
        shutil.rmtree(tmp)


def section_canread(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-canread2-")
    try:
        from paraview.modules.vtkRemotingServerManager import vtkSMProxyManager
        factory = vtkSMProxyManager.GetProxyManager().GetReaderFactory()
        factory.UpdateAvailableReaders()
        session = sm.ActiveConnection.Session
        from paraview import simple
        cases = []
        for name in ("snapshot_005", "ics.dat", "run.gadget", "snap.7"):
            files, _ = bs.write_gadget_binary(os.path.join(tmp, name), [5, 5], fmt=1 + len(name) % 2,
                                              endian="<>"[len(name) % 2])
            cases.append((files[0], True))
        for name in ("galaxy.std", "run.00512", "x.bin", "cosmo.tipsy"):
            bs.write_tipsy(os.path.join(tmp, name), (3, 4, 5), endian="<>"[len(name) % 2])
            cases.append((os.path.join(tmp, name), True))
        for name, payload in (("notes.txt", b"hello\n" * 50), ("random.dat", os.urandom(4096)),
                              ("zeros.bin", bytes(1024)), ("short", b"\x00\x01\x00\x00")):
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(payload)
            cases.append((os.path.join(tmp, name), False))
        d = os.path.join(EXT, "gadget2-example-ics")
        if os.path.isdir(d):
            cases += [(os.path.join(d, n), True) for n in sorted(os.listdir(d)) if n.endswith(".dat")]
            cases.append((os.path.join(d, "README.md"), False))
        for path, expected in cases:
            lst = factory.GetReaders(path, session)
            got = [lst.GetString(i) for i in range(1, lst.GetLength(), 3)] if lst else []
            c.check(("ParticleSnapshotReader" in got) == expected,
                    f"reader factory for {os.path.basename(path)}: {got}")
            if expected:
                r = simple.OpenDataFile(path)
                c.check(r is not None and r.GetXMLName() == "ParticleSnapshotReader",
                        f"OpenDataFile({os.path.basename(path)}) picks ParticleSnapshotReader")
                simple.Delete(r)
    finally:
        shutil.rmtree(tmp)


def section_cutdown(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-cutdown-")
    try:
        path = os.path.join(tmp, "cut.hdf5")
        sf.write_gadget(path, [100, 200, 0, 0, 30])
        with h5py.File(path, "r+") as f:
            del f["PartType4"]
        run = Read(path)
        c.check(not run.errors and sorted(run.blocks) == ["PartType0", "PartType1"] and
                any("PartType4" in w for w in run.warnings),
                f"cut-down file: the present types are read, a warning names PartType4 "
                f"({run.warnings[:1]})")
    finally:
        shutil.rmtree(tmp)


def corrupt(src, dst, offset, data):
    shutil.copy(src, dst)
    with open(dst, "r+b") as f:
        f.seek(offset)
        f.write(data)
    return dst


def section_errors(c):
    tmp = tempfile.mkdtemp(prefix="jz-reader-formaterrors-")
    try:
        files, _ = bs.write_gadget_binary(os.path.join(tmp, "g"), [3000, 4000])
        src = files[0]
        size = os.path.getsize(src)
        for fraction in (0.5, 0.999):
            cut = os.path.join(tmp, f"cut{int(fraction * 1000)}")
            with open(src, "rb") as f, open(cut, "wb") as g:
                g.write(f.read(int(size * fraction)))
            expect_error(c, cut, [cut, "truncated"], f"Gadget binary truncated to {fraction:.1%}")
        # The POS record's closing marker changed.
        pos_end = 4 + 256 + 4 + 4 + 7000 * 12
        bad = corrupt(src, os.path.join(tmp, "marker"), pos_end, np.array([12], "<u4").tobytes())
        expect_error(c, bad, [bad, "markers"], "record markers that disagree")
        # Header counts that disagree with the block sizes.
        bad = corrupt(src, os.path.join(tmp, "counts"), 4, np.array([2999], "<i4").tobytes())
        expect_error(c, bad, [bad, "POS", "bytes"], "npart that disagrees with the POS block")
        # Absurd counts: more particles than the file can hold.
        bad = corrupt(src, os.path.join(tmp, "absurd"), 8, np.array([2**31 - 1], "<i4").tobytes())
        expect_error(c, bad, [bad, "2147483647"], "absurd npart")
        bad = corrupt(src, os.path.join(tmp, "negative"), 8, np.array([-5], "<i4").tobytes())
        expect_error(c, bad, [bad, "-5"], "negative npart")
        bad = corrupt(src, os.path.join(tmp, "numfiles.0"), 4 + 124, np.array([2**31 - 1], "<i4").tobytes())
        expect_error(c, bad, [bad, "num_files", "2147483647"], "absurd num_files")
        # A missing part of a multi-file set.
        files, _ = bs.write_gadget_binary(os.path.join(tmp, "m"), [300, 400], numfiles=3)
        os.remove(files[1])
        expect_error(c, files[0], [files[1]], "multi-file set with a missing part")
        # A part renamed so that the others cannot be found.
        files, _ = bs.write_gadget_binary(os.path.join(tmp, "n"), [30, 40], numfiles=2)
        renamed = os.path.join(tmp, "renamed")
        os.rename(files[0], renamed)
        expect_error(c, renamed, [renamed, "num_files"], "multi-file part without its number")
        # TIPSY: truncated, absurd counts (consistent header, impossible size).
        tip = os.path.join(tmp, "t.std")
        bs.write_tipsy(tip, (100, 200, 50))
        size = os.path.getsize(tip)
        cut = os.path.join(tmp, "tcut")
        with open(tip, "rb") as f, open(cut, "wb") as g:
            g.write(f.read(size - 10))
        expect_error(c, cut, [cut, "truncated"], "TIPSY truncated")
        bad = corrupt(tip, os.path.join(tmp, "tabsurd"), 8,
                      np.array([2**31 - 1, 3, 2**31 - 1 - 250, 200, 50], ">i4").tobytes())
        expect_error(c, bad, [bad, "bytes"], "TIPSY absurd counts")
        # Neither format.
        junk = os.path.join(tmp, "junk.dat")
        with open(junk, "wb") as f:
            f.write(os.urandom(5000))
        expect_error(c, junk, [junk, "not"], "a file of none of the formats")
        # An inverted Region.
        expect_error(c, tip, ["Region", "inverted"], "inverted Region", Region=[5, 1, 0, 1, 0, 1])
    finally:
        shutil.rmtree(tmp)


SECTIONS = {
    "gadget_real": section_gadget_real,
    "gadget_synthetic": section_gadget_synthetic,
    "tipsy_real": section_tipsy_real,
    "tipsy_synthetic": section_tipsy_synthetic,
    "region": section_region,
    "swift_cells": section_swift_cells,
    "boxsize": section_boxsize,
    "canread": section_canread,
    "cutdown": section_cutdown,
    "errors": section_errors,
}

if __name__ == "__main__":
    run_section(SECTIONS).finish()
