"""A SentencePiece `.model` as Hugging Face `tokenizers` runs it after transformers converts it.

    .model bytes -> sentencepiece.model_proto (pure Python) -> tokenizer.json dict, built as
    transformers 5.23 builds it -> anytok.hf.Tokenizer.from_str

Two conversions, the ones transformers 5.23.0 actually performs on a `.model` file:

* `"unigram"` (Unigram models): `convert_slow_tokenizer.SpmConverter`, the generic converter
  (T5, ALBERT, XLNet and the others start from it): a Unigram model of the pieces and scores
  (no byte fallback), the normalizer Precompiled (the model's charsmap, when it has one) +
  Strip(right) + Replace(" {2,}" -> "▁"), Metaspace(prepend "always") as pre-tokenizer and
  decoder, control and user-defined pieces as added tokens (control ones special).
* `"llama"` (BPE models): `LlamaTokenizer` (`TokenizersBackend`) loading a folder holding only
  `tokenizer.model`: a BPE model with byte fallback whose vocabulary is the pieces in id order
  and whose merges are transformers' `generate_merges` of that vocabulary (every split of a
  piece into two pieces, ordered by the merged piece's id); no normalizer; Metaspace(prepend
  "first", no split); the decoder Replace + ByteFallback + Fuse + Strip(1 leading space);
  `<unk>`, `<s>`, `</s>` (LlamaTokenizer's defaults, not the model's names), control and
  user-defined pieces as added tokens; a TemplateProcessing that adds nothing.  (transformers' own LlamaConverter / SpmConverter fail on BPE models in 5.23.0.)

`tests/test_hf_spm.py` checks the produced tokenizer.json against transformers' for every fixture
model, and ids and offsets against the real `tokenizers` on corpus samples.  These are
transformers' conversions, not sentencepiece: where they differ from sentencepiece's own ids
(the generic converter's whitespace and charsmap handling, added tokens matched in the text),
they give transformers' result; `anytok.sentencepiece` gives sentencepiece's.
"""

from __future__ import annotations

import base64
import os
from typing import Any

from ..errors import UnsupportedTokenizerError
from ..sentencepiece.model_proto import BPE, CONTROL, UNIGRAM, USER_DEFINED, MODEL_TYPE_NAMES, ModelProto, parse_model_proto

__all__ = ["KINDS", "spm_tokenizer_json"]

KINDS = ("unigram", "llama")
SPACE = "\u2581"


def _added(i: int, content: str, special: bool) -> dict[str, Any]:
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def _metaspace(prepend_scheme: str, split: bool) -> dict[str, Any]:
    return {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": prepend_scheme, "split": split}


def _unigram(proto: ModelProto) -> dict[str, Any]:
    added = [_added(i, p, t == CONTROL) for i, (p, t) in enumerate(zip(proto.pieces, proto.types))
             if t in (CONTROL, USER_DEFINED)]
    rules = [{"type": "Strip", "strip_left": False, "strip_right": True},
             {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": SPACE}]
    charsmap = proto.normalizer_spec.precompiled_charsmap
    if charsmap:
        rules.insert(0, {"type": "Precompiled",
                         "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")})
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": rules},
        "pre_tokenizer": _metaspace("always", True),
        "post_processor": None,
        "decoder": _metaspace("always", True),
        "model": {"type": "Unigram", "unk_id": proto.trainer_spec.unk_id,
                  "vocab": [[p, s] for p, s in zip(proto.pieces, proto.scores)], "byte_fallback": False},
    }


def generate_merges(vocab: dict[str, int]) -> list[list[str]]:
    """transformers' `generate_merges(vocab)` (no scores): every split of a piece into two
    pieces of the vocabulary, ordered by the merged piece's id, then by the left part's length
    (the vocabulary's id order stands in for the score)."""
    merges = []
    for piece, rank in vocab.items():
        local = [(piece[:k], piece[k:]) for k in range(1, len(piece))
                 if piece[:k] in vocab and piece[k:] in vocab]
        local.sort(key=lambda lr: (vocab[lr[0]], vocab[lr[1]]))
        merges.extend((rank, len(l), len(r), l, r) for l, r in local)
    # sorted() is stable: pairs of one piece keep the order above where lengths tie.
    merges = sorted(merges, key=lambda m: m[:3])
    return [[l, r] for _, _, _, l, r in merges]


def _llama(proto: ModelProto) -> dict[str, Any]:
    vocab: dict[str, int] = {}
    for i, p in enumerate(proto.pieces):
        vocab[p] = i  # a repeated piece keeps its last id, as a Python dict built this way does
    # LlamaTokenizer's own defaults, whatever the model's trainer_spec names
    specials = {}
    for name in ("<unk>", "<s>", "</s>"):
        if name not in vocab:
            raise UnsupportedTokenizerError(
                f"pieces: no piece {name!r}; transformers' LlamaTokenizer would add it as a new token"
                " (not supported)")
        specials[vocab[name]] = name
    added = {i: _added(i, p, True) for i, p in specials.items()}
    for i, (p, t) in enumerate(zip(proto.pieces, proto.types)):
        if t in (CONTROL, USER_DEFINED) and i not in added:
            added[i] = _added(i, p, t == CONTROL)
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added[i] for i in sorted(added)],
        "normalizer": None,
        "pre_tokenizer": _metaspace("first", False),
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": generate_merges(vocab)},
    }


def _read(source) -> bytes:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    with open(os.fspath(source), "rb") as f:
        return f.read()


def spm_tokenizer_json(source, kind: str | None = None) -> dict[str, Any]:
    """The tokenizer.json (as a dict) transformers 5.23 makes of the `.model` `source` (a path
    or the file's bytes).  `kind`: "unigram" or "llama" (see the module docstring); by default
    "unigram" for a Unigram model and "llama" for a BPE model.  UnsupportedTokenizerError for
    another combination (transformers converts neither CHAR nor WORD models)."""
    proto = parse_model_proto(_read(source))
    model_type = proto.trainer_spec.model_type
    if kind is None:
        kind = {UNIGRAM: "unigram", BPE: "llama"}.get(model_type)
        if kind is None:
            raise UnsupportedTokenizerError(
                f"trainer_spec.model_type: transformers converts Unigram and BPE models, not "
                f"{MODEL_TYPE_NAMES.get(model_type, model_type)}")
    if kind == "unigram":
        if model_type != UNIGRAM:
            raise UnsupportedTokenizerError(
                "trainer_spec.model_type: the unigram conversion needs a Unigram model"
                f" (this one is {MODEL_TYPE_NAMES.get(model_type, model_type)})")
        return _unigram(proto)
    if kind == "llama":
        if model_type != BPE:
            raise UnsupportedTokenizerError(
                "trainer_spec.model_type: the llama conversion needs a BPE model"
                f" (this one is {MODEL_TYPE_NAMES.get(model_type, model_type)})")
        return _llama(proto)
    raise ValueError(f"kind must be one of {KINDS} or None, not {kind!r}")
