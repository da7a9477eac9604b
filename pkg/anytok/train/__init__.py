"""Learning a byte-level BPE vocabulary from text, exactly as `tokenizers` or `rustbpe` do.

```
>>> import anytok
>>> tok = anytok.train(["corpus.txt"], vocab_size=8192, style="tiktoken")
>>> enc = tok.to_encoding()                 # an anytok Encoding (pattern + ranks + specials)
>>> tok.save("mine.tiktoken"); tok.save("mine.atok")
>>> hf = anytok.train(texts=my_texts, vocab_size=8192, style="hf", special_tokens=["<|endoftext|>"])
>>> hf.save("tokenizer.json")               # what tokenizers' BpeTrainer would have written
```

Pipeline: texts -> pieces (the split pattern; `words.py`) -> distinct pieces with counts ->
symbols (bytes, or HF's byte-level characters) -> merges (`merge.py`) -> a `TrainedBPE`
(`result.py`), which writes `tokenizer.json`, `.tiktoken` and `.atok`.  `_educational.py` is a
plain, slow version of the merge loop that the tests hold the fast one to.

Styles:

* ``"hf"``: Hugging Face `tokenizers` 0.23.3, `Tokenizer(BPE())` with pre-tokenizer
  `Sequence([Split(Regex(pattern), "isolated"), ByteLevel(add_prefix_space=False,
  use_regex=False)])`, decoder `ByteLevel()` and `BpeTrainer(vocab_size, min_frequency,
  special_tokens, initial_alphabet=ByteLevel.alphabet(), max_token_length)`.  Ids: the
  special tokens, then the 256 byte-level characters by code point, then merged tokens.  The
  pattern is read as Oniguruma reads it (HF's regex engine).  Files are read line by line.
* ``"tiktoken"``: `rustbpe` 0.1.0, `Tokenizer().train_from_iterator(texts, vocab_size,
  pattern=pattern)`: ranks 0-255 are the bytes, merged tokens follow; `vocab_size` counts the
  256 bytes.  Special tokens (not part of rustbpe) get the ids after the last rank.  The
  pattern is read as tiktoken reads it.  Files are read whole, one text each.

Where the references are not deterministic, this is: HF breaks ties between two heap entries
of the same pair and count (possible only after a merge reused an existing token) in an
arbitrary order; here the entry pushed first goes first.  Not offered (the fixed recipe has no
use for them): `limit_alphabet`, `continuing_subword_prefix`, `end_of_word_suffix`, another
`initial_alphabet`.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

if TYPE_CHECKING:
    from collections import Counter

    from .result import TrainedBPE

# The modules that do the work are imported by train() itself, so `import anytok` stays fast.

__all__ = ["train", "TrainedBPE", "resolve_pattern"]


def __getattr__(name: str):
    if name == "TrainedBPE":
        from .result import TrainedBPE

        return TrainedBPE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

STYLES = ("hf", "tiktoken")


def resolve_pattern(pattern: str) -> str:
    """A bundled encoding's name (``"o200k_base"``) stands for its split pattern."""
    from ..registry import list_encoding_names

    if pattern in list_encoding_names():
        from ..registry import get_encoding

        return get_encoding(pattern)._pat_str
    return pattern


def train(
    files: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None,
    *,
    vocab_size: int,
    style: str = "hf",
    pattern: str = "o200k_base",
    special_tokens: Iterable[str] = (),
    min_frequency: int = 0,
    max_token_length: int | None = None,
    texts: Iterable[str] | None = None,
    word_counts: Mapping[str, int] | Iterable[tuple[str, int]] | None = None,
    progress: Callable[[dict], None] | None = None,
    name: str = "trained",
    kind: str | None = None,
    **sentencepiece_options,
) -> TrainedBPE:
    """Learn a BPE vocabulary of `vocab_size` tokens from `files`, `texts` and/or `word_counts`.

    `files` are read as the reference reads them (style "hf": line by line; "tiktoken": each
    file whole); each of `texts` is one text; `word_counts` are pre-tokens (pieces of the
    split pattern, as text) with their counts, counted elsewhere -- all sources add up.
    `vocab_size` counts everything: for "hf" the special tokens, the 256-character alphabet and
    the merges; for "tiktoken" the 256 bytes and the merges (special tokens come on top).
    Training stops early when no pair is left, or (both styles) at the first pair that occurs
    fewer than `min_frequency` times.  `max_token_length` (style "hf" only) is
    `BpeTrainer`'s: merged tokens get at most max(2, L - 1) characters.

    `progress(info)` is called now and then with a dict: ``{"phase": "count", "mb",
    "mb_per_s", "texts", "distinct", "done"}`` while counting, ``{"phase": "merge", "done",
    "total", "eta_s"}`` while merging.

    ``style="sentencepiece"`` trains a SentencePiece model instead, byte for byte as
    `sentencepiece`'s trainer: ``kind`` is its model type ("unigram", "bpe", "char", "word"),
    `files` its input, and further keywords are its options (see
    `anytok.train.sentencepiece.train`); it returns a `TrainedSentencePiece` (`.save(path)`).
    """
    if style == "sentencepiece":
        from .sentencepiece import train as train_sentencepiece

        if (files is None) == (texts is None) or word_counts is not None:
            raise ValueError("style='sentencepiece' trains from files or from texts (each one a sentence)")
        if kind is not None:
            given = sentencepiece_options.setdefault("model_type", kind)
            if str(given).lower() != kind:
                raise ValueError(f"kind={kind!r} but model_type={given!r}")
        if texts is not None:
            sentencepiece_options["sentence_iterator"] = [texts] if isinstance(texts, str) else texts
        return train_sentencepiece(files, vocab_size=vocab_size, progress=progress, **sentencepiece_options)
    if sentencepiece_options or kind not in (None, "bpe"):
        raise ValueError(f"options {sorted(sentencepiece_options)} and kind={kind!r} need style='sentencepiece'")
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, not {style!r}")
    if not isinstance(vocab_size, int) or vocab_size < 0:
        raise ValueError(f"vocab_size must be a non-negative integer, not {vocab_size!r}")
    if style == "tiktoken" and vocab_size < 256:
        raise ValueError("vocab_size counts the 256 bytes: it must be at least 256")
    if max_token_length is not None and style != "hf":
        raise ValueError("max_token_length is a BpeTrainer option: use style='hf'")
    if min_frequency < 0:
        raise ValueError("min_frequency must be >= 0")
    special_tokens = list(special_tokens)
    for s in special_tokens:
        if not isinstance(s, str) or not s:
            raise ValueError(f"a special token must be a non-empty str, not {s!r}")
    from ..pretokenize import Splitter
    from .._gc import gc_paused

    hf = style == "hf"
    pat_str = resolve_pattern(pattern)
    splitter = Splitter(pat_str, dialect="onig" if hf else "fancy")

    # Training makes millions of small lists and tuples and no reference cycles: the cycle
    # collector's passes over them would cost about a third of the time.
    with gc_paused():
        return _train(files, texts, word_counts, splitter, vocab_size=vocab_size, hf=hf, pat_str=pat_str,
                      special_tokens=special_tokens, min_frequency=min_frequency,
                      max_token_length=max_token_length, progress=progress, name=name)


def _train(files, texts, word_counts, splitter, *, vocab_size, hf, pat_str, special_tokens, min_frequency,
           max_token_length, progress, name):
    from .words import PieceCounter, count_word_counts, file_blocks, file_line_blocks, read_whole, streamable

    counter = PieceCounter(splitter, gaps=hf, progress=progress)
    if files is not None:
        if isinstance(files, (str, os.PathLike)):
            files = [files]
        for path in files:
            if hf:
                for block, nbytes in file_line_blocks(path):
                    counter.add_lines(block, nbytes)
            elif streamable(splitter.pattern):
                counter.add_blocks(file_blocks(path))
            else:
                counter.add_text(read_whole(path), os.path.getsize(path))
    if texts is not None:
        if isinstance(texts, str):
            raise TypeError("texts must be an iterable of str (wrap a single text in a list)")
        for text in texts:
            counter.add_text(text)
    counts = counter.finish()
    if word_counts is not None:
        counts.update(count_word_counts(word_counts))

    return _train_counts(counts, vocab_size=vocab_size, hf=hf, pat_str=pat_str, special_tokens=special_tokens,
                         min_frequency=min_frequency, max_token_length=max_token_length, progress=progress,
                         name=name)


def _train_counts(counts: Counter, *, vocab_size, hf, pat_str, special_tokens, min_frequency, max_token_length,
                  progress, name) -> TrainedBPE:
    """The merge loop on distinct pieces with counts."""
    from .merge import learn_merges
    from .result import BYTE_TO_CHAR, TrainedBPE

    if hf:
        # HF's ids: special tokens (each once), then the alphabet sorted by code point (a
        # special token spelled as one alphabet character keeps the special's id).
        token_strs: list[str] = []
        ids: dict[str, int] = {}
        for s in special_tokens:
            if s not in ids:
                ids[s] = len(token_strs)
                token_strs.append(s)
        for ch in sorted(BYTE_TO_CHAR):
            if ch not in ids:
                ids[ch] = len(token_strs)
                token_strs.append(ch)
        table = {b: chr(ids[BYTE_TO_CHAR[b]]) for b in range(256)}
        words = [p.encode("utf-8").decode("latin-1").translate(table) for p in counts]
        token_len = [len(t) for t in token_strs]

        def new_token(a: str, b: str) -> int:
            s = token_strs[ord(a)] + token_strs[ord(b)]
            z = ids.get(s)
            if z is None:
                z = ids[s] = len(token_strs)
                token_strs.append(s)
                token_len.append(len(s))
            return z

        def done() -> bool:
            return len(ids) >= vocab_size

        total = max(0, vocab_size - len(ids))
    else:
        words = [p.encode("utf-8").decode("latin-1") for p in counts]
        n_merges = vocab_size - 256
        next_id = [256]

        def new_token(a: str, b: str) -> int:
            z = next_id[0]
            next_id[0] = z + 1
            return z

        def done() -> bool:
            return next_id[0] - 256 >= n_merges

        token_strs = []
        token_len = None
        total = n_merges
    word_counts = list(counts.values())

    report = None
    if progress is not None:
        t0 = time.perf_counter()
        state = {"next": 0.0}

        def report(n: int) -> None:
            now = time.perf_counter()
            if now < state["next"] and n < total:
                return
            state["next"] = now + 0.2
            rate = n / (now - t0) if now > t0 else 0.0
            progress({"phase": "merge", "done": n, "total": total,
                      "eta_s": (total - n) / rate if rate > 0 else None})

        progress({"phase": "merge", "done": 0, "total": total, "eta_s": None})

    merges = learn_merges(words, word_counts, hf=hf, new_token=new_token, done=done, min_frequency=min_frequency,
                          max_token_length=max_token_length, token_len=token_len, progress=report)
    if report is not None:
        progress({"phase": "merge", "done": len(merges), "total": total, "eta_s": 0.0, "finished": True})
    return TrainedBPE(style="hf" if hf else "tiktoken", pattern=pat_str, special_tokens=special_tokens,
                      merges=merges, hf_tokens=token_strs if hf else None, name=name)
