"""Code point sets from the pinned Unicode tables (see `_unicode_tables.py`).

A set is a tuple of inclusive, sorted, disjoint `(first, last)` ranges.  Everything here is
derived from the generated tables only, never from the running interpreter's `unicodedata`, so
that CPython 3.11 (Unicode 14) and Pyodide's CPython 3.14 (Unicode 16) see the same classes.
"""

from __future__ import annotations

import functools
from itertools import repeat
from typing import Iterable

from . import _unicode_tables as _t

Ranges = tuple[tuple[int, int], ...]

MAX_CODE_POINT = 0x10FFFF
SURROGATES: Ranges = ((0xD800, 0xDFFF),)
EVERYTHING: Ranges = ((0, MAX_CODE_POINT),)
ASCII: Ranges = ((0, 0x7F),)
BMP: Ranges = ((0, 0xFFFF),)

UNICODE_VERSION = _t.UNICODE_VERSION

# The general categories, and the one-letter groups and long names regex engines accept.
_GROUPS = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"),
    "LC": ("Lu", "Ll", "Lt"),
    "M": ("Mn", "Mc", "Me"),
    "N": ("Nd", "Nl", "No"),
    "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"),
    "S": ("Sm", "Sc", "Sk", "So"),
    "Z": ("Zs", "Zl", "Zp"),
    "C": ("Cc", "Cf", "Cs", "Co", "Cn"),
}
_LONG_NAMES = {
    "letter": "L", "casedletter": "LC", "uppercaseletter": "Lu", "lowercaseletter": "Ll",
    "titlecaseletter": "Lt", "modifierletter": "Lm", "otherletter": "Lo",
    "mark": "M", "combiningmark": "M", "nonspacingmark": "Mn", "spacingmark": "Mc",
    "enclosingmark": "Me", "number": "N", "decimalnumber": "Nd", "digit": "Nd",
    "letternumber": "Nl", "othernumber": "No", "punctuation": "P", "connectorpunctuation": "Pc",
    "dashpunctuation": "Pd", "openpunctuation": "Ps", "closepunctuation": "Pe",
    "initialpunctuation": "Pi", "finalpunctuation": "Pf", "otherpunctuation": "Po",
    "symbol": "S", "mathsymbol": "Sm", "currencysymbol": "Sc", "modifiersymbol": "Sk",
    "othersymbol": "So", "separator": "Z", "spaceseparator": "Zs", "lineseparator": "Zl",
    "paragraphseparator": "Zp", "other": "C", "control": "Cc", "format": "Cf",
    "surrogate": "Cs", "privateuse": "Co", "unassigned": "Cn",
}


@functools.lru_cache(maxsize=None)
def _category_ranges() -> dict[str, Ranges]:
    items = _t.CATEGORY_RUNS.split()
    starts = list(map(int, [item[:-2] for item in items], repeat(16)))
    out: dict[str, list[tuple[int, int]]] = {}
    ends = starts[1:] + [MAX_CODE_POINT + 1]
    for start, end, item in zip(starts, ends, items):
        out.setdefault(item[-2:], []).append((start, end - 1))
    return {cat: tuple(ranges) for cat, ranges in out.items()}


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sort and merge overlapping or adjacent ranges."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1][1] = hi
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def union(*sets: Ranges) -> Ranges:
    return normalize(r for s in sets for r in s)


def complement(ranges: Ranges) -> Ranges:
    """All code points not in `ranges` (surrogates included; callers remove them if needed)."""
    out = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return tuple(out)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def difference(a: Ranges, b: Ranges) -> Ranges:
    return intersect(a, complement(b))


def contains(ranges: Ranges, cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


@functools.lru_cache(maxsize=None)
def category(name: str) -> Ranges | None:
    """Ranges of a general category or group (`L`, `Lu`, `Letter`, `Uppercase_Letter`, ...)."""
    key = name.replace("_", "").replace(" ", "").replace("-", "")
    short = _LONG_NAMES.get(key.lower(), name)
    table = _category_ranges()
    if short in _GROUPS:
        return union(*(table.get(c, ()) for c in _GROUPS[short]))
    if short in table:
        return table[short]
    if short == "Any":
        return EVERYTHING
    return None


@functools.lru_cache(maxsize=None)
def white_space() -> Ranges:
    """The White_Space property: what `\\s` means in Rust's regex (and so in tiktoken)."""
    return tuple(_t.WHITE_SPACE)


def ascii_case_class(ch: str) -> Ranges:
    """Code points a case-insensitive match of the ASCII letter `ch` accepts (simple folding)."""
    cps = {ord(ch.lower()), ord(ch.upper())}
    cps.update(_t.ASCII_CASE_EXTRAS.get(ch.lower(), ()))
    return normalize((c, c) for c in cps)
