#!/usr/bin/python3
"""Generates Data/clustered.vtp, the bundled clustered particle set.

Run once with Debian's python3 and numpy (no VTK needed):
    /usr/bin/python3 Data/make_clustered.py
The output is deterministic (fixed seed) and committed, so the demo and the
tests never depend on running this script.

Content: 120,000 float32 particles in the unit box [0, 1)^3, periodic: eight
Plummer spheres of different sizes and masses (80% of the particles) on a
uniform background (20%). Point arrays: GlobalIds (int64, a permutation of
0..N-1, so that ids differ from point indices), Mass (float32; background
particles are twice as heavy) and Velocity (float32, 3 components: the
clump's bulk velocity plus an isotropic dispersion that grows with its mass
over its radius).
"""
import os
import struct
import zlib

import numpy as np

SEED = 20260  # fixed: the committed file must be reproducible
N = 120_000
BACKGROUND_FRACTION = 0.2


def plummer_radii(rng, n, a):
    """Radii of a Plummer sphere of scale radius a, truncated at 8a."""
    u = rng.uniform(0.0, 1.0, n)
    u_max = (8.0**2 / (1.0 + 8.0**2)) ** 1.5  # mass fraction within 8a
    u = u * u_max
    return a / np.sqrt(u ** (-2.0 / 3.0) - 1.0)


def make_particles(rng):
    n_background = int(N * BACKGROUND_FRACTION)
    n_clumps = N - n_background
    k = 8
    weights = rng.uniform(0.5, 2.0, k)
    counts = np.floor(weights / weights.sum() * n_clumps).astype(int)
    counts[0] += n_clumps - counts.sum()
    positions, velocities = [], []
    for count in counts:
        centre = rng.uniform(0.1, 0.9, 3)
        a = rng.uniform(0.01, 0.05)
        r = plummer_radii(rng, count, a)
        direction = rng.normal(size=(count, 3))
        direction /= np.linalg.norm(direction, axis=1)[:, None]
        positions.append(centre + r[:, None] * direction)
        sigma = 0.05 * np.sqrt(count / n_clumps / a)
        bulk = rng.normal(0.0, 0.3, 3)
        velocities.append(bulk + rng.normal(0.0, sigma, (count, 3)))
    positions.append(rng.uniform(0.0, 1.0, (n_background, 3)))
    velocities.append(rng.normal(0.0, 0.3, (n_background, 3)))
    pos = np.mod(np.concatenate(positions), 1.0)  # periodic unit box
    vel = np.concatenate(velocities)
    mass = np.concatenate(
        [np.full(n_clumps, 1.0), np.full(n_background, 2.0)]) / N
    order = rng.permutation(N)  # mix clump and background particles
    ids = rng.permutation(N).astype(np.int64)
    return (pos[order].astype(np.float32), vel[order].astype(np.float32),
            mass[order].astype(np.float32), ids)


def compressed_block(array):
    """One VTK zlib-compressed array: UInt64 header, then the data."""
    raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    packed = zlib.compress(raw, 9)
    header = struct.pack("<4Q", 1, len(raw), len(raw), len(packed))
    return header + packed


def write_vtp(path, pos, arrays):
    """Minimal VTK XML PolyData writer (points only, appended raw data)."""
    blocks, offset, xml_arrays = [], 0, []

    def add(name, array, components, vtk_type):
        nonlocal offset
        block = compressed_block(array)
        blocks.append(block)
        attrs = f'type="{vtk_type}" NumberOfComponents="{components}" format="appended" offset="{offset}"'
        offset += len(block)
        name_attr = ' Name="%s"' % name if name else ""
        return f"<DataArray {attrs}{name_attr}/>"

    points_xml = add(None, pos, 3, "Float32")
    for name, array, components, vtk_type in arrays:
        xml_arrays.append(add(name, array, components, vtk_type))
    n = len(pos)
    header = (
        '<?xml version="1.0"?>\n'
        '<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" '
        'header_type="UInt64" compressor="vtkZLibDataCompressor">\n'
        "<PolyData>\n"
        f'<Piece NumberOfPoints="{n}" NumberOfVerts="0" NumberOfLines="0" '
        'NumberOfStrips="0" NumberOfPolys="0">\n'
        '<PointData Scalars="Mass" Vectors="Velocity" GlobalIds="GlobalIds">\n'
        + "\n".join(xml_arrays) + "\n</PointData>\n"
        f"<Points>\n{points_xml}\n</Points>\n"
        "</Piece>\n</PolyData>\n"
        '<AppendedData encoding="raw">\n_'
    )
    with open(path, "wb") as f:
        f.write(header.encode())
        for block in blocks:
            f.write(block)
        f.write(b"\n</AppendedData>\n</VTKFile>\n")


def main():
    rng = np.random.default_rng(SEED)
    pos, vel, mass, ids = make_particles(rng)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clustered.vtp")
    write_vtp(out, pos, [("GlobalIds", ids, 1, "Int64"),
                         ("Mass", mass, 1, "Float32"),
                         ("Velocity", vel, 3, "Float32")])
    print(f"wrote {out}: {len(pos)} particles, {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
