#!/usr/bin/python3
"""ParticleSnapshotReader under mpiexec pvbatch: on P ranks the pieces, in
rank order, equal the whole snapshot as h5py reads it (every array, exactly),
each rank holding a contiguous near-equal share; for the real Gadget-4
snapshot (one file: MPI-IO), the same with MPI-IO switched off, a multi-file
set cut from it (independent reads), a gas/DM/stars snapshot with Stride, a
multi-file Gadget binary set and a TIPSY file, Regions with Stride (HDF5,
Gadget binary, TIPSY, a SWIFT file read by its cell index), a
SWIFT file with compressed, check-summed datasets, a SWIFT meta-snapshot of
virtual datasets (independent reads: parallel HDF5 cannot read those); FriendsOfFriends on the
reader's output with the box from the file finds Gadget-4's groups; a
multi-file set with a missing part fails every rank with the message, and
nothing hangs. Skips (125) without ../shared.

Usage: test_reader_mpi.py P
"""
import json
import os
import re
import shutil
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import binary_snapshots as bs  # noqa: E402
import snapshot_files as sf  # noqa: E402
from checks import Checker  # noqa: E402
from mpi_env import mpiexec_command, pvbatch, run_pvbatch_ranks  # noqa: E402

checker = Checker()
check = checker.check


def reference(files, stride=1):
    """Every dataset of every type, concatenated over the parts, as h5py reads it."""
    ref = {}
    handles = [h5py.File(f, "r") for f in files]
    try:
        types = sorted({g for f in handles for g in f if g.startswith("PartType")})
        mass_table = handles[0]["Header"].attrs["MassTable"]
        for t in types:
            parts = [f[t] for f in handles if t in f]
            for name in sorted({n for p in parts for n in p}):
                ref[f"{t}/{name}"] = np.concatenate([p[name][...] for p in parts])[::stride]
            n = len(ref[f"{t}/Coordinates"])
            if f"{t}/Masses" not in ref:
                ref[f"{t}/Masses"] = np.full(n, mass_table[int(t[8:])])
            ref[f"{t}/GlobalIds"] = ref[f"{t}/ParticleIDs"].astype(np.int64)
    finally:
        for f in handles:
            f.close()
    return ref


def flat_reference(expected, masks=None):
    """{block: {array: values}} (binary formats, the writers' arrays) as
    reference() gives it, rows restricted to `masks`."""
    ref = {}
    for block, arrays in expected.items():
        keep = masks[block] if masks is not None else slice(None)
        for name, values in arrays.items():
            values = np.asarray(values)[keep]
            values = values.astype(np.int64 if name == "GlobalIds" else values.dtype.newbyteorder("="))
            ref[f"{block}/{name}"] = values
    return ref


def h5_expected(path):
    """{block: {array: values}} of an HDF5 snapshot (GlobalIds, Masses from the table)."""
    ref = reference([path])
    out = {}
    for key, values in ref.items():
        block, name = key.split("/", 1)
        out.setdefault(block, {})[name] = values
    return out


def compare(case, out, P, ref, balanced=True):
    ranks = [dict(np.load(os.path.join(out, f"{case}.rank{r}.npz"))) for r in range(P)]
    errors = [str(d["errors"]) for d in ranks if str(d["errors"])]
    if not check(not errors, f"{case}: no error on any rank {errors[:1]}"):
        return
    types = sorted({k.split("/")[0] for k in ref})
    check(all(sorted(d["blocks"]) == types for d in ranks), f"{case}: blocks {types} on every rank")
    for t in types:
        sizes = [len(d[f"{t}/points"]) for d in ranks]
        total = len(ref[f"{t}/Coordinates"])
        check(sum(sizes) == total and (not balanced or max(sizes) - min(sizes) <= 1) and
              all(int(d[f"{t}/verts"]) == len(d[f"{t}/points"]) for d in ranks),
              f"{case} {t}: contiguous near-equal shares {sizes} of {total}, one vertex each")
        for key, expected in ref.items():
            if not key.startswith(t + "/"):
                continue
            name = key.split("/", 1)[1]
            local = "points" if name == "Coordinates" else name
            got = np.concatenate([d[f"{t}/{local}"] for d in ranks])
            if expected.ndim == 2:
                got = got.reshape(len(got), -1)
            check(got.dtype == expected.dtype and np.array_equal(got, expected),
                  f"{case} {t}/{name}: ranks in order == h5py ({got.dtype})")


def main():
    P = int(sys.argv[1])
    d = sf.gadget4_dir()
    if d is None:
        print("SKIP: ../shared/data/external/gadget4-cosmobox-n32-l50 is not available")
        sys.exit(125)
    tmp = tempfile.mkdtemp(prefix=f"jz-reader-mpi{P}-")
    try:
        real = os.path.join(d, "snapshot_062.hdf5")
        parts = sf.split(real, os.path.join(tmp, "snap"), [3000, 3000, 20000, 31000])
        mixed = os.path.join(tmp, "mixed.hdf5")
        sf.write_gadget(mixed, [5000, 7000, 0, 0, 101], dtype=np.float64,
                        mass_table=[0, 0.25, 0, 0, 0], masses_for=(0, 4), chunks=1000)
        swift = os.path.join(tmp, "swift.hdf5")
        sf.write_swift(swift, n_gas=2000, n_dm=3000, n_stars=7)
        os.makedirs(os.path.join(tmp, "virtual"))
        meta, meta_full = sf.write_swift_virtual(os.path.join(tmp, "virtual"), n_gas=1000,
                                                 n_dm=1200, n_stars=5)
        broken = sf.split(real, os.path.join(tmp, "broken"), [10000, 20000])
        os.remove(broken[1])
        # Binary formats and Regions: the writers' arrays are the reference.
        gfiles, gdata = bs.write_gadget_binary(os.path.join(tmp, "gbin"), [3001, 4002, 0, 0, 77],
                                               fmt=2, endian=">", numfiles=3, id64=True,
                                               mass_table=[0, 0.5, 0, 0, 0, 0])
        gexp = bs.gadget_expected(gdata, [0, 0.5, 0, 0, 0, 0])
        tipsy = os.path.join(tmp, "t.std")
        texp = bs.write_tipsy(tipsy, (2000, 3001, 55), iord=">i4", box=100.0)
        swift_cells = os.path.join(tmp, "swift_cells.hdf5")
        sexp = sf.write_swift_cells(swift_cells, planted=False, bounds=True)
        mexp = h5_expected(mixed)
        region = [10, 70, 5, 95, 20, 80]
        sregion = [5, 17, 0, 40, 12, 31]
        binary = {
            "gadget_binary": ({}, gexp, None),
            "tipsy": ({}, texp, None),
            "gadget_binary_region": ({"Region": region, "Stride": 3}, gexp,
                                     bs.stride_in_region(gexp, region, 3)),
            "tipsy_region": ({"Region": region, "Stride": 2}, texp,
                             bs.stride_in_region(texp, region, 2)),
            "hdf5_region": ({"Region": region, "Stride": 4}, mexp,
                            bs.stride_in_region(mexp, region, 4)),
            "swift_cells_region": ({"Region": sregion, "Stride": 3}, sexp,
                                   bs.stride_in_region(sexp, sregion, 3)),
        }
        paths = {"gadget_binary": gfiles[1], "tipsy": tipsy, "gadget_binary_region": gfiles[2],
                 "tipsy_region": tipsy, "hdf5_region": mixed, "swift_cells_region": swift_cells}
        cases = [
            {"name": "real", "files": real, "ref": ([real], 1), "fof": True},
            {"name": "real_independent", "files": real, "mpiio": "0", "ref": ([real], 1)},
            {"name": "multifile", "files": parts[2], "ref": ([real], 1)},
            {"name": "mixed_stride", "files": mixed, "props": {"Stride": 3}, "ref": ([mixed], 3)},
            {"name": "swift", "files": swift, "ref": ([swift], 1)},
            {"name": "swift_virtual", "files": meta, "ref": ([meta_full], 1)},
            {"name": "virtual_forced", "files": meta, "mpiio": "force", "ref": ([meta_full], 1)},
            {"name": "broken", "files": broken[0]},
        ] + [{"name": name, "files": paths[name], "props": props}
             for name, (props, _, _) in binary.items()]
        cases_file = os.path.join(tmp, "cases.json")
        with open(cases_file, "w") as f:
            json.dump([{k: v for k, v in c.items() if k != "ref"} for c in cases], f)
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        cmd = mpiexec_command(P) + [pvbatch(), "--symmetric",
                                    os.path.join(HERE, "mpi_reader_case.py"), cases_file, out]
        p = run_pvbatch_ranks(cmd, P, check, env=dict(os.environ, JZ_RUNINFO="1"))
        if p is None:
            return
        for case in cases:
            if "ref" in case:
                compare(case["name"], out, P, reference(*case["ref"]))
        for name, (props, expected, masks) in binary.items():
            compare(name, out, P, flat_reference(expected, masks), balanced=masks is None)
        # MPI-IO for the one-file snapshot on several ranks, not when switched off,
        # never for a multi-file set (the reader prints its counters with JZ_RUNINFO).
        per_rank = {r: [] for r in range(P)}
        for r, v in re.findall(r"ParticleSnapshotReader rank (\d+)/\d+ counter \"MPI-IO\" (\S+)",
                               p.stdout):
            per_rank[int(r)].append(float(v))
        # Cases in order: real, real_independent, multifile, mixed, swift, swift_virtual
        # (parallel HDF5 cannot read virtual datasets), virtual_forced (MPI-IO fails,
        # the ranks read again independently); broken reports nothing.
        on = 1.0 if P > 1 else 0.0
        want = [on, 0.0, 0.0, on, on, 0.0, 0.0] + [0.0] * len(binary)
        check(all(v == want for v in per_rank.values()),
              f"MPI-IO used where expected {want} (reported per rank {per_rank})")
        # The real snapshot's datasets are contiguous: every rank reads its rows
        # of them with positioned reads, with or without MPI-IO.
        direct = {r: [] for r in range(P)}
        for r, v in re.findall(
                r"ParticleSnapshotReader rank (\d+)/\d+ counter \"HDF5 datasets read directly\" (\S+)",
                p.stdout):
            direct[int(r)].append(float(v))
        check(all(len(v) > 2 and v[0] > 0 and v[1] > 0 and v[2] > 0 for v in direct.values()),
              f"real, real_independent, multifile: HDF5 datasets read directly on every rank "
              f"({ {r: v[:3] for r, v in direct.items()} })")
        fallback = "Parallel HDF5 (MPI-IO) could not read the snapshot; reading it independently"
        check((fallback in p.stdout) == (P > 1),
              f"MPI-IO forced on virtual datasets: {'a warning and' if P > 1 else 'no MPI-IO,'} "
              f"an independent read")
        # FoF with the box from the file equals Gadget-4's groups, on every rank count.
        ranks = [dict(np.load(os.path.join(out, f"real.rank{r}.npz"))) for r in range(P)]
        gid = np.concatenate([dd["GroupId"] for dd in ranks])
        same, ngroups = sf.same_groups_as_gadget4(gid, os.path.join(d, "fof_tab_062.hdf5"))
        check(not any(str(dd["fof_errors"]) for dd in ranks) and same,
              f"FriendsOfFriends on the reader (BoxSize from the file): Gadget-4's {ngroups} groups")
        # The broken set: every rank reports the missing part, no rank has data.
        ranks = [dict(np.load(os.path.join(out, f"broken.rank{r}.npz"))) for r in range(P)]
        check(all(broken[1] in str(dd["errors"]) and len(dd["blocks"]) == 0 for dd in ranks),
              f"missing part: every rank names {os.path.basename(broken[1])}, no output")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
    checker.finish()
