"""SentencePiece's CHAR and WORD trainers (`char_model_trainer.cc`, `word_model_trainer.cc`).

CHAR: the alphabet (the required characters) by count.  WORD: the whitespace-delimited words
of the normalized sentences by count, those with a character outside the alphabet left out.
Either way the first `vocab_size` (all with `use_all_vocab`) are scored
`logf(count) - logf(total)` in float, with the C library's `logf` (`_logf.py`).
"""

from __future__ import annotations

import math
import struct

from . import _logf
from ._common import UNK_CHAR, sorted_counts, split_into_words

__all__ = ["train_char", "train_word", "logf"]

_F = struct.Struct("<f")
_I = struct.Struct("<I")


def _f32(x: float) -> float:
    return _F.unpack(_F.pack(x))[0]


def logf(x: float) -> float:
    """C's `logf` for a whole number x >= 1 as a float (`x` is a float32 value)."""
    y = _f32(math.log(x))
    if x <= _logf.LIMIT and x == int(x):
        n = int(x)
        if n in _logf.UP or n in _logf.DOWN:
            bits = _I.unpack(_F.pack(y))[0]
            # y > 0 here (x > 1): the next float up has the next bit pattern.
            bits += 1 if n in _logf.UP else -1
            y = _F.unpack(_I.pack(bits))[0]
    return y


def train_char(required: dict[str, int], vocab_size: int, use_all: bool) -> list[tuple[str, float]]:
    total = sum(required.values())
    items = sorted_counts(required)
    out = []
    logsum = logf(_f32(float(total)))
    for c, n in items:
        if not use_all and len(out) == vocab_size:
            break
        out.append((c, _f32(logf(_f32(float(n))) - logsum)))
    return out


def train_word(sentences: list[list], vocab_size: int, use_all: bool) -> list[tuple[str, float]]:
    counts: dict[str, int] = {}
    for s, freq in sentences:
        for w in split_into_words(s, False, False):
            counts[w] = counts.get(w, 0) + freq
    total = sum(counts.values())
    logsum = logf(_f32(float(total)))
    out = []
    for w, n in sorted_counts(counts):
        if UNK_CHAR in w:
            continue
        if not use_all and len(out) == vocab_size:
            break
        out.append((w, _f32(logf(_f32(float(n))) - logsum)))
    return out
