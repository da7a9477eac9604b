"""Hugging Face tokenizer.json: ids and decoded text identical to `tokenizers`, for real models.

The models (see hf_support.MODELS) are fetched, sha256-verified, by
build_scripts/fetch/fetch_models.py; a missing fixture fails.  Every test compares with the
`tokenizers` library itself, loaded from the same file (truncation and padding switched off:
anytok keeps them in the configuration but, like `encode` in most uses, does not apply them).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, code_point_share
from hf_support import (MODELS, anytok_tokenizer, assert_same_decode, assert_same_ids, hf_tokenizer, model_path,
                        narrow)

NAMES = list(MODELS)
SLICE = 12000


@pytest.fixture(scope="module", autouse=True)
def fixtures_present():
    for name in NAMES:
        assert model_path(name).exists()


# ---------------------------------------------------------------------------------------------
# Corpora
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
@pytest.mark.parametrize("name", NAMES)
def test_corpus(name, corpus, corpora):
    at, hf = anytok_tokenizer(name), hf_tokenizer(name)
    text = corpora[corpus]
    middle = len(text) // 2
    for part in (text[:SLICE], text[middle:middle + SLICE]):
        for add in (False, True):
            ids = assert_same_ids(at, hf, part, add)
            assert at.count(part, add_special_tokens=add) == len(ids)
        assert_same_decode(at, hf, ids)


# ---------------------------------------------------------------------------------------------
# Every code point, in context
# ---------------------------------------------------------------------------------------------

SCALARS = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp <= 0xDFFF]
CHUNK = 1 << 14
CONTEXTS = {
    "after space": " {}",
    "between letters": "a{}b",
    "doubled before newline": "{}{}\n",
    "after digits, before apostrophe": "12{}'s",
}
# The byte-level models share their byte-level handling: two contexts each (DeepSeek V3, the
# slowest to sweep, one: between letters, where its letter, mark, punctuation and symbol classes
# show; its whitespace handling is swept in the others' "doubled before newline"); the models whose
# normalizers or pre-tokenizers look at every character get more (Qwen 3's NFC: three, MiniLM's
# BERT normalizer: all).  Each sweep is a minute or more of CI time on 2 cores.
MODEL_CONTEXTS = {
    "llama3": ["after space", "after digits, before apostrophe"],
    "qwen3": ["after space", "doubled before newline", "after digits, before apostrophe"],
    "deepseek_v3": ["between letters"],
    "gemma3": ["after space", "doubled before newline"],
    "llama2": ["between letters", "after digits, before apostrophe"],
    "minilm": list(CONTEXTS),
}


@pytest.mark.parametrize("name,context", [(n, c) for n in NAMES for c in MODEL_CONTEXTS[n]])
def test_every_code_point(name, context):
    at, hf = anytok_tokenizer(name), hf_tokenizer(name)
    fmt = CONTEXTS[context]
    # The default run: each of the model's contexts its share (every code point once per model).
    scalars = code_point_share(SCALARS, MODEL_CONTEXTS[name].index(context), len(MODEL_CONTEXTS[name]))
    for start in range(0, len(scalars), CHUNK):
        items = [fmt.format(chr(cp), chr(cp)) for cp in scalars[start:start + CHUNK]]
        text = "".join(items)
        add = start == 0
        expected = hf.encode(text, add_special_tokens=add).ids
        if at.encode(text, add_special_tokens=add) != expected:
            culprit = narrow(at, hf, items)
            raise AssertionError(f"{name}, {context}: chunk at U+{scalars[start]:04X} differs; "
                                 f"first differing item: {culprit!r}")
        assert at.decode(expected) == hf.decode(expected, skip_special_tokens=False)


# ---------------------------------------------------------------------------------------------
# Fuzzing
# ---------------------------------------------------------------------------------------------

FRAGMENTS = [
    " ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\x0b", "\x0c", "\x85",
    "'s", "'S", "'t", "'re", "'ve", "'m", "'ll", "'d", "'LL", "\u017f", "'", "’s", "n't",
    "0", "7", "123", "4567", "١٢٣", "Ⅻ", "½", "²", "①",
    "a", "Z", "hello", "World", "ǅ", "ß", "é", "e\u0301", "İ", "ﬁ", "Å", "A\u030a", "ḱ", "\u1e9b\u0323",
    "中", "文字", "日本語", "カタカナ", "ひらがな", "が", "か\u3099", "한국어", "\u1100\u1161\u11a8", "русский",
    "Ελληνικά", "Σ", "עברית", "العربية", "हिन्दी", "ไทย", "\u0f73",
    "😀", "👍🏽", "🇫🇷", "👨\u200d👩\u200d👧", "\U0001d400", "\U00020000", "\U0010fffd", "\ufffd", "\ufeff", "\u00ad",
    "!", "?", "...", "--", "/", "//", "\\", "{}", "()", "<", ">", "<|", "|>", "▁", "▁▁", "##", "<0x41>", "[", "]",
    "\x00", "\x01", "\x7f", "\u200b", "\u0300", "\u0345", "\U000e0001", "\ue000",
    # Added tokens of the models (special or not, normalized or not).
    "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|endoftext|>", "<|im_start|>", "<think>", "</think>",
    "<tool_call>", "<s>", "</s>", "<unk>", "<bos>", "<eos>", "<pad>", "<start_of_turn>", "<unused7>", "<h5>",
    "[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]", "<｜User｜>", "<｜Assistant｜>", "<|EOT|>", "<｜begin▁of▁sentence｜>",
    "<｜tool▁sep｜>",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), max_size=30).map("".join)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_fuzz(name, text):
    at, hf = anytok_tokenizer(name), hf_tokenizer(name)
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")  # what HF can take
    for add in (False, True):
        ids = assert_same_ids(at, hf, text, add)
    assert_same_decode(at, hf, ids)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decode_any_ids(name, data):
    """Any id sequence (broken UTF-8, stray byte tokens, specials) decodes as in HF."""
    at, hf = anytok_tokenizer(name), hf_tokenizer(name)
    n = hf.get_vocab_size(with_added_tokens=True)
    low = st.integers(0, min(n - 1, 600))  # byte tokens and specials sit at the start of most vocabularies
    ids = data.draw(st.lists(st.one_of(low, st.integers(0, n - 1)), max_size=30))
    assert_same_decode(at, hf, ids)


# ---------------------------------------------------------------------------------------------
# API and serialization
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_vocabulary_api(name):
    at, hf = anytok_tokenizer(name), hf_tokenizer(name)
    vocab = hf.get_vocab(with_added_tokens=True)
    assert at.n_vocab == max(vocab.values()) + 1
    for tok, i in list(vocab.items())[:2000]:
        assert at.token_to_id(tok) == i
        assert at.id_to_token(i) == hf.id_to_token(i)
    specials = {t.content for t in hf.get_added_tokens_decoder().values() if t.special}
    assert at.special_tokens_set == specials
    batch = ["Hello world", "", "  x\n"]
    assert at.encode_batch(batch) == [e.ids for e in hf.encode_batch(batch, add_special_tokens=False)]


@pytest.mark.parametrize("name", NAMES)
def test_config_round_trip(name, corpora):
    from anytok.pipeline.tokenizer import Tokenizer

    at = anytok_tokenizer(name)
    cfg = at.to_config()
    again = Tokenizer.from_config(json.loads(json.dumps(cfg)))
    assert again.to_config() == cfg
    text = corpora["en"][:3000] + corpora["zh"][:1000] + "<s>[CLS]<|endoftext|>\n\n"
    assert again.encode(text) == at.encode(text)
    assert again.encode(text, add_special_tokens=True) == at.encode(text, add_special_tokens=True)
    # And what anytok writes is a tokenizer.json that `tokenizers` itself loads, with the same ids.
    from hf_support import hf_from_json

    assert again.name == at.name
    assert hf_from_json(at.to_tokenizer_json()).encode(text, add_special_tokens=True).ids == at.encode(
        text, add_special_tokens=True)


@pytest.mark.parametrize("name", NAMES)
def test_atok_file_round_trip(name, corpora, tmp_path):
    """tokenizer.json -> .atok (smaller) -> the same ids, specials and decode."""
    import anytok

    at = anytok_tokenizer(name)
    path = tmp_path / f"{name}.atok"
    anytok.save(at, path)
    assert path.stat().st_size < model_path(name).stat().st_size
    back = anytok.load(path)
    text = corpora["en"][:3000] + corpora["code"][:2000] + corpora["ja"][:1000] + "<s>[CLS]<|endoftext|>\n"
    ids = at.encode(text, add_special_tokens=True)
    assert back.encode(text, add_special_tokens=True) == ids
    assert back.decode(ids) == at.decode(ids)
    assert back.special_tokens_set == at.special_tokens_set


def test_atok_inconsistent_config_is_a_format_error():
    import anytok
    from anytok.files import tokenizer_from_bytes
    from anytok.format import VocabData, VocabFormatError, dumps

    cfg = anytok_tokenizer("llama2").to_config()
    assert "anytok_merges" in cfg["model"] and "anytok_vocab" in cfg["model"]
    bad = json.loads(json.dumps(cfg))
    bad["model"]["anytok_merges"][7] = 10**6  # a merge naming an id no token has
    with pytest.raises(VocabFormatError, match="inconsistent anytok.hf configuration.*1000000"):
        tokenizer_from_bytes(dumps(VocabData(name="x", config=bad)))
    bad = json.loads(json.dumps(cfg))
    bad["model"]["anytok_vocab_ids"] = [0, 1]
    with pytest.raises(VocabFormatError, match="differ in length"):
        tokenizer_from_bytes(dumps(VocabData(name="x", config=bad)))
    assert isinstance(anytok.load(dumps(VocabData(name="x", config=cfg))).encode("hi"), list)


def _tiny_bpe_json(merges) -> str:
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, "merges": merges},
    })


@pytest.mark.parametrize("merges, missing", [
    (["a b", "ab d"], "d"),                # a merge's right token is no token
    (["a b", "x c"], "x"),                 # its left token
    (["a b", "x y"], "x"),                 # both: the left one is named
    (["a b", "b c"], "bc"),                # the token it makes
    ([["a", "b"], ["x", "c"]], "x"),       # the newer form: pairs
    (["a b", "abc"], None),                # not two tokens
])
def test_bad_merges_are_refused_as_tokenizers_does(merges, missing):
    """A tokenizer.json whose merges name or make no token: `tokenizers` refuses it, naming the
    token; so does anytok, with a ValueError naming the same token (or the malformed merge)."""
    import anytok
    import tokenizers

    text = _tiny_bpe_json(merges)
    with pytest.raises(Exception) as hf_error:
        tokenizers.Tokenizer.from_str(text)
    with pytest.raises(ValueError) as error:
        anytok.load(text.encode())
    if missing is None:
        assert "invalid" in str(hf_error.value) and "bad BPE merge 'abc'" in str(error.value)
    else:
        assert f"Token `{missing}` out of vocabulary" in str(hf_error.value)
        assert f"token {missing!r} is not in the vocabulary" in str(error.value)
    assert anytok.load(_tiny_bpe_json(["a b", "ab c"]).encode()).encode("abc") == \
        tokenizers.Tokenizer.from_str(_tiny_bpe_json(["a b", "ab c"])).encode("abc").ids == [4]


@pytest.mark.parametrize("name", ["llama3", "qwen3", "deepseek_v3"])
def test_segmented_words_equal_whole_words(name, corpora):
    """Byte-level models cut long words where no token spans (models/bpe_merges.py): with the
    segmenter from the first word on, and without it, the ids are the same."""
    from anytok.pipeline.hf_json import load_tokenizer_json

    seg, whole = load_tokenizer_json(model_path(name)), load_tokenizer_json(model_path(name))
    seg.model._segment_wait = 0
    whole.model._segmenter = False
    for key in ("zh", "ja", "code"):
        text = corpora[key][:20000]
        assert seg.encode(text) == whole.encode(text)
    assert seg.model._segmenter and seg.model._segment_cache  # it was used


@pytest.mark.parametrize("name", NAMES)
def test_count_till_limit(name, corpora):
    at = anytok_tokenizer(name)
    text = corpora["en"][:4000] + corpora["zh"][:1000] + "<s>[CLS]<|endoftext|>\n"
    n = at.count(text)
    assert n == len(at.encode(text))
    for limit in (0, 1, 7, n // 3, n - 1, n, n + 1, 10 * n):
        assert at.count_till_limit(text, limit) == (n if n <= limit else None)
    assert at.count_till_limit("", 0) == 0


SCRIPT = r"""
import json, sys
sys.modules["regex"] = None
sys.path.insert(0, sys.argv[2])
from anytok.pipeline.hf_json import load_tokenizer_json
tok = load_tokenizer_json(sys.argv[1])
print(json.dumps(tok.encode(sys.stdin.read(), add_special_tokens=True)))
assert sys.modules.get("regex") is None
"""


def test_without_regex():
    text = "Hello wörld! 12345 'll 😀 中文 <|begin_of_text|>\n\n"
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(model_path("llama3")), str(ROOT / "pkg")],
                       input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == hf_tokenizer("llama3").encode(text).ids


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_whitespace_pre_tokenizer(corpus, corpora):
    """MiniLM's WordPiece with the Whitespace pre-tokenizer (Oniguruma's \\w+|[^\\w\\s]+), as
    tokenizers trained from scratch often have it; every code point is in test_hf_unicode.py."""
    from anytok.pipeline.tokenizer import Tokenizer

    from hf_support import hf_from_json

    cfg = json.loads(model_path("minilm").read_text(encoding="utf-8"))
    cfg["pre_tokenizer"] = {"type": "Whitespace"}
    at, hf = Tokenizer.from_config(cfg), hf_from_json(cfg)
    text = corpora[corpus]
    for part in (text[:SLICE], text[len(text) // 2:len(text) // 2 + SLICE]):
        assert_same_ids(at, hf, part, True)


_FLAG_PAIRS: dict = {}


def _flag_pair(flags: dict):
    """anytok's and tokenizers' pipeline with two added tokens, "zq" (with `flags`) and "zqx"
    (single_word the other way), built once per combination of flags."""
    from anytok.pipeline.tokenizer import Tokenizer

    from hf_support import hf_from_json
    from test_hf_unicode import single_word_pipeline

    key = tuple(sorted(flags.items()))
    if key not in _FLAG_PAIRS:
        cfg = single_word_pipeline(**flags)
        cfg["added_tokens"].append({**cfg["added_tokens"][-1], "id": cfg["added_tokens"][-1]["id"] + 1,
                                    "content": "zqx", "single_word": not flags["single_word"]})
        _FLAG_PAIRS[key] = (Tokenizer.from_config(cfg), hf_from_json(cfg))
    return _FLAG_PAIRS[key]


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(["zq", "zqx", "q", "a", "_", " ", "  ", "\n", "é", "1", "!", "\u0301", "日"]),
                     max_size=14).map("".join),
       flags=st.fixed_dictionaries({"single_word": st.booleans(), "lstrip": st.booleans(),
                                    "rstrip": st.booleans(), "normalized": st.booleans()}))
def test_added_token_flags_fuzz(text, flags):
    """An added token with every combination of single_word, lstrip, rstrip, normalized."""
    at, hf = _flag_pair(flags)
    assert at.encode(text) == hf.encode(text, add_special_tokens=False).ids
