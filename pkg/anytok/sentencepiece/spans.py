"""Piece spans: where each piece of a SentencePiece encoding comes from in the input text, as
`sentencepiece`'s `encode(text, out_type="immutable_proto")` reports them.

    text -> normalize_with_alignment -> (normalized, norm_to_orig)
         -> model ids, unknowns not merged -> model_result: [(normalized piece, id)]
         -> populate -> [Piece(piece, id, surface, begin, end)] -> SentencePieceText

* `normalize_with_alignment` is the normalizer (normalizer.py) keeping, for every character of
  the normalized text, the offset in the input where the rewriting step that produced it began
  (`Normalizer::Normalize`'s `norm_to_orig`, here in code points: every rewriting step starts
  and ends on a character boundary), plus one entry for the end.
* `model_result` is the model's `Encode` result: the ids of `model.tokenize` before a run of
  unknown ids is merged into one, each with the stretch of normalized text it covers (a piece
  covers its own text; an unknown one character, or one word for the WORD model; byte-fallback
  ids one UTF-8 byte each).
* `populate` is `SentencePieceProcessor::PopulateSentencePieceText`: begin/end are the
  input offsets of the piece's normalized start and end; byte-fallback pieces of one unknown
  character all begin there, only the last one carries the surface and the end; a run of
  unknown pieces becomes one piece (their normalized text, the unknown id).

The `sentencepiece` Python module reports begin/end in code points of the input `str` (the C++
library's byte offsets, converted by its wrapper, also in the message `SerializeAsString` gives).
"""

from __future__ import annotations

import struct
from typing import Iterator, Sequence

from .bpe import BPEModel
from .charword import CharModel, WordModel, _WORD
from .model_proto import BYTE
from .normalizer import SPACE_SYMBOL, Normalizer, _utf8_len
from .unigram import UnigramModel

__all__ = ["Piece", "SentencePieceText", "normalize_with_alignment", "model_result", "populate"]


class Piece:
    """One piece of an encoding: sentencepiece's `ImmutableSentencePieceText_ImmutableSentencePiece`.

    `piece` is the vocabulary piece (for an unknown piece the normalized text it stands for),
    `surface` the input text it covers, `begin`/`end` its code-point offsets in the input."""

    __slots__ = ("piece", "id", "surface", "begin", "end", "_surface_set")

    def __init__(self, piece: str, id: int, surface: str, begin: int, end: int, _surface_set: bool = True):
        self.piece, self.id, self.surface, self.begin, self.end = piece, id, surface, begin, end
        # sentencepiece leaves the surface field unset (not empty) on all but the last byte
        # piece of a character: it shows in the serialized message only.
        self._surface_set = _surface_set

    @property
    def piece_as_bytes(self) -> bytes:
        return self.piece.encode("utf-8")

    @property
    def surface_as_bytes(self) -> bytes:
        return self.surface.encode("utf-8")

    def _fields(self):
        return (self.piece, self.id, self.surface, self.begin, self.end)

    def __eq__(self, other):
        if not isinstance(other, Piece):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

    def __str__(self) -> str:
        return (f'piece: "{self.piece}"\nid: {self.id}\nsurface: "{self.surface}"\n'
                f"begin: {self.begin}\nend: {self.end}\n")

    def __repr__(self) -> str:
        return f"Piece(piece={self.piece!r}, id={self.id}, surface={self.surface!r}, begin={self.begin}, end={self.end})"


class SentencePieceText:
    """An encoding with its spans: sentencepiece's `ImmutableSentencePieceText`.

    `text` is the input, `pieces` a tuple of `Piece`, `score` 0.0 (sentencepiece sets it for
    sampling and n-best results only)."""

    __slots__ = ("text", "pieces", "score")

    def __init__(self, text: str, pieces: Sequence[Piece], score: float = 0.0):
        self.text = text
        self.pieces = tuple(pieces)
        self.score = score

    @property
    def text_as_bytes(self) -> bytes:
        return self.text.encode("utf-8")

    def __eq__(self, other):
        if not isinstance(other, SentencePieceText):
            return NotImplemented
        return (self.text, self.pieces, self.score) == (other.text, other.pieces, other.score)

    def __hash__(self):
        return hash((self.text, self.pieces, self.score))

    def SerializeAsString(self) -> bytes:
        """The `SentencePieceText` protobuf message, as sentencepiece's Python module
        serializes it (begin/end in code points, as its attributes)."""
        out = bytearray(_len_field(1, self.text.encode("utf-8")))
        for p in self.pieces:
            body = bytearray()
            body += _len_field(1, p.piece.encode("utf-8"))
            body += _varint(2 << 3) + _varint(p.id)
            if p._surface_set:
                body += _len_field(3, p.surface.encode("utf-8"))
            body += _varint(4 << 3) + _varint(p.begin)
            body += _varint(5 << 3) + _varint(p.end)
            out += _len_field(2, bytes(body))
        if self.score:
            out += _varint(3 << 3 | 5) + struct.pack("<f", self.score)
        return bytes(out)

    def __str__(self) -> str:
        body = "\n".join(f"pieces {{\n{p}}}" for p in self.pieces)
        return f'text: "{self.text}"\nscore: {self.score}\n{body}'

    def __repr__(self) -> str:
        return f"SentencePieceText(text={self.text!r}, pieces={list(self.pieces)!r})"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _len_field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


# -- normalization with alignment --------------------------------------------------------------

def _rewrite_steps(n: Normalizer, text: str) -> Iterator[tuple[str, int, int]]:
    """Stage 1 of the normalizer as (replacement, start, end) steps over `text` (code points)."""
    cm = n.charsmap
    single = cm.single if cm is not None else {}
    special = n._special_re
    ud = n.user_defined
    pos = 0
    if special is not None:
        for m in special.finditer(text):
            i = m.start()
            if i < pos:
                continue
            for j in range(pos, i):
                ch = text[j]
                yield single.get(ch, ch), j, j + 1
            for s in ud:
                if text.startswith(s, i):
                    yield s, i, i + len(s)
                    pos = i + len(s)
                    break
            else:
                length, value = cm.match_text(text, i) if cm is not None else (0, None)
                if value is None:
                    yield text[i], i, i + 1
                    pos = i + 1
                else:
                    yield value, i, i + length
                    pos = i + length
    for j in range(pos, len(text)):
        ch = text[j]
        yield single.get(ch, ch), j, j + 1


def _rewrite_steps_bytes(n: Normalizer, text: str) -> Iterator[tuple[str, int, int]]:
    """The same from the byte-level reference rule (`Normalizer._prefix`), for charsmaps whose
    keys are not whole characters; offsets converted to code points."""
    data = text.encode("utf-8")
    # byte offset -> code point offset, at character starts
    char_at = {}
    b = 0
    for k, ch in enumerate(text):
        char_at[b] = k
        b += len(ch.encode("utf-8"))
    char_at[b] = len(text)
    pos = 0
    while pos < len(data):
        piece, size = n._prefix(data, pos)
        start, end = char_at.get(pos), char_at.get(pos + size)
        if start is None or end is None:
            raise ValueError("normalizer_spec.precompiled_charsmap: a rule ends inside a character;"
                             " piece spans are not defined")
        yield piece.decode("utf-8"), start, end
        pos += size


def normalize_with_alignment(n: Normalizer, text: str) -> tuple[str, list[int]]:
    """(normalized text, norm_to_orig): `norm_to_orig[k]` is the code-point offset in `text`
    where the rewriting step that produced normalized character k began; one more entry gives
    the end (sentencepiece's `Normalizer::Normalize` with its alignment)."""
    if not text:
        return "", []
    regular = n.charsmap is None or n.charsmap.regular
    steps = _rewrite_steps(n, text) if regular else _rewrite_steps_bytes(n, text)
    remove = n.remove_extra_whitespaces
    escape = n.escape_whitespaces
    sym = n._space
    consumed = 0
    pending = None
    if remove:
        # Leading steps that rewrite to exactly one space are dropped.
        for step in steps:
            if step[0] != " ":
                pending = step
                break
            consumed = step[2]
        if pending is None:
            return "", []
    out: list[str] = []
    n2o: list[int] = []
    suffix = n.treat_whitespace_as_suffix
    if not suffix and n.add_dummy_prefix:
        out.append(sym)
        n2o.append(consumed)
    is_prev_space = remove

    def handle(piece: str, start: int, end: int) -> None:
        nonlocal is_prev_space
        if is_prev_space:
            piece = piece.lstrip(" ")
        if piece:
            is_prev_space = piece.endswith(" ")
            if escape:
                piece = piece.replace(" ", SPACE_SYMBOL)
            out.append(piece)
            n2o.extend([start] * len(piece))
        if not remove:
            is_prev_space = False

    if pending is not None:
        handle(*pending)
        consumed = pending[2]
    for step in steps:
        handle(*step)
        consumed = step[2]
    normalized = "".join(out)
    if remove:
        k = len(normalized)
        while k and normalized[k - 1] == sym:
            k -= 1
            consumed = n2o[k]
        if k < len(normalized):
            normalized = normalized[:k]
            del n2o[k:]
    if suffix and n.add_dummy_prefix:
        normalized += sym
        n2o.append(consumed)
    n2o.append(consumed)
    return normalized, n2o


# -- the model's result ------------------------------------------------------------------------

def model_result(tok, normalized: str) -> list[tuple[str, int]]:
    """The model's `Encode(normalized)`: [(stretch of normalized text, id)], unknown ids not
    merged; with byte fallback an unknown stretch is given once, with the unknown id (populate
    turns it into byte pieces)."""
    model = tok.model
    if isinstance(model, (CharModel, WordModel)):
        get = model._ids.get
        unk = tok.unk_id
        return [(w, get(w, unk)) for w in model.split(normalized)]
    if isinstance(model, UnigramModel):
        ids = model._tokenize_sp(normalized, merge_unknowns=False)
    elif isinstance(model, BPEModel):
        ids = model.tokenize(normalized, merge_unknowns=False)
    else:  # pragma: no cover - the tokenizer only builds the four models
        raise TypeError(f"no piece spans for model {type(model).__name__}")
    pieces = tok.pieces
    types = tok.types
    unk = tok.unk_id
    byte_of = {j: b for b, (_, j) in enumerate(_byte_table(tok))} if tok.byte_fallback else {}
    out: list[tuple[str, int]] = []
    pos = 0
    k = 0
    n_ids = len(ids)
    while k < n_ids:
        i = ids[k]
        if i == unk:
            # An unknown piece is one character (Unigram's unknown node, BPE's unmerged symbol).
            w = normalized[pos : pos + 1]
            k += 1
        elif types[i] == BYTE:
            # Byte fallback: the bytes of one unknown character.
            w = normalized[pos : pos + 1]
            raw = w.encode("utf-8")
            size = len(raw)
            if bytes(byte_of.get(j, -1) & 0xFF for j in ids[k : k + size]) != raw or size == 0:
                raise RuntimeError(f"piece spans: byte pieces {ids[k : k + size]} do not spell {w!r}")
            k += size
            i = unk
        else:
            w = pieces[i]
            if not normalized.startswith(w, pos):
                raise RuntimeError(f"piece spans: piece {w!r} is not at position {pos} of the normalized text")
            k += 1
        if not w:
            raise RuntimeError("piece spans: the pieces are longer than the normalized text")
        out.append((w, i))
        pos += len(w)
    if pos != len(normalized):
        raise RuntimeError("piece spans: the pieces do not cover the normalized text")
    return out


def _byte_table(tok) -> list[tuple[str, int]]:
    # (piece, id) of each byte value: `ByteToPiece` and `PieceToId`.
    table = getattr(tok, "_spans_byte_table", None)
    if table is None:
        table = [(f"<0x{b:02X}>", tok._piece_to_id(f"<0x{b:02X}>")) for b in range(256)]
        tok._spans_byte_table = table
    return table


def populate(tok, text: str, normalized: str, n2o: Sequence[int],
             result: Sequence[tuple[str, int]]) -> list[Piece]:
    """`PopulateSentencePieceText`: the pieces with their input spans."""
    out: list[Piece] = []
    unk = tok.unk_id
    byte_fallback = tok.byte_fallback
    byte_table = _byte_table(tok) if byte_fallback else None
    consumed = 0
    prev_unk = False
    for w, i in result:
        is_unk = i == unk
        begin, end = n2o[consumed], n2o[consumed + len(w)]
        surface = text[begin:end]
        if is_unk and byte_fallback:
            raw = w.encode("utf-8")
            for b in raw[:-1]:
                out.append(Piece(*byte_table[b], "", begin, begin, False))
            out.append(Piece(*byte_table[raw[-1]], surface, begin, end))
        elif is_unk and prev_unk:
            p = out[-1]
            p.piece += w
            p.surface += surface
            p.end = end
        else:
            out.append(Piece(w, i, surface, begin, end))
        consumed += len(w)
        prev_unk = is_unk
    return out


def encode_spans(tok, text: str) -> list[Piece]:
    """The pieces of `text` with their spans (no BOS/EOS)."""
    if not text.isascii():
        text.encode("utf-8")  # lone surrogates: UnicodeEncodeError, as `encode`
    normalized, n2o = normalize_with_alignment(tok.normalizer, text)
    if not normalized:
        return []
    return populate(tok, text, normalized, n2o, model_result(tok, normalized))
