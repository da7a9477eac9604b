"""Helpers for the Hugging Face tokenizer.json tests: fixtures, both tokenizers, comparisons."""

from __future__ import annotations

import functools
import json

from conftest import ROOT  # noqa: F401  (puts build_scripts on sys.path)

import fetch_models  # noqa: E402

# Real models (build_scripts/fetch/fetch_models.py) and what each exercises.
MODELS = {
    "llama3": "byte-level BPE, ignore_merges, Split regex with \\p{N}{1,3}, 256 specials",
    "qwen3": "byte-level BPE, NFC, non-special added tokens",
    "deepseek_v3": "byte-level BPE, three Split regexes, normalized added tokens",
    "gemma3": "SentencePiece-style BPE with byte fallback, 6,415 added tokens (\\n, \\t, ▁ runs)",
    "llama2": "SentencePiece-style BPE with byte fallback, Prepend + Replace, no pre-tokenizer",
    "minilm": "WordPiece, BertNormalizer, BertPreTokenizer, TemplateProcessing",
}


def model_path(name: str):
    return fetch_models.path(f"{name}.tokenizer.json")


@functools.lru_cache(maxsize=None)
def hf_tokenizer(name: str):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_path(name)))
    tok.no_truncation()
    tok.no_padding()
    return tok


@functools.lru_cache(maxsize=None)
def anytok_tokenizer(name: str):
    from anytok.pipeline.hf_json import load_tokenizer_json

    return load_tokenizer_json(model_path(name))


def hf_from_json(cfg: dict):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(json.dumps(cfg))
    tok.no_truncation()
    tok.no_padding()
    return tok


def first_difference(a: list, b: list) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def assert_same_ids(at, hf, text: str, add_special_tokens: bool) -> list[int]:
    expected = hf.encode(text, add_special_tokens=add_special_tokens).ids
    got = at.encode(text, add_special_tokens=add_special_tokens)
    if got != expected:
        i = first_difference(got, expected)
        raise AssertionError(
            f"ids differ at {i} (anytok {len(got)} ids, tokenizers {len(expected)}): "
            f"anytok {got[max(0, i - 3):i + 4]} {[at.id_to_token(x) for x in got[max(0, i - 3):i + 4]]}, "
            f"tokenizers {expected[max(0, i - 3):i + 4]} {[hf.id_to_token(x) for x in expected[max(0, i - 3):i + 4]]}"
        )
    return expected


def assert_same_decode(at, hf, ids: list[int]) -> None:
    for skip in (False, True):
        assert at.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip), skip


def narrow(at, hf, items: list[str], add_special_tokens: bool = False) -> str | None:
    """The first item that encodes differently on its own (None if each alone agrees)."""
    for s in items:
        if at.encode(s, add_special_tokens=add_special_tokens) != hf.encode(s, add_special_tokens=add_special_tokens).ids:
            return s
    return None
