"""WordLevel, exactly as Hugging Face tokenizers' `WordLevel` model.

Each pre-token is looked up whole: its id if the vocabulary has it, else the unk token's id.
A vocabulary without the unk token makes an unknown pre-token an error (as tokenizers raises
it at encode time, not when the model is built).
"""

from __future__ import annotations

from .vocab import VocabLookup, ids_table

__all__ = ["WordLevel", "MISSING_UNK"]

MISSING_UNK = "WordLevel error: Missing [UNK] token from the vocabulary"


class WordLevel(VocabLookup):
    kind = "WordLevel"

    def __init__(self, vocab: dict[str, int], *, unk_token: str = "<unk>"):
        self.vocab = dict(vocab)
        self.unk_token = unk_token
        self._ids = ids_table(self.vocab)
        self._unk_id = self.vocab.get(unk_token)

    def tokenize(self, piece: str) -> list[int]:
        i = self.vocab.get(piece)
        if i is None:
            i = self._unk_id
            if i is None:
                raise ValueError(MISSING_UNK)
        return [i]

    def tokenize_many(self, pieces: list[str]) -> list[int]:
        get = self.vocab.get
        unk = self._unk_id
        out = [get(p, unk) for p in pieces]
        if unk is None and None in out:
            raise ValueError(MISSING_UNK)
        return out

    def to_config(self) -> dict:
        return {"type": "WordLevel", "vocab": dict(self.vocab), "unk_token": self.unk_token}

    @classmethod
    def from_config(cls, cfg: dict) -> "WordLevel":
        if "unk_token" not in cfg:
            # tokenizers' deserializer requires it (its builder's "<unk>" default is not used).
            raise ValueError("WordLevel model: missing field `unk_token`")
        return cls(cfg.get("vocab") or {}, unk_token=cfg["unk_token"])
