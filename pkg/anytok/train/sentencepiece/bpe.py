"""SentencePiece's BPE trainer (`bpe_model_trainer.cc`), step for step.

Every sentence (or word) is a list of symbols, one per character at first.  Each pair of
adjacent symbols is a bigram symbol that remembers where it occurs (`(sid, left, right)`
packed into one int, kept in a set and visited in sorted order).  Each round takes the most
frequent bigram among the *active* ones (ties: fewer characters, then the smaller string),
replaces its occurrences and creates the bigrams with its new neighbours.  The active set is
refilled every 100 pieces with the most frequent 5 % (at least 1000) of all bigrams; in
between, new bigrams join it.  Frequencies are recomputed lazily: a bigram whose
neighbourhood changed gets frequency 0 and is recounted from its positions when next
looked at, which also drops the positions that no longer hold it.

Which of the bigrams tied at the 5 % boundary become active decides later rounds, so the
refill reproduces sentencepiece's order exactly: the bigrams are listed in the iteration order
of its `std::unordered_map<uint64_t, Symbol*>` keyed by 64-bit fingerprints (`_HashOrder`
follows libstdc++'s buckets, growth and rehashing), then chosen with libstdc++'s
`std::partial_sort` (`_heap_select`).  Exact ties in the best-bigram scan (the same string
reached by two merge paths) go to the symbol created first, as sentencepiece's scan of a set
ordered by address does for objects allocated in order.
"""

from __future__ import annotations

from ._common import UNK_CHAR, PieceChecker, f32

__all__ = ["train_bpe"]

_M64 = (1 << 64) - 1


def live_neighbours(row: list, left: int, right: int) -> tuple[int, int]:
    """The positions of the symbols before `left` and after `right` in a sentence's `row` (None
    where a merge emptied a place), -1 where there is none."""
    prv = nxt = -1
    for i in range(right + 1, len(row)):
        if row[i] is not None:
            nxt = i
            break
    for i in range(left - 1, -1, -1):
        if row[i] is not None:
            prv = i
            break
    return prv, nxt


def fingerprint_cat(a: int, c: int) -> int:
    """`port::FingerprintCat(x, y)`: Bob Jenkins' 64-bit mix of x, a constant and y."""
    b = 0xE08C1D668B756F82
    a = (a - b - c) & _M64; a ^= c >> 43
    b = (b - c - a) & _M64; b ^= (a << 9) & _M64
    c = (c - a - b) & _M64; c ^= b >> 8
    a = (a - b - c) & _M64; a ^= c >> 38
    b = (b - c - a) & _M64; b ^= (a << 23) & _M64
    c = (c - a - b) & _M64; c ^= b >> 5
    a = (a - b - c) & _M64; a ^= c >> 35
    b = (b - c - a) & _M64; b ^= (a << 49) & _M64
    c = (c - a - b) & _M64; c ^= b >> 11
    a = (a - b - c) & _M64; a ^= c >> 12
    b = (b - c - a) & _M64; b ^= (a << 18) & _M64
    c = (c - a - b) & _M64; c ^= b >> 22
    return c


# libstdc++'s bucket counts as an unordered_map grows one element at a time (its prime list).
_BUCKETS = (1, 13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933,
            351061, 712697, 1447153, 2938679, 5967347, 12117689, 24607243, 49969847, 101473717,
            206062531, 418451333, 849749479, 1725587117)


class _HashOrder:
    """A map fp -> symbol that iterates in the order of libstdc++'s `unordered_map`.

    libstdc++ keeps one list of nodes in which each bucket's nodes are contiguous: a node
    entering an empty bucket starts a new run at the head of the list, otherwise it goes to
    the front of its bucket's run; a rehash walks the list and re-inserts each node the same
    way.  Here: runs are lists stored back to front, and `runs` holds the buckets in order of
    run creation (iterated backwards)."""

    def __init__(self):
        self.map: dict[int, object] = {}
        self.level = 0
        self.n = 1
        self.runs: dict[int, list] = {}

    def get(self, fp: int):
        return self.map.get(fp)

    def __len__(self) -> int:
        return len(self.map)

    def insert(self, fp: int, sym) -> None:
        if len(self.map) + 1 > self.n:
            self.level += 1
            if self.level >= len(_BUCKETS):
                raise ValueError("too many symbols")
            self.n = _BUCKETS[self.level]
            old = list(self)
            self.runs = {}
            for s in old:
                self._link(s.fp, s)
        self.map[fp] = sym
        self._link(fp, sym)

    def _link(self, fp: int, sym) -> None:
        b = fp % self.n
        run = self.runs.get(b)
        if run is None:
            self.runs[b] = [sym]
        else:
            run.append(sym)

    def pop(self, fp: int) -> None:
        sym = self.map.pop(fp, None)
        if sym is None:
            return
        b = fp % self.n
        run = self.runs[b]
        run.remove(sym)
        if not run:
            del self.runs[b]

    def __iter__(self):
        runs = self.runs
        for b in reversed(runs):
            yield from reversed(runs[b])


def _heap_select(items: list, middle: int) -> list:
    """The first `middle` items after libstdc++'s `partial_sort(..., freq descending)`, as a
    set of members (their order is not needed): `__heap_select`."""
    h = items[:middle]
    key = [s.freq for s in h]

    def adjust(hole: int, length: int, val, vkey) -> None:
        # __adjust_heap with comp(a, b) = a.freq > b.freq: the heap's top has the least freq.
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if key[child] > key[child - 1]:
                child -= 1
            h[hole] = h[child]
            key[hole] = key[child]
            hole = child
        if (length & 1) == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            h[hole] = h[child - 1]
            key[hole] = key[child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and key[parent] > vkey:
            h[hole] = h[parent]
            key[hole] = key[parent]
            hole = parent
            parent = (hole - 1) // 2
        h[hole] = val
        key[hole] = vkey

    n = middle
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            adjust(parent, n, h[parent], key[parent])
            if parent == 0:
                break
            parent -= 1
    for i in range(middle, len(items)):
        s = items[i]
        if n and s.freq > key[0]:
            adjust(0, n, s, s.freq)
    return h


class _Symbol:
    __slots__ = ("left", "right", "chars", "is_unk", "fp", "freq", "positions", "serial")

    def __init__(self, left, right, chars, fp, freq, serial):
        self.left = left
        self.right = right
        self.chars = chars
        self.is_unk = False
        self.fp = fp
        self.freq = freq
        self.positions: set[int] = set()
        self.serial = serial


def train_bpe(sentences: list[list], required: dict[str, int], vocab_size: int,
              checker: PieceChecker, progress=None) -> list[tuple[str, float]]:
    """The pieces (without the meta pieces) and their scores, in order.  `progress(n,
    vocab_size)`, if given, hears the number of pieces every 100 pieces."""
    cache = _HashOrder()  # fp -> symbol, as symbols_cache_
    serial = 0
    fps: dict[tuple, int] = {}  # (left fp, right fp) -> fingerprint_cat of them

    def char_symbol(c: str) -> _Symbol:
        nonlocal serial
        s = chars_seen.get(c)
        if s is not None:
            return s
        fp = ord(c)
        s = cache.get(fp)
        if s is None:
            freq = required.get(c, 1)
            serial += 1
            s = _Symbol(None, None, c, fp, freq, serial)
            s.is_unk = c == UNK_CHAR
            cache.insert(fp, s)
        chars_seen[c] = s
        return s

    def pair_symbol(left: _Symbol | None, right: _Symbol | None) -> _Symbol | None:
        nonlocal serial
        if left is None or right is None or left.is_unk or right.is_unk:
            return None
        key = (left.fp, right.fp)
        fp = fps.get(key)
        if fp is None:
            fp = fps[key] = fingerprint_cat(left.fp, right.fp)
        s = cache.get(fp)
        if s is not None:
            return s
        chars = left.chars + right.chars
        if not checker(chars):
            return None
        serial += 1
        s = _Symbol(left, right, chars, fp, 0, serial)
        cache.insert(fp, s)
        return s

    chars_seen: dict[str, _Symbol] = {}
    symbols: list[list] = [[char_symbol(c) for c in s] for s, _ in sentences]
    counts = [f for _, f in sentences]
    active: set[_Symbol] = set()

    def compute_freq(sym: _Symbol) -> None:
        if sym.freq > 0:
            return
        total = 0
        stale = []
        left, right = sym.left, sym.right
        for pos in sym.positions:
            sid = pos >> 32
            row = symbols[sid]
            if row[(pos >> 16) & 0xFFFF] is not left or row[pos & 0xFFFF] is not right:
                stale.append(pos)
            else:
                total += counts[sid]
        if stale:
            sym.positions.difference_update(stale)
        sym.freq = total

    def add_pair(sid: int, left: int, right: int) -> None:
        if left == -1 or right == -1:
            return
        row = symbols[sid]
        s = pair_symbol(row[left], row[right])
        if s is not None:
            active.add(s)
            s.positions.add(sid << 32 | left << 16 | right)

    def reset_freq(sid: int, left: int, right: int, best: _Symbol) -> None:
        if left == -1 or right == -1:
            return
        row = symbols[sid]
        s = pair_symbol(row[left], row[right])
        if s is not None and s is not best:
            s.freq = 0

    for sid, row in enumerate(symbols):
        if len(row) > 0xFFFF:
            raise ValueError("a sentence of more than 65535 characters (sentencepiece's limit)")
        for i in range(1, len(row)):
            add_pair(sid, i - 1, i)

    ratio = f32(0.05)

    def update_active() -> None:
        bigrams = []
        for s in cache:
            if s.left is not None:
                compute_freq(s)
                bigrams.append(s)
        size = min(max(1000, int(f32(f32(len(cache)) * ratio))), len(bigrams))
        active.clear()
        active.update(_heap_select(bigrams, size))

    final: list[tuple[str, float]] = []
    dup: set[str] = set()
    while len(final) < vocab_size:
        if len(final) % 100 == 0:
            update_active()
            if progress is not None:
                progress(len(final), vocab_size)
        best = None
        for s in active:
            compute_freq(s)
            if best is None:
                best = s
                continue
            if s.freq > best.freq:
                best = s
            elif s.freq == best.freq:
                ls, lb = len(s.chars), len(best.chars)
                if ls < lb or (ls == lb and (s.chars < best.chars or (s.chars == best.chars and s.serial < best.serial))):
                    best = s
        if best is None:
            break
        if best.chars in dup:
            cache.pop(best.fp)
            active.discard(best)
            continue
        dup.add(best.chars)
        final.append((best.chars, -float(len(final))))
        for pos in sorted(best.positions):
            sid = pos >> 32
            left = (pos >> 16) & 0xFFFF
            right = pos & 0xFFFF
            row = symbols[sid]
            if row[left] is None:
                continue
            prv, nxt = live_neighbours(row, left, right)
            reset_freq(sid, prv, left, best)
            reset_freq(sid, right, nxt, best)
            row[left] = best
            row[right] = None
            add_pair(sid, prv, left)
            add_pair(sid, left, nxt)
        cache.pop(best.fp)
        active.discard(best)

    for c, _ in sorted(required.items(), key=lambda kv: (-kv[1], kv[0])):
        final.append((c, -float(len(final))))
    return final
