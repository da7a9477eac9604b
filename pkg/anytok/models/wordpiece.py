"""WordPiece, exactly as Hugging Face tokenizers' `WordPiece` model (BERT).

Greedy longest-match-first: from the start of the word, take the longest prefix that is a token
(after the first one, a piece is looked up with the continuation prefix, "##"), and go on from
its end.  A word that cannot be covered entirely, or that is longer than
`max_input_chars_per_word` characters, is the single unk token.
"""

from __future__ import annotations

from .vocab import VocabLookup, ids_table

__all__ = ["WordPiece"]

CACHE_SIZE = 1 << 16


class WordPiece(VocabLookup):
    kind = "WordPiece"

    def __init__(
        self,
        vocab: dict[str, int],
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ):
        self.vocab = dict(vocab)
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.max_input_chars_per_word = int(max_input_chars_per_word)
        self._ids = ids_table(self.vocab)
        plen = len(continuing_subword_prefix)
        # No piece longer than this (without the prefix) can be a token: start the search there.
        self._longest = max((len(t) - (plen if t.startswith(continuing_subword_prefix) else 0) for t in self.vocab), default=0)
        self._longest = max(self._longest, max((len(t) for t in self.vocab), default=0))
        self._cache: dict[str, list[int]] = {}

    def _unk(self) -> list[int]:
        i = self.vocab.get(self.unk_token)
        if i is None:
            raise ValueError(f"WordPiece: unk token {self.unk_token!r} is not in the vocabulary")
        return [i]

    def tokenize(self, piece: str) -> list[int]:
        if not piece:
            return []
        out = self._cache.get(piece)
        if out is not None:
            return out
        out = self._word(piece)
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[piece] = out
        return out

    def _word(self, word: str) -> list[int]:
        n = len(word)
        if n > self.max_input_chars_per_word:
            return self._unk()
        get = self.vocab.get
        prefix = self.continuing_subword_prefix
        longest = self._longest
        out = []
        start = 0
        while start < n:
            end = min(n, start + longest)
            while end > start:
                i = get(word[start:end] if start == 0 else prefix + word[start:end])
                if i is not None:
                    break
                end -= 1
            else:
                return self._unk()
            out.append(i)
            start = end
        return out

    def to_config(self) -> dict:
        return {
            "type": "WordPiece",
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "max_input_chars_per_word": self.max_input_chars_per_word,
            "vocab": dict(self.vocab),
        }

    @classmethod
    def from_config(cls, cfg: dict) -> "WordPiece":
        return cls(
            cfg.get("vocab") or {},
            unk_token=cfg.get("unk_token", "[UNK]"),
            continuing_subword_prefix=cfg.get("continuing_subword_prefix", "##"),
            max_input_chars_per_word=cfg.get("max_input_chars_per_word", 100),
        )
