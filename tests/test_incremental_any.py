"""Incremental operations of Hugging Face pipelines and SentencePiece models, and the proof that
lets a tokenizer.json run as an Encoding (anytok.pipeline.as_encoding).

Every count an operation reports is compared with the tokenizer's own `count` of the text in
question, and `count` itself with `tokenizers` / `sentencepiece` (test_hf.py,
test_sentencepiece.py); `to_encoding()` is compared with `tokenizers` directly.
"""

from __future__ import annotations

import functools
import pickle
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT  # noqa: F401  (puts build_scripts on sys.path)
from hf_support import anytok_tokenizer, hf_from_json, hf_tokenizer

from anytok.pipeline import UnsupportedTokenizerError
from anytok.pipeline.pre_tokenizers import BYTE_TO_CHAR
from anytok.pipeline.tokenizer import Tokenizer

SAMPLE = 3000


@functools.lru_cache(maxsize=None)
def _llama3():
    """This file's own Llama 3 pipeline: proving its Encoding reroutes its encode and count, and
    test_hf.py must keep testing the pipeline path on the shared instance."""
    from hf_support import model_path

    from anytok.pipeline.hf_json import load_tokenizer_json

    return load_tokenizer_json(model_path("llama3"))


class _Reference:
    """`count` and `encode` of `tokenizers` itself (no special tokens added)."""

    def __init__(self, hf):
        self._hf = hf

    def encode(self, text: str) -> list[int]:
        return self._hf.encode(text, add_special_tokens=False).ids

    def count(self, text: str) -> int:
        return len(self.encode(text))


def _sample(text: str, n: int = SAMPLE) -> str:
    middle = len(text) // 2
    return text[middle:middle + n]


# ---------------------------------------------------------------------------------------------
# to_encoding: which pipelines are Encodings, and the proof on random merge lists
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_llama3_encoding_equals_tokenizers(corpus, corpora):
    enc = _llama3().to_encoding()
    hf = hf_tokenizer("llama3")
    text = corpora[corpus][:60_000]
    assert enc.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids
    assert enc.count_ordinary(text) == len(hf.encode(text, add_special_tokens=False).ids)
    # The added tokens are the Encoding's special tokens.
    text = "<|begin_of_text|>" + text[:3000] + "<|eot_id|><|eot_id|> x<|reserved_special_token_5|>"
    assert enc.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
    with pytest.raises(ValueError):
        enc.encode(text)  # disallowed by default, as in tiktoken


def test_llama3_encoding_pickles():
    enc = _llama3().to_encoding()
    back = pickle.loads(pickle.dumps(enc))
    text = "Hello  world\n\n  12345 ünïcödé 日本語"
    assert back.encode_ordinary(text) == enc.encode_ordinary(text)


@pytest.mark.parametrize("name, why", [
    ("qwen3", "normalizer"),
    ("deepseek_v3", "pre-tokenizer"),
    ("gemma3", "normalizer"),
    ("llama2", "normalizer"),
    ("minilm", "normalizer"),
])
def test_other_pipelines_are_not_encodings(name, why):
    with pytest.raises(UnsupportedTokenizerError, match=why):
        anytok_tokenizer(name).to_encoding()


def _byte_level_json(merges: list[tuple[str, str]], *, ignore_merges: bool) -> dict:
    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": r" ?\S+|\s+"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": False,
                                            "trim_offsets": True, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": ignore_merges, "vocab": vocab, "merges": [[a, b] for a, b in merges]},
    }


def _random_merges(rng: random.Random) -> list[tuple[str, str]]:
    """A small merge list over 'a', 'b', 'c': trained-looking tokens, then some of them also
    reachable by other splits (as in Llama 3's list), the list possibly shuffled a little."""
    tokens = ["a", "b", "c"]
    merges: list[tuple[str, str]] = []
    for _ in range(rng.randrange(3, 14)):
        a, b = rng.choice(tokens), rng.choice(tokens)
        if a + b not in tokens:
            tokens.append(a + b)
            merges.append((a, b))
    if rng.random() < 0.7:  # every split of each token, in token order (a converter's list)
        order = {t: i for i, t in enumerate(tokens)}
        full = []
        for t in tokens[3:]:
            full += [(t[:k], t[k:]) for k in range(1, len(t)) if t[:k] in order and t[k:] in order]
        merges = full
    if rng.random() < 0.3 and len(merges) > 1:
        i = rng.randrange(len(merges) - 1)
        merges[i], merges[i + 1] = merges[i + 1], merges[i]
    return merges


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ignore=st.booleans())
def test_proven_encodings_equal_tokenizers(seed, ignore):
    rng = random.Random(seed)
    cfg = _byte_level_json(_random_merges(rng), ignore_merges=ignore)
    tok = Tokenizer.from_config(cfg)
    try:
        enc = tok.to_encoding()
    except UnsupportedTokenizerError:
        return  # test_the_proof_is_not_vacuous checks both outcomes occur
    hf = hf_from_json(cfg)
    for _ in range(20):
        text = "".join(rng.choice("aabbc ") for _ in range(rng.randrange(1, 40)))
        assert enc.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids, (cfg["model"]["merges"], text)


def test_the_proof_is_not_vacuous():
    outcomes = {True: 0, False: 0}
    differs = 0
    for seed in range(300):
        rng = random.Random(seed)
        cfg = _byte_level_json(_random_merges(rng), ignore_merges=bool(seed % 2))
        tok = Tokenizer.from_config(cfg)
        ok = tok._encoding_or_reason()[0] is not None
        outcomes[ok] += 1
        if not ok:
            # Build the rank-rule Encoding anyway: refused lists do give other ids somewhere.
            from anytok.core import Encoding
            from anytok.pipeline.as_encoding import IsolatedSplitter

            enc = Encoding._with_splitter("x", IsolatedSplitter(r" ?\S+|\s+"), tok.model.byte_level_ids(), {})
            texts = ["".join(rng.choice("abc") for _ in range(n)) for n in range(2, 12) for _ in range(30)]
            differs += any(enc.encode_ordinary(t) != tok.encode(t) for t in texts)
    assert outcomes[True] > 50 and outcomes[False] > 50, outcomes
    assert differs > 10, differs


# ---------------------------------------------------------------------------------------------
# The operations, through the Encoding (llama3) and the general way (the others)
# ---------------------------------------------------------------------------------------------

HF_GENERAL = ["qwen3", "gemma3", "minilm"]


def _sp_tokenizer(name: str):
    from fetch_sentencepiece_models import fetch

    from anytok.sentencepiece.model_file import load_sentencepiece_model

    return load_sentencepiece_model((fetch() / name).read_bytes())


def _tokenizer(name: str):
    if name.endswith(".model") or ".model." in name:
        return _sp_tokenizer(name)
    return anytok_tokenizer(name)


def _check_appender(tok, text: str, rng: random.Random, ref=None) -> None:
    ref = ref or tok
    app = tok.appender()
    pos = 0
    while pos < len(text):
        step = rng.choice([1, 1, 2, 5, 17, 60])
        app.append(text[pos:pos + step])
        pos += step
        if rng.random() < 0.1 or pos >= len(text):
            assert app.count == ref.count(text[:pos]), pos
    assert app.text == text
    assert app.tokens() == ref.encode(text)
    snap = app.snapshot()
    app.append(" and more")
    app.rollback(snap)
    assert app.count == ref.count(text) and app.text == text
    app.append(" tail")
    assert app.count == ref.count(text + " tail")


def _check_prepender(tok, text: str, rng: random.Random, ref=None) -> None:
    ref = ref or tok
    pre = tok.prepender()
    end = len(text)
    while end > 0:
        step = rng.choice([1, 3, 40])
        pre.prepend(text[max(0, end - step):end])
        end -= step
        if rng.random() < 0.2 or end <= 0:
            assert pre.count == ref.count(text[max(0, end):]), end
    assert pre.text == text and pre.tokens() == ref.encode(text)


def _check_intervals(tok, text: str, rng: random.Random, ref=None) -> None:
    ref = ref or tok
    iv = tok.intervals(text)
    for _ in range(40):
        a = rng.randrange(len(text))
        b = rng.randrange(a, min(len(text), a + 400) + 1)
        assert iv.count(a, b) == ref.count(text[a:b]), (a, b)
    assert iv.count() == ref.count(text)


def _check_chunks(tok, text: str, ref=None) -> None:
    ref = ref or tok
    for max_tokens, overlap in ((1, 0), (7, 0), (50, 10)):
        try:
            spans = tok.chunk_spans(text, max_tokens, overlap)
        except ValueError as e:  # only when one character needs more tokens than that
            at = int(str(e).split("offset ")[1].split()[0])
            char = text[at:at + 2] if "\ud800" <= text[at] <= "\udbff" else text[at]
            assert ref.count(char) > max_tokens, e
            continue
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        for (a, b), (c, d) in zip(spans, spans[1:]):
            assert a < c <= b  # consecutive, overlapping only with overlap > 0
            if overlap == 0:
                assert c == b
            else:
                assert ref.count(text[c:b]) <= overlap
        for a, b in spans:
            assert ref.count(text[a:b]) <= max_tokens
        if overlap == 0:
            assert "".join(tok.chunks(text, max_tokens)) == text
        head, rest = tok.split_by_tokens(text, max_tokens)
        assert head + rest == text and ref.count(head) <= max_tokens
        assert head == text[:spans[0][1]]


OPERATIONS = {"appender": _check_appender, "prepender": _check_prepender, "intervals": _check_intervals}


@pytest.mark.parametrize("op", list(OPERATIONS))
@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_llama3_operations(op, corpus, corpora):
    tok, ref = _llama3(), _Reference(hf_tokenizer("llama3"))
    text = _sample(corpora[corpus])
    OPERATIONS[op](tok, text, random.Random(corpus), ref)
    # Text that spells an added token: HF splits it out, so the general way takes over.
    special = text[:500] + "<|eot_id|>" + text[500:1000]
    OPERATIONS[op](tok, special, random.Random(op), ref)


def test_llama3_operations_use_the_encoding(corpora):
    tok = _llama3()
    text = _sample(corpora["en"], 500)
    app = tok.appender(text)
    assert app._inner is not None
    app.append("<|eot")
    assert app._inner is not None
    app.append("_id|> x")  # an added token formed across two appends
    assert app._inner is None and app.count == tok.count(text + "<|eot_id|> x")
    assert tok.intervals(text)._inner is not None
    assert tok.intervals(text + "<|eot_id|>")._inner is None
    assert tok.chunk_spans(text, 20) == tok.to_encoding().chunk_spans(text, 20)


@pytest.mark.parametrize("corpus", ["en", "zh"])
def test_llama3_chunks(corpus, corpora):
    ref = _Reference(hf_tokenizer("llama3"))
    _check_chunks(_llama3(), _sample(corpora[corpus], 1500), ref)
    _check_chunks(_llama3(), "<|begin_of_text|>" + _sample(corpora[corpus], 800), ref)


GENERAL = HF_GENERAL + ["mistral_instruct_tokenizer_240323.model.v3", "test_model.model"]


@pytest.mark.parametrize("name", GENERAL)
@pytest.mark.parametrize("corpus", ["en", "ja"])
def test_general_operations(name, corpus, corpora):
    tok = _tokenizer(name)
    text = _sample(corpora[corpus], 600)
    rng = random.Random(name + corpus)
    for check in OPERATIONS.values():
        check(tok, text, rng)
    _check_chunks(tok, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(["a", "b", " ", "  ", "\n", "\t", "日本", "é", "<|eot_id|>", "<|begin_of_text|>"]),
                    max_size=30).map("".join), cut=st.integers(1, 12))
def test_general_chunks_fuzz(text, cut):
    for name in ("gemma3", "llama3"):
        tok = _llama3() if name == "llama3" else anytok_tokenizer(name)
        if not text or tok.count(text) == 0:
            continue
        try:
            spans = tok.chunk_spans(text, cut)
        except ValueError:  # one character needs more than `cut` tokens
            assert cut < 4
            continue
        assert "".join(text[a:b] for a, b in spans) == text
        assert all(tok.count(text[a:b]) <= cut for a, b in spans)


# ---------------------------------------------------------------------------------------------
# decode_stream: HF's DecodeStream, step by step
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("name", ["llama3", "qwen3", "gemma3", "llama2", "minilm"])
def test_decode_stream_equals_tokenizers(name, skip, corpora):
    from tokenizers.decoders import DecodeStream

    tok, hf = anytok_tokenizer(name), hf_tokenizer(name)
    for corpus in ("en", "ja"):
        text = _sample(corpora[corpus], 400)
        ids = hf.encode(text, add_special_tokens=True).ids
        ours, theirs = tok.decode_stream(skip), DecodeStream(skip_special_tokens=skip)
        for i in ids:
            assert ours.step(i) == theirs.step(hf, i), (name, corpus, i)


@pytest.mark.parametrize("name", ["mistral_instruct_tokenizer_240323.model.v3", "test_ja_model.model"])
def test_decode_stream_sentencepiece(name, corpora):
    tok = _sp_tokenizer(name)
    text = _sample(corpora["ja"], 300) + _sample(corpora["en"], 300)
    ids = tok.encode(text)
    dec = tok.decode_stream()
    parts = [dec.decode(i) for i in ids]
    assert "".join(parts) + dec.flush() == tok.decode(ids)
    assert sum(1 for p in parts if p) > len(ids) // 3  # text comes out as it goes, not at the end


def test_pipeline_encodes_through_its_proven_encoding(corpora):
    """After to_encoding() is proven, the pipeline's own encode and count go through it."""
    from hf_support import model_path

    from anytok.pipeline.hf_json import load_tokenizer_json

    tok, hf = load_tokenizer_json(model_path("llama3")), hf_tokenizer("llama3")
    assert tok._as_encoding is None
    tok.to_encoding()
    for corpus in ("en", "ja"):
        text = "<|begin_of_text|>" + _sample(corpora[corpus], 20_000) + "<|eot_id|>\ud800 end"
        for add in (False, True):
            expected = hf.encode(text.replace("\ud800", "\ufffd"), add_special_tokens=add).ids
            assert tok.encode(text, add_special_tokens=add) == expected
            assert tok.count(text, add_special_tokens=add) == len(expected)
    assert not tok.model._cache  # encode and count never reached the merge-list model
    assert tok.count_till_limit(text, 10) is None
