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

from array import array
from typing import Sequence

from . import UnsupportedTokenizerError
from .model_proto import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED

__all__ = ["UnigramModel", "byte_piece"]

FLT_MAX = 3.4028234663852886e38
FLT_MIN = 1.1754943508222875e-38
UNK_PENALTY = 10.0

# Marks a string that is a proper prefix of a piece but not a piece itself.
_PREFIX = None


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

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def id_to_token(self, i: int) -> str:
        return self.pieces[i]

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
        reserved: dict[str, int] = {}
        normal: dict[str, int] = {}
        for i, (p, t) in enumerate(zip(self.pieces, self.types)):
            if not p:
                raise UnsupportedTokenizerError(f"pieces[{i}]: piece must not be empty")
            target = normal if t in (NORMAL, USER_DEFINED, UNUSED) else reserved
            if p in target:
                raise UnsupportedTokenizerError(f"pieces[{i}]: {p!r} is already defined")
            target[p] = i
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
        self._single = {p for p, v in table.items() if len(p) == 1 and v is not _PREFIX}
        self.max_piece_chars = max_len

    def viterbi(self, text: str) -> list[tuple[int, int, int]]:
        """sentencepiece's best path over `text`: [(start, end, id), ...] (unknown pieces are
        one character each, with the unknown id)."""
        n = len(text)
        if not n:
            return []
        get = self._table.get
        best = array("f", bytes(4 * (n + 1)))
        start = [-1] * (n + 1)
        ids = [0] * (n + 1)
        unk_id = self.unk_id
        unk_score = self.unk_score
        single = self._single
        scratch = array("f", b"\0\0\0\0")
        for i in range(n):
            till = best[i]
            e = i + 1
            sub = text[i]
            info = get(sub, 0)
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
                sub = text[i:e]
                info = get(sub, 0)
            if text[i] not in single:
                scratch[0] = unk_score + till  # float + float in C: float32 rounding
                cand = scratch[0]
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

    def _tokenize_sp(self, text: str) -> list[int]:
        unk_id = self.unk_id
        out: list[int] = []
        if self.byte_fallback:
            byte_ids = self._byte_ids()
            for s, e, i in self.viterbi(text):
                if i == unk_id:
                    out.extend(byte_ids[b] for b in text[s:e].encode("utf-8"))
                else:
                    out.append(i)
        else:
            prev_unk = False
            for _s, _e, i in self.viterbi(text):
                is_unk = i == unk_id
                if not (is_unk and prev_unk):
                    out.append(i)
                prev_unk = is_unk
        return out

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
