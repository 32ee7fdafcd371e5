"""`/favicon.ico`: the console's icon (a white ring on the brand blue), drawn once at import as a 32x32 PNG inside
an ICO container, so browsers asking for it get an icon instead of a 404 and no binary file is kept."""

from __future__ import annotations

import struct
import zlib

from django.http import HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

SIZE = 32
BRAND = (0x1D, 0x4E, 0xD8)


def _pixel(x: int, y: int) -> tuple[int, int, int, int]:
    cx = cy = (SIZE - 1) / 2
    corner = 6  # rounded corners: transparent outside a quarter circle of this radius
    dx, dy = max(corner - x, x - (SIZE - 1 - corner), 0), max(corner - y, y - (SIZE - 1 - corner), 0)
    if dx * dx + dy * dy > corner * corner:
        return (0, 0, 0, 0)
    r = ((x - cx) ** 2 + (y - cy) ** 2) ** 0.5
    return (255, 255, 255, 255) if 6.5 <= r <= 10.5 else (*BRAND, 255)


def _png() -> bytes:
    raw = b"".join(b"\x00" + b"".join(bytes(_pixel(x, y)) for x in range(SIZE)) for y in range(SIZE))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def _ico(png: bytes) -> bytes:
    directory = struct.pack("<HHH", 0, 1, 1)  # reserved, type icon, one image
    entry = struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(png), 6 + 16)
    return directory + entry + png


ICON = _ico(_png())


@require_GET
@cache_control(public=True, max_age=86400)
def favicon(request):
    return HttpResponse(ICON, content_type="image/x-icon")
