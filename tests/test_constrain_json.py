"""anytok.constrain.json_schema and .grammar against llguidance 1.9.1: the same masks, step by step.

As in test_constrain.py: a seeded random walk samples an allowed token (preferring tokens that
are not only whitespace, and often ones with JSON punctuation, so that walks get through
strings and objects and sometimes reach the end), consumes it in anytok's matcher and in
llguidance's `LLMatcher` (default JSON Schema settings), and compares at every step the mask,
the forced tokens, accepting and stopped states and a random probe token; then rolls back and
replays.  Invalid schemas get a `ConstraintError`, features anytok lacks an
`UnsupportedFeatureError` naming them.
"""

from __future__ import annotations

import functools
import json
import random

import pytest

from llguidance import LLMatcher

from anytok import constrain
from anytok.constrain.tokens import TokenTrie
from test_constrain import _lltokenizer, anytok_encoding
from test_constrain import _walk as walk

SCHEMAS = [
    {"type": "integer"},
    {"type": "number"},
    {"type": "string"},
    {"type": "boolean"},
    {},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]},
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10},
                                      "age": {"type": "integer", "minimum": 0, "maximum": 150}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "object", "properties": {"x": {"type": "object", "properties": {
        "y": {"type": "array", "items": {"type": "integer"}}}, "required": ["y"]}},
     "required": ["x"], "additionalProperties": False},
    {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4},
    {"type": "array", "items": {"type": "integer", "minimum": -20, "maximum": 2000}, "minItems": 1},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "items": {"type": "null"}},
    {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "boolean"}], "items": False},
    {"type": "array", "items": [{"type": "integer"}], "additionalItems": {"type": "boolean"}, "minItems": 2},
    {"enum": ["red", "green", "blue", None, 42]},
    {"const": {"a": [1, "x", True]}},
    {"type": "string", "enum": ["a\nb", 'q"', "c", 1]},
    {"type": "integer", "minimum": -5, "maximum": 5},
    {"type": "integer", "exclusiveMinimum": 100},
    {"type": "integer", "maximum": -7},
    {"type": "integer", "minimum": 13, "maximum": 987654},
    {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3,5}$"},
    {"type": "string", "pattern": "ab+c"},
    {"type": "string", "pattern": "^\\d+(\\.\\d\\d)?$"},
    {"type": "string", "format": "date"},
    {"type": "string", "format": "date-time"},
    {"type": "string", "format": "uuid"},
    {"type": "string", "format": "ipv4"},
    {"type": "string", "format": "hostname"},
    {"type": "string", "minLength": 3, "maxLength": 6},
    {"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "properties": {
        "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "required": ["v"], "additionalProperties": False}}},
    {"type": "object", "properties": {"p": {"$ref": "#/definitions/pt"}, "q": {"$ref": "#/definitions/pt"}},
     "definitions": {"pt": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}}},
    {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "array", "items": {"type": "boolean"}}]},
    {"anyOf": [
        {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
         "required": ["kind", "x"], "additionalProperties": False},
        {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "string"}},
         "required": ["kind"], "additionalProperties": False}]},
    {"oneOf": [{"type": "string"}, {"type": "null"}]},
    {"x-guidance": {"whitespace_flexible": False, "coerce_one_of": True},
     "type": "object", "properties": {"n": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
                                      "l": {"type": "array", "items": {"type": "string"}}}},
    {"type": ["string", "null"]},
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
    {"type": "object", "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"},
                                                                         "maxItems": 3}, "meta": {}},
     "required": ["id"]},
    {"type": "object", "properties": {"é": {"type": "string"}, 'a"b': {"type": "boolean"}}, "required": ["é"]},
    {"type": "object", "properties": {"o1": {"type": "integer"}, "o2": {"type": "integer"}, "o3": {"type": "null"}},
     "additionalProperties": False},
    {"allOf": [{"type": "object", "properties": {"z": {"type": "number"}}, "title": "z"}]},
    {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"],
     "anyOf": [{"properties": {"x": {"type": "integer"}}, "required": ["x"]},
               {"properties": {"y": {"type": "boolean"}}, "required": ["y"]}]},
    {"allOf": [{"$ref": "#/$defs/A"}, {"properties": {"b": {"type": "integer"}}, "required": ["b"]}],
     "properties": {"q": {"type": "null"}},
     "$defs": {"A": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}},
    {"type": "object", "properties": {"a": False, "b": {"type": "integer"}}},
    {"type": "number", "minimum": -2.5, "exclusiveMaximum": 100},
    {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 1.25}},
    {"properties": {"a": {"type": "integer"}}, "minimum": 3, "maxLength": 4},
    {"type": "integer", "minimum": 1.5, "exclusiveMaximum": 1000000},
    {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z][a-z]+$",
                                               "minLength": 2, "maxLength": 5},
                                      "ip": {"type": "string", "format": "ipv4", "pattern": "^10\\."}},
     "required": ["code", "ip"]},
    {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2, "maxProperties": 3},
    {"type": "array", "items": {"type": "string", "pattern": "^[\\x00-\\x1f]?[^\\n]{0,3}$"}},
    {"type": "array", "items": {"type": "string", "format": "email"}, "maxItems": 2},
    {"type": "string", "format": "duration"},
    {"type": "array", "items": {"type": "integer", "multipleOf": 7, "maximum": 500}},
    {"type": "number", "multipleOf": 0.25, "exclusiveMinimum": -3, "maximum": 1000},
    {"type": "object", "properties": {"x": {"type": "integer"}},
     "patternProperties": {"^a": {"type": "integer"}, "^b": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "required": ["a1", "zz"], "patternProperties": {"^a": {"type": "boolean"}},
     "additionalProperties": {"type": "null"}},
    {"type": "array", "items": {"enum": ["ab", "abcd", "x\ny", "é", 1, 2.5, 7, 0.75], "maxLength": 3,
                                "multipleOf": 0.25}},
    {"type": "object", "properties": {"home": {"type": "string", "format": "uri"},
                                      "addr": {"type": "string", "format": "ipv6"}}, "required": ["home", "addr"]},
    {"oneOf": [{"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                "required": ["kind", "r"]},
               {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                "required": ["kind"], "additionalProperties": False}]},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}, "c": {"type": "null"}},
     "additionalProperties": False, "minProperties": 1},
    {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "object", "properties": {
        "k": {"type": "string"}}, "required": ["k"]}]}, "maxItems": 5},
    True,
    # allOf / anyOf / $ref next to other keywords, on every kind of schema: merged as llguidance
    {"allOf": [{"type": "string", "minLength": 1}, {"maxLength": 3}]},
    {"type": "string", "anyOf": [{"minLength": 2}, {"pattern": "x"}]},
    {"properties": {"last": {"allOf": [{"type": "string"}, {"maxLength": 4}]}, "n": {"type": "integer"}},
     "required": ["last"], "anyOf": [{"required": ["n"]}, {"title": "no n"}]},
    {"$ref": "#/$defs/s", "maxLength": 5, "$defs": {"s": {"type": "string", "minLength": 2}}},
    {"type": "integer", "allOf": [{"minimum": 3}, {"maximum": 50}, {"enum": [1, 5, 60, 7]}]},
    {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}},
     "oneOf": [{"properties": {"k": {"const": "a"}, "x": {"type": "integer"}}},
               {"properties": {"k": {"const": "b"}, "y": {"type": "boolean"}}, "required": ["y"]}]},
    {"type": "array", "items": {"type": "number"}, "allOf": [{"maxItems": 3}, {"items": {"maximum": 9}}]},
    {"oneOf": [{"type": ["string", "null"]}, {"type": "integer"}]},  # was a bare TypeError
    # `properties` before `allOf: [{$ref}]`: llguidance lists its own properties first
    # (JSONSchemaBench Github_hard---o73917)
    {"properties": {"b": {"type": "integer"}}, "required": ["a", "b"], "allOf": [{"$ref": "#/$defs/A"}],
     "$defs": {"A": {"type": "object", "properties": {"a": {"type": "string"}}}}},
]

# Lark grammars (the subset anytok implements).
GRAMMARS = [
    'start: "yes" | "no"\n',
    'start: greeting " " NAME "!"\ngreeting: "hello" | "hi"\nNAME: /[A-Z][a-z]+/\n',
    'start: expr\nexpr: term (("+" | "-") term)*\nterm: factor (("*" | "/") factor)*\n'
    'factor: NUMBER | "(" expr ")"\nNUMBER: /[0-9]+/\n%ignore /[ \\t]+/\n',
    'start: "[" [item ("," item)*] "]"\nitem: NUMBER | STRING | start\nNUMBER: /-?[0-9]+(\\.[0-9]+)?/\n'
    'STRING: /"[^"\\\\]*"/\n%ignore /[ \\n]+/\n',
    '// comment\nstart: a ~ 2..3 b?\na: "ab"i\nb: "c" | DIGITS\nDIGITS: /[0-9]{2,}/\n',
    'start: "x" start "y" | "z"\n',
    '%import common.WS\n%import common.SIGNED_NUMBER -> NUM\n%import common (ESCAPED_STRING, CNAME)\n'
    '%ignore WS\nstart: pair ("," pair)*\npair: CNAME "=" (NUM | ESCAPED_STRING)\n',
    '%import common.C_COMMENT\n%import common.WS_INLINE\n%ignore C_COMMENT\n%ignore WS_INLINE\n'
    'start: "x" (";" "x")*\n',
]

TOKENIZERS = ["cl100k_base", "o200k_base", "llama3"]
# every schema on cl100k_base, every 2nd on o200k_base and the others on Llama 3 (32 each)
WALKS = [(name, k) for name, ks in zip(TOKENIZERS, (range(len(SCHEMAS)), range(0, len(SCHEMAS), 2),
                                                     range(1, len(SCHEMAS), 2))) for k in ks]
STEPS = 24


@functools.lru_cache(maxsize=None)
def _token_kinds(name: str):
    """(ids that are only JSON whitespace, ids containing JSON punctuation)."""
    tb = TokenTrie.of(anytok_encoding(name)).token_bytes
    ws = frozenset(t for t, b in tb.items() if not b.strip(b" \t\r\n"))
    punct = frozenset(t for t, b in tb.items() if any(c in b for c in b'",:{}[]'))
    return ws, punct


def _pick(rng, name, allowed, eos):
    ws, punct = _token_kinds(name)
    ordinary = [t for t in allowed if t != eos] if allowed[-1] == eos or eos in allowed[:1] else allowed
    if not ordinary or rng.random() < 0.03:
        return rng.choice(allowed)
    want_punct = rng.random() < 0.5
    t = ordinary[0]
    for _ in range(30):  # rejection sampling: cheap even when 200k tokens are allowed
        t = rng.choice(ordinary)
        if t not in ws and (not want_punct or t in punct):
            break
    return t


def _walk(name, label, ours, ref, steps, seed):
    rng = random.Random(seed)
    eos = _lltokenizer(name).eos_token
    walk(name, label, ours, ref, steps, rng, lambda allowed: _pick(rng, name, allowed, eos), full_allowed=False)


@pytest.mark.parametrize("name,k", WALKS, ids=[f"{n}-{k}" for n, k in WALKS])
def test_json_schema_walk_matches_llguidance(name, k):
    schema = SCHEMAS[k]
    label = json.dumps(schema)[:100]
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert not ref.is_error(), ref.get_error()
    ours = constrain.json_schema(json.dumps(schema) if k % 2 else schema).matcher(anytok_encoding(name))
    _walk(name, label, ours, ref, STEPS, f"{name}|{k}")


@pytest.mark.parametrize("k", range(len(GRAMMARS)))
def test_grammar_walk_matches_llguidance(k):
    text = GRAMMARS[k]
    for name in TOKENIZERS[:2]:
        ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_lark(text), log_level=0)
        assert not ref.is_error(), ref.get_error()
        _walk(name, text[:60], constrain.grammar(text).matcher(anytok_encoding(name)), ref, STEPS, f"{name}|g{k}")


def _accepts(constraint, text: str) -> str:
    """'yes' if `text` is complete, 'prefix' if it can continue, 'no' otherwise (byte by byte
    through cl100k_base's single-byte tokens)."""
    enc = anytok_encoding("cl100k_base")
    byte_token = {b[0]: t for t, b in TokenTrie.of(enc).token_bytes.items() if len(b) == 1}
    m = constraint.matcher(enc)
    for b in text.encode():
        if not m.consume(byte_token[b]):
            return "no"
    return "yes" if m.is_accepting() else "prefix"


# (schema, text, expected): llguidance's defaults, spelled out (and checked against llguidance).
DEFAULTS = [
    ({"type": "object"}, ' {"a": 1}', "no"),  # no whitespace before the value...
    ({"type": "object"}, '{"a": 1} ', "no"),  # ...nor after it
    ({"type": "object"}, '{\n\t"a" :[ 1 , 2 ]\r}', "yes"),  # JSON whitespace between lexemes
    ({"properties": {"a": {}, "b": {}}}, '{"b": 1, "a": 2}', "no"),  # properties in schema order
    ({"properties": {"a": {}}}, '{"a": 1, "c": {"d": [null]}}', "yes"),  # additional properties: any value
    ({"properties": {"a": {}}}, '{"a": 1, "a": 2}', "no"),  # a named property at most once
    ({"properties": {"a": {}}}, '{"\\u0061": 1}', "yes"),  # ...but an escaped spelling is another key
    ({"type": "string"}, '"\\u0041"', "no"),  # \u escapes only for control characters
    ({"type": "string"}, '"\\u001f\\n\\u000A"', "yes"),
    ({"type": "string"}, '"\\/"', "no"),
    ({"type": "string"}, '"\x7f"', "no"),
    ({"type": "integer"}, "-0", "yes"),
    ({"type": "integer"}, "01", "no"),
    ({"type": "integer", "minimum": 0}, "-0", "no"),
    ({"type": "number"}, "-0.5E+03", "yes"),
    ({"type": "number"}, ".5", "no"),
    ({"type": "string", "minLength": 2, "maxLength": 2}, '"\\n\\t"', "yes"),  # lengths count escapes as one
    ({"type": "string", "pattern": "a[0-9]"}, '"xa1y"', "yes"),  # patterns are searched for
    ({"type": "string", "pattern": "^a\\d$"}, '"a\u0661"', "no"),  # \d is ASCII
    ({"const": 1.0}, "1.0", "no"),
    ({"type": "string", "pattern": "^[\\x00-\\x1f]$"}, '"\\\\"', "yes"),  # llguidance's quoting of all controls
    ({"enum": [[1, 2]]}, "[1, 2]", "yes"),
    # numeric constants: the value as a double, printed without an exponent
    ({"const": 9007199254740993}, "9007199254740993", "no"),
    ({"const": 9007199254740993}, "9007199254740992", "yes"),
    ({"const": 9223372036854775813}, "9223372036854776000", "yes"),  # beyond i64: a float range
    ({"type": "integer", "const": 9223372036854775813}, "9223372036854775807", "yes"),  # saturated
    ({"const": 1e30}, "1000000000000000000000000000000", "yes"),
    ({"const": 1e30}, "1e30", "no"),
    ({"const": 1.5e-7}, "0.00000015", "yes"),
    ({"enum": [-9007199254740993, 0.1]}, "-9007199254740992", "yes"),
    # keywords the root's draft does not know are ignored (a schema of only such keywords: any value)
    ({"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"a": {"const": 5}}}, '{"a": "x"}', "yes"),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"a": {"const": 5, "type": "integer"}}},
     '{"a": 6}', "no"),
    ({"$schema": "http://json-schema.org/draft-06/schema#", "type": "string", "if": {"minLength": 2}}, '"a"', "yes"),
    ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "minContains": 2}, "[1]", "yes"),
    # object/array keywords beside scalar constants: no effect
    ({"type": "string", "additionalProperties": False, "enum": ["a", "b"]}, '"b"', "yes"),
    ({"type": ["object", "string", "boolean"], "properties": {"x": {}}, "enum": [True, "a"]}, "{}", "no"),
    ({"enum": ["a", 1], "minItems": 2, "required": ["z"]}, "1", "yes"),
    # a character past U+FFFF (a surrogate pair in JSON text): an ordinary constant
    ({"enum": ["\U0001F600", "a"]}, '"\U0001F600"', "yes"),
]


@pytest.mark.parametrize("schema,text,expected", DEFAULTS, ids=[t for _, t, _ in DEFAULTS])
def test_json_defaults_as_llguidance(schema, text, expected):
    assert _accepts(constrain.json_schema(schema), text) == expected
    ref = LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    enc = anytok_encoding("cl100k_base")
    byte_token = {b[0]: t for t, b in TokenTrie.of(enc).token_bytes.items() if len(b) == 1}
    got = "yes"
    for b in text.encode():
        if not ref.consume_token(byte_token[b]):
            got = "no"
            break
    else:
        got = "yes" if ref.is_accepting() else "prefix"
    assert got == expected


# Schemas llguidance rejects: anytok raises ConstraintError (never UnsupportedFeatureError).
INVALID = [
    False,
    {"type": "integer", "minimum": 5, "maximum": 3},
    {"type": "strin"},
    {"type": "string", "format": "no-such-format"},
    {"type": "array", "x-guidance": {"no_such_option": 1}},
    {"$ref": "#/$defs/missing"},
    {"type": "array", "minItems": -1},
    {"type": "string", "minLength": 3, "maxLength": 1},
    {"type": "string", "pattern": "^a$", "minLength": 2},
    {"type": "object", "patternProperties": {"^a": {}, "b": {}}},
    {"type": "object", "properties": {"a": False}, "required": ["a"]},
    {"enum": [1], "type": 2.5},  # was a bare TypeError
]


@pytest.mark.parametrize("schema", INVALID, ids=[json.dumps(s) for s in INVALID])
def test_invalid_schema_rejected(schema):
    assert LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_json_schema(schema), log_level=0).is_error()
    with pytest.raises(constrain.ConstraintError) as info:
        constrain.json_schema(schema)
    assert not isinstance(info.value, constrain.UnsupportedFeatureError)


# A lone surrogate (as json.loads reads `"\ud800"`): no JSON text encodes it, and llguidance
# 1.9.1 refuses the schema (its JSON reader: "unexpected end of hex escape", "lone leading
# surrogate in hex escape"; its Python API, given the dict: "Value is not JSON serializable").
SURROGATES = [
    {"const": "\ud800"},
    {"enum": ["a", "x\udc00y"]},
    {"const": {"k": ["\udfff"]}},
    {"type": "object", "properties": {"\ud800": {"type": "integer"}}, "required": ["\ud800"]},
    {"type": "string", "pattern": "\udbff"},
]


@pytest.mark.parametrize("schema", SURROGATES, ids=[json.dumps(s) for s in SURROGATES])
def test_lone_surrogate_refused_as_llguidance(schema):
    text = json.dumps(schema)
    lark = "start: %json " + text + "\n"
    tok = _lltokenizer("cl100k_base")
    assert LLMatcher(tok, LLMatcher.grammar_from_json_schema(text), log_level=0).is_error()
    assert LLMatcher(tok, LLMatcher.grammar_from_lark(lark), log_level=0).is_error()
    with pytest.raises(ValueError, match="not JSON serializable"):
        LLMatcher.grammar_from_json_schema(schema)
    for make, arg in ((constrain.json_schema, schema), (constrain.json_schema, text), (constrain.grammar, lark)):
        with pytest.raises(constrain.ConstraintError, match="lone surrogate") as info:
            make(arg)
        assert not isinstance(info.value, constrain.UnsupportedFeatureError)


# Valid for llguidance (or rejected by both), not implemented by anytok: a named error.
UNSUPPORTED = [
    ({"type": "array", "uniqueItems": True}, "uniqueItems"),
    ({"not": {"type": "string"}}, "not"),
    ({"type": "integer", "multipleOf": 0}, "multipleOf"),
    ({"type": "integer", "const": 2 ** 64}, "64 bits"),  # (llguidance's Python API: ValueError)
    ({"type": "object", "properties": {"a": {}, "b": {}}, "minProperties": 1}, "minProperties"),
    # (llguidance: "Unable to determine if regex is empty")
    ({"type": "string", "pattern": "^(ab)+$", "minLength": 100000}, "intersection"),
    ({"allOf": [{"type": "array", "prefixItems": [{"type": "integer"}], "items": [{}]},
                {"prefixItems": [{"type": "number"}]}]}, "allOf"),
    ({"type": "integer", "multipleOf": 86400}, "multipleOf"),
    ({"type": "integer", "multipleOf": 4999}, "multipleOf"),
    ({"oneOf": [{"type": "integer"}, {"minimum": 3}]}, "oneOf"),
    ({"$ref": "https://example.com/s.json"}, "$ref"),
    ({"type": "array", "x-guidance": {"json_allow_general_unicode_escapes": True}}, "x-guidance"),
]


@pytest.mark.parametrize("schema,feature", UNSUPPORTED, ids=[f for _, f in UNSUPPORTED])
def test_unsupported_schema_features_named(schema, feature):
    with pytest.raises(constrain.UnsupportedFeatureError) as info:
        constrain.json_schema(schema)
    assert feature in str(info.value) and isinstance(info.value, NotImplementedError)


# oneOf: compiled exactly when llguidance proves its options disjoint (then as anyOf), else
# refused; each case below was checked both ways against llguidance.
_OBJ_K = {"type": "object", "required": ["k"]}
ONE_OF = [
    {"oneOf": [dict(_OBJ_K, properties={"k": {"const": "a"}}), dict(_OBJ_K, properties={"k": {"const": "b"}})]},
    {"oneOf": [{"type": "object", "properties": {"a": {}}, "required": ["a"], "additionalProperties": False},
               {"type": "object", "properties": {"b": {}}, "required": ["b"], "additionalProperties": False}]},
    {"oneOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}],
     "$defs": {"a": {"type": "string"}, "b": {"type": "number"}}},  # bare $refs: not disjoint
    {"type": "object", "oneOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}],
     "$defs": {"a": {"type": "string"}, "b": {"type": "object", "properties": {"x": {"const": 1}}}}},
    {"oneOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}], "type": "object",
     "$defs": {"a": {"required": ["k"], "properties": {"k": {"const": "a"}}},
               "b": {"required": ["k"], "properties": {"k": {"const": "b"}}}}},
    {"discriminator": {"propertyName": "k"}, "oneOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}],
     "$defs": {"a": {"type": "string"}, "b": {"type": "null"}}},  # an unknown keyword: merged
    {"oneOf": [{"enum": ["a", "b"]}, {"enum": ["c"]}]},
    {"oneOf": [{"enum": ["a", "b"]}, {"enum": ["b"]}]},
    {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    {"oneOf": [{"type": "string", "pattern": "a"}, {"const": "b"}]},
    {"oneOf": [{"type": "boolean", "const": True}, {"const": False}]},
    {"oneOf": [{"type": ["string", "null"]}, {"type": "number"}]},
    {"oneOf": [{"type": "object", "patternProperties": {"^x": {"type": "string"}}, "required": ["xa"]},
               {"type": "object", "properties": {"xa": {"type": "number"}}, "required": ["xa"]}]},
    {"oneOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}]},
    # options without `type` take the parent's (before or after the oneOf), then are checked
    {"additionalProperties": False, "oneOf": [{"properties": {"k": {"enum": ["a"]}}, "required": ["k"]},
                                              {"properties": {"k": {"enum": ["b"]}}, "required": ["k"]}],
     "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}, "type": "object"},
    {"oneOf": [{"properties": {"k": {"const": "a"}}, "required": ["k"]},
               {"properties": {"k": {"const": "b"}}, "required": ["k"]}], "type": "object"},
    {"oneOf": [{"properties": {"k": {"const": "a"}}, "required": ["k"]},
               {"properties": {"k": {"const": "b"}}, "required": ["k"]}], "required": ["k"]},  # no type
    {"type": "object", "oneOf": [{"required": ["a"], "properties": {"a": {"type": "string"}}},
                                 {"required": ["a"], "properties": {"a": {"type": "number"}}}]},
    {"type": "object", "properties": {"a": {"type": "string"}},
     "oneOf": [{"required": ["a"], "properties": {"a": {"const": "x"}}}, {"required": ["b"]}]},
    {"type": "object", "properties": {"p": {"oneOf": [{"type": "string"}, {"minLength": 2}]}}},  # nested
    {"type": "string", "oneOf": [{"const": "a"}, {"pattern": "b"}]},
    {"type": "array", "oneOf": [{"items": {"type": "string"}}, {"items": {"type": "number"}}]},
    {"oneOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}], "title": "t", "required": [],
     "$defs": {"a": {"type": "string"}}},
]


@pytest.mark.parametrize("k", range(len(ONE_OF)))
def test_one_of_compiled_as_llguidance(k):
    schema = ONE_OF[k]
    ref = LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    if ref.is_error():
        assert "oneOf" in ref.get_error()
        with pytest.raises(constrain.UnsupportedFeatureError, match="oneOf"):
            constrain.json_schema(schema)
        return
    ours = constrain.json_schema(schema).matcher(anytok_encoding("o200k_base"))
    _walk("o200k_base", json.dumps(schema)[:100], ours, ref, STEPS, f"oneOf|{k}")


# $ref by identifier within the document, resolved as llguidance resolves it.
REF_IDS = [
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "required": ["a", "b"],
     "definitions": {"n": {"id": "#n", "type": "integer", "minimum": 0},
                     "l": {"id": "#l", "type": "array", "items": {"$ref": "#n"}}},
     "properties": {"a": {"$ref": "#n"}, "b": {"$ref": "#/definitions/l"}}},
    {"type": "object", "properties": {"x": {"$ref": "#s"}, "y": {"$ref": "item.json"}},
     "$defs": {"s": {"$anchor": "s", "type": "string", "maxLength": 3},
               "i": {"$id": "item.json", "enum": [1, "two"]}}},
    {"$id": "https://example.com/root.json", "type": "object",
     "properties": {"next": {"$ref": "https://example.com/root.json#"}, "v": {"$ref": "root.json#/$defs/v"}},
     "$defs": {"v": {"type": "boolean"}}},
]


@pytest.mark.parametrize("k", range(len(REF_IDS)))
def test_ref_by_id_as_llguidance(k):
    schema = REF_IDS[k]
    ref = LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert not ref.is_error(), ref.get_error()
    ours = constrain.json_schema(schema).matcher(anytok_encoding("o200k_base"))
    _walk("o200k_base", json.dumps(schema)[:100], ours, ref, STEPS, f"refid|{k}")


# Schemas llguidance's schema builder refuses whatever else they hold: refused too.
LL_BUILDER_REFUSES = [
    ({"definitions": {"Foo": {"type": "object", "properties": {
        "c": {"allOf": [{"$ref": "#/definitions/Foo"}, {"$ref": "#/definitions/B"}]}}},
        "B": {"type": "object"}}, "properties": {"f": {"$ref": "#/definitions/Foo"}}}, "circular references"),
    ({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n", "required": ["v"]}}}},
      "$ref": "#/$defs/n"}, "circular references"),
]


@pytest.mark.parametrize("k", range(len(LL_BUILDER_REFUSES)))
def test_llguidance_builder_refusals(k):
    schema, what = LL_BUILDER_REFUSES[k]
    ref = LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert ref.is_error() and what in ref.get_error()
    with pytest.raises(constrain.UnsupportedFeatureError, match=what):
        constrain.json_schema(schema)


def test_json_schema_api():
    with pytest.raises(constrain.ConstraintError):
        constrain.json_schema("{not json")
    with pytest.raises(constrain.ConstraintError):
        constrain.json_schema("[1, 2]")
    enc = anytok_encoding("cl100k_base")
    m = constrain.json_schema({"type": "object", "properties": {"ok": {"type": "boolean"}},
                               "required": ["ok"], "additionalProperties": False}).matcher(enc)
    assert m.allowed() == enc.encode("{")[:1] or set(m.allowed()) >= {enc.encode("{")[0]}
    for t in enc.encode('{"ok": true}'):
        assert m.consume(t)
    assert m.is_accepting() and enc.eot_token in m.allowed()
    assert m.consume(enc.eot_token) and m.is_stopped()


# Grammars: malformed -> GrammarSyntaxError (llguidance rejects them too); valid for llguidance
# but outside what anytok implements -> UnsupportedFeatureError (more: test_constrain_grammar.py).
BAD_GRAMMARS = [
    ('start: "a" (', constrain.GrammarSyntaxError),
    ("start: foo\n", constrain.GrammarSyntaxError),
    ('start: A\nA: "a"\nA: "b"\n', constrain.GrammarSyntaxError),
]
UNSUPPORTED_GRAMMARS = [
    ('%llguidance {"allow_invalid_utf8": true}\nstart: "a"\n', "allow_invalid_utf8"),
]


@pytest.mark.parametrize("text,error", BAD_GRAMMARS, ids=[t for t, _ in BAD_GRAMMARS])
def test_malformed_grammar_rejected(text, error):
    assert LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_lark(text), log_level=0).is_error()
    with pytest.raises(error):
        constrain.grammar(text)


@pytest.mark.parametrize("text,feature", UNSUPPORTED_GRAMMARS, ids=[f for _, f in UNSUPPORTED_GRAMMARS])
def test_unsupported_grammar_features_named(text, feature):
    with pytest.raises(constrain.UnsupportedFeatureError, match=feature):
        constrain.grammar(text)


def test_greedy_lexing_quirk_is_why():
    """llguidance's lexer is greedy: `A: /a+/` eats every `a`, so `start: A B` never completes —
    and anytok's Earley parser lexes the same way (test_constrain_grammar.py)."""
    text = "start: A B\nA: /a+/\nB: /a/\n"
    ref = LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_lark(text), log_level=0)
    enc = anytok_encoding("cl100k_base")
    byte_token = {b[0]: t for t, b in TokenTrie.of(enc).token_bytes.items() if len(b) == 1}
    assert ref.consume_token(byte_token[ord("a")]) and ref.consume_token(byte_token[ord("a")])
    assert not ref.is_accepting()


# Texts consumed token by token (their own tokenization), the masks compared at every step.
TEXT_WALKS = [
    # two keys sharing the forced bytes `Idf` after `{"apple`: llguidance allows the tokens that
    # are prefixes of the forced bytes even where no token extends them (the mask was empty)
    ({"type": "object", "additionalProperties": False,
      "properties": {"appleIdfa": {"type": "string"}, "appleIdfv": {"type": "string"}}}, '{"appleIdfv":"x"}'),
    ({"type": "object", "additionalProperties": False, "required": ["appleIdfa"],
      "properties": {"appleIdfa": {"type": "string"}, "appleIdfv": {"type": "string"}, "b": {}}},
     '{"appleIdfa":"1","b":[]}'),
    # `properties` before `allOf: [{$ref}]` (optional properties): its own first, then the $ref's
    ({"properties": {"spacing": {"type": "integer"}}, "allOf": [{"$ref": "#/$defs/base"}],
      "$defs": {"base": {"type": "object", "properties": {"level": {"type": "string"}}}}},
     '{"spacing":1,"level":"warn","x":0}'),
]


@pytest.mark.parametrize("k", range(len(TEXT_WALKS)))
def test_text_walk_masks_match_llguidance(k):
    from test_constrain import _check_same

    schema, text = TEXT_WALKS[k]
    name = "o200k_base"
    rng = random.Random(k)
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    ours = constrain.json_schema(schema).matcher(anytok_encoding(name))
    for step, t in enumerate(anytok_encoding(name).encode(text)):
        mask = _check_same(name, text, step, ours, ref, rng)
        assert any(mask)
        assert ours.consume(t) and ref.consume_token(t)
    _check_same(name, text, step + 1, ours, ref, rng)
    assert ours.is_accepting() and ref.is_accepting()


@pytest.mark.parametrize("schema,text", [
    ({}, "[" * 700 + "]" * 700),
    ({"$ref": "#/$defs/n", "$defs": {"n": {"type": "object", "properties": {
        "k": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}}}, '{"k":[' * 400 + "{}" + "]}" * 400),
], ids=["any-arrays", "ref-objects"])
def test_deep_output_beyond_recursion_limit(schema, text):
    """Nesting deeper than Python's recursion limit allows frames: no RecursionError (states
    are derived from an explicit stack), the same verdicts and final masks as llguidance."""
    name = "o200k_base"
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    # (a mask 700 levels deep is past the default lexer fuel: raised here)
    ours = constrain.json_schema(schema, limits=constrain.Limits(step_lexer_fuel=50_000_000)).matcher(
        anytok_encoding(name))
    tokens = anytok_encoding(name).encode(text)
    half = len(tokens) // 2
    for i, t in enumerate(tokens):
        if i == half:
            assert ours.mask() == _ref_mask_o200k(ref)
        assert ours.consume(t) == ref.consume_token(t) == True  # noqa: E712
    assert ours.is_accepting() and ref.is_accepting()
    assert ours.mask() == _ref_mask_o200k(ref)


def _ref_mask_o200k(ref):
    from test_constrain import _ref_mask

    return _ref_mask("o200k_base", ref)


def test_regex_escapes_as_rust_regex():
    """Every ASCII character after a backslash, in and out of a class: compiled exactly where
    llguidance compiles it (Rust's regex escapes any ASCII character but letters, digits, `<`
    and `>`; `\\x`, `\\u`, `\\U` need all their hex digits), and then matching what llguidance
    matches (the text of the escaped character, byte by byte on cl100k_base)."""
    name = "cl100k_base"
    enc = anytok_encoding(name)
    for cp in range(128):
        c = chr(cp)
        for pattern, text in (("a\\" + c + "b", "a" + c + "b"), ("[\\" + c + "x]", c), ("\\" + c + "1234567", None)):
            ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_regex(pattern), log_level=0)
            if ref.is_error():
                with pytest.raises(constrain.ConstraintError):
                    constrain.regex(pattern)
                continue
            ours = constrain.regex(pattern).matcher(enc)
            if text is None:
                continue
            for b in text.encode():
                t = enc.encode_single_token(bytes([b])) if hasattr(enc, "encode_single_token") else None
                t = t if t is not None else TokenTrie.of(enc).tokenize_bytes(bytes([b]))[0]
                assert ours.consume(t) == ref.consume_token(t), (pattern, text)
            assert ours.is_accepting() == ref.is_accepting(), pattern


@pytest.mark.parametrize("pattern,text", [
    ("^https?:\\/\\/[a-z.]+\\/$", '"https://ab.c/"'),
    ('^\\"[a-z]+\\"\\@\\%\\_\\`$', '"\\"ab\\"@%_`"'),
])
def test_json_pattern_escapes_masks_match_llguidance(pattern, text):
    from test_constrain import _check_same

    schema = {"type": "string", "pattern": pattern}
    name = "o200k_base"
    rng = random.Random(pattern)
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert not ref.is_error(), ref.get_error()
    ours = constrain.json_schema(schema).matcher(anytok_encoding(name))
    for step, t in enumerate(anytok_encoding(name).encode(text)):
        _check_same(name, text, step, ours, ref, rng)
        assert ours.consume(t) and ref.consume_token(t)
    assert ours.is_accepting() and ref.is_accepting()


# JSON Schemas as the builder's rule trees (`builder.json_rules`): `$ref` recursion, any value,
# `multipleOf` remainder rules inside an intersection, a lazy `conj` of pattern and lengths,
# pattern keys (a difference), named keys left out of additional ones (`minus`), constants
IR_SCHEMAS = [
    {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer", "multipleOf": 7},
                                                         "next": {"$ref": "#/$defs/node"}},
                        "required": ["v"], "additionalProperties": False}},
     "$ref": "#/$defs/node"},
    {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]+[0-9]$", "minLength": 3,
                                             "maxLength": 6}},
     "patternProperties": {"^x-": {"type": "number", "minimum": -2.5, "maximum": 10}}},
    {"type": "array", "items": {"enum": ["a\n", 1.5, None, {"k": [True]}]}, "maxItems": 3},
    {"type": "object", "properties": {"meta": {}}, "required": ["meta"]},
]


@pytest.mark.parametrize("k", range(len(IR_SCHEMAS)))
def test_json_rules_compiled_by_the_builder_match_llguidance(k):
    """The rule trees of a schema (`builder.json_rules`), given to a `GrammarBuilder` and
    compiled there, walk as llguidance walks the schema (and as `constrain.json_schema`)."""
    from anytok.constrain import builder as B
    from anytok.constrain.builder import _LEXEME_KINDS
    from anytok.constrain.terminals import children

    schema = IR_SCHEMAS[k]
    rules = B.json_rules(schema)
    seen, todo = set(), list(rules.values())
    while todo:  # only the documented node kinds, and every rule used is there
        n = todo.pop()
        assert n[0] in _LEXEME_KINDS, n[0]
        if n[0] == "rec":
            assert n[1] in rules
        elif id(n) not in seen:
            seen.add(id(n))
            todo += children(n)
    g = B.GrammarBuilder()
    for name, body in rules.items():
        g.rule(name, body)
    for name in TOKENIZERS[:2]:
        ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_json_schema(schema), log_level=0)
        assert not ref.is_error(), ref.get_error()
        _walk(name, f"json_rules {k}", g.compile().matcher(anytok_encoding(name)), ref, STEPS, f"{name}|ir{k}")


def test_json_rules_as_a_terminal_of_a_grammar_match_llguidance():
    """A schema's rule trees as one terminal of an Earley grammar (`start: "v=" JSON`) walk as
    llguidance's `start: "v=" %json {...}`."""
    from anytok.constrain import builder as B

    schema = IR_SCHEMAS[0]
    rules = B.json_rules(schema)
    g = B.GrammarBuilder()
    g.rule("start", B.seq(B.literal("v="), B.ref("JSON")))
    g.rule("JSON", rules.pop("start"))
    for name, body in rules.items():
        g.rule(name, body)
    name = TOKENIZERS[0]
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_lark('start: "v=" %json ' + json.dumps(schema)),
                    log_level=0)
    assert not ref.is_error(), ref.get_error()
    _walk(name, "json_rules in a grammar", g.compile().matcher(anytok_encoding(name)), ref, STEPS, f"{name}|irg")
