"""The errors every tokenizer family raises, in one module that imports nothing.

Data flow: none; each family (`format`, `convert`, `pretokenize`, `pipeline`, `sentencepiece`,
`gguf`) raises these, and `anytok` re-exports them.  They live here rather than in one family's
package so that no family imports another only to name an error.
"""

from __future__ import annotations

__all__ = ["VocabFormatError", "VocabSourceError", "UnsupportedPatternError", "UnsupportedTokenizerError"]


class VocabFormatError(ValueError):
    """A vocab file is not a valid anytok binary, or a tokenizer file is damaged (bad magic,
    truncated); the message says what is wrong."""


class VocabSourceError(ValueError):
    """A tiktoken or GPT-2 vocabulary file is malformed or fails its expected hash."""


class UnsupportedPatternError(ValueError):
    """The split pattern uses a regex feature that anytok cannot translate exactly."""


class UnsupportedTokenizerError(ValueError):
    """A tokenizer configuration (model, normalizer, ...) that anytok cannot reproduce exactly."""
