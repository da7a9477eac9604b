"""tiktoken's private Encoding members that other code calls, against tiktoken 0.14.

`_encode_bytes` (tiktoken's own tests call it), `_encode_single_piece`,
`_encode_only_native_bpe`, and the attributes `_mergeable_ranks`, `_special_tokens`,
`_pat_str`, `_special_token_values`: same values, same types, same results, same errors.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import ALL_ENCODINGS, PATTERN_ENCODINGS, anytok_encoding, tiktoken_encoding

# Text fragments (split-pattern branches, multi-byte characters) and byte sequences that are
# not UTF-8 (stray continuation bytes, cut characters, encoded surrogates, overlong forms,
# bytes that never occur in UTF-8).
TEXT = ["a", "hello", " world", " ", "   ", "\n", "\n\n", " \n", "\t", "\r\n", "'s", "'ll", "0", "1234",
        "é", "中", "文字", "😀", "👍🏽", "\u0301", "Ж", "!", "...", "<|endoftext|>", "\u00a0", "\u3000"]
INVALID = [b"\x80", b"\xbf", b"\xff", b"\xfe", b"\xc3", b"\xe4", b"\xe4\xb8", b"\xf0\x9f", b"\xf0\x9f\x98",
           b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xf4\x90\x80\x80",
           b"\xf8\x88\x80\x80\x80"]

# Lone surrogates and pairs of them, in str (which `_encode_only_native_bpe` does not repair).
SURROGATES = ["\ud800", "\udfff", "\ud83d\ude00", "\ude00\ud83d", " \udc00", "\udc00\udc01\n"]

byte_strings = st.lists(
    st.one_of(
        st.sampled_from(TEXT).map(lambda s: s.encode("utf-8")),
        st.sampled_from(INVALID),
        # a character cut short
        st.tuples(st.sampled_from(TEXT), st.integers(0, 8)).map(lambda p: p[0].encode("utf-8")[: p[1]]),
        st.binary(max_size=6),
    ),
    max_size=30,
).map(b"".join)


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=byte_strings)
def test_encode_bytes_like_tiktoken(name, data):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    ids = a._encode_bytes(data)
    assert ids == t._encode_bytes(data)
    assert a.decode_bytes(ids) == data


@pytest.mark.parametrize("name", ALL_ENCODINGS)
def test_encode_bytes_cases(name):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    rng = random.Random(name)
    cases = [
        b"", b"\x80", b"\x80" * 9, b" \xec\x8b\xa4\xed", b"hello \xff", b"hello world" * 3 + b"\xe4\xb8",
        # whitespace tokens before the last piece are re-merged with the invalid tail
        b"x  \n \n   \n\t\t \xf0\x9f", b"a \n\n\n" * 20 + b"\x80", b"\n" * 50 + b"\xc3", b" " * 3000 + b"\xff",
        # long inputs: the tail goes to the long-piece merges
        b"\x80" * 10_000, b"a" * 50_000 + b"\xff", "中文字".encode() * 2000 + b"\xe4",
        bytes(rng.randrange(256) for _ in range(20_000)),
        # valid UTF-8: encode_ordinary of the text, special-token text included
        "hello <|endoftext|> 中文 😀".encode(),
    ]
    cases += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16))) for _ in range(300)]
    for data in cases:
        ids = a._encode_bytes(data)
        assert ids == t._encode_bytes(data), data[:40]
        assert type(ids) is list and all(type(i) is int for i in ids)
        assert a.decode_bytes(ids) == data


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
def test_encode_single_piece_like_tiktoken(name):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    rng = random.Random(name)
    cases = ["helloqqqq", "hello", " world", "中文字", "😀", b"\x80\xff\xe4", b"a" * 5000, b"ab" * 3000,
             bytes(rng.randrange(256) for _ in range(6000)), "<|endoftext|>"]
    cases += [bytes(rng.choice(b"ab \n\x80\xe4\xb8\xad") for _ in range(rng.randrange(1, 60))) for _ in range(500)]
    for piece in cases:
        ids = a._encode_single_piece(piece)
        assert ids == t._encode_single_piece(piece), piece[:40]
        assert type(ids) is list and all(type(i) is int for i in ids)


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.one_of(st.sampled_from(TEXT + SURROGATES), st.text(max_size=5)), max_size=30).map("".join))
@example(text="\U000323b0's")  # where tiktoken's two splitters disagree (found by this test in CI)
@example(text="\U0003d000\ud800")  # the same, with a lone surrogate (found by this test in CI)
def test_encode_only_native_bpe_like_tiktoken(name, text):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    try:
        expected = t._encode_only_native_bpe(text)
    except UnicodeEncodeError as e:  # a lone surrogate: not repaired here
        with pytest.raises(UnicodeEncodeError) as got:
            a._encode_only_native_bpe(text)
        if str(got.value) != str(e):
            # The error names the surrogate's place in its piece, and the pieces differ where
            # tiktoken's two splitters do (below): the text holds a character unassigned in
            # Unicode 16 (the Rust core's and anytok's tables) that the `regex` package knows.
            # With each lone surrogate replaced by U+E000 (private use: the same classes),
            # anytok's ids are tiktoken's encode's.
            import regex
            import unicodedata2

            assert unicodedata2.unidata_version == "16.0.0"
            newer = [c for c in text if unicodedata2.category(c) == "Cn" and not regex.match(r"\p{Cn}", c)]
            assert newer, text
            stand_in = re.sub("[\ud800-\udfff]", "\ue000", text)
            assert a._encode_only_native_bpe(stand_in) == t.encode_ordinary(stand_in), text
    else:
        got = a._encode_only_native_bpe(text)
        # tiktoken's _encode_only_native_bpe splits with the `regex` package, its encode with its
        # Rust core; where their Unicode versions differ (U+323B0.., CJK Extension J, Unicode 17:
        # a letter to regex 2026.11, unassigned to the Rust core and to anytok's pinned Unicode
        # 16 tables) tiktoken disagrees with itself, and anytok follows the Rust core.
        assert got == expected or (got == t.encode_ordinary(text) != expected)


def test_errors_like_tiktoken():
    a, t = anytok_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    for call in (lambda e: e._encode_bytes("text"), lambda e: e._encode_bytes(bytearray(b"ab")),
                 lambda e: e._encode_single_piece(bytearray(b"ab")), lambda e: e._encode_bytes(None)):
        with pytest.raises(TypeError):
            call(t)
        with pytest.raises(TypeError):
            call(a)
    with pytest.raises(UnicodeEncodeError):
        a._encode_single_piece("\ud800")
    with pytest.raises(UnicodeEncodeError):
        a._encode_only_native_bpe("a\udc00")


@pytest.mark.parametrize("name", ALL_ENCODINGS)
def test_private_attributes_like_tiktoken(name):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    assert a._pat_str == t._pat_str and type(a._pat_str) is str
    assert list(a._special_tokens.items()) == list(t._special_tokens.items())
    assert type(a._special_tokens) is dict
    assert a._special_token_values == t._special_token_values and type(a._special_token_values) is set
    ranks = a._mergeable_ranks
    assert type(ranks) is dict and ranks == t._mergeable_ranks
    assert ranks is a._mergeable_ranks  # one table, not rebuilt per access


def test_custom_encoding_keeps_given_tables():
    base = anytok_encoding("r50k_base")
    ranks, specials = dict(base._mergeable_ranks), {"<|endoftext|>": 50256, "<|x|>": 50300}
    import anytok

    enc = anytok.Encoding("custom", pat_str=base._pat_str, mergeable_ranks=ranks, special_tokens=specials)
    assert enc._mergeable_ranks is ranks and enc._special_tokens is specials and enc._pat_str is base._pat_str
    assert enc._encode_bytes(b"hi \xff") == tiktoken_encoding("r50k_base")._encode_bytes(b"hi \xff")


def test_private_members_never_import_regex():
    # tiktoken's `_encode_only_native_bpe` imports `regex`; anytok's must not (see test_no_regex.py).
    import subprocess
    import sys

    script = (
        "import sys; sys.modules['regex'] = None\n"
        "import anytok; e = anytok.get_encoding('o200k_base')\n"
        "assert e._encode_only_native_bpe('héllo wörld 😀') == e.encode_ordinary('héllo wörld 😀')\n"
        "assert e.decode_bytes(e._encode_bytes(b'h\\xc3\\xa9llo \\xff')) == b'h\\xc3\\xa9llo \\xff'\n"
        "assert e._encode_single_piece('hello') == [24912]\n"
        "assert sys.modules['regex'] is None\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
