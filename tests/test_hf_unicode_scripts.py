"""The UnicodeScripts pre-tokenizer (anytok.hf and anytok.pipeline) against the real `tokenizers`
0.23.3: identical pieces and offsets on the corpora, on every code point and on hand-picked
cases (leading spaces dropped, Hiragana/Katakana/U+30FC as Han, characters of no script).

Every code point: the scalar values are laid out in a row, in code point order and in seeded
random orders, and pre-tokenized whole; a cut falls between two neighbours exactly when their
scripts differ, so the random orders compare the scripts of random pairs of code points.  The
default run takes a seeded sample of the code points; ANYTOK_FULL=1 takes all of them.
"""

from __future__ import annotations

import json
import random

import pytest
import tokenizers as T

import anytok.hf as A
from anytok.pipeline import pre_tokenizers as PP
from conftest import FULL

SCALARS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def _both(text: str):
    ours = A.pre_tokenizers.UnicodeScripts().pre_tokenize_str(text)
    ref = T.pre_tokenizers.UnicodeScripts().pre_tokenize_str(text)
    return ours, [(s, tuple(o)) for s, o in ref]


def _assert_same(text: str) -> None:
    ours, ref = _both(text)
    if ours != ref:
        i = next((k for k, (a, b) in enumerate(zip(ours, ref)) if a != b), min(len(ours), len(ref)))
        raise AssertionError(f"pieces differ at {i}: anytok {ours[i:i + 2]!r}, tokenizers {ref[i:i + 2]!r}")
    assert PP.from_config({"type": "UnicodeScripts"}).split(text, True) == [s for s, _ in ref]


@pytest.mark.parametrize("text", [
    "どこで生れ。Yes", "Apples are りんご 林檎", "  leading spaces", "   ", "", "trailing  ",
    "a\u0301b c", "x\U000E0100y", "ー漢カナかな", "abc\u0378d", "1 a 2", "Ελληνικά русский עברית العربية",
    "\u3000全角\u3000space", "tab\tnew\nline", "한국어 テスト", "\U0001F600 emoji \U0001F600",
])
def test_cases(text):
    _assert_same(text)


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_corpus(corpus, corpora):
    text = corpora[corpus]
    size = 200_000 if FULL else 20_000
    middle = len(text) // 2
    for part in (text[:size], text[middle:middle + size]):
        _assert_same(part)


@pytest.mark.parametrize("order", ["sorted", "shuffled-1", "shuffled-2"])
def test_every_code_point(order):
    rng = random.Random(f"unicode-scripts/{order}")
    cps = SCALARS if FULL else sorted(rng.sample(SCALARS, 60_000))
    if order != "sorted":
        cps = list(cps)
        rng.shuffle(cps)
    step = 1 << 16
    for k in range(0, len(cps), step):
        _assert_same("".join(map(chr, cps[k:k + step])))


def test_in_a_tokenizer():
    """A tokenizer.json with a UnicodeScripts pre-tokenizer: ids, tokens and offsets as
    tokenizers gives them, through anytok.hf and through anytok's pipeline."""
    from anytok.pipeline.tokenizer import Tokenizer as Pipeline

    vocab = {"[UNK]": 0, "a": 1, "b": 2, "Yes": 3, "林檎": 4, "りんご": 5, " ": 6}
    cfg = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
           "pre_tokenizer": {"type": "UnicodeScripts"}, "post_processor": None, "decoder": None,
           "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}}
    ref = T.Tokenizer.from_str(json.dumps(cfg))
    ours = A.Tokenizer.from_str(json.dumps(cfg))
    for text in ["どこで生れ。Yes", "Apples are りんご 林檎", "  a b", "りんご林檎Yes a"]:
        e1, e2 = ours.encode(text), ref.encode(text)
        assert (e1.ids, e1.tokens, e1.offsets) == (e2.ids, e2.tokens, [tuple(o) for o in e2.offsets])
    bpe = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
           "pre_tokenizer": {"type": "UnicodeScripts"}, "post_processor": None, "decoder": None,
           "model": {"type": "BPE", "dropout": None, "unk_token": "[UNK]", "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                     "vocab": {"[UNK]": 0, "a": 1, "b": 2, "ab": 3, " ": 4, "あ": 5}, "merges": [["a", "b"]]}}
    ref = T.Tokenizer.from_str(json.dumps(bpe))
    pipe = Pipeline.from_config(bpe)
    for text in ["ab ab", "  abあab", "abc"]:
        e = ref.encode(text, add_special_tokens=False)
        assert pipe.encode_with_offsets(text) == (e.ids, [tuple(o) for o in e.offsets])
