"""A lazy DFA over bytes, built from regular-expression derivatives.

Data flow: the code-point tree of `regex_syntax.parse` is compiled (`compile_tree`) into
byte-level expressions: each code-point class becomes the alternation of its UTF-8 byte
sequences (ranges split so that every sequence is a run of byte sets, sequences sharing a first
byte set factored together).  Expressions are hash-consed: each distinct expression is a small
int id in one `ExprSet`, so equal expressions are the same state.  Kinds:

    NOTHING (id 0, matches no string)   EPSILON (id 1, the empty string)
    ("b", mask)       one byte out of the 256-bit set `mask`
    ("c", a, b)       concatenation (right-nested)
    ("o", ids)        alternation (sorted, flattened, no duplicates, no NOTHING)
    ("r", a, lo, hi)  repetition, hi None for unbounded
    ("x", k)          rule k of a grammar: its body, expanded only when derived (so a body may
                      refer to its own rule, as JSON values nest inside arrays and objects)
    ("f", i, started) the end of a grammar with ignored lexemes (`end_marker`): `i` is the state
                      of the ignored run after it; see below
    ("a", ids)        intersection (`conj`): the strings every one of `ids` matches (sorted, no
                      nested intersections); made only when some string is left (see below)

The derivative of an expression by a byte is the expression matching the rest of every string
it matches that starts with the byte.  A state of the DFA is an expression id; its transition by
a byte, computed on first use and stored in the state's 256-entry row, is its derivative's id.
Every expression other than NOTHING matches some string: a state is dead exactly when it is
NOTHING, and live states can always reach acceptance.  A state accepts (is "nullable") when it
matches the empty string.  Intersections keep this so: `conj` (and the derivative of an
intersection, which is the intersection of the derivatives) first searches the pairs (tuples) of
derivatives for one that accepts, breadth first, and gives NOTHING when none is reachable (the
lazy counterpart of llguidance's derivre "relevance" check: the product automaton is never built,
only the tuples a walk reaches; `intersect` builds it whole).  The search is cached (tuples on a
path to acceptance are live, every tuple of a search that found none is dead); `conj(..., budget)`
bounds it when the constraint is built.

Rules (`new_rule` / `set_rule`) turn the expressions into a grammar: a rule's body is only
looked at when a derivative or nullability needs it, so recursive rules are fine as long as no
rule can reach itself without consuming a byte first (no left recursion; the grammar builders
check this) and every rule matches some string (`check_rules` drops those matching none), which
keeps "dead = NOTHING" true.
A state of such a grammar is still one hash-consed expression: the derivative of a rule
reference is the derivative of its body, so nesting grows the expression by one continuation per
open level.  `minus_literals` and `strip_leading` build, from derivatives, expressions that leave
out given strings or given first bytes (what JSON object keys and top-level whitespace need).

llguidance lets ignored lexemes (Lark's `%ignore`) follow the last lexeme of a complete output
only where another lexeme could still follow (`a ` is complete for `start: "a" "b"?`, not for
`start: "a"`).  `end_marker(i)` put at the end of the start rule models that: it is nullable,
it moves through ignored bytes with the rest of the state, but a state made only of started end
markers is NOTHING (so the ignored bytes are allowed only next to a live continuation).
"""

from __future__ import annotations

NOTHING = 0
EPSILON = 1
FULL_MASK = (1 << 256) - 1
# The row of an expression no derivative of which is known yet, shared until the first one is
# (a forced-byte walk makes an expression per byte and derives most of them by one byte only:
# a 256-entry list each would be most of its memory and time)
UNKNOWN_ROW = (-1,) * 256
# Fuel for an expression's own row, made at its first derivative: its memory (~2 KB), as much
# work again as the expression (a forced-byte walk makes one per byte, and little else)
ROW_FUEL = 16
# Alternations of this many members are derived through an index of their members' first bytes.
ALT_INDEX_MIN = 8


class StateSet:
    """What the matcher (`matcher.py`), the token trie walk and the slicer ask of a set of
    states: an `ExprSet` (regexes, JSON Schemas, one-lexeme grammars) or an `earley.States`
    (grammars).  States are ints (0: dead); every state set has `nullable[s]` (accepting),
    `rows` (per state, 256 derivative ids, -1 not yet known), `derive(s, byte)`,
    `viable_bytes(s)`, `canonical(s)` and `truncated(s, depth)` (keys of the matcher's caches) and `refuel()`
    (a new work budget per matcher call).

    The optional features below are declared here with the values of a state set without them;
    a state set that has one sets it (and overrides the methods it needs)."""

    #: special-token lexemes: lexeme j (`\xff` + byte j) allows the token ids in the inclusive
    #: ranges `token_ranges[j]`; with any, `special_next` / `special_consume` serve them
    token_ranges: list = ()
    #: `stop=` lexemes: barrier state -> the state the matcher continues from after the token
    barrier: dict | None = None
    #: `max_tokens=` lexemes: the matcher counts tokens (`is_boundary`, `is_fresh`, `limit_max_tokens`)
    has_max_tokens = False
    #: `%llguidance {"no_forcing": true}`: nothing forced
    no_forcing = False
    #: `stop=""` lexemes: end-of-sequence may end a lexeme (`eos_end`)
    has_eos_ending = False
    #: expression -> an infinite expression it equals but for finitely many strings (the slicer
    #: keeps such states live without exploring them); None: no such facts
    minus_base: dict | None = None

    def derive_class(self, s: int, byte: int) -> int:
        """`derive(s, byte)`, also stored in the row of `s` for the bytes that no byte set
        tells apart from `byte` (they have the same derivative): a trie walk or a slicer's
        check meets most bytes of a class and then derives once, not once per byte."""
        return self.derive(s, byte)

    def canonical(self, s: int):
        """A key equal for states with the same future (the same strings lead each to a
        match, and to the same forced bytes): the matcher's caches of forced bytes and masks
        are keyed by it.  Here the state itself."""
        return s

    def special_next(self, s: int) -> list:
        """The token-range lexemes that may come next in state `s`."""
        return []

    def special_consume(self, s: int, token: int) -> int:
        """The state after special token `token` in state `s` (0: not allowed)."""
        return 0

    def eos_end(self, s: int) -> int:
        """The state after end-of-sequence ends the pending lexeme in `s` (0: it may not)."""
        return 0


class ExprSet(StateSet):
    """Hash-consed expressions with cached nullability and derivatives (one per regex)."""

    def __init__(self):
        self.exprs: list = [("n",), ("e",)]
        self.ids: dict = {("n",): 0, ("e",): 1}
        self.nullable: list = [False, True]
        self.rows: list = [[0] * 256, [0] * 256]  # per state: 256 derivative ids, -1 = not yet known
        self.rule_bodies: list = []  # rule k -> expression id of its body (None until set)
        self._minus: dict = {}
        # expression id -> an expression whose strings it holds, finitely many left out: every
        # result of `minus_literals` with strings left out (see `Slicer`: such a state, when its
        # base is infinite after every string of a slice, is never dead after one)
        self.minus_base: dict = {}
        self.slice_facts: dict = {}  # (slice pattern, base) -> see `_Slice.keeps_infinite`
        self._trunc: dict = {}  # depth -> {expression id: truncated id}
        self._conj_live: set = set()  # component tuples known to have a common string
        self._conj_dead: set = set()  # ... known to have none
        self._masks: list = []  # the byte sets made so far, in order
        self._class_of: list = [0] * 256  # byte -> its class: bytes no byte set tells apart
        self._classes_for = 0  # how many of `_masks` `_class_of` has split by
        self._reps: tuple = (0,)  # the first byte of each class
        self._class_bytes: list = [list(range(256))]  # the bytes of each class, ascending
        self._rep_rows: dict = {}  # expression id -> its derivatives by the bytes of `_reps`
        # expressions that every expression given to `conj` is a subset of (a caller's promise;
        # JSON strings: any JSON string body), left out of intersections with others
        self.universal: set = set()
        self._first: dict = {}  # expression id -> 256-bit set of the bytes it may start with
        self._heads: dict = {}  # expression id -> `head_masks`
        self._alt_index: dict = {}  # alternation id -> ([(first bytes, member)], {byte: members})
        self._groups: dict = {}  # expression id -> {derivative (not NOTHING): mask of the bytes to it}
        self._ranges: dict = {}  # code point ranges -> their expression (compile_ranges)
        # budgets (`errors.Limits`, set by `set_limits`): `fuel` is the work left in this matcher
        # call (None: unbounded, as while a constraint is built), refilled to `step_fuel` by
        # `refuel`; each new expression costs 16 plus its number of parts (its memory), each
        # derivative computed 1 plus the number of parts it looked at; `max_exprs` always holds
        self.fuel = None
        self.step_fuel = None
        self.max_exprs = 1 << 62

    def freeze(self) -> "ExprSet":
        """Make this set a template for `fork` (it must not be changed afterwards)."""
        self._partial = [i for i, r in enumerate(self.rows) if r is not UNKNOWN_ROW and -1 in r]
        return self

    def fork(self) -> "ExprSet":
        """A new set holding this frozen set's expressions and everything known of them (what
        many constraints share, e.g. a JSON schema's strings and numbers, made and derived once
        per process), sharing nothing either changes: rows are shared except those with
        unknown entries (a row is written only where unknown, or replaced whole)."""
        new = object.__new__(type(self))
        d = new.__dict__
        for k, v in self.__dict__.items():
            d[k] = v.copy() if isinstance(v, (list, dict, set)) else v
        rows = new.rows
        for i in self._partial:
            rows[i] = list(rows[i])
        new._alt_index = {e: (firsts, dict(by_byte)) for e, (firsts, by_byte) in self._alt_index.items()}
        new._trunc = {k: dict(v) for k, v in self._trunc.items()}
        return new

    def set_limits(self, limits) -> None:
        """Bound the work of later matcher calls by `limits` (an `errors.Limits`)."""
        self.step_fuel = limits.step_lexer_fuel
        self.max_exprs = limits.max_exprs

    def refuel(self) -> None:
        """A matcher call starts: its work may use `step_fuel` again."""
        self.fuel = self.step_fuel

    def _out_of_fuel(self):
        from .errors import GrammarLimitError

        if len(self.exprs) >= self.max_exprs:
            raise GrammarLimitError(f"more than {self.max_exprs:,} expressions built for one constraint "
                                    "(Limits.max_exprs)")
        raise GrammarLimitError(f"too many expressions built in one step: lexer fuel {self.step_fuel:,} used up "
                                "(Limits.step_lexer_fuel)")

    # -- constructors ----------------------------------------------------------------------
    def _intern(self, key, nullable: bool) -> int:
        i = self.ids.get(key)
        if i is None:
            i = len(self.exprs)
            if self.fuel is not None or i >= self.max_exprs:
                if self.fuel is not None:
                    self.fuel -= 16 + (len(key[1]) if key[0] == "o" or key[0] == "a" else 0)
                if self.fuel is not None and self.fuel < 0 or i >= self.max_exprs:
                    self.fuel = 0
                    self._out_of_fuel()
            self.exprs.append(key)
            self.ids[key] = i
            self.nullable.append(nullable)
            self.rows.append(UNKNOWN_ROW)
        return i

    def byteset(self, mask: int) -> int:
        if mask == 0:
            return NOTHING
        n = len(self.exprs)
        i = self._intern(("b", mask), False)
        if i == n:
            self._masks.append(mask)
        return i

    def concat(self, a: int, b: int) -> int:
        if a == NOTHING or b == NOTHING:
            return NOTHING
        if a == EPSILON:
            return b
        if b == EPSILON:
            return a
        exprs, nullable = self.exprs, self.nullable
        heads = []
        while exprs[a][0] == "c":  # keep concatenations right-nested (iteratively: no recursion)
            heads.append(exprs[a][1])
            a = exprs[a][2]
        r = self._intern(("c", a, b), nullable[a] and nullable[b])
        for h in reversed(heads):
            r = self._intern(("c", h, r), nullable[h] and nullable[r])
        return r

    def alt(self, items) -> int:
        seen = set()
        for i in items:
            if i == NOTHING:
                continue
            e = self.exprs[i]
            if e[0] == "o":
                seen.update(e[1])
            else:
                seen.add(i)
        exprs = self.exprs
        if self.fuel is not None:  # (its members are flattened and sorted, even when it exists)
            self.fuel -= len(seen)
        if all(exprs[i][0] == "f" and exprs[i][2] for i in seen):  # also when empty
            return NOTHING
        if len(seen) == 1:
            return next(iter(seen))
        ids = tuple(sorted(seen))
        return self._intern(("o", ids), any(self.nullable[i] for i in ids))

    def repeat(self, a: int, lo: int, hi: int | None) -> int:
        if hi == 0 or a == EPSILON:
            return EPSILON
        if a == NOTHING:
            return EPSILON if lo == 0 else NOTHING
        if lo == 1 and hi == 1:
            return a
        return self._intern(("r", a, lo, hi), lo == 0 or self.nullable[a])

    def conj(self, items, budget: int | None = None) -> int:
        """The strings every expression of `items` matches, as one lazy expression (NOTHING when
        there are none).  Raises OverflowError when deciding that takes more than `budget`
        tuples of derivatives (None: no bound)."""
        exprs = self.exprs
        comps: set = set()
        for i in items:
            if i == NOTHING:
                return NOTHING
            x = exprs[i]
            if x[0] == "a":
                comps.update(x[1])
            else:
                comps.add(i)
        if len(comps) > 1 and not comps <= self.universal:
            comps -= self.universal
        if len(comps) == 1:
            return next(iter(comps))
        t = tuple(sorted(comps))
        key = ("a", t)
        i = self.ids.get(key)
        if i is not None:
            return i
        if not self._conj_nonempty(t, budget):
            return NOTHING
        return self._intern(key, all(self.nullable[c] for c in t))

    def byte_classes(self) -> tuple:
        """(class of each byte, first byte of each class): bytes that every byte set made so
        far treats alike have the same derivatives, for every expression made so far (a byte
        is looked at only through byte sets, and first-byte sets are unions of them)."""
        masks = self._masks
        if self._classes_for != len(masks):  # split the classes by the byte sets made since
            # (as 256-bit sets: a byte set splits only the classes it cuts, few per set)
            sets = [sum(1 << b for b in bs) for bs in self._class_bytes]
            new = masks[self._classes_for:]
            single = 0  # one-byte sets (literals' bytes), all at once: each its own class
            for m in new:
                if not m & (m - 1):
                    single |= m
            if single:
                split = []
                for c in sets:
                    a = c & single
                    if a and a != c or a & (a - 1):
                        while a:
                            low = a & -a
                            split.append(low)
                            a ^= low
                        if c & ~single:
                            split.append(c & ~single)
                    else:
                        split.append(c)
                sets = split
            for m in new:
                if m & (m - 1):
                    sets = split_by(sets, m)
            sets.sort(key=lambda c: c & -c)  # numbered by first byte, as before
            cls = [0] * 256
            class_bytes = []
            for i, c in enumerate(sets):
                bs = []
                while c:
                    low = c & -c
                    b = low.bit_length() - 1
                    bs.append(b)
                    cls[b] = i
                    c ^= low
                class_bytes.append(bs)
            self._class_of, self._classes_for = cls, len(masks)
            self._class_bytes = class_bytes
            reps = tuple(m[0] for m in self._class_bytes)
            if reps != self._reps:
                self._reps, self._rep_rows = reps, {}
        return self._class_of, self._reps

    def derive_class(self, e: int, byte: int) -> int:
        r = self.derive(e, byte)
        cls, _ = self.byte_classes()
        members = self._class_bytes[cls[byte]]
        if len(members) > 1:
            row = self.rows[e]  # (a list once derived)
            for b in members:
                row[b] = r
        return r

    def _rep_row(self, e: int) -> tuple:
        """The derivatives of `e` by one byte of each byte class (`byte_classes`)."""
        self.byte_classes()
        r = self._rep_rows.get(e)
        if r is None:
            d = self.derive
            first = self.first_bytes(e)  # (the other classes' derivatives are NOTHING)
            r = self._rep_rows[e] = tuple(d(e, b) if first >> b & 1 else NOTHING for b in self._reps)
        return r

    def _conj_nonempty(self, start: tuple, budget: int | None) -> bool:
        """Whether the expressions of `start` (none NOTHING, none an intersection) have a common
        string: a breadth-first search over tuples of their derivatives for one that accepts."""
        live, dead, nullable = self._conj_live, self._conj_dead, self.nullable
        if start in live:
            return True
        if start in dead:
            return False
        parent = {start: None}
        queue = [start]
        found = None
        if all(nullable[c] for c in start):
            found = start
        qi = 0
        while found is None and qi < len(queue):
            t = queue[qi]
            qi += 1
            for nt in set(zip(*[self._rep_row(c) for c in t])):
                if NOTHING in nt:
                    continue
                nt = tuple(sorted(set(nt)))
                if nt in parent or nt in dead:
                    continue
                parent[nt] = t
                if len(nt) == 1 or nt in live or all(nullable[c] for c in nt):
                    found = nt  # (one expression left: it matches some string)
                    break
                queue.append(nt)
                if budget is not None and len(parent) > budget:
                    raise OverflowError("intersection too large to decide")
        if found is None:
            dead.update(parent)
            return False
        while found is not None:
            live.add(found)
            found = parent[found]
        return True

    def end_marker(self, ignored: int) -> int:
        """The end marker over the ignored-run expression `ignored` (see the module docstring)."""
        return self._intern(("f", ignored, False), True)

    def new_rule(self, nullable: bool = False) -> tuple[int, int]:
        """A rule whose body is set later: (rule index, expression id of a reference to it).
        `nullable` must be what the body turns out to be (`set_rule` checks)."""
        k = len(self.rule_bodies)
        self.rule_bodies.append(None)
        return k, self._intern(("x", k), nullable)

    def set_rule(self, k: int, body: int) -> None:
        ref = self.ids[("x", k)]
        if self.nullable[body] != self.nullable[ref]:
            raise AssertionError("rule nullability declared wrong")
        self.rule_bodies[k] = body

    def check_rules(self, top: int) -> int:
        """Raise ConstraintError if a rule can reach itself without consuming a byte (left
        recursion: derivatives would not terminate).  Rules that match no finite string (a
        required property recursing forever) are dropped: returns `top` rewritten without them,
        NOTHING when it matched only through them."""
        from .errors import ConstraintError

        exprs, nullable = self.exprs, self.nullable
        heads: list = []
        for body in self.rule_bodies:
            if body is None:
                raise AssertionError("rule without a body")
            out, seen, todo = set(), set(), [body]
            while todo:
                e = todo.pop()
                if e in seen:
                    continue
                seen.add(e)
                x = exprs[e]
                if x[0] == "c":
                    todo.append(x[1])
                    if nullable[x[1]]:
                        todo.append(x[2])
                elif x[0] == "o":
                    todo.extend(x[1])
                elif x[0] == "r":
                    todo.append(x[1])
                elif x[0] == "x":
                    out.add(x[1])
            heads.append(out)
        state = [0] * len(heads)  # 0 new, 1 on the stack, 2 done
        for root in range(len(heads)):
            if state[root]:
                continue
            stack = [(root, iter(heads[root]))]
            state[root] = 1
            while stack:
                k, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[k] = 2
                    stack.pop()
                elif state[nxt] == 1:
                    raise ConstraintError("left-recursive rule (a rule reaches itself before any byte)")
                elif state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, iter(heads[nxt])))
        productive: set = set()
        while True:
            memo: dict = {}

            def prod(e: int) -> bool:
                r = memo.get(e)
                if r is None:
                    x = exprs[e]
                    k = x[0]
                    if k in ("b", "e", "f", "a"):
                        r = True
                    elif k == "n":
                        r = False
                    elif k == "c":  # along the chain, without recursion
                        r, y = True, e
                        while exprs[y][0] == "c" and r:
                            r = prod(exprs[y][1])
                            y = exprs[y][2]
                        r = r and prod(y)
                    elif k == "o":
                        r = any(prod(i) for i in x[1])
                    elif k == "r":
                        r = x[2] == 0 or prod(x[1])
                    else:
                        r = x[1] in productive
                    memo[e] = r
                return r

            new = {k for k, body in enumerate(self.rule_bodies) if k not in productive and prod(body)}
            if not new:
                break
            productive |= new
        if len(productive) != len(self.rule_bodies):
            return self._drop_rules(set(range(len(self.rule_bodies))) - productive, top)
        return top

    def _drop_rules(self, dead: set, top: int) -> int:
        """Rewrite the rule bodies and `top` with the rules of `dead` (those matching no finite
        string) as NOTHING, so that "dead = NOTHING" holds again; the strings matched stay the
        same.  Derivatives and facts cached on the old expressions are dropped."""
        exprs, memo = self.exprs, {}
        for root in [top] + [b for k, b in enumerate(self.rule_bodies) if k not in dead]:
            stack = [root]
            while stack:  # post-order, without recursion (concatenations may be long)
                e = stack[-1]
                if e in memo:
                    stack.pop()
                    continue
                x = exprs[e]
                kind = x[0]
                kids = (x[1], x[2]) if kind == "c" else x[1] if kind in ("o", "a") else (x[1],) if kind == "r" else ()
                todo = [c for c in kids if c not in memo]
                if todo:
                    stack.extend(todo)
                    continue
                stack.pop()
                if kind == "x":
                    memo[e] = NOTHING if x[1] in dead else e
                elif kind == "c":
                    memo[e] = self.concat(memo[x[1]], memo[x[2]])
                elif kind == "o":
                    memo[e] = self.alt([memo[c] for c in x[1]])
                elif kind == "a":
                    memo[e] = self.conj([memo[c] for c in x[1]])
                elif kind == "r":
                    memo[e] = self.repeat(memo[x[1]], x[2], x[3])
                else:
                    memo[e] = e
        for k, b in enumerate(self.rule_bodies):
            self.rule_bodies[k] = NOTHING if k in dead else memo[b]
        self.rows[2:] = [UNKNOWN_ROW] * (len(self.rows) - 2)
        for cache in (self._minus, self.minus_base, self.slice_facts, self._trunc, self._rep_rows,
                      self._first, self._heads, self._alt_index):
            cache.clear()
        return memo[top]

    def intersect(self, a: int, b: int, budget: int = 5000) -> int:
        """The strings both `a` and `b` match.

        Built as a DFA of pairs of derivatives, explored from (a, b); pairs that cannot reach a
        pair accepting in both are dropped, and each remaining pair becomes a rule whose body
        is its transitions (`byte set, next rule`), so the result keeps "dead = NOTHING".
        Raises OverflowError past `budget` pairs (the pairs must be finitely many: true for
        regular expressions, and for rules as long as one side is regular)."""
        return self._product(a, b, True, budget)

    def difference(self, a: int, b: int, budget: int = 5000) -> int:
        """The strings `a` matches and `b` does not (as `intersect`)."""
        return self._product(a, b, False, budget)

    def _product(self, a: int, b: int, both: bool, budget: int) -> int:
        index = {(a, b): 0}
        pairs = [(a, b)]
        edges: list = []
        # one derivative per byte class (derivatives make no new byte sets: the classes hold
        # throughout), only of the classes `x` may start with; classes in order of first byte
        _, reps = self.byte_classes()
        cmasks = [sum(1 << b for b in bs) for bs in self._class_bytes]
        i = 0
        while i < len(pairs):
            x, y = pairs[i]
            i += 1
            out: dict = {}
            first = self.first_bytes(x)
            for c, byte in enumerate(reps):
                if not first >> byte & 1:
                    continue
                dx = self.derive(x, byte)
                if dx == NOTHING:
                    continue
                dy = self.derive(y, byte)
                if dy == NOTHING and both:
                    continue
                j = index.get((dx, dy))
                if j is None:
                    if len(pairs) >= budget:
                        raise OverflowError("intersection too large")
                    j = index[(dx, dy)] = len(pairs)
                    pairs.append((dx, dy))
                out[j] = out.get(j, 0) | cmasks[c]
            edges.append(out)
        accepting = [self.nullable[x] and self.nullable[y] == both for x, y in pairs]
        live = {k for k, acc in enumerate(accepting) if acc}
        changed = True
        while changed:
            changed = False
            for k, out in enumerate(edges):
                if k not in live and any(j in live for j in out):
                    live.add(k)
                    changed = True
        if 0 not in live:
            return NOTHING
        rules = {k: self.new_rule(accepting[k]) for k in live}
        for k in live:
            parts = [self.concat(self.byteset(mask), rules[j][1]) for j, mask in edges[k].items() if j in live]
            if accepting[k]:
                parts.append(EPSILON)
            self.set_rule(rules[k][0], self.alt(parts))
        return rules[0][1]

    def literal(self, data: bytes) -> int:
        r = EPSILON
        for b in reversed(data):
            r = self.concat(self.byteset(1 << b), r)
        return r

    def _by_first_byte(self, e: int, keep):
        """{(derivative, key): mask of first bytes} over the bytes `keep(b)` returns a key for."""
        groups: dict = {}
        for b, d in enumerate(self.full_row(e)):
            if d == NOTHING:
                continue
            key = keep(b)
            if key is None:
                continue
            groups[(d, key)] = groups.get((d, key), 0) | 1 << b
        return groups

    def minus_literals(self, e: int, excluded: frozenset) -> int:
        """The strings of `e` other than the byte strings in `excluded`."""
        if not excluded:
            return e
        key = (e, excluded)
        r = self._minus.get(key)
        if r is None:
            # the excluded strings by first byte, once (not once per byte)
            tails: dict = {}
            for x in excluded:
                if x:
                    tails.setdefault(x[0], []).append(x[1:])
            # the bytes grouped by derivative (once per expression), the first bytes of excluded
            # strings split off (the other groups' parts cached per state and split bytes: a
            # key's trie node after a common byte costs one part, not one per group)
            row = self.full_row(e)
            skip = 0
            split: dict = {}
            for b, t in tails.items():
                d = row[b]
                if d == NOTHING:
                    continue
                skip |= 1 << b
                k = (d, frozenset(t))
                split[k] = split.get(k, 0) | 1 << b
            parts = {self.concat(self.byteset(mask), self.minus_literals(d, k)) for (d, k), mask in split.items()}
            if self.nullable[e] and b"" not in excluded:
                parts.add(EPSILON)
            parts.discard(NOTHING)
            # (an alternation made here directly: every part is a byte set then something, or
            # the empty string, none an alternation, and the other groups' parts are distinct
            # from the split bytes' ones)
            parts.update(self._minus_rest(e, skip))
            if len(parts) > 1:
                ids = tuple(sorted(parts))
                r = self._intern(("o", ids), EPSILON in parts) if self.fuel is None else self.alt(ids)
            else:
                r = parts.pop() if parts else NOTHING
            self._minus[key] = r
            if r > EPSILON:
                self.minus_base.setdefault(r, e)
        return r

    def _minus_rest(self, e: int, skip: int) -> tuple:
        """The parts of `e` after a first byte outside the 256-bit set `skip`: (bytes, derivative)."""
        key = (e, skip)
        r = self._minus.get(key)
        if r is None:
            # each group is a union of byte classes and each split byte is made a class of its
            # own, so each part's byte set is a union of classes: it splits none, and is left
            # out of `_masks` (a key's letters would each add one to split by)
            b = skip
            while b:
                low = b & -b
                self.byteset(low)
                b ^= low
            parts = []
            for d, m in self.derivative_groups(e).items():
                m &= ~skip
                if m:
                    parts.append(self.concat(self._intern(("b", m), False), d))
            r = self._minus[key] = tuple(parts)
        return r

    def strip_leading(self, e: int, first_mask: int) -> int:
        """The strings of `e` that do not start with a byte of the 256-bit set `first_mask`."""
        # only the bytes `e` may start with, one derivative per byte class (a schema's top is
        # an object or two: one first byte, not one derivative per class of the whole set)
        keep = self.first_bytes(e) & ~first_mask
        cls, reps = self.byte_classes()
        groups: dict = {}
        while keep:
            b = (keep & -keep).bit_length() - 1
            c = self._class_bytes[cls[b]]
            d = self.derive(e, reps[cls[b]])
            m = sum(1 << x for x in c) & keep
            keep &= ~m
            if d != NOTHING:
                groups[d] = groups.get(d, 0) | m
        parts = [self.concat(self.byteset(mask), d) for d, mask in groups.items()]
        if self.nullable[e]:
            parts.append(EPSILON)
        return self.alt(parts)

    def truncated(self, e: int, depth: int) -> int:
        """An expression that agrees with `e` on every string of at most `depth` bytes, both on
        being a prefix of a match and on being a match: `e` with every repetition count above
        `depth + 1` lowered to `depth + 1` (an iteration that is not empty takes a byte, so no
        string that short can tell the counts apart).  The matcher keys its masks by it: tokens
        are at most `depth` bytes long, so the states of `[a-z ]{0,300}` left with 129 to 300
        repetitions share one mask for a vocabulary whose longest token has 128 bytes.  Only a
        key: never derived from in place of `e`."""
        memo = self._trunc.get(depth)
        if memo is None:
            memo = self._trunc[depth] = {}
        r = memo.get(e)
        if r is not None:
            return r
        exprs, cap = self.exprs, depth + 1
        stack = [e]  # children first, from an explicit stack (states nest as deep as the output)
        while stack:
            n = stack[-1]
            if n in memo:
                stack.pop()
                continue
            x = exprs[n]
            k = x[0]
            if k == "c":
                heads = []
                y = n
                while exprs[y][0] == "c":
                    heads.append(exprs[y][1])
                    y = exprs[y][2]
                kids = heads + [y]
            elif k == "o":
                kids = list(x[1])
            elif k == "r":
                kids = [x[1]]
            else:  # bytes, rules (their bodies are not looked into), end markers: as they are
                stack.pop()
                memo[n] = n
                continue
            missing = [c for c in kids if c not in memo]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            if k == "c":
                r = memo[kids[-1]]
                for h in reversed(kids[:-1]):
                    r = self.concat(memo[h], r)
            elif k == "o":
                r = self.alt([memo[i] for i in kids])
            else:
                lo, hi = x[2], x[3]
                r = self.repeat(memo[x[1]], min(lo, cap), None if hi is None else min(hi, cap))
            memo[n] = r
        return memo[e]

    def _head_parts(self, n: int, x: tuple, k: str):
        """The parts of expression `n` (= exprs[n], of kind `k`) that its first byte may come
        from (a chain's heads while they are nullable, then the rest), or None for a leaf:
        what `first_bytes` and `head_masks` both fold."""
        if k == "c":
            exprs, nullable = self.exprs, self.nullable
            kids = []
            y = n
            while exprs[y][0] == "c":
                h = exprs[y][1]
                kids.append(h)
                if not nullable[h]:
                    return kids
                y = exprs[y][2]
            kids.append(y)
            return kids
        if k == "o" or k == "a":
            return x[1]
        if k == "r" or k == "f":
            return (x[1],)
        if k == "x":
            return (self.rule_bodies[x[1]],)
        return None

    def _fold_heads(self, e: int, memo: dict, leaf, fold) -> int:
        """Fills memo[e] (and its parts') from the parts `_head_parts` gives, children first
        from an explicit stack (states nest as deep as the output): leaf(x, kind) for a leaf,
        fold(kind, parts, memo.get) for the others.  A rule reaches itself only after a byte,
        never through its first bytes, so a part still open is a rule's own reference and
        contributes nothing.  Returns the work done (1 plus its parts per expression)."""
        exprs = self.exprs
        stack = [e]
        open_: set = set()  # expressions whose parts are being computed
        work = 0
        while stack:
            n = stack[-1]
            if n in memo:
                stack.pop()
                continue
            x = exprs[n]
            k = x[0]
            kids = self._head_parts(n, x, k)
            if kids is None:
                stack.pop()
                memo[n] = leaf(x, k)
                continue
            if n not in open_:
                open_.add(n)
                stack.extend(c for c in kids if c not in memo and c not in open_)
                continue
            stack.pop()
            open_.discard(n)
            memo[n] = fold(k, kids, memo.get)
            work += 1 + len(kids)
        return work

    def first_bytes(self, e: int) -> int:
        """The 256-bit set of the bytes whose derivative of `e` may be other than NOTHING (the
        first bytes of its strings; for an end marker, those of its ignored run).

        Without recursion (states nest as deep as the output), children first from an explicit
        stack; each set computed costs 1 plus its parts of the fuel, as a derivative."""
        memo = self._first
        r = memo.get(e)
        if r is not None:
            return r
        exprs, nullable = self.exprs, self.nullable
        x = exprs[e]
        if x[0] == "c" and not nullable[x[1]] or x[0] == "r":  # (the usual new state: a head
            r = memo.get(x[1])  # or a repetition's body already known)
            if r is not None:
                memo[e] = r
                if self.fuel is not None:
                    self.fuel -= 2
                return r
        work = self._fold_heads(e, memo, _first_leaf, _first_fold)
        if self.fuel is not None:
            self.fuel -= work
            if self.fuel < 0:
                self.fuel = 0
                self._out_of_fuel()
        return memo[e]

    def head_masks(self, e: int) -> frozenset:
        """The byte sets (256-bit masks) that the derivative of `e` by a byte looks at: those
        `first_bytes` unites (the same parts, children first from an explicit stack).  Bytes
        that each of them holds or leaves out alike have the same derivative of `e` (a finer
        split than `byte_classes` needs: a state of a whitespace lexeme tells a space from a
        tab only if one of its own sets does, not because a literal elsewhere has a space)."""
        memo = self._heads
        r = memo.get(e)
        if r is not None:
            return r
        exprs, nullable = self.exprs, self.nullable
        x = exprs[e]
        if x[0] == "c" and not nullable[x[1]] or x[0] == "r":  # (a head or body already known)
            r = memo.get(x[1])
            if r is not None:
                memo[e] = r
                return r
        self._fold_heads(e, memo, _heads_leaf, _heads_fold)
        return memo[e]

    def _members(self, e: int, ids: tuple, byte: int):
        """The members of alternation `e` whose derivative by `byte` may be other than NOTHING:
        an object's state after `{"` has one member per key that may come next (with its own
        continuation), and a byte of a key goes on in the few members whose key has it."""
        if len(ids) < ALT_INDEX_MIN:
            return ids
        idx = self._alt_index.get(e)
        if idx is None:
            fb, known = self.first_bytes, self._first.get
            idx = self._alt_index[e] = ([(fb(i) if (m := known(i)) is None else m, i) for i in ids], {})
            if self.fuel is not None:  # (a look at every member, known first bytes or not)
                self.fuel -= len(ids)
        firsts, by_byte = idx
        r = by_byte.get(byte)
        if r is None:
            r = by_byte[byte] = [i for m, i in firsts if m >> byte & 1]
            if self.fuel is not None:  # (the fuel is checked by the derivative that asked)
                self.fuel -= len(firsts)
        return r

    # -- derivatives -----------------------------------------------------------------------
    def derive(self, e: int, byte: int) -> int:
        """The id of the derivative of `e` by `byte` (cached in the row of `e`).

        Without recursion: a state nests one level per open bracket of the output, so the
        derivatives its parts need are computed children first from an explicit stack."""
        row = self.rows[e]
        r = row[byte]
        if r >= 0:
            return r
        rows, deps, node = self.rows, self._derive_deps, self._derive_node
        ds = deps(e, byte)
        for c in ds:
            if rows[c][byte] < 0:
                break
        else:  # (the usual case: the parts' derivatives known, no stack)
            d = node(e, byte)
            row = rows[e]
            done = 1 + len(ds)
            if row is UNKNOWN_ROW:
                row = rows[e] = list(UNKNOWN_ROW)
                done += ROW_FUEL
            row[byte] = d
            if self.fuel is not None:
                self.fuel -= done
                if self.fuel < 0:
                    self.fuel = 0
                    self._out_of_fuel()
            return d
        stack = [e]
        done = 0
        while stack:
            n = stack[-1]
            if rows[n][byte] >= 0:
                stack.pop()
                continue
            ds = deps(n, byte)
            missing = [c for c in ds if rows[c][byte] < 0]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            d = node(n, byte)
            row = rows[n]
            if row is UNKNOWN_ROW:
                row = rows[n] = list(UNKNOWN_ROW)
                done += ROW_FUEL
            row[byte] = d
            done += 1 + len(ds)
        if self.fuel is not None:  # each derivative computed costs 1 + its parts (rows stay valid)
            self.fuel -= done
            if self.fuel < 0:
                self.fuel = 0
                self._out_of_fuel()
        return rows[e][byte]

    def _derive_deps(self, e: int, byte: int) -> list:
        """The expressions whose derivatives (by the same byte) the derivative of `e` uses."""
        exprs, nullable = self.exprs, self.nullable
        x = exprs[e]
        k = x[0]
        if k == "c":  # d(a b) = d(a) b | d(b) if a is nullable, along the chain
            out = [x[1]]
            while nullable[x[1]]:
                b = x[2]
                x = exprs[b]
                if x[0] == "c":
                    out.append(x[1])
                else:
                    out.append(x[1] if x[0] == "f" else b)
                    break
            return out
        if k == "o":
            return [exprs[i][1] if exprs[i][0] == "f" else i for i in self._members(e, x[1], byte)]
        if k == "r":
            return [x[1]]
        if k == "x":
            return [self.rule_bodies[x[1]]]
        if k == "a":
            return list(x[1])
        return []

    def _marker_after(self, x, byte: int) -> int:
        d = self.rows[x[1]][byte]
        return NOTHING if d == NOTHING else self._intern(("f", d, True), self.nullable[d])

    def _derive_node(self, e: int, byte: int) -> int:
        """The derivative of `e` by `byte`, once those of `_derive_deps(e)` are in their rows."""
        rows = self.rows
        x = self.exprs[e]
        k = x[0]
        if k == "b":
            return EPSILON if x[1] >> byte & 1 else NOTHING
        if k == "c":
            parts = []
            exprs, nullable = self.exprs, self.nullable
            while True:
                a, b = x[1], x[2]
                parts.append(self.concat(rows[a][byte], b))
                if not nullable[a]:
                    break
                x = exprs[b]
                if x[0] != "c":
                    parts.append(self._marker_after(x, byte) if x[0] == "f" else rows[b][byte])
                    break
            return self.alt(parts)
        if k == "o":
            exprs = self.exprs
            return self.alt([self._marker_after(exprs[i], byte) if exprs[i][0] == "f" else rows[i][byte]
                             for i in self._members(e, x[1], byte)])
        if k == "r":
            a, lo, hi = x[1], x[2], x[3]
            return self.concat(rows[a][byte], self.repeat(a, max(lo - 1, 0), None if hi is None else hi - 1))
        if k == "x":
            return rows[self.rule_bodies[x[1]]][byte]
        if k == "a":
            return self.conj([rows[c][byte] for c in x[1]])
        return NOTHING  # NOTHING, EPSILON, an end marker on its own

    def viable_bytes(self, e: int) -> list[int]:
        """The bytes after which `e` is not dead, ascending (one derivative per byte class)."""
        row = self.rows[e]
        first = self.first_bytes(e)  # (the classes no string of `e` starts with: not derived)
        if not first & (first - 1):  # one first byte at most (as where bytes are forced)
            if not first:
                return []
            b = first.bit_length() - 1
            d = row[b]
            if d < 0:
                d = self.derive(e, b)
            return [b] if d else []
        _, reps = self.byte_classes()
        derive = self.derive
        out: list = []
        n = 0
        for c, b in enumerate(reps):
            if not first >> b & 1:
                continue
            d = row[b]
            if d < 0:
                d = derive(e, b)
            if d:
                out += self._class_bytes[c]
                n += 1
        if n > 1:
            out.sort()
        return out

    def derivative_groups(self, e: int) -> dict:
        """{derivative: mask of the bytes leading to it} over the bytes that keep `e` live."""
        g = self._groups.get(e)
        if g is None:
            g = self._groups[e] = {}
            for b, d in enumerate(self.full_row(e)):
                if d != NOTHING:
                    g[d] = g.get(d, 0) | 1 << b
        return g

    def full_row(self, e: int) -> list:
        """The derivatives of `e` by every byte (its row, with none left unknown): one
        derivative per byte class, copied to the other bytes of the class (forced bytes ask
        this of every state they pass: 256 derivatives each would be most of their work)."""
        row = self.rows[e]
        if -1 in row:
            cls, reps = self.byte_classes()
            derive = self.derive
            by_class = [row[b] if row[b] >= 0 else derive(e, b) for b in reps]
            row = self.rows[e] = [by_class[c] for c in cls]
        return row


# -- UTF-8 --------------------------------------------------------------------------------------

_BOUNDS = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF))


def _encode(cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


def _utf8_sequences(lo: int, hi: int, out: list) -> None:
    """Append to `out` byte-range sequences [(lo_byte, hi_byte), ...] covering code points lo..hi
    (same encoded length, split until each sequence is a product of byte ranges)."""
    for blo, bhi in _BOUNDS:
        a, b = max(lo, blo), min(hi, bhi)
        if a <= b:
            _split(a, b, out)


def _split(lo: int, hi: int, out: list) -> None:
    n = len(_encode(lo))
    if n == 1:
        out.append([(lo, hi)])
        return
    # Split so that all but the first byte vary over their full continuation range.
    for i in range(1, n):
        m = (1 << (6 * i)) - 1
        if lo & ~m != hi & ~m:
            if lo & m != 0:
                _split(lo, lo | m, out)
                _split((lo | m) + 1, hi, out)
                return
            if hi & m != m:
                _split(lo, (hi & ~m) - 1, out)
                _split(hi & ~m, hi, out)
                return
    el, eh = _encode(lo), _encode(hi)
    out.append([(el[i], eh[i]) for i in range(n)])


def _mask(lo: int, hi: int) -> int:
    return ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


def compile_ranges(es: ExprSet, ranges) -> int:
    """The byte-level expression matching the UTF-8 encoding of one code point from `ranges`
    (cached per expression set: schemas and grammars repeat the same classes many times)."""
    key = tuple(ranges)
    r = es._ranges.get(key)
    if r is None:
        seqs: list = []
        for lo, hi in key:
            _utf8_sequences(lo, hi, seqs)
        r = es._ranges[key] = _factor(es, [[_mask(a, b) for a, b in s] for s in seqs])
    return r


def _factor(es: ExprSet, seqs: list) -> int:
    """Alternation of byte-mask sequences, grouped by identical leading masks, then leading
    masks with the same tail united (`[ \\t]` is one byte set, not a space or a tab: its
    derivatives cannot tell them apart, `ExprSet.head_masks`)."""
    groups: dict = {}
    for s in seqs:
        groups.setdefault(s[0], []).append(s[1:])
    by_tail: dict = {}  # tail -> union of the leading masks (in order of first use)
    for first, rests in groups.items():
        tails = [r for r in rests if r]
        tail = _factor(es, tails) if tails else NOTHING
        if len(tails) != len(rests):
            tail = es.alt((tail, EPSILON))
        by_tail[tail] = by_tail.get(tail, 0) | first
    return es.alt([es.concat(es.byteset(first), tail) for tail, first in by_tail.items()])


def compile_tree(es: ExprSet, node) -> int:
    """The expression id of a `regex_syntax` tree."""
    kind = node[0]
    if kind == "set":
        return compile_ranges(es, node[1])
    if kind == "cat":
        r = EPSILON
        for item in reversed(node[1]):
            r = es.concat(compile_tree(es, item), r)
        return r
    if kind == "alt":
        return es.alt([compile_tree(es, n) for n in node[1]])
    if kind == "rep":
        return es.repeat(compile_tree(es, node[1]), node[2], node[3])
    if kind == "empty":
        return EPSILON
    raise AssertionError(kind)


def _first_leaf(x: tuple, k: str) -> int:
    return x[1] if k == "b" else 0  # (NOTHING, EPSILON: no first byte)


def _first_fold(k: str, kids, get) -> int:
    if k == "a":  # an intersection's strings start with a byte every member's may
        r = -1
        for c in kids:
            r &= get(c, 0)
        return r
    r = 0
    for c in kids:
        r |= get(c, 0)
    return r


_NO_HEADS = frozenset()


def _heads_leaf(x: tuple, k: str) -> frozenset:
    return frozenset((x[1],)) if k == "b" else _NO_HEADS


def _heads_fold(k: str, kids, get) -> frozenset:
    if len(kids) == 1:
        return get(kids[0], _NO_HEADS)
    return _NO_HEADS.union(*[get(c, _NO_HEADS) for c in kids])


def split_by(sets: list, m: int) -> list:
    """The partition `sets` (disjoint 256-bit byte sets) refined by the byte set `m`: each
    part that `m` cuts becomes its part inside `m` and its part outside, in place."""
    split = []
    for c in sets:
        a = c & m
        if a and a != c:
            split.append(a)
            split.append(c ^ a)
        else:
            split.append(c)
    return split


def bits_of(m: int) -> list:
    """The positions of the set bits of `m` (an int >= 0), ascending.  Read from its binary
    numeral with str.find, in C: a loop of `m & -m`, `bit_length` and `^=`, or of `m >> b & 1`
    over 256 bytes, is a big-int operation per step, which runs at 3-4x CPython's time under
    Pyodide (this at about 2x), and is 2-4x slower natively too."""
    s = format(m, "b")[::-1]
    out = []
    i = s.find("1")
    while i >= 0:
        out.append(i)
        i = s.find("1", i + 1)
    return out
