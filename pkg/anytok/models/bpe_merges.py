"""BPE driven by an ordered merge list, exactly as Hugging Face tokenizers' `BPE` model.

The rule (`Word::merge_all` in the Rust crate): start from one symbol per character (its
vocabulary id; see `_symbols` for the continuation prefix, end-of-word suffix, byte fallback and
unk); repeatedly merge the adjacent pair of symbols that comes *first in the merge list*, the
leftmost one on a tie, into the token the merge names; stop when no adjacent pair is a merge.

Pairs are ranked by their place in the merge list, never by the rank of the token they make: a
token reachable by several pairs (say `abc` from `ab c` and from `a bc`) is made by whichever
of those pairs comes first in the list *and is present*, which a token-rank rule gets wrong.
The Rust crate keeps a heap of (rank, position) candidates and drops a popped candidate whose
pair has changed since (it compares the id the merge would make; distinct strings have distinct
ids, so that is the same test); taking the lowest-ranked, leftmost present pair each time is the
same sequence of merges.  Two implementations of it:

* `_merge_list`: lists of symbols and of pair keys; each step is a C-level `min` + `index`.
  O(n^2), the smallest constant: used for short words.
* `_merge_heap`: linked list + binary heap with lazy deletion, O(n log n), for long words.

A pair (a, b) is looked up as one int key `a * K + b`; its value `rank * 2**20 + new_id` sorts
by rank, and the low bits give the merged token.

Long words of byte-level models (Chinese and Japanese text: a run of letters is one word of
three symbols a character) are first cut at character boundaries that no token of the
vocabulary spans, with the segmenter of anytok's tiktoken encoder (`anytok.segment`): a merge
makes a token, so none crosses such a boundary, and the parts are merged -- and cached --
independently.  The segmenter is built once a few thousand characters of long words have
been merged whole (it takes a moment), so short texts do not pay for it.

Words of CUT_MIN characters or more are first cut before each "▁" (or " ") that no token of
the vocabulary can span: a merge never joins symbols across such a cut, so the parts are merged
independently -- and cached, as words are.  SentencePiece-style models see long "words": Llama
2's pipeline has no pre-tokenizer (a whole split is one word), and Gemma 3's splits on " " after
its normalizer has turned every space into "▁" (a whole line is one word, as added tokens split
at newlines).  Cut into words, most parts are cache hits.
"""

from __future__ import annotations

import heapq
import re
from typing import Iterable

from .vocab import VocabLookup, ids_table

__all__ = ["BPEMerges"]

_NO = 1 << 62
_ID_BITS = 20
_ID_MASK = (1 << _ID_BITS) - 1
LIST_MAX = 48  # symbols; longer words use the heap merge
CUT_MIN = 16  # characters; longer words are cut at word boundaries first (cheap; parts are cached)
SEGMENT_MIN = 7  # symbols; from this length words of byte-level models are segmented
SEGMENT_START = 4000  # symbols of such words merged whole before the segmenter is built
_SEP = "\ud800"  # the segmenter's separator between words (anytok.segment)
CACHE_SIZE = 1 << 16


class BPEMerges(VocabLookup):
    """Hugging Face `BPE` model (dropout unsupported: it is random)."""

    kind = "BPE"

    def __init__(
        self,
        vocab: dict[str, int],
        merges: Iterable[tuple[str, str]],
        *,
        unk_token: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        ignore_merges: bool = False,
        merge_ids: list[int] | None = None,
        merge_made: list[int] | None = None,
    ):
        """`merges` as (left, right) token pairs; or, with `merges=None`, `merge_ids`: the ids
        of each merge's two tokens, flattened (the form anytok's files store), and optionally
        `merge_made`, the id of the token each merge makes (when the caller has it already)."""
        self.vocab = dict(vocab)
        self._merges = None if merges is None else [tuple(m) for m in merges]
        self._merge_ids = merge_ids
        self.unk_token = unk_token
        self.fuse_unk = bool(fuse_unk)
        self.byte_fallback = bool(byte_fallback)
        self.continuing_subword_prefix = continuing_subword_prefix or None
        self.end_of_word_suffix = end_of_word_suffix or None
        self.ignore_merges = bool(ignore_merges)
        size = max(self.vocab.values(), default=-1) + 1
        if size > _ID_MASK:
            raise ValueError(f"BPE vocabulary ids up to {size - 1} do not fit in {_ID_BITS} bits")
        self._ids = ids_table(self.vocab)
        self._k = size or 1
        k = self._k
        prefix_len = len(self.continuing_subword_prefix or "")
        vocab_get = self.vocab.get
        pairs: dict[int, int] = {}
        if self._merges is not None:
            for rank, (a, b) in enumerate(self._merges):
                a_id, b_id = vocab_get(a), vocab_get(b)
                new_id = vocab_get(a + b[prefix_len:])
                if a_id is None or b_id is None or new_id is None:
                    missing = a if a_id is None else b if b_id is None else a + b[prefix_len:]
                    raise ValueError(f"BPE merge {a!r} {b!r}: token {missing!r} is not in the vocabulary")
                pairs[a_id * k + b_id] = (rank << _ID_BITS) | new_id  # a repeated pair: the last wins, as in Rust
        else:
            ids = self._ids
            if merge_ids is None or len(merge_ids) % 2:
                raise ValueError("BPE: merges missing, or merge_ids of odd length")
            pairs = self._pairs_of_ids(merge_ids, size, prefix_len, merge_made)
        if pairs is None:  # a merge that names or makes no token: found and named here
            pairs = {}
            for rank, (a_id, b_id) in enumerate(zip(merge_ids[::2], merge_ids[1::2])):
                a = ids[a_id] if 0 <= a_id < size else None
                b = ids[b_id] if 0 <= b_id < size else None
                new_id = vocab_get(a + b[prefix_len:]) if a is not None and b is not None else None
                if new_id is None:
                    raise ValueError(f"BPE merge {rank} ({a_id}, {b_id}): names no token, or makes none")
                pairs[a_id * k + b_id] = (rank << _ID_BITS) | new_id
            raise AssertionError("BPE merge_ids: every merge was found valid on a second look")  # pragma: no cover
        self._pairs = pairs
        self._unk_id = vocab_get(unk_token) if unk_token is not None else None
        if unk_token is not None and self._unk_id is None:
            self._unk_id = -1  # Rust errors only when an unknown character shows up
        self._byte_ids = [vocab_get(f"<0x{b:02X}>") for b in range(256)] if self.byte_fallback else None
        self._cache: dict[str, list[int]] = {}
        self._cutter = self._make_cutter()
        # anytok.segment.Segmenter for byte-level vocabularies: None = not built yet, False =
        # not applicable; _segment_wait counts down the symbols merged before it is built.
        self._segmenter = None
        self._segment_wait = SEGMENT_START
        self._segment_cache: dict[str, list[int]] = {}

    def _pairs_of_ids(self, merge_ids: list[int], size: int, prefix_len: int,
                      merge_made: list[int] | None = None) -> dict[int, int] | None:
        """The pair table of merges given as ids, built with C-level map/zip over the ~10^5
        merges (a load's largest cost after reading the file); None when a merge names or makes
        no token (the caller's loop then names it).  `merge_made`: the tokens the merges make,
        from a caller that found them in this vocabulary already (anytok.gguf): then taken as
        they are, only their range checked."""
        if not merge_ids:
            return {}
        if min(merge_ids) < 0 or max(merge_ids) >= size:
            return None
        made = merge_made
        if made is not None and (len(made) * 2 != len(merge_ids) or min(made) < 0 or max(made) >= size):
            made = None
        if made is None:
            ids = self._ids
            left = list(map(ids.__getitem__, merge_ids[::2]))
            right = list(map(ids.__getitem__, merge_ids[1::2]))
            if None in left or None in right:
                return None
            if prefix_len:
                right = [b[prefix_len:] for b in right]
            made = list(map(self.vocab.get, map(str.__add__, left, right)))
            if None in made:
                return None
        k = self._k
        keys = [a * k + b for a, b in zip(merge_ids[::2], merge_ids[1::2])]
        return dict(zip(keys, [(rank << _ID_BITS) | t for rank, t in enumerate(made)]))

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merge list, as (left, right) token pairs (built on first use from merge_ids)."""
        if self._merges is None:
            ids, m = self._ids, self._merge_ids
            self._merges = [(ids[a], ids[b]) for a, b in zip(m[::2], m[1::2])]  # type: ignore[misc]
        return self._merges

    # ----------------------------------------------------------------------------------------
    def tokenize(self, piece: str) -> list[int]:
        """The ids of one pre-token."""
        if not piece:
            return []
        if self.ignore_merges:
            i = self.vocab.get(piece)
            if i is not None:
                return [i]
        cache = self._cache
        out = cache.get(piece)
        if out is not None:
            return out
        if len(piece) >= CUT_MIN and self._cutter is not None:
            out = []
            for part in self._cutter(piece):
                out += self._tokenize_part(part)
        else:
            out = self._word(piece)
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        cache[piece] = out
        return out

    def _tokenize_part(self, part: str) -> list[int]:
        cache = self._cache
        out = cache.get(part)
        if out is None:
            out = self._word(part)
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[part] = out
        return out

    def spans(self, piece: str) -> tuple[list[int], list[int]]:
        """The ids of one pre-token and the byte offsets the Rust crate gives their tokens: each
        symbol counts the UTF-8 bytes of the characters it stands for (a byte-fallback token
        one byte, an unk token the unknown characters it replaces), a merged token the sum of
        its symbols', and offsets are running sums of these lengths -- so a character dropped
        for want of an unk token counts nowhere, and the tokens after it start that many bytes
        earlier than their text.  Returns (ids, [start, end, start, end, ...]).  Merges with
        `_merge_heap` (no cutting, no cache): this is the rare path of token offsets."""
        if not piece:
            return [], []
        if self.ignore_merges:
            i = self.vocab.get(piece)
            if i is not None:
                return [i], [0, len(piece.encode("utf-8", "surrogatepass"))]
        lens: list[int] = []
        syms = self._symbols(piece, lens)
        if len(syms) > 1:
            syms = self._merge_heap(syms, lens)
        bounds: list[int] = []
        at = 0
        for n in lens:
            bounds += (at, at + n)
            at += n
        return syms, bounds

    def tokenize_many(self, pieces: list[str]) -> list[int]:
        """The ids of several pre-tokens, concatenated: `tokenize` on each, with the long
        words of a byte-level model cut into segments first, all in one segmenter call."""
        cache_get = self._cache.get
        found = list(map(cache_get, pieces))
        if None in found and self._segmenter is not False:
            self._segment_misses(pieces, found)
        tokenize = self.tokenize
        out: list[int] = []
        for piece, ids in zip(pieces, found):
            out += ids if ids is not None else tokenize(piece)
        return out

    def _segment_misses(self, pieces: list[str], found: list) -> None:
        """Fill `found` for the long cache misses, through the segmenter (when it applies)."""
        vocab = self.vocab if self.ignore_merges else {}
        long = [k for k, ids in enumerate(found)
                if ids is None and len(pieces[k]) >= SEGMENT_MIN and pieces[k] not in vocab]
        if not long:
            return
        seg = self._segmenter
        if seg is None:
            self._segment_wait -= sum(len(pieces[k]) for k in long)
            if self._segment_wait > 0:
                return
            seg = self._segmenter = self._make_segmenter()
            if seg is False:
                return
        from ..pipeline.pre_tokenizers import CHAR_TO_BYTE

        to_byte = CHAR_TO_BYTE.__getitem__
        texts, which = [], []
        for k in long:
            try:
                texts.append(bytes(map(to_byte, pieces[k])).decode("utf-8"))
            except (KeyError, UnicodeDecodeError):
                continue
            which.append(k)
        if not texts:
            return
        got = seg.refine(texts, list(range(len(texts))))
        if got is None:
            return
        # Segments (text) -> ids, through a cache of their own: most segments repeat.
        segs = got[1]
        seg_cache = self._segment_cache
        if len(seg_cache) >= CACHE_SIZE:
            seg_cache.clear()
        seg_cache[_SEP] = []  # the separator between words: no ids
        vals = list(map(seg_cache.get, segs))
        if None in vals:
            from ..pipeline.pre_tokenizers import bytes_to_unicode_text

            word = self._word
            for i in [i for i, v in enumerate(vals) if v is None]:
                s = segs[i]
                v = seg_cache.get(s)
                if v is None:
                    v = seg_cache[s] = word(bytes_to_unicode_text(s))
                vals[i] = v
        cache = self._cache
        start = 0
        for k in which:
            try:
                end = segs.index(_SEP, start)
            except ValueError:
                end = len(segs)
            ids = [i for v in vals[start:end] for i in v]
            found[k] = cache[pieces[k]] = ids
            start = end + 1

    def byte_level_ids(self) -> dict[bytes, int]:
        """token bytes -> id, for the tokens spelled in GPT-2's byte alphabet (the others, made
        of characters outside it, are left out)."""
        from ..pipeline.pre_tokenizers import CHAR_TO_BYTE

        get = CHAR_TO_BYTE.__getitem__
        out: dict[bytes, int] = {}
        for tok, i in self.vocab.items():
            try:
                out[bytes(map(get, tok))] = i
            except KeyError:
                pass
        return out

    def _make_segmenter(self):
        """A Segmenter over the tokens' bytes (tokens spelled in GPT-2's byte alphabet), or
        False where cuts could be wrong or useless."""
        from ..segment import Segmenter

        if self.continuing_subword_prefix or self.end_of_word_suffix or self.byte_fallback:
            return False
        if self.unk_token is not None and self.unk_token in self.vocab:
            return False  # an unk symbol stands for characters: its token says nothing of them
        texts, invalid = [], []
        # Tokens not spelled in the byte alphabet are left out: merges make substrings of the
        # word, and only words spelled in it are segmented, so they never show up there.
        for data in self.byte_level_ids():
            try:
                texts.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                invalid.append(data)
        if len(texts) + len(invalid) < 256:
            return False  # not a byte-level vocabulary
        from ..pipeline.pre_tokenizers import BYTE_TO_CHAR

        # A character missing from the vocabulary is dropped (no unk token here), and its
        # neighbours may then merge across it: a boundary the segmenter would think unspannable.
        # Bytes that valid UTF-8 never holds (C0, C1, F5-FF) never reach it.
        vocab = self.vocab
        if any(BYTE_TO_CHAR[b] not in vocab for b in range(256) if b < 0xC0 or 0xC2 <= b < 0xF5):
            return False
        return Segmenter(texts, invalid)

    def _word(self, word: str) -> list[int]:
        syms = self._symbols(word)
        if len(syms) < 2:
            return syms
        if len(syms) <= LIST_MAX:
            return self._merge_list(syms)
        return self._merge_heap(syms)

    def _symbols(self, word: str, lens: list[int] | None = None) -> list[int]:
        """Initial symbols: one per character, as `BPE::merge_word` in the Rust crate.  With
        `lens`, each symbol's length in UTF-8 bytes of the characters it stands for is appended
        to it (the Rust crate's symbol lengths, from which its offsets are summed)."""
        vocab_get = self.vocab.get
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        if prefix is None and suffix is None and lens is None:
            ids = list(map(vocab_get, word))
            if None not in ids:
                return ids  # type: ignore[return-value]
        out: list[int] = []
        unk: list[int] | None = None  # [unk_id, its length in bytes]
        last = len(word) - 1
        for pos, ch in enumerate(word):
            s = ch
            if pos and prefix is not None:
                s = prefix + s
            if pos == last and suffix is not None:
                s = s + suffix
            i = vocab_get(s)
            if i is not None:
                if unk is not None:
                    out.append(unk[0])
                    if lens is not None:
                        lens.append(unk[1])
                    unk = None
                out.append(i)
                if lens is not None:
                    lens.append(len(ch.encode("utf-8", "surrogatepass")))
                continue
            if self._byte_ids is not None:
                # (a prefix or suffix added to the character is spelled in bytes too, as in Rust)
                byte_ids = [self._byte_ids[b] for b in s.encode("utf-8", "surrogatepass")]
                if None not in byte_ids:
                    out.extend(byte_ids)  # type: ignore[arg-type]
                    if lens is not None:
                        lens += [1] * len(byte_ids)
                    continue  # (a pending unk stays pending, as in Rust)
            if self._unk_id is not None:
                if self._unk_id < 0:
                    raise ValueError(f"unk token {self.unk_token!r} is not in the vocabulary")
                n = len(ch.encode("utf-8", "surrogatepass")) if lens is not None else 0
                if unk is not None and self.fuse_unk:
                    unk[1] += n
                    continue
                if unk is not None:
                    out.append(unk[0])
                    if lens is not None:
                        lens.append(unk[1])
                unk = [self._unk_id, n]
            # No unk token: the character is dropped, as in Rust, and the symbols on either
            # side become neighbours (they may merge); it counts in no symbol's length.
        if unk is not None:
            out.append(unk[0])
            if lens is not None:
                lens.append(unk[1])
        return out

    def _merge_list(self, syms: list[int]) -> list[int]:
        get = self._pairs.get
        k = self._k
        pv = [get(a * k + b, _NO) for a, b in zip(syms, syms[1:])]
        while pv:
            low = min(pv)
            if low == _NO:
                break
            i = pv.index(low)
            new = low & _ID_MASK
            syms[i] = new
            del syms[i + 1]
            del pv[i]
            if i < len(pv):
                pv[i] = get(new * k + syms[i + 1], _NO)
            if i:
                pv[i - 1] = get(syms[i - 1] * k + new, _NO)
        return syms

    def _merge_heap(self, syms: list[int], lens: list[int] | None = None) -> list[int]:
        """The heap merge; with `lens` (one per symbol), the merged symbols' lengths are summed
        and `lens` is left holding the final tokens' lengths."""
        get = self._pairs.get
        k = self._k
        n = len(syms)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = bytearray(b"\x01") * n
        heap = []
        for i in range(n - 1):
            v = get(syms[i] * k + syms[i + 1])
            if v is not None:
                heap.append((v, i))
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            v, i = pop(heap)
            if not alive[i]:
                continue
            j = nxt[i]
            if j >= n or get(syms[i] * k + syms[j]) != v:
                continue  # stale: the pair at i changed since this entry was pushed
            new = v & _ID_MASK
            syms[i] = new
            alive[j] = 0
            if lens is not None:
                lens[i] += lens[j]
            after = nxt[j]
            nxt[i] = after
            if after < n:
                prv[after] = i
                v2 = get(new * k + syms[after])
                if v2 is not None:
                    push(heap, (v2, i))
            before = prv[i]
            if before >= 0:
                v2 = get(syms[before] * k + new)
                if v2 is not None:
                    push(heap, (v2, before))
        if lens is not None:
            lens[:] = [n for n, a in zip(lens, alive) if a]
        return [s for s, a in zip(syms, alive) if a]

    # ----------------------------------------------------------------------------------------
    def _make_cutter(self):
        """A function cutting a long word before word-boundary characters no token spans."""
        if self.continuing_subword_prefix or self.end_of_word_suffix:
            return None  # symbols depend on the position in the word: no cuts
        # Symbols that stand for other characters (byte fallback, unk) must never be merged,
        # or the test below, which looks at the characters, would not see such a merge.
        stand_ins = {f"<0x{b:02X}>" for b in range(256)} if self.byte_fallback else set()
        if self.unk_token is not None:
            stand_ins.add(self.unk_token)
        if stand_ins and any(a in stand_ins or b in stand_ins for a, b in self.merges):
            return None
        # Without an unk token (and without a byte fallback that spells every character), a
        # character missing from the vocabulary is dropped and its neighbours become adjacent
        # symbols that may merge: a cut is then safe only after a character known to be kept.
        drops = self.unk_token is None and not (self._byte_ids is not None and None not in self._byte_ids)
        for boundary in ("\u2581", " "):
            if boundary not in self.vocab:
                continue
            # Characters that some token holds right before the boundary character: a cut
            # between them and the boundary could be crossed by a merge.
            blocked = {boundary}
            for tok in self.vocab:
                j = tok.find(boundary, 1)
                while j > 0:
                    blocked.add(tok[j - 1])
                    j = tok.find(boundary, j + 1)
            if drops:
                kept = sorted(c for c in self.vocab if len(c) == 1 and c not in blocked)
                if not kept:
                    return None
                cls = "".join(re.escape(c) for c in kept)
                rx = re.compile(f"(?<=[{cls}])(?={re.escape(boundary)})")
            else:
                cls = "".join(re.escape(c) for c in sorted(blocked))
                rx = re.compile(f"(?<![{cls}])(?={re.escape(boundary)})")

            def cut(word: str, _split=rx.split) -> list[str]:
                return [p for p in _split(word) if p]

            return cut
        return None

    # ----------------------------------------------------------------------------------------
    def to_config(self) -> dict:
        return {
            "type": "BPE",
            "dropout": None,
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "end_of_word_suffix": self.end_of_word_suffix,
            "fuse_unk": self.fuse_unk,
            "byte_fallback": self.byte_fallback,
            "ignore_merges": self.ignore_merges,
            "vocab": dict(self.vocab),
            "merges": [list(m) for m in self.merges],
        }

    @classmethod
    def from_config(cls, cfg: dict) -> "BPEMerges":
        from ..errors import UnsupportedTokenizerError

        if cfg.get("dropout") not in (None, 0, 0.0):
            raise UnsupportedTokenizerError("model BPE with dropout (random segmentation) is not supported")
        merge_ids = cfg.get("anytok_merges")  # anytok's files: ids, flattened
        merges: list[tuple[str, str]] | None = None if merge_ids is not None else []
        for m in cfg.get("merges") or ():
            if isinstance(m, str):
                a, sep, b = m.partition(" ")
                if not sep:
                    raise ValueError(f"bad BPE merge {m!r}")
                merges.append((a, b))  # type: ignore[union-attr]
            else:
                a, b = m
                merges.append((a, b))  # type: ignore[union-attr]
        return cls(
            cfg.get("vocab") or {},
            merges,
            unk_token=cfg.get("unk_token"),
            fuse_unk=cfg.get("fuse_unk", False),
            byte_fallback=cfg.get("byte_fallback", False),
            continuing_subword_prefix=cfg.get("continuing_subword_prefix"),
            end_of_word_suffix=cfg.get("end_of_word_suffix"),
            ignore_merges=cfg.get("ignore_merges", False),
            merge_ids=merge_ids,
            merge_made=cfg.get("anytok_merge_made"),
        )
