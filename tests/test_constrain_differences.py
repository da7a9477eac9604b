"""The last differences from llguidance 1.9.1 (issue 47), each minimal case walked against it.

* JSON Schema: the order of merged object properties follows where `properties` stands
  relative to `anyOf`/`oneOf` in the parent (inline option or `$ref` alike);
  `{"const": "a", "enum": ["a"]}` is the intersection of both.
* Lark: `!?rule` (keep-all-tokens and inline markers together: no effect on the language).
* Refusals name what is unsupported: look-arounds `(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)` (where
  llguidance says "look-around ... is not supported"), template usage `sep{x, ","}`
  (llguidance: "template usage not supported yet").
"""

from __future__ import annotations

import random

import pytest
from llguidance import LLMatcher

from anytok import constrain
from conftest import anytok_encoding
from test_constrain import _lltokenizer, _ref_mask

NAME = "o200k_base"


def _walk(ours, ref, steps=10, seed=0):
    """Masks, accepting states and consumed tokens equal at each step of a seeded walk."""
    rng = random.Random(seed)
    for step in range(steps):
        assert ours.mask() == _ref_mask(NAME, ref), step
        assert ours.is_accepting() == ref.is_accepting()
        allowed = ours.allowed()
        if not allowed or ours.is_stopped():
            break
        t = rng.choice(allowed)
        assert ours.consume(t) and ref.consume_token(t)


def _accepts(m, tokens) -> bool:
    return all(m.consume(t) for t in tokens) and m.is_accepting()


def _ref_accepts(r, tokens) -> bool:
    return all(r.consume_token(t) for t in tokens) and r.is_accepting()


MERGED = [
    # properties before oneOf, the option a $ref: llguidance lists `a` first
    {"properties": {"a": {"type": "integer"}}, "required": ["a"], "oneOf": [{"$ref": "#/$defs/B"}],
     "$defs": {"B": {"properties": {"b": {"type": "integer"}}, "required": ["b"]}}},
    # anyOf before properties, the option inline: `b` first
    {"anyOf": [{"properties": {"b": {"type": "integer"}}, "required": ["b"]}],
     "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    # and the two other combinations
    {"oneOf": [{"$ref": "#/$defs/B"}], "properties": {"a": {"type": "integer"}}, "required": ["a"],
     "$defs": {"B": {"properties": {"b": {"type": "integer"}}, "required": ["b"]}}},
    {"properties": {"a": {"type": "integer"}}, "required": ["a"],
     "anyOf": [{"properties": {"b": {"type": "integer"}}, "required": ["b"]},
               {"properties": {"c": {"type": "string"}}, "required": ["c"]}]},
]


@pytest.mark.parametrize("i", range(len(MERGED)))
def test_merged_property_order(i):
    schema = MERGED[i]
    enc = anytok_encoding(NAME)
    lltok = _lltokenizer(NAME)

    def ref():
        r = LLMatcher(lltok, LLMatcher.grammar_from_json_schema(schema), log_level=0)
        assert not r.is_error(), r.get_error()
        return r

    _walk(constrain.json_schema(schema).matcher(enc), ref(), steps=12, seed=i)
    for text in ('{"a":1,"b":2}', '{"b":2,"a":1}', '{"a":1,"c":"x"}', '{"c":"x","a":1}'):
        toks = enc.encode(text)
        assert _accepts(constrain.json_schema(schema).matcher(enc), toks) == _ref_accepts(ref(), toks), text
    after = enc.encode('{"')
    ours = constrain.json_schema(schema).matcher(enc)
    r = ref()
    for t in after:
        assert ours.consume(t) and r.consume_token(t)
    assert ours.mask() == _ref_mask(NAME, r)


@pytest.mark.parametrize("schema", [{"const": "a", "enum": ["a"]}, {"enum": ["a", "b", 1], "const": 1},
                                    {"const": {"x": 1}, "enum": [{"x": 1}, 2]}, {"const": "a", "enum": ["b"]}])
def test_const_with_enum(schema):
    enc = anytok_encoding(NAME)
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    if ref.is_error():
        assert "nsatisfiable" in ref.get_error()
        with pytest.raises(constrain.ConstraintError, match="unsatisfiable"):
            constrain.json_schema(schema)
        return
    _walk(constrain.json_schema(schema).matcher(enc), ref)


def test_keep_and_inline_rule_markers():
    text = 'start: x y\n!?x: "a" | "b"\n?y: "c" | "d"\n'
    enc = anytok_encoding(NAME)
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_lark(text), log_level=0)
    assert not ref.is_error(), ref.get_error()
    _walk(constrain.grammar(text).matcher(enc), ref)
    bad = 'start: y\n?!y: "c"\n'  # the other order: llguidance refuses it
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_lark(bad), log_level=0)
    assert ref.is_error()
    with pytest.raises(constrain.GrammarSyntaxError):
        constrain.grammar(bad)


@pytest.mark.parametrize("pattern", ["a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b"])
def test_look_arounds_named(pattern):
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_regex(pattern), log_level=0)
    assert ref.is_error() and "look-around" in ref.get_error()
    with pytest.raises(constrain.UnsupportedFeatureError, match="look-around") as e:
        constrain.regex(pattern)
    assert e.value.feature == "look-around assertions"
    with pytest.raises(constrain.UnsupportedFeatureError, match="look-around"):
        constrain.json_schema({"type": "string", "pattern": pattern})
    with pytest.raises(constrain.UnsupportedFeatureError, match="look-around"):
        constrain.grammar(f"start: /{pattern}/")


def test_template_usage_named():
    text = 'start: sep{"a", ","}\nsep: "x"\n'
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_lark(text), log_level=0)
    assert ref.is_error() and "template usage not supported" in ref.get_error()
    with pytest.raises(constrain.GrammarSyntaxError, match="template usage"):
        constrain.grammar(text)
