"""Terminal-level rule trees -> expressions of one `derivatives.ExprSet` (the builder's lexeme
compiler, the only tree -> expression lowering), and the few questions a front end may ask of
them while it builds them.

Data flow: a front end (the JSON Schema compiler, `json/compile.py`; a one-lexeme grammar from
`builder.GrammarBuilder`; every lexeme of an Earley grammar, from `builder._Builder.compile`,
its terminals inlined by `_Builder.tree`, its special tokens `("toklex", j)` and its `%json`s
the JSON compiler's trees in the grammar's expression set) writes rule trees (the builder's node kinds, see `builder.py`), named
recursive rules among them (`("rec", name)`, bodies in the `rules` dict it shares with a
`Terminals`), and asks `lower(tree)` for the expression of a tree, `empty(tree)` whether it
matches nothing.  `lower` walks the tree iteratively (objects with thousands of properties nest
that deep), memoized by node identity (a tree is a DAG: a subtree used twice is lowered once),
and calls the expression set's constructors; a rule is created (`ExprSet.new_rule`, its
nullability found by a least fixpoint over the rules it reaches) the first time a tree uses
it, and its body lowered after the tree (so rule chains do not recurse), or before anything
that derives (`and`, `not`, `conj`, `minus`, `nostart`: derivatives need every rule body).
`freeze()` / `fork()` keep lowered trees (and the derivatives computed on them) for many
constraints: the JSON compiler's per-process template of JSON's punctuation and scalars.

What the engine is asked here, beside building (the declared analysis interface): `empty`
(does a tree match nothing; product budgets raise OverflowError), `probe` (a tree's full-match
test on byte strings, in an expression set of its own) and `finish` (check the rules for left
recursion and drop those matching no finite string, see `ExprSet.check_rules`).
"""

from __future__ import annotations

from . import derivatives as D
from . import regex_syntax as R
from .errors import GrammarLimitError, GrammarSyntaxError

EMPTY = ("seq", [])  # the empty string
NOTHING = ("alt", [])  # no string

# node kinds with children: kind -> the child nodes of a node of that kind
_LISTS = ("seq", "alt")
_ONE = ("rep", "not", "minus", "nostart")

_PARSED: dict = {}  # (regex text, flags, max_nesting) -> its regex_syntax tree (per process: regexes recur)


def children(node) -> list:
    """The child trees of `node`."""
    k = node[0]
    if k == "and":  # (`not` items: a difference with their inside)
        return [x[1] if x[0] == "not" else x for x in node[1]]
    if k in _LISTS:
        return node[1]
    if k in _ONE:
        return [node[1]]
    if k == "conj":
        return node[1] + [node[2]]
    return []


class Terminals:
    """Rule trees lowered into one expression set (`es`), with `rules` (name -> tree) for the
    `("rec", name)` nodes.  `budget` bounds the products of `and` / `not` (DFA pairs) and the
    search for a common string of `conj` (tuples); past it `OverflowError`."""

    def __init__(self, rules: dict | None = None, es: "D.ExprSet | None" = None, budget: int = 5000,
                 max_nesting: int = R.MAX_NESTING):
        self.es = es if es is not None else D.ExprSet()
        self.rules = rules if rules is not None else {}
        self.budget = budget
        self.max_nesting = max_nesting  # of the regexes of `re` nodes (Limits.max_nesting)
        self.memo: dict = {}  # id(node) -> (node, expression)
        self.rule_refs: dict = {}  # rule name -> (rule index, reference expression)
        self.nullable: dict = {}  # rule name -> whether its body matches the empty string
        self.pending: list = []  # rules created, their bodies not yet lowered
        self._depth = 0
        self._checked = 0  # rules checked by `check` so far

    # -- templates ------------------------------------------------------------------------
    def freeze(self) -> "Terminals":
        """Make this a template for `fork` (not to be changed afterwards)."""
        if self.pending or self.rule_refs:
            raise AssertionError("a template holds no rules")
        self.es.freeze()
        return self

    def fork(self, rules: dict | None = None) -> "Terminals":
        """A new `Terminals` knowing every tree this frozen one lowered (the same node objects
        lower to the same expressions, with their derivatives), with its own `rules`."""
        new = Terminals(rules, self.es.fork(), self.budget, self.max_nesting)
        new.memo = dict(self.memo)
        return new

    # -- questions ------------------------------------------------------------------------
    def empty(self, node) -> bool:
        """Whether `node` matches no string (OverflowError past the budget of a product)."""
        return self.lower(node) == D.NOTHING

    def warm(self, node, states: int = 1000) -> None:
        """Compute the derivatives of up to `states` expressions reachable from `node`'s,
        grouped by target (what a template keeps for every constraint forked from it)."""
        todo, seen = [self.lower(node)], set()
        while todo and len(seen) < states:
            e = todo.pop()
            if e in seen:
                continue
            seen.add(e)
            todo.extend(self.es.derivative_groups(e))

    def finish(self, node) -> int:
        """The expression of `node`, every rule body lowered and the rules checked (`check`)."""
        return self.check(self.lower(node))

    def check(self, e: int) -> int:
        """`ExprSet.check_rules`: ConstraintError for a left-recursive rule; rules that match
        no finite string dropped (`e` rewritten without them; NOTHING if it needed them)."""
        self._drain()
        if len(self.es.rule_bodies) == self._checked:
            return e
        r = self.es.check_rules(e)
        self._checked = len(self.es.rule_bodies)
        if r != e:  # rules dropped: expressions lowered before may hold them
            self.memo.clear()
        return r

    # -- lowering -------------------------------------------------------------------------
    def lower(self, node) -> int:
        """The expression of `node` (rule bodies it needs lowered before this returns)."""
        memo = self.memo
        hit = memo.get(id(node))
        if hit is not None:
            return hit[1]
        self._depth += 1
        try:
            stack = [node]
            while stack:  # post-order, without recursion
                n = stack[-1]
                i = id(n)
                if i in memo:
                    stack.pop()
                    continue
                if type(n) is not tuple or not n:
                    raise GrammarSyntaxError(f"not a rule tree: {str(n)[:60]}")
                k = n[0]
                waiting = False
                for c in n[1] if k == "seq" or k == "alt" else children(n):
                    if id(c) not in memo:
                        stack.append(c)
                        waiting = True
                if waiting:
                    continue
                stack.pop()
                memo[i] = (n, self._node(n))
        finally:
            self._depth -= 1
        if self._depth == 0:
            self._drain()
        return memo[id(node)][1]

    def _kid(self, node) -> int:
        return self.memo[id(node)][1]

    def _node(self, n) -> int:
        es = self.es
        k = n[0]
        if k == "seq":
            r = D.EPSILON
            for x in reversed(n[1]):
                r = es.concat(self._kid(x), r)
            return r
        if k == "alt":
            return es.alt([self._kid(x) for x in n[1]])
        if k == "rep":
            return es.repeat(self._kid(n[1]), n[2], n[3])
        if k == "str":
            if n[2]:  # "i": each character's simple case folding class
                return D.compile_tree(es, ("cat", [("set", R.case_fold(((ord(c), ord(c)),))) for c in n[1]]))
            try:
                return es.literal(n[1].encode())
            except UnicodeEncodeError:  # a lone surrogate: a code point no UTF-8 text has
                return D.NOTHING
        if k == "re":
            key = (n[1], n[2], self.max_nesting)
            tree = _PARSED.get(key)
            if tree is None:
                if len(_PARSED) >= 4096:
                    _PARSED.clear()
                tree = _PARSED[key] = R.parse(f"(?{n[2]}:{n[1]})" if n[2] else n[1], self.max_nesting)
            return D.compile_tree(es, tree)
        if k == "parsed":
            return D.compile_tree(es, n[1])
        if k == "rng":
            return D.compile_ranges(es, ((n[1], n[2]),))
        if k == "bytes":
            return es.byteset(n[1])
        if k == "rec":
            return self._rule(n[1])
        if k == "toklex":  # the special-token lexeme j (see builder.token_lexeme)
            return es.literal(bytes((0xFF, n[1])))
        # the rest derive: every rule body first
        self._drain()
        if k == "and":
            pos = [x for x in n[1] if x[0] != "not"]
            neg = [self._kid(x[1]) for x in n[1] if x[0] == "not"]
            r = self._kid(pos[0]) if pos else self._any()
            for x in pos[1:]:
                r = es.intersect(r, self._kid(x), self.budget)
            for x in neg:
                r = es.difference(r, x, self.budget)
            return r
        if k == "not":  # any byte string outside (invalid UTF-8 included)
            return es.difference(self._any(), self._kid(n[1]), self.budget)
        if k == "conj":
            es.universal.add(self._kid(n[2]))
            return es.conj([self._kid(x) for x in n[1]], self.budget)
        if k == "minus":
            return es.minus_literals(self._kid(n[1]), n[2])
        if k == "nostart":
            return es.strip_leading(self.check(self._kid(n[1])), n[2])
        raise GrammarSyntaxError(f"unknown rule tree node {k!r}")

    def _any(self) -> int:
        return self.es.repeat(self.es.byteset(D.FULL_MASK), 0, None)

    def _rule(self, name: str) -> int:
        hit = self.rule_refs.get(name)
        if hit is None:
            if name not in self.rules:
                raise GrammarSyntaxError(f"undefined rule {name}")
            try:
                nullable = self._rule_nullable(name)
            except RecursionError:
                raise GrammarLimitError(f"rule {name}: a tree nested too deeply to tell whether it "
                                        "matches the empty string") from None
            hit = self.rule_refs[name] = self.es.new_rule(nullable)
            self.pending.append(name)
        return hit[1]

    def _drain(self) -> None:
        while self.pending:
            name = self.pending.pop()
            self._depth += 1
            try:
                body = self.lower(self.rules[name])
            finally:
                self._depth -= 1
            self.es.set_rule(self.rule_refs[name][0], body)

    # -- nullability of rules: a least fixpoint ------------------------------------------
    def _rule_nullable(self, name: str) -> bool:
        known = self.nullable
        if name in known:
            return known[name]
        group, guess = [name], {}
        while True:
            changed = False
            for r in list(group):
                touched: list = []
                if not guess.get(r) and self._null(self.rules[r], guess, touched):
                    guess[r] = changed = True
                for t in touched:
                    if t not in guess and t not in group:
                        group.append(t)
                        changed = True
            if not changed:
                break
        for r in group:
            known[r] = guess.get(r, False)
        return known[name]

    def _null(self, node, guess: dict, touched: list) -> bool:
        """Whether `node` matches the empty string, rules not yet known taken from `guess`
        (False when not there; each such rule listed in `touched`)."""
        k = node[0]
        if k == "seq":
            return all(self._null(x, guess, touched) for x in node[1])
        if k == "alt":
            return any(self._null(x, guess, touched) for x in node[1])
        if k == "rep":
            return node[2] == 0 or self._null(node[1], guess, touched)
        if k == "str":
            return node[1] == ""
        if k in ("rng", "bytes", "toklex"):
            return False
        if k == "rec":
            r = node[1]
            if r in self.nullable:
                return self.nullable[r]
            if r not in self.rules:
                raise GrammarSyntaxError(f"undefined rule {r}")
            touched.append(r)
            return guess.get(r, False)
        return self.es.nullable[self.lower(node)]  # regexes; products (their rules lowered first)


def probe(node):
    """A function telling whether a byte string matches `node` (a rule tree without rules), in
    an expression set of its own (for a front end's questions about constants and keys)."""
    t = Terminals()
    e = t.lower(node)
    derive, nullable = t.es.derive, t.es.nullable

    def matches(data: bytes) -> bool:
        x = e
        for b in data:
            x = derive(x, b)
            if x == D.NOTHING:
                return False
        return nullable[x]

    return matches
