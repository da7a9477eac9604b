"""A compiled constraint: the engine's state set and start state, and the matchers made from it
for each tokenizer (one `_Shared` per tokenizer: states and per-state masks)."""

from __future__ import annotations

from .matcher import Matcher, _Shared
from .tokens import TokenTrie


class Constraint:
    """A compiled constraint; `matcher(tokenizer)` starts a generation.  Made by
    `GrammarBuilder.compile` (and so by `constrain.regex`, `json_schema`, `grammar`, `gbnf`):
    `exprs` is the engine's state set (`derivatives.ExprSet` or `earley.States`), `start` its
    start state, or `per_tokenizer(trie)` makes both for each tokenizer."""

    def __init__(self, exprs, start: int, description: str, per_tokenizer=None):
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
