"""`Encoding.encode_with_offsets` against Hugging Face `tokenizers`' byte-level offsets.

The reference is the same vocabulary as a tokenizer.json: Llama 3's own file (a tiktoken-style
encoding in Hugging Face form, anytok.pipeline.as_encoding proves it one) and o200k_base's ranks
written as one by build_scripts/hf_from_ranks.py.  `tokenizers`' `Encoding.offsets` are character
offsets; a token that holds part of a character's UTF-8 bytes spans the whole character.
"""

from __future__ import annotations

import functools
import json
import random

import pytest

import anytok
from conftest import FULL
from hf_support import hf_from_json, hf_tokenizer, model_path

# Astral characters, combining marks, characters split between tokens, specials, line ends.
EDGE_TEXTS = [
    "",
    "hello world",
    "e\u0301t\u00e9 \u0915\u094d\u0937 \u1100\u1161\u11a8 a\u0308\u0323",
    "\U0001F600\U0001F469\u200d\U0001F4BB \U00020BB7\U0002A6A5 \U0001D400x",
    "\u9f98\u9f98\u9f98 \u8b8a\u6210 \u30ab\u30bf\u30ab\u30ca \ud55c\uad6d\uc5b4",
    "  \n\n\t\r\n x  \u3000y\u00a0z   ",
    "12345678 3.14159 \u0661\u0662\u0663",
]
SAMPLES = 400 if FULL else 40


def _sample_texts(corpora, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = list(EDGE_TEXTS)
    for text in corpora.values():
        for _ in range(SAMPLES // len(corpora)):
            a = rng.randrange(len(text))
            out.append(text[a:a + rng.randrange(1, 300)])
    return out


def _hf_offsets(hf, text: str):
    e = hf.encode(text, add_special_tokens=False)
    return e.ids, [tuple(o) for o in e.offsets]


@functools.lru_cache(maxsize=None)
def _llama3_encoding():
    from anytok.pipeline.hf_json import load_tokenizer_json

    enc = load_tokenizer_json(model_path("llama3")).to_encoding()
    assert isinstance(enc, anytok.Encoding)
    return enc


def test_llama3_offsets_equal_tokenizers(corpora):
    enc, hf = _llama3_encoding(), hf_tokenizer("llama3")
    texts = _sample_texts(corpora, 43)
    # Llama 3's specials are added tokens there: HF matches them in any text.
    texts += ["<|begin_of_text|>x \u00e9<|eot_id|>\U0001F600<|start_header_id|>"]
    for text in texts:
        got = enc.encode_with_offsets(text, allowed_special="all")
        assert got == _hf_offsets(hf, text), text
        assert got[0] == enc.encode(text, allowed_special="all")


@pytest.fixture(scope="module")
def o200k_hf():
    import hf_from_ranks

    enc = anytok.get_encoding("o200k_base")
    doc = hf_from_ranks.build(enc._mergeable_ranks, hf_from_ranks.adapt_pattern(enc._pat_str), enc._special_tokens)
    return hf_from_json(json.loads(hf_from_ranks.dumps(doc)))


def test_o200k_offsets_equal_tokenizers(corpora, o200k_hf):
    enc = anytok.get_encoding("o200k_base")
    for text in _sample_texts(corpora, 45):
        assert enc.encode_with_offsets(text) == _hf_offsets(o200k_hf, text), text
    # (tokenizers renumbers added tokens that fall in the vocabulary's holes: their offsets only)
    text = "a<|endoftext|>\u4f60<|endofprompt|>"
    ids, offsets = enc.encode_with_offsets(text, allowed_special="all")
    hf_ids, hf_offsets = _hf_offsets(o200k_hf, text)
    assert offsets == hf_offsets and [o200k_hf.id_to_token(i) for i in hf_ids][1::2] == ["<|endoftext|>", "<|endofprompt|>"]
    assert ids == enc.encode(text, allowed_special="all") and ids[1::2] == [199999, 200018]


def test_offsets_options_and_surrogates():
    enc = anytok.get_encoding("o200k_base")
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_with_offsets("<|endoftext|>")
    ids, offsets = enc.encode_with_offsets("<|endoftext|>", disallowed_special=())
    assert ids == enc.encode("<|endoftext|>", disallowed_special=()) and len(ids) > 1
    assert offsets[0][0] == 0 and offsets[-1][1] == len("<|endoftext|>")
    # A surrogate pair is one character for the ids and two code points of the text; a lone
    # surrogate is U+FFFD for the ids and keeps its place.
    text = "a\ud83d\ude00b\ud800c\U0001F600"
    ids, offsets = enc.encode_with_offsets(text)
    repaired_ids, repaired = enc.encode_with_offsets("a\U0001F600b\ufffdc\U0001F600")
    assert ids == repaired_ids == enc.encode(text)
    where = [0, 1, 3, 4, 5, 6, 7]  # repaired character index -> index in text
    assert offsets == [(where[a], where[b]) for a, b in repaired]
    assert offsets[-1][1] == len(text)
