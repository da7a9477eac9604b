"""`tokenizers`' BpeTrainer with all its options, on word counts.

Data flow: word counts (pre-tokens with their counts, in first-seen order) -> the vocabulary's
start (special tokens, then the alphabet: every character seen, weighted by the counts of its
words, plus `initial_alphabet`, cut to `limit_alphabet` by count, sorted by code point) -> each
word as a sequence of symbols (characters outside the alphabet are dropped; a non-first
character is spelled `continuing_subword_prefix + c`, a last one `c + end_of_word_suffix`,
each new spelling taking the next id) -> the merge loop of `merge.py` (HF flavour) -> a
`BpeTrained` (vocab, merges), what `tokenizers` 0.23.3 puts in its `BPE` model.

Where `tokenizers` is not deterministic, this module is, and the choice can be pinned:

* the ids of the prefixed/suffixed spellings follow the order in which `tokenizers` walks its
  word-count hash map, which is seeded at random per process -- so `tokenizers` itself gives
  different ids, and through tie-breaking on ids sometimes other merges, run to run.  Here they
  follow the order the words were first seen;
* `limit_alphabet` drops the rarest characters; among characters of equal count at the cut
  `tokenizers` drops an arbitrary one, here the one with the lowest code point.

`reference_ids` (a vocabulary, token -> id, e.g. one `tokenizers` produced) makes both choices
as that vocabulary made them, so that a run can be compared with `tokenizers` token for token.
Pair counts are Python ints (`tokenizers` keeps them in i32, which wraps beyond 2**31).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Mapping

__all__ = ["BpeTrained", "train_bpe"]


class BpeTrained:
    """What BpeTrainer leaves in a `BPE` model: `vocab` (token -> id, in id order),
    `merges` (pairs of token strings, in rank order, each pair once at its last rank, as
    `tokenizer.json` lists them), and the prefix/suffix options the model takes over."""

    def __init__(self, vocab: dict[str, int], merges: list[tuple[str, str]], continuing_subword_prefix, end_of_word_suffix,
                 special_tokens: list[str]):
        self.vocab = vocab
        self.merges = merges
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.special_tokens = special_tokens

    def __repr__(self) -> str:
        return f"<BpeTrained vocab={len(self.vocab)} merges={len(self.merges)}>"


def _check_options(vocab_size, min_frequency, limit_alphabet, max_token_length, initial_alphabet, prefix, suffix):
    if not isinstance(vocab_size, int) or vocab_size < 0:
        raise ValueError(f"vocab_size must be a non-negative integer, not {vocab_size!r}")
    if not isinstance(min_frequency, int) or min_frequency < 0:
        raise ValueError(f"min_frequency must be a non-negative integer, not {min_frequency!r}")
    if limit_alphabet is not None and (not isinstance(limit_alphabet, int) or limit_alphabet < 0):
        raise ValueError(f"limit_alphabet must be a non-negative integer or None, not {limit_alphabet!r}")
    if max_token_length is not None and (not isinstance(max_token_length, int) or max_token_length < 0):
        raise ValueError(f"max_token_length must be a non-negative integer or None, not {max_token_length!r}")
    for c in initial_alphabet:
        if not isinstance(c, str) or len(c) != 1:
            raise ValueError(f"initial_alphabet holds single characters, not {c!r}")
    for name, v in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix)):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{name} must be a str or None, not {type(v).__name__}")


def _alphabet(word_counts: Mapping[str, int], initial_alphabet: Iterable[str], limit_alphabet, reference_ids) -> list[str]:
    """The kept characters, sorted by code point."""
    # Words grouped by count, so that the characters are counted by Counter's C loop.
    by_count: dict[int, list[str]] = {}
    for word, n in word_counts.items():
        if n:
            by_count.setdefault(n, []).append(word)
    char_counts: dict[str, int] = {}
    get = char_counts.get
    for n, words in by_count.items():
        for c, k in Counter("".join(words)).items():
            char_counts[c] = get(c, 0) + k * n
    forced = (1 << 64) - 1  # usize::MAX: the initial alphabet outranks every count
    for c in initial_alphabet:
        char_counts[c] = forced
    to_remove = 0 if limit_alphabet is None else max(0, len(char_counts) - limit_alphabet)
    if to_remove:
        if reference_ids is not None:
            def key(c):
                return (char_counts[c], c in reference_ids, ord(c))
        else:
            def key(c):
                return (char_counts[c], ord(c))
        kept = sorted(char_counts, key=key)[to_remove:]
    else:
        kept = list(char_counts)
    kept.sort()
    return kept


def train_bpe(
    word_counts: Mapping[str, int],
    *,
    vocab_size: int = 30000,
    min_frequency: int = 0,
    special_tokens: Iterable[str] = (),
    limit_alphabet: int | None = None,
    initial_alphabet: Iterable[str] = (),
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    max_token_length: int | None = None,
    progress: Callable[[int], None] | None = None,
    reference_ids: Mapping[str, int] | None = None,
) -> BpeTrained:
    """Train as `tokenizers.trainers.BpeTrainer(...)` does on these word counts.

    `word_counts` maps each pre-token to its count (iteration order matters only for ties, see
    the module docstring).  `vocab_size` counts everything (special tokens, alphabet, prefixed
    spellings, merges); training stops early when no pair is left or at the first pair that
    occurs fewer than `min_frequency` times.  `progress(n_merges)` is called after each merge.
    """
    from .._gc import gc_paused
    from .merge import learn_merges

    special_tokens = list(special_tokens)
    initial_alphabet = list(initial_alphabet)
    prefix, suffix = continuing_subword_prefix, end_of_word_suffix
    _check_options(vocab_size, min_frequency, limit_alphabet, max_token_length, initial_alphabet, prefix, suffix)
    for s in special_tokens:
        if not isinstance(s, str):
            raise TypeError(f"a special token must be a str, not {type(s).__name__}")

    with gc_paused():
        token_strs: list[str] = []
        ids: dict[str, int] = {}
        for s in special_tokens:
            if s not in ids:
                ids[s] = len(token_strs)
                token_strs.append(s)
        for c in _alphabet(word_counts, initial_alphabet, limit_alphabet, reference_ids):
            if c not in ids:
                ids[c] = len(token_strs)
                token_strs.append(c)

        words, counts = _symbolize(word_counts, ids, token_strs, prefix, suffix, reference_ids)
        # Symbol lengths in characters of the words (BpeTrainer's max_token_length counts those,
        # not the characters of the spelled token, which may carry the prefix or suffix).
        token_len = [1] * len(token_strs)

        def new_token(a: str, b: str) -> int:
            return join_pair(a, b, ids, token_strs, token_len, prefix)

        def done() -> bool:
            return len(ids) >= vocab_size

        merges = learn_merges(words, counts, hf=True, new_token=new_token, done=done, min_frequency=min_frequency,
                              max_token_length=max_token_length, token_len=token_len, progress=progress)
    # BPE keeps merges in a map pair -> (rank, id): a pair learned twice keeps its last rank.
    last: dict[tuple[int, int], int] = {}
    for rank, (a, b, _) in enumerate(merges):
        last[(a, b)] = rank
    pairs = [(token_strs[a], token_strs[b]) for (a, b), _ in sorted(last.items(), key=lambda kv: kv[1])]
    vocab = dict(sorted(ids.items(), key=lambda kv: kv[1]))
    return BpeTrained(vocab, pairs, prefix, suffix, list(dict.fromkeys(special_tokens)))


def join_pair(a: str, b: str, ids: dict[str, int], token_strs: list[str], token_len: list[int], prefix) -> int:
    """The id of the token that merging symbols `a` and `b` (ids as characters) makes: their
    texts joined, the right one without the continuing-subword `prefix`; a new token is added to
    `ids`, `token_strs` and `token_len` (its length in symbols)."""
    left = token_strs[ord(a)]
    right = token_strs[ord(b)]
    if prefix is not None and right.startswith(prefix):
        right = right[len(prefix):]
    s = left + right
    z = ids.get(s)
    if z is None:
        z = ids[s] = len(token_strs)
        token_strs.append(s)
        token_len.append(token_len[ord(a)] + token_len[ord(b)])
    return z


def _symbolize(word_counts, ids, token_strs, prefix, suffix, reference_ids):
    """Words as strings of chr(symbol id), and their counts; adds the prefixed/suffixed
    spellings to the vocabulary."""
    alphabet = set(ids)  # single characters in it count; longer special tokens never match one
    words: list[str] = []
    counts: list[int] = []
    spelled: dict[tuple[str, bool, bool], str] = {}
    new: list[str] = []
    base = len(token_strs)
    plain = prefix is None and suffix is None
    if plain:
        # Each alphabet character becomes chr(its id); any other character is dropped.
        table: dict[int, str | None] = {ord(c): chr(i) for c, i in ids.items() if len(c) == 1}
        for c in set("".join(word_counts)).difference(alphabet):
            table[ord(c)] = None
    for word, n in word_counts.items():
        if not n:
            continue
        counts.append(n)
        if plain:
            words.append(word.translate(table))
            continue
        out = []
        last = len(word) - 1
        for i, c in enumerate(word):
            if c not in alphabet:
                continue
            key = (c, i > 0, i == last)
            s = spelled.get(key)
            if s is None:
                s = c
                if i > 0 and prefix is not None:
                    s = prefix + s
                if i == last and suffix is not None:
                    s = s + suffix
                spelled[key] = s
                if s not in ids:
                    ids[s] = -1  # placeholder until the ids are handed out below
                    new.append(s)
            out.append(s)
        words.append(out)  # type: ignore[arg-type]
    if plain:
        return words, counts
    if reference_ids is not None:
        order = {s: i for i, s in enumerate(new)}
        new.sort(key=lambda s: (reference_ids.get(s, 1 << 62), order[s]))
    for i, s in enumerate(new):
        ids[s] = base + i
        token_strs.append(s)
    words = ["".join([chr(ids[s]) for s in w]) for w in words]
    return words, counts
