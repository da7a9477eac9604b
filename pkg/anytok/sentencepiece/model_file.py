"""SentencePiece `.model` files (a serialized `ModelProto`), read without `sentencepiece`."""

from __future__ import annotations

import os

from ..errors import UnsupportedTokenizerError
from .model_proto import parse_model_proto
from .protobuf import ProtobufError
from .tokenizer import SentencePieceTokenizer
from ..convert.tiktoken_bpe import PathOrBytes, VocabSourceError, check_hash, read_source

__all__ = ["load_sentencepiece_model"]


def load_sentencepiece_model(
    source: PathOrBytes, *, name: str | None = None, expected_hash: str | None = None
) -> SentencePieceTokenizer:
    """Load a SentencePiece `.model` file (a path or its bytes).

    `name` defaults to the file name without extension.  With `expected_hash`, the sha256 of
    the contents must match it.  VocabSourceError when the bytes are not a model;
    UnsupportedTokenizerError (naming the field) for a model anytok cannot run exactly.
    """
    data = read_source(source)
    what = str(source) if isinstance(source, (str, os.PathLike)) else "SentencePiece model"
    check_hash(data, expected_hash, what)
    try:
        proto = parse_model_proto(data)
    except ProtobufError as e:
        raise VocabSourceError(f"{what}: not a SentencePiece model: {e}") from None
    if name is None:
        if isinstance(source, (str, os.PathLike)):
            name = os.path.basename(os.fspath(source)).split(".")[0] or "sentencepiece"
        else:
            name = "sentencepiece"
    return SentencePieceTokenizer.from_model_proto(proto, name=name)


__all__ += ["UnsupportedTokenizerError"]
