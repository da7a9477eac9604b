"""anytok.constrain.builder (the grammar form every constraint compiles to) against llguidance
1.9.1: a grammar built in Python walks exactly as llguidance walks the Lark text that says the
same, and the builder's checks raise the errors the Lark reader raises.
"""

from __future__ import annotations

import ast
import random

import pytest

from llguidance import LLMatcher

from anytok import constrain
from anytok.constrain import GrammarSyntaxError
from anytok.constrain import builder as B
from anytok.constrain import terminals as T
from anytok.constrain.grammar import read_grammar
from anytok.constrain.tokens import TokenTrie
from conftest import ROOT
from test_constrain import _lltokenizer, anytok_encoding
from test_constrain import _walk as walk

NAME = "o200k_base"


def _arith():
    g = B.GrammarBuilder()
    g.rule("start", B.seq(B.ref("expr"), B.optional(B.literal("\n"))))
    g.rule("expr", B.alt(B.ref("term"), B.seq(B.ref("expr"), B.alt(B.literal("+"), B.literal("-")), B.ref("term"))))
    g.rule("term", B.alt(B.ref("NUMBER"), B.seq(B.literal("("), B.ref("expr"), B.literal(")"))))
    g.rule("NUMBER", B.regex("[0-9]+"))
    g.ignore(B.ref("WS"))
    g.rule("WS", B.regex("[ \\t]+"))
    return g, ('start: expr "\\n"?\nexpr: term | expr ("+" | "-") term\nterm: NUMBER | "(" expr ")"\n'
               'NUMBER: /[0-9]+/\n%ignore WS\nWS: /[ \\t]+/\n')


def _attrs():
    g = B.GrammarBuilder()
    g.rule("start", B.seq(B.literal("say: "), B.ref("said"), B.literal(" | "), B.repeat(B.ref("word"), 1, 3)))
    g.rule("said", B.regex("[a-z ]*\\."), lazy=True)
    g.rule("word", B.seq(B.literal("ok", ignore_case=True), B.char_range("0", "4")))
    return g, 'start: "say: " said " | " word{1,3}\nsaid[lazy]: /[a-z ]*\\./\nword: "ok"i "0".."4"\n'


def _json_inside():
    g = B.GrammarBuilder()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    g.rule("start", B.seq(B.literal("data="), B.json_schema(schema), B.plus(B.literal(";"))))
    return g, 'start: "data=" %json ' + '{"type": "object", "properties": {"n": {"type": "integer"}}, ' \
                                         '"required": ["n"]}' + ' ";"+\n'


def _one_lexeme():
    g = B.GrammarBuilder()
    g.rule("start", B.regex("[a-c]{2,5}x?"))
    return g, "start: /[a-c]{2,5}x?/\n"


CASES = {"arith": _arith, "attributes": _attrs, "json": _json_inside, "one-lexeme": _one_lexeme}


@pytest.mark.parametrize("case", sorted(CASES))
def test_built_grammar_walks_as_llguidance_walks_the_lark_text(case):
    g, lark_text = CASES[case]()
    enc = anytok_encoding(NAME)
    for seed in range(3):
        rng = random.Random(seed)
        ref = LLMatcher(_lltokenizer(NAME), LLMatcher.grammar_from_lark(lark_text), log_level=0)
        assert not ref.is_error(), ref.get_error()
        walk(NAME, case, g.compile().matcher(enc), ref, 12, rng, rng.choice)


def test_lark_text_and_built_grammar_are_one_form():
    """`constrain.grammar` reads Lark text into the builder's form: the two arithmetic grammars
    hold the same rules, so the same constraint."""
    g, lark_text = _arith()
    read = read_grammar(lark_text)
    assert read.rules == g.rules and read.ignored == g.ignored and read.attrs == g.attrs


def test_builder_errors_are_the_readers():
    g = B.GrammarBuilder()
    g.rule("start", B.literal("a"))
    with pytest.raises(GrammarSyntaxError, match="defined twice"):
        g.rule("start", B.literal("b"))
    with pytest.raises(GrammarSyntaxError, match="unknown rule attribute"):
        g.rule("x", B.literal("b"), colour="red")
    with pytest.raises(GrammarSyntaxError, match="multiple stop/suffix"):
        g.rule("y", B.literal("b"), stop="x", suffix="y")
    h = B.GrammarBuilder()
    h.rule("start", B.ref("missing"))
    with pytest.raises(GrammarSyntaxError, match="undefined rule missing"):
        h.compile()
    for text in ('start: "a" | missing\n', 'start: missing\n'):
        with pytest.raises(GrammarSyntaxError, match="undefined rule missing"):
            constrain.grammar(text)


def test_special_tokens_and_json_are_lexemes_lowered_by_terminals():
    """A special token is the builder's `token_lexeme(j)` and a `%json` the schema's rule trees,
    both lowered by `terminals.Terminals` into the grammar's one expression set, like every
    other lexeme (a `%json` once had an expression set of its own)."""
    c = constrain.grammar('start: "x" <|endofprompt|> %json {"type": "array", "items": {"$ref": "#"}} <[5-7]>\n')
    enc = anytok_encoding(NAME)
    g = c._per_tokenizer(TokenTrie.of(enc))[0].g
    lexemes = dict(zip(g.lexeme_names, g.lexemes))
    terms = T.Terminals(es=g.es)
    assert lexemes["<|endofprompt|>"] == terms.lower(B.token_lexeme(0))
    assert lexemes["<[5-7]>"] == terms.lower(B.token_lexeme(1))
    assert g.token_ranges == [[(enc.encode_single_token("<|endofprompt|>"),) * 2], [(5, 7)]]
    e = lexemes["%json"]
    for b in b"[[], [[]]]":
        e = g.es.derive(e, b)
    assert g.es.nullable[e]
    with pytest.raises(GrammarSyntaxError, match="special_token"):
        h = B.GrammarBuilder()
        h.rule("start", B.seq(B.literal("a"), B.token_lexeme(0)))
        h.compile()


# the expression set's constructors: only `terminals.py` (and the engine) calls them
_CONSTRUCTORS = {"literal", "byteset", "concat", "alt", "repeat", "intersect", "difference", "conj",
                 "minus_literals", "strip_leading", "new_rule", "set_rule", "compile_tree", "compile_ranges"}


def test_front_ends_write_no_expressions():
    """The front ends (the builder, the Lark and GBNF readers, the JSON Schema compiler) call no
    `ExprSet` constructor: every expression comes from `terminals.Terminals`."""
    pkg = ROOT / "pkg" / "anytok" / "constrain"
    files = [pkg / n for n in ("builder.py", "grammar.py", "gbnf.py", "__init__.py")] + sorted((pkg / "json").glob("*.py"))
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CONSTRUCTORS:
                owner = ast.unparse(node.func.value)
                if owner.split(".")[-1] in ("es", "D", "derivatives") or owner.endswith("ExprSet()"):
                    found.append(f"{path.name}:{node.lineno} {ast.unparse(node)[:60]}")
    assert not found
