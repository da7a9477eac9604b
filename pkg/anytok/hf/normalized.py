"""`NormalizedString` and `PreTokenizedString`: text with its alignment to the original, as
Hugging Face `tokenizers` keeps it (its `normalizer.rs` / `pre_tokenizer.rs`).

How alignment flows
-------------------
A `NormalizedString` holds `original` (the slice of the input it covers), `normalized` (what the
normalizers made of it), `_shift` (where `original` starts in the whole input) and `_align`: for
each character of `normalized`, the `(start, end)` range of the input it comes from, in absolute
character offsets (tokenizers keeps them relative to `original`; absolute ones make a slice a
plain list slice; `alignments` gives the relative ones).  At creation every character maps to
itself, and `_align` stays None ("character i comes from character shift + i") until an
operation needs the list, so that pre-tokenizing text nothing normalized costs no alignment.

Each operation rewrites the normalized text as a sequence of `(char, change)` pairs, the way
tokenizers' `transform_range` consumes them: `change == 0` replaces the next character (and
takes its alignment), `change > 0` inserts a character (it takes the alignment of the character
consumed just before it; at the very start, the empty range at the start of `original`),
`change < 0` replaces the next character and also removes `-change` more.  So a decomposed or
lower-cased character keeps its source's range, a composed character takes its starter's,
`Replace` content takes the range of the last character it replaces, `prepend` shares the first
character's range.  The common cases (every output character taking its own source's range)
are done without building the pairs.

Tokenizers stores alignments per UTF-8 byte; every alignment it creates spans whole original
characters and every byte of a normalized character shares its character's alignment, so
keeping one entry per character in character units gives the same offsets.  The places where
tokenizers mixes bytes and characters (offsets of an empty split at the end of the input,
`get_splits(offset_referential="normalized", offset_type="char")`, which maps normalized byte
offsets through the *original* string's byte-to-char table) are reproduced on purpose.

A `PreTokenizedString` is the input cut into splits, each a `NormalizedString` (slices keep
their alignment and `_shift`) plus the tokens a model gave it.  `get_splits()` reports each
split's original span; `NormalizedString.original_offsets(start, end)` maps a range of a split's
normalized characters (a token) to character offsets into the whole input, as
`PreTokenizedString::into_encoding` does.

Patterns (`split`, `replace`): a `str` (one character: that character; else the literal) or a
`Regex` (Oniguruma syntax, translated by `anytok.pretokenize`, with Oniguruma's rule that an
empty match right after a match is skipped).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Callable, Iterable

from ..pipeline import _unicode as U

__all__ = ["NormalizedString", "PreTokenizedString", "Regex", "Token", "find_matches",
           "split_offsets", "BEHAVIORS", "behavior_from_py", "behavior_to_py"]

# Python spelling <-> tokenizer.json spelling of SplitDelimiterBehavior.
BEHAVIORS = {"removed": "Removed", "isolated": "Isolated", "merged_with_previous": "MergedWithPrevious",
             "merged_with_next": "MergedWithNext", "contiguous": "Contiguous"}
_BEHAVIORS_PY = {v: k for k, v in BEHAVIORS.items()}


def behavior_from_py(value) -> str:
    """'isolated' (or an enum with that value, or 'Isolated') -> 'Isolated'."""
    value = getattr(value, "value", value)
    if isinstance(value, str):
        if value in BEHAVIORS:
            return BEHAVIORS[value]
        if value in _BEHAVIORS_PY:
            return value
    raise ValueError("Wrong value for SplitDelimiterBehavior, expected one of: "
                     "`removed, isolated, merged_with_previous, merged_with_next, contiguous`")


def behavior_to_py(value: str) -> str:
    """What tokenizers' `behavior` getters return: the JSON name in lower case."""
    return value.lower()


class Regex:
    """A regular expression in Oniguruma syntax (`tokenizers.Regex`)."""

    __slots__ = ("pattern", "_splitter")

    def __init__(self, pattern: str):
        from ..pretokenize import Splitter, UnsupportedPatternError

        if not isinstance(pattern, str):
            raise TypeError("Regex expects a str pattern")
        self.pattern = pattern
        try:
            self._splitter = Splitter(pattern, dialect="onig")
        except UnsupportedPatternError as e:
            raise Exception(f"Error while creating Regex: {e}") from None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Match spans as Oniguruma's `find_iter` gives them (empty match after a match skipped)."""
        out = []
        last = -1
        for s, e in self._splitter.spans(text):
            if s == e and s == last:
                continue
            out.append((s, e))
            last = e
        return out

    def __reduce__(self):
        return (Regex, (self.pattern,))


class Token:
    """A model's token: id, value and offsets in the normalized split (`tokenizers.Token`)."""

    __slots__ = ("id", "value", "offsets")

    def __init__(self, id: int, value: str, offsets: tuple[int, int]):
        self.id = int(id)
        self.value = value
        self.offsets = (int(offsets[0]), int(offsets[1]))

    def as_tuple(self):
        return (self.id, self.value, self.offsets)

    def __repr__(self):
        return f"Token(id={self.id}, value={self.value!r}, offsets={self.offsets})"


_CHAR_RX_CACHE: dict[str, re.Pattern[str]] = {}


def _literal_rx(s: str) -> re.Pattern[str]:
    rx = _CHAR_RX_CACHE.get(s)
    if rx is None:
        rx = _CHAR_RX_CACHE[s] = re.compile(re.escape(s))
    return rx


def pattern_spans(pattern, text: str) -> list[tuple[int, int]] | None:
    """Match spans of a pattern (str, Regex, compiled `re` pattern); None: tokenizers' empty
    string pattern, which matches nothing and yields one unmatched piece."""
    if isinstance(pattern, str):
        if not pattern:
            return None
        return [m.span() for m in _literal_rx(pattern).finditer(text)]
    if isinstance(pattern, Regex):
        return pattern.spans(text)
    if isinstance(pattern, re.Pattern):
        return [m.span() for m in pattern.finditer(text)]
    if hasattr(pattern, "spans"):  # anytok.pipeline.patterns.Pattern
        return pattern.spans(text)
    raise TypeError(f"a pattern must be a str or a tokenizers.Regex, not {type(pattern).__name__}")


def find_matches(pattern, text: str, invert: bool = False) -> list[tuple[int, int, bool]]:
    """tokenizers' `Pattern::find_matches`: the text cut into (start, end, is_match) pieces."""
    return _matches(pattern_spans(pattern, text), text, invert)


def _matches(spans, text: str, invert: bool) -> list[tuple[int, int, bool]]:
    if spans is None:
        return [(0, len(text), invert)]
    if not text:
        return [(0, 0, invert)]
    out = []
    prev = 0
    for s, e in spans:
        if prev != s:
            out.append((prev, s, invert))
        out.append((s, e, not invert))
        prev = e
    if prev != len(text):
        out.append((prev, len(text), invert))
    return out


def split_offsets(matches: list[tuple[int, int, bool]], behavior: str) -> list[tuple[int, int]]:
    """The pieces `NormalizedString::split` keeps for a SplitDelimiterBehavior (empty ones too)."""
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in matches]
    if behavior == "Removed":
        return [(s, e) for s, e, m in matches if not m]
    acc: list[list[int]] = []
    previous = False
    if behavior == "Contiguous":
        for s, e, m in matches:
            if m == previous and acc:
                acc[-1][1] = e
            else:
                acc.append([s, e])
            previous = m
    elif behavior == "MergedWithPrevious":
        for s, e, m in matches:
            if m and not previous and acc:
                acc[-1][1] = e
            else:
                acc.append([s, e])
            previous = m
    elif behavior == "MergedWithNext":
        for s, e, m in reversed(matches):
            if m and not previous and acc:
                acc[-1][0] = s
            else:
                acc.append([s, e])
            previous = m
        acc.reverse()
    else:
        raise ValueError(f"unknown split behavior {behavior!r}")
    return [(s, e) for s, e in acc]


def _is_whitespace_rx() -> re.Pattern[str]:
    rx = _CHAR_RX_CACHE.get("\0ws")
    if rx is None:
        rx = _CHAR_RX_CACHE["\0ws"] = re.compile(U.char_class("WHITE_SPACE_17"))
    return rx


# ---------------------------------------------------------------------------------------------
# Unicode normalization forms with alignment changes (unicode-normalization-alignments)
# ---------------------------------------------------------------------------------------------

_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_N_COUNT = _V_COUNT * _T_COUNT
_S_COUNT = _L_COUNT * _N_COUNT


def _decompose_changes(window: str, dmap: dict[int, str], ccc: dict[int, int]) -> list[tuple[str, int]]:
    # Each character's full decomposition: its first character replaces it (0), the others are
    # inserted (1); then each run of non-starters is stably sorted by combining class, pairs
    # moving with their characters.
    out: list[tuple[int, str, int]] = []
    pending = 0  # start of the not yet sorted tail
    for ch in window:
        cp = ord(ch)
        d = dmap.get(cp)
        if d is None:
            if _S_BASE <= cp < _S_BASE + _S_COUNT:
                s = cp - _S_BASE
                d = chr(_L_BASE + s // _N_COUNT) + chr(_V_BASE + (s % _N_COUNT) // _T_COUNT)
                if s % _T_COUNT:
                    d += chr(_T_BASE + s % _T_COUNT)
            else:
                d = ch
        first = 0
        for c in d:
            cls = ccc.get(ord(c), 0)
            if cls == 0 and len(out) - pending > 1:
                out[pending:] = sorted(out[pending:], key=lambda t: t[0])
            if cls == 0:
                pending = len(out)
            out.append((cls, c, first))
            first = 1
    if len(out) - pending > 1:
        out[pending:] = sorted(out[pending:], key=lambda t: t[0])
    return [(c, ch) for _, c, ch in out]


def _compose_pair(a: int, b: int, pairs: dict[tuple[int, int], int]) -> int | None:
    r = pairs.get((a, b))
    if r is not None:
        return r
    if _L_BASE <= a < _L_BASE + _L_COUNT and _V_BASE <= b < _V_BASE + _V_COUNT:
        return _S_BASE + ((a - _L_BASE) * _V_COUNT + (b - _V_BASE)) * _T_COUNT
    if _S_BASE <= a < _S_BASE + _S_COUNT and (a - _S_BASE) % _T_COUNT == 0 and _T_BASE < b < _T_BASE + _T_COUNT:
        return a + (b - _T_BASE)
    return None


def _compose_changes(pairs_in: list[tuple[str, int]], ccc: dict[int, int],
                     comp: dict[tuple[int, int], int]) -> list[tuple[str, int]]:
    # The canonical composition state machine of unicode-normalization-alignments: a composed
    # character's change is the starter's change plus the mark's, minus one.
    out: list[tuple[str, int]] = []
    composee: tuple[str, int] | None = None
    last_ccc: int | None = None
    buffer: list[tuple[str, int]] = []
    for ch, change in pairs_in:
        cls = ccc.get(ord(ch), 0)
        if composee is None:
            if cls != 0:
                out.append((ch, change))
                continue
            composee = (ch, change)
            continue
        if last_ccc is None:
            r = _compose_pair(ord(composee[0]), ord(ch), comp)
            if r is not None:
                composee = (chr(r), composee[1] + change - 1)
                continue
            if cls == 0:
                out.append(composee)
                composee = (ch, change)
                continue
            buffer.append((ch, change))
            last_ccc = cls
            continue
        if last_ccc >= cls:
            if cls == 0:
                out.append(composee)
                out.extend(buffer)
                buffer = []
                composee = (ch, change)
                last_ccc = None
                continue
            buffer.append((ch, change))
            last_ccc = cls
            continue
        r = _compose_pair(ord(composee[0]), ord(ch), comp)
        if r is not None:
            composee = (chr(r), composee[1] + change - 1)
            continue
        buffer.append((ch, change))
        last_ccc = cls
    if composee is not None:
        out.append(composee)
    out.extend(buffer)
    return out


def _form_windows(form: str):
    d = U._norm()
    if form == "nfd":
        return d.nfd_rx, lambda w: _decompose_changes(w, d.nfd_map, d.ccc)
    if form == "nfkd":
        return d.nfkd_rx, lambda w: _decompose_changes(w, d.nfkd_map, d.ccc)
    if form == "nfc":
        return d.nfc_rx, lambda w: _compose_changes(_decompose_changes(w, d.nfd_map, d.ccc), d.ccc, d.compose_pairs)
    return d.nfkc_rx, lambda w: _compose_changes(_decompose_changes(w, d.nfkd_map, d.ccc), d.ccc, d.compose_pairs)


# ---------------------------------------------------------------------------------------------
# NormalizedString
# ---------------------------------------------------------------------------------------------

_RUST_UPPER: dict[int, str] | None = None


def _upper(c: str) -> str:
    # Not pinned: Rust's char::to_uppercase (Unicode 17) has no table in anytok yet; the
    # interpreter's mapping is used for non-ASCII characters (only `NormalizedString.uppercase`).
    return c.upper()


class NormalizedString:
    """A string and its normalized form, aligned character by character (`tokenizers.NormalizedString`).

    Args:
        sequence: the original string.
    """

    __slots__ = ("_original", "_normalized", "_align", "_shift")

    def __init__(self, sequence: str):
        if not isinstance(sequence, str):
            raise TypeError("NormalizedString expects a str")
        self._original = sequence
        self._normalized = sequence
        self._align = None
        self._shift = 0

    @classmethod
    def _make(cls, original: str, normalized: str, align: list, shift: int) -> "NormalizedString":
        ns = cls.__new__(cls)
        ns._original = original
        ns._normalized = normalized
        ns._align = align
        ns._shift = shift
        return ns

    def _al(self) -> list[tuple[int, int]]:
        # `_align` holds absolute offsets (into the whole input), so that slicing copies it
        # unchanged; None means "character i comes from original character i" until an
        # operation needs the list.
        a = self._align
        if a is None:
            s = self._shift
            a = self._align = [(s + i, s + i + 1) for i in range(len(self._normalized))]
        return a

    def _copy(self) -> "NormalizedString":
        # Operations never mutate `_align` in place, so sharing the list is safe.
        return NormalizedString._make(self._original, self._normalized, self._align, self._shift)

    # -- views ------------------------------------------------------------------------------

    @property
    def normalized(self) -> str:
        """The normalized string."""
        return self._normalized

    @property
    def original(self) -> str:
        """The original string (the part of the input this string covers)."""
        return self._original

    def __str__(self) -> str:
        return self._normalized

    def __repr__(self) -> str:
        return f'NormalizedString(original="{self._original}", normalized="{self._normalized}")'

    def __len__(self) -> int:
        return len(self._normalized)

    @property
    def alignments(self) -> list[tuple[int, int]]:
        """For each normalized character, its (start, end) in `original` (characters)."""
        s = self._shift
        return [(a - s, b - s) for a, b in self._al()]

    def offsets_original(self) -> tuple[int, int]:
        """Where `original` sits in the whole input, in characters."""
        return (self._shift, self._shift + len(self._original))

    def convert_normalized(self, start: int, end: int) -> tuple[int, int] | None:
        """A range of normalized characters -> its range in `original` (tokenizers'
        `convert_offsets(Range::Normalized)`), or None when out of range."""
        if start == end:
            return (start, end)
        if start > end:
            return None
        if not self._normalized and start == 0 and end == 0:
            return (0, len(self._original))
        if start < 0 or end > len(self._normalized):
            return None
        if self._align is None:
            return (start, end)
        sh = self._shift
        return (self._align[start][0] - sh, self._align[end - 1][1] - sh)

    def convert_original(self, start: int, end: int) -> tuple[int, int] | None:
        """A range of `original` characters -> the normalized characters aligned to it."""
        if start == end:
            return (start, end)
        if start > end:
            return None
        if not self._original and start == 0 and end == 0:
            return (0, len(self._normalized))
        s = e = None
        sh = self._shift
        for i, (a, b) in enumerate(self._al()):
            a -= sh
            b -= sh
            if end < b:
                break
            if s is None and start <= a and a != b:
                s = i
            e = i + 1
        if s is not None and e is not None:
            return (s, e)
        if s is not None:
            return (s, s)
        if e is not None:
            return (e, e)
        return None

    def original_offsets(self, start: int, end: int) -> tuple[int, int]:
        """Normalized character range (a token) -> character offsets into the whole input, as
        tokenizers' `into_encoding` computes them (falls back to the given range, unshifted,
        when the range is invalid)."""
        r = self.convert_normalized(start, end)
        if r is None:
            return (start, end)
        return (self._shift + r[0], self._shift + r[1])

    # -- the transformation engine ---------------------------------------------------------

    def _transform_range(self, start: int, end: int, dest: Iterable[tuple[str, int]], initial_offset: int) -> None:
        old = self._al()
        at_start = (self._shift, self._shift)
        offset = start + min(initial_offset, end - start)
        chars: list[str] = []
        align: list[tuple[int, int]] = []
        for c, change in dest:
            if change > 0:
                a = old[offset - 1] if offset >= 1 else at_start
            else:
                a = old[offset]
                if offset < end:
                    offset += 1
                if change < 0:
                    offset = min(offset - change, end)
            chars.append(c)
            align.append(a)
        self._align = old[:start] + align + old[end:]
        self._normalized = self._normalized[:start] + "".join(chars) + self._normalized[end:]

    def transform(self, dest: Iterable[tuple[str, int]], initial_offset: int = 0) -> None:
        """Rewrite the whole normalized string from `(char, change)` pairs (see module doc)."""
        self._transform_range(0, len(self._normalized), dest, initial_offset)

    def _expand(self, mapping: Callable[[str], str]) -> None:
        # Every character becomes mapping(c) (zero or more characters), each with c's range.
        text = self._normalized
        parts = [mapping(c) for c in text]
        out = "".join(parts)
        if len(out) == len(text) and all(len(r) == 1 for r in parts):
            self._normalized = out  # one character for one: alignments unchanged
            return
        old = self._al()
        align: list[tuple[int, int]] = []
        for i, r in enumerate(parts):
            if len(r) == 1:
                align.append(old[i])
            elif r:
                align.extend([old[i]] * len(r))
        self._normalized = out
        self._align = align

    def _expand_runs(self, rx: re.Pattern[str], mapping: Callable[[str], str]) -> None:
        # _expand restricted to the characters of the runs `rx` matches.
        text = self._normalized
        matches = [m.span() for m in rx.finditer(text)]
        if not matches:
            return
        old = self._al()
        out_text: list[str] = []
        out_align: list[tuple[int, int]] = []
        prev = 0
        for s, e in matches:
            out_text.append(text[prev:s])
            out_align.extend(old[prev:s])
            for i in range(s, e):
                r = mapping(text[i])
                out_text.append(r)
                out_align.extend((old[i],) * len(r))
            prev = e
        out_text.append(text[prev:])
        out_align.extend(old[prev:])
        self._normalized = "".join(out_text)
        self._align = out_align

    def _windows(self, rx: re.Pattern[str], changes: Callable[[str], list[tuple[str, int]]]) -> None:
        text = self._normalized
        matches = list(rx.finditer(text))
        if not matches:
            return
        old = self._al()
        at_start = (self._shift, self._shift)
        out_text: list[str] = []
        out_align: list[tuple[int, int]] = []
        prev = 0
        for m in matches:
            s, e = m.span()
            out_text.append(text[prev:s])
            out_align.extend(old[prev:s])
            offset = s
            for c, change in changes(m.group()):
                if change > 0:
                    a = old[offset - 1] if offset >= 1 else at_start
                else:
                    a = old[offset]
                    if offset < e:
                        offset += 1
                    if change < 0:
                        offset = min(offset - change, e)
                out_text.append(c)
                out_align.append(a)
            prev = e
        out_text.append(text[prev:])
        out_align.extend(old[prev:])
        self._normalized = "".join(out_text)
        self._align = out_align

    # -- operations (tokenizers' Python API) -------------------------------------------------

    def _form(self, form: str) -> None:
        if self._normalized.isascii():
            return
        rx, changes = _form_windows(form)
        self._windows(rx, changes)

    def nfd(self) -> None:
        """Runs the NFD normalization."""
        self._form("nfd")

    def nfkd(self) -> None:
        """Runs the NFKD normalization."""
        self._form("nfkd")

    def nfc(self) -> None:
        """Runs the NFC normalization."""
        self._form("nfc")

    def nfkc(self) -> None:
        """Runs the NFKC normalization."""
        self._form("nfkc")

    def lowercase(self) -> None:
        """Lowercase the string (each character on its own, as Rust's `char::to_lowercase`)."""
        text = self._normalized
        if text.isascii():
            self._normalized = text.lower()
            return
        table = U._lower_table()
        lowered = text.translate(table)
        if len(lowered) == len(text):
            # Every character lowercases to at least one: the same length means one for one.
            self._normalized = lowered
            return
        self._expand(lambda c: table.get(ord(c), c))

    def uppercase(self) -> None:
        """Uppercase the string."""
        text = self._normalized
        if text.isascii():
            self._normalized = text.upper()
            return
        self._expand(_upper)

    def filter(self, func: Callable[[str], bool]) -> None:
        """Keep the characters for which func(char) is true."""
        if not callable(func):
            raise TypeError("`filter` expect a callable with the signature: `fn(char) -> bool`")
        text = self._normalized
        keep = [i for i, c in enumerate(text) if func(c)]
        if len(keep) == len(text):
            return
        old = self._al()
        self._normalized = "".join(text[i] for i in keep)
        self._align = [old[i] for i in keep]

    def _remove_class(self, rx: re.Pattern[str]) -> None:
        # filter() with a character class regex (`rx` matches runs of removed characters).
        text = self._normalized
        spans = [m.span() for m in rx.finditer(text)]
        if not spans:
            return
        old = self._al()
        t: list[str] = []
        a: list[tuple[int, int]] = []
        prev = 0
        for s, e in spans:
            t.append(text[prev:s])
            a.extend(old[prev:s])
            prev = e
        t.append(text[prev:])
        a.extend(old[prev:])
        self._normalized = "".join(t)
        self._align = a

    def for_each(self, func: Callable[[str], object]) -> None:
        """Calls func on each character."""
        if not callable(func):
            raise TypeError("`for_each` expect a callable with the signature: `fn(char)`")
        for c in self._normalized:
            func(c)

    def map(self, func: Callable[[str], str]) -> None:
        """Replace each character by func(char) (a string whose first character is used)."""
        if not callable(func):
            raise TypeError("`map` expect a callable with the signature: `fn(char) -> char`")
        out = []
        for c in self._normalized:
            r = func(c)
            if not isinstance(r, str) or not r:
                raise Exception("`map` expect a callable with the signature: `fn(char) -> char`")
            out.append(r[0])
        self._normalized = "".join(out)

    def prepend(self, s: str) -> None:
        """Prepend s (it shares the first character's alignment; nothing on an empty string)."""
        if not self._normalized:
            return
        if not s:
            # tokenizers inserts nothing but re-aligns the first character as an insertion.
            self._align = [(self._shift, self._shift)] + self._al()[1:]
            return
        al = self._al()
        self._normalized = s + self._normalized
        self._align = [al[0]] * len(s) + al

    def append(self, s: str) -> None:
        """Append s (it shares the last character's alignment)."""
        if not s:
            return
        al = self._al()
        last = al[-1] if al else (self._shift, self._shift)
        self._normalized = self._normalized + s
        self._align = al + [last] * len(s)

    def _lrstrip(self, left: bool, right: bool) -> None:
        text = self._normalized
        ws = _is_whitespace_rx()
        i, j = 0, len(text)
        if left:
            while i < j and ws.match(text, i):
                i += 1
        if right:
            while j > i and ws.match(text, j - 1):
                j -= 1
        if i == 0 and j == len(text):
            return
        al = self._al()
        self._normalized = text[i:j]
        self._align = al[i:j]

    def lstrip(self) -> None:
        """Strip whitespace on the left."""
        self._lrstrip(True, False)

    def rstrip(self) -> None:
        """Strip whitespace on the right."""
        self._lrstrip(False, True)

    def strip(self) -> None:
        """Strip whitespace on both ends."""
        self._lrstrip(True, True)

    def clear(self) -> None:
        """Clears the normalized string."""
        self._normalized = ""
        self._align = []

    def replace(self, pattern, content: str) -> None:
        """Replace every match of pattern (str or Regex) by content; the content takes the
        alignment of the last character it replaces."""
        text = self._normalized
        if not text:
            return  # tokenizers: nothing matches in an empty string
        literal = pattern if isinstance(pattern, str) else getattr(pattern, "literal", None)
        if literal is not None and len(literal) == 1 and len(content) == 1:
            # One character for one, each taking the alignment of the one it replaces.
            self._normalized = text.replace(literal, content)
            return
        spans = pattern_spans(pattern, text)
        if not spans:
            return
        old = self._al()
        at_start = (self._shift, self._shift)
        t: list[str] = []
        a: list[tuple[int, int]] = []
        prev = 0
        n = len(content)
        for s, e in spans:
            t.append(text[prev:s])
            a.extend(old[prev:s])
            t.append(content)
            if n:
                a.extend([old[e - 1] if e >= 1 else at_start] * n)
            prev = e
        t.append(text[prev:])
        a.extend(old[prev:])
        self._normalized = "".join(t)
        self._align = a

    def _pieces(self, bounds) -> list["NormalizedString"]:
        """_slice_normalized of each (start, end) of `bounds` (non-empty, in range)."""
        if self._align is not None:
            cut = self._slice_normalized
            return [cut(s, e) for s, e in bounds]
        # Identity alignment: the slices are plain string slices.
        new = object.__new__
        cls = NormalizedString
        orig, text, sh = self._original, self._normalized, self._shift
        out = []
        for s, e in bounds:
            ns = new(cls)
            ns._original = orig[s:e]
            ns._normalized = text[s:e]
            ns._align = None
            ns._shift = sh + s
            out.append(ns)
        return out

    def _n_bytes(self) -> int:
        t = self._normalized
        return len(t) if t.isascii() else len(t.encode("utf-8", "surrogatepass"))

    def _slice_normalized(self, start: int, end: int) -> "NormalizedString | None":
        # tokenizers' `slice(Range::Normalized)` in characters.
        n = len(self._normalized)
        if start < 0 or end > n or start > end:
            return None
        al = self._align
        if al is None:
            # Character i comes from original character i: so does the slice's.
            return NormalizedString._make(self._original[start:end], self._normalized[start:end], None,
                                          self._shift + start)
        if start == end:
            return NormalizedString._make("", "", [], self._shift + start)
        sh = self._shift
        o_start, o_end = al[start][0] - sh, al[end - 1][1] - sh
        if o_start > o_end:
            return None
        return NormalizedString._make(self._original[o_start:o_end], self._normalized[start:end],
                                      al[start:end], sh + o_start)

    def slice(self, range) -> "NormalizedString | None":
        """The NormalizedString of a range of normalized characters (int, (start, end) or slice).

        As in tokenizers, negative indices and slices count from the UTF-8 length of the
        normalized string, and a reversed range runs to the end."""
        if isinstance(range, bool):
            raise TypeError("a range must be an int, a tuple (start, end) or a slice")
        n = len(self._normalized)
        if isinstance(range, int):
            if range < 0:
                n_bytes = self._n_bytes()
                if -range > n_bytes:
                    raise ValueError(f"{-range} is bigger than max len")
                start = n_bytes + range
            else:
                start = range
            end = start + 1
        elif isinstance(range, tuple) and len(range) == 2:
            start, end = int(range[0]), int(range[1])
            if start < 0 or end < 0:
                raise OverflowError("can't convert negative int to unsigned")
        elif isinstance(range, slice):
            start, end, _ = range.indices(self._n_bytes())
            start, end = max(start, 0), max(end, 0)
        else:
            raise TypeError("a range must be an int, a tuple (start, end) or a slice")
        # tokenizers' char_to_bytes: an empty range needs a character at its start; a non-empty
        # one takes the characters from start on (all of them when the range is reversed).
        if start == end:
            if start == 0:
                return self._slice_normalized(0, 0)
            if start >= n:
                return None
            return self._slice_normalized(start, start)
        if start >= n:
            return None
        return self._slice_normalized(start, n if end < start else min(end, n))

    __getitem__ = slice

    def split(self, pattern, behavior) -> list["NormalizedString"]:
        """Split by pattern (str or Regex) with a SplitDelimiterBehavior ('removed', 'isolated',
        'merged_with_previous', 'merged_with_next', 'contiguous')."""
        return self._split(pattern, behavior_from_py(behavior))

    def _covers_original(self) -> bool:
        # Whether slicing the whole normalized string gives this string back.
        al = self._align
        if al is None:
            return True
        return bool(al) and al[0][0] == self._shift and al[-1][1] == self._shift + len(self._original)

    def _split(self, pattern, behavior: str, invert: bool = False) -> list["NormalizedString"]:
        text = self._normalized
        spans = pattern_spans(pattern, text)
        if not invert and text and spans is not None:
            whole = not spans or (spans == [(0, len(text))] and behavior != "Removed")
            if whole and self._covers_original():
                return [NormalizedString._make(self._original, text, self._align, self._shift)]
            if behavior == "Isolated":
                # The matches and the gaps between them, each its own piece.
                bounds = []
                prev = 0
                for s, e in spans:
                    if prev != s:
                        bounds.append((prev, s))
                    bounds.append((s, e))
                    prev = e
                if prev != len(text):
                    bounds.append((prev, len(text)))
                return self._pieces(bounds)
        out = []
        for s, e in split_offsets(_matches(spans, text, invert), behavior):
            piece = self._slice_normalized(s, e)
            if piece is None:
                raise Exception("NormalizedString bad split")
            out.append(piece)
        return out

    def __eq__(self, other):
        if not isinstance(other, NormalizedString):
            return NotImplemented
        return (self._original, self._normalized, self._al(), self._shift) == (
            other._original, other._normalized, other._al(), other._shift)

    __hash__ = None  # type: ignore[assignment]


class NormalizedStringRefMut:
    """A NormalizedString lent to a custom component for the duration of one call."""

    __slots__ = ("_inner", "_what")

    def __init__(self, inner: NormalizedString, what: str = "normalize"):
        self._inner = inner
        self._what = what

    def _get(self) -> NormalizedString:
        if self._inner is None:
            raise Exception("Cannot use a NormalizedStringRefMut outside `normalize`")
        return self._inner

    def _destroy(self) -> None:
        self._inner = None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._get(), name)

    def __str__(self):
        return str(self._get())

    def __repr__(self):
        return repr(self._get())

    def __len__(self):
        return len(self._get())

    def __getitem__(self, r):
        return self._get().slice(r)


def _as_normalized(obj) -> NormalizedString:
    if isinstance(obj, NormalizedString):
        return obj
    if isinstance(obj, NormalizedStringRefMut):
        return obj._get()
    raise TypeError(f"expected a NormalizedString, got {type(obj).__name__}")


# ---------------------------------------------------------------------------------------------
# PreTokenizedString
# ---------------------------------------------------------------------------------------------


class _Split:
    # byte_offsets: the tokens came from a Python `tokenize` callback, whose Token offsets are
    # UTF-8 byte offsets into the split's normalized string (anytok's models give characters).
    __slots__ = ("normalized", "tokens", "byte_offsets")

    def __init__(self, normalized: NormalizedString, tokens=None, byte_offsets: bool = False):
        self.normalized = normalized
        self.tokens = tokens
        self.byte_offsets = byte_offsets


def _check_referential(value) -> str:
    value = getattr(value, "value", value)
    if value not in ("original", "normalized"):
        raise ValueError("Wrong value for OffsetReferential, expected one of `original, normalized`")
    return value


def _check_offset_type(value) -> str:
    value = getattr(value, "value", value)
    if value not in ("byte", "char"):
        raise ValueError("Wrong value for OffsetType, expected one of `byte, char`")
    return value


class PreTokenizedString:
    """The input cut into splits, each a NormalizedString with, once tokenized, its tokens
    (`tokenizers.PreTokenizedString`)."""

    __slots__ = ("_original", "splits", "_byte_starts")

    def __init__(self, sequence):
        if isinstance(sequence, NormalizedString):
            ns = sequence
        elif isinstance(sequence, str):
            ns = NormalizedString(sequence)
        else:
            raise TypeError("PreTokenizedString expects a str")
        self._original = ns._original
        self.splits: list[_Split] = [_Split(ns)]
        self._byte_starts: list[int] | None = None

    @property
    def original(self) -> str:
        return self._original

    def split(self, func) -> None:
        """Split every untokenized split with func(index, NormalizedString) -> [NormalizedString];
        empty results are dropped."""
        if not callable(func):
            raise TypeError("`split` expect a callable with the signature: "
                            "`fn(index: int, normalized: NormalizedString) -> List[NormalizedString]`")
        out: list[_Split] = []
        for i, sp in enumerate(self.splits):
            if sp.tokens is not None:
                out.append(sp)
                continue
            for piece in func(i, sp.normalized):
                piece = _as_normalized(piece)._copy()
                if piece._normalized:
                    out.append(_Split(piece))
        self.splits = out

    def _split_pieces(self, func) -> None:
        # Internal split for the built-in pre-tokenizers: func(index, ns) -> pieces (new
        # objects, not shared with anything else).
        out: list[_Split] = []
        for i, sp in enumerate(self.splits):
            if sp.tokens is not None:
                out.append(sp)
                continue
            for piece in func(i, sp.normalized):
                if piece._normalized:
                    out.append(_Split(piece))
        self.splits = out

    def normalize(self, func) -> None:
        """Call func(NormalizedString) on every untokenized split (it modifies it in place)."""
        if not callable(func):
            raise TypeError("`normalize` expect a callable with the signature: `fn(normalized: NormalizedString)`")
        for sp in self.splits:
            if sp.tokens is None:
                ref = NormalizedStringRefMut(sp.normalized)
                try:
                    func(ref)
                finally:
                    ref._destroy()

    def _normalize_each(self, func) -> None:
        for sp in self.splits:
            if sp.tokens is None:
                func(sp.normalized)

    def tokenize(self, func) -> None:
        """Give every untokenized split the tokens func(str) -> [Token] returns."""
        if not callable(func):
            raise TypeError("`tokenize` expect a callable with the signature: `fn(str) -> List[Token]`")
        for sp in self.splits:
            if sp.tokens is None:
                tokens = func(sp.normalized._normalized)
                if not isinstance(tokens, list):
                    raise TypeError("`tokenize` must return a list of Token")
                sp.tokens = list(tokens)
                sp.byte_offsets = True

    def _starts(self) -> list[int] | None:
        """Byte offset of each character of the original (and its length); None if ASCII."""
        if self._original.isascii():
            return None
        starts = self._byte_starts
        if starts is None:
            starts = [0]
            total = 0
            for c in self._original:
                total += 1 if c < "\x80" else 2 if c < "\u0800" else 3 if c < "\U00010000" else 4
                starts.append(total)
            self._byte_starts = starts
        return starts

    def byte_offset(self, char_offset: int) -> int:
        """A character offset of the original -> its UTF-8 byte offset."""
        starts = self._starts()
        return char_offset if starts is None else starts[char_offset]

    def _convert_bytes(self, start: int, end: int, starts: list[int] | None) -> tuple[int, int]:
        # tokenizers' BytesToCharOffsetConverter over the original: byte -> character holding
        # it; an end past the last byte takes the character of the byte before it + 1; a start past it leaves the
        # offsets in bytes.
        n_bytes = len(self._original) if starts is None else starts[-1]
        if start < 0 or start >= n_bytes:
            return (start, end)
        to_char = (lambda b: b) if starts is None else (lambda b: bisect_right(starts, b) - 1)
        s = to_char(start)
        if 0 <= end < n_bytes:
            return (s, to_char(end))
        if 0 <= end - 1 < n_bytes:
            return (s, to_char(end - 1) + 1)
        return (s, s + 2)  # (tokenizers: "last" defaults to start + 1, then + 1)

    def get_splits(self, offset_referential="original", offset_type="char"):
        """[(normalized, (start, end), tokens or None)] with offsets in the original (or the
        normalized, concatenated) string, in characters (or bytes)."""
        ref = _check_referential(offset_referential)
        kind = _check_offset_type(offset_type)
        out = []
        starts = self._starts()
        n_chars = len(self._original)
        if ref == "original":
            for sp in self.splits:
                ns = sp.normalized
                s = ns._shift
                e = s + len(ns._original)
                if starts is not None and (kind == "byte" or s >= n_chars):
                    # (An empty original at the very end has no character: tokenizers leaves
                    # such offsets in bytes.)
                    s, e = starts[min(s, n_chars)], starts[min(e, n_chars)]
                out.append((ns._normalized, (s, e), sp.tokens))
            return out
        offset = 0
        n_bytes = n_chars if starts is None else starts[-1]
        for sp in self.splits:
            t = sp.normalized._normalized
            blen = len(t) if t.isascii() else len(t.encode("utf-8", "surrogatepass"))
            s, e = offset, offset + blen
            offset = e
            if kind == "char" and s < n_bytes:
                if starts is None:
                    e = e if e < n_bytes else (e - 1 if e - 1 < n_bytes else s + 1) + 1
                else:
                    s, e = self._convert_bytes(s, e, starts)
            out.append((t, (s, e), sp.tokens))
        return out

    def to_encoding(self, type_id: int = 0, word_idx: int | None = None):
        """An Encoding of the tokens (needs `anytok.hf.Encoding`)."""
        from .encoding import Encoding  # anytok.hf.Encoding (importing the package would be a circle)

        if any(sp.byte_offsets for sp in self.splits):
            # Token offsets in bytes of the normalized split -> characters, as tokenizers reads
            # them (a byte inside a character stands for that character).
            clone = PreTokenizedString.__new__(PreTokenizedString)
            clone._original = self._original
            clone._byte_starts = self._byte_starts
            clone.splits = [_Split(sp.normalized, [Token(t.id, t.value, _byte_range_to_chars(sp.normalized._normalized, *t.offsets))
                                                   for t in sp.tokens]) if sp.byte_offsets else sp
                            for sp in self.splits]
            return Encoding._from_pretokenized(clone, type_id=type_id, word_idx=word_idx)

        return Encoding._from_pretokenized(self, type_id=type_id, word_idx=word_idx)

    def __repr__(self):
        return f"PreTokenizedString(original={self._original!r}, splits={len(self.splits)})"


def _byte_range_to_chars(text: str, start: int, end: int) -> tuple[int, int]:
    if text.isascii() or start >= end:
        return (start, end)
    starts = [0]
    for c in text:
        starts.append(starts[-1] + len(c.encode("utf-8", "surrogatepass")))
    if end > starts[-1]:
        return (start, end)
    return (bisect_right(starts, start) - 1, bisect_right(starts, end - 1))


class PreTokenizedStringRefMut:
    """A PreTokenizedString lent to a custom pre-tokenizer for the duration of one call."""

    __slots__ = ("_inner",)

    def __init__(self, inner: PreTokenizedString):
        self._inner = inner

    def _get(self) -> PreTokenizedString:
        if self._inner is None:
            raise Exception("Cannot use a PreTokenizedStringRefMut outside `pre_tokenize`")
        return self._inner

    def _destroy(self) -> None:
        self._inner = None

    def split(self, func):
        return self._get().split(func)

    def normalize(self, func):
        return self._get().normalize(func)

    def tokenize(self, func):
        return self._get().tokenize(func)

    def get_splits(self, offset_referential="original", offset_type="char"):
        return self._get().get_splits(offset_referential, offset_type)

    def to_encoding(self, type_id: int = 0, word_idx: int | None = None):
        return self._get().to_encoding(type_id, word_idx)


def _as_pretokenized(obj) -> PreTokenizedString:
    if isinstance(obj, PreTokenizedString):
        return obj
    if isinstance(obj, PreTokenizedStringRefMut):
        return obj._get()
    raise TypeError(f"expected a PreTokenizedString, got {type(obj).__name__}")
