"""Token offsets on plain lists: the path `encode_with_offsets` and anytok.hf's `encode` take.

How data flows: the text is cut on added tokens and each other split is normalized and cut on
normalized added tokens exactly as `Tokenizer._parts` does for ids, keeping where the split
starts in the original text and how its normalized characters align to it: the identity, a
prepended prefix (`Prepend` then length-keeping normalizers: the prefix shares the first
character's range), or, when nothing cheaper is exact, the alignment list of anytok.hf's
`NormalizedString` (the general path's own normalizer).  Then, per segment:

* when the pre-tokenizer keeps every character in order (Split / Digits / Punctuation without
  "removed", ByteLevel, none at all), the segment's ids come from the model as for `encode`, and
  each token's end is the running sum of its length in UTF-8 bytes of the model's input (a table
  built once from the vocabulary: a byte-level token's characters, a byte-fallback token's one
  byte); bytes become characters through a prefix count of the segment's UTF-8 start bytes (a
  token starting or ending inside a character covers that character, as tokenizers reports it);
  a byte total that does not add up (an unknown token, a continuing-subword prefix) gives up;
* when it drops characters (BERT's and Whitespace's pre-tokenizers, whose dropped characters
  are White_Space), one findall gives each piece with the gap before it; each distinct one's
  ids, token strings and steps (gap, first token's length, then 0 and the next one's length
  ...; a WordPiece "##" token's length is without its prefix, an unknown piece is one token
  over all of it, other models say it through anytok.hf's `_tokens_of`) are cached, and one
  running sum over all the steps, paired off, gives the offsets.

Anything else (Metaspace, custom components, lone surrogates, ...) returns None and the caller
takes anytok.hf's general NormalizedString path, which is exact everywhere.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, chain, repeat
from operator import itemgetter

_chain = chain.from_iterable
_first, _second, _third, _fourth = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(3)

__all__ = ["OffsetsPath", "offsets_path"]

# bytes.translate table: 1 for a byte that starts a UTF-8 character, 0 for a continuation byte.
_START_BYTE = bytes(0 if 0x80 <= b < 0xC0 else 1 for b in range(256))
_BAD = -(1 << 40)  # the length of a token whose length is not fixed: makes any total wrong
_LEN_KEEPING = ("Lowercase",)


class _Unsupported(Exception):
    pass


_PIECES_CACHE_SIZE = 1 << 16


def _pieces_cache(path) -> dict:
    """A dict of findall match -> `path._piece_info(...)` computing each missing one: a lookup
    per match in C, one Python call per distinct match, the common case (a WordPiece piece
    that is one token, known or unknown, covering all of it) done here."""
    gap_chars = path.gap_chars
    tokenize = path.tokenize_piece
    values, prefix = path.wordpiece or (None, "")
    plen = len(prefix)
    slow = path._piece_info
    # str.lstrip() (no argument: several times faster than with one) strips the gap, which
    # is White_Space only, and, when the piece starts with one, the few characters Python
    # counts as space that are not White_Space (never White_Space: a piece has none).
    other_space = "".join(c for c in map(chr, range(0x3001)) if c.isspace() and c not in gap_chars)
    exact = not all(c.isspace() for c in gap_chars)

    def missing(cache, key):
        if len(cache) >= _PIECES_CACHE_SIZE:  # bounded, as the models' caches are
            cache.clear()
        piece = key.lstrip()
        gap = len(key) - len(piece)
        if gap and (exact or key[gap - 1] in other_space):
            piece = key.lstrip(gap_chars)
            gap = len(key) - len(piece)
        if values is None or not piece:
            v = cache[key] = slow(key, piece)
            return v
        # anytok.hf's WordPiece._tokens_of without its Token objects: one token (known or
        # unknown) covers all of the piece; after the first, a "##" token is as long as its
        # text without the prefix.
        p_ids = tokenize(piece)
        if len(p_ids) == 1:
            v = cache[key] = (p_ids, (gap, len(piece)), [values[p_ids[0]]], (1,))
            return v
        toks = list(map(values.__getitem__, p_ids))
        steps = [gap, len(toks[0])]
        for t in toks[1:]:
            steps += (0, len(t) - plen if t.startswith(prefix) else len(t))
        if sum(steps) != len(key):
            raise _Unsupported("a piece whose tokens do not cover it")
        v = cache[key] = (p_ids, tuple(steps), toks, (1,) + (0,) * (len(p_ids) - 1))
        return v

    return type("PiecesCache", (dict,), {"__missing__": missing, "__slots__": ()})()


def offsets_path(tok, hf_normalizer, hf_model):
    """An `OffsetsPath` for pipeline `tok` (its anytok.hf normalizer and model for the rare
    cases), or None when its components are not ones this path knows."""
    try:
        return OffsetsPath(tok, hf_normalizer, hf_model)
    except _Unsupported:
        return None


def _normalizer_kind(n) -> str:
    """'none'; 'same' (output == input means every character maps to itself); 'length' (same
    length means it too); 'prepend' (a Prepend, then 'length' ones); or 'general'."""
    if n is None:
        return "none"
    t = n.type
    if t in ("NFC", "NFD", "NFKC", "NFKD", "StripAccents", "Strip", "BertNormalizer"):
        return "same"
    if t in _LEN_KEEPING:
        return "length"
    if t == "Replace":
        lit = n.pattern.literal
        if lit is not None and len(lit) == 1 and len(n.content) == 1:
            return "length"
        return "general"
    if t == "Sequence":
        kinds = [_normalizer_kind(x) for x in n.normalizers]
        if not kinds:
            return "none"
        if kinds[0] == "prepend" and n.normalizers[0].prepend and all(k == "length" for k in kinds[1:]):
            return "prepend"
        if all(k == "length" for k in kinds):
            return "length"
        if all(k in ("length", "same") for k in kinds):
            return "same"
        return "general"
    if t == "Prepend":
        return "prepend" if n.prepend else "none"
    return "general"


def _contiguous(pre) -> tuple[bool, bool, bool]:
    """(keeps every character in order, byte-level output, adds a prefix space)."""
    if pre is None:
        return True, False, False
    t = pre.type
    if t == "ByteLevel":
        return True, True, pre.add_prefix_space
    if t == "Split":
        return pre.behavior != "Removed", False, False
    if t in ("Digits",):
        return True, False, False
    if t == "Punctuation":
        return pre.behavior != "Removed", False, False
    if t == "Sequence":
        stages = pre.pretokenizers
        for k, s in enumerate(stages):
            keeps, byte_level, prefix = _contiguous(s)
            if not keeps or prefix or (byte_level and k != len(stages) - 1):
                return False, False, False
        return True, bool(stages) and _contiguous(stages[-1])[1], False
    return False, False, False


class OffsetsPath:
    def __init__(self, tok, hf_normalizer, hf_model):
        self.tok = tok
        self.hf_normalizer = hf_normalizer
        self.hf_model = hf_model
        model = tok.model
        norm = tok.normalizer
        pre = tok.pre_tokenizer
        self.norm_kind = _normalizer_kind(norm)
        if self.norm_kind == "general" and hf_normalizer is None:
            raise _Unsupported("normalizer")
        if self.norm_kind == "prepend":
            first = norm if norm.type == "Prepend" else norm.normalizers[0]
            self.prefix_len = len(first.prepend)
        if norm is not None and norm.type == "ByteLevel":
            raise _Unsupported("byte-level normalizer")
        keeps, self.byte_level, self.prefix_space = _contiguous(pre)
        ids = getattr(model, "_ids", None)
        if ids is None:
            raise _Unsupported("model")
        self.values = ids  # id -> token string
        kind = getattr(model, "kind", None)
        self.lengths = None
        if keeps:
            self.mode = "contiguous"
            self.lengths = self._lengths(model, kind)
            if self.lengths is None:
                keeps = False
        if not keeps:
            if (pre is None or pre.type not in ("BertPreTokenizer", "Whitespace") or pre._rx.groups
                    or self.byte_level or hf_model is None):
                raise _Unsupported("pre-tokenizer")
            self.mode = "spans"
            import re

            from . import _unicode as U

            # The characters the pattern does not match are White_Space: each match is found
            # with the gap before it (possessive, and the trailing gap its own match, so that
            # no gap is scanned twice).
            if pre.type == "BertPreTokenizer":
                gaps = U.ranges("WHITE_SPACE_17")
            else:
                from .._unicode_tables import WHITE_SPACE

                gaps = sorted(WHITE_SPACE)
            ws = U.re_class(gaps)
            self.find_pieces = re.compile(f"{ws}*+(?:{pre._rx.pattern})|{ws}+\\Z").findall
            self.gap_chars = "".join(chr(c) for lo, hi in gaps for c in range(lo, hi + 1))
        self.wordpiece = None
        self.tokenize_piece = model.tokenize
        if getattr(hf_model, "_type", None) == "WordPiece" and type(model).__name__ == "WordPiece":
            cfg = hf_model._cfg
            # (its `_word`: the model's own cache would only hold the same ids twice)
            self.wordpiece = (model._ids, cfg["continuing_subword_prefix"] or "")
            self.tokenize_piece = model._word
        if self.mode == "spans":
            self.pieces_cache = _pieces_cache(self)
        many = getattr(model, "tokenize_many", None)
        if many is None:
            one = model.tokenize

            def many(pieces):
                return [i for p in pieces for i in one(p)]
        self.tokenize_many = many

    def _lengths(self, model, kind) -> list[int] | None:
        """Each id's length in UTF-8 bytes of the model's input, or None when not fixed."""
        ids = self.values
        cls = type(model).__name__
        if cls == "BPEMerges":
            if getattr(model, "continuing_subword_prefix", None) or getattr(model, "end_of_word_suffix", None):
                return None
            unk = getattr(model, "_unk_id", None)
            byte_ids = list(model._byte_ids or ()) if getattr(model, "byte_fallback", False) else []
        elif cls == "WordLevel":  # a token is the whole piece; unk's length is the piece's
            unk = model._unk_id
            byte_ids = []
        elif cls == "Unigram" or kind == "unigram":
            return None
        else:
            return None
        if self.byte_level:
            out = [len(t) if t is not None else _BAD for t in ids]
        else:
            # In characters.  A byte-fallback token stands for one byte of a character: the
            # character's first byte advances by one, its continuation bytes by none, and each
            # covers the character it is in (`back`: 1, see _contiguous).
            out = [len(t) if t is not None else _BAD for t in ids]
            back = list(out)
            for b, i in enumerate(byte_ids or ()):
                if i is not None:
                    out[i] = 0 if 0x80 <= b < 0xC0 else 1
                    back[i] = 1
            if unk is not None and unk >= 0:
                back[unk] = _BAD
            self.back = back
        if unk is not None and unk >= 0:
            out[unk] = _BAD
        return out

    # ------------------------------------------------------------------------------------------
    def encode(self, text: str, with_tokens: bool = False):
        """(ids, offsets, word indexes, token strings or None) without the post-processor, or
        None when this text needs the general path."""
        tok = self.tok
        if not text.isascii():
            from ..pretokenize import SURROGATE

            if SURROGATE.search(text):
                return None
        added = tok.added
        norm_split = added.normalized.split if added.has_normalized else None
        splits = added.raw.split(text) if added.has_raw else [(text, None)]
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        words: list[int] = []
        tokens: list[str] | None = [] if with_tokens else None
        state = [0]  # the next word index
        at = 0
        for piece, tid in splits:
            start = at
            at += len(piece)
            if tid is not None:
                ids.append(tid)
                offsets.append((start, at))
                words.append(state[0])
                state[0] += 1
                if tokens is not None:
                    tokens.append(piece)
                continue
            if not piece:
                continue
            al = self._align(piece, start)
            if al is None:
                return None
            norm, align = al
            if not norm:
                continue
            subs = norm_split(norm) if norm_split is not None else [(norm, None)]
            p0 = 0
            for sub, sid in subs:
                s0 = p0
                p0 += len(sub)
                if not sub:
                    continue
                if sid is not None:
                    ids.append(sid)
                    offsets.append(_convert(align, start, s0, p0))
                    words.append(state[0])
                    state[0] += 1
                    if tokens is not None:
                        tokens.append(sub)
                    continue
                if not self._segment(sub, s0, start, align, ids, offsets, words, tokens, state):
                    return None
        return ids, offsets, words, tokens

    def _align(self, piece: str, start: int):
        """(normalized text, alignment): alignment None = identity, an int k = a k-character
        prefix sharing the first character's range, or (starts, ends) absolute lists."""
        kind = self.norm_kind
        if kind == "none":
            return piece, None
        normalizer = self.tok.normalizer
        bert = normalizer.type == "BertNormalizer"
        if bert and not piece.isascii():
            got = self._bert_align(piece, start)
            if got is not None:
                return (piece, None) if got[0] == piece else got
            bert = False
        norm = normalizer.normalize(piece)
        if norm == piece and kind in ("same", "length"):
            return piece, None
        if kind == "length" and len(norm) == len(piece):
            return norm, None
        if kind == "prepend" and len(norm) == len(piece) + self.prefix_len:
            return norm, self.prefix_len
        if bert and len(norm) == len(piece):
            return norm, None  # ASCII through BERT: spaces and case only, one for one
        hf = self.hf_normalizer
        if hf is None:
            return None
        from ..hf.normalized import NormalizedString

        ns = NormalizedString._make(piece, piece, None, start)
        hf._normalize(ns)
        if ns._align is None:
            return ns._normalized, None
        return ns._normalized, ([a for a, _ in ns._align], [b for _, b in ns._align])

    def _bert_align(self, piece: str, start: int):
        """BERT's normalizer character by character: every output character of an input
        character takes its range (cleanup, CJK spacing, accent stripping and lowercasing all
        work per character); None when a kept combining mark could be reordered across
        characters by the NFD of accent stripping (then the general path decides)."""
        out = self.__dict__.get("_bert_chars_cache")
        if out is None:
            import unicodedata

            normalize = self.tok.normalizer.normalize
            unsafe = self._bert_unsafe = set()

            class Chars(dict):
                def __missing__(self, c):
                    v = self[c] = normalize(c)
                    if any(unicodedata.combining(x) for x in v):
                        unsafe.add(c)
                    return v

            out = self.__dict__["_bert_chars_cache"] = Chars()
        outs = list(map(out.__getitem__, piece))
        if not self._bert_unsafe.isdisjoint(piece):
            return None
        lens = list(map(len, outs))
        owner = list(_chain(map(repeat, range(start, start + len(piece)), lens)))
        return "".join(outs), (owner, list(map((1).__add__, owner)))

    def _segment(self, sub, s0, start, align, ids, offsets, words, tokens, state) -> bool:
        if self.mode == "contiguous":
            return self._contiguous(sub, s0, start, align, ids, offsets, words, tokens, state)
        # One findall gives the pieces, each with the dropped characters before it (see
        # __init__).  Offsets come from one running sum over steps: a piece of tokens t1..tm
        # steps over (its gap, len t1, 0, len t2, ..., 0, len tm) (a step 0 starts the next
        # token where the last one ended), so the sums alternate a token's start and its end
        # and pairing them off gives the offsets; word indexes likewise sum steps (1, 0, ...).
        # Nothing is done per token in Python; each distinct piece's steps are computed once.
        try:
            hits = list(map(self.pieces_cache.__getitem__, self.find_pieces(sub)))
        except _Unsupported:
            return False
        if not hits:
            return True
        if align is None:
            sums = accumulate(_chain(map(_second, hits)), initial=start + s0)
            next(sums)
            offsets += zip(sums, sums)
        else:
            sums = list(accumulate(_chain(map(_second, hits)), initial=0))
            if not len(sums) % 2:
                sums.pop()  # the trailing gap's
            self._place(sums[1::2], sums[2::2], s0, start, align, offsets)
        ids += _chain(map(_first, hits))
        if tokens is not None:
            tokens += _chain(map(_third, hits))
        w0 = state[0]
        k = len(words)
        words += accumulate(_chain(map(_fourth, hits)), initial=w0 - 1)
        del words[k]  # the initial value
        state[0] = words[-1] + 1 if len(words) > k else w0
        return True

    def _piece_info(self, key: str, piece: str):
        """(ids, steps, token strings, word steps) of one findall match `key`, `piece` after
        a gap of dropped characters, with anytok.hf's model (see _segment and _pieces_cache);
        raises _Unsupported when its tokens do not start at its start and end at its end (the
        general path decides then)."""
        gap = len(key) - len(piece)
        if not piece:  # the text's trailing gap: its step is the last, unpaired sum
            return [], (gap,), [], ()
        p_ids = self.tokenize_piece(piece)
        got = self.hf_model._tokens_of(piece, p_ids)
        toks = [t.value for t in got]
        starts = [t.offsets[0] for t in got]
        ends = [t.offsets[1] for t in got]
        if not p_ids or starts[0] != 0 or ends[-1] != len(piece):
            raise _Unsupported("a piece whose tokens do not cover it")
        steps = [gap, ends[0]]
        for k in range(1, len(ends)):
            steps += (starts[k] - ends[k - 1], ends[k] - starts[k])
        return p_ids, tuple(steps), toks, (1,) + (0,) * (len(p_ids) - 1)

    def _contiguous(self, sub, s0, start, align, ids, offsets, words, tokens, state) -> bool:
        tok = self.tok
        pre = tok.pre_tokenizer
        pieces = pre.split(sub, False) if pre is not None else [sub]
        seg = self.tokenize_many(pieces)
        n = len(seg)
        try:
            lens = list(map(self.lengths.__getitem__, seg))
        except (IndexError, TypeError):
            return False
        if n and min(lens) < 0:
            return False
        byte_units = self.byte_level
        prefix = self.prefix_space and not sub.startswith(" ")
        if byte_units and not (sub.isascii() and not prefix):
            data = sub.encode("utf-8", "surrogatepass")
            base = None
            bounds = list(accumulate(lens, initial=0))
            if bounds[-1] != len(data) + prefix:
                return False
            flags = data.translate(_START_BYTE)
            if prefix:  # the added space and the first character are one character
                flags = b"\x01" + (b"\x00" + flags[1:] if flags else b"")
            # started[u]: characters starting before byte u; a token from byte s to e covers
            # the characters started[s + 1] - 1 to started[e].
            started = list(accumulate(flags, initial=0))
            cs = list(map(int.__sub__, map(started.__getitem__, map((1).__add__, bounds[:-1])), repeat(1)))
            ce = list(map(started.__getitem__, bounds[1:]))
            unit_lens = (list(map(len, pieces)) if self.byte_level
                         else [len(p.encode("utf-8", "surrogatepass")) for p in pieces])
        else:
            # One unit per character: with an identity or prefix alignment the running sums
            # start at the segment's place in the original text and are the offsets.
            base = 0 if align is not None and type(align) is not int else start + s0 - (align or 0)
            bounds = list(accumulate(lens, initial=base))
            if bounds[-1] - base != len(sub) + prefix:
                return False
            ce = bounds[1:]
            if not byte_units and n and min(lens) == 0:  # a character spelled in byte tokens
                cs = list(map(int.__sub__, ce, map(self.back.__getitem__, seg)))
            else:
                cs = bounds[:-1]
            unit_lens = None
        if base is None or (align is not None and type(align) is not int):
            self._place(cs, ce, s0, start, align, offsets)
        else:
            at = len(offsets)
            offsets += zip(cs, ce)
            if align:  # a prefix: its characters share the first character's range
                lo = start
                for k in range(at, len(offsets)):
                    s_, e_ = offsets[k]
                    if s_ >= lo and e_ > lo:
                        break
                    offsets[k] = (max(s_, lo), max(e_, lo + 1))
        ids += seg
        w0 = state[0]
        if len(pieces) == 1:
            words += repeat(w0, n)
        else:
            if unit_lens is None:
                unit_lens = list(map(len, pieces))
            ends = list(accumulate(unit_lens, initial=base or 0))[1:]
            words += map(int.__add__, map(bisect_right, repeat(ends, n), bounds[:-1]), repeat(w0, n))
        state[0] = w0 + len(pieces)
        if tokens is not None:
            tokens += map(self.values.__getitem__, seg)
        return True

    @staticmethod
    def _place(cs, ce, s0, start, align, offsets) -> None:
        """Token character ranges [cs, ce) of a segment starting at normalized character s0 ->
        original offsets, appended to `offsets`."""
        if align is None:
            b = start + s0
            if b:
                cs = map(int.__add__, cs, repeat(b))
                ce = map(int.__add__, ce, repeat(b))
            offsets += zip(cs, ce)
        elif type(align) is int:
            # the prefix's characters share the first character's range: only the first
            # tokens (ranges starting inside the prefix) need clamping
            b = start + s0 - align
            at = len(offsets)
            offsets += zip(map(int.__add__, cs, repeat(b)), map(int.__add__, ce, repeat(b)))
            lo = start
            for k in range(at, len(offsets)):
                s_, e_ = offsets[k]
                if s_ >= lo and e_ > lo:
                    break
                offsets[k] = (max(s_, lo), max(e_, lo + 1))
        else:
            starts, ends = align
            offsets += zip(map(starts.__getitem__, map(int.__add__, cs, repeat(s0))),
                           map(ends.__getitem__, map(int.__add__, ce, repeat(s0 - 1))))


def _convert(align, start: int, s: int, e: int) -> tuple[int, int]:
    """Normalized range [s, e) of a split -> original offsets."""
    if align is None:
        return (start + s, start + e)
    if type(align) is int:
        return (max(start + s - align, start), max(start + e - align, start + 1))
    return (align[0][s], align[1][e - 1])
