"""Decode a PNG screenshot into its distinct pixel colours, with zlib only (no Pillow)."""

from __future__ import annotations

import struct
import zlib

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type → samples per pixel (8-bit depth)


def _paeth(left: int, up: int, up_left: int) -> int:
    estimate = left + up - up_left
    distances = (abs(estimate - left), abs(estimate - up), abs(estimate - up_left))
    if distances[0] <= distances[1] and distances[0] <= distances[2]:
        return left
    return up if distances[1] <= distances[2] else up_left


def distinct_colours(png: bytes) -> int:
    """How many different pixel values an 8-bit, non-interlaced PNG holds."""
    if not png.startswith(_SIGNATURE):
        raise ValueError("not a PNG")
    position = len(_SIGNATURE)
    data = bytearray()
    width = height = channels = 0
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        body = png[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace or colour_type not in _CHANNELS:
                raise ValueError("only 8-bit non-interlaced grey/RGB(A) PNGs are decoded")
            channels = _CHANNELS[colour_type]
        elif kind == b"IDAT":
            data += body
    raw = zlib.decompress(bytes(data))
    stride = width * channels
    previous = bytearray(stride)
    colours: set[bytes] = set()
    for row in range(height):
        start = row * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, up_left)) & 0xFF
        colours.update(bytes(line[i : i + channels]) for i in range(0, stride, channels))
        previous = line
    return len(colours)
