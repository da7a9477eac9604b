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


# Non-ASCII characters of every kind the patterns tell apart: letters (lower, upper, and those
# that case-fold to ASCII: "ſ" to "s", the Kelvin sign to "k"), marks, digits, spaces and line
# separators, punctuation and symbols, CJK (no ASCII character is in its classes), astral ones.
_FEW = ["é", "É", "ß", "ſ", "\u212a", "\u0301", "²", "٣", "\xa0", "\x85", "\u2028", "\u3000", "—", "→", "©",
        "中", "ー", "😀", "\U00010400", "\U0001d7d8", "ǅ", "ʰ"]


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_text_with_a_few_non_ascii_characters(name, corpora):
    """ASCII text with a handful of non-ASCII characters is split by the ASCII variant of the
    pattern with ASCII stand-ins (pretokenize.Splitter._split_few) while the BMP variant is not
    compiled yet: ids equal tiktoken's, in every context the characters can land in."""
    import random

    import anytok
    from anytok.pretokenize import Splitter

    t = tiktoken_encoding(name)
    a = anytok.Encoding(name, pat_str=t._pat_str, mergeable_ranks=t._mergeable_ranks, special_tokens=t._special_tokens)
    rng = random.Random(name)
    base = "It's x 'S 'll don't\n\n  foo(bar) += 12345;  \t\r\n's 'T ALLCAPS mixedCase 1 22 333 4444 \n"
    code = corpora["code"][:200_000]
    for i in range(400):
        chars = list(base * 2)
        for _ in range(rng.randint(1, 6)):
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(_FEW))
        text = "".join(chars)
        a._splitter = Splitter(t._pat_str)  # its own, with no BMP variant compiled
        assert a.encode_ordinary(text) == t.encode_ordinary(text), text
    full = Splitter(t._pat_str)._full  # the whole pattern, every class in full
    for c in _FEW:
        for ctx in ("'" + c, "x'" + c, "x'" + c + "s", "'" + c + "s", " " + c, c + " ", "\n" + c + "\n", "a" + c + "b", "A" + c, "1" + c + "2",
                    "  " + c, c * 3, "(" + c + ")", c + "'ll", "x " + c + "  \n"):
            text = "x " + ctx + " y\n" + ctx + "z" + ctx
            a._splitter = Splitter(t._pat_str)
            assert a.encode_ordinary(text) == t.encode_ordinary(text), text
            # Equal ids can hide a different split ("'ſs" and "'ſ" + "s" encode alike):
            # the pieces must be those of the translated pattern itself.
            assert Splitter(t._pat_str).split(text) == full.findall(text), text
    # A big text with two of them: the case that motivated the path.
    a._splitter = splitter = Splitter(t._pat_str)
    for pair in (("é", "→"), ("\xa0", "😀"), ("ſ", "\u212a")):
        text = code[:70_000] + pair[0] + code[70_000:140_000] + pair[1] + code[140_000:]
        assert a.encode_ordinary(text) == t.encode_ordinary(text)
        assert a.count_ordinary(text) == len(t.encode_ordinary(text))
    assert splitter._bmp_rx is None  # the texts without CJK never needed the BMP variant
    text = code[:1000] + "中" + code[1000:2000]
    assert a.encode_ordinary(text) == t.encode_ordinary(text)
