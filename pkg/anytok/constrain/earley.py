"""An Earley parser over lexemes, with llguidance's lexer in front of it.

Data flow, from grammar text to a mask:

    Lark text --grammar._Reader--> rule trees (`builder.GrammarBuilder`) --builder._Builder--> `Grammar`:
        lexemes (one byte-level expression each, in one `derivatives.ExprSet`; the `%ignore`
        lexemes joined into one "skip" lexeme) and BNF productions over nonterminals and
        lexemes (repetitions, groups and alternatives become helper nonterminals)
    GBNF text --gbnf--> the same rule trees (llguidance's `gbnf_to_lark` lexeme choices)
    `Grammar` --States--> a lazily built automaton over bytes that `matcher.py` serves exactly
        like a regex's (`derivatives.StateSet`: `derive`, `rows`, `nullable`, `viable_bytes`, `truncated`)

A state of that automaton is an int naming (Earley set, lexer state, fresh):

* An Earley set (`_Node`): its items `(dotted position, origin node)`, the items waiting for
  each symbol, and the lexemes it allows next.  Scanning a set of lexemes from a node makes
  (once, cached in the node) a child node: the items advanced over those lexemes, closed by
  prediction and completion (Aycock-Horspool's rule for nullable nonterminals, so completions
  never look at the set being built).  Nodes are hash-consed by their items, each origin
  taken as what completing the item there leads to (`_ctx`), not as which node it is: two sets
  with the same items have the same future, so after `ab` and after `abc` in `word: LETTER+`,
  and after each word of `word (" " word)*`, the node, its states and so its cached masks are
  the same.
  The closure is a loop over an agenda: no recursion, so outputs may nest as deeply as memory
  allows.
* A lexer state is the tuple of (lexeme, derivative) pairs still live over the bytes of the
  lexeme being read, among the lexemes the node allows (plus the skip lexeme, where the node
  allows any lexeme; not at the very start unless `allow_initial_skip`).
* A byte that keeps some lexeme live extends the lexeme (greedy), unless it completes a lazy
  lexeme, which then ends at once (so does a lexeme nothing can extend; but a lazy lexeme
  completed by the byte that ended the previous lexeme is not ended there: llguidance checks
  only for the lexemes nothing can extend at that point).  A byte that kills every lexeme ends the lexeme: every
  greedy lexeme that matches the bytes read is scanned together (a skip among them makes it a
  skip: the node stays), and the byte starts the next lexeme from the new node.  The output is
  complete when the pending lexeme (if any bytes are pending) ends there and the node then has
  the start rule completed over the whole input.  These are llguidance's rules
  (`parser/src/earley/{lexer,parser}.rs`): the lexer never backtracks, so a grammar's language
  can be smaller than its context-free language.

Two kinds of lexeme reach the matcher specially.  A special token or token range (`<|name|>`,
`<[ids]>`) is the lexeme `\xff` + byte j, which no ordinary token's bytes reach:
`special_next(s)` lists the j allowed after state s (the pending lexeme ended first, as
llguidance's `flush_lexer`), `special_consume(s, token)` scans the first of them holding the
token, and the matcher adds `token_ranges[j]` to masks.  A `stop=` lexeme is hidden: the state
right after it ends is a barrier copy with no transitions (no token in a mask goes on past the
stop), which the matcher replaces by `barrier[copy]` once the token is consumed.  A `max_tokens=`
lexeme is limited by the matcher, which knows tokens: it keeps, per consumed token, the index
of the first token that touched the current lexeme's Earley set (`is_boundary` tells where a
lexeme ended inside a token) and, after a token that ends inside a lexeme, calls
`limit_max_tokens`, which drops the lexemes whose count is reached (or ends the lexeme, cut
short if need be, as llguidance's forced end).  A `stop=""` lexeme may be ended by the
end-of-sequence token: `eos_end(s)` is the state after it (the matcher allows EOS there).

Each state has a 256-entry transition row filled on first use, like an `ExprSet` expression,
so the token trie walk and the slicer run unchanged, and masks are cached per state by the
matcher.  Limits (`errors.Limits`): items in one Earley set, Earley items built in one matcher
call (`refuel`, called by the matcher at each call, refills that budget and the lexemes' lexer
fuel), Earley sets, lexer states; past them a `GrammarLimitError` names the limit and the
option that raises it.
"""

from __future__ import annotations

from . import derivatives as D
from .errors import GrammarLimitError, Limits  # noqa: F401 (re-exported)


COMPLETE = -1
# `_fid`: a contribution's id standing for "the same future as the whole set" (a loop), and
# the ids past the depth limit or inside a loop of other nonterminals (-2, -3, ...: each unique,
# never equal to another: no sharing, never a wrong one).
SELF = -1
FID_OPAQUE = -2
FID_DEPTH = 200
# `States.derive`: a state whose lexemes go on with at most this many bytes takes the
# transitions of all the others at once when one of them ends its lexeme.
LIVE_BYTES = 48
_DEAD_ROW = [0] * 256
# `States.canonical` keys states whose lexer state holds at most this many lexemes by what
# scanning each leads to (each scan closes a node); others by themselves.
CANONICAL_LEXEMES = 64


class Grammar:
    """BNF over lexemes.  Nonterminals are ints >= 0; a lexeme k appears in a production as
    `-2 - k`.  `prods[n]` lists the right-hand sides of nonterminal n; nonterminal 0 is the
    start symbol."""

    def __init__(self, es: D.ExprSet):
        self.es = es
        self.prods: list = []
        self.names: list = []
        self.lexemes: list = []  # expression ids (in `es`, as every lexeme's)
        self.lexeme_names: list = []
        self.lazy: list = []
        self.skip = -1  # lexeme index of the skip lexeme, or -1
        self.skip_once = False
        self.allow_initial_skip = False
        self.no_forcing = False  # %llguidance {"no_forcing": true}: see matcher.py
        # special tokens / token ranges: lexeme `\xff` + byte j allows the ids in token_ranges[j]
        self.token_ranges: list = []
        self.hidden = 0  # bitmask of lexemes whose end is hidden (`stop=`): no token crosses it
        self.max_tokens: dict = {}  # lexeme -> its `max_tokens=` (tokens per lexeme)
        self.eos_ending = 0  # bitmask of lexemes that end-of-sequence may end (`stop=""`)

    def nonterminal(self, name: str) -> int:
        self.prods.append([])
        self.names.append(name)
        return len(self.prods) - 1

    def lexeme(self, expr: int, name: str, lazy: bool = False) -> int:
        self.lexemes.append(expr)
        self.lexeme_names.append(name)
        self.lazy.append(lazy)
        return len(self.lexemes) - 1


class _Node:
    __slots__ = ("id", "waiting", "allowed", "accepting", "children", "start_ls", "noskip", "ctx", "fid", "fkey", "arow")

    def __init__(self, nid: int):
        self.id = nid
        self.waiting: dict = {}  # symbol -> [(pos, origin node)]
        self.ctx: dict = {}  # nonterminal -> id of what completing it here leads to (`_ctx`)
        self.allowed = 0  # bitmask of lexemes
        self.accepting = False
        self.children: dict = {}  # scanned lexeme mask -> child node, or None if dead
        self.start_ls = -1
        self.noskip = False
        self.fid: dict = {}  # nonterminal -> `_fid` of completing it here
        self.fkey = -1  # `_future` of this node
        self.arow = None  # byte -> `_after_lexeme` state (-1: not yet known)


class _Nullable:
    """`nullable[state]`: whether the output may end in that state (computed on demand)."""

    def __init__(self, states: "States"):
        self._s = states

    def __getitem__(self, s: int) -> bool:
        acc = self._s.acc
        r = acc[s]
        if r < 0:
            r = acc[s] = self._s._accepting(s)
        return bool(r)


class States(D.StateSet):
    """The automaton over bytes for a `Grammar` (see the module docstring); the `ExprSet`
    interface that the matcher, the token trie walk and the slicer use."""

    def __init__(self, g: Grammar, limits: Limits | None = None):
        self.g = g
        self.limits = limits or Limits()
        self.es = g.es
        self.token_ranges = g.token_ranges  # (the matcher reads it: see `special_next`)
        # `stop=` lexemes: the state right after one ends is a "barrier" copy of the real
        # state with no transitions (so no token's bytes go on past the stop); the matcher
        # continues from `barrier[copy]` after the token
        self.barrier: dict = {}
        self._barriers: dict = {}
        self.has_max_tokens = bool(g.max_tokens)
        self.no_forcing = g.no_forcing
        self.has_eos_ending = bool(g.eos_ending)
        self._eos_end: dict = {}
        # -- dotted positions: per production, one per dot place ---------------------------
        nextsym: list = []
        lhs: list = []
        first: list = []  # nonterminal -> [first dotted position of each production]
        for n, rhss in enumerate(g.prods):
            firsts = []
            for rhs in rhss:
                firsts.append(len(nextsym))
                for s in rhs:
                    nextsym.append(s)
                    lhs.append(n)
                nextsym.append(COMPLETE)
                lhs.append(n)
            first.append(firsts)
        self.nextsym, self.lhs, self.first = nextsym, lhs, first
        self.null_nt = self._nullable_nonterminals()
        # -- lexer states: tuples (lexeme, expr, lexeme, expr, ...) ---------------------------
        es = self.es
        self.item_fuel = None  # Earley items left in this matcher call (None: unbounded)
        self._members_for = -1  # see `_members`
        self._viable: dict = {}  # state -> `viable_bytes`
        self._live_masks: dict = {}  # state -> `live_mask`
        self._live_lists: dict = {}  # see `_live_list`
        self._member_lists: list = []
        es.set_limits(self.limits)
        self.lex_tuples: list = [()]
        self.lex_ids: dict = {(): 0}
        self.lex_rows: list = [[0] * 256]
        self.lex_greedy: list = [0]  # bitmask of greedy lexemes matching the bytes read
        self.lex_lazy: list = [0]
        self.lex_first: list = [0]  # bitmask of the bytes that some lexeme may go on with
        self._start_ls: dict = {}
        self.lex_final: dict = {}  # lexer state -> whether it ends its lexeme at once
        self.lazy_mask = sum(1 << k for k, z in enumerate(g.lazy) if z)
        self.skip_bit = 1 << g.skip if g.skip >= 0 else 0
        self._lex_nullable = [es.nullable[e] for e in g.lexemes]
        self.lex_classes: list = [None]  # lexer state -> `_lex_classes` (None: not yet made)
        self._classes_by_heads: dict = {}
        # -- combined states --------------------------------------------------------------
        self.nodes: list = []
        self.node_ids: dict = {}  # items -> node (see `_close`)
        self.ctx_ids: dict = {}  # see `_ctx`
        self.ctx_sets: list = []  # ctx id -> its items
        self.cs: list = [(None, 0, False)]
        self.cs_ids: dict = {}
        self.rows: list = [[0] * 256]
        self.acc: list = [0]
        self._canon: dict = {}  # state -> `canonical` key
        self._fid_ids: dict = {}  # `_fid` contributions -> id
        self._fid_sets: list = []  # id -> its contributions
        self._fid_self: set = set()  # ids whose contributions refer to themselves (`SELF`)
        self._opaque = FID_OPAQUE  # the next opaque id (`_fid`)
        self._future_ids: dict = {}  # `_future` keys -> id
        self.nullable = _Nullable(self)
        self.root = None
        root = self.root = self._close([], None)
        if not g.allow_initial_skip:  # (a later set with the same items is not the root)
            root.noskip = True
            self.node_ids = {k: v for k, v in self.node_ids.items() if v is not root}
        self.start = self._intern(root, self._node_start_ls(root), True)

    def refuel(self) -> None:
        """A matcher call starts: its work may use the step budgets again."""
        self.item_fuel = self.limits.step_max_items
        self.es.refuel()

    # -- grammar analysis -------------------------------------------------------------------
    def _nullable_nonterminals(self) -> list:
        """Which nonterminals derive the empty string (a worklist: linear in the grammar)."""
        g = self.g
        null = [False] * len(g.prods)
        missing = []  # per production: how many of its symbols are not known nullable yet
        users: dict = {}  # nonterminal -> productions using it, as (lhs, production index)
        todo = []
        for n, rhss in enumerate(g.prods):
            for rhs in rhss:
                k = len(missing)
                cnt = 0
                for sym in rhs:
                    if sym >= 0:
                        users.setdefault(sym, []).append((n, k))
                    cnt += 1  # a lexeme is never nullable (nullable lexemes are wrapped)
                missing.append(cnt)
                if cnt == 0 and not null[n]:
                    null[n] = True
                    todo.append(n)
        while todo:
            m = todo.pop()
            for n, k in users.get(m, ()):
                missing[k] -= 1
                if missing[k] == 0 and not null[n]:
                    null[n] = True
                    todo.append(n)
        return null

    # -- Earley sets ------------------------------------------------------------------------
    def _close(self, kernel: list, parent) -> _Node | None:
        """The Earley set after `parent` made of the `kernel` items (advanced over the lexemes
        just scanned; for the first set, `parent` is None and the kernel is the start
        productions), closed by prediction and completion."""
        if not kernel and parent is not None:
            return None
        if len(self.nodes) >= self.limits.max_nodes:
            raise GrammarLimitError(f"more than {self.limits.max_nodes} Earley sets (Limits.max_nodes)")
        node = _Node(len(self.nodes))
        self.nodes.append(node)
        nextsym, lhs, first, null_nt = self.nextsym, self.lhs, self.first, self.null_nt
        waiting = node.waiting
        seen: set = set()
        agenda = []
        if parent is None:
            kernel = [(p, node) for p in first[0]]
        for p, o in kernel:
            key = (p, o.id)
            if key not in seen:
                seen.add(key)
                agenda.append((p, o))
        predicted: set = set()
        allowed = 0
        root = self.root if parent is not None else node
        accepting = False
        limit = self.limits.max_items_in_set
        fuel = self.item_fuel
        budget = limit if fuel is None or fuel >= limit else fuel
        i = 0
        while i < len(agenda):
            p, o = agenda[i]
            i += 1
            s = nextsym[p]
            if s == COMPLETE:
                n = lhs[p]
                if n == 0 and o is root:
                    accepting = True
                if o is node:  # completed in this set: nullable, its waiters advanced already
                    continue
                new = [(q + 1, oo) for q, oo in o.waiting.get(n, ())]
            else:
                lst = waiting.get(s)
                if lst is None:
                    lst = waiting[s] = []
                lst.append((p, o))
                if s < 0:
                    allowed |= 1 << (-2 - s)
                    continue
                new = []
                if s not in predicted:
                    predicted.add(s)
                    new.extend((q, node) for q in first[s])
                if null_nt[s]:  # Aycock-Horspool: step over a nullable nonterminal now
                    new.append((p + 1, o))
            for q, oo in new:
                key = (q, oo.id)
                if key not in seen:
                    seen.add(key)
                    agenda.append((q, oo))
            if len(agenda) > budget:
                self.nodes.pop()
                if budget < limit:
                    self.item_fuel = 0
                    raise GrammarLimitError(
                        f"more than {self.limits.step_max_items:,} Earley items built in one step "
                        "(Limits.step_max_items): the grammar is too ambiguous or too large")
                raise GrammarLimitError(
                    f"an Earley set with more than {limit} items (Limits.max_items_in_set): "
                    "the grammar is too ambiguous or too large")
        if fuel is not None:
            self.item_fuel = fuel - len(agenda)
        # hash-consing: a set with the same items (origins already shared, "this set" as -1)
        # has the same future, so it is the same node (and its states, rows and masks);
        # completed items have done all they will do, so only whether the start rule
        # completed over the whole input counts of them
        nid = node.id
        ctx = self._ctx
        key = frozenset([(p, -1 if o is node else ctx(o, lhs[p])) for p, o in agenda if nextsym[p] != COMPLETE])
        key = (key, accepting)
        same = self.node_ids.get(key)
        if same is not None:
            self.nodes.pop()
            return same
        self.node_ids[key] = node
        node.accepting = accepting
        node.allowed = allowed
        assert nid == len(self.nodes) - 1
        return node

    def _ctx(self, o: _Node, n: int) -> int:
        """An id for what completing nonterminal `n` with origin `o` leads to: the items of `o`
        waiting for `n`, and, for those that started in `o` too, the items waiting for their
        nonterminal, and so on; each other origin by its own id of this kind.  Equal ids, equal
        futures: the Earley sets are hash-consed by these (`_close`), not by which node an
        origin is, so the sets after each word of `word (" " word)*` are one node, although
        each word starts at another node.  An item that completes as soon as it is advanced
        over `n` stands for what completing its own nonterminal at its origin leads to (its
        items taken instead), so right recursion such as `atom: "-" atom` keeps one node
        however deep it goes.  A loop with an explicit stack (origins chain as deep as the
        output nests)."""
        r = o.ctx.get(n)
        if r is not None:
            return r
        lhs, ids, root, sets, nextsym = self.lhs, self.ctx_ids, self.root, self.ctx_sets, self.nextsym
        stack = [(o, n)]
        while stack:
            o2, n2 = stack[-1]
            memo = o2.ctx
            if n2 in memo:
                stack.pop()
                continue
            items = set()
            missing = False
            todo = [n2]
            nts = {n2}
            waiting = o2.waiting
            while todo:
                for q, oo in waiting.get(todo.pop(), ()):
                    m = lhs[q]
                    if oo is o2:
                        items.add((q, -1))
                        if m not in nts:
                            nts.add(m)
                            todo.append(m)
                    else:
                        c = oo.ctx.get(m)
                        if c is None:
                            stack.append((oo, m))
                            missing = True
                        elif nextsym[q + 1] == COMPLETE:
                            # advanced over n, the item completes at once: completing n here
                            # leads where completing its own nonterminal at `oo` does (so the
                            # sets after each "-" of `atom: "-" atom` are one node); that
                            # id's items that started in `oo` (-1 there) are named by their
                            # own id, as items of other origins are here
                            for q2, c2 in sets[c]:
                                if c2 == -1 and q2 != -1:
                                    c2 = oo.ctx.get(lhs[q2])
                                    if c2 is None:
                                        stack.append((oo, lhs[q2]))
                                        missing = True
                                        continue
                                items.add((q2, c2))
                        else:
                            items.add((q, c))
            if missing:
                continue
            if o2 is root and 0 in nts:  # completing the start rule here accepts
                items.add((-1, -1))
            key = frozenset(items)
            c = ids.get(key)
            if c is None:
                c = ids[key] = len(ids)
                sets.append(key)
            memo[n2] = c
            stack.pop()
        return o.ctx[n]

    def _scan(self, node: _Node, lexemes: int) -> _Node | None:
        """The node after `node` reads one lexeme matched by every lexeme in mask `lexemes`."""
        ch = node.children
        if lexemes in ch:
            return ch[lexemes]
        if lexemes & self.skip_bit:
            if not self.g.skip_once or node.noskip:
                r = node
            else:  # `ignore_once`: the same items, without the skip lexeme next
                r = _Node(node.id)
                r.waiting, r.allowed, r.accepting, r.noskip = node.waiting, node.allowed, node.accepting, True
                r.ctx = node.ctx
        else:
            kernel = []
            m = lexemes
            while m:
                low = m & -m
                k = low.bit_length() - 1
                m ^= low
                for p, o in node.waiting.get(-2 - k, ()):
                    kernel.append((p + 1, o))
            r = self._close(kernel, node)
        ch[lexemes] = r
        return r

    # -- lexer ------------------------------------------------------------------------------
    def _lex_intern(self, t: tuple) -> int:
        i = self.lex_ids.get(t)
        if i is None:
            es = self.es
            if es.fuel is not None:  # a new row of 256 transitions costs fuel, twice an expression's
                # row (`derivatives.ROW_FUEL`: the row and the state's Python objects)
                es.fuel -= 2 * D.ROW_FUEL
                if es.fuel < 0:
                    es.fuel = 0
                    es._out_of_fuel()
            if len(self.lex_tuples) >= self.limits.max_lexer_states:
                raise GrammarLimitError(
                    f"more than {self.limits.max_lexer_states} lexer states (Limits.max_lexer_states)")
            i = len(self.lex_tuples)
            self.lex_ids[t] = i
            self.lex_tuples.append(t)
            self.lex_rows.append([-1] * 256)
            self.lex_classes.append(None)
            if len(t) == 2:  # (the usual state: one lexeme)
                acc = 1 << t[0] if es.nullable[t[1]] else 0
                fb = es._first.get(t[1])
                if fb is None:
                    fb = es.first_bytes(t[1])
            else:
                nl = es.nullable
                acc = 0
                for j in range(0, len(t), 2):
                    if nl[t[j + 1]]:
                        acc |= 1 << t[j]
                first = es.first_bytes
                fb = 0
                for j in range(1, len(t), 2):
                    fb |= first(t[j])
            self.lex_greedy.append(acc & ~self.lazy_mask)
            self.lex_lazy.append(acc & self.lazy_mask)
            self.lex_first.append(fb)
        return i

    def _lex_start(self, allowed: int) -> int:
        r = self._start_ls.get(allowed)
        if r is None:
            t = []
            m = allowed
            lex, lazy = self.g.lexemes, self.lazy_mask
            while m:
                low = m & -m
                k = low.bit_length() - 1
                m ^= low
                if lazy >> k & 1 and self._lex_nullable[k]:
                    continue  # a lazy lexeme matching the empty string reads no byte
                t.extend((k, lex[k]))
            r = self._start_ls[allowed] = self._lex_intern(tuple(t))
        return r

    def _lex_derive(self, ls: int, b: int) -> int:
        row = self.lex_rows[ls]
        r = row[b]
        if r < 0:
            t = self.lex_tuples[ls]
            if len(t) == 2:  # (one lexeme: its first bytes are the state's)
                d = self.es.derive(t[1], b) if self.lex_first[ls] >> b & 1 else 0
                r = self._lex_intern((t[0], d) if d else ())
            else:
                derive, first = self.es.derive, self.es.first_bytes
                out = []
                for j in range(0, len(t), 2):
                    # (a byte no string of the lexeme's derivative starts with: dead, without
                    # deriving; most bytes, for a lexeme that few bytes continue)
                    if first(t[j + 1]) >> b & 1:
                        d = derive(t[j + 1], b)
                        if d:
                            out.extend((t[j], d))
                r = self._lex_intern(tuple(out))
            if self.lex_first[ls] >> b & 1:  # (the bytes the state cannot tell from b)
                members = self.lex_classes[ls] or self._lex_classes(ls)
                for x in members[0][b]:
                    row[x] = r
            else:
                for x in self._members()[b]:  # (the bytes of b's class: the same derivatives)
                    row[x] = r
        return r

    def _lex_classes(self, ls: int) -> tuple:
        """({byte: the bytes of its class}, first byte of each class) over the bytes some
        lexeme of lexer state `ls` may go on with: bytes that every byte set its lexemes look
        at (`ExprSet.head_masks`) treats alike have the same derivative of the state, and so
        take a combined state with it to the same state.  Shared by the states whose lexemes
        look at the same sets (the counting states of `[ \\t]{0,20}`: a space and a tab, one
        class, although a literal `" "` elsewhere makes the space a class of its own)."""
        t = self.lex_tuples[ls]
        fb = self.lex_first[ls]
        heads = self.es.head_masks
        if len(t) == 2:
            hs = heads(t[1])
        else:
            hs = frozenset().union(*[heads(t[j]) for j in range(1, len(t), 2)])
        key = (fb, hs)
        r = self._classes_by_heads.get(key)
        if r is None:
            sets = [fb] if fb else []
            for m in hs:
                m &= fb
                if m:
                    sets = D.split_by(sets, m)
            members: dict = {}
            reps = []
            for c in sets:
                bs = D.bits_of(c)
                reps.append(bs[0])
                for b in bs:
                    members[b] = bs
            reps.sort()
            r = self._classes_by_heads[key] = (members, reps)
        self.lex_classes[ls] = r
        return r

    def _node_start_ls(self, node: _Node) -> int:
        r = node.start_ls
        if r < 0:
            allowed = node.allowed
            if allowed and self.skip_bit and not node.noskip:
                allowed |= self.skip_bit
            r = node.start_ls = self._lex_start(allowed)
        return r

    # -- combined states --------------------------------------------------------------------
    def _intern(self, node: _Node, ls: int, fresh: bool) -> int:
        key = (node, ls, fresh)
        i = self.cs_ids.get(key)
        if i is None:
            es = self.es
            if es.fuel is not None:  # (a new row: as a new lexer state's)
                es.fuel -= 2 * D.ROW_FUEL
                if es.fuel < 0:
                    es.fuel = 0
                    es._out_of_fuel()
            i = len(self.cs)
            self.cs_ids[key] = i
            self.cs.append(key)
            self.rows.append([-1] * 256)
            self.acc.append(-1)
        return i

    def _accepting(self, s: int) -> int:
        node, ls, fresh = self.cs[s]
        if node is None:
            return 0
        if fresh:
            return int(node.accepting)
        acc = self.lex_greedy[ls] | self.lex_lazy[ls]  # (lazy: only a lazy lexeme not yet ended)
        if not acc:
            return 0
        n2 = self._scan(node, acc)
        return int(n2 is not None and n2.accepting)

    def _ends_now(self, ls: int) -> bool:
        """Whether lexer state `ls` matches some lexeme and no byte can extend it (llguidance's
        `ForcedEOI`): the lexeme ends at once, without waiting for the next byte."""
        r = self.lex_final.get(ls)
        if r is None:
            r = False
            if self.lex_greedy[ls] | self.lex_lazy[ls]:
                d, row = self._lex_derive, self.lex_rows[ls]
                # (only the bytes some lexeme goes on with, one per class of the state)
                r = True
                for b in (self.lex_classes[ls] or self._lex_classes(ls))[1]:
                    if row[b] > 0 or row[b] < 0 and d(ls, b):
                        r = False
                        break
            self.lex_final[ls] = r
        return r

    def _ended(self, node: _Node, lexemes: int) -> int:
        """The fresh state after `node` reads a lexeme that ended with its last byte."""
        n2 = self._scan(node, lexemes)
        if n2 is None:
            return 0
        r = self._intern(n2, self._node_start_ls(n2), True)
        if lexemes & self.g.hidden:
            b = self._barriers.get(r)
            if b is None:
                b = self._barriers[r] = self._intern(n2, self._node_start_ls(n2), 2)
                self.rows[b] = [0] * 256
                self.barrier[b] = r
            r = b
        return r

    def _after_lexeme(self, node: _Node, b: int) -> int:
        """The state after `node` when byte `b`, which ended the previous lexeme, starts the
        next one.  As llguidance: a lexeme that this byte alone completes and nothing can
        extend ends at once, but a lazy lexeme that can still grow is not ended here (only
        from the next byte on: then by a byte that completes it again, or by a byte that
        extends nothing).  Kept per node and byte class: every lexer state ending the same
        lexemes from one node (a number after each of its digits) shares it."""
        row = node.arow
        if row is None:
            row = node.arow = [-1] * 256
        r = row[b]
        if r >= 0:
            return r
        start = self._node_start_ls(node)
        ls = self._lex_derive(start, b) if self.lex_first[start] >> b & 1 else 0
        if not ls:
            r = 0
            members = self._members()[b]
        else:
            if self._ends_now(ls):
                r = self._ended(node, self.lex_greedy[ls] | self.lex_lazy[ls])
            else:
                r = self._intern(node, ls, False)
            members = (self.lex_classes[start] or self._lex_classes(start))[0][b]
        for x in members:
            row[x] = r
        return r

    def derive(self, s: int, b: int) -> int:
        row = self.rows[s]
        r = row[b]
        if r >= 0:
            return r
        node, ls, fresh = self.cs[s]
        if node is None:
            r = 0
        else:
            # (a byte no lexeme goes on with: dead without deriving; most bytes, inside a
            # lexeme that few bytes continue)
            if self.lex_first[ls] >> b & 1:
                nl = self.lex_rows[ls][b]
                if nl < 0:
                    nl = self._lex_derive(ls, b)
            else:
                nl = 0
            if nl:
                lz = self.lex_lazy[nl]
                if lz:  # a lazy lexeme ends as soon as it matches
                    r = self._ended(node, lz)
                else:
                    fin = self.lex_final.get(nl)
                    if fin is None:
                        fin = self._ends_now(nl)
                    if fin:
                        r = self._ended(node, self.lex_greedy[nl])
                    else:
                        r = self.cs_ids.get((node, nl, False))
                        if r is None:
                            r = self._intern(node, nl, False)
                # (the bytes the lexer state cannot tell from b: the same lexer state after)
                for x in (self.lex_classes[ls] or self._lex_classes(ls))[0][b]:
                    row[x] = r
                return r
            else:
                acc = self.lex_greedy[ls] | self.lex_lazy[ls]
                n2 = self._scan(node, acc) if acc else None
                if n2 is None:
                    r = 0
                    template = _DEAD_ROW
                else:
                    r = self._after_lexeme(n2, b)
                    template = n2.arow
                # every byte that no lexeme goes on with leads where it leads from the node
                # after the lexeme (`_after_lexeme`, kept per node): taken at once (a row
                # copy), unless many bytes go on with the lexeme
                live = self._live_lists.get(self.lex_first[ls], False)
                if live is False:
                    live = self._live_list(self.lex_first[ls])
                if live is not None:
                    kept = [row[x] for x in live]
                    row[:] = template
                    for x, v in zip(live, kept):
                        row[x] = v
                    return r
        for x in self._members()[b]:  # (bytes of one class take every state to one state)
            row[x] = r
        return r

    def _live_list(self, fb: int):
        """The bytes of bitmask `fb` (a lexer state's `lex_first`), or None past LIVE_BYTES."""
        r = self._live_lists[fb] = D.bits_of(fb) if fb.bit_count() <= LIVE_BYTES else None
        return r

    # -- max_tokens (the matcher counts tokens; see `Matcher.consume`) ------------------------
    def is_fresh(self, s: int) -> bool:
        return bool(self.cs[s][2])

    def is_boundary(self, s: int, b: int, s2: int) -> bool:
        """Whether byte b, taking state s to s2, ended a lexeme (llguidance pushed a row)."""
        node, ls, _ = self.cs[s]
        node2, ls2, fresh2 = self.cs[s2]
        return bool(fresh2) or node2 is not node or ls2 != self._lex_derive(ls, b)

    def limit_max_tokens(self, s: int, tokens: int) -> int:
        """State s after a token that left `tokens` tokens in the pending lexeme's set: the
        lexemes whose `max_tokens` is reached are dropped; if none is left, the lexeme ends
        now, as llguidance's `limit_state_to` / forced EOI."""
        node, ls, fresh = self.cs[s]
        if fresh or node is None:
            return s
        t = self.lex_tuples[ls]
        mt = self.g.max_tokens
        kept = []
        for j in range(0, len(t), 2):
            m = mt.get(t[j])
            if m is None or tokens < m:
                kept.extend(t[j:j + 2])
        if len(kept) == len(t):
            return s
        if kept:
            return self._intern(node, self._lex_intern(tuple(kept)), False)
        # as llguidance's forced end of input (`force_lexeme_end`): the first possible lexeme
        # ends here, whether or not its bytes match it (max_tokens= cuts a lexeme short), and
        # nothing of it is hidden; if the parser cannot take it, the state stays as it was
        r = self._ended(node, 1 << min(t[0::2]))
        return self.barrier.get(r, r) or s

    # -- stop="" (the matcher asks; see `Matcher.consume`) ------------------------------------
    def eos_end(self, s: int) -> int:
        """The state after end-of-sequence ends the pending lexeme in state `s`, or 0: as
        llguidance's `scan_eos`, where bytes are pending and a `stop=""` lexeme matches them
        (`lexer_allows_eos`), the lexeme ends as at any other end (every lexeme matching the
        bytes), and the end-of-sequence token itself is no output."""
        r = self._eos_end.get(s)
        if r is None:
            r = 0
            node, ls, fresh = self.cs[s]
            if node is not None and not fresh and self.lex_greedy[ls] & self.g.eos_ending:
                r = self._ended(node, self.lex_greedy[ls])
                r = self.barrier.get(r, r)
            self._eos_end[s] = r
        return r

    # -- special tokens (token-range lexemes) ----------------------------------------------
    def special_next(self, s: int) -> list:
        """The token-range lexemes (indices j into `token_ranges`) that may come next in state
        `s`: the pending lexeme ended (as llguidance's `flush_lexer`), then `\xff` + byte j."""
        s1 = self.derive(s, 0xFF)
        if not s1:
            return []
        d = self.derive
        return [j for j in range(len(self.token_ranges)) if d(s1, j)]

    def special_consume(self, s: int, token: int) -> int:
        """The state after special token `token` in state `s`, or 0.  As llguidance, only the
        first token-range lexeme (in grammar order) whose ranges contain the token is scanned."""
        for j in self.special_next(s):
            if any(lo <= token <= hi for lo, hi in self.token_ranges[j]):
                return self.derive(self.derive(s, 0xFF), j)
        return 0

    def _byte_classes(self) -> tuple:
        """(the bytes of each class, first byte of each class): bytes that no byte set of the
        lexemes tells apart (`ExprSet.byte_classes`) take every state to the same state, as
        lexemes see bytes only through their derivatives."""
        es = self.es
        es.byte_classes()
        return es._class_bytes, es._reps

    def _members(self) -> list:
        """byte -> the bytes of its class (`_byte_classes`), made again when the `ExprSet`
        has made byte sets since (its `_masks` only grow)."""
        es = self.es
        n = len(es._masks)
        if n != self._members_for:
            cb, _ = self._byte_classes()
            cls = es._class_of
            self._member_lists = [cb[cls[b]] for b in range(256)]
            self._members_for = n
        return self._member_lists

    # `derive` itself fills the transitions of the whole class of `b` (the name, not a
    # wrapper: a trie walk calls it at each transition not yet known)
    derive_class = derive

    def viable_bytes(self, s: int) -> list:
        """The bytes after which `s` is not dead, ascending (one derivative per byte class:
        forced bytes ask this of every state they pass, each walk of a part of the vocabulary
        of its start; kept per state)."""
        out = self._viable.get(s)
        if out is not None:
            return out
        row = self.rows[s]
        class_bytes, reps = self._byte_classes()
        d = self.derive
        out = []
        n = 0
        for c, b in enumerate(reps):
            r = row[b]
            if r < 0:
                r = d(s, b)
            if r:
                out += class_bytes[c]
                n += 1
        if n > 1:
            out.sort()
        self._viable[s] = out
        return out

    def live_mask(self, s: int):
        """`viable_bytes(s)` as a 256-bit set, or None past LIVE_BYTES bytes (the slicer then
        tries every part: few are left out by so many bytes)."""
        r = self._live_masks.get(s, False)
        if r is False:
            vb = self.viable_bytes(s)
            r = self._live_masks[s] = sum([1 << b for b in vb]) if len(vb) <= LIVE_BYTES else None
        return r

    def canonical(self, s: int):
        """A key for what state `s` = (node, lexer state, fresh) does on any bytes.  Inside a
        lexeme, the node enters its transitions only through the nodes it reaches by scanning
        the lexemes that the lexer state may end (`_scan`; a set of several lexemes ending
        together reaches the node of the union of their items, so the node each alone
        reaches decides it too).  So the lexer state and the futures of those nodes (one per
        lexeme of the lexer state; `_future`) are the key: a number in the second and in the
        tenth element of a JSON array reaches, when it ends, a node with the same future
        (after an element other than the first), although each element starts from its own
        node, and the states of its digits share their masks; in llama.cpp's json_arr.gbnf,
        the nodes after the first element and after the later ones have different items (the
        repetition's left recursion) but the same future, so all share.  A fresh state: its
        node's future (its lexer state follows from the node).  Made once per state."""
        r = self._canon.get(s)
        if r is None:
            node, ls, fresh = self.cs[s]
            t = self.lex_tuples[ls]
            if node is None or fresh == 2:  # (barriers)
                r = s
            elif fresh:
                r = ("fresh", self._future(node))
            elif len(t) > 2 * CANONICAL_LEXEMES:
                r = s
            else:
                scan, future = self._scan, self._future
                key = [ls]
                for j in range(0, len(t), 2):
                    n2 = scan(node, 1 << t[j])
                    key.append(-1 if n2 is None else future(n2))
                r = tuple(key)
            self._canon[s] = r
        return r

    # -- futures (keys of the matcher's caches: `canonical`) --------------------------------
    def _future(self, node: _Node) -> int:
        """An id of what `node` does on any lexemes: its items waiting for a lexeme, each with
        the `_fid` of completing its nonterminal at its origin (this node included), whether
        it accepts, and whether it takes the skip lexeme.  Items waiting for a nonterminal act
        only when it completes here, which the `_fid`s of the items predicted for it describe.
        Equal ids, equal futures: unlike the node's own key (`_close`), items that differ
        but lead to the same completions (the left recursion of a repetition after its first
        and after a later element) have equal ids."""
        r = node.fkey
        if r < 0:
            lhs, fid = self.lhs, self._fid
            items = set()
            for sym, lst in node.waiting.items():
                if sym < 0:
                    for p, o in lst:
                        items.add((p, fid(o, lhs[p], 0)))
            key = (frozenset(items), node.accepting, node.noskip)
            r = self._future_ids.get(key)
            if r is None:
                r = self._future_ids[key] = len(self._future_ids)
            node.fkey = r
        return r

    def _fid(self, o: _Node, n: int, depth: int) -> int:
        """An id of what completing nonterminal `n` at origin `o` leads to: the set of its
        contributions, over the nonterminals that completing `n` completes at `o` at once (the
        items of `o` waiting for `n` whose next step ends their production, and so on):
        (position, id) for each item of `o` waiting for one of them that has symbols left (the
        id of completing its own nonterminal at its origin; `SELF` for `n` itself at `o`),
        (-1, id) for an item of another origin whose production ends there (it completes its
        nonterminal there: that id), (-2, 0) for the start rule completed at the root.
        Normal forms, so that equal futures get equal ids more often: a single (-1, id) is
        that id, and a set that is another set with its `SELF` replaced by that set's id (a
        loop unrolled once) is that set.  Past FID_DEPTH nested origins, or inside a loop of
        several nonterminals, an opaque id (equal to no other)."""
        memo = o.fid
        r = memo.get(n)
        if r is not None:
            return r
        if depth > FID_DEPTH:
            r = memo[n] = self._opaque
            self._opaque -= 1
            return r
        memo[n] = None  # (in progress: met again, `_fid_loop` makes an opaque id)
        lhs, nextsym, fid = self.lhs, self.nextsym, self._fid
        out = set()
        todo = [n]
        nts = {n}
        root = self.root
        while todo:
            x = todo.pop()
            if x == 0 and o is root:
                out.add((-2, 0))
            for q, oo in o.waiting.get(x, ()):
                m = lhs[q]
                if nextsym[q + 1] == COMPLETE:
                    if oo is o:
                        if m not in nts:
                            nts.add(m)
                            todo.append(m)
                    else:
                        out.add((-1, fid(oo, m, depth + 1)))
                elif oo is o:
                    out.add((q, SELF if m == n else self._fid_loop(o, m, depth)))
                else:
                    out.add((q, fid(oo, m, depth + 1)))
        if len(out) == 1:
            (k, c), = out
            if k == -1:
                memo[n] = c
                return c
        key = frozenset(out)
        r = self._fid_ids.get(key)
        if r is None:
            for k, c in out:  # a loop unrolled once: its own id
                if c in self._fid_self and frozenset(
                        (k2, SELF if c2 == c else c2) for k2, c2 in out) == self._fid_sets[c]:
                    r = c
                    break
            else:
                r = self._fid_ids[key] = len(self._fid_sets)
                self._fid_sets.append(key)
                if any(c == SELF for _, c in out):
                    self._fid_self.add(r)
        memo[n] = r
        return r

    def _fid_loop(self, o: _Node, m: int, depth: int) -> int:
        """`_fid(o, m)`, or an opaque id if it is being made (a loop through several
        nonterminals at one origin)."""
        r = o.fid.get(m, 0)
        if r is None:
            r = self._opaque
            self._opaque -= 1
            return r
        return self._fid(o, m, depth + 1)

    def truncated(self, s: int, depth: int):
        return self.canonical(s)
