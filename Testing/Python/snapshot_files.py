"""Snapshot files for the reader's tests and benchmark, written with h5py.

- split(): a multi-file set (name.0.hdf5 ... name.N-1.hdf5) made by cutting a
  real single-file Gadget snapshot or group catalogue into parts, the way
  Gadget writes them (every part has the full header with its own
  NumPart_ThisFile / Ngroups_ThisFile; a part without particles of a type has
  no group for it).
- write_swift(): a SWIFT snapshot following SWIFT's documented layout
  (Snapshots section of the SWIFT documentation: Header with Code "SWIFT",
  3-vector BoxSize, 7 particle types; Cosmology, Units and
  InternalCodeUnits groups; PartType groups with unit attributes on every
  dataset; GasParticles / DMParticles / ... aliases as soft links; Cells).
- write_swift_cells(): a SWIFT file sorted by top-level cell with SWIFT's
  Cells index (Counts, OffsetsInFile, Files, optionally Min/MaxPositions).
- write_gadget(): a synthetic Gadget-style snapshot of any size (benchmarks,
  error cases).
- Bad files: truncated copies, a missing Coordinates, wrong NumPart_ThisFile.

Runs under Debian's python3 and under pvpython (both have h5py and numpy).
"""
import os
import shutil

import h5py
import numpy as np

GADGET4_DIR_REL = "data/external/gadget4-cosmobox-n32-l50"


def shared_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("JZ_SHARED_DIR") or os.path.join(here, "..", "..", "..", "shared")


def gadget4_dir():
    """The real Gadget-4 snapshots, or None when ../shared is absent."""
    d = os.path.join(shared_dir(), GADGET4_DIR_REL)
    return d if os.path.isdir(d) else None


def same_groups_as_gadget4(group_id, fof_tab):
    """Whether FoF GroupIds (one per snapshot particle, in file order) make
    exactly Gadget-4's groups of `fof_tab` (members of group k: the particles
    [GroupOffsetType[k, 1], + GroupLen[k]), the file being in group order),
    and how many groups Gadget-4 has."""
    with h5py.File(fof_tab, "r") as f:
        length, offset = f["Group/GroupLen"][...], f["Group/GroupOffsetType"][:, 1]
    ref = np.full(len(group_id), -1)
    for k, (o, m) in enumerate(zip(offset, length)):
        ref[o:o + m] = k
    member = ref >= 0
    pairs = np.unique(np.stack([group_id[member], ref[member]], 1), axis=0)
    same = len(group_id) > 0 and int(group_id.max()) + 1 == len(length) and \
        np.array_equal(group_id >= 0, member) and \
        len(np.unique(group_id[member])) == len(pairs) == len(length)
    return bool(same), len(length)


def copy_attrs(src, dst):
    for k, v in src.attrs.items():
        dst.attrs[k] = v


def _copy_meta(src, dst, skip):
    """Groups other than `skip` (Config, Parameters, ...) with their attributes."""
    for name, obj in src.items():
        if name in skip or not isinstance(obj, h5py.Group):
            continue
        g = dst.create_group(name)
        copy_attrs(obj, g)


def split(src_path, dst_base, cuts, ext=".hdf5"):
    """Cuts a single-file snapshot or catalogue into len(cuts)+1 parts.

    `cuts` are row indices (into every point set, in order) where a new part
    begins; equal cuts give parts without rows. Returns the part names.
    """
    with h5py.File(src_path, "r") as src:
        catalogue = "NumPart_ThisFile" not in src["Header"].attrs
        if catalogue:
            sets = [(g, k) for g, k in (("Group", "Ngroups"), ("Subhalo", "Nsubhalos"))
                    if g in src]
        else:
            sets = [(g, None) for g in src if g.startswith("PartType")]
        nparts = len(cuts) + 1
        names = []
        for part in range(nparts):
            name = f"{dst_base}.{part}{ext}"
            names.append(name)
            with h5py.File(name, "w") as dst:
                _copy_meta(src, dst, skip=set(s for s, _ in sets) | {"IDs"})
                header = dst["Header"]
                if catalogue:
                    header.attrs["NumFiles"] = np.int32(nparts)
                else:
                    header.attrs["NumFilesPerSnapshot"] = np.int32(nparts)
                this_file = np.array(src["Header"].attrs.get("NumPart_ThisFile", [0]))
                this_file = np.zeros_like(this_file)
                for group, key in sets:
                    n = _rows(src, group, key)
                    bounds = [0] + [min(c, n) for c in cuts] + [n]
                    lo, hi = bounds[part], bounds[part + 1]
                    if catalogue:
                        header.attrs[f"{key}_ThisFile"] = np.int32(hi - lo)
                        g = dst.create_group(group)
                        if hi > lo:
                            for dname, ds in src[group].items():
                                g.create_dataset(dname, data=ds[lo:hi])
                    else:
                        t = int(group[len("PartType"):])
                        this_file[t] = hi - lo
                        if hi > lo:
                            g = dst.create_group(group)
                            for dname, ds in src[group].items():
                                g.create_dataset(dname, data=ds[lo:hi])
                if not catalogue:
                    header.attrs["NumPart_ThisFile"] = this_file
    return names


def _rows(src, group, key):
    if key is not None:
        return int(src["Header"].attrs[f"{key}_ThisFile"])
    return src[group]["Coordinates"].shape[0]


def write_gadget(path, counts, box=100.0, time=1.0, redshift=0.0, seed=1, dtype=np.float32,
                 mass_table=None, masses_for=(), extra_float=(), id_dtype=np.uint64,
                 numfiles=1, chunks=None):
    """A Gadget-2/3 style snapshot: one PartType<t> group per non-zero entry of
    `counts` (Coordinates, Velocities, ParticleIDs; Masses for the types in
    `masses_for`; one float32 dataset per name in `extra_float`)."""
    rng = np.random.default_rng(seed)
    ntypes = max(6, len(counts))
    counts = list(counts) + [0] * (ntypes - len(counts))
    mass_table = list(mass_table or [0.0] * ntypes) + [0.0] * (ntypes - len(mass_table or []))
    with h5py.File(path, "w") as f:
        h = f.create_group("Header")
        h.attrs["NumPart_ThisFile"] = np.array(counts, dtype=np.int32)
        h.attrs["NumPart_Total"] = np.array([c % 2**32 for c in counts], dtype=np.uint32)
        h.attrs["NumPart_Total_HighWord"] = np.array([c >> 32 for c in counts], dtype=np.uint32)
        h.attrs["MassTable"] = np.array(mass_table[:ntypes], dtype=np.float64)
        h.attrs["Time"] = time
        h.attrs["Redshift"] = redshift
        h.attrs["BoxSize"] = box
        h.attrs["NumFilesPerSnapshot"] = np.int32(numfiles)
        h.attrs["Omega0"] = 0.3
        h.attrs["OmegaLambda"] = 0.7
        h.attrs["HubbleParam"] = 0.7
        h.attrs["Flag_Sfr"] = np.int32(0)
        first_id = 1
        for t, n in enumerate(counts):
            if n == 0:
                continue
            g = f.create_group(f"PartType{t}")
            kw = dict(chunks=(min(n, chunks), 3)) if chunks else {}
            g.create_dataset("Coordinates", data=(rng.random((n, 3)) * box).astype(dtype), **kw)
            kw = dict(chunks=(min(n, chunks), 3)) if chunks else {}
            g.create_dataset("Velocities", data=rng.normal(0, 100, (n, 3)).astype(np.float32), **kw)
            g.create_dataset("ParticleIDs", data=np.arange(first_id, first_id + n, dtype=id_dtype))
            first_id += n
            if t in masses_for:
                g.create_dataset("Masses", data=rng.random(n).astype(np.float32))
            for name in extra_float:
                g.create_dataset(name, data=rng.random(n).astype(np.float32))


# SWIFT's unit metadata on every particle dataset (Snapshots section,
# "Unit information for individual fields").
def _swift_units(ds, length=0, mass=0, time=0, temperature=0, a_exponent=0.0, description=""):
    for key, value in (("U_M exponent", mass), ("U_L exponent", length), ("U_t exponent", time),
                       ("U_I exponent", 0), ("U_T exponent", temperature)):
        ds.attrs[key] = np.array([value], dtype=np.float32)
    ds.attrs["a-scale exponent"] = np.array([a_exponent], dtype=np.float32)
    ds.attrs["h-scale exponent"] = np.array([0.0], dtype=np.float32)
    ds.attrs["Description"] = np.bytes_(description)
    ds.attrs["Conversion factor to CGS (not including cosmological corrections)"] = \
        np.array([1.0], dtype=np.float64)
    ds.attrs["Expression for physical CGS units"] = np.bytes_("a U_L [ cm ]")


SWIFT_TYPE_NAMES = ["Gas", "DM", "DMBackground", "Sink", "Stars", "BH", "Neutrino"]
SWIFT_ALIASES = ["GasParticles", "DMParticles", "DMBackgroundParticles", "SinkParticles",
                 "StarsParticles", "BHParticles", "NeutrinoParticles"]


def write_swift(path, n_gas=3000, n_dm=4000, n_stars=500, box=(25.0, 25.0, 30.0), seed=7,
                scale_factor=0.5):
    """A SWIFT cosmological snapshot (gas, dark matter, stars) with SWIFT's
    types: double coordinates, float velocities/masses, unsigned 64-bit ids,
    int64 NumPart_ThisFile, 7 particle types. Returns the data written, by
    group and dataset, for checks."""
    rng = np.random.default_rng(seed)
    box = np.array(box, dtype=np.float64)
    counts = [n_gas, n_dm, 0, 0, n_stars, 0, 0]
    written = {}
    with h5py.File(path, "w") as f:
        h = f.create_group("Header")
        h.attrs["BoxSize"] = box
        h.attrs["NumPart_ThisFile"] = np.array(counts, dtype=np.int64)
        h.attrs["NumPart_Total"] = np.array(counts, dtype=np.uint32)
        h.attrs["NumPart_Total_HighWord"] = np.zeros(7, dtype=np.uint32)
        h.attrs["MassTable"] = np.zeros(7, dtype=np.float64)
        h.attrs["InitialMassTable"] = np.array([0.01, 0.05, 0, 0, 0.01, 0, 0], dtype=np.float64)
        h.attrs["Flag_Entropy_ICs"] = np.zeros(7, dtype=np.uint32)
        h.attrs["NumFilesPerSnapshot"] = np.array([1], dtype=np.int32)
        h.attrs["ThisFile"] = np.array([0], dtype=np.int32)
        h.attrs["Time"] = np.array([0.123456789], dtype=np.float64)
        h.attrs["Redshift"] = np.array([1.0 / scale_factor - 1.0])
        h.attrs["Scale-factor"] = np.array([scale_factor])
        h.attrs["Dimension"] = np.array([3], dtype=np.int32)
        h.attrs["Code"] = np.bytes_("SWIFT")
        h.attrs["RunName"] = np.bytes_("jz-reader-test")
        h.attrs["OutputType"] = np.bytes_("FullVolume")
        h.attrs["SelectOutput"] = np.bytes_("Default")
        h.attrs["Virtual"] = np.array([0], dtype=np.int32)
        h.attrs["NumPartTypes"] = np.array([7], dtype=np.int32)
        h.attrs["PartTypeNames"] = np.array([np.bytes_(n) for n in SWIFT_TYPE_NAMES])
        cosmo = f.create_group("Cosmology")
        for key, value in (("Cosmological run", 1.0), ("h", 0.6777), ("H0 [internal units]", 67.77),
                           ("Omega_m", 0.307), ("Omega_lambda", 0.693), ("Omega_b", 0.0482),
                           ("Omega_r", 0.0), ("Omega_k", 0.0), ("w_0", -1.0), ("w_a", 0.0),
                           ("Redshift", 1.0 / scale_factor - 1.0), ("Scale-factor", scale_factor),
                           ("Critical density [internal units]", 12.3)):
            cosmo.attrs[key] = np.array([value])
        for group in ("Units", "InternalCodeUnits"):
            u = f.create_group(group)
            u.attrs["Unit mass in cgs (U_M)"] = np.array([1.98841e43])
            u.attrs["Unit length in cgs (U_L)"] = np.array([3.08567758e24])
            u.attrs["Unit time in cgs (U_t)"] = np.array([3.08567758e19])
            u.attrs["Unit current in cgs (U_I)"] = np.array([1.0])
            u.attrs["Unit temperature in cgs (U_T)"] = np.array([1.0])
        for group in ("Code", "Policy", "GravityScheme", "HydroScheme", "Parameters"):
            g = f.create_group(group)
            if group == "Parameters":
                g.attrs["Cosmology:h"] = np.bytes_("0.6777")
        first_id = 1
        for t, n in enumerate(counts):
            if n == 0:
                continue
            name = f"PartType{t}"
            g = f.create_group(name)
            data = {
                "Coordinates": rng.random((n, 3)) * box,
                "Velocities": rng.normal(0, 50, (n, 3)).astype(np.float32),
                "Masses": (rng.random(n) * 0.01 + 0.01).astype(np.float32),
                "ParticleIDs": np.arange(first_id, first_id + n, dtype=np.uint64) * 3,
                "FOFGroupIDs": rng.integers(0, 2**31, n).astype(np.int64),
            }
            first_id += n
            if t == 0:
                data["SmoothingLengths"] = rng.random(n).astype(np.float32)
                data["Densities"] = rng.random(n).astype(np.float32)
                data["InternalEnergies"] = rng.random(n).astype(np.float32)
                data["ElementMassFractions"] = rng.random((n, 9)).astype(np.float32)
                data["MetalMassFractions"] = rng.random(n).astype(np.float32)
            if t == 4:
                data["BirthScaleFactors"] = rng.random(n).astype(np.float32)
                data["Ages"] = rng.random(n).astype(np.float64)
            written[name] = data
            for dname, values in data.items():
                ds = g.create_dataset(dname, data=values, chunks=True, fletcher32=True,
                                      compression="gzip" if dname == "Coordinates" else None)
                _swift_units(ds, length=1 if dname == "Coordinates" else 0, description=dname)
            f[SWIFT_ALIASES[t]] = h5py.SoftLink("/" + name)
        cells = f.create_group("Cells")
        meta = cells.create_group("Meta-data")
        meta.attrs["dimension"] = np.array([2, 2, 2], dtype=np.int32)
        meta.attrs["size"] = box / 2
        meta.attrs["nr_cells"] = np.array([8], dtype=np.int32)
        cells.create_dataset("Centres", data=np.zeros((8, 3)))
    return written


def write_swift_virtual(directory, **kwargs):
    """A distributed SWIFT snapshot: two part files (snap_0000.0/1.hdf5) and
    the meta-snapshot snap_0000.hdf5 whose particle datasets are HDF5 virtual
    datasets over the parts (SWIFT's "Meta-file for distributed snapshots"),
    with NumFilesPerSnapshot 1 and Virtual 1. Returns (meta, full), full
    being the same snapshot in one ordinary file."""
    full = os.path.join(directory, "snap_full.hdf5")
    write_swift(full, **kwargs)
    parts = split(full, os.path.join(directory, "snap_0000"), [kwargs.get("n_gas", 3000) // 3])
    meta = os.path.join(directory, "snap_0000.hdf5")
    with h5py.File(full, "r") as src, h5py.File(meta, "w") as dst:
        for name, obj in src.items():
            if isinstance(obj, h5py.Group) and not name.startswith("PartType") and \
                    name not in SWIFT_ALIASES:
                src.copy(obj, dst, name=name)
        dst["Header"].attrs["Virtual"] = np.array([1], np.int32)
        for t in (g for g in src if g.startswith("PartType")):
            group = dst.create_group(t)
            for dname, ds in src[t].items():
                layout = h5py.VirtualLayout(shape=ds.shape, dtype=ds.dtype)
                offset = 0
                for p in parts:
                    with h5py.File(p, "r") as pf:
                        if t in pf:
                            n = pf[t][dname].shape[0]
                            # relative to the meta-snapshot, as SWIFT writes them
                            layout[offset:offset + n] = h5py.VirtualSource(
                                os.path.basename(p), f"{t}/{dname}", shape=pf[t][dname].shape)
                            offset += n
                group.create_virtual_dataset(dname, layout)
    return meta, full


def write_swift_fof(path, n_groups=40, box=(25.0, 25.0, 30.0), seed=11):
    """SWIFT's own FOF catalogue (fof_output_NNNN.hdf5): Header with
    NumGroups_ThisFile / NumGroups_Total, Cosmology and Units, and a Groups
    group with one row per group (Centres, Masses, Sizes, GroupIDs). Returns
    the Groups datasets written."""
    rng = np.random.default_rng(seed)
    groups = {
        "Centres": rng.random((n_groups, 3)) * np.array(box),
        "Masses": rng.random(n_groups).astype(np.float32) * 100,
        "Sizes": rng.integers(32, 5000, n_groups).astype(np.int64),
        "GroupIDs": np.arange(1, n_groups + 1, dtype=np.int64),
    }
    with h5py.File(path, "w") as f:
        h = f.create_group("Header")
        h.attrs["BoxSize"] = np.array(box)
        h.attrs["Code"] = np.bytes_("SWIFT")
        h.attrs["OutputType"] = np.bytes_("FOF")
        h.attrs["NumGroups_ThisFile"] = np.array([n_groups], dtype=np.int64)
        h.attrs["NumGroups_Total"] = np.array([n_groups], dtype=np.int64)
        h.attrs["NumFilesPerSnapshot"] = np.array([1], dtype=np.int32)
        h.attrs["ThisFile"] = np.array([0], dtype=np.int32)
        h.attrs["Time"] = np.array([0.5])
        h.attrs["Redshift"] = np.array([1.0])
        f.create_group("Cosmology").attrs["h"] = np.array([0.7])
        f.create_group("Units").attrs["Unit length in cgs (U_L)"] = np.array([3.08567758e24])
        g = f.create_group("Groups")
        for name, values in groups.items():
            g.create_dataset(name, data=values)
    return groups


def truncate(src, dst, fraction=0.5):
    """A copy of `src` cut to `fraction` of its size (a failed transfer)."""
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        data = fi.read()
        fo.write(data[: int(len(data) * fraction)])


def copy_without(src, dst, dataset):
    """A copy of `src` without one dataset (e.g. PartType1/Coordinates)."""
    shutil.copyfile(src, dst)
    with h5py.File(dst, "a") as f:
        del f[dataset]


def copy_with_numpart(src, dst, type_index, count):
    """A copy of `src` whose Header/NumPart_ThisFile[type_index] is `count`."""
    shutil.copyfile(src, dst)
    with h5py.File(dst, "a") as f:
        n = np.array(f["Header"].attrs["NumPart_ThisFile"])
        n[type_index] = count
        f["Header"].attrs["NumPart_ThisFile"] = n


def write_swift_cells(path, seed=5, planted=True, bounds=False):
    """A SWIFT-layout file whose particles are sorted by top-level cell (4^3
    cells of a 40-box) with SWIFT's Cells index; when `planted`, the last
    particle of cell 0 is moved to the middle of the box (beyond the drift
    SWIFT allows), so that a reader using the index cannot see it."""
    rng = np.random.default_rng(seed)
    box, cdim = 40.0, 4
    write_swift(path, n_gas=2000, n_dm=3000, n_stars=0, box=(box, box, box), seed=seed)
    width = box / cdim
    out = {}
    with h5py.File(path, "r+") as f:
        del f["Cells"]
        cells = f.create_group("Cells")
        meta = cells.create_group("Meta-data")
        meta.attrs["dimension"] = np.array([cdim] * 3, dtype=np.int32)
        meta.attrs["size"] = np.array([width] * 3)
        meta.attrs["nr_cells"] = np.array([cdim ** 3], dtype=np.int32)
        ijk = np.stack(np.meshgrid(*[np.arange(cdim)] * 3, indexing="ij"), -1).reshape(-1, 3)
        cells.create_dataset("Centres", data=(ijk + 0.5) * width)
        for t in (0, 1):
            g = f[f"PartType{t}"]
            pos = g["Coordinates"][...]
            cell = np.floor(pos / width).astype(int).clip(0, cdim - 1)
            key = (cell[:, 0] * cdim + cell[:, 1]) * cdim + cell[:, 2]
            order = np.argsort(key, kind="stable")
            for name in list(g):
                data = g[name][...][order]
                attrs = dict(g[name].attrs)
                del g[name]
                g.create_dataset(name, data=data)
                for k, v in attrs.items():
                    g[name].attrs[k] = v
            counts = np.bincount(key, minlength=cdim ** 3)
            offsets = np.cumsum(counts) - counts
            cells.create_dataset(f"Counts/PartType{t}", data=counts)
            cells.create_dataset(f"OffsetsInFile/PartType{t}", data=offsets)
            cells.create_dataset(f"Files/PartType{t}", data=np.zeros(cdim ** 3, np.int32))
            if bounds:
                data = g["Coordinates"][...]
                mn = np.array([data[o:o + n].min(0) if n else (ijk[i] + 0.5) * width
                               for i, (o, n) in enumerate(zip(offsets, counts))])
                mx = np.array([data[o:o + n].max(0) if n else (ijk[i] + 0.5) * width
                               for i, (o, n) in enumerate(zip(offsets, counts))])
                cells.create_dataset(f"MinPositions/PartType{t}", data=mn)
                cells.create_dataset(f"MaxPositions/PartType{t}", data=mx)
            if planted:
                data = g["Coordinates"][...]
                data[counts[0] - 1] = [25.5, 25.5, 25.5]
                g["Coordinates"][...] = data
            e = {k: g[k][...] for k in g}
            e["GlobalIds"] = e["ParticleIDs"].astype(np.int64)
            out[f"PartType{t}"] = e
    return out
