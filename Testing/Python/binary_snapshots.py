"""Gadget-1/2 binary and TIPSY snapshot files for the reader's tests and
benchmark, written with numpy from the formats' documented layouts, and the
arrays they hold (the tests' references).

- write_gadget_binary(): Fortran records framed by their length; SnapFormat 1
  (blocks in Gadget-2's order POS, VEL, ID, MASS for the types without a
  MassTable entry, then the gas blocks U, RHO, HSML) or SnapFormat 2 (each
  block after an 8-byte label record), either byte order, float or double,
  32- or 64-bit ids, and multi-file sets name.0, name.1, ...
- read_gadget_binary(): an independent numpy reader of SnapFormat 1 (for the
  real example files).
- write_tipsy(): header (time, nbodies, ndim, nsph, ndark, nstar, pad) and
  float records gas / dark / star, XDR (big-endian) or native, with an
  optional binary .iord beside it.

Runs under Debian's python3 and under pvpython.
"""
import numpy as np

GAS_BLOCKS = (("U", "InternalEnergy"), ("RHO", "Density"), ("HSML", "SmoothingLength"))


def _record(f, payload, endian):
    marker = np.array([len(payload)], dtype=endian + "u4").tobytes()
    f.write(marker + payload + marker)


def gadget_header(npart, mass, time, redshift, npart_total, num_files, box, endian):
    h = bytearray(256)
    def put(offset, values, dtype):
        b = np.asarray(values, dtype=endian + dtype).tobytes()
        h[offset:offset + len(b)] = b
    put(0, npart, "i4")
    put(24, mass, "f8")
    put(72, [time, redshift], "f8")
    put(96, [n % 2**32 for n in npart_total], "u4")
    put(124, [num_files], "i4")
    put(128, [box, 0.3, 0.7, 0.7], "f8")  # BoxSize, Omega0, OmegaLambda, HubbleParam
    put(168, [n >> 32 for n in npart_total], "u4")
    return bytes(h)


def make_gadget_particles(counts, mass_table, seed=1, box=100.0, double=False, id64=False,
                          gas_blocks=3):
    """The arrays of a snapshot, by type: {t: {array name: values}}."""
    rng = np.random.default_rng(seed)
    ft = np.float64 if double else np.float32
    data, first = {}, 1
    for t, n in enumerate(counts):
        if n == 0:
            continue
        d = {"Coordinates": (rng.random((n, 3)) * box).astype(ft),
             "Velocities": rng.normal(0, 100, (n, 3)).astype(ft),
             "ParticleIDs": (np.arange(first, first + n, dtype=np.uint64) * 7 +
                             (2**40 if id64 else 0)).astype(np.uint64 if id64 else np.uint32)}
        first += n
        if mass_table[t] == 0:
            d["Masses"] = (rng.random(n) + 0.5).astype(ft)
        if t == 0:
            for _, name in GAS_BLOCKS[:gas_blocks]:
                d[name] = rng.random(n).astype(ft)
        data[t] = d
    return data


def write_gadget_binary(base, counts, *, fmt=1, endian="<", numfiles=1, double=False, id64=False,
                        mass_table=None, gas_blocks=3, box=100.0, time=0.5, redshift=1.0, seed=1,
                        splits=None):
    """Writes a snapshot (base itself, or base.0 ... base.<numfiles-1>) and
    returns (files, data) with data as make_gadget_particles gives it.
    `splits[t]` optionally gives the rows of type t in each part."""
    counts = list(counts) + [0] * (6 - len(counts))
    mass_table = list(mass_table or [0.0] * 6) + [0.0] * (6 - len(mass_table or []))
    data = make_gadget_particles(counts, mass_table, seed, box, double, id64, gas_blocks)
    files = [base] if numfiles == 1 else [f"{base}.{i}" for i in range(numfiles)]
    cuts = {}
    for t, n in enumerate(counts):
        if splits and t in splits:
            cuts[t] = np.cumsum([0] + list(splits[t]))
        else:
            cuts[t] = np.array([n * i // numfiles for i in range(numfiles + 1)])
    for i, path in enumerate(files):
        npart = [int(cuts[t][i + 1] - cuts[t][i]) for t in range(6)]
        part = {t: {k: v[cuts[t][i]:cuts[t][i + 1]] for k, v in data[t].items()} for t in data}
        def block(name):
            chunks = [part[t][name] for t in sorted(part) if name in part[t]]
            if not chunks:
                return b""
            a = np.concatenate(chunks)
            return a.astype(a.dtype.newbyteorder(endian)).tobytes()
        with open(path, "wb") as f:
            def write(label, payload):
                if fmt == 2:
                    _record(f, label.ljust(4).encode() +
                            np.array([len(payload) + 8], dtype=endian + "i4").tobytes(), endian)
                _record(f, payload, endian)
            write("HEAD", gadget_header(npart, mass_table, time, redshift, counts, numfiles, box,
                                        endian))
            write("POS", block("Coordinates"))
            write("VEL", block("Velocities"))
            write("ID", block("ParticleIDs"))
            if any(mass_table[t] == 0 and counts[t] > 0 for t in range(6)):
                write("MASS", block("Masses"))
            if counts[0] > 0:
                for label, name in GAS_BLOCKS[:gas_blocks]:
                    write(label, block(name))
    return files, data


def read_gadget_binary(path):
    """SnapFormat 1 as its documentation describes it (POS, VEL, ID, MASS, U):
    (header dict, {t: {array: values}})."""
    raw = open(path, "rb").read()
    endian = "<" if np.frombuffer(raw[:4], "<u4")[0] == 256 else ">"
    records, pos = [], 0
    while pos < len(raw):
        n = int(np.frombuffer(raw[pos:pos + 4], endian + "u4")[0])
        records.append(raw[pos + 4:pos + 4 + n])
        pos += n + 8
    h = records[0]
    npart = np.frombuffer(h[0:24], endian + "i4")
    mass = np.frombuffer(h[24:72], endian + "f8")
    header = {"npart": npart, "mass": mass, "time": np.frombuffer(h[72:80], endian + "f8")[0],
              "box": np.frombuffer(h[128:136], endian + "f8")[0]}
    ntot = int(npart.sum())
    arrays = {"Coordinates": np.frombuffer(records[1], endian + "f4").reshape(ntot, 3),
              "Velocities": np.frombuffer(records[2], endian + "f4").reshape(ntot, 3),
              "ParticleIDs": np.frombuffer(records[3], endian + "u4")}
    rest = records[4:]
    nvar = int(sum(npart[t] for t in range(6) if mass[t] == 0))
    masses = np.frombuffer(rest.pop(0), endian + "f4") if nvar else None
    u = np.frombuffer(rest.pop(0), endian + "f4") if npart[0] and rest else None
    data, first, mfirst = {}, 0, 0
    for t in range(6):
        n = int(npart[t])
        if n == 0:
            continue
        d = {k: v[first:first + n] for k, v in arrays.items()}
        if mass[t] == 0:
            d["Masses"] = masses[mfirst:mfirst + n]
            mfirst += n
        else:
            d["Masses"] = np.full(n, mass[t])
        if t == 0 and u is not None:
            d["InternalEnergy"] = u
        first += n
        data[t] = d
    return header, data


TIPSY_FAMILIES = (
    ("gas", ("Masses", "Coordinates", "Velocities", "Density", "Temperature", "SmoothingLength",
             "Metals", "Potential")),
    ("dark", ("Masses", "Coordinates", "Velocities", "Softening", "Potential")),
    ("star", ("Masses", "Coordinates", "Velocities", "Metals", "FormationTime", "Softening",
              "Potential")),
)


def tipsy_dtype(family, endian):
    fields = dict(TIPSY_FAMILIES)[family]
    return np.dtype([(n, endian + "f4", 3) if n in ("Coordinates", "Velocities")
                     else (n, endian + "f4") for n in fields])


def read_tipsy(path):
    """(time, {family: structured array}, endian) of a TIPSY file."""
    raw = open(path, "rb").read()
    for endian in (">", "<"):
        h = np.frombuffer(raw[:32], np.dtype([("time", endian + "f8")] +
                                              [(k, endian + "i4") for k in
                                               ("n", "ndim", "nsph", "ndark", "nstar", "pad")]))[0]
        if h["ndim"] == 3:
            break
    out, pos = {}, 32
    for (family, _), n in zip(TIPSY_FAMILIES, (h["nsph"], h["ndark"], h["nstar"])):
        dt = tipsy_dtype(family, endian)
        out[family] = np.frombuffer(raw[pos:pos + n * dt.itemsize], dt)
        pos += n * dt.itemsize
    return float(h["time"]), out, endian


def write_tipsy(path, counts, *, endian=">", time=0.25, seed=3, iord=None, box=1.0):
    """counts = (nsph, ndark, nstar); iord: None, or the numpy dtype of a
    binary .iord beside the file (ids = 1000 + 3 * index). Returns
    {family: {array: values}} with GlobalIds."""
    rng = np.random.default_rng(seed)
    data, index = {}, 0
    with open(path, "wb") as f:
        f.write(np.array([time], endian + "f8").tobytes())
        f.write(np.array([sum(counts), 3, *counts, 0], endian + "i4").tobytes())
        for (family, fields), n in zip(TIPSY_FAMILIES, counts):
            rec = np.zeros(n, tipsy_dtype(family, endian))
            for name in fields:
                shape = (n, 3) if name in ("Coordinates", "Velocities") else (n,)
                values = rng.random(shape) * (box if name == "Coordinates" else 1.0) - \
                    (box / 2 if name == "Coordinates" else 0)
                rec[name] = values.astype(np.float32)
            f.write(rec.tobytes())
            if n:
                d = {name: rec[name].astype(np.float32) for name in fields}
                d["GlobalIds"] = (np.arange(index, index + n) * (3 if iord else 1) +
                                  (1000 if iord else 0)).astype(np.int64)
                data[family] = d
            index += n
    if iord is not None:
        n = sum(counts)
        ids = (1000 + 3 * np.arange(n)).astype(np.dtype(iord))
        with open(path + ".iord", "wb") as f:
            f.write(np.array([n], ids.dtype.byteorder.replace("=", "<").replace("|", "<") +
                             "i4").tobytes())
            f.write(ids.tobytes())
    return data


def gadget_expected(data, mass_table):
    out = {}
    for t, d in data.items():
        e = dict(d)
        e["GlobalIds"] = d["ParticleIDs"]
        if "Masses" not in e:
            e["Masses"] = np.full(len(d["ParticleIDs"]), mass_table[t])
        out[f"PartType{t}"] = e
    return out


def region_mask(expected, region):
    lo, hi = np.array(region[0::2]), np.array(region[1::2])
    return {b: np.all((a["Coordinates"] >= lo) & (a["Coordinates"] < hi), axis=1)
            for b, a in expected.items()}


def stride_in_region(expected, region, stride):
    """The rows a Region with Stride keeps: every stride-th inside, in file order."""
    masks = region_mask(expected, region)
    out = {}
    for b, m in masks.items():
        idx = np.flatnonzero(m)[::stride]
        keep = np.zeros(len(m), bool)
        keep[idx] = True
        out[b] = keep
    return out
