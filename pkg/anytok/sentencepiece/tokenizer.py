"""`SentencePieceTokenizer`: a `.model` file's normalizer + model + decoder, as the
`sentencepiece` library runs them (`SentencePieceProcessor::Encode` / `Decode`).

    text -> Normalizer (normalizer.py) -> model (unigram.py / bpe.py / charword.py) -> ids
    ids  -> pieces -> surface text (decode) -> denormalizer (when the model has one)
"""

from __future__ import annotations

import base64
from typing import Any, Sequence

from ..incremental.generic import IncrementalMixin
from ..errors import UnsupportedTokenizerError
from .bpe import BPEModel
from .charword import CharModel, WordModel
from .model_proto import (
    BPE, BYTE, CHAR, CONTROL, MODEL_TYPE_NAMES, UNIGRAM, UNKNOWN, USER_DEFINED, WORD,
    DEFAULT_UNK_SURFACE, ModelProto, NormalizerSpec,
)
from .normalizer import SPACE_SYMBOL, Normalizer
from .unigram import UnigramModel

__all__ = ["SentencePieceTokenizer", "CONFIG_FORMAT"]

CONFIG_FORMAT = "anytok.sentencepiece"
CONFIG_VERSION = 1
_MODEL_TYPES = {v: k for k, v in MODEL_TYPE_NAMES.items()}
_BYTE_PIECES = {f"<0x{b:02X}>": b for b in range(256)}


def _spec_dict(spec: NormalizerSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "precompiled_charsmap": base64.b64encode(spec.precompiled_charsmap).decode("ascii"),
        "add_dummy_prefix": spec.add_dummy_prefix,
        "remove_extra_whitespaces": spec.remove_extra_whitespaces,
        "escape_whitespaces": spec.escape_whitespaces,
    }


def _spec_from_dict(d: dict[str, Any]) -> NormalizerSpec:
    return NormalizerSpec(
        name=d.get("name", ""),
        precompiled_charsmap=base64.b64decode(d.get("precompiled_charsmap", "")),
        add_dummy_prefix=bool(d.get("add_dummy_prefix", True)),
        remove_extra_whitespaces=bool(d.get("remove_extra_whitespaces", True)),
        escape_whitespaces=bool(d.get("escape_whitespaces", True)),
    )


def decode_utf8_bytes(data: bytes) -> str:
    """Bytes to text as sentencepiece's decoder does: every byte that does not start a valid
    UTF-8 sequence becomes one U+FFFD (Python's "replace" would use one per maximal invalid
    subsequence instead)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out = []
    pos = 0
    n = len(data)
    while pos < n:
        lead = data[pos]
        size = 1 if lead < 0x80 else 2 if 0xC2 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF5 else 0
        if size:
            try:
                out.append(data[pos : pos + size].decode("utf-8"))
                pos += size
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        pos += 1
    return "".join(out)


class SentencePieceTokenizer(IncrementalMixin):
    """A SentencePiece model (Unigram, BPE, WORD or CHAR) giving the ids of `sentencepiece`.

    ```
    >>> tok = anytok.sentencepiece.model_file.load_sentencepiece_model("tokenizer.model")
    >>> tok.encode("Hello world")           # SentencePieceProcessor.EncodeAsIds
    [23325, 2294]
    >>> tok.decode([23325, 2294])           # SentencePieceProcessor.DecodeIds
    'Hello world'
    ```
    """

    def __init__(
        self,
        *,
        name: str,
        model_type: int,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int],
        normalizer_spec: NormalizerSpec,
        denormalizer_spec: NormalizerSpec | None = None,
        treat_whitespace_as_suffix: bool = False,
        byte_fallback: bool = False,
        unk_surface: str = DEFAULT_UNK_SURFACE,
        unk_piece: str = "<unk>",
        bos_piece: str = "<s>",
        eos_piece: str = "</s>",
        pad_piece: str = "<pad>",
    ):
        self.name = name
        self.model_type = model_type
        self.pieces = list(pieces)
        self.scores = list(scores)
        self.types = list(types)
        if not (len(self.pieces) == len(self.scores) == len(self.types)):
            raise ValueError("pieces, scores and types must have the same length")
        self.normalizer_spec = normalizer_spec
        self.denormalizer_spec = denormalizer_spec
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.byte_fallback = byte_fallback
        self.unk_surface = unk_surface
        self.unk_piece, self.bos_piece, self.eos_piece, self.pad_piece = unk_piece, bos_piece, eos_piece, pad_piece

        # ModelInterface::InitializePieces: the checks sentencepiece makes when loading.
        unk_ids = [i for i, t in enumerate(self.types) if t == UNKNOWN]
        if not unk_ids:
            raise UnsupportedTokenizerError("pieces: unk is not defined (no piece of type UNKNOWN)")
        if len(unk_ids) > 1:
            raise UnsupportedTokenizerError("pieces: unk is already defined (two pieces of type UNKNOWN)")
        self.unk_id = unk_ids[0]
        byte_types = [p for p, t in zip(self.pieces, self.types) if t == BYTE]
        if byte_types and not byte_fallback:
            raise UnsupportedTokenizerError(f"pieces: byte piece {byte_types[0]} is found although `byte_fallback` is false")
        if any(p not in _BYTE_PIECES for p in byte_types):
            raise UnsupportedTokenizerError("pieces: invalid byte piece")
        if byte_fallback and len(set(byte_types)) != 256:
            raise UnsupportedTokenizerError("trainer_spec.byte_fallback: there are not 256 byte pieces although `byte_fallback` is true")

        kwargs = dict(unk_id=self.unk_id, byte_fallback=byte_fallback)
        if model_type == UNIGRAM:
            self.model = UnigramModel(self.pieces, self.scores, self.types, **kwargs)
        elif model_type == BPE:
            self.model = BPEModel(self.pieces, self.scores, self.types, **kwargs)
        elif model_type == WORD:
            self.model = WordModel(self.pieces, self.scores, self.types, **kwargs)
        elif model_type == CHAR:
            self.model = CharModel(self.pieces, self.scores, self.types, **kwargs)
        else:
            raise UnsupportedTokenizerError(f"trainer_spec.model_type: unknown model type {model_type}")

        user_defined = [p for p, t in zip(self.pieces, self.types) if t == USER_DEFINED]
        ns = normalizer_spec
        self.normalizer = Normalizer(
            precompiled_charsmap=ns.precompiled_charsmap,
            add_dummy_prefix=ns.add_dummy_prefix,
            remove_extra_whitespaces=ns.remove_extra_whitespaces,
            escape_whitespaces=ns.escape_whitespaces,
            treat_whitespace_as_suffix=treat_whitespace_as_suffix,
            user_defined=user_defined,
        )
        # SentencePieceProcessor::Load: a denormalizer only when its charsmap is not empty;
        # it has no user-defined symbols and the trainer's suffix option does not apply.
        self.denormalizer = None
        if denormalizer_spec is not None and denormalizer_spec.precompiled_charsmap:
            ds = denormalizer_spec
            self.denormalizer = Normalizer(
                precompiled_charsmap=ds.precompiled_charsmap,
                add_dummy_prefix=ds.add_dummy_prefix,
                remove_extra_whitespaces=ds.remove_extra_whitespaces,
                escape_whitespaces=ds.escape_whitespaces,
            )
        self._reserved = {p: i for i, (p, t) in enumerate(zip(self.pieces, self.types))
                          if t in (UNKNOWN, CONTROL, BYTE)}
        self._normal = {p: i for i, (p, t) in enumerate(zip(self.pieces, self.types))
                        if t not in (UNKNOWN, CONTROL, BYTE)}
        self._decode_strip = ns.add_dummy_prefix or ns.remove_extra_whitespaces
        self._decode_strip_all = ns.remove_extra_whitespaces

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_model_proto(cls, proto: ModelProto, *, name: str = "sentencepiece") -> "SentencePieceTokenizer":
        ts = proto.trainer_spec
        return cls(
            name=name,
            model_type=ts.model_type,
            pieces=proto.pieces,
            scores=proto.scores,
            types=proto.types,
            normalizer_spec=proto.normalizer_spec,
            denormalizer_spec=proto.denormalizer_spec,
            treat_whitespace_as_suffix=ts.treat_whitespace_as_suffix,
            byte_fallback=ts.byte_fallback,
            unk_surface=ts.unk_surface,
            unk_piece=ts.unk_piece,
            bos_piece=ts.bos_piece,
            eos_piece=ts.eos_piece,
            pad_piece=ts.pad_piece,
        )

    def to_config(self) -> dict[str, Any]:
        """A JSON-serializable description; `from_config(to_config())` encodes identically.

        ```
        {"format": "anytok.sentencepiece", "version": 1, "name": str,
         "model_type": "UNIGRAM" | "BPE" | "WORD" | "CHAR",
         "pieces": [str], "scores": [float], "types": [int],      # by id; types 1..6 as in
                                                                 # ModelProto (NORMAL..BYTE)
         "normalizer": {"name": str, "precompiled_charsmap": base64 str,
                        "add_dummy_prefix": bool, "remove_extra_whitespaces": bool,
                        "escape_whitespaces": bool},
         "denormalizer": null | {same keys},
         "treat_whitespace_as_suffix": bool, "byte_fallback": bool, "unk_surface": str,
         "unk_piece": str, "bos_piece": str, "eos_piece": str, "pad_piece": str}
        ```
        Scores are float32 values (exact as JSON numbers and as float32).
        """
        return {
            "format": CONFIG_FORMAT,
            "version": CONFIG_VERSION,
            "name": self.name,
            "model_type": MODEL_TYPE_NAMES[self.model_type],
            "pieces": list(self.pieces),
            "scores": list(self.scores),
            "types": list(self.types),
            "normalizer": _spec_dict(self.normalizer_spec),
            "denormalizer": None if self.denormalizer_spec is None else _spec_dict(self.denormalizer_spec),
            "treat_whitespace_as_suffix": self.treat_whitespace_as_suffix,
            "byte_fallback": self.byte_fallback,
            "unk_surface": self.unk_surface,
            "unk_piece": self.unk_piece,
            "bos_piece": self.bos_piece,
            "eos_piece": self.eos_piece,
            "pad_piece": self.pad_piece,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "SentencePieceTokenizer":
        if config.get("format") != CONFIG_FORMAT:
            raise ValueError(f"not a SentencePiece tokenizer config (format {config.get('format')!r})")
        if config.get("version") != CONFIG_VERSION:
            raise UnsupportedTokenizerError(f"version: SentencePiece config version {config.get('version')!r}")
        model_type = _MODEL_TYPES.get(config["model_type"])
        if model_type is None:
            raise UnsupportedTokenizerError(f"model_type: {config['model_type']!r}")
        denorm = config.get("denormalizer")
        return cls(
            name=config["name"],
            model_type=model_type,
            pieces=config["pieces"],
            scores=[float(s) for s in config["scores"]],
            types=[int(t) for t in config["types"]],
            normalizer_spec=_spec_from_dict(config["normalizer"]),
            denormalizer_spec=None if denorm is None else _spec_from_dict(denorm),
            treat_whitespace_as_suffix=bool(config.get("treat_whitespace_as_suffix", False)),
            byte_fallback=bool(config.get("byte_fallback", False)),
            unk_surface=config.get("unk_surface", DEFAULT_UNK_SURFACE),
            unk_piece=config.get("unk_piece", "<unk>"),
            bos_piece=config.get("bos_piece", "<s>"),
            eos_piece=config.get("eos_piece", "</s>"),
            pad_piece=config.get("pad_piece", "<pad>"),
        )

    # -- vocabulary ---------------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        return len(self.pieces)

    def _piece_to_id(self, piece: str) -> int:
        # ModelInterface::PieceToId: control/unknown/byte first, then the rest, else unk.
        i = self._reserved.get(piece)
        if i is None:
            i = self._normal.get(piece, self.unk_id)
        return i

    def token_to_id(self, piece: str) -> int | None:
        """The id of `piece`, or None when the vocabulary has no such piece.

        (sentencepiece's `PieceToId` answers the unknown id instead of None.)"""
        i = self._reserved.get(piece)
        if i is None:
            i = self._normal.get(piece)
        return i

    def id_to_token(self, i: int) -> str:
        """The piece of id `i` (IndexError outside 0..n_vocab-1)."""
        if not 0 <= i < len(self.pieces):
            raise IndexError(f"piece id is out of range: {i}")
        return self.pieces[i]

    def _special_id(self, piece: str, what: str) -> int:
        i = self._piece_to_id(piece)
        if self.types[i] == UNKNOWN:
            raise ValueError(f"id for `{piece}` is not defined ({what})")
        return i

    @property
    def bos_id(self) -> int:
        """sentencepiece's `bos_id()`: -1 when the model has no `bos_piece`."""
        i = self._piece_to_id(self.bos_piece)
        return -1 if self.types[i] == UNKNOWN else i

    @property
    def eos_id(self) -> int:
        i = self._piece_to_id(self.eos_piece)
        return -1 if self.types[i] == UNKNOWN else i

    # -- encode -------------------------------------------------------------------------------

    def normalize(self, text: str) -> str:
        """The normalized text (sentencepiece's `Normalize`)."""
        return self.normalizer.normalize(text)

    def encode(self, text: str, *, add_special_tokens: bool = False,
               add_bos: bool | None = None, add_eos: bool | None = None) -> list[int]:
        """The ids of `text`, as `SentencePieceProcessor.EncodeAsIds(text)`.

        No special tokens unless asked.  `add_special_tokens=True` adds BOS in front, as Llama,
        Mistral and Hugging Face's `LlamaTokenizer` do.  `add_bos` / `add_eos` choose each one
        explicitly (sentencepiece's `add_bos` / `add_eos`, the `bos:eos` extra options); they
        override `add_special_tokens`.  ValueError when the model has no such piece.

        Lone surrogates are an error (UnicodeEncodeError), as in sentencepiece, which needs
        UTF-8.
        """
        if not text.isascii():
            text.encode("utf-8")  # sentencepiece rejects what UTF-8 cannot encode; so do we
        ids = self.model.tokenize(self.normalizer.normalize(text))
        if add_bos is None:
            add_bos = add_special_tokens
        if add_bos:
            ids.insert(0, self._special_id(self.bos_piece, "bos"))
        if add_eos:
            ids.append(self._special_id(self.eos_piece, "eos"))
        return ids

    def encode_batch(self, texts: Sequence[str], **kwargs: Any) -> list[list[int]]:
        return [self.encode(t, **kwargs) for t in texts]

    def count(self, text: str, *, add_special_tokens: bool = False) -> int:
        """len(encode(text, add_special_tokens=...))."""
        return len(self.encode(text, add_special_tokens=add_special_tokens))


    def count_till_limit(self, text: str, limit: int) -> int | None:
        """`count(text)` if it is at most `limit`, else None.  (SentencePiece normalizes and
        segments the text as a whole, so this counts all of it: no early stop.)"""
        n = self.count(text)
        return n if n <= limit else None
    def encode_as_pieces(self, text: str) -> list[str]:
        """The pieces of `encode(text)` (for byte fallback the `<0xNN>` pieces)."""
        return [self.pieces[i] for i in self.encode(text)]

    # -- decode -------------------------------------------------------------------------------

    def decode(self, ids: Sequence[int]) -> str:
        """The text of `ids`, as `SentencePieceProcessor.DecodeIds(ids)`.

        Control pieces decode to nothing, the unknown piece to `unk_surface` (" \u2047 " by
        default), byte pieces are joined into UTF-8 (each byte that does not start a valid
        sequence becomes U+FFFD), U+2581 becomes a space, and the leading space the normalizer
        added is dropped.  IndexError for an id outside the vocabulary.
        """
        pieces = self.pieces
        n = len(pieces)
        for i in ids:
            if not 0 <= i < n:
                raise IndexError(f"Invalid id: {i}")
        return self._decode([pieces[i] for i in ids])

    def decode_pieces(self, pieces: Sequence[str]) -> str:
        """`DecodePieces`: like `decode`, from piece strings (a string that is no piece of the
        vocabulary decodes to itself)."""
        return self._decode(list(pieces))

    def _decode(self, pieces: list[str]) -> str:
        # SentencePieceProcessor::Decode(pieces): each piece gets the id PieceToId gives it.
        vocab = self.pieces
        types = self.types
        piece_to_id = self._piece_to_id
        out: list[str] = []
        text_empty = True
        is_bos_ws = True
        bos_ws_seen = False
        pending = bytearray()
        for piece in pieces:
            j = piece_to_id(piece)
            t = types[j]
            if t == BYTE:
                pending.append(_BYTE_PIECES[vocab[j]])
                continue
            if pending:
                s = decode_utf8_bytes(bytes(pending))
                pending.clear()
                if s:
                    out.append(s)
                    text_empty = False
            if bos_ws_seen or not text_empty:
                is_bos_ws = False
            if t == CONTROL:
                decoded, bos_ws_seen = "", False
            elif t == UNKNOWN:
                decoded = self.unk_surface if vocab[j] == piece else piece
                bos_ws_seen = False
            else:
                has_bos_ws = False
                if is_bos_ws and self._decode_strip and piece.startswith(SPACE_SYMBOL):
                    piece = piece[1:]
                    has_bos_ws = not self._decode_strip_all
                decoded = piece.replace(SPACE_SYMBOL, " ")
                bos_ws_seen = has_bos_ws
            if decoded:
                out.append(decoded)
                text_empty = False
        if pending:
            out.append(decode_utf8_bytes(bytes(pending)))
        text = "".join(out)
        if self.denormalizer is not None:
            text = self.denormalizer.normalize(text)
        return text

    def __repr__(self) -> str:
        return f"<SentencePieceTokenizer {self.name!r} {MODEL_TYPE_NAMES.get(self.model_type)} n_vocab={self.n_vocab}>"
