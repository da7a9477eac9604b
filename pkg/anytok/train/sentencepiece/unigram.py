"""SentencePiece's Unigram trainer (`unigram_model_trainer.cc`), float for float.

1. Seeds: every character, then the substrings that are internal nodes of the suffix tree of
   all sentences (as esaxx enumerates them from the suffix array; only nodes no longer than
   `max_sentencepiece_length` can be pieces, so only that many characters of each suffix are
   sorted, and each is cut after its first character no piece holds past its first; each
   distinct sentence once, its suffixes weighted by its count), scored frequency x length; the best `seed_sentencepiece_size` (ties: node
   order); log-probabilities (`_to_log_prob`).
2. EM on the words (`split_by_whitespace`): the E-step runs forward-backward over each word's
   lattice and sums expected counts; the M-step drops pieces under 0.5 and scores the rest
   digamma(count) - digamma(total) (Bayesian EM).  `num_sub_iterations` times, then
3. pruning: each piece's loss if it were replaced by its second-best segmentation; the pieces
   with the largest loss stay (`shrinking_factor`), until at most 1.1 x vocab_size remain;
4. the required characters, then the best pieces, sorted by score.

sentencepiece 0.2.3 (`v023`) differs in: the seeds (`make_seeds_023`: a suffix tree of the
UTF-8 bytes), LogSumExp (log1p), pruning after every EM round (also the last) with a piece's
loss weighted by its share of the tokens (0.2.1: of the sentences), then the pieces whose
string a path of other pieces beats dropped (`_prune_unreachable`).

sentencepiece does this in float32 with libm's double `log` and `exp` in between: every
float32 operation here is a double operation rounded to float32 (exact, since the double
result of +, -, *, / on float32 inputs is rounded only once more), and `math.log`/`math.exp`
are the C library's.  With `num_threads` = N sentencepiece gives sentence i to thread i mod N
and adds the threads' float32 sums in thread order; so does this (one thread at a time).
"""

from __future__ import annotations

import math
import re
import struct
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from itertools import accumulate, chain, compress, groupby, repeat
from operator import add, getitem, itemgetter, mul, rshift, sub, xor

from .._nbest import hypothesis_nodes, verdict
from ._common import BOUNDARY, UNK_CHAR, WS, PieceChecker

__all__ = ["train_unigram"]

_F = struct.Struct("<f")
_pack = _F.pack
_unpack = _F.unpack


def f32(x: float) -> float:
    return _unpack(_pack(x))[0]


# characters no piece holds (PieceChecker): no seed starts with one
_NEVER_IN_PIECE = frozenset(("\0", UNK_CHAR, BOUNDARY, " "))

_FLT_MAX = 3.4028234663852886e38
_UNK_PENALTY = 10.0
_log = math.log
_exp = math.exp


def digamma(x: float) -> float:
    """sentencepiece's Digamma (double): recurrence up to 7, then the asymptotic series."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += (_log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4
               + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4)
    return result


# -- seeds -------------------------------------------------------------------------------------

def _to_log_prob(pieces: list[list]) -> None:
    total = 0.0
    for p in pieces:
        total = f32(total + p[1])
    logsum = f32(_log(total))
    for p in pieces:
        p[1] = f32(_log(p[1]) - logsum)


def _char_groups(text: str, never, chunk: int) -> list[list]:
    """[first, last] ranges of the characters of `text` (those in `never` left out), in code
    point order, each holding at most about `chunk` of its characters (one more when a
    single character has more): the suffixes' groups, one sorted at a time."""
    counts = Counter(text)
    groups = []
    size = 0
    for c in sorted(counts):
        if c in never:
            continue
        if size and size + counts[c] > chunk:
            size = 0
        if size == 0:
            groups.append([c, c])
        groups[-1][1] = c
        size += counts[c]
    return groups


def _node_candidates(text: str, width: int, accept, never=_NEVER_IN_PIECE, ends: bool = False):
    """The internal nodes of the suffix tree of `text` (which ends with "\\0", followed by
    width - 1 more as padding) no deeper
    than width - 1 whose string `accept`s, as (substring, frequency, order) with `order` ascending in esaxx's
    order of the nodes (post-order: by the end of the node's suffix-array range, deeper
    first).

    Only the suffixes' first `width` characters are sorted -- as strings, by the C sort --
    so the nodes down to depth width - 1 come out as with the full suffix array.  A node
    of depth d is a run of sorted prefixes sharing d characters in which two neighbours
    share exactly d; its frequency is the run's length (two bisections).  The suffixes go
    in groups of first characters, so that only one group's prefixes are held at once."""
    chunk = max(1, (1 << 22) // width)  # prefixes held at once (about 100 bytes each)
    groups = _char_groups(text, never, chunk)
    depths = range(2, width)
    enc = repeat("utf-32-be")
    top = 32 * width
    for g, (lo, hi) in enumerate(groups):
        cls = re.escape(lo) if lo == hi else re.escape(lo) + "-" + re.escape(hi)
        keys = re.findall("(?=([" + cls + "].{%d}))" % (width - 1), text, re.S)
        keys.sort()
        # common prefix length of neighbours (width when equal): the highest differing
        # bit of their UTF-32-BE code units read as one integer
        lcp = [0]
        for b in range(0, len(keys), 1 << 16):
            nums = list(map(int.from_bytes, map(str.encode, keys[max(b - 1, 0): b + (1 << 16)], enc)))
            lcp += map(rshift, map(sub, repeat(top), map(int.bit_length, map(xor, nums, nums[1:]))),
                       repeat(5))
        nodes = set(map(getitem, compress(keys, map(depths.__contains__, lcp)),
                        map(slice, compress(lcp, map(depths.__contains__, lcp)))))
        del lcp
        for w in filter(accept, nodes):
            left = bisect_left(keys, w)
            right = bisect_right(keys, w + "\U0010ffff" * (width - len(w)), left)
            if ends:  # the first and the last of the node's suffixes
                yield w, right - left, keys[left], keys[right - 1]
            else:
                yield w, right - left, (g, right, -len(w))
        del keys, nodes


def _cut_node_candidates(text: str, width: int, accept, cut: str, classes):
    """`_node_candidates` (without `ends`) for an `accept` that refuses every string holding
    one of the characters `cut` after its first, faster: each suffix's prefix is cut after
    the first such character (its first aside).  That keeps the string of every node
    `accept` may take, the characters that follow it (so it stays a node) and its
    frequency; and the order of those nodes' ranges, which compares a prefix with strings
    that hold no `cut` character after their first up to their end or a U+10FFFF.  So
    equal prefixes are many: they are counted, and only the distinct ones sorted.

    `classes`: (weight, start, end) parts of `text` whose suffixes each stand for `weight`
    suffixes (a text of distinct sentences, each part ending with a "\\0" in `cut`, standing
    for the sentences repeated: the same nodes -- a node is a string followed by two
    different characters -- in the same order; a node's frequency is its prefixes'
    weights' sum)."""
    chunk = max(1, (1 << 22) // width)  # suffixes looked at at once
    groups = _char_groups(text, _NEVER_IN_PIECE, chunk)
    depths = range(2, width)
    kw = width + 1  # a prefix: at most width characters and a cut one
    top = 32 * kw
    enc = repeat("utf-32-be")
    pad = repeat("\0")
    stop = "[" + re.escape(cut) + "]"
    if classes is None:
        classes = ((1, 0, len(text)),)
    for g, (lo, hi) in enumerate(groups):
        cls = re.escape(lo) if lo == hi else re.escape(lo) + "-" + re.escape(hi)
        pattern = re.compile("(?=([%s](?:[^%s]{0,%d}%s?)))" % (cls, stop[1:-1], width - 1, stop), re.S)
        weights: Counter = Counter()
        for weight, a, b in classes:
            found = pattern.findall(text, a, b)
            if weight == 1:
                weights.update(found)
            else:
                for key, n in Counter(found).items():
                    weights[key] += n * weight
            del found
        keys = sorted(weights)
        cum = list(accumulate(map(weights.__getitem__, keys), initial=0))
        del weights
        # common prefix length of neighbours: the highest differing bit of their UTF-32-BE
        # code units (padded with 0s) read as one integer
        lcp = [0]
        for b in range(0, len(keys), 1 << 16):
            nums = list(map(int.from_bytes, map(str.encode, map(str.ljust, keys[max(b - 1, 0): b + (1 << 16)],
                                                                    repeat(kw), pad), enc)))
            lcp += map(rshift, map(sub, repeat(top), map(int.bit_length, map(xor, nums, nums[1:]))),
                       repeat(5))
        mask = list(map(depths.__contains__, lcp))
        nodes = set(map(getitem, compress(keys, mask), map(slice, compress(lcp, mask))))
        del lcp, mask
        for w in filter(accept, nodes):
            left = bisect_left(keys, w)
            right = bisect_right(keys, w + "\U0010ffff" * (kw + 1 - len(w)), left)
            yield w, cum[right] - cum[left], (g, right, -len(w))
        del keys, nodes, cum


def _char_counts(sentences: list[list]) -> dict[str, int]:
    """Each character's count over the sentences (each `count` times), counted in C."""
    counts: Counter = Counter()
    for s, freq in sentences:
        if freq == 1:
            counts.update(s)
        else:
            for c, k in Counter(s).items():
                counts[c] += k * freq
    return counts


def make_seeds(sentences: list[list], checker: PieceChecker, seed_size: int) -> list[list]:
    # each distinct sentence once, with its count
    merged: dict[str, int] = {}
    get = merged.get
    for s, freq in sentences:
        merged[s] = get(s, 0) + freq
    all_chars = _char_counts(merged.items())
    all_chars.pop(UNK_CHAR, None)
    all_chars.pop("\0", None)
    seeds = [[c, n] for c, n in sorted(all_chars.items(), key=lambda kv: (-kv[1], kv[0]))]
    # every sentence followed by a boundary 0
    width = checker.max_len + 1
    if sum(map(mul, map(len, merged), merged.values())) + sum(merged.values()) > 0x7FFFFFFF:
        raise ValueError("input corpus too large (sentencepiece needs train_extremely_large_corpus)")
    classes = None
    if len(merged) == len(sentences) and all(freq == 1 for _, freq in sentences):
        text = "\0".join(merged) + "\0" * width
    else:
        # the distinct sentences by count: each count's sentences one part of the text
        parts = []
        classes = []
        at = 0
        for count, group in groupby(sorted(merged.items(), key=itemgetter(1)), itemgetter(1)):
            part = "\0".join(map(itemgetter(0), group)) + "\0"
            classes.append((count, at, at + len(part)))
            parts.append(part)
            at += len(part)
        text = "".join(parts) + "\0" * width
        del parts
    del merged
    # the characters no seed holds after its first
    cut = "".join(sorted({"\0", UNK_CHAR, checker.boundary, " "}))
    if checker.by_ws and not checker.suffix and not checker.ws_only:
        cut += WS
    # sorted by (-score, esaxx's order: group, right end, -length) packed in one integer
    # (the score's sign kept by the shifts); those are distinct, so no string is compared
    cands = []
    for w, freq, (g, right, neg_len) in _cut_node_candidates(text, width,
                                                             lambda w: "\0" not in w and checker(w),
                                                             cut, classes):
        cands.append(((((-freq * len(w)) << 20 | g) << 32 | right) << 16 | (0xFFFF + neg_len), w))
    del text
    cands.sort()
    del cands[seed_size:]
    for key, w in cands:
        seeds.append([w, -(key >> 68)])
    del cands
    for p in seeds:
        p[1] = f32(float(p[1]))
    _to_log_prob(seeds)
    return seeds


def _lead_byte(c: str) -> int:
    o = ord(c)
    if o < 0x80:
        return o
    if o < 0x800:
        return 0xC0 | o >> 6
    if o < 0x10000:
        return 0xE0 | o >> 12
    return 0xF0 | o >> 18


def make_seeds_023(sentences: list[list], checker: PieceChecker, seed_size: int, vocab_size: int,
                   boundary: str) -> list[list]:
    """sentencepiece 0.2.3's seeds: every character, then the pieces of the internal nodes of
    the suffix tree of the sentences' UTF-8 bytes (each sentence `count` times, each followed
    by a 0 byte), a node's trailing 0 cut off, the frequencies of the nodes that give the same
    piece added up; scored float32 frequency x characters, the best `seed_size` (ties: more
    bytes, then the smaller string); log-probabilities summed in double.

    A node of the byte suffix tree that is whole characters is a node of the character suffix
    tree whose next characters do not all begin with the same byte (the other byte nodes end
    inside a character, which sentencepiece skips): the character nodes of
    `_node_candidates`, filtered by the first UTF-8 bytes of the first and last next
    character (sorted by code point, which sorts them by UTF-8 bytes too)."""
    all_chars = _char_counts(sentences)
    all_chars.pop(UNK_CHAR, None)
    all_chars.pop(boundary, None)
    seeds = [[c, f32(float(n))] for c, n in sorted(all_chars.items(), key=lambda kv: (-kv[1], kv[0]))]
    size = seed_size if seed_size > 0 else max(100000, vocab_size * 8)
    max_len = checker.max_len
    width = max_len + 2  # a piece of max_len characters and the 0 cut off after it
    parts = [(t + "\0") * f for t, f in sentences]
    if sum(len(t.encode("utf-8")) for t in parts) >= 500 * 1024 * 1024:
        raise NotImplementedError("sentencepiece 0.2.3's seeds from more than 500 MB (in chunks)")
    text = "".join(parts) + "\0" * width
    del parts
    never = frozenset(("\0", UNK_CHAR, boundary, " "))
    acc: dict[str, int] = {}
    for w, freq, first, last in _node_candidates(text, width, lambda w: True, never, ends=True):
        d = len(w)
        if _lead_byte(first[d]) == _lead_byte(last[d]):
            continue
        piece = w[:-1] if w[-1] == "\0" else w
        if not 2 <= len(piece) <= max_len or "\0" in piece or not checker(piece):
            continue
        acc[piece] = acc.get(piece, 0) + freq
    del text
    items = [(f32(f32(float(n)) * float(len(w))), w) for w, n in acc.items() if n >= 2]
    items.sort(key=lambda sw: (-sw[0], -len(sw[1].encode("utf-8")), sw[1]))
    del items[size:]
    seeds.extend([w, sc] for sc, w in items)
    total = 0.0
    for p in seeds:
        total += p[1]
    logsum = _log(total)
    for p in seeds:
        p[1] = f32(_log(p[1]) - logsum)
    return seeds


# -- the model and its lattices ----------------------------------------------------------------

class _Model:
    """TrainerModel: pieces (ids = positions) with float32 scores, and their lattices."""

    def __init__(self, pieces: list[list], matches: "_Matches"):
        self.pieces = pieces
        self.scores = [p[1] for p in pieces]
        self.matches = matches
        # seed index -> current piece id (-1: gone); unknown strings get new seed indexes.
        cur = [-1] * len(matches.index)
        index = matches.index
        for i, (p, _) in enumerate(pieces):
            k = index.get(p)
            if k is None:
                k = matches.add(p)
                cur.append(-1)
            cur[k] = i
        self.cur = cur
        m = _FLT_MAX
        for _, sc in pieces:
            if sc < m:
                m = sc
        self.min_score = m
        self.unk_score = f32(m - _UNK_PENALTY)
        # by seed index, then (index -1) the unknown node: piece id and score
        self.alive = frozenset(compress(range(len(cur)), map((-1).__ne__, cur)))
        self.id_of = cur + [0]
        score_of = [0.0] * (len(cur) + 1)
        for k, i in enumerate(cur):
            if i >= 0:
                score_of[k] = self.scores[i]
        score_of[-1] = self.unk_score
        self.score_of = score_of

    def lattice(self, text: str):
        """PopulateNodes: node 0 is BOS, 1 EOS, then per start position the pieces there by
        length (an unknown one-character node, id 0, when no piece has one character).
        Returns (ids, scores, starts, ends, begin lists, end lists)."""
        n = len(text)
        ids = [-1, -1]
        scores = [0.0, 0.0]
        starts = [0, n]
        ends = [0, n]
        begin = [[] for _ in range(n + 1)]
        end = [[] for _ in range(n + 1)]
        end[0].append(0)
        begin[n].append(1)
        sc = self.scores
        unk = self.unk_score

        def unknown(q: int, k: int) -> int:
            # the unknown node of the one character at q (rare: no piece covers it alone)
            ids.append(0)
            scores.append(unk)
            starts.append(q)
            ends.append(q + 1)
            begin[q].append(k)
            end[q + 1].append(k)
            return k + 1

        flat = self.matches.of(text)
        k = 2
        pb = -1
        single = True
        for b, e, pid in zip(flat[0::3], flat[1::3], map(self.cur.__getitem__, flat[2::3])):
            if pid < 0:
                continue
            if b != pb:
                # the positions before b are complete: an unknown node where no piece of
                # one character
                if not single:
                    k = unknown(pb, k)
                for q in range(pb + 1, b):
                    k = unknown(q, k)
                pb = b
                single = False
            ids.append(pid)
            scores.append(sc[pid])
            starts.append(b)
            ends.append(e)
            begin[b].append(k)
            end[e].append(k)
            k += 1
            if e == b + 1:
                single = True
        if not single:
            k = unknown(pb, k)
        for q in range(pb + 1, n):
            k = unknown(q, k)
        return ids, scores, starts, ends, begin, end


class _Matches:
    """The seed pieces found in texts (the pieces of later models are a subset of the seeds)."""

    def __init__(self, seeds: list[list]):
        self.index: dict[str, int] = {p: i for i, (p, _) in enumerate(seeds)}
        self.prefixes: set[str] = set()
        for p in self.index:
            self._add_prefixes(p)
        self.memo: dict[str, array] = {}

    def _add_prefixes(self, p: str) -> None:
        for k in range(1, len(p) + 1):
            self.prefixes.add(p[:k])

    def add(self, p: str) -> int:
        k = self.index[p] = len(self.index)
        self._add_prefixes(p)
        self.memo.clear()
        return k

    def of(self, text: str) -> array:
        """The seed pieces in `text`: (start, end, seed index) triples, flat, by start then
        end (kept per text: the pieces of every model are seeds)."""
        flat = self.memo.get(text)
        if flat is None:
            flat = self.memo[text] = self.scan(text)
        return flat

    def scan(self, text: str) -> array:
        """`of` without keeping the result."""
        n = len(text)
        prefixes = self.prefixes
        get = self.index.get
        flat = array("i")
        add = flat.extend
        for b in range(n):
            e = b + 1
            while e <= n:
                sub = text[b:e]
                if sub not in prefixes:
                    break
                k = get(sub)
                if k is not None:
                    add((b, e, k))
                e += 1
        return flat


def _lattice_of(starts, ends, sids, n: int, alive) -> array:
    """A text's lattice in seed space: an int array of the nodes' seed indexes (-1: an
    unknown one-character node) then each position's first node, and the nodes' lengths
    (bytes: pieces are short).  The nodes are the `alive` seeds' (in node order) and an unknown node after the nodes of each
    position without one of one character, as PopulateNodes makes them."""
    keep = list(map(alive.__contains__, sids))
    if not all(keep):
        starts = list(compress(starts, keep))
        ends = list(compress(ends, keep))
        sids = list(compress(sids, keep))
    else:
        starts = list(starts)
        ends = list(ends)
        sids = list(sids)
    singles = set(compress(starts, map((1).__eq__, map(sub, ends, starts))))
    if len(singles) != n:
        s2, e2, i2 = [], [], []
        j = 0
        for b in range(n):
            if b in singles:
                continue
            k = bisect_right(starts, b, j)
            s2 += starts[j:k]
            e2 += ends[j:k]
            i2 += sids[j:k]
            s2.append(b)
            e2.append(b + 1)
            i2.append(-1)
            j = k
        starts = s2 + starts[j:]
        ends = e2 + ends[j:]
        sids = i2 + sids[j:]
    lat = array("i", sids)
    lat += array("i", map(bisect_left, repeat(starts), range(n + 1)))
    lens = list(map(sub, ends, starts))
    return lat, bytes(lens) if max(lens, default=0) < 256 else array("i", lens)


def _unpack_lattice(lat, n: int):
    """`_lattice_of`'s (nodes' seed indexes and positions' first nodes, nodes' lengths) as
    the nodes' starts, ends and seed indexes and the positions' first nodes."""
    sf, lens = lat
    m = len(lens)
    first = sf[m:]
    starts = list(chain.from_iterable(map(repeat, range(n), map(sub, first[1:], first))))
    return starts, list(map(add, starts, lens)), sf[:m], first


class _Lattices:
    """The lattices of the texts EM runs on, kept across models: a model's pieces are a
    subset of the previous model's, so only the texts holding a dropped piece change."""

    def __init__(self, data: list[list], matches: _Matches):
        self.data = data
        self.matches = matches
        self.lats: list[tuple] | None = None
        self.alive: frozenset = frozenset()

    def sync(self, model: "_Model") -> list[tuple]:
        alive = model.alive
        lats = self.lats
        if lats is None or not alive <= self.alive:
            scan = self.matches.scan
            lats = self.lats = []
            for text, _ in self.data:
                flat = scan(text)
                lats.append(_lattice_of(flat[0::3], flat[1::3], flat[2::3], len(text), alive))
        elif alive != self.alive:
            gone = self.alive - alive
            single = {k for p, k in self.matches.index.items() if len(p) == 1}
            gone_single = gone & single
            kept = alive | {-1}
            for i, (text, _) in enumerate(self.data):
                sf, lens = lats[i]
                m = len(lens)
                sids = sf[:m]
                if gone.isdisjoint(sids):
                    continue
                if not gone_single.isdisjoint(sids):
                    # a position may lose its last one-character node: unknown nodes change
                    n = len(text)
                    starts, ends, sids, _ = _unpack_lattice(lats[i], n)
                    lats[i] = _lattice_of(starts, ends, sids, n, alive)
                    continue
                # only longer nodes go: the rest (unknown nodes too) stay in order, each
                # position's first node moves down by the nodes dropped before it
                keep = list(map(kept.__contains__, sids))
                before = list(accumulate(keep, initial=0))
                lat = array("i", compress(sids, keep))
                lat += array("i", map(before.__getitem__, sf[m:]))
                lens = bytes(compress(lens, keep)) if type(lens) is bytes else array("i", compress(lens, keep))
                lats[i] = (lat, lens)
        self.alive = alive
        return lats


_BUF = array("f", [0.0])


def _viterbi(scores, begin, end, n):
    """Lattice::Viterbi: (path of node indices without BOS/EOS, backtrace scores)."""
    buf = _BUF
    bt = [0.0] * len(scores)
    prev = [-1] * len(scores)
    for pos in range(n + 1):
        lefts = end[pos]
        for r in begin[pos]:
            rs = scores[r]
            best = -1
            best_score = 0.0
            for l in lefts:
                buf[0] = bt[l] + rs
                s = buf[0]
                if best == -1 or s > best_score:
                    best = l
                    best_score = s
            prev[r] = best
            bt[r] = best_score
    path = []
    node = prev[1]
    while prev[node] != -1:
        path.append(node)
        node = prev[node]
    path.reverse()
    return path, bt


def _lse_023(x: float, y: float) -> float:
    """sentencepiece 0.2.3's LogSumExp: vmax + log1p(exp(vmin - vmax)) (0.2.1: log(... + 1))."""
    buf = _BUF
    vmin, vmax = (x, y) if x < y else (y, x)
    buf[0] = vmin + 50.0
    if vmax > buf[0]:
        return vmax
    buf[0] = vmin - vmax
    buf[0] = vmax + math.log1p(_exp(buf[0]))
    return buf[0]


def _marginal(starts, ends, scores, pids, first, n, freq: float, expected, v023: bool = False) -> None:
    """PopulateMarginal: adds freq x each node's posterior to expected[piece id].

    LogSumExp(x, y): std::min / std::max of the floats, then vmax when vmax > vmin + 50,
    else vmax + log(exp(vmin - vmax) + 1) with double log and exp, rounded to float.  The
    first case needs no test: there exp(vmin - vmax) + 1 is 1.0 in double, whose log is 0.
    vmin - vmax rounded is -|x - y| rounded, whose sign says which is vmax.
    All the nodes starting at a position have the same alpha (a sum over the nodes ending
    there), all the nodes ending at a position the same beta.  In node order a node's alpha is
    final once the nodes before it are done (they start earlier), so alpha folds in one
    pass; beta goes over the start positions backwards."""
    buf = _BUF
    log = _log
    exp = _exp
    alpha = [None] * (n + 1)
    alpha[0] = 0.0
    # each node's alpha + score (kept for the posteriors)
    node_alpha = []
    keep = node_alpha.append
    for b, e, s in zip(starts, ends, scores):
        buf[0] = s + alpha[b]
        v = buf[0]
        keep(v)
        a = alpha[e]
        if a is None:
            alpha[e] = v
            continue
        if v023:
            alpha[e] = _lse_023(a, v)
            continue
        buf[0] = v - a
        d = buf[0]
        if d < 0.0:
            buf[0] = a + log(exp(d) + 1.0)
        else:
            buf[0] = v + log(exp(-d) + 1.0)
        alpha[e] = buf[0]
    beta = [0.0] * (n + 1)
    for pos in range(n - 1, -1, -1):
        k = first[pos]
        buf[0] = scores[k] + beta[ends[k]]
        b = buf[0]
        for k in range(k + 1, first[pos + 1]):
            buf[0] = scores[k] + beta[ends[k]]
            v = buf[0]
            if v023:
                b = _lse_023(b, v)
                continue
            buf[0] = v - b
            d = buf[0]
            if d < 0.0:
                buf[0] = b + log(exp(d) + 1.0)
            else:
                buf[0] = v + log(exp(-d) + 1.0)
            b = buf[0]
        beta[pos] = b
    # alpha + score + beta - Z, each step rounded; `expected` is float32: += rounds once
    # (float += double in C++), as does the store into the array
    z = alpha[n]
    for pid, v, e in zip(pids, node_alpha, ends):
        buf[0] = v + beta[e]
        buf[0] = buf[0] - z
        expected[pid] += freq * exp(buf[0])


def _viterbi_flat(starts, ends, scores, n, smax: float) -> list[int]:
    """`_viterbi_lists` keeping per end position only the first largest backtrace score,
    its node and the largest score before it (no lists): when that one is within an ulp of
    the largest + a score, `_viterbi_lists` decides node by node instead."""
    buf = _BUF
    top = [None] * (n + 1)
    top_k = [-1] * (n + 1)
    before = [None] * (n + 1)
    top[0] = 0.0
    prev = []
    keep = prev.append
    pb = -1
    for k, (b, e, s) in enumerate(zip(starts, ends, scores)):
        if b != pb:
            pb = b
            m = top[b]
            best = top_k[b]
            p = before[b]
            if p is not None and p >= m - (abs(m) + smax) * 2.4e-7:
                return _viterbi_lists(starts, ends, scores, n, smax)
        buf[0] = m + s
        v = buf[0]
        keep(best)
        c = top[e]
        if c is None:
            top[e] = v
            top_k[e] = k
        elif v > c:
            before[e] = c
            top[e] = v
            top_k[e] = k
    return _backtrace(prev, top_k[n])  # EOS, score 0


def _backtrace(prev: list[int], last: int) -> list[int]:
    """The path ending in node `last`, by each node's best left neighbour (-1: BOS)."""
    path = []
    while last != -1:
        path.append(last)
        last = prev[last]
    path.reverse()
    return path


def _viterbi_lists(starts, ends, scores, n, smax: float) -> list[int]:
    """`_viterbi`'s path (node indices) on a `_lattice_of`'s lists: in node order a node's
    left neighbours (the nodes ending where it starts, in node order) are all done.

    A right node takes the first left one whose backtrace score + its score, rounded, is
    the largest: since rounding keeps order, that is the first left node of the largest
    backtrace score M, unless an earlier one is within an ulp of M + score (then the
    nodes are compared one by one).  `smax` bounds the scores' magnitudes."""
    buf = _BUF
    ending_bt: list[list] = [[] for _ in range(n + 1)]
    ending_k: list[list] = [[] for _ in range(n + 1)]
    ending_bt[0].append(0.0)
    ending_k[0].append(-1)  # BOS
    prev = []
    pb = -1
    near = False
    for k, (b, e, s) in enumerate(zip(starts, ends, scores)):
        if b != pb:
            pb = b
            bts = ending_bt[b]
            m = max(bts)
            i = bts.index(m)
            best = ending_k[b][i]
            if i:
                limit = m - (abs(m) + smax) * 2.4e-7
                near = max(bts[:i]) >= limit
        if near:
            best = -2
            best_score = 0.0
            for bt, l in zip(bts, ending_k[b]):
                buf[0] = bt + s
                v = buf[0]
                if best == -2 or v > best_score:
                    best = l
                    best_score = v
            prev.append(best)
            ending_bt[e].append(best_score)
        else:
            buf[0] = m + s
            prev.append(best)
            ending_bt[e].append(buf[0])
        ending_k[e].append(k)
    bts = ending_bt[n]  # EOS, score 0
    return _backtrace(prev, ending_k[n][bts.index(max(bts))])


def _nbest2(scores, starts, begin, end, n):
    """Lattice::NBest(2): the two best paths by A* from EOS, with std::priority_queue's
    order (a binary max-heap on fx; libstdc++'s push_heap / pop_heap)."""
    path, bt = _viterbi(scores, begin, end, n)
    buf = _BUF
    # hypotheses: [node, gx, fx, next]
    heap: list = []

    def push(h) -> None:
        heap.append(h)
        hole = len(heap) - 1
        parent = (hole - 1) // 2
        while hole > 0 and heap[parent][2] < h[2]:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = h

    def pop():
        top = heap[0]
        last = heap.pop()
        length = len(heap)
        if length == 0:
            return top
        # __adjust_heap(first, 0, length, last)
        hole = 0
        child = 0
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if heap[child][2] < heap[child - 1][2]:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if (length & 1) == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            heap[hole] = heap[child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > 0 and heap[parent][2] < last[2]:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = last
        return top

    eos = [1, 0.0, bt[1], None]
    push(eos)
    results = []
    while heap:
        top = pop()
        node = top[0]
        if node == 0:
            results.append(hypothesis_nodes(top, 0))
            if len(results) == 2:
                break
            continue
        g = top[1]
        for l in end[starts[node]]:
            buf[0] = scores[l] + g
            gx = buf[0]
            buf[0] = bt[l] + g
            push([l, gx, buf[0], top])
        if len(heap) >= 10000:
            raise ValueError("n-best agenda over 10000 (sentencepiece would shrink it)")
    return results


# -- training ------------------------------------------------------------------------------------

def _e_step(model: _Model, sentences: list[list], threads: int, lattices: _Lattices,
            v023: bool = False) -> list[float]:
    size = len(model.pieces)
    lats = lattices.sync(model)
    score_of = model.score_of.__getitem__
    id_of = model.id_of.__getitem__
    parts = []
    for t in range(threads):
        expected = array("f", bytes(4 * size))
        for i in range(t, len(sentences), threads):
            text, freq = sentences[i]
            n = len(text)
            starts, ends, sids, first = _unpack_lattice(lats[i], n)
            _marginal(starts, ends, list(map(score_of, sids)), map(id_of, sids), first, n,
                      f32(float(freq)), expected, v023)
        parts.append(expected)
    total = parts[0]
    for other in parts[1:]:
        for k in range(size):
            total[k] += other[k]
    return total.tolist()


def _m_step(model: _Model, expected: list[float]) -> list[list]:
    new = []
    total = 0.0
    for (piece, _), freq in zip(model.pieces, expected):
        if freq < 0.5:
            continue
        new.append([piece, freq])
        total = f32(total + freq)
    logsum = f32(digamma(total))
    for p in new:
        p[1] = f32(digamma(p[1]) - logsum)
    return new


def _prune_counts_f32(sentences: list[list], threads: int, size: int, path):
    """Pruning's sums as sentencepiece makes them, in float32 (when they may round): the
    number of sentences, each piece's frequency on the best paths, each piece's F."""
    vsums = []
    freqs = []
    inverteds = []
    buf = _BUF
    for t in range(threads):
        vsum = 0.0
        freq = [0.0] * size
        inverted: dict[int, list[int]] = {}
        for i in range(t, len(sentences), threads):
            buf[0] = float(sentences[i][1])
            fc = buf[0]
            buf[0] = vsum + fc
            vsum = buf[0]
            for pid in path(i):
                buf[0] = freq[pid] + fc
                freq[pid] = buf[0]
                inverted.setdefault(pid, []).append(i)
        vsums.append(vsum)
        freqs.append(freq)
        inverteds.append(inverted)
    vsum = 0.0
    freq = [0.0] * size
    for t in range(threads):
        vsum = f32(vsum + vsums[t])
        ft = freqs[t]
        for i in range(size):
            freq[i] = f32(freq[i] + ft[i])
    big_fs = [0.0] * size
    for i in range(size):
        big_f = 0.0
        for t in range(threads):
            for k in inverteds[t].get(i, ()):
                big_f = f32(big_f + f32(float(sentences[k][1])))
        big_fs[i] = big_f
    return vsum, freq, big_fs


def _prune(model: _Model, sentences: list[list], threads: int, desired: int,
           shrinking_factor: float, lattices: _Lattices, v023: bool = False) -> list[list]:
    pieces = model.pieces
    size = len(pieces)
    always_keep = [True] * size
    alternatives: list[list[int]] = [[] for _ in range(size)]
    for i, (w, _) in enumerate(pieces):
        if len(w) == 1:
            continue  # its lattice is its own node: one segmentation, kept
        ids, scores, starts, ends, begin, end = model.lattice(w)
        always_keep[i], alternatives[i] = verdict(_nbest2(scores, starts, begin, end, len(w)), ids)

    lats = lattices.sync(model)
    score_of = model.score_of.__getitem__
    id_of = model.id_of
    smax = max(map(abs, model.score_of))

    def path(i: int) -> list[int]:
        n = len(sentences[i][0])
        starts, ends, sids, _ = _unpack_lattice(lats[i], n)
        return [id_of[sids[k]] for k in _viterbi_flat(starts, ends, list(map(score_of, sids)), n, smax)]

    # sentencepiece sums the counts in float32; while every sum stays a whole number up to
    # 2**24 that is exact, and a piece's F (the counts of the sentences whose best path
    # holds it, once per occurrence) is its frequency.
    counts = [0] * size
    vsum_whole = 0
    for t in range(threads):
        for i in range(t, len(sentences), threads):
            count = sentences[i][1]
            vsum_whole += count
            for pid in path(i):
                counts[pid] += count
    if vsum_whole <= 1 << 24 and max(counts, default=0) <= 1 << 24:
        vsum = float(vsum_whole)
        freq = list(map(float, counts))
        big_fs = freq
    else:
        vsum, freq, big_fs = _prune_counts_f32(sentences, threads, size, path)
    del counts

    acc = 0.0
    for x in freq:
        acc += x
    total = f32(acc)
    logsum = f32(_log(total))
    new = []
    candidates = []
    for i in range(size):
        if freq[i] == 0 or not always_keep[i]:
            continue
        if not alternatives[i]:
            new.append(pieces[i])
            continue
        # 0.2.1: the share of the sentences whose best path holds the piece; 0.2.3: of tokens.
        big_f = f32(freq[i] / total) if v023 else f32(big_fs[i] / vsum)
        logprob_sp = f32(_log(freq[i]) - logsum)
        logsum_alt = f32(_log(f32(total + f32(freq[i] * f32(float(len(alternatives[i]) - 1))))))
        logprob_alt = 0.0
        for alt in alternatives[i]:
            logprob_alt = f32(logprob_alt + (_log(f32(freq[alt] + freq[i])) - logsum_alt))
        loss = f32(big_f * f32(logprob_sp - logprob_alt))
        candidates.append((i, loss))
    pruned_size = max(desired, int(f32(shrinking_factor * f32(float(size)))))
    for i, _ in sorted(candidates, key=lambda c: (-c[1], c[0])):
        if len(new) == pruned_size:
            break
        new.append(pieces[i])
    return new


def _prune_unreachable(model: _Model) -> list[list]:
    """0.2.3's PruneUnreachableSentencePieces: a piece goes when, with its own node barred,
    the best path over its string scores higher than the piece alone."""
    new = []
    for i, piece in enumerate(model.pieces):
        w = piece[0]
        n = len(w)
        ids, scores, starts, ends, begin, end = model.lattice(w)
        own = next((k for k in begin[0] if ids[k] == i and ends[k] == n), None)
        if own is None:
            continue
        score = scores[own]
        scores[own] = -math.inf
        path, bt = _viterbi(scores, begin, end, n)
        if path and bt[1] > score:
            continue
        new.append(piece)
    return new


def _finalize(model: _Model, required: dict[str, int], vocab_size: int) -> list[tuple[str, float]]:
    sp = {p: s for p, s in model.pieces}
    final: dict[str, float] = {}
    penalty = 0.0
    delta = f32(0.0001)
    for c, _ in sorted(required.items(), key=lambda kv: (-kv[1], kv[0])):
        if c in sp:
            final[c] = sp[c]
        else:
            final[c] = f32(model.min_score + penalty)
            penalty = f32(penalty + delta)
    for p, s in sorted(model.pieces, key=lambda ps: (-ps[1], ps[0])):
        if p in final:
            continue
        if vocab_size == len(final):
            break
        final[p] = s
    return sorted(final.items(), key=lambda ps: (-ps[1], ps[0]))


def train_unigram(sentences: list[list], words: list[list] | None, required: dict[str, int],
                  vocab_size: int, total_vocab_size: int, checker: PieceChecker, *,
                  seed_size: int, shrinking_factor: float, num_sub_iterations: int,
                  threads: int, progress=None, v023: bool = False,
                  boundary: str = BOUNDARY) -> list[tuple[str, float]]:
    """The pieces (without the meta pieces) and their scores, in order.  `sentences` are
    the normalized sentences (for the seeds), `words` what EM runs on (None: the sentences);
    `vocab_size` excludes the meta pieces, `total_vocab_size` includes them.  `progress(n,
    target)`, if given, hears the number of pieces after the seeds and after each EM round.
    `v023`: as sentencepiece 0.2.3 (its seeds, `boundary`, pruning after every EM round and
    by token share, then the unreachable pieces dropped)."""
    if v023:
        seeds = make_seeds_023(sentences, checker, seed_size, total_vocab_size, boundary)
    else:
        seeds = make_seeds(sentences, checker, seed_size)
    matches = _Matches(seeds)
    model = _Model(seeds, matches)
    data = sentences if words is None else words
    lattices = _Lattices(data, matches)
    desired = int(total_vocab_size * 1.1)
    while True:
        if progress is not None:
            progress(len(model.pieces), desired)
        for _ in range(num_sub_iterations):
            expected = _e_step(model, data, threads, lattices, v023)
            model = _Model(_m_step(model, expected), matches)
        if v023:
            model = _Model(_prune(model, data, threads, desired, shrinking_factor, lattices, True), matches)
            if len(model.pieces) <= desired:
                model = _Model(_prune_unreachable(model), matches)
                break
            continue
        if len(model.pieces) <= desired:
            break
        model = _Model(_prune(model, data, threads, desired, shrinking_factor, lattices), matches)
    return _finalize(model, required, vocab_size)
