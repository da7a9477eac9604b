"""Cutting a piece at character boundaries that no token can cross.

BPE never merges across a position that no token of the vocabulary spans: every part of the
run is a token, so two parts meeting there could only merge into a token that spans it.  The
two sides then evolve independently, and the BPE of the piece is the BPE of the segments,
concatenated.  For Chinese and Japanese text most character boundaries are such positions
(73 % in People's Daily with o200k), which turns a long piece that needs merging into a few
short segments, most of them single tokens or repeats.

Which boundaries a token can span is decided from the vocabulary alone, conservatively:

* A token that is valid UTF-8 occurs in text only aligned with characters, so it can span
  the boundary between characters c and d only if it contains the two-character string "cd".
  `_pairs` holds every such pair of every token with a non-ASCII character; boundaries
  between two ASCII characters are never cut (keeping the table small: the win is elsewhere).
* A token that is not valid UTF-8 starts inside a character (a run of continuation bytes S)
  and/or ends inside one (an incomplete sequence P).  It spans c|d if c ends with S and d
  starts the rest of the token, or c ends the token's middle and d starts with P.  These
  relations are added to `_pairs` when a character is first seen.

A boundary is cut only if no relation says a token may span it, so cutting never changes the
result; `tests/test_segment.py` checks that on the corpora.
"""

from __future__ import annotations

import re
import threading
from itertools import chain, compress, count, islice, product, repeat
from typing import AbstractSet

_SEP = "\ud800"  # never inside a token's text (valid UTF-8 decodes to no surrogates)
_CUT = "\ud801"  # marks a cut while segmenting (text reaching the segmenter has no surrogates)

# Above this many tokens of the form "end of a character + start of the next", cutting is off.
MAX_PARTIAL_PAIRS = 256
# Distinct characters registered before the per-character pairs are dropped and rebuilt.
MAX_SEEN = 1 << 16


def _lead_len(b: int) -> int:
    return 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4


def _prefix_range(prefix: bytes) -> tuple[int, int]:
    """The code points whose UTF-8 encoding starts with `prefix` (an incomplete sequence)."""
    n = _lead_len(prefix[0])
    value = prefix[0] & (0x7F >> n)
    for b in prefix[1:]:
        value = value << 6 | (b & 0x3F)
    free = 6 * (n - len(prefix))
    return value << free, min(0x10FFFF, (value << free) + (1 << free) - 1)


def _esc(cp: int) -> str:
    return f"\\U{cp:08x}"


class Segmenter:
    def __init__(self, token_texts, invalid_tokens):
        """`token_texts`: the texts of all valid UTF-8 tokens; `invalid_tokens`: the others' bytes."""
        self._texts = token_texts
        self._invalid = invalid_tokens
        # (c, d) -> "" for every pair of characters a token may span; a dict so that a lookup
        # with default _CUT gives the text to put between c and d directly.
        self._pairs: dict[tuple[str, str], str] | None = None
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        # Relations from tokens that start or end inside a character (see module docstring).
        self._after_suffix: dict[bytes, set[str]] = {}  # S -> chars that can follow c...S
        self._before_prefix: dict[bytes, set[str]] = {}  # P -> chars that can precede P...d
        # Tokens that are exactly S + P (the end of one character and the start of the next),
        # and the characters seen so far that end with such an S / start with such a P.
        self._partial_pairs: set[tuple[bytes, bytes]] = set()
        self._partial_start_rx: re.Pattern[str] | None = None
        self._ends_partial: dict[str, tuple[bytes, ...]] = {}
        self._starts_partial: dict[str, tuple[bytes, ...]] = {}
        self.enabled = True

    def _build(self) -> set[str]:
        with self._lock:
            if self._pairs is not None:
                return self._pairs
            joined = _SEP.join(t for t in self._texts if not t.isascii())
            found = set(zip(joined, islice(joined, 1, None)))
            found.update(product(map(chr, range(128)), repeat=2))
            pairs = dict.fromkeys((p for p in found if _SEP not in p), "")  # not the separator's
            for token in self._invalid:
                self._add_invalid(token, pairs)
            # A vocabulary full of tokens that join the end of one character to the start of
            # the next (like a vocabulary of all byte pairs) leaves nothing to cut.
            self.enabled = len(self._partial_pairs) <= MAX_PARTIAL_PAIRS
            self._heads = {s for s, _ in self._partial_pairs}
            self._tails = {p for _, p in self._partial_pairs}
            self._base_pairs = dict(pairs)
            self._pairs = pairs
            return pairs

    def _add_invalid(self, token: bytes, pairs: dict[tuple[str, str], str]) -> None:
        i = 0
        while i < len(token) and 0x80 <= token[i] < 0xC0:
            i += 1
        end = len(token)
        j = end - 1
        while j >= i and 0x80 <= token[j] < 0xC0:
            j -= 1
        if j >= i and token[j] >= 0xC0 and _lead_len(token[j]) > end - j:
            end = j
        head, tail = token[:i], token[end:]
        if i > 3:
            return  # four continuation bytes in a row never occur in valid UTF-8
        try:
            middle = token[i:end].decode("utf-8")
        except UnicodeDecodeError:
            return  # not a substring of any valid UTF-8 text, so never met
        if len(middle) > 1:
            pairs.update(dict.fromkeys(zip(middle, middle[1:]), ""))
        if head and middle:
            self._after_suffix.setdefault(head, set()).add(middle[0])
        if tail and middle:
            self._before_prefix.setdefault(tail, set()).add(middle[-1])
        if head and tail and not middle:
            self._partial_pairs.add((head, tail))

    def _register(self, ch: str, pairs: dict[tuple[str, str], str]) -> None:
        data = ch.encode("utf-8", "surrogatepass")
        ends, starts = [], []
        for k in range(1, len(data)):
            suffix, prefix = data[k:], data[:k]
            for d in self._after_suffix.get(suffix, ()):
                pairs[ch, d] = ""
            for c in self._before_prefix.get(prefix, ()):
                pairs[c, ch] = ""
            if suffix in self._heads:
                ends.append(suffix)
            if prefix in self._tails:
                starts.append(prefix)
        if ends:
            self._ends_partial[ch] = tuple(ends)
        if starts:
            self._starts_partial[ch] = tuple(starts)
        self._seen.add(ch)

    def _keep_partial_spans(self, joined: str, marks: list[str]) -> None:
        """Undo the cuts that a token "end of one character + start of the next" spans.

        Such tokens start a character with one of a few byte prefixes P and end the character
        before with one of a few continuation bytes S; one regex scan finds the boundaries
        where both could be the case (the characters starting with P form a few code point
        ranges; those ending with S, by their low six bits, a class that `re` keeps as a
        bitmap, plus every astral character to be safe), and the tables decide.
        """
        rx = self._partial_start_rx
        if rx is None:
            ranges = sorted(_prefix_range(p) for p in self._tails)
            starts = "".join(f"{_esc(lo)}-{_esc(hi)}" for lo, hi in ranges)
            low_bits = {s[-1] & 0x3F for s in self._heads}
            ends = "".join(_esc(cp) for cp in range(0x80, 0x10000) if cp & 0x3F in low_bits)
            rx = self._partial_start_rx = re.compile(f"(?<=[{ends}{_esc(0x10000)}-{_esc(0x10FFFF)}])[{starts}]")
        ends_partial, starts_partial = self._ends_partial, self._starts_partial
        for m in rx.finditer(joined, 1):
            k = m.start()
            if joined[k - 1] in ends_partial and joined[k] in starts_partial and self._partial_spans(joined, k):
                marks[k - 1] = ""

    def _partial_spans(self, text: str, k: int) -> bool:
        """Whether a token S + P spans the boundary before text[k] (both chars are listed)."""
        sp = self._partial_pairs
        return any((s, p) in sp for s in self._ends_partial[text[k - 1]] for p in self._starts_partial[text[k]])

    def refine(self, pieces: list[str], misses: list[int],
               mark: AbstractSet[str] = frozenset()) -> tuple[list[str], list[str]] | None:
        """Cut the pieces at positions `misses` wherever no token can span the boundary.

        Returns the new piece list (each cut piece replaced by its segments) and the list of
        the segments that came from cuts (with a separator after each cut piece's), or None if
        nothing could be cut.  Segments in `mark` appear in the new piece list followed by the
        separator character (the caller's cue that they are not to be looked up as tokens).
        """
        pairs = self._pairs
        if pairs is None:
            pairs = self._build()
        if not self.enabled:
            return None
        missed = list(map(pieces.__getitem__, misses))
        joined = _SEP.join(missed)
        # Iterating a str makes a new object for every character outside Latin-1, hashed
        # anew each time: make them once (their hashes are then cached) for the passes below.
        chars = list(joined)
        new = set(chars).difference(self._seen)
        if new:
            new.discard(_SEP)
            with self._lock:
                if len(self._seen) + len(new) > MAX_SEEN:
                    # Registering a character adds pairs for it; after very many distinct
                    # characters (a sweep over all of Unicode) start afresh to bound memory.
                    pairs = self._pairs = dict(self._base_pairs)
                    self._seen.clear()
                    self._ends_partial.clear()
                    self._starts_partial.clear()
                    new = set(chars)
                    new.discard(_SEP)
                for ch in new:
                    self._register(ch, pairs)
        # marks[k] goes between joined[k] and joined[k + 1]: _CUT where no token can span the
        # boundary, else "".  Around each separator it is always _CUT, so every missed piece
        # starts and ends a segment (and each separator is a segment of its own).
        marks = list(map(pairs.get, zip(chars, islice(chars, 1, None)), repeat(_CUT)))
        if self._partial_pairs:
            self._keep_partial_spans(joined, marks)
        marks.append("")
        segs = "".join(chain.from_iterable(zip(chars, marks))).split(_CUT)
        if len(segs) == 2 * len(missed) - 1:
            return None  # only the cuts around the separators
        parts = [seg + _SEP if seg in mark else seg for seg in segs] if mark else segs
        if len(misses) == len(pieces):
            return list(filter(_SEP.__ne__, parts)), segs  # every piece was cut: no merging back
        seps = list(compress(count(), map(_SEP.__eq__, parts)))
        starts = [0, *[k + 1 for k in seps]]
        ends = [*seps, len(parts)]
        out: list[str] = []
        prev = 0
        for i, a, b in zip(misses, starts, ends):
            out += pieces[prev:i]
            out += parts[a:b]
            prev = i + 1
        out += pieces[prev:]
        return out, segs
