"""Image tokens of OpenAI models, by OpenAI's published rules; image sizes from file headers.

Data flows: an image in a request (a data URL, or a size given for its URL / file id) ->
`image_size` reads its width and height from the PNG / JPEG / WebP / GIF header (pure Python,
no decoding of pixels) -> `image_cost(width, height, model, detail)` applies the rule of the
model's family -> tokens, with the resized size and the tiles or patches that made them.

The rules are those of OpenAI's "Images and vision" guide, section "Calculating costs"
(https://platform.openai.com/docs/guides/images-vision#calculating-costs); docs/chat.md quotes
its worked examples, which tests/test_chat_images.py checks:

* tiles (gpt-4o, gpt-4.1, gpt-4.5, gpt-4-turbo, o1, o3, gpt-4o-mini, computer-use-preview):
  "detail": "low" costs the base tokens; "high" scales the image to fit 2048 x 2048, then (when
  larger) so that its shortest side is 768, and costs the base plus a tile price per 512 px tile.
* patches (gpt-4.1-mini, gpt-4.1-nano, o4-mini): 32 px patches cover the image; above 1536 the
  image is scaled down to fit 1536 patches (a whole number of patches along one side); the patch
  count times the model's multiplier is the cost, whatever the detail.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from fractions import Fraction
from typing import Any

# ---- the rules ------------------------------------------------------------------------------

# (model, kind, parameters): tiles -> (base tokens, tokens per 512 px tile); patches -> multiplier.
# A model matches its own name and its dated snapshots ("gpt-4o-2024-08-06"); the first match
# wins, so minis come before their family.
_RULES: list[tuple[str, str, Any]] = [
    ("gpt-4.1-mini", "patches", Fraction("1.62")),
    ("gpt-4.1-nano", "patches", Fraction("2.46")),
    ("o4-mini", "patches", Fraction("1.72")),
    ("gpt-4o-mini", "tiles", (2833, 5667)),
    ("gpt-4o", "tiles", (85, 170)),
    ("chatgpt-4o-latest", "tiles", (85, 170)),
    ("gpt-4.1", "tiles", (85, 170)),
    ("gpt-4.5-preview", "tiles", (85, 170)),
    # gpt-4-turbo took images before the guide's current table; its earlier version gave it the
    # gpt-4o rule (85 + 170 a tile), which measurements still show.
    ("gpt-4-turbo", "tiles", (85, 170)),
    ("gpt-4-vision-preview", "tiles", (85, 170)),
    ("gpt-4-1106-vision-preview", "tiles", (85, 170)),
    ("o1-pro", "tiles", (75, 150)),
    ("o1", "tiles", (75, 150)),
    ("o3", "tiles", (75, 150)),
    ("computer-use-preview", "tiles", (65, 129)),
]
# Models of those families that take no images (the prefix rule would otherwise match them).
_NO_IMAGES = ("o1-mini", "o1-preview", "o3-mini")
_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")

TILE_FIT, TILE_SHORT, TILE = 2048, 768, 512
PATCH, PATCH_CAP = 32, 1536
DETAILS = ("low", "high", "auto")


def image_rule(model: str) -> tuple[str, Any]:
    """(kind, parameters) of `model`'s image rule: ("tiles", (base, per_tile)) or
    ("patches", multiplier).  Raises `ValueError` for a model without a published rule."""
    if not isinstance(model, str):
        raise TypeError(f"model must be a string, got {type(model).__name__}")
    name = model[3:].split(":")[0] if model.startswith("ft:") else model
    base = _SNAPSHOT.sub("", name)
    if base not in _NO_IMAGES:
        for prefix, kind, params in _RULES:
            if base == prefix:
                return kind, params
    known = ", ".join(p for p, _, _ in _RULES)
    raise ValueError(f"no published image-token rule for model {model!r} (OpenAI's guide gives "
                     f"them for {known}, and their dated snapshots)")


def image_cost(width: int, height: int, model: str = "gpt-4o", detail: str = "auto", *,
               auto_detail: str = "high") -> dict:
    """The tokens of a `width` x `height` image for `model`, with how they come:
    {"tokens", "kind": "tiles" | "patches", "detail", "size": [w, h] the image is priced at,
    "tiles" or "patches": [across, down]}.

    `detail` "auto" (the API's default) is priced as `auto_detail` ("high" unless told): OpenAI
    does not publish how auto chooses.  Patch models ignore the detail, as their rule does."""
    if not (isinstance(width, int) and isinstance(height, int)) or isinstance(width, bool) \
            or isinstance(height, bool) or width < 1 or height < 1:
        raise ValueError(f"an image's width and height must be positive integers, got "
                         f"{width!r} x {height!r}")
    if detail not in DETAILS:
        raise ValueError(f"detail must be one of {', '.join(DETAILS)}, got {detail!r}")
    if auto_detail not in ("low", "high"):
        raise ValueError(f"auto_detail must be 'low' or 'high', got {auto_detail!r}")
    kind, params = image_rule(model)
    if kind == "patches":
        across, down, size = _patches(width, height)
        n = min(across * down, PATCH_CAP)
        # The guide multiplies without saying how it rounds; measured usage (gpt-5-mini: 256 patches
        # billed 308 at 1.2 a patch, 1536 billed 1844) rounds up.
        return {"tokens": math.ceil(n * params), "kind": kind, "detail": detail, "size": size,
                "patches": [across, down], "multiplier": float(params)}
    base, per_tile = params
    used = auto_detail if detail == "auto" else detail
    if used == "low":
        return {"tokens": base, "kind": kind, "detail": "low", "size": [512, 512], "tiles": [0, 0]}
    w, h = Fraction(width), Fraction(height)
    if max(w, h) > TILE_FIT:
        s = Fraction(TILE_FIT) / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > TILE_SHORT:  # only ever scaled down: a small image keeps its size
        s = Fraction(TILE_SHORT) / min(w, h)
        w, h = w * s, h * s
    # Scaled sides are rounded to whole pixels, half to even: OpenAI's forum measured gpt-4.1
    # billing 2049x513 (side 512.75) with two rows of tiles and 2050x513 (512.5) with one.
    w, h = round(w), round(h)
    across, down = -(-w // TILE), -(-h // TILE)
    return {"tokens": base + per_tile * across * down, "kind": kind, "detail": "high",
            "size": [w, h], "tiles": [across, down]}


def _patches(width: int, height: int) -> tuple[int, int, list[int]]:
    """32 px patches across and down after the guide's scaling to at most 1536 patches, and the
    size they cover.  Exact: with r = sqrt(32^2 * 1536 / (w * h)), w * r / 32 is
    sqrt(1536 * w / h), whose floor is isqrt(1536 * w // h); the side with the smaller
    floor(...) / (... ) ratio gets that whole number of patches, and the other side its own
    length times the same factor, rounded up to patches (r cancels)."""
    across, down = -(-width // PATCH), -(-height // PATCH)
    if across * down <= PATCH_CAP:
        return across, down, [width, height]
    fw = max(1, math.isqrt(PATCH_CAP * width // height))
    fh = max(1, math.isqrt(PATCH_CAP * height // width))
    if fw * height <= fh * width:  # the width's ratio fw / (w r / 32) is the smaller: it binds
        exact = Fraction(height * fw, width)
        return fw, math.ceil(exact), [fw * PATCH, round(exact * PATCH)]
    exact = Fraction(width * fh, height)
    return math.ceil(exact), fh, [round(exact * PATCH), fh * PATCH]


def image_tokens(width: int, height: int, model: str = "gpt-4o", detail: str = "auto", *,
                 auto_detail: str = "high") -> int:
    """The tokens OpenAI bills `model` for a `width` x `height` image (see `image_cost`)."""
    return image_cost(width, height, model, detail, auto_detail=auto_detail)["tokens"]


# ---- image sizes from headers ---------------------------------------------------------------

_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def image_size(data: bytes) -> tuple[str, int, int]:
    """(format, width, height) of a PNG, JPEG, WebP or GIF file's bytes, read from its header.

    JPEG's size is its frame header's (as stored: an EXIF orientation is not applied).  Raises
    `ValueError` for another format or a header cut short."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"image data must be bytes, got {type(data).__name__}")
    data = bytes(data)
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            if data[12:16] != b"IHDR":
                raise ValueError("PNG without IHDR first")
            w, h = struct.unpack(">II", data[16:24])
            return "png", w, h
        if data[:6] in (b"GIF87a", b"GIF89a"):
            w, h = struct.unpack("<HH", data[6:10])
            return "gif", w, h
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return ("webp", *_webp_size(data))
        if data[:2] == b"\xff\xd8":
            return ("jpeg", *_jpeg_size(data))
    except struct.error:
        raise ValueError("image header cut short") from None
    raise ValueError(f"not a PNG, JPEG, WebP or GIF image (starts with {data[:12]!r})")


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 ":  # lossy: the key frame's start code, then 14-bit sizes
        if data[23:26] != b"\x9d\x01\x2a":
            raise ValueError("WebP VP8 frame without its start code")
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L":  # lossless: signature 0x2f, then 14 bits width-1, 14 bits height-1
        if data[20:21] != b"\x2f":
            raise ValueError("WebP VP8L without its signature")
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: the canvas size, 24 bits each, minus one
        if len(data) < 30:
            raise ValueError("image header cut short")
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    raise ValueError(f"WebP with an unknown first chunk {chunk!r}")


def _jpeg_size(data: bytes) -> tuple[int, int]:
    i, n = 2, len(data)
    while i < n:
        if data[i] != 0xFF:
            raise ValueError(f"JPEG: no marker at byte {i}")
        while i < n and data[i] == 0xFF:  # fill bytes
            i += 1
        if i >= n:
            break
        marker = data[i]
        i += 1
        if marker == 0xD8 or marker == 0x01 or 0xD0 <= marker <= 0xD7:
            continue  # no length
        if marker in (0xD9, 0xDA):
            raise ValueError("JPEG: no frame header before the image data")
        (length,) = struct.unpack(">H", data[i:i + 2])
        if marker in _JPEG_SOF:
            h, w = struct.unpack(">HH", data[i + 3:i + 7])
            if w == 0 or h == 0:
                raise ValueError("JPEG with its height given later (DNL) is not supported")
            return w, h
        i += length
    raise ValueError("image header cut short")


_DATA_URL = re.compile(r"data:([^;,]*)((?:;[^;,]*)*),(.*)", re.S)


def data_url_bytes(url: str) -> bytes:
    """The bytes of a `data:` URL (base64 or percent-encoded).  Raises `ValueError` if bad."""
    m = _DATA_URL.fullmatch(url)
    if not m:
        raise ValueError(f"not a data URL: {url[:40]!r}")
    payload = m.group(3)
    if ";base64" in m.group(2).lower():
        try:
            return base64.b64decode("".join(payload.split()), validate=True)
        except (binascii.Error, ValueError) as e:
            raise ValueError(f"data URL with bad base64 ({e})") from None
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(payload)
