"""Case-insensitive constraints fold case as llguidance 1.9.1 (Rust's regex crate) does.

For code points whose Unicode simple case folding differs from themselves (CaseFolding.txt,
statuses C and S: 1,400-odd of them; a seeded sample by default, all with ANYTOK_FULL=1), and
for each of the three spellings — a Lark literal `"c"i`, a Lark class `/[c]/i`, a regex
`(?i)c` — the first mask on o200k_base equals llguidance's, and each candidate character
(every member of anytok's folding class, the interpreter's upper/lower/casefold of `c` as mere
candidates, and a few fixed others) is accepted exactly when llguidance accepts it.  Also the
cases the issue named: `"s"i` takes `ſ` (U+017F, o200k token 70067 and byte 0xC5), `"k"i` the
Kelvin sign, `/0x[\\da-f]*/i`, `/[^a]/i` and `(?i)[a-z]+` compile and walk as in llguidance.
"""

from __future__ import annotations

import random

import pytest
from llguidance import LLMatcher

from anytok import constrain
from anytok.constrain._casefold_table import CLASSES
from conftest import FULL, anytok_encoding
from test_constrain import _lltokenizer, _ref_mask

NAME = "o200k_base"


def _classes() -> dict:
    out = {}
    for item in CLASSES.split():
        members = [int(x, 16) for x in item.split(",")]
        for cp in members:
            out[cp] = members
    return out


def _folding_cps() -> list:
    """The code points that some other code point of their class folds to: all but the folded
    target of each class (the class's member that CaseFolding.txt maps others onto)."""
    return sorted(_classes())


def _sample() -> list:
    cps = _folding_cps()
    return cps if FULL else sorted(random.Random(1947).sample(cps, 24))


def _grammars(cp: int) -> list:
    c = chr(cp)
    esc = f"\\u{{{cp:x}}}"
    lit = c.replace("\\", "\\\\").replace('"', '\\"')
    return [("lark literal", LLMatcher.grammar_from_lark(f'start: "{lit}"i'), lambda: constrain.grammar(f'start: "{lit}"i')),
            ("lark class", LLMatcher.grammar_from_lark(f"start: /[{esc}]/i"), lambda: constrain.grammar(f"start: /[{esc}]/i")),
            ("regex", LLMatcher.grammar_from_regex(f"(?i){esc}"), lambda: constrain.regex(f"(?i){esc}"))]


def _accepts(m, tokens) -> bool:
    for t in tokens:
        if not m.consume(t):
            return False
    return m.is_accepting()


def _ref_accepts(ref, tokens) -> bool:
    for t in tokens:
        if not ref.consume_token(t):
            return False
    return ref.is_accepting()


def _check(cp: int, classes: dict, enc, lltok):
    c = chr(cp)
    candidates = set(classes.get(cp, [cp]))
    for x in (c.upper(), c.lower(), c.casefold(), "a", "K", "\u212a", "\u017f", "\u0130"):
        if len(x) == 1:
            candidates.add(ord(x))
    for label, llg, build in _grammars(cp):
        ours = build().matcher(enc)
        ref = LLMatcher(lltok, llg, log_level=0)
        assert not ref.is_error(), ref.get_error()
        assert ours.mask() == _ref_mask(NAME, ref), (label, hex(cp))
        for x in sorted(candidates):
            toks = enc.encode(chr(x))
            ours = build().matcher(enc)
            ref = LLMatcher(lltok, llg, log_level=0)
            assert _accepts(ours, toks) == _ref_accepts(ref, toks), (label, hex(cp), hex(x))


def test_case_folding_classes_against_llguidance():
    enc = anytok_encoding(NAME)
    lltok = _lltokenizer(NAME)
    classes = _classes()
    for cp in _sample():
        _check(cp, classes, enc, lltok)


def test_long_s_and_kelvin():
    """`"s"i` allows `ſ`: its o200k token 70067 and its first byte's token (`\\xc5`)."""
    enc = anytok_encoding(NAME)
    lltok = _lltokenizer(NAME)
    for text, extra in (('start: "s"i', "\u017f"), ('start: "k"i', "\u212a"), ('start: "SELECT"i', "\u017fELECT")):
        ours = constrain.grammar(text).matcher(enc)
        ref = LLMatcher(lltok, LLMatcher.grammar_from_lark(text), log_level=0)
        mask = ours.mask()
        assert mask == _ref_mask(NAME, ref)
        first = enc.encode(extra)[0]
        assert mask[first >> 3] >> (first & 7) & 1, text
        assert _accepts(ours, enc.encode(extra)) and _ref_accepts(ref, enc.encode(extra))
    assert 70067 in constrain.grammar('start: "s"i').matcher(enc).allowed()


@pytest.mark.parametrize("text", [r"start: /0x[\da-f]*/i", "start: /[^a]/i", "start: /(?i)[a-z]+/",
                                  'start: "x" /[^k]+/i', r"start: /(?i)\w+/"])
def test_case_insensitive_classes_compile_and_walk(text):
    enc = anytok_encoding(NAME)
    lltok = _lltokenizer(NAME)
    ref = LLMatcher(lltok, LLMatcher.grammar_from_lark(text), log_level=0)
    assert not ref.is_error(), ref.get_error()
    ours = constrain.grammar(text).matcher(enc)
    rng = random.Random(text)
    for step in range(12):
        assert ours.mask() == _ref_mask(NAME, ref), (text, step)
        assert ours.is_accepting() == ref.is_accepting()
        allowed = ours.allowed()
        if not allowed:
            break
        t = rng.choice(allowed)
        assert ours.consume(t) and ref.consume_token(t)
    for s in ("0XaBcDeF", "ſ", "K", "KELVIN"):
        toks = enc.encode(s)
        o = constrain.grammar(text).matcher(enc)
        r = LLMatcher(lltok, LLMatcher.grammar_from_lark(text), log_level=0)
        assert _accepts(o, toks) == _ref_accepts(r, toks), (text, s)


@pytest.mark.parametrize("pattern", ["(?i)straße", "(?i)[ǅ-ǆ]+", "(?i)σ", "(?i)[^ſ]"])
def test_case_insensitive_json_pattern(pattern):
    enc = anytok_encoding(NAME)
    lltok = _lltokenizer(NAME)
    schema = {"type": "string", "pattern": "^" + pattern + "$"}
    ref = LLMatcher(lltok, LLMatcher.grammar_from_json_schema(schema), log_level=0)
    assert not ref.is_error(), ref.get_error()
    for s in ('"STRASSE"', '"STRAẞE"', '"ſtraße"', '"ǅ"', '"Dž"', '"ς"', '"Σ"', '"s"', '"S"', '"ſ"', '"x"'):
        toks = enc.encode(s)
        o = constrain.json_schema(schema).matcher(enc)
        r = LLMatcher(lltok, LLMatcher.grammar_from_json_schema(schema), log_level=0)
        assert o.mask() == _ref_mask(NAME, r)
        assert _accepts(o, toks) == _ref_accepts(r, toks), (pattern, s)
