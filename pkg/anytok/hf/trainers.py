"""`tokenizers.trainers` (placeholder): the trainer classes by name; training is the work of the
issue "Training every kind of model".

How data flows (the contract): `Tokenizer.train(files, trainer)` and
`Tokenizer.train_from_iterator(iterator, trainer, length)` call
`trainer._train_tokenizer(tokenizer, iterator_of_str)`, which sets the tokenizer's model and
added tokens.  Until then every trainer raises NotImplementedError when built.
"""

from __future__ import annotations

__all__ = ["Trainer", "BpeTrainer", "WordPieceTrainer", "WordLevelTrainer", "UnigramTrainer"]


class Trainer:
    """Base class of the trainers."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"anytok.hf: {type(self).__name__} is not implemented yet (training models "
                                  "is a separate piece of work)")

    def _train_tokenizer(self, tokenizer, iterator):  # pragma: no cover - the contract
        raise NotImplementedError


class BpeTrainer(Trainer):
    """Trains a BPE model (not implemented yet)."""


class WordPieceTrainer(Trainer):
    """Trains a WordPiece model (not implemented yet)."""


class WordLevelTrainer(Trainer):
    """Trains a WordLevel model (not implemented yet)."""


class UnigramTrainer(Trainer):
    """Trains a Unigram model (not implemented yet)."""
