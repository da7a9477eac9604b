"""anytok against tiktoken 0.14 on real text, for every bundled encoding."""

from __future__ import annotations

import pytest

from conftest import ALL_ENCODINGS, CORPORA, anytok_encoding, tiktoken_encoding


@pytest.mark.parametrize("name", ALL_ENCODINGS)
def test_definition_matches_tiktoken(name):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    assert a.name == t.name
    assert a._pat_str == t._pat_str
    assert a._special_tokens == t._special_tokens
    assert a._mergeable_ranks == t._mergeable_ranks
    assert a.n_vocab == t.n_vocab
    assert a.max_token_value == t.max_token_value
    assert a.special_tokens_set == t.special_tokens_set
    assert a.token_byte_values() == t.token_byte_values()
    if "<|endoftext|>" in t._special_tokens:
        assert a.eot_token == t.eot_token


@pytest.mark.parametrize("corpus", list(CORPORA))
@pytest.mark.parametrize("name", ALL_ENCODINGS)
def test_corpus_ids_equal_tiktoken(name, corpus, corpora):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    text = corpora[corpus]
    expected = t.encode_ordinary(text)
    got = a.encode_ordinary(text)
    if got != expected:
        first = next(i for i, (x, y) in enumerate(zip(got, expected)) if x != y)
        pytest.fail(f"{name}/{corpus}: first difference at token {first}: {got[first:first+5]} != {expected[first:first+5]}")
    assert a.encode(text, disallowed_special=()) == expected
    assert a.count_ordinary(text) == len(expected)
    assert a.decode(got) == text
    assert a.decode_bytes(got) == text.encode("utf-8")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_corpus_lines_equal_tiktoken(name, corpora):
    """Many short texts (one per line), so that starts and ends of text are exercised too."""
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    for corpus in corpora.values():
        lines = corpus.splitlines(keepends=True)[:3000]
        assert a.encode_ordinary_batch(lines) == t.encode_ordinary_batch(lines)
        assert [a.count(x) for x in lines] == [len(ids) for ids in t.encode_batch(lines)]
