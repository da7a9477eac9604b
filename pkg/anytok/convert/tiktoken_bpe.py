"""tiktoken's `.tiktoken` files: lines of `base64(token) rank`.

Only local files or bytes: anytok never downloads anything.
"""

from __future__ import annotations

import base64
import binascii
import os
from typing import Union

from ..errors import VocabSourceError

PathOrBytes = Union[str, "os.PathLike[str]", bytes]


def read_source(source: PathOrBytes) -> bytes:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    with open(source, "rb") as f:
        return f.read()


def check_hash(data: bytes, expected_hash: str | None, what: str) -> None:
    if expected_hash is None:
        return
    import hashlib  # imported when used: loading bundled vocabularies never needs it

    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_hash.lower():
        raise VocabSourceError(f"{what}: sha256 is {actual}, expected {expected_hash}")


def load_tiktoken_bpe(source: PathOrBytes, expected_hash: str | None = None) -> dict[bytes, int]:
    """Parse a `.tiktoken` file (lines of `base64(token) rank`) into mergeable ranks.

    `source` is a path or the file's bytes.  With `expected_hash`, the sha256 of the contents
    must match it.
    """
    data = read_source(source)
    what = source if isinstance(source, (str, os.PathLike)) else "tiktoken data"
    check_hash(data, expected_hash, str(what))
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line:
            continue
        try:
            token_b64, rank = line.split()
            token = base64.b64decode(token_b64, validate=True)
            value = int(rank)
        except (ValueError, binascii.Error):
            raise VocabSourceError(f"{what}: line {lineno} is not 'base64-token rank': {line[:80]!r}") from None
        if token in ranks:
            raise VocabSourceError(f"{what}: line {lineno}: token {token!r} appears twice")
        ranks[token] = value
    return ranks


def dump_tiktoken_bpe(mergeable_ranks: dict[bytes, int], path: str | os.PathLike[str]) -> None:
    """Write mergeable ranks as a `.tiktoken` file."""
    with open(path, "wb") as f:
        for token, rank in sorted(mergeable_ranks.items(), key=lambda kv: kv[1]):
            f.write(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
