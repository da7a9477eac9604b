"""tokenizer.json's `Precompiled` normalizer for the Hugging Face pipeline (anytok.pipeline).

    {"type": "Precompiled", "precompiled_charsmap": "<base64 of a SentencePiece charsmap>"}

Normalizes as `tokenizers` does: per extended grapheme cluster (graphemes.py, Unicode 17.0 as
tokenizers 0.23's `unicode-segmentation`), see `normalizer.Precompiled.normalize_hf`.
"""

from __future__ import annotations

import base64
import binascii

from ..errors import UnsupportedTokenizerError
from .graphemes import grapheme_spans
from .normalizer import Precompiled

__all__ = ["PrecompiledNormalizer", "from_config"]


class PrecompiledNormalizer:
    """A pipeline normalizer: `normalize(text) -> str`, `to_config() -> dict`."""

    type = "Precompiled"

    def __init__(self, precompiled_charsmap: bytes):
        if not precompiled_charsmap:
            # tokenizers cannot build this normalizer either ("Cannot parse precompiled_charsmap").
            raise UnsupportedTokenizerError("normalizer Precompiled: empty precompiled_charsmap")
        self.precompiled_charsmap = bytes(precompiled_charsmap)
        self._precompiled = Precompiled(self.precompiled_charsmap)

    def normalize(self, text: str) -> str:
        return self._precompiled.normalize_hf(text, grapheme_spans)

    def to_config(self) -> dict:
        return {"type": "Precompiled",
                "precompiled_charsmap": base64.b64encode(self.precompiled_charsmap).decode("ascii")}


def from_config(cfg: dict) -> PrecompiledNormalizer:
    raw = cfg.get("precompiled_charsmap")
    if not isinstance(raw, str):
        raise UnsupportedTokenizerError("normalizer Precompiled: precompiled_charsmap must be a base64 string")
    try:
        blob = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise UnsupportedTokenizerError("normalizer Precompiled: precompiled_charsmap is not base64") from None
    return PrecompiledNormalizer(blob)
