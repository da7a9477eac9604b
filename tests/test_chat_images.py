"""anytok.chat.images: OpenAI's image-token rules and the image-size header reader.

The rules are checked on every worked example of OpenAI's "Images and vision" guide, section
"Calculating costs" (https://platform.openai.com/docs/guides/images-vision#calculating-costs,
quoted in docs/chat.md), and the patch rule also against the guide's own formulas, written
here as the guide states them (floating point), on seeded random sizes.  The header reader is
checked against Pillow 13.0.0, which writes and reads the images (PNG, JPEG baseline /
progressive / with EXIF and ICC segments, WebP lossy / lossless / extended, GIF).
"""

from __future__ import annotations

import io
import math
import os
import random

import pytest

from anytok import chat
from anytok.chat.images import data_url_bytes, image_cost, image_rule, image_size

FULL = os.environ.get("ANYTOK_FULL") == "1"


# ---- the guide's worked examples ---------------------------------------------------------------

def test_tiles_worked_examples_gpt_4o():
    # "A 1024 x 1024 square image in "detail": "high" mode costs 765 tokens ... we scale the image
    # down to 768 x 768. 4 512px square tiles are needed ... 170 * 4 + 85 = 765."
    c = image_cost(1024, 1024, "gpt-4o", "high")
    assert (c["tokens"], c["size"], c["tiles"]) == (765, [768, 768], [2, 2])
    # "A 2048 x 4096 image in "detail": "high" mode costs 1105 tokens ... scale down the image to
    # 1024 x 2048 ... further scale down to 768 x 1536. 6 512px tiles ... 170 * 6 + 85 = 1105."
    c = image_cost(2048, 4096, "gpt-4o", "high")
    assert (c["tokens"], c["size"], c["tiles"]) == (1105, [768, 1536], [2, 3])
    # "A 4096 x 8192 image in "detail": "low" most costs 85 tokens"
    assert image_cost(4096, 8192, "gpt-4o", "low")["tokens"] == 85


def test_patches_worked_examples():
    # "A 1024 x 1024 image is 1024 tokens ... 32 * 32 = 1024, below the cap of 1536"
    c = image_cost(1024, 1024, "gpt-4.1-mini")
    assert (c["patches"], c["size"]) == ([32, 32], [1024, 1024])
    # "A 1800 x 2400 image is 1452 tokens ... The final width is then ... 1056 and the final
    # height is ... 1408 ... 33 patches to cover the width and ... 44 ... 33 * 44 = 1452"
    c = image_cost(1800, 2400, "gpt-4.1-mini")
    assert (c["patches"], c["size"]) == ([33, 44], [1056, 1408])
    # "D. Apply a multiplier based on the model": gpt-4.1-mini 1.62, gpt-4.1-nano 2.46, o4-mini 1.72
    for model, mult in [("gpt-4.1-mini", "1.62"), ("gpt-4.1-nano", "2.46"), ("o4-mini", "1.72")]:
        from fractions import Fraction

        for size, patches in [((1024, 1024), 1024), ((1800, 2400), 1452)]:
            assert image_cost(*size, model)["tokens"] == math.ceil(patches * Fraction(mult))
        # the patch rule has no detail: low and high cost the same
        assert image_cost(640, 480, model, "low") == {**image_cost(640, 480, model, "high"), "detail": "low"}


def test_tile_table_and_snapshots():
    # the guide's table of base / tile tokens, through dated snapshots too
    for model, base, tile in [("gpt-4o-2024-08-06", 85, 170), ("gpt-4.1", 85, 170),
                              ("gpt-4.5-preview", 85, 170), ("gpt-4o-mini", 2833, 5667),
                              ("gpt-4o-mini-2024-07-18", 2833, 5667), ("o1", 75, 150),
                              ("o1-pro", 75, 150), ("o3-2025-04-16", 75, 150),
                              ("computer-use-preview", 65, 129)]:
        assert image_cost(4096, 8192, model, "low")["tokens"] == base
        assert image_cost(1024, 1024, model, "high")["tokens"] == base + 4 * tile
        assert image_cost(100, 100, model, "high")["tokens"] == base + tile  # never scaled up
    assert image_rule("gpt-4.1-nano-2025-04-14") == image_rule("gpt-4.1-nano")
    for model in ("gpt-3.5-turbo", "gpt-4", "o1-mini", "o3-mini", "gpt-oss-120b", "gpt-4o-audio-preview"):
        with pytest.raises(ValueError, match="no published image-token rule"):
            image_cost(10, 10, model)
    # detail auto: priced as high unless told
    assert image_cost(1024, 1024, "gpt-4o")["tokens"] == 765
    assert image_cost(1024, 1024, "gpt-4o", auto_detail="low")["tokens"] == 85
    for bad in [(0, 10, "gpt-4o", "high"), (10, 10, "gpt-4o", "medium"), (1.5, 10, "gpt-4o", "high")]:
        with pytest.raises(ValueError):
            image_cost(*bad)


def _guide_patches(width: int, height: int) -> int:
    """Steps A-C of the guide, as it writes them (floating point)."""
    raw = math.ceil(width / 32) * math.ceil(height / 32)
    if raw <= 1536:
        return raw
    r = math.sqrt(32 ** 2 * 1536 / (width * height))
    r = r * min(math.floor(width * r / 32) / (width * r / 32), math.floor(height * r / 32) / (height * r / 32))
    # the guide's resized sides are whole patches on the side that binds; float error is
    # rounded off before covering the image with patches
    return min(1536, math.ceil(round(width * r / 32, 9)) * math.ceil(round(height * r / 32, 9)))


def test_patches_like_the_guides_formula():
    rng = random.Random(45)
    sizes = [(rng.randrange(1, 6000), rng.randrange(1, 6000)) for _ in range(20000 if FULL else 2000)]
    sizes += [(2048, 768), (1536 * 32, 32), (4000, 1474), (33, 1537 * 32)]
    for w, h in sizes:
        c = image_cost(w, h, "o4-mini")
        assert min(1536, c["patches"][0] * c["patches"][1]) == _guide_patches(w, h), (w, h, c)


# ---- sizes from headers, against Pillow ------------------------------------------------------

def _saved(img, fmt: str, **kw) -> bytes:
    out = io.BytesIO()
    img.save(out, fmt, **kw)
    return out.getvalue()


def _pillow_cases():
    from PIL import Image

    rng = random.Random(7)
    sizes = [(1, 1), (3000, 2), (2, 3000), (16383, 1), (rng.randrange(1, 700), rng.randrange(1, 700))]
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotated, which the size as stored does not show
    exif[0x010F] = "anytok test camera"
    for w, h in sizes:
        rgb = Image.new("RGB", (w, h), (rng.randrange(256), 90, 200))
        yield "png", _saved(rgb, "PNG")
        yield "png", _saved(Image.new("I;16", (w, h)), "PNG")
        yield "png", _saved(rgb.convert("P"), "PNG", optimize=True)
        yield "gif", _saved(rgb, "GIF")
        if max(w, h) <= 16383:
            yield "webp", _saved(rgb, "WEBP", quality=50)  # VP8
            yield "webp", _saved(rgb, "WEBP", lossless=True)  # VP8L
            yield "webp", _saved(Image.new("RGBA", (w, h), (1, 2, 3, 4)), "WEBP", exif=exif.tobytes())  # VP8X
        if max(w, h) <= 65500:
            yield "jpeg", _saved(rgb, "JPEG")
            yield "jpeg", _saved(rgb, "JPEG", progressive=True, quality=80)
            yield "jpeg", _saved(rgb, "JPEG", exif=exif.tobytes(), icc_profile=b"\0" * 70000,
                                 progressive=True)
            yield "jpeg", _saved(rgb.convert("L"), "JPEG", subsampling=0)
            yield "jpeg", _saved(rgb.convert("CMYK"), "JPEG")


def test_image_size_like_pillow():
    from PIL import Image

    seen = set()
    for fmt, data in _pillow_cases():
        with Image.open(io.BytesIO(data)) as ref:
            assert image_size(data) == (fmt, *ref.size), (fmt, ref.size, data[:40])
        seen.add(fmt)
    assert seen == {"png", "gif", "webp", "jpeg"}


def test_image_size_bad_input():
    from PIL import Image

    png = _saved(Image.new("RGB", (5, 7)), "PNG")
    jpeg = _saved(Image.new("RGB", (5, 7)), "JPEG", exif=b"Exif\0\0" + b"\0" * 100)
    for cut in (png[:20], jpeg[:30], b"GIF89a\x01", b"RIFF\0\0\0\0WEBPVP8 "):
        with pytest.raises(ValueError, match="cut short|start code|no frame"):
            image_size(cut)
    with pytest.raises(ValueError, match="not a PNG, JPEG, WebP or GIF"):
        image_size(b"BM" + b"\0" * 40)
    with pytest.raises(TypeError):
        image_size("not bytes")
    assert data_url_bytes("data:image/png;base64,aGk=") == b"hi"
    assert data_url_bytes("data:,a%20b") == b"a b"
    with pytest.raises(ValueError, match="bad base64"):
        data_url_bytes("data:image/png;base64,@@@")
    with pytest.raises(ValueError, match="not a data URL"):
        data_url_bytes("https://example.com/x.png")


def test_chat_reexports():
    assert chat.image_tokens(1024, 1024, "gpt-4o", "high") == 765
    assert chat.image_size(_saved(__import__("PIL.Image").Image.new("RGB", (9, 4)), "GIF")) == ("gif", 9, 4)
