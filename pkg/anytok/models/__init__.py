"""Tokenization models: one pre-token in, ids out (one model per file).

* `bpe_merges.BPEMerges`: BPE driven by an ordered merge list (Hugging Face `BPE`), byte-level
  or character-level with byte fallback and unk.
* `wordpiece.WordPiece`: greedy longest-match-first with a continuation prefix (BERT).
* `wordlevel.WordLevel`: the whole pre-token looked up, else the unk token.

Every model offers `tokenize(piece) -> list[int]`, `token_to_id`, `id_to_token` and
`vocab_size` (the last three from `vocab.VocabLookup`), plus `to_config()` / `from_config()`
for serialization.
"""

from .bpe_merges import BPEMerges
from .wordlevel import WordLevel
from .wordpiece import WordPiece

__all__ = ["BPEMerges", "WordLevel", "WordPiece"]
