"""SentencePiece piece spans against the `sentencepiece` library: `encode_as_immutable_proto`
vs `encode(text, out_type="immutable_proto")` (piece, id, surface, begin, end, text, the
serialized message) and `encode_with_offsets` vs the same spans, on the fixture models and the
option variants of test_sentencepiece.py (byte fallback, unknown pieces, user-defined pieces,
charsmaps, whitespace options, CHAR and WORD models).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from conftest import FULL, code_point_share
from hypothesis import strategies as st
from test_sentencepiece import (  # noqa: F401  (fixtures)
    CODE_POINTS, MODELS, VARIANTS, charsmap, corpus_sample, models_dir, pair_from_bytes, text_strategy,
    trained_charsmaps, variants,
)

from anytok.sentencepiece.normalizer import Normalizer
from anytok.sentencepiece.spans import normalize_with_alignment


def check(tok, sp, text: str, light: bool = False) -> None:
    expected = sp.encode(text, out_type="immutable_proto")
    got = tok.encode_as_immutable_proto(text)
    want = [(p.piece, p.id, p.surface, p.begin, p.end) for p in expected.pieces]
    have = [(p.piece, p.id, p.surface, p.begin, p.end) for p in got.pieces]
    if have != want:
        i = next((i for i, (a, b) in enumerate(zip(have, want)) if a != b), min(len(have), len(want)))
        pytest.fail(f"pieces differ at {i} for text {text[:200]!r}: anytok {have[max(0, i - 2):i + 3]}"
                    f" sentencepiece {want[max(0, i - 2):i + 3]}")
    assert got.text == expected.text and got.score == expected.score
    assert got.SerializeAsString() == expected.SerializeAsString()
    if light:
        return
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == tok.encode(text) == sp.encode(text)
    assert offsets == [(p.begin, p.end) for p in expected.pieces]
    normalized, n2o = normalize_with_alignment(tok.normalizer, text)
    assert normalized == tok.normalize(text)
    # (empty when the normalizer returns early: empty or all-space input)
    assert len(n2o) == len(normalized) + 1 or not normalized and not n2o


@pytest.fixture(params=MODELS)
def model(request, models_dir):
    return pair_from_bytes((models_dir / request.param).read_bytes(), request.param)


@pytest.fixture(params=VARIANTS)
def variant(request, variants):
    return pair_from_bytes(variants[request.param], "variant:" + request.param)


SAMPLE_LINES = 400 if FULL else 60


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_corpus(model, corpus, corpora):
    tok, sp = model
    for text in corpus_sample(corpora[corpus], f"{corpus}-spans", SAMPLE_LINES, 20000 if FULL else 4000):
        check(tok, sp, text)


# Code points: the default run takes every 32nd block of 128 per model and context (each
# another 32nd); ANYTOK_FULL=1 all of them, in both contexts.
@pytest.mark.parametrize("context", ["concatenated", "spaced"])
@pytest.mark.parametrize("name", MODELS)
def test_every_code_point(name, context, models_dir):
    tok, sp = pair_from_bytes((models_dir / name).read_bytes(), name)
    part = MODELS.index(name) * 2 + (context == "spaced")
    chars = code_point_share(CODE_POINTS, part, 32, key=ord)
    join = "".join if context == "concatenated" else (lambda cs: " ".join(cs) + " ")
    for k in range(0, len(chars), 2048):
        check(tok, sp, join(chars[k : k + 2048]), light=True)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy())
def test_fuzz(model, text):
    tok, sp = model
    check(tok, sp, text)


def test_variant_corpus(variant, corpora):
    tok, sp = variant
    rng = random.Random("variant-spans")
    for key in ("en", "code", "zh", "ja"):
        lines = corpora[key][:20000].splitlines()
        for line in rng.sample(lines, 15):
            check(tok, sp, line)
    check(tok, sp, " ".join(CODE_POINTS[rng.randrange(50) :: 997]))
    check(tok, sp, "  a\u00a0 b\u3000\u3000c  \t ①ﬁ Ａ\u0301 <0x41> ▁▁x ▁ 😀😀 ")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy())
def test_variant_fuzz(variant, text):
    tok, sp = variant
    check(tok, sp, text)


def test_special_tokens(model):
    tok, sp = model
    for text in ["", "hello world", " a  b "]:
        ids, offsets = tok.encode_with_offsets(text, add_bos=True, add_eos=True)
        assert ids == sp.encode(text, add_bos=True, add_eos=True)
        spans = [(p.begin, p.end) for p in sp.encode(text, out_type="immutable_proto").pieces]
        assert offsets == [(0, 0)] + spans + [(0, 0)]
        assert tok.encode_with_offsets(text, add_special_tokens=True)[0] == sp.encode(text, add_bos=True)


def test_lone_surrogates_rejected(model):
    tok, _ = model
    with pytest.raises(UnicodeEncodeError):
        tok.encode_as_immutable_proto("a\ud800")
    with pytest.raises(UnicodeEncodeError):
        tok.encode_with_offsets("a\ud800")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy(), flags=st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.booleans()),
       user_defined=st.lists(st.sampled_from(["ab", "a", " x", "ﬁ", "e\u0301", "\u2581\u2581", "Ａ", "  "]), max_size=3))
def test_alignment_fast_equals_reference(charsmap, text, flags, user_defined):
    # The bulk alignment (runs of one-to-one characters) against the step-by-step byte rule,
    # over every whitespace option and user-defined symbols (sentencepiece's own spans above
    # cover the real models' settings).
    n = Normalizer(precompiled_charsmap=charsmap if flags[4] else b"", add_dummy_prefix=flags[0],
                   remove_extra_whitespaces=flags[1], escape_whitespaces=flags[2],
                   treat_whitespace_as_suffix=flags[3], user_defined=user_defined)
    fast = normalize_with_alignment(n, text)
    assert fast == normalize_with_alignment(n, text, reference=True)
    assert fast[0] == n.normalize_reference(text)
