"""`tokenizers`' ParityBpeTrainer (parity-aware BPE) on per-language word counts.

Data flow: one word-count mapping per language (plus, optionally, one per language of dev
data) -> the vocabulary's start as BpeTrainer builds it (special tokens; the alphabet counted over
the training *and* dev words; the prefixed/suffixed spellings, language after language) -> each
language's words as strings of `chr(id)`, with that language's own pair counts, word index and
lazy max-heap -> the merge loop: pick a language (the pooled counts for the first
`global_merges` merges; then the language whose dev set -- else training set -- is longest in
tokens, or with `ratio` the one whose compression rate divided by its ratio is lowest; the
"window" variant caps each language's share of the last `window_size` picks), take that
language's most frequent pair, merge it in the words of *every* language and in the dev words,
update the lengths -> `ParityTrained` (vocab, merges), what `tokenizers` 0.23.3 puts in the
`BPE` model it builds.

Unlike BpeTrainer, equal counts go to the pair whose (left, right) token strings are *greatest*
(tokenizers compares the strings, not the ids), the merged pair's count is reset to zero, the
loop counts merges (`num_merges`, or with `total_symbols` the whole vocabulary), and a language
whose best pair is rarer than `min_frequency` (or which has none) is set aside rather than
ending the training.  As in `bpe_hf`, what tokenizers draws from randomly seeded hash maps (ids of
the prefixed/suffixed spellings, which of equally rare characters `limit_alphabet` drops) follows
first-seen order here, or `reference_ids`.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import Mapping, Sequence

__all__ = ["ParityTrained", "train_parity_bpe"]

_NO_LIMIT = 1 << 64


class ParityTrained:
    """The BPE model ParityBpeTrainer builds: `vocab` (token -> id, in id order), `merges`
    (pairs of token strings in rank order, each pair once at its last rank) and the
    prefix/suffix the model takes over; `special_tokens` as given (deduplicated)."""

    def __init__(self, vocab, merges, continuing_subword_prefix, end_of_word_suffix, special_tokens):
        self.vocab = vocab
        self.merges = merges
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.special_tokens = special_tokens

    def __repr__(self) -> str:
        return f"<ParityTrained vocab={len(self.vocab)} merges={len(self.merges)}>"


class _Desc:
    """A heap key ordered backwards: heapq pops the smallest, tokenizers the greatest strings."""

    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def __lt__(self, other):
        return other.k < self.k


def _check(n_langs, n_dev, ratio, variant, window_size, alpha):
    """tokenizers' checks, in its order (its messages)."""
    if n_langs == 0:
        raise ValueError("No language data has been fed")
    if ratio is not None and len(ratio) != n_langs:
        raise ValueError(f"ratio length ({len(ratio)}) does not match number of languages ({n_langs})")
    if n_dev and n_dev != n_langs:
        raise ValueError(f"dev_language_words length ({n_dev}) does not match number of languages ({n_langs})")
    if variant == "window":
        if window_size == 0:
            raise ValueError("window_size must be > 0 when variant is Window")
        if not math.isfinite(alpha) or alpha <= 0.0:
            raise ValueError(f"alpha must be a positive finite number when variant is Window (got {_rust_f64(alpha)})")
    if ratio is not None:
        for i, r in enumerate(ratio):
            if not math.isfinite(r) or r <= 0.0:
                raise ValueError(f"ratio[{i}] must be a positive finite number (got {_rust_f64(r)})")


def _rust_f64(x: float) -> str:
    """A float as Rust's `Display` writes it (never an exponent)."""
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "inf" if x > 0 else "-inf"
    if x == int(x):
        return ("-" if math.copysign(1.0, x) < 0 else "") + str(abs(int(x)))
    from decimal import Decimal

    return format(Decimal(repr(x)), "f")


def train_parity_bpe(
    languages: Sequence[Mapping[str, int]],
    dev_languages: Sequence[Mapping[str, int]] | None = None,
    *,
    num_merges: int = 32000,
    variant: str = "base",
    min_frequency: int = 0,
    ratio: Sequence[float] | None = None,
    global_merges: int = 0,
    window_size: int = 100,
    alpha: float = 2.0,
    total_symbols: bool = False,
    special_tokens: Sequence[str] = (),
    limit_alphabet: int | None = None,
    initial_alphabet: Sequence[str] = (),
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    max_token_length: int | None = None,
    reference_ids: Mapping[str, int] | None = None,
) -> ParityTrained:
    """Train as `tokenizers.trainers.ParityBpeTrainer(...)` does on these word counts.

    `languages[i]` maps each pre-token of language i's training text to its count;
    `dev_languages` (empty or None: no dev data) likewise for its dev text.  With `ratio`
    the dev data are not used for selection (only for the alphabet), as in tokenizers' core;
    its Python binding drops `ratio` when dev data are given.  Raises ValueError with
    tokenizers' message for an inconsistent configuration, and where tokenizers would loop
    forever (a language that must be picked and has nothing left to merge).
    """
    from .._gc import gc_paused
    from .bpe_hf import _alphabet, _check_options, _symbolize, join_pair

    languages = list(languages)
    dev_languages = list(dev_languages or ())
    special_tokens = list(special_tokens)
    initial_alphabet = list(initial_alphabet)
    ratio = None if ratio is None else [float(r) for r in ratio]
    if variant not in ("base", "window"):
        raise ValueError(f"Unknown variant '{variant}'. Use 'base' or 'window'.")
    if not isinstance(num_merges, int) or num_merges < 0:
        raise ValueError(f"num_merges must be a non-negative integer, not {num_merges!r}")
    for name, v in (("global_merges", global_merges), ("window_size", window_size)):
        if not isinstance(v, int) or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, not {v!r}")
    prefix, suffix = continuing_subword_prefix, end_of_word_suffix
    _check_options(0, min_frequency, limit_alphabet, max_token_length, initial_alphabet, prefix, suffix)
    _check(len(languages), len(dev_languages), ratio, variant, window_size, float(alpha))
    n_langs = len(languages)

    with gc_paused():
        token_strs: list[str] = []
        ids: dict[str, int] = {}
        for s in special_tokens:
            if s not in ids:
                ids[s] = len(token_strs)
                token_strs.append(s)
        # The alphabet counts characters over every language's training and dev words.
        pooled: dict[str, int] = {}
        get = pooled.get
        for wc in (*languages, *dev_languages):
            for w, n in wc.items():
                pooled[w] = get(w, 0) + n
        for c in _alphabet(pooled, initial_alphabet, limit_alphabet, reference_ids):
            if c not in ids:
                ids[c] = len(token_strs)
                token_strs.append(c)
        del pooled

        words_of: list[list[str]] = []
        counts_of: list[list[int]] = []
        for wc in languages:
            words, counts = _symbolize(wc, ids, token_strs, prefix, suffix, reference_ids)
            words_of.append(words)
            counts_of.append(counts)
        token_len = [1] * len(token_strs)

        keys: dict[str, _Desc] = {}

        def key(p: str) -> _Desc:
            k = keys.get(p)
            if k is None:
                k = keys[p] = _Desc((token_strs[ord(p[0])], token_strs[ord(p[1])]))
            return k

        pcs: list[dict[str, int]] = []
        wheres: list[dict[str, set[int]]] = []
        heaps: list[list] = []
        for words, counts in zip(words_of, counts_of):
            pc: dict[str, int] = {}
            where: dict[str, set[int]] = {}
            pget = pc.get
            for i, (w, c) in enumerate(zip(words, counts)):
                for p in map(str.__add__, w, w[1:]):
                    pc[p] = pget(p, 0) + c
                    s = where.get(p)
                    if s is None:
                        where[p] = {i}
                    else:
                        s.add(i)
            heap = [(-c, key(p), p) for p, c in pc.items() if c > 0]
            heapq.heapify(heap)
            pcs.append(pc)
            wheres.append(where)
            heaps.append(heap)

        want_global = global_merges > 0
        gpc: dict[str, int] = {}
        gheap: list = []
        if want_global:
            for pc in pcs:
                for p, c in pc.items():
                    if c > 0:
                        gpc[p] = gpc.get(p, 0) + c
            gheap = [(-c, key(p), p) for p, c in gpc.items() if c > 0]
            heapq.heapify(gheap)

        # Lengths that drive the choice of language (see the module docstring).
        has_ratio = ratio is not None
        has_dev = bool(dev_languages)
        lengths = [0] * n_langs
        init_f: list[float] = []
        cur_f: list[float] = []
        dev_vocab: dict[str, list[int]] = {}
        dev_where: dict[str, set[str]] = {}
        if has_ratio:
            for words, counts in zip(words_of, counts_of):
                t = float(sum(len(w) * c for w, c in zip(words, counts)))
                init_f.append(t)
                cur_f.append(t)
        elif has_dev:
            for lang, wc in enumerate(dev_languages):
                for w, n in wc.items():
                    if not n:
                        continue
                    seq = _dev_symbols(w, ids, prefix, suffix)
                    if seq:
                        f = dev_vocab.get(seq)
                        if f is None:
                            f = dev_vocab[seq] = [0] * n_langs
                        f[lang] += n
            for seq, f in dev_vocab.items():
                for lang in range(n_langs):
                    lengths[lang] += len(seq) * f[lang]
                _index_dev(dev_where, seq)
        else:
            for lang, (words, counts) in enumerate(zip(words_of, counts_of)):
                lengths[lang] = sum(len(w) * c for w, c in zip(words, counts))

        threshold = float(alpha) / n_langs
        window: deque[int] = deque()
        target = max(0, num_merges - len(token_strs)) if total_symbols else num_merges
        limit = _NO_LIMIT if max_token_length is None else max_token_length

        merges: list[tuple[int, int, int]] = []
        exhausted: set[int] = set()
        stalled: set[tuple] = set()
        while len(merges) < target:
            if len(exhausted) >= n_langs:
                break
            if len(merges) < global_merges:
                lang = -1
            else:
                lang = _select(variant, has_ratio, ratio, init_f, cur_f, lengths, exhausted, window,
                               threshold, window_size)
            best = _pop_best(gheap, gpc) if lang < 0 else _pop_best(heaps[lang], pcs[lang])
            if best is None or best[1] < min_frequency:
                if lang < 0:
                    break
                state = (len(exhausted), tuple(window))
                exhausted.add(lang)
                if len(exhausted) == state[0]:
                    # Nothing changed but the window: tokenizers would go round forever once
                    # it meets a state again.
                    if state in stalled or variant == "base":
                        raise ValueError(
                            f"parity-aware BPE cannot go on after {len(merges)} merges: language {lang} is picked "
                            "and has no pair left to merge (tokenizers would loop forever here; a language "
                            "without training text under `ratio` does this)")
                    stalled.add(state)
                continue
            stalled.clear()
            pair = best[0]
            a, b = pair[0], pair[1]
            z = join_pair(a, b, ids, token_strs, token_len, prefix)
            zc = chr(z)
            merges.append((ord(a), ord(b), z))

            changed_all: set[str] = set()
            for i in range(n_langs):
                pc = pcs[i]
                reduction, changed = _apply_merge(words_of[i], counts_of[i], pc, wheres[i], pair, a, b, zc,
                                                  token_len, limit)
                heap = heaps[i]
                for p in changed:
                    c = pc.get(p, 0)
                    if c > 0:
                        heapq.heappush(heap, (-c, key(p), p))
                if want_global:
                    changed_all |= changed
                if has_ratio:
                    cur_f[i] -= float(reduction)
                elif not has_dev:
                    lengths[i] -= reduction
            if want_global:
                changed_all.add(pair)
                for p in changed_all:
                    total = 0
                    for pc in pcs:
                        total += pc.get(p, 0)
                    if total < 0:
                        total = 0
                    gpc[p] = total
                    if total > 0:
                        heapq.heappush(gheap, (-total, key(p), p))
            if has_dev and not has_ratio:
                change = _merge_dev(dev_vocab, dev_where, pair, zc, n_langs)
                for i in range(n_langs):
                    lengths[i] -= change[i]

    last: dict[tuple[int, int], int] = {}
    for rank, (a, b, _) in enumerate(merges):
        last[(a, b)] = rank
    pairs = [(token_strs[a], token_strs[b]) for (a, b), _ in sorted(last.items(), key=lambda kv: kv[1])]
    vocab = dict(sorted(ids.items(), key=lambda kv: kv[1]))
    return ParityTrained(vocab, pairs, prefix, suffix, list(dict.fromkeys(special_tokens)))


def _pop_best(heap: list, pc: dict[str, int]):
    """(pair, count) with the highest current count (ties: greatest strings), refreshing stale
    entries and dropping pairs whose count fell to zero; None when none is left."""
    heappop, heappush = heapq.heappop, heapq.heappush
    while heap:
        negc, k, p = heappop(heap)
        c = pc.get(p, 0)
        if c <= 0:
            continue
        if c != -negc:
            heappush(heap, (-c, k, p))
            continue
        return p, c
    return None


def _select(variant, has_ratio, ratio, init_f, cur_f, lengths, exhausted, window, threshold, window_size) -> int:
    """The language tokenizers picks for the next merge."""
    n = len(lengths)
    if has_ratio:
        adjusted = [(i0 / c) / r if c else _div0(i0) / r for i0, c, r in zip(init_f, cur_f, ratio)]
        if variant == "base":
            best, best_val = 0, math.inf
            for i, v in enumerate(adjusted):
                if i not in exhausted and v < best_val:
                    best, best_val = i, v
            return best
        values = [-v for v in adjusted]
        for i in exhausted:
            values[i] = -math.inf
        floor = -math.inf
    else:
        if variant == "base":
            best, best_val = 0, None
            for i, v in enumerate(lengths):
                if i not in exhausted and (best_val is None or v > best_val):
                    best, best_val = i, v
            return best
        values = list(lengths)
        floor = None  # i64::MIN: below every length
        for i in exhausted:
            values[i] = floor
    mask = [True] * n
    while True:
        best, best_val = 0, floor
        for i in range(n):
            v = values[i]
            if mask[i] and v is not None and (best_val is None or v > best_val):
                best, best_val = i, v
        if window.count(best) / window_size <= threshold:
            break
        mask[best] = False
        if not any(mask):
            break
    window.append(best)
    if len(window) > window_size:
        window.popleft()
    return best


def _div0(x: float) -> float:
    """x / 0.0 as IEEE 754 (Rust) gives it: inf, -inf or NaN."""
    if x != x or x == 0:
        return math.nan
    return math.inf if x > 0 else -math.inf


def _apply_merge(words, counts, pc, where, pair, a, b, zc, token_len, limit):
    """Merge `pair` into `zc` in one language's words; update its pair counts and word index.
    Returns (symbols saved, weighted by word counts; the pairs whose count changed)."""
    pos = where.pop(pair, None)
    if pos is None:
        return 0, set()
    changed: set[str] = set()
    add = changed.add
    pget = pc.get
    zlen = token_len[ord(zc)]
    reduction = 0
    for i in pos:
        w = words[i]
        j = w.find(pair)
        if j < 0:
            continue
        nw = w.replace(pair, zc)
        words[i] = nw
        c = counts[i]
        n = len(w)
        reduction += (n - len(nw)) * c
        end = -1
        while j >= 0:
            if j:
                x = zc if j == end else w[j - 1]
                p = x + a
                pc[p] = pget(p, 0) - c
                add(p)
                if token_len[ord(x)] + zlen < limit:
                    p = x + zc
                    pc[p] = pget(p, 0) + c
                    add(p)
                    s = where.get(p)
                    if s is None:
                        where[p] = {i}
                    else:
                        s.add(i)
            end = j + 2
            if end < n:
                y = w[end]
                p = b + y
                pc[p] = pget(p, 0) - c
                add(p)
                if token_len[ord(y)] + zlen < limit:
                    p = zc + y
                    pc[p] = pget(p, 0) + c
                    add(p)
                    s = where.get(p)
                    if s is None:
                        where[p] = {i}
                    else:
                        s.add(i)
            j = w.find(pair, end)
    pc[pair] = 0
    return reduction, changed


def _dev_symbols(word: str, ids: Mapping[str, int], prefix, suffix) -> str:
    """A dev word as chr(id) symbols, or "" when one of its characters (as spelled at its place)
    is not in the vocabulary: such words are left out."""
    out = []
    last = len(word) - 1
    for i, c in enumerate(word):
        if c not in ids:
            return ""
        s = c
        if i > 0 and prefix is not None:
            s = prefix + s
        if i == last and suffix is not None:
            s = s + suffix
        t = ids.get(s)
        if t is None:
            return ""
        out.append(chr(t))
    return "".join(out)


def _index_dev(dev_where: dict[str, set[str]], seq: str) -> None:
    for p in map(str.__add__, seq, seq[1:]):
        s = dev_where.get(p)
        if s is None:
            dev_where[p] = {seq}
        else:
            s.add(seq)


def _merge_dev(dev_vocab, dev_where, pair, zc, n_langs) -> list[int]:
    """Merge `pair` in the dev words; return each language's length saved."""
    change = [0] * n_langs
    holders = dev_where.pop(pair, None)
    if not holders:
        return change
    # The index keeps words that have since been rewritten: only those still there and holding
    # the pair count.  Their order matters only when a merged word lands on an existing one
    # (which it then replaces); tokenizers walks a randomly seeded hash map there, this sorts.
    for old in sorted(w for w in holders if pair in w and w in dev_vocab):
        freq = dev_vocab.pop(old)
        new = old.replace(pair, zc)
        saved = len(old) - len(new)
        for i in range(n_langs):
            change[i] += saved * freq[i]
        dev_vocab[new] = freq
        _index_dev(dev_where, new)
    return change
