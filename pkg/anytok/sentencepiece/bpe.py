"""SentencePiece's BPE model (`bpe_model.cc`): merges ordered by the score of the merged piece.

Not Hugging Face's merge list: there is no list of merges, only pieces with scores.  The rule:

1. Split the normalized text into symbols: a user-defined piece (longest, at each position
   from the left) is one symbol and *frozen* (never merged); anything else is one character.
2. Repeatedly merge the adjacent pair of unfrozen symbols whose concatenation is a piece
   (NORMAL, USER_DEFINED or UNUSED) of highest score, the leftmost on a tie.
3. A symbol that is an UNUSED piece is split back into the two symbols it was last made from
   (recursively); then every symbol becomes `PieceToId(symbol)`: control/unknown/byte pieces
   first, then the others, else the unknown id.
4. As for every model (`PopulateSentencePieceText`): with byte fallback an unknown symbol
   becomes the byte pieces `<0xNN>` of its UTF-8; without, a run of unknowns becomes one.

`encode_reference` is that, literally, over the whole text (a heap of candidate pairs with
lazy deletion, as the C++ does).  `tokenize` gives the same ids faster:

* A merge can only join two symbols across a boundary between characters `a` and `b` if some
  piece contains `ab`.  Boundaries that no piece spans split the text into independent words
  (the relative order of the merges inside a word does not depend on the other words).  When no
  piece has U+2581 after another character (as in every model trained with
  `split_by_whitespace`), a new word starts at each U+2581 that follows another character; long
  words (CJK runs have no U+2581) are cut further at every character pair that no piece
  contains.  Frozen symbols are boundaries too.
* Words are merged by a list scan when short and with a heap when long, and cached.
* Step 3's "last made from" is global to the call, so a model with UNUSED pieces uses
  `encode_reference` (no released model we know of has them in BPE).
"""

from __future__ import annotations

import heapq
import re
from typing import Sequence

from ..bpe import merge_bounds
from ..errors import UnsupportedTokenizerError
from .model_proto import PieceVocab, collapse_unknowns, UNUSED, USER_DEFINED, piece_tables
from .unigram import byte_piece

__all__ = ["BPEModel"]

SPACE = "\u2581"
_NONE = float("-inf")
LIST_MAX = 24  # words up to this many characters use the list merge
LONG_WORD = 48  # words longer than this are cut at boundaries no piece spans
CACHE_SIZE = 1 << 16


class BPEModel(PieceVocab):
    """SentencePiece BPE over `pieces` / `scores` / `types` (ids are list positions)."""

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int],
        *,
        unk_id: int,
        byte_fallback: bool = False,
    ):
        self.pieces = list(pieces)
        self.scores = list(scores)
        self.types = list(types)
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        normal, reserved = piece_tables(self.pieces, self.types)
        self._reserved = reserved
        self._normal = normal
        # PieceToId for every string that can be a final symbol: reserved pieces win.
        self._ids = {**normal, **reserved}
        self._merge_score = {p: self.scores[i] for p, i in normal.items()}
        self._merge_priority = {p: -score for p, score in self._merge_score.items()}
        self.has_unused = any(t == UNUSED for t in self.types)
        self.user_defined = sorted((p for p, t in zip(self.pieces, self.types) if t == USER_DEFINED),
                                   key=lambda s: (-len(s.encode("utf-8")), s))
        self._ud_re = (re.compile("|".join(map(re.escape, self.user_defined)))
                       if self.user_defined else None)
        # Character pairs that occur inside some piece: a boundary elsewhere is never merged.
        bigrams = set()
        for p in normal:
            for k in range(len(p) - 1):
                bigrams.add(p[k : k + 2])
        self._bigrams = bigrams
        self._word_re = (re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
                         if not any(b[1] == SPACE and b[0] != SPACE for b in bigrams) else None)
        self._cache: dict[str, list[int]] = {}
        self._byte_ids = [self.token_to_id(byte_piece(b)) for b in range(256)] if byte_fallback else None
        if byte_fallback and None in self._byte_ids:
            raise UnsupportedTokenizerError("trainer_spec.byte_fallback: there are not 256 byte pieces")

    # -- the reference ------------------------------------------------------------------------

    def _symbols(self, text: str) -> list[tuple[str, bool]]:
        """Step 1: (symbol, frozen) pairs."""
        out = []
        pos = 0
        n = len(text)
        ud = self.user_defined
        while pos < n:
            for s in ud:
                if text.startswith(s, pos):
                    out.append((s, True))
                    pos += len(s)
                    break
            else:
                out.append((text[pos], False))
                pos += 1
        return out

    def encode_reference(self, text: str, merge_unknowns: bool = True) -> list[int]:
        """bpe_model.cc's `SampleEncode(text, alpha=0)`, then the unknown handling
        (`merge_unknowns=False`: one unknown id per unknown character, for spans.py)."""
        symbols = self._symbols(text)
        if not symbols:
            return []
        pieces = [s for s, _ in symbols]
        frozen = [f for _, f in symbols]
        n = len(pieces)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        scores = self._merge_score
        unused = self._normal if self.has_unused else {}
        types = self.types
        rev_merge: dict[str, tuple[str, str]] = {}
        heap: list[tuple[float, int, int, int]] = []

        def add(left: int, right: int) -> None:
            if left == -1 or right == -1 or frozen[left] or frozen[right]:
                return
            piece = pieces[left] + pieces[right]
            score = scores.get(piece)
            if score is None:
                return
            heapq.heappush(heap, (-score, left, right, len(piece)))
            if unused and types[unused[piece]] == UNUSED:
                rev_merge[piece] = (pieces[left], pieces[right])

        for i in range(1, n):
            add(i - 1, i)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            lp, rp = pieces[left], pieces[right]
            if not lp or not rp or len(lp) + len(rp) != size:
                continue
            pieces[left] = lp + rp
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            pieces[right] = ""
            add(prev[left], left)
            add(left, nxt[left])

        ids = self._ids
        unk = self.unk_id
        final: list[tuple[str, int]] = []

        def resegment(w: str) -> None:
            i = ids.get(w, unk)
            if types[i] != UNUSED or w not in rev_merge:
                final.append((w, i))
                return
            a, b = rev_merge[w]
            resegment(a)
            resegment(b)

        i = 0
        while i != -1:
            resegment(pieces[i])
            i = nxt[i]
        if self.byte_fallback:
            out: list[int] = []
            for w, i in final:
                if i == unk:
                    out.extend(self._byte_ids[b] for b in w.encode("utf-8"))
                else:
                    out.append(i)
            return out
        ids = [i for _, i in final]
        return self._unknowns(ids) if merge_unknowns else ids

    def _unknowns(self, ids: list[int]) -> list[int]:
        """Without byte fallback: a run of unknown ids becomes one."""
        return collapse_unknowns(ids, self.unk_id)

    # -- the fast path ------------------------------------------------------------------------

    def _merge_list(self, word: str) -> list[str]:
        get = self._merge_score.get
        parts = list(word)
        pair = [get(a + b, _NONE) for a, b in zip(parts, parts[1:])]
        while pair:
            best = max(pair)
            if best == _NONE:
                break
            i = pair.index(best)  # leftmost highest
            parts[i] += parts[i + 1]
            del parts[i + 1]
            del pair[i]
            if i < len(pair):
                pair[i] = get(parts[i] + parts[i + 1], _NONE)
            if i:
                pair[i - 1] = get(parts[i - 1] + parts[i], _NONE)
        return parts

    def _merge_heap(self, word: str) -> list[str]:
        # tiktoken's heap loop (anytok.bpe.merge_bounds) with the negated scores as priorities:
        # the highest score first, the leftmost on ties, as sentencepiece's BPE model merges.
        bounds = merge_bounds(word, self._merge_priority.get)
        return [word[a:b] for a, b in zip(bounds, bounds[1:])]

    def _word_ids(self, word: str) -> list[int]:
        """Ids of one independent word (before the unknown-run merge)."""
        if len(word) > LONG_WORD:
            out: list[int] = []
            for seg in self._cut(word):
                out.extend(self._segment_ids(seg))
            return out
        return self._segment_ids(word)

    def _cut(self, word: str) -> list[str]:
        bigrams = self._bigrams
        segs = []
        start = 0
        for i in range(1, len(word)):
            if word[i - 1 : i + 1] not in bigrams:
                segs.append(word[start:i])
                start = i
        segs.append(word[start:])
        return segs

    def _segment_ids(self, seg: str) -> list[int]:
        cache = self._cache
        ids = cache.get(seg)
        if ids is not None:
            return ids
        parts = self._merge_list(seg) if len(seg) <= LIST_MAX else self._merge_heap(seg)
        get = self._ids.get
        unk = self.unk_id
        ids = []
        if self.byte_fallback:
            byte_ids = self._byte_ids
            for p in parts:
                i = get(p, unk)
                if i == unk:
                    ids.extend(byte_ids[b] for b in p.encode("utf-8"))
                else:
                    ids.append(i)
        else:
            ids = [get(p, unk) for p in parts]
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        cache[seg] = ids
        return ids

    def _chunk_ids(self, text: str, out: list[int]) -> None:
        # `text` holds no user-defined piece.
        if self._word_re is None:
            words = [text]
        else:
            words = self._word_re.findall(text)
        cache = self._cache
        for w in words:
            ids = cache.get(w)
            if ids is None:
                ids = self._word_ids(w)
                if len(w) > LONG_WORD:
                    if len(cache) >= CACHE_SIZE:
                        cache.clear()
                    cache[w] = ids
            out.extend(ids)

    def tokenize(self, text: str, merge_unknowns: bool = True) -> list[int]:
        """The ids of normalized `text`, as sentencepiece's BPE model gives them
        (`merge_unknowns=False`: one unknown id per unknown character, for spans.py)."""
        if not text:
            return []
        if self.has_unused:
            return self.encode_reference(text, merge_unknowns)
        out: list[int] = []
        if self._ud_re is None:
            self._chunk_ids(text, out)
        else:
            pos = 0
            ids = self._ids
            for m in self._ud_re.finditer(text):
                if m.start() > pos:
                    self._chunk_ids(text[pos : m.start()], out)
                out.append(ids[m.group()])
                pos = m.end()
            if pos < len(text):
                self._chunk_ids(text[pos:], out)
        if not self.byte_fallback and merge_unknowns:
            return self._unknowns(out)
        return out
