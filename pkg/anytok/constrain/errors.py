"""Errors raised while building a constraint.

Every error is raised when the constraint is built (`constrain.regex(...)` and friends), never
while masks are computed: a constraint that builds is fully supported, so a mask is never wrong
because of a half-understood pattern.
"""

from __future__ import annotations


class ConstraintError(ValueError):
    """Base class: the constraint cannot be built."""


class RegexSyntaxError(ConstraintError):
    """The regular expression is malformed (as Rust's regex-syntax would reject it)."""

    def __init__(self, message: str, pattern: str, pos: int):
        super().__init__(f"{message} at offset {pos} in regex {pattern!r}")
        self.pattern = pattern
        self.pos = pos


class UnsupportedFeatureError(ConstraintError, NotImplementedError):
    """The constraint uses a feature anytok does not implement yet; `feature` names it."""

    def __init__(self, feature: str, detail: str = ""):
        msg = f"unsupported by anytok.constrain: {feature}"
        super().__init__(msg + (f" ({detail})" if detail else ""))
        self.feature = feature


class GrammarSyntaxError(ConstraintError):
    """The grammar text is malformed."""


class GrammarLimitError(ConstraintError):
    """The constraint (or the output so far) needs more work than a budget of `Limits` allows;
    the message names the budget (`Limits.<name>`), which `limits=` raises."""


class Limits:
    """Budgets on the work a constraint may do, as llguidance's `ParserLimits`: past one, the
    building function or the matcher method that needed the work raises `GrammarLimitError`
    naming it (a matcher is then left unchanged).  Pass `limits=Limits(...)` to `regex()`,
    `json_schema()`, `grammar()` or `gbnf()` to raise them.

    * `step_lexer_fuel`: lexer work in one matcher call (`mask`, `consume`, ...): each
      derivative computed costs 1, each expression (lexer state) built 16 plus its number of
      parts (what `(a?){5000}a{5000}` runs out of).
    * `step_max_items`: Earley items built in one matcher call (grammars).
    * `max_items_in_set`: items of one Earley set (ambiguity, very wide rules).
    * `max_nesting`: nesting of grammar text (parentheses, brackets, terminals naming terminals)
      and of regexes (groups, classes, stacked repetitions), at most 100 (the readers recurse).
    * `max_symbols`: nonterminals, counting what repetitions expand to (`"a"{0,10000000}`).
    * `max_nodes`: Earley sets made over the life of one constraint.
    * `max_lexer_states`: combinations of live lexemes over the life of one constraint.
    * `max_exprs`: expressions (lexer states) over the life of one constraint (memory: each
      holds a 256-entry transition row, about 2 KB).
    """

    def __init__(self, max_items_in_set: int = 10_000, max_nodes: int = 2_000_000,
                 max_lexer_states: int = 200_000, max_symbols: int = 200_000,
                 step_max_items: int = 100_000, step_lexer_fuel: int = 2_000_000,
                 max_nesting: int = 100, max_exprs: int = 1_000_000):
        self.max_items_in_set = max_items_in_set
        self.max_nodes = max_nodes
        self.max_lexer_states = max_lexer_states
        self.max_symbols = max_symbols
        self.step_max_items = step_max_items
        self.step_lexer_fuel = step_lexer_fuel
        if not 1 <= max_nesting <= MAX_NESTING_CEILING:
            raise ValueError(f"max_nesting must be between 1 and {MAX_NESTING_CEILING}: the readers "
                             "recurse a few frames per level, within Python's recursion limit")
        self.max_nesting = max_nesting
        self.max_exprs = max_exprs

    def __repr__(self) -> str:
        return "Limits(" + ", ".join(f"{k}={v}" for k, v in vars(self).items()) + ")"


# the readers (Lark, GBNF, regex) recurse a few frames per level of nesting: this keeps them
# far below Python's default recursion limit (1000), also under Pyodide
MAX_NESTING_CEILING = 100
