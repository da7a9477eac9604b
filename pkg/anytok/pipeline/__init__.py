"""The Hugging Face tokenizers pipeline, in pure Python.

Text flows through the stages of HF `tokenizers`, one module each:

    added_tokens  (split out added tokens, before normalization)
    normalizers   (per remaining split)
    pre_tokenizers
    models        (anytok.models: BPE by merge list, WordPiece)
    post_processors (special tokens, when add_special_tokens=True)
    decoders      (ids -> text)

`tokenizer.Tokenizer` composes them; `anytok.pipeline.hf_json.load_tokenizer_json` builds one
from a `tokenizer.json`.  Every component reproduces the Rust crate's ids exactly; a
configuration anytok cannot reproduce exactly raises `UnsupportedTokenizerError` naming the
component, never a silent approximation.
"""

from __future__ import annotations

from ..errors import UnsupportedTokenizerError

__all__ = ["UnsupportedTokenizerError", "Tokenizer"]


def __getattr__(name: str):
    if name == "Tokenizer":
        from .tokenizer import Tokenizer

        return Tokenizer
    raise AttributeError(name)
