"""Training SentencePiece models byte for byte as `sentencepiece` 0.2.1's trainer (or, with
`sentencepiece_version="0.2.3"`, 0.2.3's: `bpe023.py`, `unigram.py`'s v023 steps).

Data flow: input files -> lines (`std::getline`: split at "\\n") -> the first
`input_sentence_size` of them -> normalized (`anytok.sentencepiece.normalizer` with the rule's
charsmap; meta pieces cut out as a boundary; for 0.2.1's Unigram on words, which only counts,
each distinct line once with its count) -> the alphabet (`character_coverage`; rarer
characters become U+2585) -> words with counts (`split_by_whitespace`) -> the trainer of the
model type (`bpe.py`, `unigram.py`, `charword.py`) -> pieces and scores -> the `.model` protobuf
(`_spec.py`: the options given, the normalizer spec, the pieces after the meta pieces).

```
>>> from anytok.train.sentencepiece import train
>>> model = train(["botchan.txt"], model_prefix="m", vocab_size=1000, model_type="bpe",
...               num_threads=1, normalization_rule_name="identity")
>>> open("m.model", "wb").write(model.data)
```

The options are `SentencePieceTrainer.train`'s, with its defaults; the ones given are
recorded in the model's trainer spec exactly as sentencepiece records them (including
`input` and `model_prefix`, so give the same strings to get the same bytes).  Options this
trainer does not reproduce raise NotImplementedError naming them.

The normalization rule's table (`precompiled_charsmap`): for sentencepiece's built-in rules
(nmt_nfkc, the default, nfkc, nmt_nfkc_cf, nfkc_cf) it is built here from their rules
(`charsmap.py`, the same bytes as sentencepiece's; a few seconds once per process); "identity"
needs none; `precompiled_charsmap=` gives a table of one's own, e.g. `charsmap_of("some.model")`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterable

from ...sentencepiece.model_proto import BPE, CHAR, UNIGRAM, WORD, parse_model_proto
from ...sentencepiece.normalizer import Normalizer
from ._common import (BOUNDARY, BOUNDARY_023, TrainerError, PieceChecker, load_sentences,
                      meta_pieces, read_lines, required_chars, split_by_whitespace)
from ._spec import NORMALIZER_FIELDS, TrainerOptions, write_model
from .charsmap import BUILTIN_RULES, compile_charsmap, load_rule_tsv
from .charsmap import precompiled_charsmap as builtin_charsmap

__all__ = ["train", "TrainedSentencePiece", "TrainerError", "charsmap_of", "SENTENCEPIECE_VERSIONS"]

# The sentencepiece releases whose trainer can be reproduced (`sentencepiece_version=`).
SENTENCEPIECE_VERSIONS = ("0.2.1", "0.2.3")


@dataclass
class TrainedSentencePiece:
    """A trained model: `data` is the `.model` file's bytes."""

    data: bytes

    def save(self, path: str | os.PathLike[str]) -> None:
        with open(path, "wb") as f:
            f.write(self.data)

    def proto(self):
        return parse_model_proto(self.data)


def _sentences_of(texts: Iterable[str]) -> Iterable[str]:
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"sentence_iterator must give str, not {type(t).__name__}")
        yield t


def charsmap_of(model_path: str | os.PathLike[str]) -> bytes:
    """The normalization table of an existing `.model` file."""
    with open(model_path, "rb") as f:
        return parse_model_proto(f.read()).normalizer_spec.precompiled_charsmap


def train(input: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None, *,
          sentence_iterator: Iterable[str] | None = None,
          normalization_rule_name: str | None = None,
          precompiled_charsmap: bytes | None = None,
          add_dummy_prefix: bool | None = None,
          remove_extra_whitespaces: bool | None = None,
          escape_whitespaces: bool | None = None,
          progress: Callable[[dict], None] | None = None,
          sentencepiece_version: str = "0.2.1",
          **options) -> TrainedSentencePiece:
    """Train as `sentencepiece.SentencePieceTrainer.train(input=..., **options)` would.

    `input`: a file or files (their names are recorded in the model, as sentencepiece does),
    or `sentence_iterator`: the sentences themselves (each one a sentence, as sentencepiece's
    `sentence_iterator=`; nothing recorded).
    Normalizer options: `normalization_rule_name` (default "nmt_nfkc"), its table
    `precompiled_charsmap` (built here for sentencepiece's built-in rules and "identity";
    needed for any other name) or `normalization_rule_tsv` (a rule file, compiled here as
    sentencepiece compiles it), `add_dummy_prefix`,
    `remove_extra_whitespaces`, `escape_whitespaces`.  Any other keyword is a TrainerSpec
    option (`vocab_size`, `model_type`, `character_coverage`, `byte_fallback`,
    `split_digits`, `num_threads`, ...).

    `progress(info)` (not a sentencepiece option; it does not change the model) is called with
    ``{"phase": "read", "sentences", "chars", "finished"}`` while the input is read (a few
    times a second at most, and once when all is read), then ``{"phase": "train", "step":
    "normalize" | "alphabet" | "pieces" | "write"}`` as training moves on (step "pieces" also
    with "pieces" and "target": BPE's pieces so far of those it learns, every 100; Unigram's
    after its seeds and each EM round, which shrink towards the target), and last
    ``{"phase": "train", "step": "write", "finished": True, "pieces"}``.

    `sentencepiece_version` (not a sentencepiece option): whose trainer to reproduce,
    "0.2.1" (the default) or "0.2.3" (every model type: BPE's merges from all pairs,
    Unigram's new seeds and pruning, the boundary character U+001F where a meta piece is cut
    out (0.2.1: a tab), WORD's user-defined symbols also with "\u2581", every empty sentence
    dropped, its built-in normalization tables).
    """
    if sentencepiece_version not in SENTENCEPIECE_VERSIONS:
        raise ValueError(f"sentencepiece_version must be one of {', '.join(SENTENCEPIECE_VERSIONS)}, "
                         f"not {sentencepiece_version!r}")
    v023 = sentencepiece_version == "0.2.3"
    boundary = BOUNDARY_023 if v023 else BOUNDARY
    if (input is None) == (sentence_iterator is None):
        raise ValueError("give input (files) or sentence_iterator (sentences), not both")
    if input is None:
        files = None
    elif isinstance(input, (str, os.PathLike)):
        files = [os.fspath(input)]
    else:
        files = [os.fspath(p) for p in input]
    if "denormalization_rule_tsv" in options:
        raise NotImplementedError("SentencePiece trainer option(s) not implemented: denormalization_rule_tsv")
    rule_tsv = options.pop("normalization_rule_tsv", None)
    options.pop("minloglevel", None)
    opt = TrainerOptions({"input": files, **options} if files is not None else dict(options))
    if escape_whitespaces is False:
        raise NotImplementedError("SentencePiece trainer option(s) not implemented: escape_whitespaces=False")

    name = normalization_rule_name or "nmt_nfkc"
    if rule_tsv:
        # As sentencepiece: the file's rules, compiled, under the name "user_defined".
        if precompiled_charsmap is not None:
            raise ValueError("give normalization_rule_tsv or precompiled_charsmap, not both")
        name = "user_defined"
        precompiled_charsmap = compile_charsmap(load_rule_tsv(rule_tsv))
    elif precompiled_charsmap is None:
        if name != "identity" and name not in BUILTIN_RULES:
            raise ValueError(
                f"normalization rule {name!r} is not built in ({', '.join(BUILTIN_RULES)}, identity): "
                "pass its table as precompiled_charsmap= (e.g. charsmap_of(a .model trained with it))")
        precompiled_charsmap = builtin_charsmap(name, sentencepiece_version)
    norm_spec: dict[str, object] = {"name": name, "precompiled_charsmap": bytes(precompiled_charsmap)}
    if rule_tsv:
        norm_spec["normalization_rule_tsv"] = os.fspath(rule_tsv)
    for key, value in (("add_dummy_prefix", add_dummy_prefix),
                       ("remove_extra_whitespaces", remove_extra_whitespaces),
                       ("escape_whitespaces", escape_whitespaces)):
        if value is not None:
            norm_spec[key] = bool(value)
    nd = {k: norm_spec.get(k, NORMALIZER_FIELDS[k][2]) for k in NORMALIZER_FIELDS}

    if opt.vocab_size <= 0:
        raise TrainerError("vocab_size must be positive")
    checks = (("character_coverage", 0.98, 1.0), ("max_sentencepiece_length", 1, 512),
              ("num_sub_iterations", 1, 10), ("num_threads", 1, 1024),
              ("shrinking_factor", 0.5, 0.95), ("max_sentence_length", 10, 1073741824))
    for key, lo, hi in checks:
        if not lo <= getattr(opt, key) <= hi:
            raise TrainerError(f"{key} must be in [{lo}, {hi}]")
    if 0 < opt.input_sentence_size <= 100:
        raise TrainerError("input_sentence_size must be 0 or more than 100")
    if opt.input_format not in ("", "text"):
        raise NotImplementedError(f"SentencePiece trainer option(s) not implemented: input_format={opt.input_format}")
    if opt.model_type in (UNIGRAM, BPE) and opt.use_all_vocab:
        raise TrainerError("use_all_vocab=true is valid for WORD/CHAR model")

    meta = meta_pieces(opt, v023)
    normalizer = Normalizer(
        precompiled_charsmap=nd["precompiled_charsmap"], add_dummy_prefix=nd["add_dummy_prefix"],
        remove_extra_whitespaces=nd["remove_extra_whitespaces"],
        escape_whitespaces=nd["escape_whitespaces"],
        treat_whitespace_as_suffix=opt.treat_whitespace_as_suffix)
    lines = read_lines(files) if files is not None else _sentences_of(sentence_iterator)
    if progress is not None:
        lines = _reporting(lines, progress)
    # 0.2.1's Unigram on words only counts (its seeds too: no seed crosses a sentence's
    # end), so the same sentences go once each, with their counts; 0.2.3's seeds may end at
    # a sentence's end and see the next sentence
    merge = opt.model_type == UNIGRAM and opt.split_by_whitespace and not v023
    sentences = load_sentences(lines, opt, normalizer, meta, boundary, v023, merge)
    if progress is not None:
        progress({"phase": "train", "step": "alphabet", "finished": False})
    required = required_chars(sentences, opt, meta, boundary)
    if progress is not None:
        progress({"phase": "train", "step": "pieces", "finished": False})
    checker = PieceChecker(opt, boundary)

    if opt.model_type == BPE:
        if v023:
            from .bpe023 import train_bpe_023 as train_bpe
        else:
            from .bpe import train_bpe

        if opt.split_by_whitespace:
            sentences = split_by_whitespace(sentences, opt)
        final = train_bpe(sentences, required, opt.vocab_size - len(meta) - len(required), checker,
                          progress=_steps(progress))
    elif opt.model_type == UNIGRAM:
        from .unigram import train_unigram

        words = split_by_whitespace(sentences, opt) if opt.split_by_whitespace else None
        final = train_unigram(sentences, words, required, opt.vocab_size - len(meta), opt.vocab_size,
                              checker, seed_size=opt.seed_sentencepiece_size,
                              shrinking_factor=opt.shrinking_factor,
                              num_sub_iterations=opt.num_sub_iterations, threads=opt.num_threads,
                              progress=_steps(progress), v023=v023, boundary=boundary)
    else:
        from .charword import train_char, train_word

        n = opt.vocab_size - len(meta)
        if n < 0:
            raise TrainerError("vocab_size is smaller than the number of special pieces")
        if opt.model_type == CHAR:
            final = train_char(required, n, opt.use_all_vocab)
        else:
            final = train_word(sentences, n, opt.use_all_vocab)

    trainer_spec = dict(opt.given)
    vocab_size = opt.vocab_size
    if opt.model_type in (CHAR, WORD) and opt.use_all_vocab:
        vocab_size = trainer_spec["vocab_size"] = len(final) + len(meta)
    pieces = []
    it = iter(final)
    for id_ in range(vocab_size):
        if id_ in meta:
            pieces.append((meta[id_][0], 0.0, meta[id_][1]))
        else:
            nxt = next(it, None)
            if nxt is not None:
                pieces.append((nxt[0], nxt[1], 1))
    if next(it, None) is not None:
        raise TrainerError("more pieces than vocab_size")
    if progress is not None:
        progress({"phase": "train", "step": "write", "finished": False})
    if not opt.hard_vocab_limit or opt.model_type == CHAR:
        trainer_spec["vocab_size"] = len(pieces)
    elif len(pieces) != vocab_size:
        raise TrainerError(
            f"Vocabulary size too high ({vocab_size}). Please set it to a value <= {len(pieces)}.")
    model = TrainedSentencePiece(write_model(pieces, trainer_spec, norm_spec))
    if progress is not None:
        progress({"phase": "train", "step": "write", "finished": True, "pieces": len(pieces)})
    return model


def _reporting(lines: Iterable[str], progress: Callable[[dict], None]) -> Iterable[str]:
    """`lines` unchanged, with `progress` told how far reading has got (the line after the
    last one read may be left unread: input_sentence_size stops early)."""
    import time

    n = chars = 0
    progress({"phase": "read", "sentences": 0, "chars": 0, "finished": False})
    next_report = time.perf_counter() + 0.2
    for line in lines:
        n += 1
        chars += len(line)
        if n & 255 == 0 and time.perf_counter() >= next_report:
            next_report = time.perf_counter() + 0.2
            progress({"phase": "read", "sentences": n, "chars": chars, "finished": False})
        yield line
    progress({"phase": "read", "sentences": n, "chars": chars, "finished": True})
    progress({"phase": "train", "step": "normalize", "finished": False})


def _steps(progress: Callable[[dict], None] | None):
    """The trainers' (pieces, target) reports as `progress` dicts."""
    if progress is None:
        return None
    return lambda n, target: progress({"phase": "train", "step": "pieces", "pieces": n, "target": target,
                                       "finished": False})
