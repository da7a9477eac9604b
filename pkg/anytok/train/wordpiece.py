"""`tokenizers`' WordPieceTrainer on word counts.

Data flow: word counts -> `bpe_hf.train_bpe` with the continuing-subword prefix ("##" unless
told otherwise) -> the BPE's vocabulary becomes the WordPiece vocabulary (its merges are
dropped), as `WordPiece::from_bpe` does.  The model being trained keeps its own `unk_token`
and `max_input_chars_per_word`; it takes over the vocabulary and the prefix.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

__all__ = ["WordPieceTrained", "train_wordpiece"]


class WordPieceTrained:
    """`vocab` (token -> id) and the `continuing_subword_prefix` the model takes over
    (WordPiece's default "##" when the trainer had none)."""

    def __init__(self, vocab: dict[str, int], continuing_subword_prefix: str, special_tokens: list[str]):
        self.vocab = vocab
        self.continuing_subword_prefix = continuing_subword_prefix
        self.special_tokens = special_tokens

    def __repr__(self) -> str:
        return f"<WordPieceTrained vocab={len(self.vocab)}>"


def train_wordpiece(
    word_counts: Mapping[str, int],
    *,
    vocab_size: int = 30000,
    min_frequency: int = 0,
    special_tokens: Iterable[str] = (),
    limit_alphabet: int | None = None,
    initial_alphabet: Iterable[str] = (),
    continuing_subword_prefix: str | None = "##",
    end_of_word_suffix: str | None = None,
    progress: Callable[[int], None] | None = None,
    reference_ids: Mapping[str, int] | None = None,
) -> WordPieceTrained:
    """Train as `tokenizers.trainers.WordPieceTrainer(...)` does on these word counts (see
    `bpe_hf.train_bpe` for the options and for `reference_ids`)."""
    from .bpe_hf import train_bpe

    bpe = train_bpe(word_counts, vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=special_tokens,
                    limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet,
                    continuing_subword_prefix=continuing_subword_prefix, end_of_word_suffix=end_of_word_suffix,
                    progress=progress, reference_ids=reference_ids)
    prefix = continuing_subword_prefix if continuing_subword_prefix is not None else "##"
    return WordPieceTrained(bpe.vocab, prefix, bpe.special_tokens)
