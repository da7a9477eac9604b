"""Piece spans: where each piece of a SentencePiece encoding comes from in the input text, as
`sentencepiece`'s `encode(text, out_type="immutable_proto")` reports them.

    text -> normalize_with_alignment -> (normalized, norm_to_orig)
         -> model ids, unknowns not merged -> model_result: [(normalized piece, id)]
         -> populate: [(piece, id, begin, end, surface set)]  (encode_with_offsets reads these)
         -> encode_proto: SentencePieceText of Piece(piece, id, surface, begin, end)

* `normalize_with_alignment` is the normalizer (normalizer.py) keeping, for every character of
  the normalized text, the offset in the input where the rewriting step that produced it began
  (`Normalizer::Normalize`'s `norm_to_orig`, here in code points: every rewriting step starts
  and ends on a character boundary), plus one entry for the end.  Runs of characters the
  charsmap rewrites one to one are aligned in bulk (a run of spaces keeps its first one); other
  steps one at a time, exactly as the C++ loop.
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

import re
import struct
from itertools import accumulate, repeat
from typing import Iterator, Sequence

from .bpe import BPEModel
from .charword import CharModel, WordModel
from .normalizer import _SPACES, SPACE_SYMBOL, Normalizer, _class_escape
from .protobuf import length_delimited, write_varint
from .unigram import UnigramModel

__all__ = ["Piece", "SentencePieceText", "encode_proto", "encode_spans", "normalize_with_alignment",
           "model_result", "populate"]


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
        out = bytearray(length_delimited(1, self.text.encode("utf-8")))
        for p in self.pieces:
            body = bytearray()
            body += length_delimited(1, p.piece.encode("utf-8"))
            body += write_varint(2 << 3) + write_varint(p.id)
            if p._surface_set:
                body += length_delimited(3, p.surface.encode("utf-8"))
            body += write_varint(4 << 3) + write_varint(p.begin)
            body += write_varint(5 << 3) + write_varint(p.end)
            out += length_delimited(2, bytes(body))
        if self.score:
            out += write_varint(3 << 3 | 5) + struct.pack("<f", self.score)
        return bytes(out)

    def __str__(self) -> str:
        body = "\n".join(f"pieces {{\n{p}}}" for p in self.pieces)
        return f'text: "{self.text}"\nscore: {self.score}\n{body}'

    def __repr__(self) -> str:
        return f"SentencePieceText(text={self.text!r}, pieces={list(self.pieces)!r})"


# -- normalization with alignment --------------------------------------------------------------

def _nonunit(n: Normalizer):
    # The characters the charsmap rewrites to other than exactly one character (a search
    # pattern, or None when there are none): a run of text without them rewrites one to one.
    cm = n.charsmap
    if cm is None:
        return None
    found = getattr(cm, "_spans_nonunit", False)
    if found is False:
        chars = sorted(k for k, v in cm.single.items() if len(v) != 1)
        found = re.compile("[" + "".join(map(_class_escape, chars)) + "]") if chars else None
        cm._spans_nonunit = found
    return found


def _rewrite_steps(n: Normalizer, text: str) -> Iterator[tuple[str, int, int, bool]]:
    """Stage 1 of the normalizer as (replacement, start, end, run) steps over `text` (code
    points).  `run`: the replacement is a run of characters each rewritten to one character
    (so its k-th character comes from text[start + k]); else one step of sentencepiece's."""
    cm = n.charsmap
    single = cm.single if cm is not None else {}
    table = n._translate
    nonunit = _nonunit(n)
    special = n._special_re
    ud = n.user_defined

    def plain(a: int, b: int):
        run = text[a:b]
        if nonunit is None or nonunit.search(run) is None:
            yield run.translate(table) if table else run, a, b, True
            return
        for j in range(a, b):
            ch = text[j]
            yield single.get(ch, ch), j, j + 1, False

    pos = 0
    if special is not None:
        for m in special.finditer(text):
            i = m.start()
            if i < pos:
                continue
            if i > pos:
                yield from plain(pos, i)
            for s in ud:
                if text.startswith(s, i):
                    yield s, i, i + len(s), False
                    pos = i + len(s)
                    break
            else:
                length, value = cm.match_text(text, i) if cm is not None else (0, None)
                if value is None:
                    yield text[i], i, i + 1, False
                    pos = i + 1
                else:
                    yield value, i, i + length, False
                    pos = i + length
    if pos < len(text):
        yield from plain(pos, len(text))


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
        yield piece.decode("utf-8"), start, end, False
        pos += size


def normalize_with_alignment(n: Normalizer, text: str, reference: bool = False) -> tuple[str, list[int]]:
    """(normalized text, norm_to_orig): `norm_to_orig[k]` is the code-point offset in `text`
    where the rewriting step that produced normalized character k began; one more entry gives
    the end (sentencepiece's `Normalizer::Normalize` with its alignment).  `reference=True`
    takes the rewriting steps from the byte-level rule, one at a time (as for a charsmap whose
    keys are not whole characters)."""
    if not text:
        return "", []
    regular = (n.charsmap is None or n.charsmap.regular) and not reference
    steps = _rewrite_steps(n, text) if regular else _rewrite_steps_bytes(n, text)
    remove = n.remove_extra_whitespaces
    escape = n.escape_whitespaces
    sym = n._space
    consumed = 0
    pending = None
    if remove:
        # Leading steps that rewrite to exactly one space are dropped.
        for step in steps:
            value, start, end, run = step
            if run:
                k = len(value) - len(value.lstrip(" "))
                if k == len(value):
                    consumed = end
                    continue
                consumed = start + k
                pending = (value[k:], start + k, end, True)
                break
            if value != " ":
                pending = step
                break
            consumed = end
        if pending is None:
            return "", []
    out: list[str] = []
    n2o: list[int] = []
    suffix = n.treat_whitespace_as_suffix
    if not suffix and n.add_dummy_prefix:
        out.append(sym)
        n2o.append(consumed)
    is_prev_space = remove

    def handle(piece: str, start: int, end: int, run: bool) -> None:
        nonlocal is_prev_space
        if run:
            if remove:
                k = len(piece) - len(piece.lstrip(" ")) if is_prev_space else 0
                if k == len(piece):
                    return
                body = piece[k:]
                base = start + k
                if "  " in body:
                    # a run of spaces keeps its first one
                    parts = []
                    at = 0
                    for m in _SPACES.finditer(body):
                        keep = m.start() + 1
                        parts.append(body[at:keep])
                        n2o.extend(range(base + at, base + keep))
                        at = m.end()
                    parts.append(body[at:])
                    n2o.extend(range(base + at, base + len(body)))
                    body = "".join(parts)
                else:
                    n2o.extend(range(base, base + len(body)))
                is_prev_space = body.endswith(" ")
            else:
                body = piece
                n2o.extend(range(start, end))
            out.append(body.replace(" ", SPACE_SYMBOL) if escape else body)
            return
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
    unk = tok.unk_id
    byte_of = {j: b for b, (_, j) in enumerate(_byte_table(tok))} if tok.byte_fallback else {}
    if unk not in ids and (not byte_of or byte_of.keys().isdisjoint(ids)):
        # Only pieces: they must spell the normalized text.
        out = [(pieces[i], i) for i in ids]
        if "".join([w for w, _ in out]) != normalized:
            raise RuntimeError("piece spans: the pieces do not spell the normalized text")
        return out
    out = []
    pos = 0
    k = 0
    n_ids = len(ids)
    special = set(byte_of)
    special.add(unk)
    # between unknown / byte ids, plain pieces in bulk
    marks = [x for x, i in enumerate(ids) if i in special]
    marks.append(n_ids)
    for mark in marks:
        if mark < k:
            continue  # the other bytes of a character already taken
        if k < mark:
            chunk = [(pieces[i], i) for i in ids[k:mark]]
            out += chunk
            pos += sum([len(w) for w, _ in chunk])
            k = mark
        if k == n_ids:
            break
        i = ids[k]
        w = normalized[pos : pos + 1]
        if i == unk:
            # An unknown piece is one character (Unigram's unknown node, BPE's unmerged symbol).
            k += 1
        else:
            # Byte fallback: the bytes of one unknown character.
            raw = w.encode("utf-8")
            size = len(raw)
            chunk = ids[k : k + size]
            if size == 0 or not all(j in byte_of for j in chunk) or bytes(byte_of[j] for j in chunk) != raw:
                raise RuntimeError(f"piece spans: byte pieces {chunk} do not spell {w!r}")
            k += size
            i = unk
        if not w:
            raise RuntimeError("piece spans: the pieces are longer than the normalized text")
        out.append((w, i))
        pos += 1
    if "".join([w for w, _ in out]) != normalized:
        raise RuntimeError("piece spans: the pieces do not spell the normalized text")
    return out


def _byte_table(tok) -> list[tuple[str, int]]:
    # (piece, id) of each byte value: `ByteToPiece` and `PieceToId`.
    table = getattr(tok, "_spans_byte_table", None)
    if table is None:
        table = [(f"<0x{b:02X}>", tok._piece_to_id(f"<0x{b:02X}>")) for b in range(256)]
        tok._spans_byte_table = table
    return table


def populate(tok, text: str, normalized: str, n2o: Sequence[int],
             result: Sequence[tuple[str, int]]) -> list[tuple[str, int, int, int, bool]]:
    """`PopulateSentencePieceText`: the pieces as (piece, id, begin, end, surface set)."""
    unk = tok.unk_id
    ws = [w for w, _ in result]
    ids = [i for _, i in result]
    cut = [0, *accumulate(map(len, ws))]
    at = n2o.__getitem__
    begins = list(map(at, cut[:-1]))
    ends = list(map(at, cut[1:]))
    if unk not in ids:
        return list(zip(ws, ids, begins, ends, repeat(True)))
    out = []
    byte_fallback = tok.byte_fallback
    byte_table = _byte_table(tok) if byte_fallback else None
    prev_unk = False
    for w, i, begin, end in zip(ws, ids, begins, ends):
        if i != unk:
            out.append((w, i, begin, end, True))
            prev_unk = False
        elif byte_fallback:
            raw = w.encode("utf-8")
            for b in raw[:-1]:
                out.append((*byte_table[b], begin, begin, False))
            out.append((*byte_table[raw[-1]], begin, end, True))
            prev_unk = True
        elif prev_unk:
            piece, _, begin0, _, _ = out[-1]
            out[-1] = (piece + w, i, begin0, end, True)
        else:
            out.append((w, i, begin, end, True))
            prev_unk = True
    return out


def encode_spans(tok, text: str) -> list[tuple[str, int, int, int, bool]]:
    """The pieces of `text` as (piece, id, begin, end, surface set), no BOS/EOS."""
    if not text.isascii():
        text.encode("utf-8")  # lone surrogates: UnicodeEncodeError, as `encode`
    normalized, n2o = normalize_with_alignment(tok.normalizer, text)
    if not normalized:
        return []
    return populate(tok, text, normalized, n2o, model_result(tok, normalized))


def encode_proto(tok, text: str) -> SentencePieceText:
    """`encode_spans` as a `SentencePieceText` (the surface of a piece: text[begin:end])."""
    return SentencePieceText(text, [Piece(p, i, text[b:e] if s else "", b, e, s)
                                    for p, i, b, e, s in encode_spans(tok, text)])
