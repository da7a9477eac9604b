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
  starts the rest of the token, or c ends the token's middle and d starts with P; a token
  that is exactly S + P spans c|d if c ends with S and d starts with P.  The first two
  relations are added to `_pairs` when a character is first seen (`_register`, for all the new
  characters of a text at once); for S + P, the characters seen that start with P are noted,
  and `refine` looks at the character before each of them in the text.

A boundary is cut only if no relation says a token may span it, so cutting never changes the
result; `tests/test_segment.py` checks that on the corpora.
"""

from __future__ import annotations

import operator
import sys
import threading
import zlib
from array import array
from itertools import accumulate, chain, compress, count, filterfalse, islice, product, repeat
from typing import AbstractSet

_SEP = "\ud800"  # never inside a token's text (valid UTF-8 decodes to no surrogates)
_CUT = "\ud801"  # marks a cut while segmenting (text reaching the segmenter has no surrogates)
_JOIN = "\U0010ffff"  # joins the token texts whose adjacent pairs are collected (see _build)

# Above this many tokens of the form "end of a character + start of the next", cutting is off.
MAX_PARTIAL_PAIRS = 256
# Distinct characters registered before the per-character pairs are dropped and rebuilt.
MAX_SEEN = 1 << 16


def _lead_len(b: int) -> int:
    return 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4


def _adjacent_pairs(text: str) -> set[tuple[str, str]]:
    """The distinct pairs of adjacent characters of `text`.

    Zipping a str with itself makes a new object for every character outside Latin-1 and a
    tuple for every position (~0.1 s for the 360k characters of o200k's non-ASCII tokens).
    Here each pair is first one 64-bit integer (two UTF-32 code units read as one: pairs at
    even positions from the text's UTF-32, at odd ones from it shifted by one unit), so the
    set of distinct pairs is made at C speed, and only the distinct pairs become tuples.
    """
    data = text.encode("utf-32-le")
    n = len(text)
    keys = array("Q", data[: 8 * (n // 2)])
    odd = array("Q", data[4 : 4 + 8 * ((n - 1) // 2)])
    if sys.byteorder == "big":
        keys.byteswap()
        odd.byteswap()
    distinct = set(keys)
    distinct.update(odd)
    firsts = list(map(chr, map(operator.and_, distinct, repeat(0xFFFFFFFF))))
    seconds = list(map(chr, map(operator.rshift, distinct, repeat(32))))
    return set(zip(firsts, seconds))


def token_pairs(token_texts) -> set[tuple[str, str]]:
    """The pairs of adjacent characters inside the tokens that have a non-ASCII character: what
    `Segmenter` starts from (~50 ms for o200k_base; build_scripts/convert_openai.py ships them
    for the bundled vocabularies, see `pairs_to_bytes`)."""
    # The texts joined by a character that is in none of them (checked by counting), whose
    # pairs are then dropped.
    texts = list(filterfalse(str.isascii, token_texts))
    joined = _JOIN.join(texts)
    if joined.count(_JOIN) == max(len(texts) - 1, 0):
        found = _adjacent_pairs(joined)
        found.difference_update([pair for pair in found if _JOIN in pair])
        return found
    joined = _SEP.join(texts)
    return {p for p in zip(joined, islice(joined, 1, None)) if _SEP not in p}


PAIRS_MAGIC = b"anytok segment pairs 1\n"


def pairs_to_bytes(pairs: set[tuple[str, str]], fingerprint: int) -> bytes:
    """`pairs` (of `token_pairs`) as a file: a header naming the vocab file they were made from
    (`fingerprint`: the CRC-32 of its bytes), then the pairs' characters, sorted, zlib'd UTF-8."""
    text = "".join(c + d for c, d in sorted(pairs))
    return PAIRS_MAGIC + b"%08x\n" % fingerprint + zlib.compress(text.encode("utf-8"), 9)


def pairs_from_bytes(data: bytes, fingerprint: int) -> set[tuple[str, str]] | None:
    """The pairs of a `pairs_to_bytes` file, or None if it was made from another vocab file."""
    head = PAIRS_MAGIC + b"%08x\n" % fingerprint
    if not data.startswith(head):
        return None
    text = zlib.decompress(data[len(head) :]).decode("utf-8")
    return set(zip(text[0::2], text[1::2]))


class Segmenter:
    def __init__(self, token_texts, invalid_tokens, pairs_source=None):
        """`token_texts`: the texts of all valid UTF-8 tokens; `invalid_tokens`: the others' bytes;
        `pairs_source`: None, or a function giving `token_pairs(token_texts)` from a file made
        beforehand (or None, if there is none)."""
        self._texts = token_texts
        self._invalid = invalid_tokens
        self._pairs_source = pairs_source
        # (c, d) -> "" for every pair of characters a token may span; a dict so that a lookup
        # with default _CUT gives the text to put between c and d directly.
        self._pairs: dict[tuple[str, str], str] | None = None
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        # Relations from tokens that start or end inside a character (see module docstring).
        self._after_suffix: dict[bytes, set[str]] = {}  # S -> chars that can follow c...S
        self._before_prefix: dict[bytes, set[str]] = {}  # P -> chars that can precede P...d
        # Tokens that are exactly S + P (the end of one character and the start of the next).
        self._partial_pairs: set[tuple[bytes, bytes]] = set()
        # Seen characters d that start with the P of such a token -> the S of those tokens
        # (a c before d that ends with one of them may be spanned: checked in `refine`).
        self._partial_next: dict[str, tuple[bytes, ...]] = {}
        self.enabled = True

    def _build(self) -> set[str]:
        with self._lock:
            if self._pairs is not None:
                return self._pairs
            invalid_pairs: dict[tuple[str, str], str] = {}
            for token in self._invalid:
                self._add_invalid(token, invalid_pairs)
            # A vocabulary full of tokens that join the end of one character to the start of
            # the next (like a vocabulary of all byte pairs) leaves nothing to cut.
            self.enabled = len(self._partial_pairs) <= MAX_PARTIAL_PAIRS
            found = None
            if self.enabled and self._pairs_source is not None:
                found = self._pairs_source()
            if found is None:
                found = token_pairs(self._texts) if self.enabled else set()
            found.update(product(map(chr, range(128)), repeat=2))
            pairs = dict.fromkeys(found, "")
            pairs.update(invalid_pairs)
            self._tails: dict[bytes, tuple[bytes, ...]] = {}  # P -> the S of each token S + P
            for s, p in sorted(self._partial_pairs):
                self._tails[p] = self._tails.get(p, ()) + (s,)
            # The keys of the relations above (what `_register` looks characters up by).
            self._suffix_keys = frozenset(self._after_suffix)
            self._prefix_keys = frozenset(self._before_prefix).union(self._tails)
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

    def _register(self, chars, pairs: dict[tuple[str, str], str], nxt: dict[str, tuple[bytes, ...]]) -> None:
        """Add the pairs that the tokens which start or end inside a character (see the module
        docstring) make with `chars`, characters not seen before, and mark them seen.

        The same pairs as registering the characters one at a time: for each character, the
        proper suffixes S of its UTF-8 (continuation bytes) and its proper prefixes P (an
        incomplete sequence) are looked up.  Done a suffix / prefix length at a time over all
        the characters, at C level: only the characters whose S or P is a key of a relation
        (a few dozen keys) are grouped by it, and each group's pairs are added at once.
        """
        chars = list(chars)
        datas = list(map(str.encode, chars, repeat("utf-8"), repeat("surrogatepass")))
        longest = max(map(len, datas), default=0)
        # S -> the characters ending with S (their UTF-8 longer than S), for the keys of
        # _after_suffix; P -> those starting with P, for _before_prefix and _tails.
        # (A character no longer than j has a lead or ASCII byte in its last j bytes and is
        # complete in its first j, so it never matches such a key: no length test needed.)
        ending = self._group(chars, datas, longest, self._suffix_keys, lambda j: slice(-j, None))
        starting = self._group(chars, datas, longest, self._prefix_keys, lambda j: slice(None, j))
        for suffix, group in ending.items():
            after = self._after_suffix.get(suffix)
            if after:
                pairs.update(dict.fromkeys(product(group, after), ""))
        for prefix, group in starting.items():
            before = self._before_prefix.get(prefix)
            if before:
                pairs.update(dict.fromkeys(product(before, group), ""))
        # A token S + P spans c|d for every c that ends with S and every d that starts with P.
        # Those pairs are not added: one new character d would pair with every character seen
        # that ends with S (a 64th of them), which made a sweep over all of Unicode add ten
        # pairs a character.  The d are few (those starting with some P); `refine` checks the
        # character before each of them in the text.  (`nxt`: _partial_next, as `pairs` is
        # _pairs: the tables of the same generation, see refine.)
        for prefix, tails in self._tails.items():
            for d in starting.get(prefix, ()):
                nxt[d] = nxt.get(d, ()) + tails
        self._seen.update(chars)

    @staticmethod
    def _group(chars: list[str], datas: list[bytes], longest: int, keys: AbstractSet[bytes],
               part) -> dict[bytes, list[str]]:
        """key -> the characters whose UTF-8's `part(j)` slice (j = 1 .. longest - 1) is key."""
        groups: dict[bytes, list[str]] = {}
        if not keys:
            return groups
        for j in range(1, longest):
            cut = list(map(operator.itemgetter(part(j)), datas))
            hit = list(map(keys.__contains__, cut))
            if True in hit:
                for key, ch in compress(zip(cut, chars), hit):
                    group = groups.get(key)
                    if group is None:
                        groups[key] = [ch]
                    else:
                        group.append(ch)
        return groups

    def refine(self, pieces: list[str], misses: list[int], mark: AbstractSet[str] = frozenset(),
               separators: bool = True) -> tuple[list[str], list[str]] | None:
        """Cut the pieces at positions `misses` wherever no token can span the boundary.

        Returns the new piece list (each cut piece replaced by its segments) and the list of
        the segments that came from cuts (with a separator after each cut piece's, unless
        `separators` is false), or None if nothing could be cut.  Segments in `mark` appear in
        the new piece list followed by the separator character (the caller's cue that they are
        not to be looked up as tokens).
        """
        pairs = self._pairs
        if pairs is None:
            pairs = self._build()
        if not self.enabled:
            return None
        missed = list(map(pieces.__getitem__, misses))
        # When every piece is cut (count's case) and the caller needs no separators, the
        # pieces are joined as they are and the cuts between them set below; otherwise
        # separators keep track of them.
        every = not separators and len(misses) == len(pieces)
        joined = "".join(missed) if every else _SEP.join(missed)
        # Iterating a str makes a new object for every character outside Latin-1, hashed
        # anew each time: make them once (their hashes are then cached) for the passes below.
        chars = list(joined)
        distinct = set(chars)
        new = distinct.difference(self._seen)
        nxt = self._partial_next
        if new:
            new.discard(_SEP)
            with self._lock:
                if len(self._seen) + len(new) > MAX_SEEN:
                    # Registering a character adds pairs for it; after very many distinct
                    # characters (a sweep over all of Unicode) start afresh to bound memory.
                    pairs = self._pairs = dict(self._base_pairs)
                    self._seen.clear()
                    nxt = self._partial_next = {}
                    new = set(chars)
                    new.discard(_SEP)
                self._register(new, pairs, nxt)
        # marks[k] goes between joined[k] and joined[k + 1]: _CUT where no token can span the
        # boundary, else "".  Around each separator it is always _CUT, so every missed piece
        # starts and ends a segment (and each separator is a segment of its own).
        marks = list(map(pairs.get, zip(chars, islice(chars, 1, None)), repeat(_CUT)))
        marks.append("")
        if nxt:
            # A token S + P spans c|d where d starts with P and c ends with S (the pairs are
            # not in `pairs`, see _register): each d of the text, each c before it.  (Entries
            # are only ever added to a generation's `nxt`, so a hit stays one.)
            for d in list(filter(nxt.__contains__, distinct)):
                tails = nxt[d]
                k = joined.find(d, 1)
                while k > 0:
                    c = chars[k - 1]
                    if c != _SEP and c.encode("utf-8", "surrogatepass").endswith(tails):
                        marks[k - 1] = ""
                    k = joined.find(d, k + 1)
        if every:
            for k in accumulate(map(len, missed[:-1])):
                marks[k - 1] = _CUT
            segs = "".join(chain.from_iterable(zip(chars, marks))).split(_CUT)
            if len(segs) == len(missed):
                return None  # only the cuts between the pieces
            return ([seg + _SEP if seg in mark else seg for seg in segs] if mark else segs), segs
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
