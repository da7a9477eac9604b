"""`SentencePieceTokenizer`: a `.model` file's normalizer + model + decoder, as the
`sentencepiece` library runs them (`SentencePieceProcessor::Encode` / `Decode`).

    text -> Normalizer (normalizer.py) -> model (unigram.py / bpe.py / charword.py) -> ids
    ids  -> pieces -> surface text (decode) -> denormalizer (when the model has one)
"""

from __future__ import annotations

import base64
from itertools import groupby
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

    def token_env(self):
        """What `anytok.constrain` needs of this model (`constrain.tokens.TokenEnv`), read as
        llguidance reads the same vocabulary converted to a `tokenizer.json` (Llama 2-style:
        byte-fallback decoder, control and unknown pieces as special added tokens, user-defined
        pieces as added tokens): `<0xXX>` pieces are that byte; normal, user-defined and unused
        pieces their text with U+2581 as a space, except user-defined pieces shaped `<...>`, which
        llguidance takes for special tokens; control and unknown pieces are special.  EOS: the
        model's `eos_piece` (`</s>`).  Forced bytes are tokenized by the model itself without its
        dummy-prefix U+2581 (as a byte-fallback tokenizer.json's `token_env` drops its prepended one), the text
        of a control or unknown piece (`</s>`, `[INST]`) standing for that piece, as the converted
        pipeline's special added tokens do.

        Supported: Unigram and BPE models with byte fallback, whitespace escaped as U+2581 (as a
        prefix), no extra-whitespace removal, no normalization charsmap and no denormalizer;
        anything else raises UnsupportedFeatureError naming it (a model without byte fallback
        cannot spell bytes outside its pieces, and llguidance refuses such a vocabulary too)."""
        import re

        from ..constrain.errors import UnsupportedFeatureError
        from ..constrain.tokens import TokenEnv
        from .model_proto import BPE, BYTE, CONTROL, MODEL_TYPE_NAMES, UNIGRAM, UNKNOWN, USER_DEFINED

        tok = self
        what = f"SentencePiece tokenizer {tok.name!r}"
        ns = tok.normalizer_spec
        if tok.model_type not in (UNIGRAM, BPE):
            raise UnsupportedFeatureError(f"{what}: model type {MODEL_TYPE_NAMES.get(tok.model_type, tok.model_type)}",
                                          "only Unigram and BPE models")
        if not tok.byte_fallback:
            raise UnsupportedFeatureError(f"{what} without byte fallback",
                                          "bytes outside its pieces have no token (llguidance needs a byte-fallback vocabulary)")
        if not ns.escape_whitespaces or tok.treat_whitespace_as_suffix:
            raise UnsupportedFeatureError(f"{what}: whitespace not escaped as a U+2581 prefix",
                                          "escape_whitespaces false or treat_whitespace_as_suffix")
        if ns.remove_extra_whitespaces:
            raise UnsupportedFeatureError(f"{what}: remove_extra_whitespaces",
                                          "its encoder would drop forced whitespace")
        if ns.precompiled_charsmap:
            raise UnsupportedFeatureError(f"{what}: normalization charsmap {ns.name!r}",
                                          "its encoder would rewrite forced bytes")
        if tok.denormalizer is not None:
            raise UnsupportedFeatureError(f"{what}: denormalizer", "decoded text differs from its pieces")
        token_bytes = {}
        user_defined = []
        special_ids = {}  # control/unknown piece -> id
        for t, (piece, kind) in enumerate(zip(tok.pieces, tok.types)):
            if kind == BYTE:
                token_bytes[t] = bytes((int(piece[3:5], 16),))
            elif kind == CONTROL or kind == UNKNOWN:
                special_ids.setdefault(piece, t)
            else:
                if kind == USER_DEFINED:
                    user_defined.append(piece)
                    if piece.startswith("<") and piece.endswith(">"):
                        continue
                token_bytes[t] = piece.replace("\u2581", " ").encode("utf-8")
        eos = tok.eos_id if tok.eos_id >= 0 else None
        normalizer = Normalizer(add_dummy_prefix=False, remove_extra_whitespaces=False, escape_whitespaces=True,
                                user_defined=user_defined)
        normalize, tokenize = normalizer.normalize, tok.model.tokenize
        # The converted tokenizer.json has the control/unknown pieces as special added tokens, and
        # its encoder (llguidance's) takes their text for them wherever it appears: `</s>` in forced
        # bytes becomes the EOS id, as with a Llama 2 tokenizer.json.  Leftmost, then longest.
        names = sorted((p for p in special_ids if p), key=lambda p: (-len(p), p))
        find = re.compile("|".join(map(re.escape, names))).search if names else None

        def encode(text: str) -> list:
            m = find(text) if find is not None else None
            if m is None:
                return tokenize(normalize(text))
            out: list = []
            pos = 0
            while m is not None:
                if m.start() > pos:
                    out.extend(tokenize(normalize(text[pos:m.start()])))
                out.append(special_ids[m.group()])
                pos = m.end()
                m = find(text, pos)
            if pos < len(text):
                out.extend(tokenize(normalize(text[pos:])))
            return out

        return TokenEnv(token_bytes, tok.n_vocab, eos, {p: t for p, t in special_ids.items() if p}, encode)

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

    def encode_with_offsets(self, text: str, *, add_special_tokens: bool = False,
                            add_bos: bool | None = None, add_eos: bool | None = None,
                            ) -> tuple[list[int], list[tuple[int, int]]]:
        """(ids, offsets): the ids of `encode(text, ...)` and, for each, the (start, end)
        code-point offsets in `text` of the input it stands for, as sentencepiece's piece spans
        give them (`encode(text, out_type="immutable_proto")`, see `encode_as_immutable_proto`).

        A piece's span covers the input its normalized text came from: the dummy-prefix
        U+2581 alone is empty at the start of the text; a piece holding a space that
        `remove_extra_whitespaces` collapsed covers the whole run.  Byte-fallback pieces of one
        character: all but the last are empty at the character's start, the last covers the
        character.  BOS and EOS (which sentencepiece's proto API does not add) get (0, 0).
        """
        from .spans import encode_spans

        spans = encode_spans(self, text)
        ids = [s[1] for s in spans]
        offsets = [(s[2], s[3]) for s in spans]
        if add_bos is None:
            add_bos = add_special_tokens
        if add_bos:
            ids.insert(0, self._special_id(self.bos_piece, "bos"))
            offsets.insert(0, (0, 0))
        if add_eos:
            ids.append(self._special_id(self.eos_piece, "eos"))
            offsets.append((0, 0))
        return ids, offsets

    def encode_as_immutable_proto(self, text: str):
        """`text` encoded with its piece spans, as sentencepiece's
        `encode(text, out_type="immutable_proto")` (`EncodeAsImmutableProto`): a
        `spans.SentencePieceText` with `.text`, `.score` and `.pieces`, each piece with
        `.piece`, `.id`, `.surface`, `.begin`, `.end` (code-point offsets into `text`), and
        the `_as_bytes` variants; `SerializeAsString()` gives the protobuf message.
        Lone surrogates are an error (UnicodeEncodeError)."""
        from .spans import encode_proto

        return encode_proto(self, text)

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
        ids = ids if isinstance(ids, list) else list(ids)
        if ids and not (0 <= min(ids) and max(ids) < n):
            for i in ids:
                if not 0 <= i < n:
                    raise IndexError(f"Invalid id: {i}")
        return self._decode([pieces[i] for i in ids], ids)

    def decode_pieces(self, pieces: Sequence[str]) -> str:
        """`DecodePieces`: like `decode`, from piece strings (a string that is no piece of the
        vocabulary decodes to itself)."""
        return self._decode(list(pieces))

    def _id_surfaces(self) -> tuple[list[str | None], list[bool], list[int]]:
        """Per id: the text its piece decodes to once no leading space can be stripped any more
        (None for a byte piece), whether its piece decodes as a byte, and that byte (else -1).
        Made on first use."""
        tables = self.__dict__.get("_surfaces")
        if tables is None:
            vocab, types = self.pieces, self.types
            surface: list[str | None] = []
            is_byte: list[bool] = []
            byte_value: list[int] = []
            for piece in vocab:
                j = self._piece_to_id(piece)
                t = types[j]
                is_byte.append(t == BYTE)
                byte_value.append(_BYTE_PIECES[vocab[j]] if t == BYTE else -1)
                if t == BYTE:
                    surface.append(None)
                elif t == CONTROL:
                    surface.append("")
                elif t == UNKNOWN:
                    surface.append(self.unk_surface if vocab[j] == piece else piece)
                else:
                    surface.append(piece.replace(SPACE_SYMBOL, " "))
            tables = self._surfaces = (surface, is_byte, byte_value)
        return tables

    def _decode(self, pieces: list[str], ids: list[int] | None = None) -> str:
        # SentencePieceProcessor::Decode(pieces): each piece gets the id PieceToId gives it.
        # With `ids` (pieces[k] is the piece of ids[k]), the pieces after the start, where a
        # leading space may be dropped, are decoded from per-id tables, byte runs in bulk.
        vocab = self.pieces
        types = self.types
        piece_to_id = self._piece_to_id
        out: list[str] = []
        text_empty = True
        is_bos_ws = True
        bos_ws_seen = False
        pending = bytearray()
        for k, piece in enumerate(pieces):
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
                if ids is not None:
                    self._decode_rest(ids, k, out)
                    break
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
        else:
            if pending:
                out.append(decode_utf8_bytes(bytes(pending)))
        text = "".join(out)
        if self.denormalizer is not None:
            text = self.denormalizer.normalize(text)
        return text

    def _decode_rest(self, ids: list[int], start: int, out: list[str]) -> None:
        # ids[start:] decoded with nothing more to strip: each id its surface, each run of byte
        # ids one UTF-8 decode (decode_utf8_bytes).
        surface, is_byte, byte_value = self._id_surfaces()
        rest = ids[start:] if start else ids
        if not any(map(is_byte.__getitem__, rest)):
            out.extend(map(surface.__getitem__, rest))
            return
        for byte_run, run in groupby(rest, is_byte.__getitem__):
            if byte_run:
                out.append(decode_utf8_bytes(bytes(map(byte_value.__getitem__, run))))
            else:
                out.extend(map(surface.__getitem__, run))

    def __repr__(self) -> str:
        return f"<SentencePieceTokenizer {self.name!r} {MODEL_TYPE_NAMES.get(self.model_type)} n_vocab={self.n_vocab}>"
