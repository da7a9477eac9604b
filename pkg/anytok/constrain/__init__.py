"""Token masks for constrained generation, in pure Python (llguidance's semantics).

```
>>> import anytok
>>> from anytok import constrain
>>> m = constrain.regex(r"[0-9]{1,3}").matcher(anytok.get_encoding("o200k_base"))
>>> m.consume(m.allowed()[0]), m.is_accepting()
(True, True)
>>> m = constrain.json_schema({"type": "array", "items": {"type": "integer"}}).matcher(
...     anytok.get_encoding("o200k_base"))
>>> [m.consume(t) for t in anytok.get_encoding("o200k_base").encode("[1, 2]")][-1], m.is_accepting()
(True, True)

```

Data flow, one module per step:

    regex text, JSON Schema, Lark text (--grammar-->), GBNF text (--gbnf-->)
        --> one grammar form: a `builder.GrammarBuilder` (rules of rule trees; public: build
        grammars in Python with it) --compile()--> a `Constraint` over an engine that knows
        nothing of the front end:
    a grammar that is one lexeme (a regex; a JSON Schema, `json/`: the JSON texts it allows as
    one expression: lexemes joined with optional whitespace, `$ref` and "any value" as rules
    expanded lazily) --regex_syntax--> code-point tree --derivatives--> byte-level expressions
    (hash-consed; each is a state of a lazy DFA whose transitions are derivatives)
    any other grammar --> lexemes + BNF --earley--> an automaton over bytes with the same
    interface as an expression set (`derivatives.StateSet`; states: Earley set + lexer state;
    llguidance's lexing)
    tokenizer --tokens--> flat token trie (built once, cached on the tokenizer)
    (constraint, trie) --matcher--> masks: the trie walked against a state, cached per state
    (with `slicer`: whole groups of tokens added at once where a state allows all of them)

Every constraint's states thus have one interface (`derivatives.StateSet`; in a JSON Schema's
expression recursion grows a state by one continuation per open nesting level), so regexes,
JSON Schemas and grammars share the matcher, its per-state mask cache and forced tokens.  A constraint is built once
and can make matchers for any number of tokenizers; the states and the per-state masks are
shared by all matchers of the same (constraint, tokenizer).  Errors, all raised when the
constraint is built: `RegexSyntaxError` / `GrammarSyntaxError` for malformed input,
`ConstraintError` for invalid or unsatisfiable schemas, `UnsupportedFeatureError` (also a
`NotImplementedError`) naming any feature not implemented.
"""

from __future__ import annotations

import json as _json

from . import builder
from . import gbnf as _gbnf
from . import grammar as _grammar
from .builder import GrammarBuilder
from .constraint import Constraint
from .errors import (
    ConstraintError, GrammarLimitError, GrammarSyntaxError, Limits, RegexSyntaxError, UnsupportedFeatureError,
)
from .matcher import Matcher

__all__ = [
    "Constraint",
    "ConstraintError",
    "GrammarLimitError",
    "GrammarBuilder",
    "GrammarSyntaxError",
    "Limits",
    "Matcher",
    "RegexSyntaxError",
    "UnsupportedFeatureError",
    "builder",
    "gbnf",
    "grammar",
    "json_schema",
    "regex",
]


def regex(pattern: str, *, limits: Limits | None = None) -> Constraint:
    """Outputs whose bytes, as a whole, match `pattern` (Rust `regex` syntax, as llguidance).
    `limits` (`Limits(...)`) sets the budgets; past one, `GrammarLimitError` (here or from a
    matcher's methods)."""
    g = GrammarBuilder()
    g.rule("start", builder.regex(pattern))
    return g.compile(limits, f"regex {pattern!r}")


def json_schema(schema, *, limits: Limits | None = None) -> Constraint:
    """JSON texts valid against `schema` (a dict, a bool, or JSON text), with llguidance's
    default JSON settings (see the `json` subpackage): masks equal to llguidance 1.9.1's.
    `limits` (`Limits(...)`) sets the budgets of its matchers and the nesting of its regexes."""
    limits = limits or Limits()
    if isinstance(schema, (str, bytes)):
        try:
            schema = _json.loads(schema)
        except ValueError as e:
            raise ConstraintError(f"JSON schema is not valid JSON: {e}") from None
        except RecursionError:
            raise GrammarLimitError("JSON schema text nested too deeply to read") from None
    if not isinstance(schema, (dict, bool)):
        raise ConstraintError(f"JSON schema must be an object or a boolean, got {type(schema).__name__}")
    g = GrammarBuilder()
    g.rule("start", builder.json_schema(schema))
    text = _json.dumps(schema)
    return g.compile(limits, "json_schema " + (text if len(text) <= 80 else text[:77] + "..."))


def gbnf(gbnf_text: str, *, limits: Limits | None = None) -> Constraint:
    """Outputs of a llama.cpp GBNF grammar (start rule `root`), as llguidance serves the Lark
    grammar its `gbnf_to_lark` makes of the same text (`gbnf.py`); `limits` as in `grammar`."""
    if not isinstance(gbnf_text, str):
        raise TypeError(f"GBNF grammar must be a str, got {type(gbnf_text).__name__}")
    g = GrammarBuilder()
    for name, body in _gbnf.parse(gbnf_text, (limits or Limits()).max_nesting).items():
        g.rule(name, body)
    return g.compile(limits, "gbnf " + repr(gbnf_text[:60]))


def grammar(lark_text: str, *, limits: Limits | None = None) -> Constraint:
    """Outputs of a grammar in llguidance's Lark dialect, lexed as llguidance lexes them
    (`grammar.py` lists the syntax, `earley.py` the parser).  `limits` (`Limits(...)`) sets the
    parser's budgets; past one, `GrammarLimitError` (here or from a matcher's methods).
    A grammar with special tokens (`<|name|>`, `<[id]>`, `<[lo-hi,...]>`, `<[^...]>`, `<[*]>`)
    is compiled for each tokenizer when `matcher()` is first called for it, so an unknown token
    name or an id past the vocabulary raises `GrammarSyntaxError` there."""
    if not isinstance(lark_text, str):
        raise TypeError(f"grammar must be a str, got {type(lark_text).__name__}")
    g = _grammar.read_grammar(lark_text, (limits or Limits()).max_nesting)
    return g.compile(limits, "grammar " + repr(lark_text[:60]))
