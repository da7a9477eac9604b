"""constrain.json_schema's compile budget and its invariants on large schemas, beside llguidance.

* A schema whose compilation would blow up (anyOf options distributed over 20 allOf members:
  2**20 merged schemas) is refused with an UnsupportedFeatureError naming the compile budget —
  llguidance 1.9.1 refuses it too ("schema too large") — and the expression budget (memory)
  is enforced the same way.
* Large schemas that llguidance compiles compile here without any recursion limit: objects
  with hundreds and thousands of properties (the properties were once chained by recursion),
  and integer bounds up
  to 2**53 - 1 (their range regex once had 2**16 branches); masks equal llguidance's, never
  empty while the matcher is not stopped.
"""

from __future__ import annotations

import importlib

import pytest
from llguidance import LLMatcher

from anytok import constrain
from test_constrain import _lltokenizer, anytok_encoding
from test_constrain_json import _ref_mask_o200k

J = importlib.import_module("anytok.constrain.json.compile")

BLOW_UP = {"allOf": [{"anyOf": [{"type": "object", "properties": {f"a{i}": {"type": "integer"}}},
                                {"type": "object", "properties": {f"b{i}": {"type": "string"}}}]}
                     for i in range(20)]}


def _ref(schema):
    return LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_json_schema(schema), log_level=0)


def test_blow_up_refused_with_the_budget_named():
    ref = _ref(BLOW_UP)
    assert ref.is_error() and "too large" in ref.get_error()
    with pytest.raises(constrain.UnsupportedFeatureError, match="compile budget"):
        constrain.json_schema(BLOW_UP)


def test_expression_budget(monkeypatch):
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string", "pattern": f"^x{i}[a-z]{{2,9}}$"}
                                               for i in range(40)}}
    es, _ = J.compile_schema(schema)
    monkeypatch.setattr(J, "EXPRESSION_BUDGET", len(es.exprs) // 2)
    with pytest.raises(constrain.UnsupportedFeatureError, match="compile budget"):
        constrain.json_schema(schema)


def _walk_text(schema, text):
    enc = anytok_encoding("o200k_base")
    ref = _ref(schema)
    assert not ref.is_error(), ref.get_error()
    ours = constrain.json_schema(schema).matcher(enc)
    tokens = enc.encode(text)
    for i, t in enumerate(tokens):
        if i < 4 or i == len(tokens) - 1:
            mask = ours.mask()
            assert mask == _ref_mask_o200k(ref), (text, i)
            assert any(mask)
        assert ours.consume(t) == ref.consume_token(t) == True  # noqa: E712
    assert ours.is_accepting() == ref.is_accepting() == True  # noqa: E712
    assert ours.mask() == _ref_mask_o200k(ref)


def _many(n):
    return {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(n)},
            "required": [f"p{n - 1}"], "additionalProperties": False}


def test_hundreds_of_properties():
    _walk_text(_many(400), '{"p7":1,"p398":2,"p399":3}')


def test_thousands_of_properties():
    """3,000 properties: llguidance compiles the schema but stops at the first token (its
    Earley row limit, 2,000 items); anytok, with its lexer fuel raised, keeps its masks
    non-empty and the instance (valid by construction: named properties in order, the required
    one last) passes."""
    schema = _many(3000)
    ref = _ref(schema)
    assert not ref.is_error()
    assert not ref.consume_token(anytok_encoding("o200k_base").encode('{"')[0])
    assert "max is 2000" in ref.get_error()
    enc = anytok_encoding("o200k_base")
    # a step among 3,000 keys can look at all of them per byte: the lexer fuel raised
    ours = constrain.json_schema(schema, limits=constrain.Limits(step_lexer_fuel=50_000_000)).matcher(enc)
    for t in enc.encode('{"p7":1,"p2998":2,"p2999":3}'):
        assert any(ours.mask()) and ours.consume(t)
    assert ours.is_accepting()


@pytest.mark.parametrize("schema,text", [
    ({"type": "integer", "minimum": 0, "maximum": 9007199254740991}, "9007199254740991"),
    ({"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991}, "-900719925474099"),
    ({"type": "number", "minimum": -9007199254740991, "maximum": 9007199254740991}, "9007199254740990.5"),
])
def test_wide_integer_bounds(schema, text):
    _walk_text(schema, text)


def test_merge_fixpoint_enum_beside_array_keywords():
    """`{"$ref": <an enum>, "minItems": 2}` merged is an enum beside array keywords (the
    compiler once looped into Python's recursion limit on it): the array constant is kept
    when it satisfies them, the string constant is left be, as llguidance does."""
    schema = {"$ref": "#/$defs/e", "minItems": 2, "maxItems": 2,
              "$defs": {"e": {"enum": ["A", [1, 2]]}}}
    _walk_text(schema, "[1,2]")
    _walk_text(schema, '"A"')


def test_array_keywords_beside_string_enum_as_llguidance():
    """...with scalar constants only, the array keywords do nothing (as in llguidance)."""
    schema = {"$ref": "#/$defs/e", "minItems": 2, "maxItems": 2,
              "$defs": {"e": {"type": "string", "enum": ["A", "B"]}}}
    _walk_text(schema, '"B"')
