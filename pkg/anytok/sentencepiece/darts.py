"""Read-only Darts-clone double-array tries, as stored in SentencePiece's precompiled charsmap.

The array is a list of 32-bit little-endian units.  Walking a key from the root: start at
`pos = offset(array[0])`; for each byte `b`, `pos ^= b`, the unit there must have `label == b`
(else the key leaves the trie), then `pos ^= offset(unit)`; when that unit `has_leaf`, the key
read so far is in the trie and its value is `value(array[pos])`.  Unit fields (darts.h):

    has_leaf = bit 8          value = bits 0..30         label = bits 0..7 and bit 31
    offset   = (unit >> 10) << ((unit & (1 << 9)) >> 6)

A leaf unit has bit 31 set, so its label never equals a byte: walks cannot step onto leaves.
"""

from __future__ import annotations

import sys
from array import array

__all__ = ["DoubleArray"]


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & 0x200) >> 6)


class DoubleArray:
    """A Darts-clone double array over `units` (the raw little-endian bytes of the array)."""

    __slots__ = ("units",)

    def __init__(self, blob: bytes):
        if len(blob) % 4:
            raise ValueError("double array size is not a multiple of 4 bytes")
        units = array("I")
        if units.itemsize != 4:  # pragma: no cover - every CPython and Pyodide build has 4
            units = array("L")
        units.frombytes(bytes(blob))
        if sys.byteorder == "big":  # pragma: no cover
            units.byteswap()
        self.units = units

    def common_prefix_search(self, key: bytes, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
        """Every key of the trie that is a prefix of `key[start:end]`: [(value, length), ...],
        shortest first (darts' `commonPrefixSearch`)."""
        units = self.units
        n = len(units)
        if end is None:
            end = len(key)
        results = []
        pos = _offset(units[0])
        for i in range(start, end):
            b = key[i]
            pos ^= b
            if pos >= n:
                break
            unit = units[pos]
            if unit & 0x800000FF != b:
                break
            pos ^= _offset(unit)
            if unit & 0x100:
                if pos >= n:
                    break
                results.append((units[pos] & 0x7FFFFFFF, i + 1 - start))
        return results

    def items(self) -> list[tuple[bytes, int]]:
        """All (key, value) pairs of the trie, in byte order of the keys."""
        units = self.units
        n = len(units)
        out: list[tuple[bytes, int]] = []
        # Depth-first, children in label order.  The children of a node whose walk position is
        # `base` lie at base ^ label, i.e. in the aligned block of 256 units around `base`.
        stack = [(b"", _offset(units[0]))]
        while stack:
            prefix, base = stack.pop()
            children = []
            for label in range(1, 256):
                pos = base ^ label
                if pos >= n:
                    continue
                unit = units[pos]
                if unit & 0x800000FF != label:
                    continue
                key = prefix + bytes((label,))
                nxt = pos ^ _offset(unit)
                if unit & 0x100 and nxt < n:
                    out.append((key, units[nxt] & 0x7FFFFFFF))
                children.append((key, nxt))
            stack.extend(reversed(children))
        out.sort()
        return out
