"""The Unigram model: the segmentation of highest total piece score (Viterbi).

Two flavours of the same algorithm, which differ in details that change ids:

* **sentencepiece** (`unigram_model.cc`, `Model::EncodeOptimized`, the encoder the library
  uses).  Positions are characters; for each start position, in order, every piece that is a
  prefix of the rest is a candidate for the best path ending where it ends:
  `candidate = score(piece) + best[start]`, taken when that end has no best yet or when
  `candidate > best[end]` (so on a tie the earlier start, the longer piece, stays).
  - `best[]` is an array of C `float`: every stored path score is rounded to float32.  The
    candidate itself is computed in double for vocabulary pieces (their score expression is a
    double) but in float for the unknown piece.  On long inputs the accumulated score is large
    and float32 steps are coarse, so this rounding decides real ties; it is reproduced exactly
    here with an `array('f')`.
  - UNUSED pieces are never candidates.  USER_DEFINED pieces score
    `float(bytes(piece) * max_score) - 0.1`, `max_score` being the largest NORMAL score but
    at least FLT_MIN; so on these models a user-defined piece always wins.
  - A start position with no one-character candidate gets the unknown piece over one
    character, scored `float(min_score - 10)` (`min_score` over NORMAL pieces).
  - Afterwards (`SentencePieceProcessor::PopulateSentencePieceText`): with byte fallback an
    unknown piece becomes the byte pieces `<0xNN>` of its UTF-8; without, a run of unknown
    pieces becomes one unknown id.
* **Hugging Face** (`tokenizers/src/models/unigram/model.rs`, `encode_optimized`), `hf=True`:
  the same loop with float64 scores and no rounding; every vocabulary entry is a candidate
  (there are no piece types); `min_score` is over the whole vocabulary; runs of unknown pieces
  are fused into one string first; each resulting string is then looked up again (duplicates:
  the last id), and a string that is not in the vocabulary becomes its byte pieces when byte
  fallback is on and all of them exist, else the unknown id.

Both are O(n * L) for n characters and pieces of at most L characters: one dict lookup per
candidate prefix, stopping as soon as the text so far is no prefix of any piece.
"""

from __future__ import annotations

import re
from array import array
from math import frexp, ldexp
from typing import Sequence

from ..errors import UnsupportedTokenizerError
from .model_proto import NORMAL, UNUSED, USER_DEFINED, collapse_unknowns, piece_tables

__all__ = ["UnigramModel", "byte_piece", "from_config"]

FLT_MAX = 3.4028234663852886e38
FLT_MIN = 1.1754943508222875e-38
UNK_PENALTY = 10.0

# Marks a string that is a proper prefix of a piece but not a piece itself.
_PREFIX = None
_NEG = float("-inf")
_NEG_INF = array("f", [_NEG])
_UNCACHEABLE = object()
_SEEN = object()
SPACE = "\u2581"
LONG_SEGMENT = 64  # longer segments (CJK runs, ...) are searched, not cached
CACHE_SIZE = 1 << 16


def f32(x: float) -> float:
    """Round a Python float to the nearest float32 (as a C `(float)` cast)."""
    return array("f", (x,))[0]


def byte_piece(b: int) -> str:
    return f"<0x{b:02X}>"


class UnigramModel:
    """A Unigram model over `pieces` (ids are list positions) and their `scores`.

    `types` are SentencePiece piece types (default: all NORMAL).  `tokenize(text)` takes text
    that is already normalized (sentencepiece) or pre-tokenized (Hugging Face) and returns ids.
    """

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int] | None = None,
        *,
        unk_id: int | None,
        byte_fallback: bool = False,
        hf: bool = False,
    ):
        if len(pieces) != len(scores) or (types is not None and len(types) != len(pieces)):
            raise ValueError("pieces, scores and types must have the same length")
        self.pieces = list(pieces)
        self.scores = list(scores)
        self.types = list(types) if types is not None else [NORMAL] * len(self.pieces)
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.hf = hf
        if hf:
            self._init_hf()
        else:
            self._init_sp()

    # -- vocabulary ---------------------------------------------------------------------------

    kind = "Unigram"

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    @property
    def _ids(self) -> list[str]:
        # id -> piece, the attribute the Hugging Face pipeline reads from every model
        return self.pieces

    def id_to_token(self, i: int) -> str | None:
        return self.pieces[i] if 0 <= i < len(self.pieces) else None

    def to_config(self) -> dict:
        """tokenizer.json's model section (Hugging Face semantics: `hf=True`)."""
        return {"type": "Unigram", "unk_id": self.unk_id,
                "vocab": [[p, s] for p, s in zip(self.pieces, self.scores)],
                "byte_fallback": self.byte_fallback}

    def token_to_id(self, piece: str) -> int | None:
        """The id of `piece` (None when absent): for sentencepiece control, unknown and byte
        pieces first, as `PieceToId` does."""
        if self.hf:
            return self._hf_ids.get(piece)
        i = self._reserved.get(piece)
        if i is None:
            i = self._normal.get(piece)
        return i

    # -- sentencepiece ------------------------------------------------------------------------

    def _init_sp(self) -> None:
        normal, reserved = piece_tables(self.pieces, self.types)
        self._reserved = reserved
        self._normal = normal
        normal_scores = [s for s, t in zip(self.scores, self.types) if t == NORMAL]
        min_score = min(normal_scores, default=FLT_MAX)
        max_score = max(normal_scores + [FLT_MIN])
        self.min_score = min_score
        self.max_score = max_score
        self.unk_score = f32(min_score - UNK_PENALTY)
        if self.unk_id is None:
            raise UnsupportedTokenizerError("unk is not defined (no UNKNOWN piece)")
        table: dict[str, object] = {}
        max_len = 0
        for i, (p, s, t) in enumerate(zip(self.pieces, self.scores, self.types)):
            if t == UNUSED:
                info = _PREFIX  # not a candidate, but longer pieces may pass through it
            elif t == USER_DEFINED:
                info = (i, f32(len(p.encode("utf-8")) * max_score) - 0.1)
            elif t == NORMAL:
                info = (i, s)
            else:
                continue
            _add(table, p, info)
            max_len = max(max_len, len(p))
        self._table = table
        self.max_piece_chars = max_len
        # Segments: a new one starts at each U+2581 after another character, unless some
        # candidate piece has U+2581 after another character (then no candidate can span such
        # a boundary; unknown pieces are single characters).
        space_inside = any(SPACE in p.lstrip(SPACE) for p, v in table.items() if v is not _PREFIX)
        self._word_re = None if space_inside else re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
        self._cache: dict[str, object] = {}
        user_bonus = [v[1] for v in table.values() if v is not _PREFIX]
        self._max_abs_score = max(map(abs, user_bonus + [self.unk_score]))

    def viterbi(self, text: str, start_score: float = 0.0) -> tuple[list[tuple[int, int, int, float]], float]:
        """sentencepiece's best path over `text`, with the path score starting at the float32
        `start_score`: ([(start, end, id, score), ...], final float32 path score).  Unknown
        pieces are one character each, with the unknown id and score."""
        n = len(text)
        if not n:
            return [], start_score
        get = self._table.get
        best = array("f", _NEG_INF) * (n + 1)  # -inf: "no path yet", beaten by any candidate
        best[0] = start_score
        start = [-1] * (n + 1)
        node = [None] * (n + 1)  # the (id, score) of the best candidate ending here
        unk = (self.unk_id, self.unk_score)
        unk_score = self.unk_score
        scratch = array("f", b"\0\0\0\0")
        i = 0
        for ch in text:
            till = best[i]
            e = i + 1
            info = get(ch, 0)
            if info == 0 or info is _PREFIX:
                # No one-character piece here: the unknown piece (float + float in C: rounded).
                scratch[0] = unk_score + till
                cand = scratch[0]
                if cand > best[e]:
                    best[e] = cand
                    start[e] = i
                    node[e] = unk
                if info == 0:
                    i = e
                    continue
            else:
                cand = info[1] + till
                if cand > best[e]:
                    best[e] = cand
                    start[e] = i
                    node[e] = info
            e += 1
            while e <= n:
                info = get(text[i:e], 0)
                if info == 0:
                    break
                if info is not _PREFIX:
                    cand = info[1] + till
                    if cand > best[e]:
                        best[e] = cand
                        start[e] = i
                        node[e] = info
                e += 1
            i += 1
        path = []
        e = n
        while e > 0:
            s = start[e]
            path.append((s, e, *node[e]))
            e = s
        path.reverse()
        return path, best[n]

    def _exact(self, text: str) -> tuple[list[tuple[int, int, int, float]], float, float]:
        """The same search in exact (double) arithmetic from 0: (path, tolerance, bound).

        `bound` bounds the magnitude of every score stored or compared, relative to the
        segment's start.  `tolerance`: the smallest, over end positions e, of
        gap(e) / (depth(e) + 1), where gap(e) is how much the best candidate ending at e beats
        the second best, and depth(e) the largest number of pieces on the best path to the
        start of any candidate ending at e (see _tokenize_sp)."""
        n = len(text)
        get = self._table.get
        best = [_NEG] * (n + 1)
        second = [_NEG] * (n + 1)
        best[0] = 0.0
        start = [-1] * (n + 1)
        ids = [0] * (n + 1)
        scores = [0.0] * (n + 1)
        depth = [0] * (n + 1)  # pieces on the best path to each position
        deepest = [0] * (n + 1)  # largest depth of a candidate's start, per end position
        unk_id = self.unk_id
        unk_score = self.unk_score
        i = 0
        for ch in text:
            till = best[i]
            d = depth[i]
            e = i + 1
            info = get(ch, 0)
            if info == 0 or info is _PREFIX:
                c = unk_score + till
                if d > deepest[e]:
                    deepest[e] = d
                if c > best[e]:
                    second[e] = best[e]
                    best[e] = c
                    start[e] = i
                    ids[e] = unk_id
                    scores[e] = unk_score
                elif c > second[e]:
                    second[e] = c
                if info == 0:
                    depth[e] = depth[start[e]] + 1
                    i = e
                    continue
            else:
                c = info[1] + till
                if d > deepest[e]:
                    deepest[e] = d
                if c > best[e]:
                    second[e] = best[e]
                    best[e] = c
                    start[e] = i
                    ids[e] = info[0]
                    scores[e] = info[1]
                elif c > second[e]:
                    second[e] = c
            e += 1
            while e <= n:
                info = get(text[i:e], 0)
                if info == 0:
                    break
                if info is not _PREFIX:
                    c = info[1] + till
                    if d > deepest[e]:
                        deepest[e] = d
                    if c > best[e]:
                        second[e] = best[e]
                        best[e] = c
                        start[e] = i
                        ids[e] = info[0]
                        scores[e] = info[1]
                    elif c > second[e]:
                        second[e] = c
                e += 1
            i += 1
            # every candidate ending at i started before it: its best path is final now
            depth[i] = depth[start[i]] + 1
        tolerance = min((best[e] - second[e]) / (deepest[e] + 1) for e in range(1, n + 1))
        bound = max(map(abs, best)) + self._max_abs_score
        path = []
        e = n
        while e > 0:
            s = start[e]
            path.append((s, e, ids[e], scores[e]))
            e = s
        path.reverse()
        return path, tolerance, bound

    def _segment_ids(self, seg: str, path) -> list[int]:
        if not self.byte_fallback:
            return [p[2] for p in path]
        unk_id = self.unk_id
        byte_ids = self._byte_ids()
        out = []
        for s, e, i, _ in path:
            if i == unk_id:
                out.extend(byte_ids[b] for b in seg[s:e].encode("utf-8"))
            else:
                out.append(i)
        return out

    def _tokenize_sp(self, text: str, merge_unknowns: bool = True) -> list[int]:
        """Ids of normalized `text`: the Viterbi path of the whole text, then the unknowns.
        (`merge_unknowns=False` keeps one unknown id per unknown character, for spans.py.)

        The search is cut into segments at positions no piece can span: the best path passes
        through each of them, and a segment's part of it depends only on the (float32) path
        score B0 where the segment starts.  A segment seen before is taken from a cache when
        rounding cannot have changed its path:

        * the cached path is the one of exact arithmetic (from 0, which only shifts every
          score by B0);
        * by induction over positions, while float32 makes the same choices, the stored score
          at position p is k roundings away from its exact value, k being the number of pieces
          on the best path to p; each rounding moves it by at most half an ulp of the largest
          magnitude involved (|B0| plus `bound`); comparing a candidate with a stored score
          (itself a rounded candidate) adds one more half ulp;
        * so at an end position e whose candidates start at depths up to D, float32 keeps the
          exact choice when the exact best beats the second best by more than (D + 1) ulps
          (a half ulp per rounding of each side, a half for the comparison, and slack for the
          double addition).  The cache keeps min over e of gap / (D + 1) as `tolerance` and
          reuses the path when ulp < tolerance.

        The path score is then carried on by adding the path's piece scores in float32, which
        is exactly what the search stores along its best path.
        """
        out: list[int] = []
        cache = self._cache
        acc = array("f", b"\0\0\0\0")  # the float32 path score so far
        segments = self._word_re.findall(text) if self._word_re is not None else [text]
        for seg in segments:
            entry = cache.get(seg) if len(seg) <= LONG_SEGMENT else _UNCACHEABLE
            if entry is None:
                # First time: just search (most segments seen once are never seen again).
                if len(cache) >= CACHE_SIZE:
                    cache.clear()
                cache[seg] = _SEEN
                entry = _UNCACHEABLE
            elif entry is _SEEN:
                exact, tolerance, bound = self._exact(seg)
                entry = ((self._segment_ids(seg, exact), [p[3] for p in exact], tolerance, bound)
                         if tolerance > 0 else _UNCACHEABLE)
                cache[seg] = entry
            if entry is not _UNCACHEABLE:
                ids, step_scores, tolerance, bound = entry
                if ldexp(1.0, frexp(bound - acc[0])[1] - 24) < tolerance:
                    out.extend(ids)
                    for a in step_scores:
                        acc[0] += a
                    continue
            path, acc[0] = self.viterbi(seg, acc[0])
            out.extend(self._segment_ids(seg, path))
        if not self.byte_fallback and merge_unknowns:
            out = collapse_unknowns(out, self.unk_id)
        return out

    def tokenize_reference(self, text: str) -> list[int]:
        """`tokenize` without segments or cache: one search over the whole text."""
        path, _ = self.viterbi(text)
        ids = self._segment_ids(text, path)
        if not self.byte_fallback:
            ids = [i for k, i in enumerate(ids) if not (i == self.unk_id and k and ids[k - 1] == self.unk_id)]
        return ids

    def _byte_ids(self) -> list[int]:
        ids = getattr(self, "_byte_id_list", None)
        if ids is None:
            # PieceToId of "<0xNN>"; the loader checks that all 256 exist.
            lookup = self.token_to_id
            unk = self.unk_id
            ids = [lookup(byte_piece(b)) for b in range(256)]
            ids = [unk if i is None else i for i in ids]
            self._byte_id_list = ids
        return ids

    # -- Hugging Face -------------------------------------------------------------------------

    def _init_hf(self) -> None:
        ids: dict[str, int] = {}
        for i, p in enumerate(self.pieces):
            ids[p] = i  # last one wins, as a Rust HashMap insert
        self._hf_ids = ids
        if self.unk_id is not None and not 0 <= self.unk_id < len(self.pieces):
            raise UnsupportedTokenizerError("Unigram.unk_id: larger than the vocabulary size")
        if not self.pieces and self.unk_id is not None:
            raise UnsupportedTokenizerError("Unigram.vocab: empty but at least <unk> is needed")
        self.min_score = min(self.scores, default=float("inf"))
        self.unk_score = self.min_score - UNK_PENALTY
        table: dict[str, object] = {}
        for p, i in ids.items():
            if p:
                _add(table, p, (i, self.scores[i]))
        self._table = table
        self._single = {p for p, v in table.items() if len(p) == 1 and v is not _PREFIX}
        self._cache: dict[str, list[int]] = {}

    def _viterbi_hf(self, text: str) -> list[tuple[int, int, int]]:
        n = len(text)
        get = self._table.get
        best = [0.0] * (n + 1)
        start = [-1] * (n + 1)
        ids = [0] * (n + 1)
        unk_id = self.unk_id
        unk_score = self.unk_score
        single = self._single
        for i in range(n):
            till = best[i]
            e = i + 1
            info = get(text[i], 0)
            while info != 0:
                if info is not _PREFIX:
                    cand = info[1] + till
                    if start[e] < 0 or cand > best[e]:
                        best[e] = cand
                        start[e] = i
                        ids[e] = info[0]
                if e >= n:
                    break
                e += 1
                info = get(text[i:e], 0)
            if text[i] not in single:
                if unk_id is None:
                    raise ValueError("Encountered an unknown token but `unk_id` is missing")
                cand = unk_score + till
                e = i + 1
                if start[e] < 0 or cand > best[e]:
                    best[e] = cand
                    start[e] = i
                    ids[e] = unk_id
        path = []
        e = n
        while e > 0:
            s = start[e]
            path.append((s, e, ids[e]))
            e = s
        path.reverse()
        return path

    def _tokenize_hf(self, text: str) -> list[int]:
        # Hugging Face scores each pre-token on its own, from 0: a plain cache is exact.
        ids = self._cache.get(text)
        if ids is None:
            ids = self._tokenize_hf_uncached(text)
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self._cache[text] = ids
        return list(ids)

    def _tokenize_hf_uncached(self, text: str) -> list[int]:
        if not text:
            return []
        unk_id = self.unk_id
        # fuse_unk: adjacent unknown pieces become one string
        strings: list[str] = []
        prev_unk = False
        for s, e, i in self._viterbi_hf(text):
            is_unk = unk_id is not None and i == unk_id
            if is_unk and prev_unk:
                strings[-1] += text[s:e]
            else:
                strings.append(text[s:e])
            prev_unk = is_unk
        ids = self._hf_ids
        out: list[int] = []
        for string in strings:
            i = ids.get(string)
            if i is None:
                if self.byte_fallback:
                    bids = [ids.get(byte_piece(b)) for b in string.encode("utf-8")]
                    if None not in bids:
                        out.extend(bids)
                        continue
                if unk_id is None:
                    raise ValueError("Encountered an unknown token but `unk_id` is missing")
                i = unk_id
            out.append(i)
        return out

    # -- public -------------------------------------------------------------------------------

    def tokenize(self, text: str) -> list[int]:
        """The ids of `text` (normalized, or one pre-tokenized piece for Hugging Face)."""
        if self.hf:
            return self._tokenize_hf(text)
        return self._tokenize_sp(text)


def _add(table: dict, piece: str, info) -> None:
    # A piece's entry, and a prefix marker for each of its proper prefixes not already there.
    old = table.get(piece, 0)
    if old == 0 or old is _PREFIX:
        table[piece] = info
    for k in range(len(piece) - 1, 0, -1):
        pre = piece[:k]
        if pre in table:
            break
        table[pre] = _PREFIX


def from_config(cfg: dict) -> UnigramModel:
    """A tokenizer.json `Unigram` model, with Hugging Face's semantics (`hf=True`)."""
    vocab = cfg.get("vocab") or []
    try:
        pieces = [str(p) for p, _ in vocab]
        scores = [float(s) for _, s in vocab]
    except (TypeError, ValueError):
        raise UnsupportedTokenizerError("model Unigram: vocab must be a list of [piece, score]") from None
    unk_id = cfg.get("unk_id")
    return UnigramModel(pieces, scores, unk_id=None if unk_id is None else int(unk_id),
                        byte_fallback=bool(cfg.get("byte_fallback", False)), hf=True)
