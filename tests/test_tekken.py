"""Mistral's tekken file (`tekken_240911.json`) against mistral-common's own `Tekkenizer`.

`Tekkenizer.encode(text, bos=False, eos=False)` must equal `Encoding.encode_ordinary(text)`;
decoding equals mistral's `SpecialTokenPolicy.KEEP` (and `IGNORE` when there is no special id).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]

from conftest import code_point_share  # noqa: E402
from fetch_sentencepiece_models import fetch as fetch_models  # noqa: E402

import anytok  # noqa: E402
from anytok.convert.tekken import load_tekken  # noqa: E402

_loaded: dict[str, object] = {}


@pytest.fixture(scope="module")
def tekken():
    if not _loaded:
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        path = fetch_models() / "tekken_240911.json"
        _loaded["ref"] = Tekkenizer.from_file(path)
        _loaded["enc"] = load_tekken(path)
    return _loaded["enc"], _loaded["ref"]


def check(enc, ref, text: str) -> None:
    expected = ref.encode(text, bos=False, eos=False)
    got = enc.encode_ordinary(text)
    if got != expected:
        i = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
        pytest.fail(f"ids differ at {i} for {text[:200]!r}: {got[i - 3:i + 4]} vs {expected[i - 3:i + 4]}")
    assert enc.decode(expected) == ref.decode(expected)


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_corpus(tekken, corpora, corpus):
    enc, ref = tekken
    text = corpora[corpus]
    check(enc, ref, text[:200_000])
    assert enc.encode(text[:20_000], disallowed_special=()) == ref.encode(text[:20_000], bos=False, eos=False)
    for line in text[:50_000].splitlines()[:300]:
        check(enc, ref, line)


CODE_POINTS = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]


@pytest.mark.parametrize("context", ["concatenated", "words"])
def test_every_code_point(tekken, context):
    enc, ref = tekken
    # The default run: each context its share (every code point once); ANYTOK_FULL=1: all in both.
    share = code_point_share(CODE_POINTS, ["concatenated", "words"].index(context), 2, key=ord)
    for k in range(0, len(share), 8192):
        chars = share[k : k + 8192]
        if context == "concatenated":
            text = "".join(chars)
        else:
            text = "".join(f" {c}a\n{c}" for c in chars)
        check(enc, ref, text)


def test_vocabulary_and_special_tokens(tekken):
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

    enc, ref = tekken
    assert enc.n_vocab == ref.n_words
    assert ref.num_special_tokens == 1000
    for i in range(ref.num_special_tokens):
        text = ref.decode([i], special_token_policy=SpecialTokenPolicy.KEEP)
        assert enc.decode([i]) == text
        assert enc.encode(text, allowed_special="all") == [i]
    assert enc.encode("<s>hi</s>", allowed_special="all") == [ref.bos_id, *ref.encode("hi", bos=False, eos=False), ref.eos_id]
    ids = list(range(0, ref.n_words, 7))
    assert enc.decode(ids) == ref.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)
    for i in range(ref.num_special_tokens, ref.n_words, 997):
        assert enc.decode_single_token_bytes(i) == ref.id_to_byte_piece(i)


def test_save_and_load(tekken, tmp_path, corpora):
    enc, ref = tekken
    path = tmp_path / "tekken.atok"
    anytok.save_encoding(enc, path)
    again = anytok.load_encoding(path)
    text = corpora["en"][:20000] + corpora["zh"][:20000]
    assert again.encode_ordinary(text) == ref.encode(text, bos=False, eos=False)
    assert again.n_vocab == enc.n_vocab


TEXT = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8"), max_size=10),
        st.sampled_from([" ", "  ", "\n", "\r\n", "\t", "'s", "'LL", "123", "<s>", "[INST]", "😀", "中文", "e\u0301"]),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_fuzz(tekken, text):
    enc, ref = tekken
    check(enc, ref, text)
