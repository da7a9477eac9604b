"""The slicer: whole groups of tokens allowed at once, without walking their part of the trie.

Data flow: once per tokenizer (lazily, on the first mask that needs it), the vocabulary is
split into parts: each slice regex below takes the tokens whose bytes keep it live (tokens that
an earlier slice took excepted), and the rest form the last part.  Each part gets its own token
trie and a precomputed bitmask (an int) of its tokens.

For a lexer state, the pairs (slice state, lexer state) reachable byte by byte over the strings
that keep the slice live are explored (a few hundred pairs and twenty thousand new transitions
at most, past either budget the part is walked: the walk derives only the bytes its tokens
have).  When no pair is dead the slice applies whole: its bitmask is added without a walk.
When each slice state goes with one lexer state only (`relation`), the part's tokens are
grouped by the slice state their bytes end in (`by_end_state`, once per tokenizer), and the
groups whose lexer state is live are added: a counted repetition such as a JSON string with
`maxLength`, left with fewer characters than the slice's bound, costs a few set unions instead
of a walk of most of the vocabulary.  A state with a member "infinite set less finitely many
strings, then a continuation" (JSON object keys other than the named ones) needs no exploring
when the infinite set stays infinite after every string of the slice (`applies`).  Otherwise
the part is walked as usual.  For the word and whitespace slices, a walk's result is kept
per signature (`part_mask`): the slice's (unbounded) states paired with the lexer's, the
lexer's renamed in the order met, and each pair's transitions by every byte; lexer states
with one signature (an identifier after each of its letters, in any grammar) allow the same
tokens of the part, so the walk is done once.  When a slice does not apply but only a few bytes,
each after given bytes, can kill the lexer state along its strings (a line of any characters but
U+0085 and U+2028: the pairs C2 85 and 80 A8), the part's tokens holding such a byte pair are
found in its bytes joined (`blob`, kept in the trie file) by `bytes.find`, and only those are
checked byte by byte (`avoid_mask`).  Before all that, when few of a part's first bytes keep a
grammar state live and, after each of them, no byte that the part's tokens go on with (by the
slice, or by the part's own trie) keeps it live, only the part's one-byte tokens can be allowed
(`_one_byte`: after a space in a whitespace lexeme, the lone space of the word parts), found
without exploring or walking; the rest of the vocabulary gets that check too.  After forced
bytes that a longer token could extend (the matcher's prefix), each slice is read from its
state after the prefix, over the part's tokens that start with it (`sub_bits`).  This is the
idea of llguidance's slicer (its default slices are similar), and it keeps masks exact: a
slice only replaces a walk whose result it provably equals.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cached_property
from itertools import accumulate
from operator import itemgetter

from . import derivatives, regex_syntax, trie_cache
from .tokens import TokenTrie

# Words (with or without a leading space; lowercase ones apart, which an identifier such as
# `[a-z][a-z0-9_]*` takes whole), whitespace, and free text without quotes, backslashes or
# control characters in length bands.  Order matters: a token belongs to the first slice it fits.
SLICES = (
    r"[a-z]{1,12}",
    r"[A-Za-z]{1,12}",
    r" [a-z]{1,12}",
    r" [A-Za-z]{1,12}",
    r"[\x20\x0A\x0D\x09]+",
    r'[^"\\\x00-\x1F\x7F]{1,10}',
    r'[^"\\\x00-\x1F\x7F]{1,30}',
)
PAIR_BUDGET = 400
# A state that at most this many of a part's first bytes keep live is first checked for
# allowing none of the part's longer tokens (`_Slice.one_byte`): a few derivatives known.
ONE_BYTE_FIRSTS = 4
# Transitions not yet known that checking whether a slice applies may derive, at most: past
# it the part is walked.  The check derives each lexer state it meets by every byte of the
# slice's byte classes, the walk only by the bytes the part's tokens have: after `{"` in an
# object whose long keys share prefixes (and whose additional keys keep every letter live),
# the check would derive up to a hundred thousand transitions of large states, the walk a few
# thousand.  Not lower: the later masks of the same object reuse what a long check derived
# (json_bench.py --sample 100: per-mask p99 87 ms with 5,000, 76 ms with 20,000, 75 with 50,000).
DERIVE_BUDGET = 20000
# A slice whose strings include those of an earlier slice (index): when that one does not
# apply, neither does this one (both budgets are met as soon, or a dead state is found).
INCLUDES = {6: 5}
# Parts' masks kept per signature (`_Slice.part_mask`), per slice: 128 masks of a 200k
# vocabulary are 3 MB.
MEMO_LIMIT = 128
# A signature's budgets (pairs of states, transitions not yet known): small, since a signature
# past them is wasted work before the walk.  Identifiers and words in a grammar's lexer pair
# with a slice in a few dozen pairs; free text in an Earley lexer often never closes (its
# states do not repeat), and after SIG_FAILURES signatures past the budgets in one grammar
# that slice is walked without trying.
SIG_PAIR_BUDGET = 64
SIG_DERIVE_BUDGET = 200
SIG_FAILURES = 2
# The slices whose parts are kept per signature: words.  The free-text slices' products with
# an Earley lexer's states rarely close within the budgets (the lexer's states change at every
# lexeme end: 131 of 143 tried over bench_grammar.py's walks) and the others were never met
# again there, so trying them only cost time.  The whitespace part (a few hundred tokens) is
# walked for less than its signature costs: JSON's `"\n" [ \t]{0,20}` pairs with it in some
# twenty states (bench_grammar.py's walks: json_arr 4.1 ms of signatures, 14 hits of 19,
# against 0.6 ms of walks; json 0.85 against 0.13 ms; outlines' arithmetic, the one walk the
# signatures paid for, 0.6 against 1.6 ms).
SIGNED = frozenset({0, 1, 2, 3})
# `_Slice.avoid_mask`: budgets of its exploration (transitions not yet known; pairs as
# PAIR_BUDGET), and the tokens it checks one by one at most (past them the part is walked).
# After a list item's first character (llama.cpp's list.gbnf: any character but line breaks,
# U+0085, U+2028 and U+2029) a walk visits ~90,000 tokens of the free-text slice; the tokens
# holding the byte pairs that can end such a character badly are a few dozen.
AVOID_DERIVE_BUDGET = 300
AVOID_MIN_TOKENS = 2000  # (a smaller part, as the whitespace one, is walked at once)
AVOID_CANDIDATES = 2000
# ... and the distinct bytes that kill the lexer's states at most (a lexer state that many bytes
# kill, as an identifier's uppercase letters, leaves too many tokens to check), and the calls
# past the budgets after which it is not tried again for a lexer (as SIG_FAILURES).
AVOID_DEAD_BYTES = 12
AVOID_PAIRS = 64
AVOID_FAILURES = 3


class _Slice:
    def __init__(self, pattern: str, trie: TokenTrie, taken: set, ids=None, mask=None):
        """`ids`, `mask`: the slice's tokens when known (from a trie file), else found by a walk."""
        self.pattern = pattern
        self.es = derivatives.ExprSet()
        self.start = derivatives.compile_tree(self.es, regex_syntax.parse(pattern))
        # Signatures (part_mask) follow the slice's strings without its length bound: the
        # same tokens, fewer states to pair with the lexer's (a lexer state that does not
        # count would otherwise be paired with every count).
        self.sig_es = derivatives.ExprSet()
        self.sig_start = derivatives.compile_tree(
            self.sig_es, regex_syntax.parse(re.sub(r"\{1,\d+\}$", "+", pattern)))
        self.sig_viable: dict = {}
        self.seconds: dict = {}  # first byte -> the bytes the slice may go on with after it
        if ids is None:
            ids = [t for t in trie.walk(self.es.derive_class, self.start) if t not in taken]
            taken.update(ids)
        self.ids = ids
        self.mask = _bits(ids) if mask is None else mask
        self._stored = None  # (trie file, header entry) of this part's trie
        self.viable: dict = {}  # slice state -> [(byte, next slice state)]
        self.ends: dict | None = None  # see by_end_state
        self.memo: dict = {}  # signature -> bitmask (part_mask)
        self.memo_hits = 0  # (how often a signature was met again: for tests and benchmarks)
        self.sig_failures: dict = {}  # id(lexer) -> signatures past the budgets (part_mask)
        self.avoid_failures: dict = {}  # id(lexer) -> `avoid_mask` calls past the budgets

    @cached_property
    def classes(self) -> list:
        """Bytes that every byte set of the slice regex treats alike have the same derivatives:
        one derivative per class (a few dozen, not 256) when exploring the slice's states."""
        return _classes(self.es)

    @cached_property
    def first_mask(self) -> int:
        """The 256-bit set of the bytes the part's tokens may start with (its slice's)."""
        return self.es.first_bytes(self.start)

    @cached_property
    def sig_classes(self) -> list:
        """`classes` of the slice without its length bound (made on first use)."""
        return _classes(self.sig_es)

    @property
    def trie(self) -> TokenTrie:
        """This part's own token trie (built on first use: many states take the slice whole)."""
        t = self.__dict__.get("_trie")
        if t is None and self._stored is not None:
            full = self._full
            t = self._trie = TokenTrie.from_arrays(*self._stored[:2], full.token_bytes, full.n_vocab, None, None)
        elif t is None:
            full = self._full
            tb = full.token_bytes
            t = self._trie = TokenTrie({i: tb[i] for i in self._order}, full.n_vocab, None, None, self._order)
        return t

    def steps(self, r: int, sig: bool = False):
        """[(bytes, getter, next slice state)] per byte class that keeps slice state `r` live;
        `getter(row)` reads a lexer state's transitions by those bytes in one C call.  `sig`:
        of the slice without its length bound (`signature`)."""
        viable = self.sig_viable if sig else self.viable
        v = viable.get(r)
        if v is None:
            d = (self.sig_es if sig else self.es).derive
            v = []
            for members in (self.sig_classes if sig else self.classes):
                n = d(r, members[0])
                if n:
                    get = itemgetter(*members) if len(members) > 1 else itemgetter(members[0], members[0])
                    v.append((members, get, n))
            viable[r] = v
        return v

    def _next(self, es, q: int, r: int, out: set, budget: list) -> bool:
        """Add to `out` the pairs after (slice state r, lexer state q) by one byte; False if
        some byte keeping the slice live kills the lexer state, or past `budget[0]` new
        transitions (decremented)."""
        rows = es.rows
        row = rows[q]
        for members, get, r2 in self.steps(r):
            qs = get(row)
            if -1 in qs:  # transitions not derived yet
                derive = es.derive_class
                for b in members:
                    if row[b] < 0:
                        derive(q, b)
                        budget[0] -= 1
                        row = rows[q]
                if budget[0] < 0:
                    return False
                row = rows[q]  # (a row shared while unknown is replaced by its first derivative)
                qs = get(row)
            if 0 in qs:
                return False
            for q2 in set(qs):
                out.add((r2, q2))
        return True

    def one_byte(self, es, state: int, live: int):
        """`_one_byte` of this part: its tokens' second bytes bounded first by the slice's (no
        trie needed), then by those its trie has."""
        seconds = self.seconds

        def slice_seconds(b: int) -> int:
            r = seconds.get(b)
            if r is None:
                r = seconds[b] = self.es.first_bytes(self.es.derive(self.start, b))
            return r

        return _one_byte(es, state, live, slice_seconds, lambda: self.trie)

    def splits(self, bytes_: int) -> bool:
        """Whether some byte class of the slice's start (`steps`) holds bytes of the 256-bit set
        `bytes_` and bytes outside it."""
        masks = self.__dict__.get("_start_masks")
        if masks is None:
            masks = self._start_masks = [sum(1 << b for b in members) for members, _, _ in self.steps(self.start)]
        for m in masks:
            if m & bytes_ and m & ~bytes_:
                return True
        return False

    def relation(self, es, state: int, start: int | None = None):
        """{slice state: lexer state} over every string that keeps the slice live, read from
        lexer state `state` (NOTHING included: a dead lexer state stays dead), when each slice
        state goes with one lexer state only; None otherwise.  Then a token of this part is
        allowed exactly when the lexer state paired with the slice state its bytes end in is
        live: for `[^"]{0,7}` and the slice `[^"...]{1,10}` both states count characters, and
        the part's tokens of at most seven characters are allowed, whatever their bytes.
        `start`: the slice state to read from (after a prefix), by default its start."""
        rows, derive = es.rows, es.derive_class
        start = self.start if start is None else start
        rel = {start: state}
        todo = [start]
        while todo:
            r = todo.pop()
            q = rel[r]
            if not q:  # a dead lexer state stays dead: every state after r pairs with it
                for r2 in self.after(r):
                    old = rel.get(r2)
                    if old is None:
                        rel[r2] = 0
                    elif old:
                        return None
                if len(rel) > PAIR_BUDGET:
                    return None
                continue
            row = rows[q]
            for members, get, r2 in self.steps(r):
                qs = get(row)
                if -1 in qs:  # transitions not derived yet
                    for b in members:
                        if row[b] < 0:
                            derive(q, b)
                            row = rows[q]
                    qs = get(row)
                q2 = qs[0]
                if qs.count(q2) != len(qs):
                    return None
                old = rel.get(r2)
                if old is None:
                    if len(rel) >= PAIR_BUDGET:
                        return None
                    rel[r2] = q2
                    todo.append(r2)
                elif old != q2:
                    return None
        return rel

    def after(self, r: int) -> tuple:
        """The slice states reachable from slice state `r` by one byte or more (kept)."""
        memo = self.__dict__.setdefault("_after", {})
        out = memo.get(r)
        if out is None:
            seen: dict = {}
            todo = [r]
            while todo:
                for _, _, r2 in self.steps(todo.pop()):
                    if r2 not in seen:
                        seen[r2] = None
                        todo.append(r2)
            out = memo[r] = tuple(seen)
        return out

    def shallow(self, rel: dict, start: int | None = None) -> bool:
        """Whether no live slice state of `relation`'s answer but the start leads to a live one:
        then the allowed tokens end within a byte or two of a live start (after an identifier,
        the lone space of ` [A-Za-z]{1,12}`), and a walk of the part, pruned at once, is cheaper
        than grouping its tokens by end state (`by_end_state`, tens of ms once per tokenizer)."""
        start = self.start if start is None else start
        for r, q in rel.items():
            if q and r != start:
                for _, _, r2 in self.steps(r):
                    if rel.get(r2):
                        return False
        return True

    def by_end_state(self) -> dict:
        """{slice state: bitmask of the part's tokens whose bytes end in it} (built on first use)."""
        groups = self.ends
        if groups is None:
            trie = self.trie
            byte, depth, token, extra = trie.byte, trie.depth, trie.token, trie.extra
            derive, rows = self.es.derive_class, self.es.rows
            states = [self.start] * (trie.max_token_len + 2)
            ids: dict = {}
            for i in range(1, len(byte)):
                d = depth[i]
                p = states[d - 1]
                b = byte[i]
                r = rows[p][b]
                if r < 0:
                    r = derive(p, b)
                states[d] = r
                t = token[i]
                if t >= 0:
                    g = ids.get(r)
                    if g is None:
                        g = ids[r] = []
                    g.append(t)
                    if i in extra:
                        g.extend(extra[i])
            groups = self.ends = {r: _bits(ts) for r, ts in ids.items()}
        return groups

    def keeps_infinite(self, es, base: int) -> bool:
        """Whether `base` matches infinitely many strings after every string keeping this
        slice live (cached per ExprSet).  Shown with derivatives: each state the slice's strings
        lead `base` to (none of them dead) can reach `base` again, and `base` can reach itself
        by a non-empty string, so it repeats that string without end."""
        key = (self.pattern, base)
        r = es.slice_facts.get(key)
        if r is None:
            r = es.slice_facts[key] = self._keeps_infinite(es, base)
        return r

    def _explore(self, es, state: int, start: int | None = None):
        """The states `state` reaches along the strings keeping this slice live (pairs of slice
        state and lexer state), or None when one of them kills it or a budget runs out."""
        start = self.start if start is None else start
        seen = {(start, state)}
        todo = [(start, state)]
        nxt: set = set()
        budget = [DERIVE_BUDGET]
        while todo:
            r, q = todo.pop()
            nxt.clear()
            if not self._next(es, q, r, nxt, budget):
                return None
            for pair in nxt:
                if pair not in seen:
                    if len(seen) >= PAIR_BUDGET:
                        return None
                    seen.add(pair)
                    todo.append(pair)
        return seen

    def _keeps_infinite(self, es, base: int) -> bool:
        seen = self._explore(es, base)
        if seen is None:
            return False
        derive = es.derive
        for s in {q for _, q in seen}:
            # breadth first over every byte, from the derivatives of s (non-empty strings)
            level = {derive(s, b) for b in range(256)} - {0}
            found = set(level)
            while level and base not in found and len(found) < 64:
                level = {derive(t, b) for t in level for b in range(256)} - {0} - found
                found |= level
            if base not in found:
                return False
        return True

    def signature(self, es, state: int):
        """The product of this slice with lexer state `state`, with the lexer's states renamed
        in the order a breadth-first exploration meets them (NOTHING is 0), or None past the
        budgets.  Two lexer states (of any grammar) with equal signatures allow the same tokens
        of this part: a token is allowed when its path through this product never meets 0, and
        the path depends only on the slice's states and the renamed transitions."""
        rows, derive = es.rows, es.derive_class
        canon = {0: 0, state: 1}
        seen = {(self.sig_start, state)}
        pairs = [(self.sig_start, state)]
        key: list = []
        budget = SIG_DERIVE_BUDGET
        i = 0
        while i < len(pairs):
            r, q = pairs[i]
            i += 1
            key.append((r, canon[q]))
            for members, get, r2 in self.steps(r, True):
                row, qs, budget = _derived(rows, derive, q, members, get, budget)
                if budget < 0:
                    return None
                for q2 in dict.fromkeys(qs):  # (distinct, in byte order: a canonical order)
                    if q2 not in canon:
                        canon[q2] = len(canon)
                    if q2 and (r2, q2) not in seen:
                        if len(seen) >= SIG_PAIR_BUDGET:
                            return None
                        seen.add((r2, q2))
                        pairs.append((r2, q2))
                key.append(tuple(map(canon.__getitem__, qs)))
        return tuple(key)

    def part_mask(self, es, state: int):
        """Bitmask of this part's tokens whose bytes all keep `state` live: a walk of the part,
        kept per signature (a grammar's lexer states after different tokens, and different
        grammars, often restrict a slice alike: identifiers after each letter, free text after
        each word), or None when the signature is past its budgets."""
        # (keyed by id: a reused id only costs or saves a few signatures, never a wrong mask)
        failures = self.sig_failures
        if failures.get(id(es), 0) >= SIG_FAILURES:
            return None
        sig = self.signature(es, state)
        if sig is None:
            if len(failures) >= 1024:
                failures.clear()
            failures[id(es)] = failures.get(id(es), 0) + 1
            return None
        memo = self.memo
        bits = memo.get(sig)
        if bits is not None:
            self.memo_hits += 1
        else:
            bits = _bits(self.trie.walk(es.derive_class, state))
            if len(memo) >= MEMO_LIMIT:  # drop the oldest half (insertion order)
                for k in list(memo)[:MEMO_LIMIT // 2]:
                    del memo[k]
            memo[sig] = bits
        return bits

    def applies(self, es, state: int, start: int | None = None) -> bool:
        """Whether every string keeping this slice live (from slice state `start`, by default
        its start) keeps `state` live."""
        if start is not None and start != self.start:
            return self._explore(es, state, start) is not None
        # A member M C of `state` (an alternation, or `state` itself) where M is some infinite
        # set `base` less finitely many strings K (`ExprSet.minus_base`: JSON object keys other
        # than the named ones): after a string w keeping the slice live, w⁻¹M = w⁻¹base less
        # w⁻¹K is not empty when w⁻¹base is infinite, nor is C (not NOTHING), so neither is
        # w⁻¹(M C), and the state stays live without exploring M's states (one per prefix of a
        # named key).
        bases = es.minus_base
        if bases:
            exprs = es.exprs
            x = exprs[state]
            for m in x[1] if x[0] == "o" else (state,):
                y = exprs[m]
                base = bases.get(m)
                if base is None and y[0] == "c":
                    base = bases.get(y[1])
                if base is not None and self.keeps_infinite(es, base):
                    return True
        return self._explore(es, state) is not None


    def dead_pairs(self, es, state: int, start: int):
        """Where reading a string that keeps this slice live from (`start`, `state`) can kill the
        lexer state: ({byte: {byte before it}}, [bytes killing it first]), the byte before
        being that of the string (None: the first byte); None past the budgets, False when
        more than AVOID_DEAD_BYTES bytes kill (found early, so not counted as a failure).  A token of
        this part none of whose byte pairs (nor its first byte) is listed keeps `state` live:
        each of its bytes leads to an explored pair by a live transition.  Read with the slice
        unbounded (`sig_es`, `start` one of its states): more strings, so the same holds, and
        a handful of slice states instead of one per count."""
        rows, derive = es.rows, es.derive_class
        pair0 = (start, state)
        seen = {pair0}
        into: dict = {pair0: {None}}  # pair -> the bytes that lead to it (None: the start)
        order = [pair0]
        dead: list = []  # (pair, bytes killing its lexer state)
        dead_bytes: set = set()
        budget = AVOID_DERIVE_BUDGET
        i = 0
        while i < len(order):
            r, q = pair = order[i]
            i += 1
            for members, get, r2 in self.steps(r, True):
                row, qs, budget = _derived(rows, derive, q, members, get, budget)
                if budget < 0:
                    return None
                if 0 in qs:
                    dead.append((pair, [b for b in members if not row[b]]))
                    dead_bytes.update(dead[-1][1])
                    if len(dead_bytes) > AVOID_DEAD_BYTES:
                        return False
                for b in members:
                    q2 = row[b]
                    if q2:
                        p2 = (r2, q2)
                        got = into.get(p2)
                        if got is None:
                            if len(seen) >= PAIR_BUDGET:
                                return None
                            seen.add(p2)
                            got = into[p2] = set()
                            order.append(p2)
                        got.add(b)
        # (a pair met again later gains incoming bytes: `into` is complete only now)
        after: dict = {}
        first: list = []
        for pair, bs in dead:
            prev = into[pair]
            for b in bs:
                if None in prev:
                    first.append(b)
                after.setdefault(b, set()).update(x for x in prev if x is not None)
        return after, first

    def blob(self):
        """(the part's token bytes joined, in the order of `ids`; the offset where each starts,
        and the end), from the trie file if it has them, else made on first use."""
        r = self.__dict__.get("_blob")
        if r is None:
            if self._stored is not None and self._stored[2] is not None:
                stored, i, k = self._stored[0], *self._stored[2]
                r = (stored.raw(i), stored.typed(k))
            else:
                parts = list(map(self._full.token_bytes.__getitem__, self.ids))
                r = (b"".join(parts), [0, *accumulate(map(len, parts))])
            self._blob = r
        return r

    def avoid_mask(self, es, state: int, start: int, prefix: bytes):
        """Bitmask of this part's tokens (those starting with `prefix`, read from slice state
        `start` after it) whose remaining bytes keep `state` live, found from the few tokens
        holding a byte pair that can kill it (`dead_pairs`), each checked byte by byte: the
        others are allowed whole.  None past the budgets or with too many such tokens."""
        failures = self.avoid_failures
        if failures.get(id(es), 0) >= AVOID_FAILURES:
            return None
        sig_start = self.sig_start
        d = self.sig_es.derive
        for b in prefix:
            sig_start = d(sig_start, b)  # (live: its strings include the slice's)
        found = self.dead_pairs(es, state, sig_start)
        if found is False:
            return None
        if found is None:
            if len(failures) >= 1024:
                failures.clear()
            failures[id(es)] = failures.get(id(es), 0) + 1
            return None
        after, first = found
        blob, starts = self.blob()
        ids = self.ids
        cands: set = set()
        limit = AVOID_CANDIDATES
        if after:
            # each killing byte pair found by `bytes.find` (C), counted first
            pairs = [bytes([a, b]) for b, prev in after.items() for a in prev]
            if len(pairs) > AVOID_PAIRS or sum(map(blob.count, pairs)) > limit:
                return None
            find = blob.find
            for pair in pairs:
                i = find(pair)
                while i >= 0:
                    k = bisect_right(starts, i) - 1
                    if starts[k + 1] > i + 1:  # (a pair within one token)
                        cands.add(k)
                    i = find(pair, i + 1)
        if first:  # tokens whose first byte after the prefix kills the state: checked each
            drop_first = []
            trie = self.trie
            for b in set(first):
                node = trie.node_at(prefix + bytes([b]))
                if node is not None:  # (then every token below it is dropped)
                    drop_first.extend(t for t in trie.token[node:trie.end[node]] if t >= 0)
                    for k, more in trie.extra.items():
                        if node <= k < trie.end[node]:
                            drop_first.extend(more)
            if len(drop_first) > limit:
                return None
        base = self.sub_bits(prefix) if prefix else self.mask
        if first and drop_first:
            base &= ~_bits(drop_first)
        if not cands:
            return base
        rows, derive = es.rows, es.derive_class
        n = len(prefix)
        drop = []
        tb = self._full.token_bytes
        for k in cands:
            data = tb[ids[k]]
            if n and (len(data) <= n or not data.startswith(prefix)):
                continue
            s = state
            for b in data[n:] if n else data:
                s2 = rows[s][b]
                if s2 < 0:
                    s2 = derive(s, b)
                if not s2:
                    drop.append(ids[k])
                    break
                s = s2
        return base & ~_bits(drop) if drop else base

    def sub_bits(self, prefix: bytes) -> int:
        """Bitmask of this part's tokens strictly longer than `prefix` that start with it."""
        memo = self.__dict__.setdefault("_sub", {})
        r = memo.get(prefix)
        if r is None:
            trie = self.trie
            node = trie.node_at(prefix)
            if node is None:
                r = 0
            else:
                a, b = node + 1, trie.end[node]
                ts = [t for t in trie.token[a:b] if t >= 0]
                for k, more in trie.extra.items():
                    if a <= k < b:
                        ts.extend(more)
                r = _bits(ts)
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[prefix] = r
        return r



def _derived(rows, derive, q, members, get, budget: int):
    """Lexer state `q`'s row and its targets by the bytes `members` (`get(row)`), the missing
    transitions derived first, one unit of `budget` each: (row, targets, budget left)."""
    row = rows[q]
    qs = get(row)
    if -1 in qs:  # transitions not derived yet
        for b in members:
            if row[b] < 0:
                derive(q, b)
                budget -= 1
                row = rows[q]
        qs = get(row)
    return row, qs, budget

def _one_byte(es, state: int, live: int, seconds, trie_of):
    """The ids of a part's one-byte tokens whose byte is in `live` (the part's first bytes that
    keep `state` live: an Earley grammar's `live_mask`), when no longer token of the part can
    keep `state` live: after each such byte b, no byte the part's tokens may go on with keeps
    it live (`live_mask` of the state after b against `seconds(b)` when given, a bound, else
    the bytes after b in the part's trie, `trie_of()`, if its arrays are already read).  Else
    None.  After a
    space in a whitespace lexeme, the parts of words and of longer free text: the lone space,
    without exploring the slice's states nor walking the part."""
    rows, live_mask = es.rows, es.live_mask
    bs = []
    trie = None
    while live:
        low = live & -live
        live ^= low
        b = low.bit_length() - 1
        s1 = rows[state][b]
        if s1 < 0:
            s1 = es.derive_class(state, b)
        if not s1:  # (not a byte of `live`)
            continue
        m = live_mask(s1)
        if m is None:
            return None
        if seconds is None or m & seconds(b):
            if trie is None:
                trie = trie_of()
            # (a part's trie arrays not read yet, from the trie file: left for a walk that
            # needs them, not read for this check alone)
            if "end" not in trie.__dict__ or m & trie.seconds(b):
                return None
        bs.append(b)
    if trie is None:
        trie = trie_of()
    out = []
    for b in bs:
        node = trie.children0.get(b)
        if node is not None and trie.token[node] >= 0:
            out.append(trie.token[node])
            out.extend(trie.extra.get(node, ()))
    return out


def _classes(es) -> list:
    """The bytes that every byte set of `es` treats alike, as lists: one derivative per class
    (a few dozen, not 256) when exploring a slice's states."""
    sets = list({x[1]: None for x in es.exprs if x[0] == "b"})  # (distinct sets, in order)
    if not sets:
        return [list(range(256))]
    classes: dict = {}  # membership in each set -> bytes
    # (each byte's memberships read off the sets' numerals, byte b at position b, by zip in C:
    # a shift and a mask of a 256-bit int per byte and set cost 3-4x CPython's time under
    # Pyodide)
    for b, key in enumerate(zip(*[format(m, "0256b")[:-257:-1] for m in sets])):
        classes.setdefault(key, []).append(b)
    return list(classes.values())


def _prefix_tokens(trie: TokenTrie, prefix: bytes) -> list:
    """The tokens of `trie` that are prefixes of `prefix` (`prefix` itself included)."""
    token, extra = trie.token, trie.extra
    out: list = []
    for k in range(1, len(prefix) + 1):
        p = trie.node_at(prefix[:k])
        if p is None:
            break
        if token[p] >= 0:
            out.append(token[p])
            out.extend(extra.get(p, ()))
    return out


def _bits(ids) -> int:
    """Bitmask (an int, bit i = token i) of `ids`."""
    if not ids:
        return 0
    top = max(ids)
    if len(ids) * 32 < top:  # sparse: a byte buffer, eight tokens a byte
        buf = bytearray((top >> 3) + 1)
        for t in ids:
            buf[t >> 3] |= 1 << (t & 7)
        return int.from_bytes(buf, "little")
    # Denser (a walk allowing a thirty-second of the ids below the top one or more): one ASCII
    # digit per token, read back as a base-2 numeral.  A plain store per id instead of a
    # read-modify-write with shifts, and the packing done by int() in C: about half the time
    # natively, a third under Pyodide, whose interpreter is slower than its C code by more
    # than CPython's.  From one id in 32 on, the numeral's C work (one digit per id below the
    # top one) costs less than the read-modify-writes it saves (one id in 8 before: the
    # `_bits` calls of bench_grammar.py's walks, replayed, a fifth less CPU time natively and
    # a third less under Pyodide).
    digits = bytearray(b"0") * (top + 1)
    for t in ids:
        digits[t] = 49  # b"1"
    digits.reverse()  # (the numeral's last digit is bit 0)
    return int(digits, 2)


class Slicer:
    """The parts of one tokenizer's vocabulary (cached on its `TokenTrie`)."""

    def __init__(self, trie: TokenTrie):
        taken: set = set()
        self.slices = [_Slice(pattern, trie, taken) for pattern in SLICES]
        part = {}
        for i, s in enumerate(self.slices):
            for t in s.ids:
                part[t] = i
        orders: list = [[] for _ in range(len(self.slices) + 1)]
        get, rest = part.get, len(self.slices)
        for t in trie.order:  # sorted by bytes, and so is each part
            orders[get(t, rest)].append(t)
        tb = trie.token_bytes
        for s, o in zip(self.slices, orders):  # a slice's own trie: built when first walked
            s._order, s._full = o, trie
        self.rest = TokenTrie({t: tb[t] for t in orders[-1]}, trie.n_vocab, None, None, orders[-1])

    @classmethod
    def from_stored(cls, trie: TokenTrie, stored) -> "Slicer":
        """The slicer of `trie` as a trie file (`trie_cache.Stored`) holds it."""
        self = cls.__new__(cls)
        self.slices = []
        taken: set = set()
        for rec, pattern in zip(stored.slices(SLICES), SLICES):
            s = _Slice(pattern, trie, taken, stored.array(rec["ids"]), int.from_bytes(stored.raw(rec["mask"]), "little"))
            s._full, s._stored = trie, (stored, rec["trie"], (rec["blob"], rec["starts"]) if "blob" in rec else None)
            self.slices.append(s)
        self.rest = TokenTrie.from_arrays(stored, stored.header["rest"], trie.token_bytes, trie.n_vocab, None, None)
        return self

    @classmethod
    def of(cls, trie: TokenTrie) -> "Slicer":
        """The slicer of `trie` (cached on it): read from its trie file if that has it, else
        built and the file rewritten with it (trie_cache.py)."""
        s = trie._slicer
        if s is None:
            stored = trie.stored
            if stored is not None and stored.slices(SLICES):
                s = cls.from_stored(trie, stored)
            else:
                s = cls(trie)
                if trie.cache_file is not None:
                    try:
                        trie_cache.save(*trie.cache_file, trie, s)
                    except OSError:
                        pass
            trie._slicer = s
        return s

    @staticmethod
    def stored_for(trie: TokenTrie) -> bool:
        """Whether `trie` was read from a trie file holding this slicer (then `of` is cheap)."""
        return trie.stored is not None and bool(trie.stored.slices(SLICES))

    def mask(self, es, state: int, prefix: bytes = b"") -> int:
        """Bitmask (an int, bit i = token i) of the tokens whose bytes all keep `state` live;
        with `prefix`, as `TokenTrie.walk` with it: the tokens prefix + rest whose rest keeps
        `state` live, and the tokens that are prefixes of `prefix` (each part's slice read from
        its state after the prefix; a part the prefix kills has no such longer token)."""
        acc, ids = self.parts(es, state, prefix)
        return acc | _bits(ids)

    def parts(self, es, state: int, prefix: bytes = b"") -> tuple:
        """`mask` as (bitmask of the parts taken whole or by end state, ids of the tokens
        walked): the matcher packs a few walked ids straight into the mask's bytes, since
        converting a vocabulary-wide int from and to bytes costs more than most masks (int
        `from_bytes` and `to_bytes` of 200k bits: 50-100 us each natively)."""
        acc = 0
        ids: list = []
        failed: set = set()  # slices that do not apply whole
        no_avoid: set = set()  # slices whose `avoid_mask` was past its budgets
        # a state that few bytes keep live (a number, whitespace) skips at once the parts no
        # token of which starts with one of them (the words' parts after a digit)
        firsts = None if prefix else getattr(es, "live_mask", None)
        if firsts is not None:
            firsts = firsts(state)
        for i, s in enumerate(self.slices):
            if not s.ids:
                continue
            killed = 0  # the part's first bytes that kill `state` (with `firsts` known)
            if firsts is not None:
                live = firsts & s.first_mask
                if not live:
                    continue
                if live.bit_count() <= ONE_BYTE_FIRSTS:
                    one = s.one_byte(es, state, live)
                    if one is not None:
                        ids.extend(one)
                        continue
                killed = s.first_mask & ~firsts
            start = s.start
            if prefix:
                d = s.es.derive
                live = 0  # how many bytes of the prefix keep the slice live
                for b in prefix:
                    start = d(start, b)
                    if not start:
                        break
                    live += 1
                if not live:  # no token of the part starts with the prefix's first byte
                    continue
                ids.extend(_prefix_tokens(s.trie, prefix[:live]))
                if not start:
                    continue
            if INCLUDES.get(i) not in failed:
                # (a byte class of the slice's start holding bytes that kill `state` and bytes
                # that do not: `relation` says None at its first step)
                rel = None if killed and s.splits(killed) else s.relation(es, state, start)
                if rel is not None:
                    if all(rel.values()):
                        acc |= s.sub_bits(prefix) if prefix else s.mask
                    elif prefix or any(q for r, q in rel.items() if r != start):
                        # (else no token of the part: each slice needs a byte, none returns
                        # to its start; after a prefix, the state it leads to may recur)
                        if s.shallow(rel, start):
                            ids.extend(s.trie.walk(es.derive_class, state, prefix))
                            continue
                        ends = s.by_end_state()
                        sub = s.sub_bits(prefix) if prefix else -1
                        for r, q in rel.items():
                            if q and r in ends:
                                acc |= ends[r] & sub
                    continue
                # (a first byte killing `state` is a string of the slice killing it)
                if not killed and s.applies(es, state, start):
                    acc |= s.sub_bits(prefix) if prefix else s.mask
                    continue
            failed.add(i)  # (and so does a slice including its strings: INCLUDES)
            bits = s.part_mask(es, state) if i in SIGNED and not prefix else None
            # (more first bytes killing `state` than AVOID_DEAD_BYTES: `dead_pairs` says False)
            if bits is None and len(s.ids) >= AVOID_MIN_TOKENS and INCLUDES.get(i) not in no_avoid \
                    and killed.bit_count() <= AVOID_DEAD_BYTES:
                bits = s.avoid_mask(es, state, start, prefix)
                if bits is None:
                    no_avoid.add(i)
            if bits is None:
                ids.extend(s.trie.walk(es.derive_class, state, prefix))
            else:
                acc |= bits
        rest = self.rest
        if firsts is not None:
            live = firsts & rest.first_mask()
            one = None
            if live and live.bit_count() <= ONE_BYTE_FIRSTS:
                one = _one_byte(es, state, live, None, lambda: rest)
            if one is not None or not live:
                ids.extend(one or ())
                return acc, ids
        ids.extend(rest.walk(es.derive_class, state, prefix))
        return acc, ids
