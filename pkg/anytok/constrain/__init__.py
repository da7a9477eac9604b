"""Token masks for constrained generation, in pure Python (llguidance's semantics).

```
>>> import anytok
>>> from anytok import constrain
>>> m = constrain.regex(r"[0-9]{1,3}").matcher(anytok.get_encoding("o200k_base"))
>>> m.consume(m.allowed()[0]), m.is_accepting()
(True, True)
```

Data flow, one module per step:

    regex text --regex_syntax--> code-point tree --derivatives--> byte-level expressions
    (hash-consed; each is a state of a lazy DFA whose transitions are derivatives)
    tokenizer --tokens--> flat token trie (built once, cached on the tokenizer)
    (constraint, trie) --matcher--> masks: the trie walked against a DFA state, cached per state

A constraint (`regex`, `json_schema`, `grammar`) is built once and can make matchers for any
number of tokenizers; the DFA and the per-state masks are shared by all matchers of the same
(constraint, tokenizer).  Errors: `RegexSyntaxError` for malformed patterns,
`UnsupportedFeatureError` (also a `NotImplementedError`) naming any feature not implemented.
"""

from __future__ import annotations

import json as _json

from . import derivatives, regex_syntax
from .errors import ConstraintError, RegexSyntaxError, UnsupportedFeatureError
from .matcher import Matcher, _Shared
from .tokens import TokenTrie

__all__ = [
    "Constraint",
    "ConstraintError",
    "Matcher",
    "RegexSyntaxError",
    "UnsupportedFeatureError",
    "grammar",
    "json_schema",
    "regex",
]


class Constraint:
    """A compiled constraint; `matcher(tokenizer)` starts a generation."""

    def __init__(self, exprs: derivatives.ExprSet, start: int, description: str):
        self._es = exprs
        self._start = start
        self._shared: dict = {}
        self.description = description

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
            sh = self._shared[id(trie)] = _Shared(self._es, trie)
        return Matcher(sh, self._start)


def regex(pattern: str) -> Constraint:
    """Outputs whose bytes, as a whole, match `pattern` (Rust `regex` syntax, as llguidance)."""
    tree = regex_syntax.parse(pattern)
    es = derivatives.ExprSet()
    start = derivatives.compile_tree(es, tree)
    if start == derivatives.NOTHING:
        raise ConstraintError(f"regex {pattern!r} matches nothing")
    return Constraint(es, start, f"regex {pattern!r}")


def json_schema(schema) -> Constraint:
    """Outputs valid against a JSON Schema (not implemented yet: raises UnsupportedFeatureError)."""
    if isinstance(schema, (str, bytes)):
        try:
            schema = _json.loads(schema)
        except ValueError as e:
            raise ConstraintError(f"JSON schema is not valid JSON: {e}") from None
    if not isinstance(schema, (dict, bool)):
        raise ConstraintError(f"JSON schema must be an object or a boolean, got {type(schema).__name__}")
    raise UnsupportedFeatureError("JSON Schema constraints", "not implemented yet; use constrain.regex")


def grammar(lark_text: str) -> Constraint:
    """Outputs of a Lark-like grammar (not implemented yet: raises UnsupportedFeatureError)."""
    if not isinstance(lark_text, str):
        raise TypeError(f"grammar must be a str, got {type(lark_text).__name__}")
    raise UnsupportedFeatureError("Lark grammar constraints", "not implemented yet; use constrain.regex")
