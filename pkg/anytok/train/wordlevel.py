"""`tokenizers`' WordLevelTrainer on word counts.

Data flow: word counts -> sorted by count (highest first), then by the words' code points ->
those occurring at least `min_frequency` times, after the special tokens -> the first
`vocab_size` of that list, numbered in order.  A word equal to a special token (or a special
token given twice) takes the later number, leaving the earlier one unused, as in `tokenizers`
(whose vocabulary is a map filled in that order).
"""

from __future__ import annotations

from typing import Iterable, Mapping

__all__ = ["train_wordlevel"]


def train_wordlevel(word_counts: Mapping[str, int], *, vocab_size: int = 30000, min_frequency: int = 0,
                    special_tokens: Iterable[str] = ()) -> dict[str, int]:
    """The vocabulary (token -> id) `tokenizers.trainers.WordLevelTrainer(...)` makes."""
    if not isinstance(vocab_size, int) or vocab_size < 0:
        raise ValueError(f"vocab_size must be a non-negative integer, not {vocab_size!r}")
    if not isinstance(min_frequency, int) or min_frequency < 0:
        raise ValueError(f"min_frequency must be a non-negative integer, not {min_frequency!r}")
    special_tokens = list(special_tokens)
    ordered = sorted(word_counts.items(), key=lambda wc: (-wc[1], wc[0]))
    vocab: dict[str, int] = {}
    i = 0
    for s in special_tokens:
        if i >= vocab_size:
            return vocab
        vocab.pop(s, None)
        vocab[s] = i
        i += 1
    for w, n in ordered:
        if i >= vocab_size:
            break
        if n >= min_frequency:
            vocab.pop(w, None)  # a later id for the same key: the key moves to the end
            vocab[w] = i
            i += 1
    return vocab
