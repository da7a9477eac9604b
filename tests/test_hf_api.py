"""anytok.hf against the real `tokenizers` 0.23.3: Encodings field by field.

On the tokenizer.json fixtures (tests/hf_support.py) and a seeded sample of lines of the four
corpora: ids, tokens, offsets, type ids, word ids, sequence ids, special-token and attention masks
of single and pair inputs, with the post-processor's special tokens and without, with added
tokens in the text, pre-tokenized input, padding and truncation with overflowing; decode.
ANYTOK_FULL=1 takes more lines.
"""

from __future__ import annotations

import functools
import random

import pytest

from conftest import FULL
from hf_support import model_path

tokenizers = pytest.importorskip("tokenizers")

import anytok.hf as ahf  # noqa: E402

FIXTURES = ["llama3", "qwen3", "gemma3", "llama2", "deepseek_v3", "minilm"]
FIELDS = ("ids", "tokens", "offsets", "type_ids", "word_ids", "sequence_ids", "special_tokens_mask",
          "attention_mask", "n_sequences")


@functools.lru_cache(maxsize=None)
def _loaded(name):
    path = str(model_path(name))
    return tokenizers.Tokenizer.from_file(path), ahf.Tokenizer.from_file(path)


def _pair(name):
    """Both tokenizers of a fixture, loaded once per run (a big vocabulary takes seconds);
    tests change both the same way (added tokens stay: every test compares like with like)."""
    ref, got = _loaded(name)
    for tok in (ref, got):
        tok.no_truncation()
        tok.no_padding()
    return ref, got


def _same(ref, got, what):
    for field in FIELDS:
        a, b = getattr(ref, field), getattr(got, field)
        assert a == b, (what, field, a[:40] if isinstance(a, list) else a, b[:40] if isinstance(b, list) else b)
    assert len(ref.overflowing) == len(got.overflowing), what
    for i, (ro, go) in enumerate(zip(ref.overflowing, got.overflowing)):
        _same(ro, go, (what, "overflowing", i))


def _lines(corpora, n):
    rng = random.Random(43)
    out = []
    for key in sorted(corpora):
        lines = [ln for ln in corpora[key].splitlines() if ln.strip()]
        out += rng.sample(lines, min(n, len(lines)))
    return out


@pytest.fixture(scope="module")
def samples(corpora):
    lines = _lines(corpora, 200 if FULL else 4)
    extra = ["", " ", "  leading and trailing  ", "Hello world", "tabs\tand\nnewlines\r\n",
             "é e\u0301 ﬁ Ⅻ 𝔘 日本語 한국어 🤗👍🏽", "a" * 300, "x  y   z"]
    return lines + extra


@pytest.mark.parametrize("name", FIXTURES)
def test_single_and_pair(name, samples):
    ref, got = _pair(name)
    for i, text in enumerate(samples):
        for special in (True, False):
            _same(ref.encode(text, add_special_tokens=special), got.encode(text, add_special_tokens=special),
                  (name, text[:60], special))
        other = samples[(i * 7 + 3) % len(samples)]
        _same(ref.encode(text, other), got.encode(text, other), (name, text[:60], "pair"))


@pytest.mark.parametrize("name", FIXTURES)
def test_added_tokens_and_decode(name, samples):
    ref, got = _pair(name)
    specials = list(ref.get_added_tokens_decoder().values())[:3]
    for tok in (ref, got):
        tok.add_tokens(["hello", ahf.AddedToken("world", single_word=True) if tok is got
                        else tokenizers.AddedToken("world", single_word=True)])
        tok.add_special_tokens(["<my_special>"])
    for text in samples[:12]:
        words = text.split(" ")
        mixed = " ".join(w + (" hello" if k % 3 == 0 else "<my_special>" if k % 3 == 1 else "world")
                         for k, w in enumerate(words[:30]))
        if specials:
            mixed = specials[0].content + mixed + specials[-1].content
        r, g = ref.encode(mixed), got.encode(mixed)
        _same(r, g, (name, mixed[:60]))
        for skip in (True, False):
            assert ref.decode(r.ids, skip) == got.decode(r.ids, skip), (name, mixed[:60], skip)


@pytest.mark.parametrize("name", FIXTURES)
def test_pretokenized(name, samples):
    ref, got = _pair(name)
    for text in samples[:8]:
        words = text.split()[:40]
        if not words:
            continue
        _same(ref.encode(words, is_pretokenized=True), got.encode(words, is_pretokenized=True), (name, words[:5]))


@pytest.mark.parametrize("name", ["llama3", "minilm", "gemma3"])
def test_padding_truncation_overflowing(name, samples):
    ref, got = _pair(name)
    batch = [s for s in samples if s][:16]
    pairs = [(batch[i], batch[-1 - i]) for i in range(8)]
    for strategy in ("longest_first", "only_first", "only_second"):
        for direction in ("right", "left"):
            for tok in (ref, got):
                tok.enable_truncation(24, stride=4, strategy=strategy, direction=direction)
                tok.enable_padding(direction=direction, pad_id=3, pad_token="[P]", pad_to_multiple_of=8)
            for inputs in (pairs,) if strategy == "only_second" else (batch, pairs):
                try:
                    rs = ref.encode_batch(inputs)
                except BaseException:
                    # Which item's error a batch reports depends on Rust's threads: compare the
                    # items one by one (the same error from anytok.hf; Rust panics too).
                    for item in inputs:
                        args = item if isinstance(item, tuple) else (item,)
                        try:
                            r = ref.encode(*args)
                        except BaseException as e:
                            with pytest.raises(Exception) as info:
                                got.encode(*args)
                            assert str(e) == str(info.value), (name, strategy, direction, item)
                            continue
                        _same(r, got.encode(*args), (name, strategy, direction, item))
                    continue
                gs = got.encode_batch(inputs)
                for k, (r, g) in enumerate(zip(rs, gs)):
                    _same(r, g, (name, strategy, direction, k))
    for tok in (ref, got):
        tok.no_truncation()
        tok.enable_padding(length=64)
    for r, g in zip(ref.encode_batch(batch), got.encode_batch(batch)):
        _same(r, g, (name, "fixed"))
    for r, g in zip(ref.encode_batch_fast(pairs), got.encode_batch_fast(pairs)):
        _same(r, g, (name, "fast"))


@pytest.mark.parametrize("name", ["llama3", "minilm"])
def test_encoding_mappings(name, samples):
    ref, got = _pair(name)
    for text in samples[:6]:
        r, g = ref.encode(text, "a pair, here"), got.encode(text, "a pair, here")
        for seq in (0, 1):
            for c in range(0, len(text) + 2, 3):
                assert r.char_to_token(c, seq) == g.char_to_token(c, seq)
                assert r.char_to_word(c, seq) == g.char_to_word(c, seq)
            for w in range(0, 12):
                assert r.word_to_tokens(w, seq) == g.word_to_tokens(w, seq)
                assert r.word_to_chars(w, seq) == g.word_to_chars(w, seq)
        for t in range(len(r.ids) + 1):
            assert r.token_to_chars(t) == g.token_to_chars(t)
            assert r.token_to_word(t) == g.token_to_word(t)
            assert r.token_to_sequence(t) == g.token_to_sequence(t)


@pytest.mark.parametrize("name", ["llama3", "minilm", "llama2"])
def test_added_token_options(name):
    """lstrip / rstrip / single_word / normalized=False tokens: their spans and what is around."""
    ref, got = _pair(name)
    options = [dict(lstrip=True), dict(rstrip=True), dict(lstrip=True, rstrip=True), dict(single_word=True),
               dict(normalized=False), dict(normalized=True, special=True)]
    for k, opts in enumerate(options):
        content = f"<opt{k}>"
        ref.add_tokens([tokenizers.AddedToken(content, **opts)])
        got.add_tokens([ahf.AddedToken(content, **opts)])
        for text in (f"a {content} b", f"x{content}y", f"  {content}  ", f"{content}", f"Hé {content}\n{content}.",
                     f"word{content} {content}word"):
            for pair in (None, f"p {content} q"):
                _same(ref.encode(text, pair), got.encode(text, pair), (name, opts, text, pair))
    assert {i: repr(t) for i, t in ref.get_added_tokens_decoder().items()} == \
        {i: repr(t) for i, t in got.get_added_tokens_decoder().items()}
    assert ref.get_vocab_size() == got.get_vocab_size()


def test_encoding_truncate_pad_merge():
    ref, got = _pair("minilm")
    texts = ["The quick brown fox jumps over the lazy dog.", "Hello, world!", "un deux trois quatre cinq six"]
    for direction in ("right", "left"):
        for max_length, stride in ((4, 0), (5, 2), (0, 0), (100, 3)):
            r, g = ref.encode(texts[0], texts[1]), got.encode(texts[0], texts[1])
            r.truncate(max_length, stride, direction)
            g.truncate(max_length, stride, direction)
            _same(r, g, ("truncate", direction, max_length, stride))
            r.pad(12, direction=direction, pad_id=7, pad_type_id=3, pad_token="<p>")
            g.pad(12, direction=direction, pad_id=7, pad_type_id=3, pad_token="<p>")
            _same(r, g, ("pad", direction, max_length, stride))
    rs = [ref.encode(t) for t in texts]
    gs = [got.encode(t) for t in texts]
    for growing in (True, False):
        _same(tokenizers.Encoding.merge(rs, growing), ahf.Encoding.merge(gs, growing), ("merge", growing))


@pytest.mark.parametrize("name", ["llama3", "llama2", "gemma3", "minilm"])
def test_decode_stream(name, samples):
    ref, got = _pair(name)
    for text in samples[:6]:
        ids = ref.encode(text).ids
        for skip in (False, True):
            rs, gs = tokenizers.decoders.DecodeStream(skip_special_tokens=skip), ahf.DecodeStream(skip_special_tokens=skip)
            for i in ids:
                assert rs.step(ref, i) == gs.step(got, i), (name, text[:40], skip, i)


@pytest.mark.parametrize("name", FIXTURES)
def test_random_mixtures(name):
    """Random strings of letters, spaces, newlines, combining marks, CJK, emoji and the special
    tokens of several models: encode, encode_batch_fast (anytok's ids path) and pre-tokenized."""
    ref, got = _pair(name)
    rng = random.Random(hash(name) & 0xFFFF)
    alphabet = list("ab cd\t\n  é日本🤗") + ["<s>", "</s>", "[CLS]", "<|begin_of_text|>", "<unk>", "\u0301", "ﬁ",
                                            "  ", "\r\n", "Ⅻ", "\u200b", "ǅ", "<pad>"]
    for _ in range(200 if FULL else 30):
        batch = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25))) for _ in range(3)]
        for text in batch:
            _same(ref.encode(text), got.encode(text), (name, text))
        for pre in (False, True):
            inputs = [t.split() for t in batch] if pre else batch
            for r, g in zip(ref.encode_batch_fast(inputs, is_pretokenized=pre),
                            got.encode_batch_fast(inputs, is_pretokenized=pre)):
                _same(r, g, (name, batch, pre, "fast"))


# BPE meeting characters its vocabulary lacks ------------------------------------------------
# Vocabularies trained by tokenizers' own BpeTrainer on a text without ",", "x", "é" or emoji,
# then given each way of handling an unknown character.  Without an unk token tokenizers drops
# the character: its neighbours become adjacent symbols that may merge, and the offsets of the
# tokens after it are running sums of the kept symbols' byte lengths (so they start earlier).
_UNK_TRAIN = "hello world hola hello howdy wood abba dab bad cab a b c d " * 3
_UNK_ALPHABET = list("abcdhelowry  ,x") + ["é", "😀", "  ", "hello", " world", "ab"]


def _unk_variants():
    out = []
    for pre in (None, "Whitespace", "WhitespaceSplit"):
        for unk, fuse in ((None, False), ("<unk>", False), ("<unk>", True)):
            for bf in (False, True):
                out.append((pre, unk, fuse, bf, None, None))
        out.append((pre, None, False, False, "##", None))
        out.append((pre, None, False, True, "##", "</w>"))
        out.append((pre, "<unk>", True, False, None, "</w>"))
    return out


@functools.lru_cache(maxsize=None)
def _unk_trained(prefix, suffix):
    affixes = {k: v for k, v in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix)) if v}
    ref = tokenizers.Tokenizer(tokenizers.models.BPE(**affixes))
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=70, show_progress=False, special_tokens=["<unk>"], **affixes)
    ref.train_from_iterator([_UNK_TRAIN], trainer=trainer)
    return ref.to_str()


@pytest.mark.parametrize("pre,unk,fuse,bf,prefix,suffix", _unk_variants())
def test_bpe_unknown_characters(pre, unk, fuse, bf, prefix, suffix):
    import json

    import anytok

    cfg = json.loads(_unk_trained(prefix, suffix))
    model = cfg["model"]
    model.update(unk_token=unk, fuse_unk=fuse, byte_fallback=bf)
    if bf:  # bytes of "," and "é": "x", the emoji and (prefix "##") non-first "," and "é" stay unknown
        for b in (0x2C, 0xC3, 0xA9):
            model["vocab"][f"<0x{b:02X}>"] = len(model["vocab"])
    cfg["pre_tokenizer"] = {"type": pre} if pre else None
    data = json.dumps(cfg)
    ref, got = tokenizers.Tokenizer.from_str(data), ahf.Tokenizer.from_str(data)
    ids_path = anytok.load(data.encode())
    rng = random.Random(f"{pre}{unk}{fuse}{bf}{prefix}{suffix}")
    texts = ["hello world, hola", "he,llo", ",,ab,", "héllo wörld, hola", "x", "dab,ba cab",
             "hello world hola hello, howdy wood wood"]
    texts += ["".join(rng.choice(_UNK_ALPHABET) for _ in range(rng.randint(1, 30))) for _ in range(25)]
    what = (pre, unk, fuse, bf, prefix, suffix)
    for i, text in enumerate(texts):
        r, g = ref.encode(text), got.encode(text)
        _same(r, g, (what, text))
        assert ids_path.encode(text) == r.ids, (what, text)
        other = texts[(i * 7 + 3) % len(texts)]
        _same(ref.encode(text, other), got.encode(text, other), (what, text, other))
    for r, g in zip(ref.encode_batch_fast(texts), got.encode_batch_fast(texts)):
        _same(r, g, (what, "fast"))


# tokenizer.json text ----------------------------------------------------------------------------

def _trained(kind):
    """A small tokenizer of each model kind trained by tokenizers itself (Unigram: float scores).
    Not re-read by tokenizers: its reader rounds some scores' last digit (serde_json's float
    parser), anytok.hf's reads them exactly, so only the trained object's text is the reference."""
    m, t = tokenizers.models, tokenizers.trainers
    model, trainer = {"Unigram": (m.Unigram(), t.UnigramTrainer(vocab_size=60, unk_token="<unk>")),
                      "WordPiece": (m.WordPiece(unk_token="[UNK]"), t.WordPieceTrainer(vocab_size=80)),
                      "WordLevel": (m.WordLevel(unk_token="[UNK]"), t.WordLevelTrainer())}[kind]
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer.show_progress = False
    tok.train_from_iterator([_UNK_TRAIN, "é日本 \"quoted\\\" ],[ 😀\u2028"] * 3, trainer=trainer)
    return tok


@pytest.mark.parametrize("name", ["llama2", "minilm", "Unigram", "WordPiece", "WordLevel"])
def test_pretty_tokenizer_json_like_tokenizers(name, tmp_path):
    """to_str(pretty=True) and save(): tokenizers' own text, byte for byte, with padding,
    truncation and added tokens set alike on both (two fixtures, three trained models)."""
    if name in FIXTURES:
        ref, got = _pair(name)
    else:
        ref = _trained(name)
        got = ahf.Tokenizer.from_str(ref.to_str())
    try:
        for tok in (ref, got):
            tok.enable_truncation(37, stride=3, strategy="only_first", direction="left")
            tok.enable_padding(direction="left", pad_id=0, pad_token="[PAD]", pad_to_multiple_of=8)
        assert got.to_str(pretty=True) == ref.to_str(pretty=True)
        ref.save(str(tmp_path / "ref.json"))
        got.save(str(tmp_path / "got.json"))
        assert (tmp_path / "got.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
    finally:
        for tok in (ref, got):
            tok.no_truncation()
            tok.no_padding()
    if name not in FIXTURES:
        for tok in (ref, got):
            tok.add_tokens(["new\"token", tokenizers.AddedToken("é]", lstrip=True) if tok is ref
                            else ahf.AddedToken("é]", lstrip=True)])
            tok.add_special_tokens(["<sp>"])
        assert got.to_str(pretty=True) == ref.to_str(pretty=True)
