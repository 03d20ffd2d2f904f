#!/usr/bin/python3
"""Converts an X window dump (xwd -root, 24/32-bit TrueColor ZPixmap) to PNG,
optionally cropped and downscaled by an integer factor. Debian's python3 +
numpy only (no ImageMagick).
Usage: xwd2png.py IN.xwd OUT.png [--crop X Y W H] [--shrink N]
"""
import argparse
import struct
import zlib

import numpy as np


def read_xwd(path):
    data = open(path, "rb").read()
    fields = struct.unpack(">25I", data[:100])
    header_size, version, fmt, depth, width, height = fields[:6]
    byte_order, bits_per_pixel, bytes_per_line = fields[7], fields[11], fields[12]
    red_mask, green_mask, blue_mask = fields[14:17]
    ncolors = fields[19]
    if version != 7 or fmt != 2 or bits_per_pixel not in (24, 32):
        raise SystemExit(f"unsupported xwd: version {version}, format {fmt}, {bits_per_pixel} bpp")
    offset = header_size + 12 * ncolors
    nbytes = bits_per_pixel // 8
    raw = np.frombuffer(data, dtype=np.uint8, count=height * bytes_per_line, offset=offset)
    b = raw.reshape(height, bytes_per_line)[:, :width * nbytes].reshape(height, width, nbytes)
    b = b.astype(np.uint32)
    if byte_order != 0:  # MSB first
        b = b[:, :, ::-1]
    px = sum(b[:, :, i] << (8 * i) for i in range(nbytes))

    def channel(mask):
        shift = (mask & -mask).bit_length() - 1
        return ((px & mask) >> shift).astype(np.uint8)

    return np.dstack([channel(red_mask), channel(green_mask), channel(blue_mask)])


def write_png(path, rgb):
    h, w, _ = rgb.shape
    rows = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(tag, payload):
        return (struct.pack(">I", len(payload)) + tag + payload
                + struct.pack(">I", zlib.crc32(tag + payload) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows, 9)))
        f.write(chunk(b"IEND", b""))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("xwd")
    p.add_argument("png")
    p.add_argument("--crop", type=int, nargs=4)
    p.add_argument("--shrink", type=int, default=1)
    a = p.parse_args()
    img = read_xwd(a.xwd)
    if a.crop:
        x, y, w, h = a.crop
        img = img[y:y + h, x:x + w]
    if a.shrink > 1:
        s = a.shrink
        h, w = img.shape[0] // s * s, img.shape[1] // s * s
        img = img[:h, :w].reshape(h // s, s, w // s, s, 3).mean(axis=(1, 3)).astype(np.uint8)
    write_png(a.png, img)
