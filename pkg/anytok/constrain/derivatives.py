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

The derivative of an expression by a byte is the expression matching the rest of every string
it matches that starts with the byte.  A state of the DFA is an expression id; its transition by
a byte, computed on first use and stored in the state's 256-entry row, is its derivative's id.
Since there is no intersection or complement, every expression other than NOTHING matches some
string: a state is dead exactly when it is NOTHING, and live states can always reach
acceptance.  A state accepts (is "nullable") when it matches the empty string.
"""

from __future__ import annotations

NOTHING = 0
EPSILON = 1
FULL_MASK = (1 << 256) - 1


class ExprSet:
    """Hash-consed expressions with cached nullability and derivatives (one per regex)."""

    def __init__(self):
        self.exprs: list = [("n",), ("e",)]
        self.ids: dict = {("n",): 0, ("e",): 1}
        self.nullable: list = [False, True]
        self.rows: list = [[0] * 256, [0] * 256]  # per state: 256 derivative ids, -1 = not yet known

    # -- constructors ----------------------------------------------------------------------
    def _intern(self, key, nullable: bool) -> int:
        i = self.ids.get(key)
        if i is None:
            i = len(self.exprs)
            self.exprs.append(key)
            self.ids[key] = i
            self.nullable.append(nullable)
            self.rows.append([-1] * 256)
        return i

    def byteset(self, mask: int) -> int:
        if mask == 0:
            return NOTHING
        return self._intern(("b", mask), False)

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
        if not seen:
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

    # -- derivatives -----------------------------------------------------------------------
    def derive(self, e: int, byte: int) -> int:
        """The id of the derivative of `e` by `byte` (cached in the row of `e`)."""
        row = self.rows[e]
        r = row[byte]
        if r >= 0:
            return r
        x = self.exprs[e]
        k = x[0]
        if k == "b":
            r = EPSILON if x[1] >> byte & 1 else NOTHING
        elif k == "c":
            # d(a b) = d(a) b | d(b) if a is nullable; along the chain, without recursion
            parts = []
            exprs, nullable = self.exprs, self.nullable
            while True:
                a, b = x[1], x[2]
                parts.append(self.concat(self.derive(a, byte), b))
                if not nullable[a]:
                    break
                x = exprs[b]
                if x[0] != "c":
                    parts.append(self.derive(b, byte))
                    break
            r = self.alt(parts)
        elif k == "o":
            r = self.alt([self.derive(i, byte) for i in x[1]])
        elif k == "r":
            a, lo, hi = x[1], x[2], x[3]
            r = self.concat(self.derive(a, byte), self.repeat(a, max(lo - 1, 0), None if hi is None else hi - 1))
        else:  # NOTHING, EPSILON
            r = NOTHING
        row[byte] = r
        return r

    def viable_bytes(self, e: int) -> list[int]:
        """The bytes after which `e` is not dead."""
        d = self.derive
        return [b for b in range(256) if d(e, b) != NOTHING]


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
    """The byte-level expression matching the UTF-8 encoding of one code point from `ranges`."""
    seqs: list = []
    for lo, hi in ranges:
        _utf8_sequences(lo, hi, seqs)
    return _factor(es, [[_mask(a, b) for a, b in s] for s in seqs])


def _factor(es: ExprSet, seqs: list) -> int:
    """Alternation of byte-mask sequences, grouped by identical leading masks."""
    groups: dict = {}
    for s in seqs:
        groups.setdefault(s[0], []).append(s[1:])
    alts = []
    for first, rests in groups.items():
        tails = [r for r in rests if r]
        tail = _factor(es, tails) if tails else NOTHING
        if len(tails) != len(rests):
            tail = es.alt((tail, EPSILON))
        alts.append(es.concat(es.byteset(first), tail))
    return es.alt(alts)


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
