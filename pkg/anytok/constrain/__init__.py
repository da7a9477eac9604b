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

    regex text --regex_syntax--> code-point tree --derivatives--> byte-level expressions
    (hash-consed; each is a state of a lazy DFA whose transitions are derivatives)
    JSON Schema --json/--> one grammar expression of the JSON texts it allows: lexemes
    (strings, numbers, keys, punctuation; regexes through regex_syntax, JSON-quoted) joined with
    optional whitespace, `$ref` and "any value" as rules expanded lazily by the derivatives
    Lark text --grammar--> (GBNF text --gbnf--> the same rule trees) --> lexemes + BNF --earley--> an automaton over bytes with the same
    interface as an expression set (states: Earley set + lexer state; llguidance's lexing)
    tokenizer --tokens--> flat token trie (built once, cached on the tokenizer)
    (constraint, trie) --matcher--> masks: the trie walked against a state, cached per state
    (with `slicer`: whole groups of tokens added at once where a state allows all of them)

Every constraint is thus one start expression in one `ExprSet`: a grammar state is an expression
(recursion grows it by one continuation per open nesting level), so JSON Schema and grammars
share the regex matcher, its per-state mask cache and forced tokens.  A constraint is built once
and can make matchers for any number of tokenizers; the states and the per-state masks are
shared by all matchers of the same (constraint, tokenizer).  Errors, all raised when the
constraint is built: `RegexSyntaxError` / `GrammarSyntaxError` for malformed input,
`ConstraintError` for invalid or unsatisfiable schemas, `UnsupportedFeatureError` (also a
`NotImplementedError`) naming any feature not implemented.
"""

from __future__ import annotations

import json as _json

from . import derivatives, regex_syntax
from . import gbnf as _gbnf
from . import grammar as _grammar
from .json import compile_schema as _compile_schema
from .errors import ConstraintError, GrammarLimitError, Limits, RegexSyntaxError, UnsupportedFeatureError
from .grammar import GrammarSyntaxError
from .matcher import Matcher, _Shared
from .tokens import TokenTrie

__all__ = [
    "Constraint",
    "ConstraintError",
    "GrammarLimitError",
    "GrammarSyntaxError",
    "Limits",
    "Matcher",
    "RegexSyntaxError",
    "UnsupportedFeatureError",
    "gbnf",
    "grammar",
    "json_schema",
    "regex",
]


class Constraint:
    """A compiled constraint; `matcher(tokenizer)` starts a generation."""

    def __init__(self, exprs: derivatives.ExprSet | None, start: int, description: str, per_tokenizer=None):
        self._es = exprs
        self._start = start
        self._shared: dict = {}
        self.description = description
        # a grammar with special tokens is compiled per tokenizer: trie -> (states, start)
        self._per_tokenizer = per_tokenizer

    def __repr__(self) -> str:
        return f"<anytok.constrain.Constraint {self.description}>"

    def matcher(self, tokenizer, *, eos_token: int | None = None) -> Matcher:
        """A fresh matcher over `tokenizer` (an object `anytok.get_encoding`/`anytok.load` returns).

        End-of-sequence is `eos_token` if given, else (as llguidance) the special token named
        `<|endoftext|>`, `<|end_of_text|>`, `</s>`, `<eos>` or `<｜end▁of▁sentence｜>` (for a
        tokenizer.json with several, the highest id)."""
        trie = TokenTrie.of(tokenizer, eos_token)
        sh = self._shared.get(id(trie))
        if sh is None or sh.trie is not trie:
            if self._per_tokenizer is not None:
                es, start = self._per_tokenizer(trie)
            else:
                es, start = self._es, self._start
            sh = self._shared[id(trie)] = _Shared(es, trie)
            sh.start = start
        return Matcher(sh, sh.start)


def regex(pattern: str, *, limits: Limits | None = None) -> Constraint:
    """Outputs whose bytes, as a whole, match `pattern` (Rust `regex` syntax, as llguidance).
    `limits` (`Limits(...)`) sets the budgets; past one, `GrammarLimitError` (here or from a
    matcher's methods)."""
    limits = limits or Limits()
    tree = regex_syntax.parse(pattern, limits.max_nesting)
    es = derivatives.ExprSet()
    es.set_limits(limits)
    start = derivatives.compile_tree(es, tree)
    if start == derivatives.NOTHING:
        raise ConstraintError(f"regex {pattern!r} matches nothing")
    return Constraint(es, start, f"regex {pattern!r}")


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
    es, start = _compile_schema(schema)
    es.set_limits(limits)
    text = _json.dumps(schema)
    return Constraint(es, start, "json_schema " + (text if len(text) <= 80 else text[:77] + "..."))


def gbnf(gbnf_text: str, *, limits: Limits | None = None) -> Constraint:
    """Outputs of a llama.cpp GBNF grammar (start rule `root`), as llguidance serves the Lark
    grammar its `gbnf_to_lark` makes of the same text (`gbnf.py`); `limits` as in `grammar`."""
    if not isinstance(gbnf_text, str):
        raise TypeError(f"GBNF grammar must be a str, got {type(gbnf_text).__name__}")
    rules = _gbnf.parse(gbnf_text, (limits or Limits()).max_nesting)
    es, start = _grammar._compile_rules(rules, [], {}, {}, limits)
    return Constraint(es, start, "gbnf " + repr(gbnf_text[:60]))


def grammar(lark_text: str, *, limits: Limits | None = None) -> Constraint:
    """Outputs of a grammar in llguidance's Lark dialect, lexed as llguidance lexes them
    (`grammar.py` lists the syntax, `earley.py` the parser).  `limits` (`Limits(...)`) sets the
    parser's budgets; past one, `GrammarLimitError` (here or from a matcher's methods).
    A grammar with special tokens (`<|name|>`, `<[id]>`, `<[lo-hi,...]>`, `<[^...]>`, `<[*]>`)
    is compiled for each tokenizer when `matcher()` is first called for it, so an unknown token
    name or an id past the vocabulary raises `GrammarSyntaxError` there."""
    if not isinstance(lark_text, str):
        raise TypeError(f"grammar must be a str, got {type(lark_text).__name__}")
    read = _grammar.read_grammar(lark_text, (limits or Limits()).max_nesting)
    description = "grammar " + repr(lark_text[:60])
    if read.has_tokens:  # `<|name|>`, `<[ids]>`: resolved against each tokenizer in matcher()
        _grammar.compile_read(read, limits, _grammar.ANY_VOCAB)  # (the rest checked now)
        return Constraint(None, 0, description, lambda trie: _grammar.compile_read(read, limits, trie))
    es, start = _grammar.compile_read(read, limits)
    return Constraint(es, start, description)
