"""SentencePiece 0.2.3's BPE trainer (`bpe_model_trainer.cc` of that release), step for step.

Data flow: sentences (or words) with counts -> one symbol per character -> every adjacent
pair of symbols is a bigram symbol with a count and a list of positions `(sid, left, right)`
(packed into one int, kept in the order they were found) -> a priority queue of all bigrams
-> each round the queue's best (higher count, then fewer characters, then the smaller
string) is merged where its positions still hold it -> the pieces in merge order, then the
alphabet.

How it differs from 0.2.1's (`bpe.py`): the best pair is taken from all pairs, not from an
active 5 % refilled every 100 merges; counts are kept up to date by adding and subtracting
(0.2.1 recounts them from the positions), in unsigned 64-bit arithmetic: a pair whose symbol
was dropped as a duplicate comes back with count 0 and may be decremented below it, which
wraps around, as sentencepiece's `uint64_t` does.  The queue is lazy: a stale entry is
dropped or pushed again with the symbol's current count when it reaches the top.
`heapq` pops and pushes exactly as libstdc++'s `std::priority_queue` (the same sift-down to
a leaf, then sift-up), so entries that tie (two symbols with the same string) leave in the
same order, given the same pushes.  One order is not sentencepiece's: it pushes the first
bigrams in the iteration order of an `absl::flat_hash_map` keyed by pointers; here they go in
order of first occurrence.  Those bigrams are distinct strings, so that order can only matter
to later ties between duplicate strings.
"""

from __future__ import annotations

from heapq import heappop, heappush

from ._common import UNK_CHAR, PieceChecker
from .bpe import live_neighbours

__all__ = ["train_bpe_023"]

_M64 = (1 << 64) - 1


class _Symbol:
    __slots__ = ("left", "right", "piece", "char_len", "fp", "freq", "is_unk", "active",
                 "pending", "stale", "positions")

    def __init__(self, left, right, piece, char_len, fp, freq):
        self.left = left
        self.right = right
        self.piece = piece
        self.char_len = char_len
        self.fp = fp
        self.freq = freq
        self.is_unk = False
        self.active = True
        self.pending = False
        self.stale = True  # sentencepiece's needs_recomputation
        self.positions: list[int] = []

    def __lt__(self, other) -> bool:
        # Queue entries are (-freq, char_len, piece, symbol): equal in the first three means a
        # tie for std::priority_queue, so the symbols must not order them.
        return False


def train_bpe_023(sentences: list[list], required: dict[str, int], vocab_size: int,
                  checker: PieceChecker, progress=None) -> list[tuple[str, float]]:
    """The pieces (without the meta pieces) and their scores, in order, as sentencepiece
    0.2.3 makes them (`vocab_size`: merges to make).  `progress(n, vocab_size)`, if given,
    hears the number of pieces every 100 pieces."""
    cache: dict[int, _Symbol] = {}  # fp -> live symbol, as symbols_cache_
    # A pair's fingerprint stands for absl::HashOf(left fp, right fp): only its identity
    # matters (a symbol dropped and made again gets the same fp), so a counter does.
    pair_fps: dict[tuple[int, int], int] = {}
    invalid: set[int] = set()  # fps whose string is not a valid piece

    def char_symbol(c: str) -> _Symbol:
        fp = ord(c)
        s = cache.get(fp)
        if s is None:
            f = required.get(c, 0)
            s = _Symbol(None, None, c, 1, fp, f if f > 0 else 1)
            s.is_unk = c == UNK_CHAR
            cache[fp] = s
        return s

    def pair_symbol(left: _Symbol | None, right: _Symbol | None) -> _Symbol | None:
        if left is None or right is None or left.is_unk or right.is_unk:
            return None
        key = (left.fp, right.fp)
        fp = pair_fps.get(key)
        if fp is None:
            fp = pair_fps[key] = 0x110000 + len(pair_fps)
        s = cache.get(fp)
        if s is not None:
            return s
        if fp in invalid:
            return None
        piece = left.piece + right.piece
        if not checker(piece):
            invalid.add(fp)
            return None
        s = _Symbol(left, right, piece, left.char_len + right.char_len, fp, 0)
        cache[fp] = s
        return s

    symbols: list[list] = []
    counts = [f for _, f in sentences]
    pending: list[_Symbol] = []
    for sid, (text, count) in enumerate(sentences):
        row = [char_symbol(c) for c in text]
        if len(row) > 0xFFFF:
            raise ValueError("a sentence of more than 65535 characters (sentencepiece's limit)")
        symbols.append(row)
        for i in range(1, len(row)):
            s = pair_symbol(row[i - 1], row[i])
            if s is not None:
                s.freq += count
                s.positions.append(sid << 32 | (i - 1) << 16 | i)
                if not s.pending:
                    s.pending = True
                    pending.append(s)

    heap: list[tuple] = []

    def compute_freq(s: _Symbol) -> None:
        if s.stale:
            if s.freq == 0:
                s.positions = []
            s.stale = False

    def push_pending() -> None:
        for s in pending:
            s.pending = False
            if s.active:
                compute_freq(s)
                heappush(heap, (-s.freq, s.char_len, s.piece, s))
        pending.clear()

    push_pending()

    def reset_freq(sid: int, left: int, right: int, best: _Symbol) -> None:
        if left == -1 or right == -1:
            return
        row = symbols[sid]
        s = pair_symbol(row[left], row[right])
        if s is not None and s is not best:
            s.freq = (s.freq - counts[sid]) & _M64
            s.stale = True

    def add_pair(sid: int, left: int, right: int) -> None:
        if left == -1 or right == -1:
            return
        row = symbols[sid]
        s = pair_symbol(row[left], row[right])
        if s is not None:
            s.positions.append(sid << 32 | left << 16 | right)
            s.freq = (s.freq + counts[sid]) & _M64
            if not s.pending:
                s.pending = True
                pending.append(s)

    def drop(s: _Symbol) -> None:
        del cache[s.fp]
        s.active = False
        s.positions = []

    final: list[tuple[str, float]] = []
    dup: set[str] = set()
    while len(final) < vocab_size:
        best = None
        while heap:
            neg, _, _, s = heap[0]
            if not s.active:
                heappop(heap)
                continue
            if s.stale:
                heappop(heap)
                compute_freq(s)
                heappush(heap, (-s.freq, s.char_len, s.piece, s))
                continue
            heappop(heap)
            if -neg != s.freq:
                continue
            best = s
            break
        if best is None:
            break
        if best.piece in dup:
            drop(best)
            continue
        dup.add(best.piece)
        if progress is not None and len(final) % 100 == 0:
            progress(len(final), vocab_size)
        final.append((best.piece, -float(len(final))))

        bl, br = best.left, best.right
        for pos in best.positions:
            sid = pos >> 32
            left = (pos >> 16) & 0xFFFF
            right = pos & 0xFFFF
            row = symbols[sid]
            # Identity, not fp: a symbol made again after a drop is another object.
            if row[left] is not bl or row[right] is not br:
                continue
            prv, nxt = live_neighbours(row, left, right)
            reset_freq(sid, prv, left, best)
            reset_freq(sid, right, nxt, best)
            row[left] = best
            row[right] = None
            add_pair(sid, prv, left)
            add_pair(sid, left, nxt)
        drop(best)
        push_pending()

    for c, _ in sorted(required.items(), key=lambda kv: (-kv[1], kv[0])):
        final.append((c, -float(len(final))))
    return final
