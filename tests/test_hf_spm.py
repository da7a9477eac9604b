"""anytok.hf on SentencePiece `.model` files, against transformers 5.23.0 + the real `tokenizers`
0.23.3 (both in the main .venv):

* `anytok.hf.Tokenizer.from_spm(path)` (anytok.hf.spm) must write the tokenizer.json that
  transformers makes of the same file — `SpmConverter` for the Unigram fixtures,
  `LlamaTokenizer.from_pretrained(folder holding tokenizer.model)` for the BPE ones — and give
  the same ids, tokens and offsets as `tokenizers` running transformers' conversion, on seeded
  samples of the four corpora;
* `implementations.SentencePieceUnigramTokenizer.from_spm` the same as tokenizers' own.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import warnings
from types import SimpleNamespace

import pytest

from conftest import FULL
from test_sentencepiece import (  # noqa: F401  (fixtures)
    MODELS, UNIGRAM_MODELS, corpus_sample, models_dir, rewrite_model, trained_charsmaps, variants,
)

import anytok.hf as ahf
from anytok.hf.spm import spm_tokenizer_json
from anytok.errors import UnsupportedTokenizerError

_refs: dict[str, object] = {}


def transformers_tokenizer(path, tmp_root, unigram=None):
    """The real `tokenizers.Tokenizer` transformers 5.23.0 makes of the `.model` at `path`."""
    key = str(path)
    if unigram is None:
        unigram = path.name in UNIGRAM_MODELS
    if key not in _refs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if unigram:
                from transformers.convert_slow_tokenizer import SpmConverter

                _refs[key] = SpmConverter(SimpleNamespace(vocab_file=str(path))).converted()
            else:
                from transformers import LlamaTokenizer

                folder = tmp_root / path.name
                folder.mkdir(exist_ok=True)
                shutil.copy(path, folder / "tokenizer.model")
                _refs[key] = LlamaTokenizer.from_pretrained(str(folder)).backend_tokenizer
    return _refs[key]


@pytest.fixture(params=MODELS)
def pair(request, models_dir, tmp_path_factory):
    path = models_dir / request.param
    ref = transformers_tokenizer(path, tmp_path_factory.mktemp("spm"))
    return ref, ahf.Tokenizer.from_spm(str(path)), path


def test_tokenizer_json_is_transformers(pair):
    ref, _, path = pair
    # Compared as parsed JSON: scores are float32 values, exact in both.
    assert spm_tokenizer_json(path) == json.loads(ref.to_str())
    assert spm_tokenizer_json(path.read_bytes()) == spm_tokenizer_json(str(path))


def compare(ref, ours, text: str) -> None:
    for special in (False, True):
        a = ref.encode(text, add_special_tokens=special)
        b = ours.encode(text, add_special_tokens=special)
        assert b.ids == a.ids, text[:200]
        assert b.tokens == a.tokens, text[:200]
        assert b.offsets == a.offsets, text[:200]
    assert ours.decode(a.ids) == ref.decode(a.ids)


SAMPLE_LINES = 300 if FULL else 25


@pytest.mark.parametrize("corpus", ["en", "code", "zh", "ja"])
def test_corpus_ids_and_offsets(pair, corpus, corpora):
    ref, ours, _ = pair
    for text in corpus_sample(corpora[corpus], f"hf-spm-{corpus}", SAMPLE_LINES, 20000 if FULL else 3000):
        compare(ref, ours, text)


EDGE = ["", " ", "  leading and  double  spaces  ", "Héllo wörld ①ﬁ Ａ\u0301", "tabs\tand\nnewlines\r\n",
        "😀😀 emoji 👍🏽", "<s> </s> <unk> [INST] hi [/INST] [TOOL_CALLS]", "▁▁ ▁x", "\u3000x\u00a0y", "a" * 300]


def test_edge_texts(pair):
    ref, ours, _ = pair
    for text in EDGE:
        compare(ref, ours, text)
    a = ref.encode("Hello world", "a pair")
    b = ours.encode("Hello world", "a pair")
    assert (b.ids, b.type_ids, b.offsets) == (a.ids, a.type_ids, a.offsets)


# Variants of test_sentencepiece.py that change what the conversions read: piece types
# (user-defined / control pieces become added tokens), byte fallback, no charsmap.
VARIANTS = ["uni_user_defined", "uni_control", "uni_byte_fallback", "uni_no_charsmap", "uni_nmt_nfkc_cf",
            "bpe_user_defined", "bpe_unused"]


@pytest.mark.parametrize("name", VARIANTS)
def test_variants(name, variants, tmp_path):
    path = tmp_path / f"{name}.model"
    path.write_bytes(variants[name])
    (tmp_path / "ref").mkdir()
    ref = transformers_tokenizer(path, tmp_path / "ref", unigram=name.startswith("uni"))
    assert spm_tokenizer_json(path) == json.loads(ref.to_str())
    ours = ahf.Tokenizer.from_spm(path.read_bytes())
    for text in EDGE + ["the thing is singing and the ingredients were a  e  s"]:
        compare(ref, ours, text)


def test_llama_special_names(models_dir, tmp_path):
    # LlamaTokenizer takes <unk>, <s>, </s> whatever the model's trainer_spec calls them.
    data = (models_dir / "tokenizer.model.v1").read_bytes()
    path = tmp_path / "renamed.model"
    path.write_bytes(rewrite_model(data, trainer={45: (2, b"<s>"), 46: (2, "\u2581the".encode()), 47: (2, b"<unk>")}))
    (tmp_path / "ref").mkdir()
    ref = transformers_tokenizer(path, tmp_path / "ref", unigram=False)
    assert spm_tokenizer_json(path) == json.loads(ref.to_str())


def test_unsupported(models_dir):
    with pytest.raises(UnsupportedTokenizerError, match="BPE model"):
        spm_tokenizer_json(models_dir / "test_model.model", "llama")
    with pytest.raises(UnsupportedTokenizerError, match="Unigram model"):
        spm_tokenizer_json(models_dir / "tokenizer.model.v1", "unigram")
    with pytest.raises(ValueError, match="kind"):
        spm_tokenizer_json(models_dir / "tokenizer.model.v1", "t5")


@pytest.mark.parametrize("name", UNIGRAM_MODELS)
def test_implementations_from_spm(name, models_dir, monkeypatch, corpora):
    # tokenizers' from_spm imports a module `sentencepiece_model_pb2`; transformers ships one.
    from transformers.convert_slow_tokenizer import import_protobuf
    from tokenizers.implementations import SentencePieceUnigramTokenizer as Real

    monkeypatch.setitem(sys.modules, "sentencepiece_model_pb2", import_protobuf())
    path = str(models_dir / name)
    real = Real.from_spm(path)
    ours = ahf.implementations.SentencePieceUnigramTokenizer.from_spm(path)
    assert json.loads(ours.to_str()) == json.loads(real.to_str())
    rng = random.Random(name)
    for key in ("en", "ja"):
        for line in rng.sample(corpora[key].splitlines(), 20) + EDGE:
            a, b = real.encode(line), ours.encode(line)
            assert (b.ids, b.offsets) == (a.ids, a.offsets), line
    with pytest.raises(Exception, match="Unigram"):
        ahf.implementations.SentencePieceUnigramTokenizer.from_spm(str(models_dir / "tokenizer.model.v1"))
    with pytest.raises(Exception, match="Unigram"):
        Real.from_spm(str(models_dir / "tokenizer.model.v1"))
