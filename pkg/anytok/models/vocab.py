"""The vocabulary lookups every model shares: `vocab` (token -> id) and `_ids` (id -> token)."""

from __future__ import annotations

__all__ = ["VocabLookup", "ids_table"]


def ids_table(vocab: dict[str, int]) -> list[str | None]:
    """id -> token as a list (None where no token has that id)."""
    out: list[str | None] = [None] * (max(vocab.values(), default=-1) + 1)
    for tok, i in vocab.items():
        out[i] = tok
    return out


class VocabLookup:
    """`token_to_id`, `id_to_token` and `vocab_size` over `self.vocab` and `self._ids`."""

    vocab: dict[str, int]
    _ids: list[str | None]

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, i: int) -> str | None:
        return self._ids[i] if 0 <= i < len(self._ids) else None

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)
