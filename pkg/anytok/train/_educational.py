"""BPE training written plainly: the algorithm of `merge.py` without its speed tricks.

Slow (a pure-Python loop over every symbol of every word a merge touches), but each line says
what HF's `BpeTrainer` or `rustbpe` does; the tests check that `merge.learn_merges` gives the
very same merges.

```
>>> learn([[1, 2, 3], [1, 2]], [2, 1], n_merges=2, first_id=4, hf=False)
[(1, 2, 4), (4, 3, 5)]
```
"""

from __future__ import annotations

import heapq


def learn(words: list[list[int]], counts: list[int], *, n_merges: int, first_id: int, hf: bool,
          min_frequency: int = 0) -> list[tuple[int, int, int]]:
    """Merges (left, right, new id) learned from words given as lists of ids.

    Each new token gets the next id (ids are never reused here: give the HF style a corpus
    where no two merges spell the same string, or use `merge.learn_merges`).
    """
    words = [list(w) for w in words]
    pair_counts: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for i, w in enumerate(words):
        for pair in zip(w, w[1:]):
            pair_counts[pair] = pair_counts.get(pair, 0) + counts[i]
            where.setdefault(pair, set()).add(i)
    # Max-heap on count, then min on pair: store (-count, pair).
    heap = [(-pair_counts[p], p, sorted(pos)) for p, pos in where.items()]
    heapq.heapify(heap)
    merges = []
    while heap and len(merges) < n_merges:
        neg, pair, pos = heapq.heappop(heap)
        count = pair_counts[pair]
        if count != -neg:  # out of date: put it back with its current count
            if count > 0 or hf:
                heapq.heappush(heap, (-count, pair, pos))
            continue
        if count < 1 or count < min_frequency:
            break
        new = first_id + len(merges)
        merges.append((pair[0], pair[1], new))
        gained: dict[tuple[int, int], set[int]] = {}
        for i in pos:
            w, c = words[i], counts[i]
            out: list[int] = []
            k = 0
            while k < len(w):
                if k + 1 < len(w) and (w[k], w[k + 1]) == pair:
                    if out:  # the symbol before, as merged so far
                        _add(pair_counts, (out[-1], pair[0]), -c)
                        _add(pair_counts, (out[-1], new), c)
                        gained.setdefault((out[-1], new), set()).add(i)
                    if not hf:
                        _add(pair_counts, pair, -c)
                    if k + 2 < len(w):  # the symbol after, as it was
                        _add(pair_counts, (pair[1], w[k + 2]), -c)
                        _add(pair_counts, (new, w[k + 2]), c)
                        gained.setdefault((new, w[k + 2]), set()).add(i)
                    out.append(new)
                    k += 2
                else:
                    out.append(w[k])
                    k += 1
            words[i] = out
        for p, ws in gained.items():
            if pair_counts[p] > 0:
                heapq.heappush(heap, (-pair_counts[p], p, sorted(ws)))
    return merges


def _add(counts: dict, pair: tuple[int, int], n: int) -> None:
    counts[pair] = counts.get(pair, 0) + n
