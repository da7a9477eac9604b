"""The trainer's options as `TrainerSpec` / `NormalizerSpec` fields, and the `.model` writer.

sentencepiece's `.model` is proto2: a field is written when it was *set*, whether or not its
value is the default, in field-number order.  `SentencePieceTrainer.train(**kwargs)` sets
exactly the options it is given (the Python wrapper turns each into `--name=value`), and the
trainer sets a few more itself (the normalizer's name and charsmap; `vocab_size` for CHAR
models).  So a spec here is the dict of the options given, and the writer walks the fields.
"""

from __future__ import annotations

import struct

from ...sentencepiece.model_proto import BPE, CHAR, UNIGRAM, WORD
from ...sentencepiece.protobuf import length_delimited, write_varint

__all__ = ["TRAINER_FIELDS", "NORMALIZER_FIELDS", "MODEL_TYPES", "TrainerOptions", "write_model"]

MODEL_TYPES = {"unigram": UNIGRAM, "bpe": BPE, "word": WORD, "char": CHAR}

# name -> (field number, kind, default); kinds: str, strs (repeated), int, uint, bool, float, enum
TRAINER_FIELDS: dict[str, tuple[int, str, object]] = {
    "input": (1, "strs", ()),
    "model_prefix": (2, "str", ""),
    "model_type": (3, "enum", UNIGRAM),
    "vocab_size": (4, "int", 8000),
    "accept_language": (5, "strs", ()),
    "self_test_sample_size": (6, "int", 0),
    "input_format": (7, "str", ""),
    "character_coverage": (10, "float", 0.9995),
    "input_sentence_size": (11, "uint", 0),
    "seed_sentencepiece_size": (14, "int", 1000000),
    "shrinking_factor": (15, "float", 0.75),
    "num_threads": (16, "int", 16),
    "num_sub_iterations": (17, "int", 2),
    "max_sentence_length": (18, "int", 4192),
    "shuffle_input_sentence": (19, "bool", True),
    "max_sentencepiece_length": (20, "int", 16),
    "split_by_unicode_script": (21, "bool", True),
    "split_by_whitespace": (22, "bool", True),
    "split_by_number": (23, "bool", True),
    "treat_whitespace_as_suffix": (24, "bool", False),
    "split_digits": (25, "bool", False),
    "allow_whitespace_only_pieces": (26, "bool", False),
    "control_symbols": (30, "strs", ()),
    "user_defined_symbols": (31, "strs", ()),
    "vocabulary_output_piece_score": (32, "bool", True),
    "hard_vocab_limit": (33, "bool", True),
    "use_all_vocab": (34, "bool", False),
    "byte_fallback": (35, "bool", False),
    "required_chars": (36, "str", ""),
    "unk_id": (40, "int", 0),
    "bos_id": (41, "int", 1),
    "eos_id": (42, "int", 2),
    "pad_id": (43, "int", -1),
    "unk_surface": (44, "str", " \u2047 "),
    "unk_piece": (45, "str", "<unk>"),
    "bos_piece": (46, "str", "<s>"),
    "eos_piece": (47, "str", "</s>"),
    "pad_piece": (48, "str", "<pad>"),
    "train_extremely_large_corpus": (49, "bool", False),
    "enable_differential_privacy": (50, "bool", False),
    "pretokenization_delimiter": (53, "str", ""),
    "seed_sentencepieces_file": (54, "str", ""),
}

NORMALIZER_FIELDS: dict[str, tuple[int, str, object]] = {
    "name": (1, "str", ""),
    "precompiled_charsmap": (2, "bytes", b""),
    "add_dummy_prefix": (3, "bool", True),
    "remove_extra_whitespaces": (4, "bool", True),
    "escape_whitespaces": (5, "bool", True),
    "normalization_rule_tsv": (6, "str", ""),
}

# Options the trainer here reproduces; any other TrainerSpec field given is refused by name.
SUPPORTED = {
    "input", "model_prefix", "model_type", "vocab_size", "character_coverage",
    "input_sentence_size", "shuffle_input_sentence", "seed_sentencepiece_size",
    "shrinking_factor", "num_threads", "num_sub_iterations", "max_sentence_length",
    "max_sentencepiece_length", "split_by_unicode_script", "split_by_whitespace",
    "split_by_number", "treat_whitespace_as_suffix", "split_digits",
    "allow_whitespace_only_pieces", "control_symbols", "user_defined_symbols",
    "vocabulary_output_piece_score", "hard_vocab_limit", "use_all_vocab", "byte_fallback",
    "required_chars", "unk_id", "bos_id", "eos_id", "pad_id", "unk_surface", "unk_piece",
    "bos_piece", "eos_piece", "pad_piece",
    # recorded only: the same training whatever their value (input_format "text" only)
    "accept_language", "input_format", "train_extremely_large_corpus",
}


def f32(x: float) -> float:
    """`x` rounded to the nearest float32 (how a `float` field holds it)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _coerce(name: str, kind: str, value):
    # The values sentencepiece would parse from `--name=value` (SetProtoField).
    if kind == "strs":
        if isinstance(value, str):
            value = value.split(",") if value else []
        return tuple(str(v) for v in value)
    if kind == "str":
        return str(value)
    if kind in ("int", "uint"):
        if isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                raise ValueError(f"option {name}: an integer is needed, not {value!r}") from None
        if isinstance(value, bool) or int(value) != value:
            raise ValueError(f"option {name}: an integer is needed, not {value!r}")
        return int(value)
    if kind == "bool":
        if isinstance(value, str):
            low = value.lower()
            if low in ("true", "1", "t", "yes", "y", ""):
                return True
            if low in ("false", "0", "f", "no", "n"):
                return False
            raise ValueError(f"option {name}: {value!r} is not a boolean")
        return bool(value)
    if kind == "float":
        return f32(float(value))
    if kind == "enum":
        if isinstance(value, int) and value in MODEL_TYPES.values():
            return value
        try:
            return MODEL_TYPES[str(value).lower()]
        except KeyError:
            raise ValueError(f"model_type {value!r}: one of {', '.join(MODEL_TYPES)}") from None
    raise AssertionError(kind)


class TrainerOptions:
    """The options given (as sentencepiece holds them) with sentencepiece's defaults behind."""

    def __init__(self, given: dict[str, object]):
        unknown = sorted(k for k in given if k not in TRAINER_FIELDS)
        if unknown:
            raise ValueError(f"unknown SentencePiece trainer option(s): {', '.join(unknown)}")
        refused = sorted(k for k in given if k not in SUPPORTED)
        if refused:
            raise NotImplementedError(
                f"SentencePiece trainer option(s) not implemented: {', '.join(refused)}")
        self.given = {k: _coerce(k, TRAINER_FIELDS[k][1], v) for k, v in given.items()}

    def __getattr__(self, name: str):
        try:
            return self.given[name] if name in self.given else TRAINER_FIELDS[name][2]
        except KeyError:
            raise AttributeError(name) from None


# -- protobuf writing --------------------------------------------------------------------------

def _field(number: int, kind: str, value) -> bytes:
    if kind in ("str", "bytes"):
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        return length_delimited(number, data)
    if kind == "strs":
        return b"".join(_field(number, "str", v) for v in value)
    if kind == "float":
        return write_varint(number << 3 | 5) + struct.pack("<f", value)
    if kind == "bool":
        return write_varint(number << 3) + (b"\x01" if value else b"\x00")
    return write_varint(number << 3) + write_varint(int(value))


def _message(table: dict, values: dict) -> bytes:
    items = sorted((table[k][0], table[k][1], v) for k, v in values.items())
    return b"".join(_field(n, kind, v) for n, kind, v in items)


def write_model(pieces: list[tuple[str, float, int]], trainer: dict, normalizer: dict) -> bytes:
    """A `.model` file: pieces `(piece, score, type)` (type 1, NORMAL, is not written, as
    sentencepiece leaves it unset), then the trainer spec and the normalizer spec."""
    out = []
    tag = b"\x0a"
    for piece, score, ptype in pieces:
        body = _field(1, "str", piece) + _field(2, "float", score)
        if ptype != 1:
            body += _field(3, "int", ptype)
        out.append(tag + write_varint(len(body)) + body)
    for number, table, values in ((2, TRAINER_FIELDS, trainer), (3, NORMALIZER_FIELDS, normalizer)):
        body = _message(table, values)
        out.append(length_delimited(number, body))
    return b"".join(out)
