"""Hugging Face `tokenizer.json` -> `anytok.pipeline.Tokenizer`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import UnsupportedTokenizerError
from .tokenizer import Tokenizer

__all__ = ["load_tokenizer_json", "UnsupportedTokenizerError"]


def load_tokenizer_json(source, *, name: str | None = None) -> Tokenizer:
    """Load a tokenizer.json given as a path, its bytes / text, or the parsed dict.

    Raises `UnsupportedTokenizerError` (a ValueError) naming the component for any
    configuration anytok cannot reproduce exactly.
    """
    if isinstance(source, dict):
        cfg = source
    elif isinstance(source, (bytes, bytearray, memoryview)):
        cfg = json.loads(bytes(source).decode("utf-8"))
    elif isinstance(source, str) and source.lstrip().startswith("{"):
        cfg = json.loads(source)
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        cfg = json.loads(path.read_text(encoding="utf-8"))
        if name is None:
            name = path.parent.name if path.name == "tokenizer.json" else path.name.split(".")[0]
    else:
        raise TypeError(f"load_tokenizer_json: expected a path, bytes, str or dict, not {type(source).__name__}")
    if not isinstance(cfg, dict) or "model" not in cfg:
        raise ValueError("not a tokenizer.json: no 'model'")
    return Tokenizer.from_config(cfg, name=name)
