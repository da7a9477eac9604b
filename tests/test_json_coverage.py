"""JSON Schema features that real schemas (JSONSchemaBench) use, each reproduced on a small schema
and compared with llguidance 1.9.1 step by step; and the schemas anytok compiles where
llguidance does not, checked against the `jsonschema` package.

- string `pattern`/`format` with `minLength`/`maxLength`: a lazy intersection (derivatives of
  each side, taken on demand), so `format: email` with `maxLength: 1024` compiles; the masks
  near the length bound must match (no token past it, no dead end before it);
- a named property also matched by a `patternProperties` pattern (both schemas apply), and
  `properties` merged by `allOf` with `patternProperties`;
- `patternProperties` patterns read as Rust regexes with ASCII `\\d`/`\\w` (as llguidance),
  also where `allOf` merging looks a property up in them;
- `^`/`$` inside groups and alternatives, each path through a pattern pinned as llguidance pins it;
- JSONSchemaBench dev-half files llguidance refuses and anytok compiles: every test instance's
  verdict (token by token, then `is_accepting`) equals `jsonschema`'s.
"""

from __future__ import annotations

import json
import random

import pytest

from llguidance import LLMatcher

import maskbench  # build_scripts/, on sys.path through conftest.py
from anytok import constrain
from test_constrain import _check_same, _ids, _lltokenizer, _ref_mask, anytok_encoding
from test_constrain_json import _walk

NAME = "o200k_base"

# (schema, text): the text's own tokens consumed one by one, everything compared at each step.
TEXTS = [
    # string constraints whose product automaton is large (dev half: 30 files like these)
    ({"type": "string", "format": "email", "maxLength": 1024}, '"jane.doe@example.com"'),
    ({"type": "string", "format": "email", "maxLength": 20}, '"abcdefgh@example.com"'),  # the bound
    ({"type": "string", "pattern": "^(?:\\S+\\s+){0,9}\\S+$", "maxLength": 40}, '"one two  three four"'),
    ({"type": "string", "format": "uri", "minLength": 12, "maxLength": 255}, '"https://example.com/a?b=c"'),
    ({"type": "string", "format": "hostname", "maxLength": 128, "pattern": "\\."}, '"a-b.example.org"'),
    ({"type": "string", "pattern": "^[a-z]+@[a-z]+$", "minLength": 4, "maxLength": 6}, '"ab@cd"'),
    # minLength alone: once met, the length side is any string (left out of the intersection)
    ({"type": "string", "pattern": "^(?:\\S+\\s+){0,199}\\S+$", "minLength": 4}, '"ab c\\u0001  d"'),
    # a named property matched by a pattern: both schemas, the named one's properties first
    ({"type": "object", "properties": {"ax": {"type": "integer"}},
      "patternProperties": {"^a": {"type": "number", "minimum": 0}}}, '{"ax":5,"ab":1.5,"c":null}'),
    ({"type": "object", "properties": {"ao": {"type": "object", "properties": {"p": {"type": "integer"}}}},
      "patternProperties": {"^a": {"type": "object", "properties": {"q": {"type": "string"}}}}},
     '{"ao":{"p":1,"q":"x"},"ab":{"q":"y"}}'),
    # properties merged by allOf with patternProperties (and additionalProperties)
    ({"allOf": [{"type": "object", "properties": {"a1": {"type": "string"}, "b": {"type": "integer"}}},
                {"patternProperties": {"^a": {"maxLength": 3}}, "additionalProperties": {"type": "integer"}}]},
     '{"a1":"xyz","b":2,"a2":"q","c":3}'),
    ({"allOf": [{"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": False},
                {"patternProperties": {"^[xy]$": {"minLength": 2}}}]}, '{"x":"ab"}'),
    # patterns as Rust regexes: \d is ASCII (Python's re would match U+0663 and drop "x٣" as
    # string & integer), POSIX classes, `\/`
    ({"allOf": [{"type": "object", "properties": {"x\u0663": {"type": "string"}}},
                {"patternProperties": {"^x\\d$": {"type": "integer"}}}]}, '{"x\u0663":"s","x3":3}'),
    ({"allOf": [{"type": "object", "properties": {"ab": {"type": "string"}}},
                {"patternProperties": {"^[[:alpha:]]+$": {"maxLength": 1}}}]}, '{"ab":"s"}'),
    ({"type": "object", "properties": {"a/b": {"type": "string"}},
      "patternProperties": {"^a\\/b$": {"maxLength": 2}}}, '{"a/b":"xy"}'),
]


@pytest.mark.parametrize("k", range(len(TEXTS)))
def test_text_masks_match_llguidance(k):
    schema, text = TEXTS[k]
    rng = random.Random(k)
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert not ref.is_error(), ref.get_error()
    ours = constrain.json_schema(schema).matcher(anytok_encoding(NAME))
    tokens = anytok_encoding(NAME).encode(text)
    for step, t in enumerate(tokens):
        mask = _check_same(NAME, text, step, ours, ref, rng, full_allowed=False)
        assert any(mask)
        assert ours.consume(t) and ref.consume_token(t), (text, step)
    _check_same(NAME, text, len(tokens), ours, ref, rng, full_allowed=False)
    assert ours.is_accepting() and ref.is_accepting()


# Seeded random walks (allowed tokens, often punctuation): they run into the length bounds.
WALKS = [0, 1, 2, 5, 6, 7, 9]


@pytest.mark.parametrize("k", WALKS)
def test_random_walks_match_llguidance(k):
    schema = TEXTS[k][0]
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    ours = constrain.json_schema(schema).matcher(anytok_encoding(NAME))
    _walk(NAME, json.dumps(schema)[:80], ours, ref, 24, f"coverage|{k}")


def test_string_intersection_budget():
    """A length bound no string of the pattern can reach within the search budget is refused by
    name when the constraint is built (llguidance: "Unable to determine if regex is empty")."""
    schema = {"type": "string", "pattern": "^[a-z]+@[a-z]+\\.com$", "minLength": 20000}
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert ref.is_error() and "Unable to determine if regex is empty" in ref.get_error()
    with pytest.raises(constrain.UnsupportedFeatureError, match="intersection is this large"):
        constrain.json_schema(schema)
    # an unsatisfiable combination decided within the budget: unsatisfiable, as llguidance says
    schema = {"type": "string", "format": "uuid", "maxLength": 35}
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert ref.is_error()
    with pytest.raises(constrain.ConstraintError, match="unsatisfiable"):
        constrain.json_schema(schema)


def test_pattern_of_named_keys_only_no_dead_end():
    """Every key a pattern matches is a required property: no key is left for the pattern.
    llguidance still allows `,` after the last property, then only whitespace (a dead end);
    anytok allows no `,` there (docs/constrain-json.md, differences).  Up to there the masks
    are llguidance's."""
    schema = {"type": "object", "patternProperties": {"^b_(s|e)$": {"type": "integer"}},
              "properties": {"d": {"type": "boolean"}}, "required": ["b_s", "b_e"], "additionalProperties": False}
    text = '{"d":true,"b_s":1,"b_e":2'
    enc = anytok_encoding(NAME)
    rng = random.Random(0)
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    ours = constrain.json_schema(schema).matcher(enc)
    for step, t in enumerate(enc.encode(text)):
        _check_same(NAME, text, step, ours, ref, rng, full_allowed=False)
        assert ours.consume(t) and ref.consume_token(t)
    comma = enc.encode(",")[0]
    assert set(ours.allowed()) == set(_ids(_ref_mask(NAME, ref))) - {t for t in _ids(_ref_mask(NAME, ref))
                                                                    if b"," in enc.decode_bytes([t])}
    assert comma not in ours.allowed() and ref.consume_token(comma)
    after = [enc.decode_bytes([t]) for t in _ids(_ref_mask(NAME, ref))]
    assert after and all(not b.strip(b" \t\r\n") for b in after)  # whitespace only
    for t in enc.encode('  "b_s":3}'):
        if not ref.consume_token(t):
            break
    else:
        raise AssertionError("llguidance accepted a key after the dead end")


# allOf merging two patterns or formats (both hold), two multipleOfs (their least common multiple) and two
# prefixItems (position by position, past one side's prefix that side's `items`), as llguidance.
MERGED = [
    ({"allOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"}]},
     ['"ab"', '"axb"', '"a"', '"b"', '"xb"']),
    ({"allOf": [{"type": "string", "pattern": "a"}, {"pattern": "b"}, {"pattern": "c", "maxLength": 6}]},
     ['"abc"', '"cba"', '"ab"', '"xxabcx"', '"xxabcxx"']),
    ({"allOf": [{"type": "string", "format": "ipv4"}, {"format": "hostname"}]}, ['"1.2.3.4"', '"abc"', '"1.2.3"']),
    ({"allOf": [{"type": "string", "format": "date"}, {"pattern": "^2024"}, {"format": "date", "pattern": "-01$"}]},
     ['"2024-01-01"', '"2023-01-01"', '"2024-02-01"', '"2024-02-01x"']),
    ({"anyOf": [{"allOf": [{"format": "date"}, {"format": "email"}]}, {"type": "integer"}]}, ['"a@b.c"', "1"]),
    ({"allOf": [{"type": "integer", "multipleOf": 2}, {"type": "integer", "multipleOf": 3}]},
     ["2", "3", "4", "6", "12", "0", "-18"]),
    ({"allOf": [{"type": "number", "multipleOf": 0.5}, {"type": "number", "multipleOf": 0.2}]},
     ["0.5", "1", "0.4", "2", "1.5", "3.0"]),
    ({"allOf": [{"type": "number", "multipleOf": 0.25}, {"multipleOf": 0.1}, {"maximum": 100}]},
     ["0.5", "0.25", "1.5", "100", "100.5", "0.50"]),
    ({"allOf": [{"multipleOf": 4}, {"multipleOf": 6}], "type": "integer"}, ["4", "6", "12", "24", "8"]),
    ({"allOf": [{"type": "array", "prefixItems": [{"type": "integer"}]},
                {"type": "array", "prefixItems": [{"type": "number", "minimum": 3}]}]},
     ["[1]", "[3]", "[3.5]", '[3,"x"]', "[]"]),
    ({"allOf": [{"type": "array", "prefixItems": [{"type": "integer"}], "items": False},
                {"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]}]},
     ["[1]", '[3,"x"]', "[]"]),
    ({"allOf": [{"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
                {"type": "array", "prefixItems": [{"type": "number"}, {"enum": ["a", 1]}, {"type": "boolean"}]}]},
     ['[1,"a",true]', '[1,1]', '[1,"a","b"]', '[1,"a"]', '[1,"b"]']),
]


def _verdict(m, enc, text):
    return all(m.consume(t) for t in enc.encode(text)) and m.is_accepting()


# multipleOf steps with more than 3 significant digits: the remainder automaton minimized (a
# step's factors 2 and 5 need a few states, its factor prime to 10 one per remainder).
STEPS = [
    ({"type": "integer", "multipleOf": 1024}, ["1024", "2048", "1000", "0", "10240", "-4096"]),
    ({"type": "number", "multipleOf": 5000, "minimum": 0}, ["5000", "15000", "2500", "0", "5000.0"]),
    ({"type": "number", "multipleOf": 1234}, ["1234", "2468", "1235", "-1234"]),
    ({"type": "number", "multipleOf": 0.1234}, ["0.1234", "0.2468", "1.234", "0.12340", "12.34"]),
    ({"type": "integer", "multipleOf": 3600, "maximum": 100000}, ["3600", "7200", "1800", "108000"]),
]


# const/enum arrays and objects beside array/object keywords: llguidance keeps the constants
# that satisfy them (an integral double under `type: integer` printed as an integer).
CONSTANTS = [
    ({"const": {"b": 1, "a": 2}, "properties": {"a": {}, "b": {}}, "required": ["a"]}, ['{"b":1,"a":2}', '{"a":2,"b":1}']),
    ({"enum": [{"b": 1}, {"c": 2}, 3], "required": ["c"]}, ['{"b":1}', '{"c":2}', "3"]),
    ({"enum": [[1, "x"], [2]], "items": {"type": "integer"}}, ['[1,"x"]', "[2]"]),
    ({"enum": [[1, "x"], [2]], "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, ['[1,"x"]', "[2]"]),
    ({"enum": [[1, [2, 3]], [2]], "items": {"type": ["integer", "array"], "maxItems": 1}}, ["[1,[2,3]]", "[2]"]),
    ({"const": [1, 2], "minItems": 1}, ["[1,2]", "[1]", "[1, 2]"]),
    ({"const": {"a": 1.0}, "properties": {"a": {"type": "integer"}}}, ['{"a":1.0}', '{"a":1}']),
    ({"enum": [{"a": 1}, {"a": "x"}], "patternProperties": {"^a$": {"type": "string"}}}, ['{"a":1}', '{"a":"x"}']),
    ({"enum": [[1], "ab"], "minLength": 5}, ["[1]", '"ab"']),
    ({"enum": [{"a": {"b": 2.0}}, {"a": 3}], "properties": {"a": {"$ref": "#/$defs/x"}},
      "$defs": {"x": {"type": "object", "properties": {"b": {"type": "integer"}}}}},
     ['{"a":{"b":2}}', '{"a":{"b":2.0}}', '{"a":3}']),
    ({"enum": [[1, 2, 3], [1, 2]], "items": {"anyOf": [{"type": "integer", "maximum": 2}, {"const": 3}]},
      "maxItems": 3}, ["[1,2,3]", "[1,2]"]),
    ({"enum": [{"k": "a"}, {"k": "b"}], "properties": {"k": {"enum": ["b"]}}}, ['{"k":"a"}', '{"k":"b"}']),
]
# ... and where no constant is left, both refuse the schema as unsatisfiable
CONSTANTS_UNSAT = [
    {"const": {"b": 1, "a": 2}, "required": ["c"]},
    {"const": {"b": 1}, "properties": {"b": {"type": "string"}}},
    {"const": {"b": 1}, "additionalProperties": False},
    {"const": {"b": 1}, "maxProperties": 0},
    {"const": {"a": [1]}, "properties": {"a": {"maxItems": 0}}},
    {"enum": [{"a": 1}], "patternProperties": {"^a$": {"type": "string"}}},
]


@pytest.mark.parametrize("k", range(len(CONSTANTS)))
def test_constants_beside_container_keywords_as_llguidance(k):
    _same_as_llguidance(*CONSTANTS[k], f"constants|{k}")


@pytest.mark.parametrize("k", range(len(CONSTANTS_UNSAT)))
def test_constants_beside_container_keywords_unsatisfiable(k):
    schema = CONSTANTS_UNSAT[k]
    assert LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(schema), log_level=0).is_error()
    with pytest.raises(constrain.ConstraintError, match="unsatisfiable"):
        constrain.json_schema(schema)


@pytest.mark.parametrize("k", range(len(MERGED)))
def test_allof_merges_as_llguidance(k):
    _same_as_llguidance(*MERGED[k], f"merged|{k}")


@pytest.mark.parametrize("k", range(len(STEPS)))
def test_large_multiple_of_as_llguidance(k):
    _same_as_llguidance(*STEPS[k], f"steps|{k}")


def _same_as_llguidance(schema, texts, label):
    """Compiles as llguidance does; each text's verdict and the masks of two seeded walks equal
    llguidance's."""
    enc = anytok_encoding(NAME)
    grm = LLMatcher.grammar_from_json_schema(schema)
    assert not LLMatcher(_lltokenizer(NAME), grm, log_level=0).is_error()
    c = constrain.json_schema(schema)
    for text in texts:
        ref = LLMatcher(_lltokenizer(NAME), grm, log_level=0)
        ids = enc.encode(text)
        want = all(ref.consume_token(t) for t in ids) and ref.is_accepting()
        assert _verdict(c.matcher(enc), enc, text) == want, text
    for seed in range(2):
        _walk(NAME, label, c.matcher(enc), LLMatcher(_lltokenizer(NAME), grm, log_level=0), 12, f"{label}|{seed}")


# Objects no finite text completes: a required property whose schema requires it again.
# llguidance allows the `{` (then keys nested without end); anytok leaves the object out.
ENDLESS = [
    # untyped: every other kind of value is allowed (JSONSchemaBench dev half: o74424)
    {"properties": {"a": {"$ref": "#/$defs/o"}}, "required": ["a"],
     "$defs": {"o": {"type": "object", "properties": {"a": {"$ref": "#/$defs/o"}}, "required": ["a"]}}},
    {"anyOf": [{"type": "object", "properties": {"x": {"type": "integer"}, "a": {"$ref": "#/anyOf/0"}},
                "required": ["a"]}, {"type": "array", "items": {"$ref": "#/anyOf/0"}}, {"type": "integer"}]},
    {"type": "object", "properties": {"n": {"$ref": "#/$defs/e"}, "ok": {"type": "boolean"}},
     "$defs": {"e": {"type": "object", "properties": {"m": {"$ref": "#/$defs/e"}}, "required": ["m"]}}},
]


@pytest.mark.parametrize("k", range(len(ENDLESS)))
def test_endless_objects_left_out(k):
    """The first mask is llguidance's minus the tokens opening the endless object; walks that
    start elsewhere (seeded, 40 steps) get llguidance's masks at every step."""
    schema = ENDLESS[k]
    enc = anytok_encoding(NAME)
    grm = LLMatcher.grammar_from_json_schema(schema)
    ref = LLMatcher(_lltokenizer(NAME), grm, log_level=0)
    assert not ref.is_error()
    ours = constrain.json_schema(schema).matcher(enc)
    a, b = set(ours.allowed()), set(_ids(_ref_mask(NAME, ref)))
    trap = b - a
    if k < 2:  # the root may be the endless object
        assert trap and a < b and all(b"{" in enc.decode_bytes([t]) for t in trap)
    else:  # the endless object is an optional property's value: left out with its key
        assert not trap
        text = '{"n":{'
        ids = enc.encode(text)
        assert not all(ours.consume(t) for t in ids) and all(ref.consume_token(t) for t in ids)
        return
    for seed in range(6):
        rng = random.Random(seed)
        ours = constrain.json_schema(schema).matcher(enc)
        ref = LLMatcher(_lltokenizer(NAME), grm, log_level=0)
        token = rng.choice(sorted(a))
        for step in range(1, 40):
            assert ours.consume(token) and ref.consume_token(token)
            if ours.is_stopped():
                break
            _check_same(NAME, f"endless {k}/{seed}", step, ours, ref, rng, full_allowed=False)
            token = rng.choice(ours.allowed())


def test_only_endless_objects_unsatisfiable():
    """A schema whose every value is an endless object: llguidance compiles it (its masks lead
    only deeper), anytok says no JSON value satisfies it."""
    schema = {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert not ref.is_error()
    with pytest.raises(constrain.ConstraintError, match="unsatisfiable.*nests without end"):
        constrain.json_schema(schema)


# JSONSchemaBench dev-half files that anytok compiles and llguidance 1.9.1 refuses (llguidance:
# "Resource 'json-schema:///schema/lemon' is not present" for o44063's `id`-relative `$ref`s).
# jsonld, wp_29 and o72177, which llguidance refuses for its schema builder's limits, anytok
# refuses too (test_refused_as_llguidance below).
BEYOND_LLGUIDANCE = maskbench.BEYOND_LLGUIDANCE


@pytest.mark.parametrize("file", BEYOND_LLGUIDANCE)
def test_beyond_llguidance_verdicts_match_jsonschema(file):
    """Each test instance, keys in schema order, serialized compactly and consumed token by
    token: anytok accepts it all and ends accepting exactly when `jsonschema` says it is valid."""
    if not maskbench.ARCHIVE.exists():
        pytest.fail(f"{maskbench.ARCHIVE} is missing (the JSONSchemaBench dev half, /work/shared/maskbench)")
    doc = json.loads((maskbench.data_dir() / file).read_text(encoding="utf-8"))
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(doc["schema"]), log_level=0)
    assert ref.is_error()  # (if llguidance compiles it one day, tests/test_maskbench.py covers it)
    verdicts = maskbench.jsonschema_verdicts(doc, constrain.json_schema(doc["schema"]), anytok_encoding(NAME))
    assert all(a == b for a, b in verdicts), verdicts
    assert any(b for _, b in verdicts)  # (a valid instance was accepted)


@pytest.mark.parametrize("file", ["JsonSchemaStore---jsonld.json", "WashingtonPost---wp_29_Normalized.json",
                                  "Github_medium---o72177.json"])
def test_refused_as_llguidance(file):
    """Schemas llguidance's schema builder refuses (a recursive `$ref` merged with keywords
    beside it, merging nested too deeply): anytok names the same reason."""
    if not maskbench.ARCHIVE.exists():
        pytest.fail(f"{maskbench.ARCHIVE} is missing (the JSONSchemaBench dev half, /work/shared/maskbench)")
    doc = json.loads((maskbench.data_dir() / file).read_text(encoding="utf-8"))
    ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_json_schema(doc["schema"]), log_level=0)
    assert ref.is_error()
    reason = ref.get_error()
    with pytest.raises(constrain.UnsupportedFeatureError, match="llguidance rejects it too") as e:
        constrain.json_schema(doc["schema"])
    key = "circular references" if "circular" in reason else "stack level exceeded"
    assert key in reason and key in str(e.value)


# Anchors inside groups and alternatives (dev half: Github_medium---o19005's date pattern): along
# each path, a leading ^ / trailing $ pins the match; llguidance refuses anchors anywhere else.
ANCHORED = [r"^(a$)|(^b$)", r"(^a)", r"x(^a)", r"(a$)b", r"^(a|b$)", r"^(a$|b$)", r"(?:^a$)|c",
            r"(^a|b)c$", r"a?^b", r"(^a)*", r"^$", r"(a|^b)(c|d$)",
            r"^(\d{4}(-\d{2})?$)|(^\d{4}-\d{2}(T\d{2})?$)"]
ANCHOR_TEXTS = ["a", "b", "xb", "bx", "ax", "xa", "c", "xcx", "ab", "bc", "bd", "xbd", "", "2024",
                "2024-01", "x2024", "2024-01T05", "ad"]


@pytest.mark.parametrize("pattern", ANCHORED)
def test_anchors_in_groups_as_llguidance(pattern):
    """Compile status and every text's verdict (token by token, then is_accepting) equal
    llguidance's for patterns with anchors inside groups and alternatives."""
    schema = {"type": "string", "pattern": pattern}
    enc, tok = anytok_encoding(NAME), _lltokenizer(NAME)
    grammar = LLMatcher.grammar_from_json_schema(schema)
    if LLMatcher(tok, grammar, log_level=0).is_error():
        with pytest.raises(constrain.UnsupportedFeatureError, match="look-around"):
            constrain.json_schema(schema)
        return
    compiled = constrain.json_schema(schema)
    for text in ANCHOR_TEXTS:
        ref, ours = LLMatcher(tok, grammar, log_level=0), compiled.matcher(enc)
        verdicts = []
        for t in enc.encode(json.dumps(text)):
            verdicts.append((ref.consume_token(t), ours.consume(t)))
            if not all(verdicts[-1]):
                break
        else:
            verdicts.append((ref.is_accepting(), ours.is_accepting()))
        assert all(a == b for a, b in verdicts), (text, verdicts)
