"""SentencePiece's `ModelProto` (a `.model` file), parsed with `protobuf.py`.

Field numbers and defaults are those of `src/sentencepiece_model.proto` in google/sentencepiece
(proto2).  Only what encoding and decoding use is kept, plus the trainer options worth showing
in `inspect`; everything else in the file is skipped.

    ModelProto:     1 pieces (repeated SentencePiece), 2 trainer_spec, 3 normalizer_spec,
                    4 self_test_data, 5 denormalizer_spec
    SentencePiece:  1 piece (string), 2 score (float), 3 type (enum, default NORMAL)
    NormalizerSpec: 1 name, 2 precompiled_charsmap (bytes), 3 add_dummy_prefix (true),
                    4 remove_extra_whitespaces (true), 5 escape_whitespaces (true),
                    6 normalization_rule_tsv
    TrainerSpec:    3 model_type (UNIGRAM), 4 vocab_size, 20 max_sentencepiece_length,
                    21 split_by_unicode_script, 22 split_by_whitespace, 23 split_by_number,
                    24 treat_whitespace_as_suffix, 25 split_digits,
                    26 allow_whitespace_only_pieces, 30 control_symbols,
                    31 user_defined_symbols, 35 byte_fallback, 40-43 unk/bos/eos/pad id,
                    44 unk_surface, 45-48 unk/bos/eos/pad piece
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..errors import UnsupportedTokenizerError
from .protobuf import Fields, ProtobufError, read_varint

__all__ = [
    "NORMAL", "UNKNOWN", "CONTROL", "USER_DEFINED", "UNUSED", "BYTE", "PIECE_TYPE_NAMES",
    "UNIGRAM", "BPE", "WORD", "CHAR", "MODEL_TYPE_NAMES",
    "NormalizerSpec", "TrainerSpec", "ModelProto", "parse_model_proto",
]

# ModelProto.SentencePiece.Type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
PIECE_TYPE_NAMES = {NORMAL: "NORMAL", UNKNOWN: "UNKNOWN", CONTROL: "CONTROL",
                    USER_DEFINED: "USER_DEFINED", UNUSED: "UNUSED", BYTE: "BYTE"}
# TrainerSpec.ModelType
UNIGRAM, BPE, WORD, CHAR = 1, 2, 3, 4
MODEL_TYPE_NAMES = {UNIGRAM: "UNIGRAM", BPE: "BPE", WORD: "WORD", CHAR: "CHAR"}

DEFAULT_UNK_SURFACE = " \u2047 "

_FLOAT = struct.Struct("<f")


@dataclass
class NormalizerSpec:
    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    normalization_rule_tsv: str = ""

    @classmethod
    def from_fields(cls, f: Fields | None) -> "NormalizerSpec":
        if f is None:
            return cls()
        return cls(
            name=f.string(1),
            precompiled_charsmap=f.bytes(2),
            add_dummy_prefix=f.bool(3, True),
            remove_extra_whitespaces=f.bool(4, True),
            escape_whitespaces=f.bool(5, True),
            normalization_rule_tsv=f.string(6),
        )


@dataclass
class TrainerSpec:
    model_type: int = UNIGRAM
    vocab_size: int = 8000
    max_sentencepiece_length: int = 16
    split_by_unicode_script: bool = True
    split_by_whitespace: bool = True
    split_by_number: bool = True
    treat_whitespace_as_suffix: bool = False
    split_digits: bool = False
    allow_whitespace_only_pieces: bool = False
    control_symbols: list[str] = field(default_factory=list)
    user_defined_symbols: list[str] = field(default_factory=list)
    byte_fallback: bool = False
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_surface: str = DEFAULT_UNK_SURFACE
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"

    @classmethod
    def from_fields(cls, f: Fields | None) -> "TrainerSpec":
        if f is None:
            return cls()
        d = cls()
        return cls(
            model_type=f.int32(3, d.model_type),
            vocab_size=f.int32(4, d.vocab_size),
            max_sentencepiece_length=f.int32(20, d.max_sentencepiece_length),
            split_by_unicode_script=f.bool(21, True),
            split_by_whitespace=f.bool(22, True),
            split_by_number=f.bool(23, True),
            treat_whitespace_as_suffix=f.bool(24, False),
            split_digits=f.bool(25, False),
            allow_whitespace_only_pieces=f.bool(26, False),
            control_symbols=f.repeated_string(30),
            user_defined_symbols=f.repeated_string(31),
            byte_fallback=f.bool(35, False),
            unk_id=f.int32(40, 0),
            bos_id=f.int32(41, 1),
            eos_id=f.int32(42, 2),
            pad_id=f.int32(43, -1),
            unk_surface=f.string(44, DEFAULT_UNK_SURFACE),
            # sentencepiece (ModelInterface::unk_piece() ...) uses the default for an empty name.
            unk_piece=f.string(45) or "<unk>",
            bos_piece=f.string(46) or "<s>",
            eos_piece=f.string(47) or "</s>",
            pad_piece=f.string(48) or "<pad>",
        )



def piece_tables(pieces, types) -> tuple[dict[str, int], dict[str, int]]:
    """(normal, reserved): piece -> id for the pieces that can be matched in text (normal,
    user-defined, unused) and for the others (control, unknown, byte), as sentencepiece's
    `ModelInterface::InitializePieces` builds them; an empty or repeated piece is refused."""
    normal: dict[str, int] = {}
    reserved: dict[str, int] = {}
    for i, (p, t) in enumerate(zip(pieces, types)):
        if not p:
            raise UnsupportedTokenizerError(f"pieces[{i}]: piece must not be empty")
        target = normal if t in (NORMAL, USER_DEFINED, UNUSED) else reserved
        if p in target:
            raise UnsupportedTokenizerError(f"pieces[{i}]: {p!r} is already defined")
        target[p] = i
    return normal, reserved

def collapse_unknowns(ids: list[int], unk_id: int) -> list[int]:
    """`ids` with each run of `unk_id` made one (sentencepiece without byte fallback)."""
    if unk_id not in ids:
        return ids
    out = []
    prev_unk = False
    for i in ids:
        is_unk = i == unk_id
        if not (is_unk and prev_unk):
            out.append(i)
        prev_unk = is_unk
    return out


class PieceVocab:
    """The id <-> piece accessors of a model over `self.pieces` (ids are list positions) and
    `self._ids` (piece -> id, from `piece_tables`)."""

    pieces: list
    _ids: dict

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def id_to_token(self, i: int) -> str:
        return self.pieces[i]

    def token_to_id(self, piece: str) -> int | None:
        return self._ids.get(piece)


@dataclass
class ModelProto:
    """The parts of a `.model` file that tokenization depends on.

    `pieces`, `scores`, `types` are parallel lists indexed by id; `denormalizer_spec` is None
    when the file has none (sentencepiece then does not denormalize).
    """

    pieces: list[str]
    scores: list[float]
    types: list[int]
    trainer_spec: TrainerSpec
    normalizer_spec: NormalizerSpec
    denormalizer_spec: NormalizerSpec | None = None
    self_test_samples: list[tuple[str, str]] = field(default_factory=list)


def _parse_pieces(blobs: list[bytes]) -> tuple[list[str], list[float], list[int]]:
    # One SentencePiece message per blob; a hand-written loop, since a model has up to ~260k.
    pieces: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    unpack = _FLOAT.unpack_from
    for i, buf in enumerate(blobs):
        piece = b""
        score = 0.0
        ptype = NORMAL
        pos = 0
        end = len(buf)
        while pos < end:
            tag = buf[pos]
            if tag == 0x0A:  # 1: piece, length-delimited
                length = buf[pos + 1]
                if length < 0x80:
                    pos += 2
                else:
                    length, pos = read_varint(buf, pos + 1)
                piece = buf[pos : pos + length]
                if len(piece) != length:
                    raise ProtobufError(f"piece {i}: truncated string")
                pos += length
            elif tag == 0x15:  # 2: score, fixed32
                if pos + 5 > end:
                    raise ProtobufError(f"piece {i}: truncated score")
                score = unpack(buf, pos + 1)[0]
                pos += 5
            elif tag == 0x18:  # 3: type, varint
                ptype, pos = read_varint(buf, pos + 1)
            else:  # anything else: the general reader (unknown fields are skipped)
                f = Fields(buf)
                piece = f.bytes(1)
                score = f.float(2)
                ptype = f.int32(3, NORMAL)
                break
        try:
            pieces.append(piece.decode("utf-8"))
        except UnicodeDecodeError:
            raise ProtobufError(f"piece {i} is not valid UTF-8: {piece!r}") from None
        scores.append(score)
        types.append(ptype)
    return pieces, scores, types


def parse_model_proto(data: bytes) -> ModelProto:
    """Parse the bytes of a SentencePiece `.model` file."""
    top = Fields(bytes(data))
    if not top.has(1):
        raise ProtobufError("no pieces: not a SentencePiece model")
    pieces, scores, types = _parse_pieces(top.repeated_bytes(1))
    samples = []
    st = top.message(4)
    if st is not None:
        for blob in st.repeated_bytes(1):
            s = Fields(blob)
            samples.append((s.string(1), s.string(2)))
    denorm = top.message(5)
    return ModelProto(
        pieces=pieces,
        scores=scores,
        types=types,
        trainer_spec=TrainerSpec.from_fields(top.message(2)),
        normalizer_spec=NormalizerSpec.from_fields(top.message(3)),
        denormalizer_spec=None if denorm is None else NormalizerSpec.from_fields(denorm),
        self_test_samples=samples,
    )
