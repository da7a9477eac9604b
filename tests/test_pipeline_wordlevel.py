"""A WordLevel tokenizer.json (tokenizers' `models.WordLevel`) through `anytok.load`: the same
ids and offsets as `tokenizers` 0.23.3 gives with the same file.

The files are trained by tokenizers' own WordLevelTrainer on the corpora's first lines, with a
vocabulary small enough that many words are unknown, under four pipelines (plain Whitespace,
byte-level, BERT-like with a post-processor, Metaspace).  Then the corpora's next lines are
encoded by both.
"""

from __future__ import annotations

import json

import pytest

import anytok
from conftest import FULL

tokenizers = pytest.importorskip("tokenizers")

from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

TRAIN_LINES = 2000 if FULL else 300
TEST_LINES = 3000 if FULL else 100


def _pipeline(kind: str) -> HFTokenizer:
    tok = HFTokenizer(models.WordLevel(unk_token="[UNK]"))
    if kind == "whitespace":
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
    elif kind == "byte-level":
        tok.normalizer = normalizers.Lowercase()
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        tok.decoder = decoders.ByteLevel()
    elif kind == "bert":
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    elif kind == "metaspace":
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
    return tok


def _lines(text: str, start: int, count: int) -> list[str]:
    return [line for line in text.split("\n")[start:start + count] if line.strip()]


@pytest.fixture(scope="module")
def trained(corpora, tmp_path_factory):
    """kind -> (path of the tokenizer.json tokenizers saved, tokenizers' Tokenizer)."""
    out = {}
    train_texts = [line for c in ("en", "code", "zh", "ja") for line in _lines(corpora[c], 0, TRAIN_LINES)]
    for kind in ("whitespace", "byte-level", "bert", "metaspace"):
        tok = _pipeline(kind)
        trainer = trainers.WordLevelTrainer(vocab_size=1500, min_frequency=2, show_progress=False,
                                            special_tokens=["[UNK]", "[CLS]", "[SEP]"])
        tok.train_from_iterator(train_texts, trainer)
        if kind == "bert":
            tok.post_processor = processors.TemplateProcessing(
                single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
        path = tmp_path_factory.mktemp("wordlevel") / f"{kind}.json"
        tok.save(str(path))
        out[kind] = (path, tok)
    return out


@pytest.mark.parametrize("kind", ["whitespace", "byte-level", "bert", "metaspace"])
def test_same_ids_and_offsets_as_tokenizers(kind, trained, corpora):
    path, ref = trained[kind]
    assert json.loads(path.read_text())["model"]["type"] == "WordLevel"
    tok = anytok.load(str(path))
    texts = [line for c in ("en", "code", "zh", "ja") for line in _lines(corpora[c], TRAIN_LINES, TEST_LINES)]
    texts += ["", "  ", "unknownwordxyz qqq", "Hello, World!", "\u00e9t\u00e9 \U0001F600 a\u0301"]
    unknown = 0
    unk_id = ref.token_to_id("[UNK]")
    for text in texts:
        for add in (False, True):
            e = ref.encode(text, add_special_tokens=add)
            assert tok.encode(text, add_special_tokens=add) == e.ids, (kind, text)
            assert tok.encode_with_offsets(text, add_special_tokens=add) == (e.ids, [tuple(o) for o in e.offsets]), (kind, text)
        unknown += e.ids.count(unk_id)
    assert unknown > 50  # the unknown-word path is exercised
    ids = ref.encode(texts[0]).ids
    for skip in (False, True):
        assert tok.decode(ids, skip_special_tokens=skip) == ref.decode(ids, skip_special_tokens=skip)
    # anytok.hf reads it too, tokens included.
    hf = anytok.hf.Tokenizer.from_file(str(path))
    for text in texts[:50]:
        a, b = hf.encode(text), ref.encode(text)
        assert (a.ids, a.tokens, a.offsets) == (b.ids, b.tokens, b.offsets)


def _config(vocab, **model):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": vocab, **model}}


def test_unk_token_missing_from_the_vocabulary(tmp_path):
    # tokenizers loads the file and fails when a word is unknown, not before.
    cfg = _config({"a": 0, "b": 1}, unk_token="<zz>")
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(cfg))
    ref = HFTokenizer.from_file(str(path))
    tok = anytok.load(str(path))
    assert tok.encode("a b a") == ref.encode("a b a").ids == [0, 1, 0]
    with pytest.raises(Exception, match="Missing \\[UNK\\] token"):
        ref.encode("a c")
    with pytest.raises(ValueError, match="Missing \\[UNK\\] token"):
        tok.encode("a c")
    with pytest.raises(ValueError, match="Missing \\[UNK\\] token"):
        tok.encode_with_offsets("a c")


def test_missing_unk_token_field_and_untyped_model(tmp_path):
    path = tmp_path / "tokenizer.json"
    cfg = _config({"a": 0, "b": 1})
    path.write_text(json.dumps(cfg))
    with pytest.raises(Exception, match="missing field `unk_token`"):
        HFTokenizer.from_file(str(path))
    with pytest.raises(ValueError, match="missing field `unk_token`"):
        anytok.load(str(path))
    # Without "type" (older files) a dict vocab and no merges or prefix is a WordLevel.
    cfg = _config({"a": 0, "b": 1, "?": 2}, unk_token="?")
    del cfg["model"]["type"]
    path.write_text(json.dumps(cfg))
    ref, tok = HFTokenizer.from_file(str(path)), anytok.load(str(path))
    assert tok.encode("b a x") == ref.encode("b a x").ids == [1, 0, 2]


def test_atok_round_trip(trained, tmp_path, corpora):
    # anytok's own file keeps the vocabulary as a column; the reloaded tokenizer is the same.
    path, ref = trained["bert"]
    tok = anytok.load(str(path))
    anytok.save(tok, str(tmp_path / "words.atok"))
    again = anytok.load(str(tmp_path / "words.atok"))
    for text in _lines(corpora["en"], TRAIN_LINES, 50):
        assert again.encode(text, add_special_tokens=True) == ref.encode(text).ids
