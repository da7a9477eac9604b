"""The slicer: whole groups of tokens allowed at once, without walking their part of the trie.

Data flow: once per tokenizer (lazily, on the first mask that needs it), the vocabulary is
split into parts: each slice regex below takes the tokens whose bytes keep it live (tokens that
an earlier slice took excepted), and the rest form the last part.  Each part gets its own token
trie and a precomputed bitmask (an int) of its tokens.

For a lexer state, a slice applies when every string that keeps the slice regex live also keeps
the state live: checked by exploring the pairs (slice state, lexer state) reachable byte by byte
(a few hundred pairs at most; the check gives up past a budget and the part is walked).  An
applying slice adds its whole bitmask; the other parts are walked as usual.  This is the idea of
llguidance's slicer (its default slices are similar), and it keeps masks exact: a slice only
replaces a walk whose result it provably equals.
"""

from __future__ import annotations

from . import derivatives, regex_syntax
from .tokens import TokenTrie

# Words (with or without a leading space), whitespace, and free text without quotes,
# backslashes or control characters in length bands.  Order matters: a token belongs to the
# first slice it fits.
SLICES = (
    r"[A-Za-z]{1,12}",
    r" [A-Za-z]{1,12}",
    r"[\x20\x0A\x0D\x09]+",
    r'[^"\\\x00-\x1F\x7F]{1,10}',
    r'[^"\\\x00-\x1F\x7F]{1,30}',
)
PAIR_BUDGET = 400


class _Slice:
    def __init__(self, pattern: str, trie: TokenTrie, taken: set):
        self.pattern = pattern
        self.es = derivatives.ExprSet()
        self.start = derivatives.compile_tree(self.es, regex_syntax.parse(pattern))
        ids = [t for t in trie.walk(self.es.derive, self.start) if t not in taken]
        taken.update(ids)
        self.ids = ids
        self.mask = _bits(ids)
        self.viable: dict = {}  # slice state -> [(byte, next slice state)]
        # Bytes that every byte set of the slice regex treats alike have the same derivatives:
        # one derivative per class (a few dozen, not 256) when exploring the slice's states.
        classes = {0: list(range(256))}  # signature -> bytes
        for x in self.es.exprs:
            if x[0] == "b":
                m = x[1]
                split: dict = {}
                for sig, members in classes.items():
                    for b in members:
                        split.setdefault((sig, m >> b & 1), []).append(b)
                classes = split
        self.classes = list(classes.values())

    def steps(self, r: int):
        v = self.viable.get(r)
        if v is None:
            d = self.es.derive
            v = []
            for members in self.classes:
                n = d(r, members[0])
                if n:
                    v.extend((b, n) for b in members)
            v.sort()
            v = self.viable[r] = v
        return v

    def applies(self, es, state: int) -> bool:
        """Whether every string keeping this slice live keeps `state` live."""
        rows, derive = es.rows, es.derive
        seen = {(self.start, state)}
        todo = [(self.start, state)]
        while todo:
            r, q = todo.pop()
            row = rows[q]
            for b, r2 in self.steps(r):
                q2 = row[b]
                if q2 < 0:
                    q2 = derive(q, b)
                if not q2:
                    return False
                pair = (r2, q2)
                if pair not in seen:
                    if len(seen) >= PAIR_BUDGET:
                        return False
                    seen.add(pair)
                    todo.append(pair)
        return True


def _bits(ids) -> int:
    buf = bytearray((max(ids) >> 3) + 1 if ids else 0)
    for t in ids:
        buf[t >> 3] |= 1 << (t & 7)
    return int.from_bytes(buf, "little")


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
        tries = [TokenTrie({t: tb[t] for t in o}, trie.n_vocab, None, None, o) for o in orders]
        for s, sub in zip(self.slices, tries):
            s.trie = sub
        self.rest = tries[-1]

    @classmethod
    def of(cls, trie: TokenTrie) -> "Slicer":
        s = getattr(trie, "_slicer", None)
        if s is None:
            s = trie._slicer = cls(trie)
        return s

    def mask(self, es, state: int) -> int:
        """Bitmask (an int, bit i = token i) of the tokens whose bytes all keep `state` live."""
        acc = 0
        ids: list = []
        for s in self.slices:
            if s.ids and s.applies(es, state):
                acc |= s.mask
            else:
                ids.extend(s.trie.walk(es.derive, state))
        ids.extend(self.rest.walk(es.derive, state))
        return acc | _bits(ids)
