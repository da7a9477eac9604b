"""Hypothesis fuzzing against tiktoken: mixed scripts, whitespace runs, digits, specials."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PATTERN_ENCODINGS, anytok_encoding, tiktoken_encoding

# Pieces of text that exercise the split patterns' branches and the BPE.
FRAGMENTS = [
    " ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\x0b", "\x0c", "\x85",
    "'s", "'S", "'t", "'re", "'ve", "'m", "'ll", "'d", "'LL", "\u017f", "'", "’s",
    "0", "7", "123", "4567", "١٢٣", "Ⅻ", "½", "²",
    "a", "Z", "hello", "World", "ǅ", "ß", "é", "e\u0301", "İ", "ﬁ",
    "中", "文字", "日本語", "カタカナ", "ひらがな", "한국어", "русский", "Ελληνικά", "עברית", "العربية", "हिन्दी", "ไทย",
    "😀", "👍🏽", "🇫🇷", "👨\u200d👩\u200d👧", "\U0001d400", "\U00020000", "\U0010fffd", "\ufffd", "\ufeff",
    "!", "?", "...", "--", "/", "//", "\\", "{}", "()", "<|", "|>", "<|endoftext|>", "<|fim_prefix|>",
    "\x00", "\x7f", "\u200b", "\u0300", "\U000e0001",
]

texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)),
    max_size=40,
).map("".join)


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_encode_like_tiktoken(name, text):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    expected = t.encode(text, disallowed_special=())
    assert a.encode(text, disallowed_special=()) == expected
    assert a.encode_ordinary(text) == expected
    assert a.count(text, disallowed_special=()) == len(expected)
    assert a.decode(expected) == t.decode(expected)


@pytest.mark.parametrize("name", ["p50k_edit", "cl100k_base", "o200k_harmony"])
@settings(max_examples=200, deadline=None)
@given(text=texts)
def test_specials_like_tiktoken(name, text):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    assert a.encode(text, allowed_special="all") == t.encode(text, allowed_special="all")
    try:
        expected = t.encode(text)
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            a.encode(text)
        assert str(got.value) == str(e)
    else:
        assert a.encode(text) == expected


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_round_trip(text):
    a = anytok_encoding("o200k_base")
    assert a.decode(a.encode(text, disallowed_special=())) == text


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=50))
def test_arbitrary_strings_with_surrogates(text):
    """Any str at all, lone surrogates included, encodes as tiktoken does."""
    a, t = anytok_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    assert a.encode(text, disallowed_special=()) == t.encode(text, disallowed_special=())
