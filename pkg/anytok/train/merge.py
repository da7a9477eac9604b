"""The merge loop of BPE training: distinct words with counts in, merges out.

This is the algorithm of Hugging Face's `BpeTrainer` and of `rustbpe` (both descend from the
same design), written so that Python spends its time in C-level builtins:

* a symbol is a token id, and a word is a `str` whose characters are `chr(id)` -- so merging a
  pair in a word is `str.replace` (left to right, non-overlapping, exactly the scan both
  references do), finding it is `str.find`, and a pair is the 2-character string
  `chr(left) + chr(right)`, whose string order is the (left id, right id) order both
  references break ties with;
* `pair_counts` maps a pair to its count over all words (count of the word times occurrences;
  Python ints, so nothing overflows), `where` maps a pair to the words it was seen in;
* a lazy max-heap of `(-count, pair, seq, words)` entries (`words`: a list of word indices, or
  one index alone): an entry whose count is out of date
  is refreshed when it reaches the top and pushed back, so each merge pops the pair with the
  highest current count, ties to the smallest (left, right).

Merging pair (a, b) into z at a site ``... x a b y ...`` of a word with count c changes the
counts of (x, a) and (b, y) by -c and of (x, z) and (z, y) by +c, where x is the symbol
before the site *after* the sites to its left were merged (so it may be z) and y the symbol
after it before merging (so it may be the `a` of the next site).  Pairs that gain count are
pushed as new heap entries holding the words where they gained.  Only these local changes are
made, so a merge costs time in proportion to the words that hold the pair, not to the corpus.

The two references differ in a few details, reproduced here by the `hf` flag:

* rustbpe also subtracts the merged pair's own occurrences; HF does not (its count is left as
  it was, which matters only when the pair is formed again later -- see below);
* a new token always gets the next id in rustbpe; in HF, a merge whose string already exists
  (``"ab" + "c"`` after ``"a" + "bc"``) reuses that id, does not grow the vocabulary, and the
  pairs it forms may then already have heap entries -- each entry is processed on its own,
  as HF does;
* HF stops when the vocabulary reaches its size, at an empty heap, or at the first pair whose
  count is below `min_frequency`; rustbpe after `vocab_size - 256` merges or at an empty heap
  (it drops pairs whose count fell to zero);
* HF's `max_token_length=L` only keeps new pairs whose two tokens have fewer than L characters
  together (the pairs of the words as first split are all counted), so merged tokens have at
  most max(2, L - 1) characters;
* HF refreshes a stale entry with the count cast to u64 (a negative count, which only the
  max_token_length rule can produce, becomes huge); rustbpe drops it.
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque
from itertools import chain, repeat
from operator import add, sub
from typing import Callable

__all__ = ["learn_merges", "word_pairs"]

_U64 = 1 << 64


def word_pairs(word: str):
    """The adjacent pairs of a word, as 2-character strings (C-level: map over two strs)."""
    return map(add, word, word[1:])


def _initial_counts(words: list[str], counts: list[int]) -> tuple[dict[str, int], dict[str, list[int]]]:
    """pair -> count, and pair -> indices of the words holding it (in order; an index once per
    occurrence: the merge loop's second visit of a word finds the pair gone and skips it)."""
    # Every step is a C-level map over all the words' pairs: no Python loop per pair or word.
    where: dict[str, list[int]] = defaultdict(list)
    deque(map(list.append, map(where.__getitem__, chain.from_iterable(map(word_pairs, words))),
              chain.from_iterable(map(repeat, range(len(words)), map(sub, map(len, words), repeat(1))))), 0)
    # A pair's count: the counts of the words it occurs in, once per occurrence.
    pair_counts: dict[str, int] = defaultdict(int, zip(where, map(sum, map(map, repeat(counts.__getitem__),
                                                                          where.values()))))
    return pair_counts, where


def learn_merges(
    words: list[str],
    counts: list[int],
    *,
    hf: bool,
    new_token: Callable[[str, str], int],
    done: Callable[[], bool],
    min_frequency: int = 0,
    max_token_length: int | None = None,
    token_len: list[int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[int, int, int]]:
    """Learn merges from distinct words; return [(left id, right id, new id), ...] in order.

    `words` (modified in place) hold one character `chr(id)` per symbol, `counts` their counts.
    `new_token(a, b)` returns the id of the token that merging the symbols `a` and `b` (given
    as characters) makes, recording it if it is new; `done()` says whether to stop before the
    next merge.  `token_len[id]`, the length in characters of each token (grown by
    `new_token`), is needed only with `max_token_length`.  `progress(n_merges)` is called after
    each merge.
    """
    pair_counts, where = _initial_counts(words, counts)
    heap = [(-pair_counts[p], p, 0, pos) for p, pos in where.items() if pair_counts[p] > 0]
    heapq.heapify(heap)
    del where
    heappush, heappop = heapq.heappush, heapq.heappop
    pc_get = pair_counts.get
    limit = max_token_length if hf and max_token_length is not None else None
    merges: list[tuple[int, int, int]] = []
    seq = 1
    while heap and not done():
        negc, pair, _, pos = heappop(heap)
        count = pair_counts[pair]
        if hf:
            if -negc != (count if count >= 0 else count + _U64):
                heappush(heap, (-(count if count >= 0 else count + _U64), pair, seq, pos))
                seq += 1
                continue
            if count < 0:
                count += _U64
            if count < 1 or min_frequency > count:
                break
        else:
            if count <= 0:
                continue
            if -negc != count:
                heappush(heap, (-count, pair, seq, pos))
                seq += 1
                continue
            if min_frequency > count:
                break
        if pos.__class__ is int:
            pos = (pos,)
        a = pair[0]
        b = pair[1]
        z = new_token(a, b)
        zc = chr(z)
        merges.append((ord(a), ord(b), z))
        gained: dict[str, list[int]] = defaultdict(list)
        removed = 0  # occurrences of the pair merged, times word counts
        if limit is None:
            removed = _merge_words(words, counts, pos, pair, a, b, zc, pair_counts, gained)
        else:
            removed = _merge_words_limited(
                words, counts, pos, pair, a, b, zc, pair_counts, gained, token_len, limit
            )
        if not hf:
            pair_counts[pair] -= removed
        for p, ws in gained.items():
            c = pc_get(p, 0)
            if c > 0:
                # Most pairs gain in one word: the entry holds its index, not a list (memory).
                heappush(heap, (-c, p, seq, ws if len(ws) > 1 else ws[0]))
                seq += 1
        if progress is not None:
            progress(len(merges))
    return merges


def _merge_words(words, counts, pos, pair, a, b, zc, pair_counts, gained) -> int:
    """Merge `pair` into `zc` in the words `pos`; update counts; return the merged count.

    Without a length limit every adjacent pair of every word is counted, so the pairs that
    lose count are in `pair_counts` (a defaultdict) already.
    """
    removed = 0
    for i in pos:
        w = words[i]
        j = w.find(pair)
        if j < 0:
            continue
        nw = w.replace(pair, zc)
        words[i] = nw
        c = counts[i]
        n = len(w)
        if n - len(nw) == 1:
            # One site (the usual case): the pairs are slices of the old and the new word.
            if j:
                pair_counts[w[j - 1 : j + 1]] -= c
                p = nw[j - 1 : j + 1]
                pair_counts[p] += c
                gained[p].append(i)
            if j + 2 < n:
                pair_counts[w[j + 1 : j + 3]] -= c
                p = nw[j : j + 2]
                pair_counts[p] += c
                gained[p].append(i)
            removed += c
            continue
        end = -1  # where the previous site ended
        while j >= 0:
            if j:
                x = zc if j == end else w[j - 1]
                pair_counts[x + a] -= c
                p = x + zc
                pair_counts[p] += c
                gained[p].append(i)
            end = j + 2
            if end < n:
                y = w[end]
                pair_counts[b + y] -= c
                p = zc + y
                pair_counts[p] += c
                gained[p].append(i)
            removed += c
            j = w.find(pair, end)
    return removed


def _merge_words_limited(words, counts, pos, pair, a, b, zc, pair_counts, gained, token_len, limit) -> int:
    """As _merge_words, with HF's max_token_length rule for the pairs that gain."""
    pc_get = pair_counts.get
    zlen = token_len[ord(zc)]
    removed = 0
    for i in pos:
        w = words[i]
        j = w.find(pair)
        if j < 0:
            continue
        words[i] = w.replace(pair, zc)
        c = counts[i]
        n = len(w)
        end = -1
        while j >= 0:
            if j:
                x = zc if j == end else w[j - 1]
                p = x + a
                pair_counts[p] = pc_get(p, 0) - c
                if token_len[ord(x)] + zlen < limit:
                    p = x + zc
                    pair_counts[p] = pc_get(p, 0) + c
                    gained[p].append(i)
            end = j + 2
            if end < n:
                y = w[end]
                p = b + y
                pair_counts[p] = pc_get(p, 0) - c
                if token_len[ord(y)] + zlen < limit:
                    p = zc + y
                    pair_counts[p] = pc_get(p, 0) + c
                    gained[p].append(i)
            removed += c
            j = w.find(pair, end)
    return removed
