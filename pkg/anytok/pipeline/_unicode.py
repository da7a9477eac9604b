"""Unicode operations of Hugging Face tokenizers, from the pinned tables in `_tables.py`.

Never the interpreter's `unicodedata` or `str.lower` (their Unicode version depends on the
interpreter).  Each component follows the Unicode version of the Rust crate `tokenizers` takes
it from (see build_scripts/gen/gen_hf_unicode_tables.py):

* `nfc` / `nfd` / `nfkc` / `nfkd`, `is_mark_9`: Unicode 9.0.
* `PUNCT_8`, `CONTROL_8`, `NONSPACING_MARK_8` (BERT): Unicode 8.0.
* `lowercase`, `WHITE_SPACE`, `NUMERIC` (Rust's `char`): Unicode 17.0.

Character sets are exposed as stdlib `re` character classes (strings), so that scanning text is
done by `re` in C.  Tables are parsed on first use.
"""

from __future__ import annotations

import functools
import re

from . import _tables as _t

_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_N_COUNT = _V_COUNT * _T_COUNT
_S_COUNT = _L_COUNT * _N_COUNT


def parse_ranges(spec: tuple[str, ...] | str) -> list[tuple[int, int]]:
    text = spec if isinstance(spec, str) else " ".join(spec)
    out = []
    for item in text.split():
        lo, _, hi = item.partition("-")
        out.append((int(lo, 16), int(hi or lo, 16)))
    return out


def _class_char(cp: int) -> str:
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def re_class(ranges: list[tuple[int, int]], negate: bool = False) -> str:
    """A stdlib `re` character class (`[...]`) of the ranges."""
    body = "".join(_class_char(lo) if lo == hi else f"{_class_char(lo)}-{_class_char(hi)}" for lo, hi in ranges)
    return f"[{'^' if negate else ''}{body}]"


@functools.lru_cache(maxsize=None)
def ranges(name: str) -> list[tuple[int, int]]:
    """The ranges of one of the tables (`PUNCTUATION_8`, `CONTROL_8`, `NONSPACING_MARK_8`,
    `MARKS_9`, `NUMERIC_17`, `WHITE_SPACE_17`, `WORD_16`)."""
    return parse_ranges(getattr(_t, name))


@functools.lru_cache(maxsize=None)
def char_class(name: str) -> str:
    return re_class(ranges(name))


# ---------------------------------------------------------------------------------------------
# Lowercase (Rust's char::to_lowercase, Unicode 17.0)
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _lower_table() -> dict[int, str]:
    table = {}
    for item in _t.LOWERCASE_17.split():
        cp, _, target = item.partition(":")
        table[int(cp, 16)] = "".join(chr(int(t, 16)) for t in target.split("."))
    return table


def lowercase(text: str) -> str:
    """Each character lowercased on its own (no final-sigma rule), as `char::to_lowercase`."""
    if text.isascii():
        return text.lower()
    return text.translate(_lower_table())


# ---------------------------------------------------------------------------------------------
# Normalization forms (unicode-normalization-alignments, Unicode 9.0)
# ---------------------------------------------------------------------------------------------


class _NormData:
    def __init__(self):
        canon: dict[int, tuple[int, ...]] = {}
        compat: dict[int, tuple[int, ...]] = {}
        for item in _t.DECOMPOSITIONS.split():
            if ":" in item:
                cp, _, parts = item.partition(":")
                canon[int(cp, 16)] = tuple(int(p, 16) for p in parts.split("."))
            else:
                cp, _, parts = item.partition("~")
                compat[int(cp, 16)] = tuple(int(p, 16) for p in parts.split("."))
        ccc: dict[int, int] = {}
        runs = [(int(a, 16), int(b)) for a, _, b in (x.partition("=") for x in _t.COMBINING_CLASS_RUNS.split())]
        for (start, cls), (end, _) in zip(runs, runs[1:] + [(0x110000, 0)]):
            if cls:
                for cp in range(start, end):
                    ccc[cp] = cls
        self.ccc = ccc
        excluded = {int(x, 16) for x in _t.COMPOSITION_EXCLUSIONS.split()}
        self.compose_pairs: dict[tuple[int, int], int] = {}
        for cp, parts in canon.items():
            if len(parts) == 2 and cp not in excluded:
                self.compose_pairs[parts] = cp

        def full(cp: int, table_k: bool) -> tuple[int, ...]:
            parts = canon.get(cp)
            if parts is None and table_k:
                parts = compat.get(cp)
            if parts is None:
                return (cp,)
            return tuple(x for p in parts for x in full(p, table_k))

        self.nfd_map = {cp: "".join(map(chr, full(cp, False))) for cp in canon}
        self.nfkd_map = {cp: "".join(map(chr, full(cp, True))) for cp in set(canon) | set(compat)}
        seconds = {b for _, b in self.compose_pairs}
        hangul = ((_S_BASE, _S_BASE + _S_COUNT - 1),)
        jamo_vt = ((_V_BASE, _V_BASE + _V_COUNT - 1), (_T_BASE + 1, _T_BASE + _T_COUNT - 1))
        # Characters that the decomposing forms may change: decomposable, or reordered.
        nfd_active = set(self.nfd_map) | set(ccc)
        nfkd_active = set(self.nfkd_map) | set(ccc)
        self.nfd_rx = self._active_rx(nfd_active, hangul)
        self.nfkd_rx = self._active_rx(nfkd_active, hangul)
        # The composing forms: a character is inert if it is a starter, cannot combine with the
        # character before it, and is left alone by the form on its own.  A window is a run of
        # other characters together with the character before it (which they may combine with).
        self.nfc_rx = self._window_rx(self._comp_active(nfd_active | seconds, self.nfd_map), jamo_vt)
        self.nfkc_rx = self._window_rx(self._comp_active(nfkd_active | seconds, self.nfkd_map), jamo_vt)

    def _comp_active(self, candidates: set[int], dmap: dict[int, str]) -> set[int]:
        seconds = {b for _, b in self.compose_pairs}
        out = set()
        for cp in candidates:
            if cp in self.ccc or cp in seconds:
                out.add(cp)
            elif self.compose(self.decompose(chr(cp), dmap)) != chr(cp):
                out.add(cp)
        return out

    @staticmethod
    def _ranges(cps: set[int], extra) -> list[tuple[int, int]]:
        out: list[list[int]] = []
        for lo, hi in sorted([(c, c) for c in cps] + list(extra)):
            if out and lo <= out[-1][1] + 1:
                out[-1][1] = max(out[-1][1], hi)
            else:
                out.append([lo, hi])
        return [(a, b) for a, b in out]

    def _active_rx(self, cps: set[int], extra) -> re.Pattern[str]:
        return re.compile(re_class(self._ranges(cps, extra)) + "+")

    def _window_rx(self, cps: set[int], extra) -> re.Pattern[str]:
        cls = re_class(self._ranges(cps, extra))
        return re.compile(f"(?s:.)?{cls}+")

    def decompose(self, text: str, dmap: dict[int, str]) -> str:
        out = []
        for ch in text:
            cp = ord(ch)
            d = dmap.get(cp)
            if d is not None:
                out.append(d)
            elif _S_BASE <= cp < _S_BASE + _S_COUNT:
                s = cp - _S_BASE
                out.append(chr(_L_BASE + s // _N_COUNT) + chr(_V_BASE + (s % _N_COUNT) // _T_COUNT))
                if s % _T_COUNT:
                    out.append(chr(_T_BASE + s % _T_COUNT))
            else:
                out.append(ch)
        chars = list("".join(out))
        # Canonical ordering: a stable sort of each run of non-starters by combining class.
        ccc = self.ccc
        i, n = 0, len(chars)
        while i < n:
            if ord(chars[i]) not in ccc:
                i += 1
                continue
            j = i
            while j < n and ord(chars[j]) in ccc:
                j += 1
            if j - i > 1:
                chars[i:j] = sorted(chars[i:j], key=lambda c: ccc[ord(c)])
            i = j
        return "".join(chars)

    def compose(self, text: str) -> str:
        ccc = self.ccc
        pairs = self.compose_pairs
        out: list[int] = []
        starter = -1
        last_cc = 0
        for ch in text:
            cp = ord(ch)
            cc = ccc.get(cp, 0)
            if starter >= 0 and (len(out) - 1 == starter or (last_cc != 0 and last_cc < cc)):
                s = out[starter]
                comp = pairs.get((s, cp))
                if comp is None:
                    if _L_BASE <= s < _L_BASE + _L_COUNT and _V_BASE <= cp < _V_BASE + _V_COUNT and len(out) - 1 == starter:
                        comp = _S_BASE + ((s - _L_BASE) * _V_COUNT + (cp - _V_BASE)) * _T_COUNT
                    elif (_S_BASE <= s < _S_BASE + _S_COUNT and (s - _S_BASE) % _T_COUNT == 0
                          and _T_BASE < cp < _T_BASE + _T_COUNT and len(out) - 1 == starter):
                        comp = s + (cp - _T_BASE)
                if comp is not None:
                    out[starter] = comp
                    continue
            if cc == 0:
                starter = len(out)
            out.append(cp)
            last_cc = cc
        return "".join(map(chr, out))


@functools.lru_cache(maxsize=None)
def _norm() -> _NormData:
    return _NormData()


def nfd(text: str) -> str:
    if text.isascii():
        return text
    d = _norm()
    return d.nfd_rx.sub(lambda m: d.decompose(m.group(), d.nfd_map), text)


def nfkd(text: str) -> str:
    if text.isascii():
        return text
    d = _norm()
    return d.nfkd_rx.sub(lambda m: d.decompose(m.group(), d.nfkd_map), text)


def nfc(text: str) -> str:
    if text.isascii():
        return text
    d = _norm()
    return d.nfc_rx.sub(lambda m: d.compose(d.decompose(m.group(), d.nfd_map)), text)


def nfkc(text: str) -> str:
    if text.isascii():
        return text
    d = _norm()
    return d.nfkc_rx.sub(lambda m: d.compose(d.decompose(m.group(), d.nfkd_map)), text)
