"""The bundled encodings: names -> `.atok` files shipped in the wheel, loaded on first use."""

from __future__ import annotations

import functools
import os
import threading
import zlib

from . import format as vocab_format
from ._gc import gc_paused
from .core import Encoding

_lock = threading.RLock()
ENCODINGS: dict[str, Encoding] = {}

# Where the converted vocabularies live: inside the installed package, or in the source
# tree's top-level vocab_binaries/ when running from a checkout.
# (os.path rather than pathlib, whose import costs ~7 ms of the load time.)
_HERE = os.path.dirname(os.path.abspath(__file__))
_VOCAB_DIRS = (os.path.join(_HERE, "vocab_binaries"), os.path.join(os.path.dirname(os.path.dirname(_HERE)), "vocab_binaries"))

SUFFIX = ".atok"
# Shipped next to a vocab file: the character pairs its segmenter starts from (segment.py).
PAIRS_SUFFIX = ".pairs"


def vocab_dir() -> str:
    """The folder of the bundled `.atok` files."""
    for d in _VOCAB_DIRS:
        if os.path.isdir(d) and any(f.endswith(SUFFIX) for f in os.listdir(d)):
            return d
    raise FileNotFoundError(f"no anytok vocab files found in {[str(d) for d in _VOCAB_DIRS]}")


def list_encoding_names() -> list[str]:
    """Names of the bundled encodings."""
    try:
        return sorted(f[: -len(SUFFIX)] for f in os.listdir(vocab_dir()) if f.endswith(SUFFIX))
    except FileNotFoundError:
        return []


def encoding_from_bytes(data: bytes, what: str = "vocab file") -> Encoding:
    """An `Encoding` from the bytes of an anytok vocab file."""
    with gc_paused():
        vocab = vocab_format.loads(data, what, check_duplicates=False)
        return Encoding._from_vocab(vocab, what)


def get_encoding(encoding_name: str) -> Encoding:
    """The bundled encoding of that name (loaded once, then shared).

    ```
    >>> enc = anytok.get_encoding("cl100k_base")
    ```
    Raises `ValueError` for an unknown name.
    """
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    enc = ENCODINGS.get(encoding_name)
    if enc is not None:
        return enc
    with _lock:
        enc = ENCODINGS.get(encoding_name)
        if enc is not None:
            return enc
        names = list_encoding_names()
        if encoding_name not in names:
            raise ValueError(f"Unknown encoding {encoding_name!r}. Bundled encodings: {', '.join(names)}")
        path = os.path.join(vocab_dir(), encoding_name + SUFFIX)
        with open(path, "rb") as f:
            enc = encoding_from_bytes(f.read(), path)
        if enc.name != encoding_name:
            raise vocab_format.VocabFormatError(f"{path}: holds encoding {enc.name!r}, not {encoding_name!r}")
        enc._segment_pairs = functools.partial(bundled_segment_pairs, path)
        enc._by_name = get_encoding  # pickled by name (Encoding.__reduce_ex__)
        ENCODINGS[encoding_name] = enc
        return enc


def bundled_segment_pairs(path: str):
    """The segment pairs shipped for the vocab file at `path` (segment.token_pairs of its
    tokens), or None when there is no such file or it was made from another vocab file.
    Read when the segmenter is first needed: ~50 ms less than computing them."""
    from .segment import pairs_from_bytes

    try:
        with open(path[: -len(SUFFIX)] + PAIRS_SUFFIX, "rb") as f:
            data = f.read()
        with open(path, "rb") as f:
            fingerprint = zlib.crc32(f.read())
    except OSError:
        return None
    return pairs_from_bytes(data, fingerprint)

