"""Byte pair encoding of one piece, by rank, exactly as tiktoken does it.

The rule (tiktoken's `byte_pair_merge`): start from single bytes; repeatedly take the adjacent
pair of parts whose concatenation is a token of lowest rank (the leftmost one on a tie) and merge
it; stop when no adjacent concatenation is a token.  The ids of the remaining parts are the
encoding.

Two implementations of the same rule:

* `rank_merge`: a list of parts and a list of pair ranks; each step is a C-level `min` and
  `index` over the lists.  O(n^2) in the piece length, but with the smallest constant, so it
  wins for the short pieces that make up almost all real text.
* `heap_merge`: a doubly linked list of parts and a binary heap of candidate pairs keyed by
  (rank, start), with lazy deletion: an entry popped from the heap is used only if the pair it
  names still exists with that rank (`merge_bounds`, the loop SentencePiece's BPE shares with
  scores for ranks).  O(n log n); used for long pieces so that no input makes
  encoding quadratic.

`encode_piece` picks one by length, and hands long pieces to the linear-time encoders of
`backtrack.py`.  `tests/test_bpe.py` checks both against each other and
against tiktoken.
"""

from __future__ import annotations

import heapq
import operator
from itertools import repeat
from typing import Callable

# Which implementation for which piece length (bytes), from build_scripts/bench/bench_merge.py:
# the list merge has the smallest constant, the heap merge wins from ~16 bytes on, and long
# pieces go to the linear encoders of backtrack.py (stitched windows or the backtracking
# search), which also keep memory small (the heap would hold tuples for every byte of a 10 MB
# piece) and beat the heap merge from a few KiB on.
LIST_MAX = 16
HEAP_MAX = 4096
# The same for an ASCII piece merged on str with the text table (core._merge_new): there the
# list merge beats the heap merge up to ~32 characters of symbols, ~48 of random letters and
# ~64 of words, natively and under Pyodide alike (build_scripts/bench/bench_merge.py --str --pyodide).
STR_LIST_MAX = 32
# A run of one ASCII character is merged on str too up to this length: the long-piece encoders'
# shortcut for runs (backtrack.py) starts with a heap merge of ~258 bytes itself, so up to there
# it is no faster, and it wants the bytes table (bench_merge.py --str --pyodide, kind "run").
STR_RUN_MAX = 256

_NO = 1 << 62  # "not a token": larger than every rank


def merge_parts(parts: list, get: Callable, stop: int = 1, _NO: int = _NO) -> list:
    """The list merge on `parts` (bytes, or str of ASCII text), in place, until no adjacent
    pair is a token or at most `stop` parts are left; `get` looks a concatenation up.

    Each step finds the lowest pair rank with C-level `min` and `index` (leftmost on a tie).
    "Not a token" is the one object _NO, so an identity test spots it.
    """
    pair = list(map(get, map(operator.add, parts, parts[1:]), repeat(_NO)))
    while len(pair) >= stop:
        low = min(pair)
        if low is _NO:
            break
        i = pair.index(low)
        parts[i] += parts[i + 1]
        del parts[i + 1]
        del pair[i]
        if i < len(pair):
            pair[i] = get(parts[i] + parts[i + 1], _NO)
        if i:
            pair[i - 1] = get(parts[i - 1] + parts[i], _NO)
    return parts


def rank_merge(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """Encode `piece` (bytes, no pre-tokenization) by repeated lowest-rank pair merges."""
    parts = merge_parts([piece[i : i + 1] for i in range(len(piece))], ranks.get)
    return list(map(ranks.__getitem__, parts))


def merge3(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """`rank_merge` of a 3-byte piece, spelled out: the lower of the two pairs merges first
    (the left one on a tie), then the whole piece if it is a token.  A CJK character that is
    not a token is such a piece, and random CJK text has thousands of them."""
    get = ranks.get
    left, right = get(piece[:2]), get(piece[1:])
    if left is None and right is None:
        return [ranks[piece[:1]], ranks[piece[1:2]], ranks[piece[2:]]]
    whole = get(piece)
    if whole is not None:
        return [whole]
    if left is not None and (right is None or left <= right):
        return [left, ranks[piece[2:]]]
    return [ranks[piece[:1]], right]


def merge4(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """`rank_merge` of a 4-byte piece, spelled out as `merge3` is: the lowest of the three
    pairs merges first (the leftmost on a tie), then the lower of the two pairs left, then the
    whole piece if it is a token.  A character outside the Basic Multilingual Plane that is
    not a token is such a piece (a sweep over every code point has a million of them)."""
    get = ranks.get
    r0, r1, r2 = get(piece[:2]), get(piece[1:3]), get(piece[2:])
    if r0 is None and r1 is None and r2 is None:
        return [ranks[piece[:1]], ranks[piece[1:2]], ranks[piece[2:3]], ranks[piece[3:]]]
    # Three parts a, b, c after the first merge, and the ranks x of a + b and y of b + c.
    if r0 is not None and (r1 is None or r0 <= r1) and (r2 is None or r0 <= r2):
        a, b, c = piece[:2], piece[2:3], piece[3:]
        x, y = get(piece[:3]), r2
    elif r1 is not None and (r2 is None or r1 <= r2):
        a, b, c = piece[:1], piece[1:3], piece[3:]
        x, y = get(piece[:3]), get(piece[1:])
    else:
        a, b, c = piece[:1], piece[1:2], piece[2:]
        x, y = r0, get(piece[1:])
    if x is None and y is None:
        return [ranks[a], ranks[b], ranks[c]]
    whole = get(piece)
    if whole is not None:
        return [whole]
    if x is not None and (y is None or x <= y):
        return [x, ranks[c]]
    return [ranks[a], y]


def merge_until(piece: bytes, ranks: dict[bytes, int], stop: int) -> list[bytes]:
    """The parts left by the list merge once at most `stop` remain (or nothing merges).

    With stop=2 this gives the two children of a token's last merge.
    """
    return merge_parts([piece[i : i + 1] for i in range(len(piece))], ranks.get, stop)


def heap_merge(piece: bytes | str, ranks: dict) -> list[int]:
    """Same result as `rank_merge`, in O(n log n) time.  `piece` may also be a str of ASCII
    text with the text table as `ranks` (one character per byte, the same keys)."""
    bounds = merge_bounds(piece, ranks.get)
    return [ranks[piece[a:b]] for a, b in zip(bounds, bounds[1:])]


def merge_bounds(seq, priority) -> list[int]:
    """The BPE merge loop that tiktoken's byte-level BPE and SentencePiece's BPE share: while
    two adjacent parts of `seq` (bytes or str) concatenate to something `priority` knows, merge
    the pair whose concatenation has the lowest priority, the leftmost on ties.  Returns the
    final parts' bounds [0, b1, ..., len(seq)].  O(n log n): a doubly linked list of parts and a
    binary heap of candidate pairs keyed by (priority, start).

    tiktoken passes its ranks; SentencePiece the negated scores of its pieces (highest score
    first).  An entry is stale when the pair starting at its offset no longer concatenates to a
    string of that priority; a stale entry with an equal priority at the same offset stands for
    the pair there now, so taking it merges what the fresh entry would."""
    get = priority
    n = len(seq)
    # Parts are identified by their start offset; nxt[s] is the start of the following part
    # (n for the last one), prv[s] the start of the preceding part (-1 for the first).
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = bytearray(b"\x01") * n
    heap = []
    for i in range(n - 1):
        r = get(seq[i : i + 2])
        if r is not None:
            heap.append((r, i))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        r, i = pop(heap)
        if not alive[i]:
            continue
        j = nxt[i]
        if j >= n:
            continue
        k = nxt[j]
        if get(seq[i:k]) != r:
            continue  # stale: the pair starting at i changed since this entry was pushed
        # Merge the parts starting at i and j.
        alive[j] = 0
        nxt[i] = k
        if k < n:
            prv[k] = i
            r2 = get(seq[i : nxt[k]])
            if r2 is not None:
                push(heap, (r2, i))
        h = prv[i]
        if h >= 0:
            r2 = get(seq[h:k])
            if r2 is not None:
                push(heap, (r2, h))
    bounds = [0]
    i = 0
    while i < n:
        i = nxt[i]
        bounds.append(i)
    return bounds


def merge(
    piece: bytes,
    ranks: dict[bytes, int],
    long_encoder: Callable[[bytes], list[int] | None] | None = None,
) -> list[int]:
    """Plain BPE of `piece`, with the implementation chosen by its length.

    `long_encoder` handles pieces over HEAP_MAX bytes and runs of one byte when given; it may
    return None to decline, and the heap merge is used then.
    """
    n = len(piece)
    if n <= LIST_MAX:
        return rank_merge(piece, ranks)
    if long_encoder is not None and (n > HEAP_MAX or piece.count(piece[:1]) == n):
        # (A run of one byte has a shortcut there, whatever its length.)
        out = long_encoder(piece)
        if out is not None:
            return out
    return heap_merge(piece, ranks)


def encode_piece(
    piece: bytes,
    ranks: dict[bytes, int],
    long_encoder: Callable[[bytes], list[int] | None] | None = None,
) -> list[int]:
    """The encoding of one pre-tokenized piece, as tiktoken's `byte_pair_encode`.

    A piece that is itself a token is that token (tiktoken's shortcut, which can differ from
    what merging would give for a token whose own BPE is not itself); otherwise `merge`.
    """
    token = ranks.get(piece)
    if token is not None:
        return [token]
    return merge(piece, ranks, long_encoder)
