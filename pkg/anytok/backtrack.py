"""Linear-time BPE of one long piece: the backtracking encoder over compatible token pairs.

The idea is from GitHub's `bpe` crate (github/rust-gems, crates/bpe); this is an independent
implementation for tiktoken's merge rule (a pair merges into the token equal to its
concatenation; lowest rank first, leftmost on ties).

Why it is exact
---------------
Call a token sequence *valid* if BPE of its bytes gives back exactly that sequence.  Then:

1. Every text has exactly one valid sequence: its BPE encoding.
2. A pair of tokens (a, b) is *compatible* if the sequence [a, b] is valid.  A sequence whose
   first token is valid and whose neighbours are all compatible is valid.  (Proof sketch: in
   the run on the whole text, the parts inside each token region evolve exactly as in that
   token's own run until a merge crosses a region boundary; the first such crossing merge
   would also be the first crossing merge in the run on the two neighbouring tokens alone,
   which contradicts their compatibility.)
3. So encoding is a search for a sequence of tokens covering the text with all neighbours
   compatible.  Trying the longest token first and backtracking finds it; a bit per byte
   position remembers positions from which no valid continuation exists, so each position is
   given up at most once and the search is linear.

Compatibility is decided without running BPE on the pair.  The BPE of a single token t is a
binary tree whose root is the last merge, (left, right) -> t.  If every token's children have
lower ranks than the token (true for tiktoken's vocabularies, and checked for each token as it
is used), merges happen in rank order and the run on a+b is the two trees' merges interleaved
by rank.  Walking both trees back from the roots, the rightmost node of a's tree and the
leftmost node of b's tree at every moment form the only pair that could merge across the
boundary; it must not be a token of lower rank than the merge that ends that moment.

A token whose tree breaks the rank-order assumption makes `encode` return None; the caller
then uses the heap merge, which is exact for any vocabulary.

Windows: the faster way for most long pieces
--------------------------------------------
4. A run of consecutive tokens of a valid sequence is itself valid: in the run on the whole
   text, no merge crosses the run's ends (the final tokens do not), and merges outside the
   run leave the pairs inside it alone, so the merges inside happen in the same order as in
   the run on the run's bytes alone.

So the BPE of a long piece can be pieced together from the heap merges of short overlapping
windows (each O(W log W), which beats the backtracking search by 1.5-2x on text of short
tokens such as random letters): if T1 is the BPE of the window [s1, e1) and T2 that of
[s2, e2), s1 < s2 <= e1, and q is a boundary of both with the tokens meeting there
compatible, then T1 up to q followed by T2 from q is valid by (4) and (2), i.e. the BPE of
[s1, e2).  Each window starts at a token boundary of the one before (so that a run of one
character keeps its phase) about OVERLAP bytes before its end; if no boundary stitches, the
next window starts further back.  A piece whose first window shows long tokens goes to the
backtracking search instead (it costs per token, the heap merge per byte), and so does a
piece where stitching fails or costs too much: the time stays linear either way.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate, count

from . import bpe

_UNSEEN = -2  # split not computed yet
_IRREGULAR = -3  # the token has no regular split


# Window length and overlap (bytes) of the windowed encoder; the heap merge costs more per
# byte as pieces grow, and at 128 bytes a window holds ~60 tokens of random letters, with ~8
# token boundaries in the overlap to stitch at.
WINDOW = 128
OVERLAP = 16
# Bytes per token in the first window from which the backtracking search is faster.
LONG_TOKENS = 3.5


# Periods (bytes) looked for in a long piece by `_period`, and the bytes compared first.
MAX_PERIOD = 64
PERIOD_PROBE = 32


def _period(piece: bytes) -> int:
    """The smallest p in [2, MAX_PERIOD] with piece[p:] == piece[:-p], or 0 if none.  (A run
    of one character has its own shortcut; p = 1 is left to it.)"""
    head = piece[:PERIOD_PROBE]
    p = piece.find(head, 2, MAX_PERIOD + PERIOD_PROBE)
    while p > 0:
        if piece[p:] == piece[:-p]:
            return p
        p = piece.find(head, p + 1, MAX_PERIOD + PERIOD_PROBE)
    return 0


def _lead_len(b: int) -> int:
    return 1 if b < 0xC0 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4


class BacktrackEncoder:
    """Per-vocabulary tables, built lazily as tokens are met, and the encoder itself."""

    def __init__(self, ranks: dict[bytes, int], token_bytes: list[bytes | None]):
        self.ranks = ranks
        # The hot tables are lists indexed by token id rather than dicts: a list item is one
        # pointer away, which matters once the tokens met no longer fit in the CPU caches.
        # token_bytes[t]: the bytes of token t (None for an id that is no token); the Encoding's
        # decode table, shared, not copied.
        self.token_bytes: list[bytes | None] = token_bytes
        # The children (left, right) of token t's last merge: -1 for a single byte; _UNSEEN
        # until computed; _IRREGULAR if the token is not regular (BPE of its bytes is not
        # itself, or a child has a higher rank than the token).
        self._left: list[int] = [_UNSEEN] * len(self.token_bytes)
        self._right: list[int] = [_UNSEEN] * len(self.token_bytes)
        self._next_prefix: dict[int, int] = {}
        self._longest: dict[bytes, int] | None = None
        self._longest_suffix: dict[bytes, int] | None = None
        self._all_regular: bool | None = None  # all_regular's answer, once known

    # ---- vocabulary tables --------------------------------------------------------------

    def split(self, token: int) -> tuple[int, int] | None:
        """The children (left, right) of the token's last merge; (-1, -1) for a single byte;
        None if the token is not regular."""
        left = self._left[token]
        if left == _UNSEEN:
            left = self._compute_split(token)
        return None if left == _IRREGULAR else (left, self._right[token])

    def _compute_split(self, token: int) -> int:
        data = self.token_bytes[token]
        if len(data) == 1:
            left = right = -1
        else:
            parts = bpe.merge_until(data, self.ranks, 2)
            left = right = _IRREGULAR
            if len(parts) == 2 and parts[0] + parts[1] == data:
                a, b = self.ranks[parts[0]], self.ranks[parts[1]]
                if a < token and b < token:
                    left, right = a, b
        self._left[token], self._right[token] = left, right
        return left

    def all_regular(self) -> bool:
        """Whether every token is regular (`split` is not None for each), decided without a
        BPE of each token, and recording every token's split on the way.

        Tokens are taken in rank order.  While every token of lower rank than t is regular,
        t (two bytes or more) is regular exactly when some cut of its bytes into a and b gives
        tokens of lower rank than t whose trees pass the walk of `compatible` started just
        below t's own merge: the BPE of t's bytes (t itself kept out, which it cannot affect
        before two parts are left) runs a's and b's trees interleaved by rank unless a merge
        crosses the cut first, which is what the walk looks for; so the walk passes for the
        cut (a, b) exactly when that BPE ends in [a, b], and then (a, b) are t's children.  At
        most one cut passes (the BPE is deterministic); none passing means t is irregular
        (its BPE does not end in two parts of lower rank).  The first irregular token ends the
        check: the splits of the tokens after it are left to `split` (their children might
        not be regular, and the walk presumes they are).
        """
        if self._all_regular is None:
            self._all_regular = self._check_all_regular()
        return self._all_regular

    def _check_all_regular(self) -> bool:
        get = self.ranks.get
        data = self.token_bytes
        lefts, rights = self._left, self._right
        tokens = list(self.ranks.values())
        if any(map(int.__ge__, tokens, tokens[1:])):  # (tiktoken's files are in rank order)
            tokens.sort()
        for t in tokens:
            d = data[t]
            n = len(d)
            if n == 1:
                lefts[t] = rights[t] = -1
                continue
            for k in range(1, n):
                a = get(d[:k])
                if a is None or a >= t:
                    continue
                b = get(d[k:])
                if b is None or b >= t:
                    continue
                # The walk of `compatible` from the pair (a, b), whose own merge (into t) is
                # the one kept out; the splits of a, b and their parts are all known.
                x, y = a, b
                passed = False
                while True:
                    right, left = rights[x], lefts[y]
                    if right >= 0 and (left < 0 or x > y):
                        limit, x = x, right
                    elif left >= 0:
                        limit, y = y + 1, left
                    else:
                        passed = True  # no merge crosses the cut
                        break
                    m = get(data[x] + data[y])
                    if m is not None and m < limit:
                        break  # a merge crosses the cut: not this one
                if passed:
                    lefts[t], rights[t] = a, b
                    break
            else:
                lefts[t] = rights[t] = _IRREGULAR
                return False
        return True

    def next_prefix(self, token: int) -> int:
        """The longest token that is a proper prefix of `token` (-1 if none)."""
        got = self._next_prefix.get(token)
        if got is None:
            data = self.token_bytes[token]
            get = self.ranks.get
            got = -1
            for n in range(len(data) - 1, 0, -1):
                t = get(data[:n])
                if t is not None:
                    got = t
                    break
            self._next_prefix[token] = got
        return got

    def prefix_index(self) -> dict[bytes, int]:
        """First three bytes -> length of the longest token starting with them."""
        index = self._longest
        if index is None:
            index = self._longest = self._length_index(lambda data: data[:3])
        return index

    def suffix_index(self) -> dict[bytes, int]:
        """Last three bytes -> length of the longest token ending with them."""
        index = self._longest_suffix
        if index is None:
            index = self._longest_suffix = self._length_index(lambda data: data[-3:])
        return index

    def _length_index(self, key_of) -> dict[bytes, int]:
        index: dict[bytes, int] = {}
        for data in self.ranks:
            if len(data) >= 3:
                key = key_of(data)
                if len(data) > index.get(key, 0):
                    index[key] = len(data)
        return index

    def longest_prefix(self, text: bytes, pos: int) -> int:
        """The longest token that `text[pos:]` starts with."""
        get = self.ranks.get
        top = min(self.prefix_index().get(text[pos : pos + 3], 2), len(text) - pos)
        for end in range(pos + top, pos, -1):
            t = get(text[pos:end])
            if t is not None:
                return t
        raise KeyError(f"byte {text[pos:pos + 1]!r} is not a token")

    def compatible(self, a: int, b: int) -> bool | None:
        """Whether BPE of the bytes of a+b gives [a, b]; None if a tree is not regular."""
        get = self.ranks.get
        data = self.token_bytes
        lefts, rights = self._left, self._right
        limit = 1 << 62  # the pair (a, b) lives until this rank's merge happens
        while True:
            merged = get(data[a] + data[b])
            if merged is not None and merged < limit:
                return False
            right = rights[a]
            if right == _UNSEEN:
                self._compute_split(a)
                right = rights[a]
            left = lefts[b]
            if left == _UNSEEN:
                left = self._compute_split(b)
            if right == _IRREGULAR or left == _IRREGULAR:
                return None
            # Step back to just before the later of the merges that made a and b (a single
            # byte was never made).  a's merge is left of the crossing pair, so it wins a tie;
            # b's merge is right of it, so it loses one: hence b + 1.
            if right >= 0 and (left < 0 or a > b):
                limit, a = a, right
            elif left >= 0:
                limit, b = b + 1, left
            else:
                return True

    # ---- encoding -----------------------------------------------------------------------

    def encode_run(self, unit: bytes, count: int) -> list[int] | None:
        """BPE of `unit * count` (one character repeated), or None if no shortcut applies.

        The encoding of a long run is a repeated block token T followed by the encoding of a
        short tail.  That sequence is valid (so it is *the* encoding) if T is regular and the
        pairs (T, T) and (T, first tail token) are compatible; those checks are all it takes.
        """
        sample = bpe.heap_merge(unit * min(count, 2 * 128 // len(unit) + 2), self.ranks)
        block = sample[0]
        data = self.token_bytes[block]
        k, rem = divmod(len(data), len(unit))
        if rem or data != unit * k or self.split(block) is None or not self.compatible(block, block):
            return None
        tail = count % k
        for _ in range(4):
            if tail > count:
                return None
            rest = bpe.heap_merge(unit * tail, self.ranks) if tail else []
            if not rest or self.compatible(block, rest[0]):
                return [block] * ((count - tail) // k) + rest
            tail += k
        return None

    def encode_periodic(self, piece: bytes, period: int) -> list[int] | None:
        """BPE of a piece made of a short unit repeated (`piece[period:] == piece[:-period]`),
        or None if no shortcut applies.

        As for one character (`encode_run`), but the repeated part is a run of tokens: in the
        BPE of a few units, the tokens between two boundaries a whole number of units apart
        form a run B, and the tokens before it a run P, both valid with P's last token
        compatible with B's first (fact 4).  If B's last token is compatible with its first,
        P followed by B repeated is valid; then the BPE of the rest, whose first token must be
        compatible with B's last.
        """
        n = len(piece)
        data, compatible = self.token_bytes, self.compatible
        sample = bpe.heap_merge(piece[:period] * (2 * WINDOW // period + 2), self.ranks)
        seen: dict[int, tuple[int, int]] = {0: (0, 0)}  # boundary position mod period -> (index, position)
        pos = 0
        for j, t in enumerate(sample[:-1], 1):  # (not the last token: the sample's end is cut)
            pos += len(data[t])
            first = seen.setdefault(pos % period, (j, pos))
            if first[1] != pos:
                break
        else:
            return None
        i, start = first
        block, size = sample[i:j], pos - start
        if start + 2 * size > n or not compatible(block[-1], block[0]):
            return None  # (None from compatible: an irregular token; the other encoders decide)
        times = (n - start) // size
        for _ in range(4):
            if times < 1:
                return None
            end = start + times * size
            rest = bpe.heap_merge(piece[end:], self.ranks) if end < n else []
            ok = compatible(block[-1], rest[0]) if rest else True
            if ok is None:
                return None
            if ok:
                return sample[:i] + block * times + rest
            times -= 1
        return None

    def encode(self, piece: bytes) -> list[int] | None:
        """The BPE of `piece`, or None if an irregular token got in the way."""
        n = len(piece)
        if n == 0:
            return []
        unit = piece[: _lead_len(piece[0])]
        if piece == unit * (n // len(unit)):
            out = self.encode_run(unit, n // len(unit))
            if out is not None:
                return out
        if n > WINDOW:
            period = _period(piece)
            if period:
                out = self.encode_periodic(piece, period)
                if out is not None:
                    return out
            first = bpe.heap_merge(piece[:WINDOW], self.ranks)
            if WINDOW < LONG_TOKENS * len(first):
                out = self.encode_windows(piece, first)
                if out is not None:
                    return out
        return self.search(piece)

    def encode_windows(self, piece: bytes, first: list[int]) -> list[int] | None:
        """The BPE of `piece` stitched from windows (see the module docstring); `first` is the
        BPE of its first WINDOW bytes.  None if no stitch was found within budget, or an
        irregular token got in the way."""
        n = len(piece)
        ranks, data, compatible, heap_merge = self.ranks, self.token_bytes, self.compatible, bpe.heap_merge
        budget = 2 * n  # bytes merged in windows before giving up (~1.15 n are needed)
        out: list[int] = []
        cur, start, end = first, 0, WINDOW  # cur: the BPE of piece[start:end]
        while end < n:
            # bounds[i]: where cur[i] starts (and cur[i - 1] ends); index: its inverse.
            bounds = list(accumulate(map(len, map(data.__getitem__, cur)), initial=start))
            index = dict(zip(bounds, count()))
            back = OVERLAP
            while True:
                k = max(bisect_left(bounds, end - back), 1)
                s = bounds[k]
                e = min(s + WINDOW, n)
                budget -= e - s
                if budget < 0:
                    return None
                nxt = heap_merge(piece[s:e], ranks)
                q = s  # runs over nxt's boundaries that are also cur's
                for j, t in enumerate(nxt):
                    i = index.get(q)
                    if i is not None:
                        ok = compatible(cur[i - 1], t)
                        if ok is None:
                            return None
                        if ok:
                            break
                    q += len(data[t])
                    if q > end:
                        break
                else:
                    q = end + 1  # all of nxt lies inside cur: no token after its end to stitch to
                if q <= end:
                    break
                if k == 1:
                    return None  # no stitch anywhere
                back *= 4
            out += cur[:i]
            cur, start, end = nxt[j:], q, e
        out += cur
        return out

    def search(self, piece: bytes) -> list[int] | None:
        """The backtracking search for the BPE of `piece` (see the module docstring)."""
        n = len(piece)
        data = self.token_bytes
        dead = bytearray(n + 1)  # dead[p]: no valid encoding continues from position p
        tokens: list[int] = []
        starts: list[int] = []
        pos = 0
        candidate = self.longest_prefix(piece, 0)
        while pos < n:
            token = candidate
            while True:
                end = pos + len(data[token])
                if not dead[end]:
                    if tokens:
                        ok = self.compatible(tokens[-1], token)
                    else:
                        ok = self.split(token) is not None
                    if ok is None:
                        return None
                    if ok:
                        tokens.append(token)
                        starts.append(pos)
                        pos = end
                        if pos < n:
                            candidate = self.longest_prefix(piece, pos)
                        break
                token = self.next_prefix(token)
                if token < 0:
                    # Nothing valid continues from here: give this position up and revisit
                    # the previous token with its next shorter prefix.
                    dead[pos] = 1
                    if not tokens:
                        return None
                    candidate = tokens.pop()
                    pos = starts.pop()
                    break
        return tokens
