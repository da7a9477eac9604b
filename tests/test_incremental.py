"""Incremental, budget and interval operations agree with plain encoding, always."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PATTERN_ENCODINGS, anytok_encoding
from test_fuzz import FRAGMENTS

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), max_size=30).map("".join)
# Long runs that make single huge pieces, mixed with ordinary text.
RUNS = ["a" * 700, " " * 600, "中" * 400, "ab" * 350, "7" * 500, "Z" * 600, "\n" * 400, "é" * 500, "😀" * 300,
        "-" * 900, "aB" * 300 + "c" * 300]


def edits(draw_text, rng: random.Random, n: int):
    """Random ways of cutting a text into consecutive parts."""
    text = draw_text
    cuts = sorted(rng.sample(range(1, len(text)), min(n, max(0, len(text) - 1)))) if len(text) > 1 else []
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, seed=st.integers(0, 2**32))
def test_appender_matches_encode(name, text, seed):
    enc = anytok_encoding(name)
    rng = random.Random(seed)
    app = enc.appender()
    so_far = ""
    snaps = []
    for part in edits(text, rng, rng.randint(0, 12)):
        if rng.random() < 0.2:
            snaps.append((app.snapshot(), so_far))
        app.append(part)
        so_far += part
        assert app.count == len(enc.encode_ordinary(so_far))
        if snaps and rng.random() < 0.15:
            snap, so_far = snaps.pop(rng.randrange(len(snaps)))
            snaps = [s for s in snaps if len(s[1]) <= len(so_far)]
            app.rollback(snap)
            assert app.count == len(enc.encode_ordinary(so_far))
            assert app.text() == so_far
    assert app.tokens() == enc.encode_ordinary(so_far)


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, seed=st.integers(0, 2**32))
def test_prepender_matches_encode(name, text, seed):
    enc = anytok_encoding(name)
    rng = random.Random(seed)
    pre = enc.prepender()
    so_far = ""
    for part in reversed(edits(text, rng, rng.randint(0, 12))):
        pre.prepend(part)
        so_far = part + so_far
        assert pre.count == len(enc.encode_ordinary(so_far))
    assert pre.tokens() == enc.encode_ordinary(so_far)
    assert pre.text() == so_far


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, seed=st.integers(0, 2**32))
def test_intervals_match_encode(name, text, seed):
    enc = anytok_encoding(name)
    rng = random.Random(seed)
    iv = enc.intervals(text)
    for _ in range(30):
        a = rng.randint(0, len(text))
        b = rng.randint(a, len(text))
        assert iv.count(a, b) == len(enc.encode_ordinary(text[a:b])), (a, b)


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
def test_long_runs_append_prepend_intervals(name):
    enc = anytok_encoding(name)
    rng = random.Random(name)
    for run in RUNS:
        text = "x " + run + " y" + run[: len(run) // 2] + "z"
        app = enc.appender()
        i = 0
        while i < len(text):
            n = rng.choice([1, 1, 1, 2, 7, 40])
            app.append(text[i : i + n])
            i += n
            if rng.random() < 0.08 or i >= len(text):
                assert app.count == len(enc.encode_ordinary(text[:i])), (run[:3], i)
        assert app.tokens() == enc.encode_ordinary(text)
        pre = enc.prepender()
        i = len(text)
        while i > 0:
            n = rng.choice([1, 3, 50])
            pre.prepend(text[max(0, i - n) : i])
            i -= n
        assert pre.count == len(enc.encode_ordinary(text))
        iv = enc.intervals(text)
        for _ in range(40):
            a = rng.randint(0, len(text))
            b = rng.randint(a, len(text))
            assert iv.count(a, b) == len(enc.encode_ordinary(text[a:b]))


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_corpus_operations(name, corpus, corpora):
    enc = anytok_encoding(name)
    text = corpora[corpus][:60_000]
    rng = random.Random(corpus)
    app = enc.appender()
    i = 0
    while i < 20_000:
        n = rng.randint(1, 30)
        app.append(text[i : i + n])
        i += n
    assert app.count == len(enc.encode_ordinary(text[:i]))
    iv = enc.intervals(text)
    for length in (1, 10, 100, 1000, 10_000):
        for _ in range(15):
            a = rng.randint(0, len(text) - length)
            assert iv.count(a, a + length) == len(enc.encode_ordinary(text[a : a + length]))
    widest = max(enc.count_ordinary(c) for c in set(text[:8000]))
    for max_tokens in (1, 7, 100, 1000):
        if max_tokens < widest:
            with pytest.raises(ValueError, match="alone needs more"):
                enc.chunks(text[:8000], max_tokens)
            continue
        parts = enc.chunks(text[:8000], max_tokens)
        assert "".join(parts) == text[:8000]
        assert all(enc.count_ordinary(p) <= max_tokens for p in parts)
        if max_tokens >= 100 and corpus in ("en", "code"):  # short pieces: chunks are nearly full
            assert all(enc.count_ordinary(p) > max_tokens // 2 for p in parts[:-1])
    n = len(enc.encode_ordinary(text))
    assert enc.count_till_limit(text, n) == n
    assert enc.count_till_limit(text, n - 1) is None
    assert enc.count_till_limit(text, 10) is None
    head, rest = enc.split_by_tokens(text, 500)
    assert head + rest == text and enc.count_ordinary(head) <= 500 < enc.count_ordinary(text[: len(head) + 200])


def test_chunks_overlap_and_errors():
    enc = anytok_encoding("o200k_base")
    text = "The quick brown fox jumps over the lazy dog. " * 40
    spans = enc.chunk_spans(text, 20, overlap=5)
    assert [text[a:b] for a, b in spans] == enc.chunks(text, 20, overlap=5)
    assert all(enc.count_ordinary(text[a:b]) <= 20 for a, b in spans)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (a1, b1), (a2, b2) in zip(spans, spans[1:]):
        assert a1 < a2 <= b1 < b2  # each chunk starts inside the previous one and goes further
        assert enc.count_ordinary(text[a2:b1]) <= 5  # repeating at most `overlap` tokens
        assert a2 < b1  # and it does overlap here (every boundary is a word)
    with pytest.raises(ValueError):
        enc.chunks(text, 0)
    with pytest.raises(ValueError):
        enc.chunks(text, 5, overlap=5)
    # a character that takes more tokens than allowed cannot be placed in any chunk
    rare = next(chr(c) for c in range(0x20000, 0x20100) if enc.count(chr(c)) > 1)
    with pytest.raises(ValueError, match="alone needs more"):
        enc.chunks(rare, 1)
    assert enc.split_by_tokens("", 3) == ("", "")
    assert enc.chunks("", 3) == []


@settings(max_examples=100, deadline=None)
@given(text=texts, limit=st.integers(0, 40), max_tokens=st.integers(1, 12))
def test_budget_ops_property(text, limit, max_tokens):
    enc = anytok_encoding("cl100k_base")
    n = len(enc.encode_ordinary(text))
    assert enc.count_till_limit(text, limit) == (n if n <= limit else None)
    try:
        parts = enc.chunks(text, max_tokens)
    except ValueError:
        assert any(enc.count_ordinary(c) > max_tokens for c in text)
        return
    assert "".join(parts) == text
    assert all(1 <= enc.count_ordinary(p) <= max_tokens for p in parts)
    head, rest = enc.split_by_tokens(text, max_tokens)
    assert head + rest == text and enc.count_ordinary(head) <= max_tokens


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_decode_stream(text):
    enc = anytok_encoding("o200k_base")
    ids = enc.encode_ordinary(text)
    dec = enc.decode_stream()
    pieces = [dec.decode(t) for t in ids]
    assert "".join(pieces) + dec.flush() == text
    assert all("\ufffd" not in p for p in pieces) or "\ufffd" in text
    assert "".join(enc.decode_stream().iter(ids)) == text


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
def test_encode_raw(name, corpora):
    from conftest import tiktoken_encoding

    enc, t = anytok_encoding(name), tiktoken_encoding(name)
    rng = random.Random(3)
    for text in [corpora["en"][:3000], corpora["zh"][:1000], "a" * 5000, "".join(rng.choice("ab c") for _ in range(4000))]:
        data = text.encode()
        assert enc.encode_raw(data) == t._encode_single_piece(data)
