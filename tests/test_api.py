"""The tiktoken-compatible API: every public method against tiktoken, plus anytok's additions."""

from __future__ import annotations

import pickle

import pytest

import anytok
import tiktoken
from conftest import ALL_ENCODINGS, anytok_encoding, tiktoken_encoding

SAMPLES = [
    "",
    "hello world",
    "Hello, World! It's 2024... I'm here; they'll've gone.",
    "  leading and trailing spaces   ",
    "tabs\tand\nnewlines\r\n\r\nand\u00a0nbsp",
    "数字123456789 and ١٢٣ and ①②③",
    "emoji 😀👍🏽 and flags 🇫🇷, ZWJ 👨‍👩‍👧",
    "Ünïcödé façade naïve coöperate Straße ǅemal",
    "mixed 中文 日本語 한국어 русский العربية हिन्दी ไทย",
    "code: def f(x):\n    return x**2  # comment\n",
    "\x00 NUL and \x7f DEL and \u200b zero width",
    "I'M SHOUTING DON'T YOU'LL WE'VE",
    "a" * 1000,
    " " * 100 + "x",
    "\n" * 50,
]


@pytest.mark.parametrize("name", ALL_ENCODINGS)
def test_samples(name):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    for s in SAMPLES:
        ids = t.encode(s)
        assert a.encode(s) == ids, s
        assert a.encode_ordinary(s) == t.encode_ordinary(s), s
        assert a.count(s) == len(ids)
        assert a.decode(ids) == t.decode(ids)
        assert a.decode_tokens_bytes(ids) == t.decode_tokens_bytes(ids)
        assert a.decode_with_offsets(ids) == t.decode_with_offsets(ids)


@pytest.mark.parametrize("name", ["r50k_base", "p50k_edit", "cl100k_base", "o200k_harmony"])
def test_special_tokens(name):
    a, t = anytok_encoding(name), tiktoken_encoding(name)
    specials = sorted(t.special_tokens_set)[:6]
    text = "start " + " mid ".join(specials) + " end" + specials[0]
    for kwargs in (
        {"allowed_special": "all"},
        {"allowed_special": set(specials[:1]), "disallowed_special": ()},
        {"disallowed_special": ()},
        {"allowed_special": set(specials), "disallowed_special": "all"},
    ):
        assert a.encode(text, **kwargs) == t.encode(text, **kwargs), kwargs
        assert a.count(text, **kwargs) == len(t.encode(text, **kwargs))
    with pytest.raises(ValueError) as exc_a:
        a.encode(text)
    with pytest.raises(ValueError) as exc_t:
        t.encode(text)
    assert str(exc_a.value) == str(exc_t.value)
    if len(specials) > 1:
        with pytest.raises(ValueError):
            a.encode(text, allowed_special=set(specials[:1]))
    with pytest.raises(ValueError):
        a.count(text)
    # A special token's text can be disallowed selectively.
    with pytest.raises(ValueError):
        a.encode("x" + specials[0], disallowed_special={specials[0]})
    assert a.encode_batch([text, "x"], allowed_special="all") == t.encode_batch([text, "x"], allowed_special="all")


def test_single_tokens():
    a, t = anytok_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    for x in ["hello", b"hello", " world", "<|endoftext|>", b"\xe4\xb8"]:
        assert a.encode_single_token(x) == t.encode_single_token(x)
    for bad in ["helloworldqq", b"\xff\xfe\xfd"]:
        with pytest.raises(KeyError):
            a.encode_single_token(bad)
    for tok in [0, 100, 100257, 100276]:
        assert a.decode_single_token_bytes(tok) == t.decode_single_token_bytes(tok)
    for bad in [100261, 10**9, 2**32, -1, -100, -2**40]:  # (a negative index would find a token)
        with pytest.raises(KeyError):
            a.decode_single_token_bytes(bad)
        with pytest.raises(KeyError):
            a.decode([1, bad])
    for bad in ["100", 1.0, None]:  # not integers: TypeError, as tiktoken
        with pytest.raises(TypeError):
            t.decode([1, bad])
        with pytest.raises(TypeError):
            a.decode([1, bad])
        with pytest.raises(TypeError):
            a.decode_single_token_bytes(bad)
    ids = t.encode("hello world, ÿ 中文")  # tuples, ranges and numpy arrays decode as lists do
    assert a.decode(tuple(ids)) == a.decode(iter(ids)) == t.decode(ids)
    assert a.decode_bytes(range(1000, 1100)) == t.decode_bytes(list(range(1000, 1100)))
    assert a.is_special_token(100257) and not a.is_special_token(100)
    with pytest.raises(TypeError):
        a.is_special_token("100")


def test_decode_errors_and_partial_utf8():
    a, t = anytok_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    # A rare character that BPE splits inside its UTF-8 bytes.
    ch = next(c for c in map(chr, range(0x20000, 0x20100)) if len(t.encode(c)) > 1)
    partial = a.encode(ch)[:1]
    assert a.decode(partial) == t.decode(partial) == "\ufffd"
    assert a.decode(partial, errors="ignore") == t.decode(partial, errors="ignore") == ""
    with pytest.raises(UnicodeDecodeError):
        a.decode(partial, errors="strict")
    with pytest.raises(UnicodeDecodeError):
        a.decode_with_offsets(partial)
    ids = a.encode("x" + ch + "y")
    assert a.decode_with_offsets(ids) == t.decode_with_offsets(ids)


def test_surrogates_as_tiktoken():
    texts = ["\ud800", "a\udfffb", "\ud83d\ude00 pair", "x\ud83dy\ude00z", "\udcff" * 10, "ok \ud800\ud800 ok"]
    for name in ["r50k_base", "cl100k_base", "o200k_base"]:
        a, t = anytok_encoding(name), tiktoken_encoding(name)
        for s in texts:
            assert a.encode(s) == t.encode(s), (name, s)
            assert a.encode_ordinary(s) == t.encode_ordinary(s)
            assert a.count(s) == len(t.encode(s))


def test_pickle():
    enc = anytok_encoding("cl100k_base")
    assert pickle.loads(pickle.dumps(enc)) is not None
    assert pickle.loads(pickle.dumps(enc)).encode("hello") == enc.encode("hello")
    assert len(pickle.dumps(enc)) < 200  # bundled encodings pickle by name
    custom = anytok.Encoding(
        "custom", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks, special_tokens={"<|x|>": 100300}
    )
    back = pickle.loads(pickle.dumps(custom))
    assert back.name == "custom" and back.encode("<|x|> hi", allowed_special="all") == custom.encode(
        "<|x|> hi", allowed_special="all"
    )


def test_custom_encoding_like_tiktoken():
    import tiktoken

    base = tiktoken_encoding("cl100k_base")
    kwargs = dict(
        name="cl100k_im",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
    )
    a, t = anytok.Encoding(**kwargs), tiktoken.Encoding(**kwargs)
    s = "<|im_start|>user\nhello<|im_end|>"
    assert a.encode(s, allowed_special="all") == t.encode(s, allowed_special="all")
    with pytest.raises(ValueError):
        anytok.Encoding(**kwargs, explicit_n_vocab=5)


def test_model_table():
    import tiktoken.model as tm

    from anytok import model as am

    assert am.MODEL_TO_ENCODING == tm.MODEL_TO_ENCODING
    assert am.MODEL_PREFIX_TO_ENCODING == tm.MODEL_PREFIX_TO_ENCODING
    for m in ["gpt-4o", "gpt-4o-2024-05-13", "gpt-4", "gpt-3.5-turbo-0301", "gpt-oss-120b", "o1", "text-davinci-003", "gpt2"]:
        assert anytok.encoding_name_for_model(m) == tiktoken.encoding_name_for_model(m)
        assert anytok.encoding_for_model(m).name == tm.encoding_name_for_model(m)
    with pytest.raises(KeyError):
        anytok.encoding_name_for_model("no-such-model")


def test_registry():
    import tiktoken

    assert sorted(anytok.list_encoding_names()) == sorted(tiktoken.list_encoding_names())
    assert anytok.get_encoding("o200k_base") is anytok.get_encoding("o200k_base")
    with pytest.raises(ValueError):
        anytok.get_encoding("nope")
    with pytest.raises(ValueError):
        anytok.get_encoding(123)




def test_big_texts_pause_the_garbage_collector(monkeypatch):
    """encode/count of a big text run no cyclic-GC collection (anytok._gc.gc_paused: the containers
    they make are never garbage) and leave the collector as they found it, on or off."""
    import gc
    import random

    from anytok import core

    a, t = anytok_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    rng = random.Random(7)
    # Thousands of distinct pieces that need merging: thousands of lists of ids made.
    text = " ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(5, 12))) for _ in range(6000))
    assert len(text) >= core.GC_PAUSE_CHARS
    ids = t.encode(text)
    seen = []

    def watch(phase, info):
        seen.append(phase)

    def calls():
        a._piece_cache.clear()
        assert a.encode(text) == ids
        a._piece_cache.clear()
        assert a.count(text) == len(ids)

    gc.callbacks.append(watch)
    try:
        assert gc.isenabled()
        with monkeypatch.context() as m:
            m.setattr(core, "GC_PAUSE_CHARS", len(text) + 1)
            calls()
        assert seen, "the text is too small to set off a collection: the test would prove nothing"
        seen.clear()
        calls()
        assert seen == [] and gc.isenabled()
        gc.disable()
        calls()
        assert not gc.isenabled()
    finally:
        gc.callbacks.remove(watch)
        gc.enable()
