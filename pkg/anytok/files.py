"""Saving an `Encoding` to the anytok binary format and loading one back from a file."""

from __future__ import annotations

import os
from typing import Union

from . import format as vocab_format
from .convert.tiktoken_bpe import load_tiktoken_bpe, read_source
from .core import Encoding
from .registry import encoding_from_bytes

PathOrBytes = Union[str, "os.PathLike[str]", bytes]


def encoding_to_bytes(enc: Encoding, *, compression: str = "lzma", source: str = "") -> bytes:
    """The anytok binary form of `enc` (deterministic).

    Records whether the vocabulary is regular (`Encoding.is_regular`), which takes a BPE of
    every token the first time.
    """
    vocab = vocab_format.VocabData.from_mergeable_ranks(
        enc.name,
        enc._pat_str,
        enc._mergeable_ranks,
        enc._special_tokens,
        explicit_n_vocab=getattr(enc, "_explicit_n_vocab", None),
        source=source,
        properties=vocab_format.PROP_REGULAR if enc.is_regular() else 0,
    )
    return vocab_format.dumps(vocab, compression=compression)


def save_encoding(enc: Encoding, path: str | os.PathLike[str], *, compression: str = "lzma", source: str = "") -> None:
    """Write `enc` to `path` in the anytok binary format (`.atok`).

    ```
    >>> anytok.save_encoding(enc, "my_encoding.atok")
    >>> anytok.load_encoding("my_encoding.atok").encode("hi") == enc.encode("hi")
    True
    ```
    """
    data = encoding_to_bytes(enc, compression=compression, source=source)
    with open(path, "wb") as f:
        f.write(data)


def load_encoding(
    source: PathOrBytes,
    *,
    name: str | None = None,
    pat_str: str | None = None,
    special_tokens: dict[str, int] | None = None,
    explicit_n_vocab: int | None = None,
) -> Encoding:
    """Load an Encoding from an anytok binary (path or bytes) or from a `.tiktoken` file.

    A `.tiktoken` file holds only the ranks, so `pat_str` (and usually `special_tokens` and
    `name`) must then be given.  Raises `VocabFormatError` for a damaged anytok file.
    """
    data = read_source(source)
    what = str(source) if isinstance(source, (str, os.PathLike)) else "vocab data"
    if data.startswith(vocab_format.MAGIC):
        enc = encoding_from_bytes(data, what)
        if name is not None:
            enc.name = name
        return enc
    if pat_str is None:
        raise ValueError(f"{what} is not an anytok vocab file; to load it as a .tiktoken file, pass pat_str=")
    ranks = load_tiktoken_bpe(data)
    return Encoding(
        name or (os.path.basename(str(source)).split(".")[0] if isinstance(source, (str, os.PathLike)) else "custom"),
        pat_str=pat_str,
        mergeable_ranks=ranks,
        special_tokens=special_tokens or {},
        explicit_n_vocab=explicit_n_vocab,
    )
