"""`tokenizers`' UnigramTrainer on word counts (its own algorithm, not sentencepiece's).

Data flow: word counts ("sentences": each distinct pre-token with its count) ->
seed pieces: every character (weighted by its words' counts) and the most frequent substrings
of the distinct words (those a suffix tree has as internal nodes: occurring at least twice and
followed by two different characters, or ending a word; 2..`max_piece_length` characters;
score = occurrences among distinct words x length), scores as log-probabilities ->
EM rounds: `n_sub_iterations` times an E-step (forward-backward over each word's lattice of
pieces, expected counts) and an M-step (drop pieces expected < 0.5 times, Bayesian digamma
scores), then pruning (each piece's loss if it were replaced by its second-best segmentation;
keep the `shrinking_factor` share with the highest loss) until at most 1.1 x `vocab_size` pieces
are left -> finalize: every character first, then the best pieces, sorted by score, with the
special tokens (and `unk_token`) in front.

All arithmetic is f64 in the reference's order of operations (sums left to right, `math.log`
and `math.exp` from the same libm), except where `tokenizers` itself is not deterministic:

* it walks its words in the order of a hash map seeded at random per process, so its float
  sums (and so the last bits of its scores) differ run to run; here the words are walked in
  the order given;
* it places the characters in the final vocabulary in hash-set order (ties in score, and the
  small penalties of characters the model lost, follow that order); here code point order.
  `reference_pieces` (a vocabulary `tokenizers` produced) makes this order as it made it.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from itertools import compress, repeat
from operator import add
from collections import Counter
from typing import Callable, Iterable, Mapping

from ._nbest import hypothesis_nodes, verdict

__all__ = ["UnigramTrained", "train_unigram", "seed_pieces", "digamma"]

_NAN = float("nan")
_INF = float("inf")
_UNK_PENALTY = 10.0
_log = math.log
_exp = math.exp


class UnigramTrained:
    """What UnigramTrainer makes: `vocab`, the pieces with their scores in id order (special
    tokens first), and `unk_id` (None without an `unk_token`)."""

    def __init__(self, vocab: list[tuple[str, float]], unk_id: int | None, special_tokens: list[str]):
        self.vocab = vocab
        self.unk_id = unk_id
        self.special_tokens = special_tokens

    def __repr__(self) -> str:
        return f"<UnigramTrained vocab={len(self.vocab)} unk_id={self.unk_id}>"


def digamma(x: float) -> float:
    """The digamma function as `tokenizers` computes it (asymptotic series, same operations)."""
    result = 0.0
    while x < 7.0:
        result -= 1.0 / x if x != 0.0 else math.copysign(_INF, x)  # f64: 1/0 is inf
        x += 1.0
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += (_log(x) + (1.0 / 24.0) * xx2 - 7.0 / 960.0 * xx4 + (31.0 / 8064.0) * xx4 * xx2
               - (127.0 / 30720.0) * xx4 * xx4)
    return result


def _ln(x: float) -> float:
    """f64::ln: -inf at 0 and NaN below, where math.log raises."""
    if x > 0.0 or x != x:
        return _log(x)
    return -_INF if x == 0.0 else _NAN


def _fsum_lr(values) -> float:
    """A left-to-right f64 sum (the builtin sum compensates rounding since Python 3.12)."""
    s = 0.0
    for v in values:
        s += v
    return s


def _lse(x: float, y: float) -> float:
    if x > y:
        vmin, vmax = y, x
    else:
        vmin, vmax = x, y
    if vmax > vmin + 50.0:
        return vmax
    return vmax + _log(_exp(vmin - vmax) + 1.0)


# --- seeds -----------------------------------------------------------------------------------


def seed_pieces(sentences: list[tuple[str, int]], max_piece_length: int, seed_size: int) -> list[tuple[str, float]]:
    """The seed vocabulary with log-probability scores (without the leading <UNK>)."""
    chars: dict[str, int] = {}
    words = []
    for s, n in sentences:
        if not s:
            continue
        words.append(s)
        for c in s:
            if c != "\0":
                chars[c] = chars.get(c, 0) + n
    flat = "\0".join(words) + "\0" if words else ""
    substrings = _branching_substrings(flat, max_piece_length)
    seeds: list[tuple[str, float]] = [(c, float(n)) for n, c in sorted(((n, c) for c, n in chars.items()), reverse=True)]
    ranked = sorted(((freq * len(s)) & 0xFFFFFFFF, s) for s, freq in substrings)  # u32 arithmetic
    ranked.reverse()
    for score, s in ranked:
        seeds.append((s, float(score)))
        if len(seeds) >= seed_size:
            break
    total = _fsum_lr(sc for _, sc in seeds)
    logsum = _ln(total)
    return [(p, _ln(sc) - logsum) for p, sc in seeds]


def _branching_substrings(flat: str, max_len: int) -> list[tuple[str, int]]:
    """Substrings of 2..max_len characters, without "\\0", that label an internal node of the
    suffix tree of `flat` (esaxx's enumeration): at least two occurrences, not all followed by
    the same character.  With their occurrence counts.

    Length by length, only where the substring one shorter occurs twice or more (without NUL)
    can a longer one, so each round looks at fewer positions; all in C-level maps."""
    n = len(flat)
    out: list[tuple[str, int]] = []
    if n < 2 or max_len < 2:
        return out
    getitem = flat.__getitem__

    def windows(starts: list[int], length: int) -> list[str]:
        return list(map(getitem, map(slice, starts, map(add, starts, repeat(length)))))

    live = list(range(n - 1))  # every start of a 2-character window
    cur_w = windows(live, 2)
    cur = Counter(cur_w)
    for length in range(2, max_len + 1):
        good = {w for w, c in cur.items() if c >= 2 and "\0" not in w}
        if not good:
            break
        live = list(compress(live, map(good.__contains__, cur_w)))
        ext_live = [i for i in live if i + length < n] if live and live[-1] + length >= n else live
        nxt_w = windows(ext_live, length + 1)
        nxt = Counter(nxt_w)
        # The most frequent one-character extension of each substring: the substring branches
        # iff that extension does not account for all its occurrences.
        best_ext: dict[str, int] = {}
        get = best_ext.get
        for w, c in nxt.items():
            q = w[:-1]
            if c > get(q, 0):
                best_ext[q] = c
        for w in good:
            c = cur[w]
            if c > get(w, 0):
                out.append((w, c))
        live, cur_w, cur = ext_live, nxt_w, nxt
    return out


# --- the model as the trainer uses it -----------------------------------------------------------


class _Model:
    """A Unigram over `pieces` as `Unigram::from` builds it: piece -> id (a repeated piece
    keeps its last id), the lowest score (NaN ignored), and the unk node's score."""

    __slots__ = ("ids", "scores", "min_score", "unk_score", "max_len", "n")

    def __init__(self, pieces: list[tuple[str, float]]):
        ids: dict[str, int] = {}
        scores = []
        min_score = _INF
        max_len = 1
        for i, (p, sc) in enumerate(pieces):
            ids[p] = i
            scores.append(sc)
            if sc < min_score:
                min_score = sc
            if len(p) > max_len:
                max_len = len(p)
        self.ids = ids
        self.scores = scores
        self.min_score = min_score
        self.unk_score = min_score - _UNK_PENALTY
        self.max_len = max_len
        self.n = len(pieces)

    def lattice(self, s: str):
        """Nodes of the lattice of `s`: (vocab ids, scores, begin positions, lengths), node 0 the
        BOS and node 1 the EOS, then the pieces by position and increasing length (an unknown
        character where no piece of one character starts), and the node indices that begin and
        end at each position."""
        n = len(s)
        bos_id = self.n + 1
        eos_id = self.n + 2
        vid = [bos_id, eos_id]
        score = [0.0, 0.0]
        npos = [0, n]
        nlen = [0, 0]
        begin: list[list[int]] = [[] for _ in range(n + 1)]
        end: list[list[int]] = [[] for _ in range(n + 1)]
        begin[n].append(1)
        end[0].append(0)
        get = self.ids.get
        scores = self.scores
        max_len = self.max_len
        for pos in range(n):
            single = False
            stop = min(n, pos + max_len)
            bl = begin[pos]
            for e in range(pos + 1, stop + 1):
                i = get(s[pos:e])
                if i is not None:
                    k = len(vid)
                    vid.append(i)
                    score.append(scores[i])
                    npos.append(pos)
                    nlen.append(e - pos)
                    bl.append(k)
                    end[e].append(k)
                    if e == pos + 1:
                        single = True
            if not single:
                k = len(vid)
                vid.append(0)
                score.append(self.unk_score)
                npos.append(pos)
                nlen.append(1)
                bl.append(k)
                end[pos + 1].append(k)
        return vid, score, npos, nlen, begin, end


def _marginal(lat, freq: float, expected: list[float]) -> None:
    """Adds each node's expected count (forward-backward) times `freq` to `expected`."""
    vid, score, _, _, begin, end = lat
    n = len(begin) - 1
    k = len(vid)
    alpha = [0.0] * k
    beta = [0.0] * k
    for pos in range(n + 1):
        ends = end[pos]
        first = vid[ends[0]] if ends else None
        for r in begin[pos]:
            a = 0.0
            for li in ends:
                v = score[li] + alpha[li]
                if vid[li] == first:
                    a = v
                else:
                    a = _lse(a, v)
            alpha[r] = a
    for pos in range(n, -1, -1):
        begins = begin[pos]
        first = vid[begins[0]] if begins else None
        for li in end[pos]:
            b = 0.0
            for r in begins:
                v = score[r] + beta[r]
                if vid[r] == first:
                    b = v
                else:
                    b = _lse(b, v)
            beta[li] = b
    z = alpha[1]
    for pos in range(n):
        for node in begin[pos]:
            total = alpha[node] + score[node] + beta[node] - z
            expected[vid[node]] += freq * _exp(total)


def _viterbi(lat) -> tuple[list[int], list[float]]:
    """The best path's nodes (without BOS/EOS), and every node's backtrace score."""
    vid, score, _, _, begin, end = lat
    n = len(begin) - 1
    k = len(vid)
    back = [0.0] * k
    prev = [-1] * k
    for pos in range(n + 1):
        ends = end[pos]
        for r in begin[pos]:
            best = -1
            best_score = 0.0
            sr = score[r]
            for li in ends:
                sc = back[li] + sr
                if best < 0 or sc > best_score:
                    best = li
                    best_score = sc
            if best < 0:
                return [], back
            prev[r] = best
            back[r] = best_score
    path = []
    node = prev[1]
    while prev[node] >= 0:
        path.append(node)
        node = prev[node]
    path.reverse()
    return path, back


# The n-best search keeps its agenda in a 4-ary max-heap ordered by fx alone, with ties (and
# NaN) ordered as "greater" both ways; which of two equal hypotheses comes out first follows
# from the heap's exact sifting, reproduced here.


def _h_le(a, b) -> bool:
    return a[0] < b[0]


def _heap_push(heap: list, item) -> None:
    heap.append(item)
    _sift_up(heap, len(heap) - 1, item)


def _sift_up(heap: list, pos: int, item) -> None:
    while pos > 0:
        parent = (pos - 1) >> 2
        if item[0] < heap[parent][0]:
            break
        heap[pos] = heap[parent]
        pos = parent
    heap[pos] = item


def _heap_pop(heap: list):
    last = heap.pop()
    if not heap:
        return last
    top = heap[0]
    end = len(heap)
    pos = 0
    child = 1
    while child <= end - 4:
        a = child + (heap[child][0] < heap[child + 1][0])
        b = child + 2 + (heap[child + 2][0] < heap[child + 3][0])
        child = b if heap[a][0] < heap[b][0] else a
        heap[pos] = heap[child]
        pos = child
        child = 4 * pos + 1
    sib = child
    for other in range(child + 1, end):
        if heap[sib][0] < heap[other][0]:
            sib = other
    if sib < end:
        heap[pos] = heap[sib]
        pos = sib
    _sift_up(heap, pos, last)
    return top


def _nbest2(lat) -> list[list[int]]:
    """The two best segmentations (node lists), as Lattice::nbest(2) finds them."""
    vid, score, npos, _, begin, end = lat
    bos_vid = vid[0]
    _, back = _viterbi(lat)
    agenda: list = []
    _heap_push(agenda, (0.0, 0.0, 1, None))  # (fx, gx, node, next hypothesis)
    found: list[list[int]] = []
    while agenda:
        top = _heap_pop(agenda)
        node = top[2]
        if vid[node] == bos_vid:
            found.append(hypothesis_nodes(top, 2))
            if len(found) == 2:
                return found
            continue
        gx = top[1]
        for li in end[npos[node]]:
            _heap_push(agenda, (back[li] + gx, score[li] + gx, li, top))
        if len(agenda) > 100_000:
            small: list = []
            for _ in range(20):  # min(512, n * 10) with n = 2
                _heap_push(small, _heap_pop(agenda))
            agenda = small
    return found


# --- EM ---------------------------------------------------------------------------------------


class _Candidates:
    """Each sentence's possible pieces, found once with the seed vocabulary and thinned as the
    vocabulary shrinks (pieces are only ever dropped): per sentence three parallel lists --
    start, end, seed index -- in the order the lattice inserts nodes (by start, then by length).
    `cur[seed index]` is the piece's id in the current model, or -1."""

    def __init__(self, seeds: list[tuple[str, float]], sentences, max_len: int):
        index: dict[str, int] = {}
        for i, (p, _) in enumerate(seeds):
            index[p] = i
        self.index = index
        self.n_seeds = len(seeds)
        get = index.get
        cands = []
        for s, _ in sentences:
            n = len(s)
            P: list[int] = []
            E: list[int] = []
            S: list[int] = []
            for pos in range(n):
                for e in range(pos + 1, min(n, pos + max_len) + 1):
                    sid = get(s[pos:e])
                    if sid is not None:
                        P.append(pos)
                        E.append(e)
                        S.append(sid)
            cands.append((P, E, S))
        self.cands = cands

    def current(self, model: _Model) -> list[int]:
        cur = [-1] * self.n_seeds
        get = self.index.get
        for piece, i in model.ids.items():
            sid = get(piece)
            if sid is not None:
                cur[sid] = i
        return cur

    def nodes(self, j: int, n: int, cur: list[int], model: _Model):
        """The lattice nodes of sentence `j` (of `n` characters) as parallel lists (start, end,
        id, score) in insertion order, with an unknown-character node wherever no piece of one
        character starts; `group[p]` is where the nodes starting at p begin.  Drops the seeds
        the model no longer has from the cache."""
        P, E, S = self.cands[j]
        C = [cur[x] for x in S]
        if C and min(C) < 0:
            keep = [k for k, c in enumerate(C) if c >= 0]
            P = [P[k] for k in keep]
            E = [E[k] for k in keep]
            S = [S[k] for k in keep]
            C = [C[k] for k in keep]
            self.cands[j] = (P, E, S)
        singles = [p for p, e in zip(P, E) if e - p == 1]
        if len(singles) != n:
            # Unknown-character nodes go after the pieces starting at the same position.
            have = set(singles)
            LP, LE, LV = [], [], []
            k = 0
            m = len(P)
            for pos in range(n):
                while k < m and P[k] == pos:
                    LP.append(pos)
                    LE.append(E[k])
                    LV.append(C[k])
                    k += 1
                if pos not in have:
                    LP.append(pos)
                    LE.append(pos + 1)
                    LV.append(-1)
            P, E, C = LP, LE, LV
            scores = model.scores
            unk = model.unk_score
            LS = [scores[c] if c >= 0 else unk for c in C]
            C = [c if c >= 0 else 0 for c in C]
        else:
            scores = model.scores
            LS = [scores[c] for c in C]
        group = list(map(bisect_left, repeat(P, n + 1), range(n + 1)))
        return P, E, C, LS, group


def _e_step(model: _Model, cands: _Candidates, sentences) -> list[float]:
    """Expected counts of the pieces (forward-backward over each sentence's lattice).

    Every node starting at a position gets the same forward value (a fold over the nodes ending
    there) and every node ending at a position the same backward value, so the folds are done
    once per position -- the same operations in the same order as tokenizers' per-node loops."""
    expected = [0.0] * model.n
    cur = cands.current(model)
    exp = _exp
    log = _log
    for j, (s, freq) in enumerate(sentences):
        n = len(s)
        LP, LE, LV, LS, group = cands.nodes(j, n, cur, model)
        f = float(freq)
        # Forward: A[p], the alpha of the nodes starting at p.  Nodes come by start, so each
        # A[e] gets its terms in the order of tokenizers' end_nodes[e].
        A: list = [None] * (n + 1)
        first = [0] * (n + 1)
        A[0] = 0.0
        for i in range(len(LP)):
            v = LS[i] + A[LP[i]]
            e = LE[i]
            a = A[e]
            vid = LV[i]
            if a is None or vid == first[e]:
                if a is None:
                    first[e] = vid
                A[e] = v
            else:
                if a > v:
                    vmin, vmax = v, a
                else:
                    vmin, vmax = a, v
                A[e] = vmax if vmax > vmin + 50.0 else vmax + log(exp(vmin - vmax) + 1.0)
        # Backward: B[p], the beta of the nodes ending at p (B[n] = 0: the EOS node).
        B = [0.0] * (n + 1)
        for pos in range(n - 1, -1, -1):
            lo = group[pos]
            hi = group[pos + 1]
            b = LS[lo] + B[LE[lo]]
            fv = LV[lo]
            for i in range(lo + 1, hi):
                v = LS[i] + B[LE[i]]
                if LV[i] == fv:
                    b = v
                else:
                    if b > v:
                        vmin, vmax = v, b
                    else:
                        vmin, vmax = b, v
                    b = vmax if vmax > vmin + 50.0 else vmax + log(exp(vmin - vmax) + 1.0)
            B[pos] = b
        z = A[n]
        for i in range(len(LP)):
            expected[LV[i]] += f * exp(A[LP[i]] + LS[i] + B[LE[i]] - z)
    return expected


def _sentence_viterbi(LP, LE, LS, n: int) -> list[int]:
    """Lattice::viterbi on a sentence's nodes (node indices of the best path)."""
    k = len(LP)
    back = [0.0] * k
    prev = [-1] * k
    ends: list[list[int]] = [[] for _ in range(n + 1)]
    bos = -2
    ends[0].append(bos)
    for i in range(k):
        sr = LS[i]
        best = -1
        best_score = 0.0
        for li in ends[LP[i]]:
            sc = (0.0 if li == bos else back[li]) + sr
            if best == -1 or sc > best_score:
                best = li
                best_score = sc
        prev[i] = best
        back[i] = best_score
        ends[LE[i]].append(i)
    # The EOS node: the best of the nodes ending at n (its own score is 0.0).
    best = -1
    best_score = 0.0
    for li in ends[n]:
        sc = (0.0 if li == bos else back[li]) + 0.0
        if best == -1 or sc > best_score:
            best = li
            best_score = sc
    path = []
    node = best
    while node >= 0:
        path.append(node)
        node = prev[node]
    path.reverse()
    return path


def _m_step(pieces, expected) -> list[tuple[str, float]]:
    kept: list[tuple[str, float]] = []
    total = 0.0
    for i, (freq, (piece, _)) in enumerate(zip(expected, pieces)):
        if i == 0:
            kept.append((piece, _NAN))
            continue
        if freq < 0.5:
            continue
        kept.append((piece, freq))
        total += freq
    logsum = digamma(total)
    return [(p, digamma(c) - logsum) for p, c in kept]


def _prune(model: _Model, cands: _Candidates, pieces, sentences, vocab_size: int, shrinking_factor: float):
    n_pieces = len(pieces)
    always_keep = [True] * n_pieces
    alternatives: list[list[int]] = [[] for _ in range(n_pieces)]
    for i, (token, _) in enumerate(pieces):
        if i == 0:
            always_keep[i] = False
            continue
        lat = model.lattice(token)
        always_keep[i], alternatives[i] = verdict(_nbest2(lat), lat[0])

    vsum = 0.0
    freq = [0.0] * n_pieces
    inverted: list[list[int]] = [[] for _ in range(n_pieces)]
    cur = cands.current(model)
    for j, (s, count) in enumerate(sentences):
        LP, LE, LV, LS, _ = cands.nodes(j, len(s), cur, model)
        vsum += float(count)
        for node in _sentence_viterbi(LP, LE, LS, len(s)):
            k = LV[node]
            freq[k] += float(count)
            inverted[k].append(j)

    total = _fsum_lr(freq)
    logsum = _ln(total)
    # tokenizers multiplies by (number of pieces - 1) here, not by the alternatives' number.
    n_alt_minus_1 = float(n_pieces - 1)
    candidates: list[tuple[int, float]] = []
    new_pieces = [pieces[0]]
    for i in range(1, n_pieces):
        if freq[i] == 0.0 and not always_keep[i]:
            continue
        if not alternatives[i]:
            new_pieces.append(pieces[i])
            continue
        f = 0.0
        for j in inverted[i]:
            f += float(sentences[j][1])
        if f == 0.0 or f != f:
            continue
        f /= vsum
        logprob_sp = _ln(freq[i]) - logsum
        logsum_alt = _ln(total + freq[i] * n_alt_minus_1)
        logprob_alt = 0.0
        for a in alternatives[i]:
            logprob_alt += _ln(freq[a] + freq[i]) - logsum_alt
        loss = f * (logprob_sp - logprob_alt)
        if loss != loss:
            raise ArithmeticError("UnigramTrainer: NaN loss while pruning")
        candidates.append((i, loss))
    desired = (vocab_size * 11) // 10
    pruned_size = max(desired, int(n_pieces * shrinking_factor))
    candidates.sort(key=lambda c: c[1], reverse=True)
    for i, _ in candidates:
        if len(new_pieces) == pruned_size:
            break
        new_pieces.append(pieces[i])
    return new_pieces


def _finalize(model_pieces, min_score: float, required: list[str], vocab_size: int, special_tokens: list[str],
              unk_token: str | None) -> UnigramTrained:
    penalty = 0.0
    pieces: list[tuple[str, float]] = []
    inserted = {"<UNK>"}
    existing = dict(model_pieces)
    for c in required:
        sc = existing.get(c)
        inserted.add(c)
        if sc is not None:
            pieces.append((c, sc))
        else:
            pieces.append((c, min_score + penalty))
            penalty += 0.0001
    if unk_token is not None:
        unk_id = next((i for i, t in enumerate(special_tokens) if t == unk_token), None)
        need_add_unk = unk_id is None
        if need_add_unk:
            unk_id = 0
    else:
        unk_id, need_add_unk = None, False
    limit = vocab_size - len(special_tokens) - (1 if need_add_unk else 0)
    if limit < 0:
        limit += 1 << 64  # usize arithmetic: a negative limit wraps around (and never stops)
    for token, sc in model_pieces:
        if token in inserted:
            continue
        inserted.add(token)
        pieces.append((token, 0.0 if sc != sc else sc))
        if len(pieces) == limit:
            break
    pieces.sort(key=lambda p: p[1], reverse=True)
    specials = [(t, 0.0) for t in special_tokens]
    if need_add_unk:
        specials.insert(0, (unk_token, 0.0))
    return UnigramTrained(specials + pieces, unk_id, list(special_tokens))


def _required_order(required: set[str], model_pieces, reference_pieces) -> list[str]:
    if reference_pieces is None:
        return sorted(required)
    rank: dict[str, int] = {}
    for i, p in enumerate(reference_pieces):
        rank.setdefault(p, i)
    present = set(p for p, _ in model_pieces)
    far = len(rank)
    # Ties in score keep this order (ascending); penalties grow along it, and a higher score
    # sorts first, so the characters the model lost go in descending reference order.
    kept = sorted((c for c in required if c in present), key=lambda c: (rank.get(c, far), c))
    lost = sorted((c for c in required if c not in present), key=lambda c: (-rank.get(c, far), c))
    return kept + lost


def train_unigram(
    word_counts: Mapping[str, int],
    *,
    vocab_size: int = 8000,
    n_sub_iterations: int = 2,
    shrinking_factor: float = 0.75,
    special_tokens: Iterable[str] = (),
    initial_alphabet: Iterable[str] = (),
    unk_token: str | None = None,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    progress: Callable[[dict], None] | None = None,
    reference_pieces: Iterable[str] | None = None,
) -> UnigramTrained:
    """Train as `tokenizers.trainers.UnigramTrainer(...)` does on these word counts.

    Raises ValueError("The vocabulary is not large enough to contain all chars") as
    `tokenizers` does when `vocab_size` is below the number of distinct characters.
    `progress(info)` gets ``{"phase": "seed"|"em"|"prune", "pieces": n}`` as training goes.
    """
    from .._gc import gc_paused

    if not isinstance(vocab_size, int) or vocab_size < 0:
        raise ValueError(f"vocab_size must be a non-negative integer, not {vocab_size!r}")
    if not isinstance(n_sub_iterations, int) or n_sub_iterations < 0:
        raise ValueError(f"n_sub_iterations must be a non-negative integer, not {n_sub_iterations!r}")
    if not isinstance(max_piece_length, int) or max_piece_length < 0:
        raise ValueError(f"max_piece_length must be a non-negative integer, not {max_piece_length!r}")
    if not isinstance(seed_size, int) or seed_size < 0:
        raise ValueError(f"seed_size must be a non-negative integer, not {seed_size!r}")
    shrinking_factor = float(shrinking_factor)
    if not 0.0 < shrinking_factor < 1.0:
        # tokenizers loops forever at >= 1 and stops nowhere sensible at <= 0
        raise ValueError(f"shrinking_factor must be between 0 and 1 (exclusive), not {shrinking_factor!r}")
    special_tokens = list(special_tokens)
    initial_alphabet = list(initial_alphabet)
    for c in initial_alphabet:
        if not isinstance(c, str) or len(c) != 1:
            raise ValueError(f"initial_alphabet holds single characters, not {c!r}")
    sentences = []
    for s, n in word_counts.items():
        n = int(n)
        if n < 0 or n >= 1 << 32:
            raise ValueError(f"a word count must fit tokenizers' u32, not {n} (for {s!r})")
        sentences.append((s, n))

    with gc_paused():
        pieces = [("<UNK>", _NAN)] + seed_pieces(sentences, max_piece_length, seed_size)
        if progress is not None:
            progress({"phase": "seed", "pieces": len(pieces)})
        desired = (vocab_size * 11) // 10
        required = set(c for s, _ in sentences for c in s)
        required.update(initial_alphabet)
        if len(required) > vocab_size:
            raise ValueError("The vocabulary is not large enough to contain all chars")
        model = _Model(pieces)
        cands = _Candidates(pieces, sentences, model.max_len)
        while True:
            for _ in range(n_sub_iterations):
                expected = _e_step(model, cands, sentences)
                pieces = _m_step(pieces, expected)
                model = _Model(pieces)
                if progress is not None:
                    progress({"phase": "em", "pieces": len(pieces)})
            if len(pieces) <= desired:
                break
            pieces = _prune(model, cands, pieces, sentences, vocab_size, shrinking_factor)
            model = _Model(pieces)
            if progress is not None:
                progress({"phase": "prune", "pieces": len(pieces)})
        order = _required_order(required, pieces, None if reference_pieces is None else list(reference_pieces))
        return _finalize(pieces, model.min_score, order, vocab_size, special_tokens, unk_token)
