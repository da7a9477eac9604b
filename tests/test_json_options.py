"""`x-guidance` options of constrain.json_schema against llguidance 1.9.1 with the same options.

For each option a few schemas, each walked with seeded random token walks (test_constrain_json's
walk: masks, forced tokens, accepting/stopped states and a probe token compared at every step,
then a rollback and replay) on o200k_base and cl100k_base, the schema carrying the same
`"x-guidance"` object for both; plus texts fed byte by byte whose verdicts both must share.
Options anytok refuses (named `UnsupportedFeatureError`) are listed at the end.
"""

from __future__ import annotations

import json

import pytest
from llguidance import LLMatcher

from anytok import constrain
from test_constrain import _lltokenizer, anytok_encoding
from test_constrain_json import _walk

OBJ = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 8}, "n": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b c"]}, "maxItems": 3},
    "sub": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "boolean"}}}},
    "required": ["name"]}
ARR = {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "null"}}]}}
ANY = {}
ONE_OF = {"type": "object", "properties": {"v": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}},
          "required": ["v"]}


def _with(schema, xg):
    return dict(schema, **{"x-guidance": xg})


OPTIONS = [
    {"whitespace_flexible": False},
    {"whitespace_pattern": " *"},
    {"whitespace_pattern": "[ \\t]+"},
    {"whitespace_pattern": "\\n?", "whitespace_flexible": False},
    {"whitespace_pattern": "(  )+"},
    {"item_separator": ", "},
    {"item_separator": ",\\n", "key_separator": ": "},
    {"item_separator": ", *", "whitespace_flexible": False},
    {"key_separator": "[ ]*:[ ]*", "whitespace_flexible": False},
    {"key_separator": ": ", "item_separator": ", ", "whitespace_flexible": False},
    {"coerce_one_of": True},
    {"lenient": True},
]
SCHEMAS = [OBJ, ARR, ANY, ONE_OF]
WALKS = [(i, j, name) for i, o in enumerate(OPTIONS) for j in range(len(SCHEMAS))
         for name in ("o200k_base", "cl100k_base")
         if (j != 3 or o.get("coerce_one_of") or o.get("lenient")) and (i + j) % 2 == (name == "cl100k_base")]


@pytest.mark.parametrize("i,j,name", WALKS, ids=[f"{json.dumps(OPTIONS[i])}-{j}-{n}" for i, j, n in WALKS])
def test_options_walk_matches_llguidance(i, j, name):
    schema = _with(SCHEMAS[j], OPTIONS[i])
    for seed in range(3):
        ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_json_schema(schema), log_level=0)
        assert not ref.is_error(), ref.get_error()
        ours = constrain.json_schema(schema).matcher(anytok_encoding(name))
        _walk(name, json.dumps(schema)[:120], ours, ref, 28, f"{name}|{i}|{j}|{seed}")


LENIENT = [  # what llguidance refuses by default and ignores (with a warning) when lenient
    {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"not": {"type": "string"}}}},
    {"type": "string", "format": "no-such-format"},
    {"type": "object", "properties": {"a": {}, "b": {"type": "integer"}}, "minProperties": 2},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "maxProperties": 1},
    {"oneOf": [{"type": "integer"}, {"minimum": 3}]},
]


@pytest.mark.parametrize("k", range(len(LENIENT)))
def test_lenient_matches_llguidance(k):
    schema = LENIENT[k]
    tok = _lltokenizer("o200k_base")
    strict = LLMatcher(tok, LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert strict.is_error()
    with pytest.raises((constrain.UnsupportedFeatureError, constrain.ConstraintError)):
        constrain.json_schema(schema)
    schema = _with(schema, {"lenient": True})
    for seed in range(3):
        ref = LLMatcher(tok, LLMatcher.grammar_from_json_schema(schema), log_level=0)
        assert not ref.is_error(), ref.get_error()
        ours = constrain.json_schema(schema).matcher(anytok_encoding("o200k_base"))
        _walk("o200k_base", json.dumps(schema), ours, ref, 24, f"lenient|{k}|{seed}")


TEXTS = [
    ({"item_separator": ", "}, ["[1, 2]", "[1,2]", "[1 ,  2]", "[ 1, 2 ]", "[1,\n2]"]),
    ({"item_separator": ", ", "whitespace_flexible": False}, ["[1, 2]", "[1,2]", "[1 , 2]"]),
    ({"item_separator": ", *", "whitespace_flexible": False}, ["[1,2]", "[1,   2]", "[1, *2]"]),
    ({"whitespace_pattern": " *"}, ["[1, 2]", "[1,2]", "[1,\n2]", " [1]", "[1] ", "[ 1 ,  2 ]"]),
    ({"whitespace_pattern": "(ab)"}, []),  # refused: letters
    ({"whitespace_pattern": "\n", "whitespace_flexible": False}, ["[1,\n2]", "[1,\n\n2]", "[1, 2]"]),
    ({"whitespace_flexible": False}, ["[1,2]", "[1, 2]", "[\n1]"]),
]


@pytest.mark.parametrize("k", range(len(TEXTS)))
def test_option_texts_as_llguidance(k):
    from test_constrain_json import _accepts

    xg, texts = TEXTS[k]
    schema = _with({"type": "array", "items": {"type": "integer"}}, xg)
    if not texts:
        with pytest.raises(constrain.UnsupportedFeatureError, match="x-guidance"):
            constrain.json_schema(schema)
        return
    ours = constrain.json_schema(schema)
    tok = _lltokenizer("cl100k_base")
    for text in texts:
        ref = LLMatcher(tok, LLMatcher.grammar_from_json_schema(schema), log_level=0)
        assert _accepts(ours, text) == _ref_accepts(ref, text), (xg, text)


def _ref_accepts(ref, text: str) -> str:
    from anytok.constrain.tokens import TokenTrie

    byte_token = {b[0]: t for t, b in TokenTrie.of(anytok_encoding("cl100k_base")).token_bytes.items() if len(b) == 1}
    for b in text.encode():
        if not ref.consume_token(byte_token[b]):
            return "no"
    return "yes" if ref.is_accepting() else "prefix"


@pytest.mark.parametrize("xg", [
    {"json_allow_general_unicode_escapes": True},
    {"json_allowed_escapes": "nrbtf\\\""},
    {"whitespace_pattern": "\\s+"},  # Unicode White_Space: beyond ASCII
    {"item_separator": "|x"},  # a letter: llguidance's greedy lexing would differ
    {"item_separator": " , "},  # starts with a whitespace byte
])
def test_refused_options_named(xg):
    schema = _with({"type": "array"}, xg)
    assert not LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_json_schema(schema),
                         log_level=0).is_error()
    with pytest.raises(constrain.UnsupportedFeatureError, match="x-guidance"):
        constrain.json_schema(schema)


@pytest.mark.parametrize("xg", [{"no_such_option": 1}, {"lenient": "yes"}, {"item_separator": 1}])
def test_invalid_options_rejected(xg):
    schema = _with({"type": "array"}, xg)
    assert LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_json_schema(schema), log_level=0).is_error()
    with pytest.raises(constrain.ConstraintError):
        constrain.json_schema(schema)
