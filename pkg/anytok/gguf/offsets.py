"""Token offsets for GGUF tokenizers: what `GGUFTokenizer.encode_with_offsets` returns.

llama.cpp reports no offsets, so each engine's own steps are repeated here keeping, for every
character they produce, the character of the input it came from.  How data flows:

    text -> _repair with an index map (a surrogate pair written as two code points is one
            character for the engines; offsets are mapped back to the text as given)
         -> GGUFTokenizer._partition_spans: fragments of text and user-defined tokens cut out
            of it, each with its span (the whitespace an lstrip / rstrip token eats is in that
            token's span, as `tokenizers` reports an AddedToken's lstrip / rstrip)
         -> per fragment, by engine:
            * WPM (BERT WordPiece): llama.cpp's cleanup character by character (NFD with its
              canonical reordering, white space ends a word, controls / NUL / U+FFFD / marks
              dropped, lowercase, punctuation and CJK as one-character words), each word
              character knowing its input character; greedy longest match over "▁" + word;
              a token spans the input characters of the word characters it holds ("▁" is
              none), an unknown token the whole word.  These are `tokenizers`' offsets for
              the same tokenizer.json (BertNormalizer, BertPreTokenizer, WordPiece).
            * UGM (T5-style Unigram): llama.cpp's normalization byte by byte, each normalized
              character keeping where the rewriting step that produced it began (sentencepiece's
              `norm_to_orig`): the "▁" put before a word stands where the white space before it
              began (the dummy prefix: where the first word begins), the end of the text where
              trailing white space begins; then the best segmentation with its cut points, a run
              of unknown pieces one token.  These are sentencepiece's piece spans
              (`encode(..., out_type="immutable_proto")`) for the same model.
            * SPM / BPE: the tokens spell the fragment byte for byte (SPM: after the dummy-prefix
              space, which is in no span); a token starting or ending inside a character spans
              that whole character (`tokenizers`' rule for byte-level BPE).
         -> BOS / EOS (CLS / SEP) that add_special_tokens adds: (0, 0).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import accumulate

from ..pipeline import _unicode as U
from .vocab import BYTE

__all__ = ["encode_with_offsets"]


def _repair_map(text: str, repair) -> tuple[str, list[int] | None]:
    """(text as the engines see it, its index -> index in `text`, or None when the same)."""
    fixed = repair(text)
    if len(fixed) == len(text):
        return fixed, None
    table = []
    k = 0
    for ch in fixed:
        table.append(k)
        # a pair of surrogate code points became one character
        k += 2 if ch > "\uffff" and text[k] != ch else 1
    table.append(len(text))
    return fixed, table


def encode_with_offsets(tok, text: str, add_special_tokens: bool, repair
                        ) -> tuple[list[int], list[tuple[int, int]]]:
    """The GGUF tokenizer `tok`'s ids and offsets; `repair` is its text repair (anytok.gguf.tokenizer's
    `_repair`, passed in: that module imports this one)."""
    if not isinstance(text, str):
        raise TypeError(f"encode_with_offsets expects a str, not {type(text).__name__}")
    v = tok.vocab
    ids: list[int] = []
    offsets: list[tuple[int, int]] = []
    if add_special_tokens:
        first = tok.encode("", add_special_tokens=True)
        lead = first[:1] if (tok.kind == "WPM" or v.add_bos) else []
        tail = first[len(lead):]
    else:
        lead = tail = []
    ids += lead
    offsets += [(0, 0)] * len(lead)
    if text:
        fixed, table = _repair_map(text, repair)
        kind = tok.kind
        prev_special = True
        for frag in tok._partition_spans(fixed):
            if len(frag) == 3:
                ids.append(frag[0])
                offsets.append((frag[1], frag[2]))
                prev_special = True
                continue
            f, base = frag
            if kind == "WPM":
                got = _wpm(tok._engine, f)
            elif kind == "UGM":
                got = _ugm(tok._engine, f)
            elif kind == "SPM":
                prefix = v.add_space_prefix and prev_special
                got = _spelled(tok, f, prefix, lambda s, out: tok._engine.encode(s.replace(" ", "\u2581"), out))
            else:
                got = _spelled(tok, f, False, tok._engine.encode)
            prev_special = False
            for i, a, b in got:
                ids.append(i)
                offsets.append((a + base, b + base))
        if table is not None:
            start = len(lead)
            offsets[start:] = [(table[a], table[b]) for a, b in offsets[start:]]
    ids += tail
    offsets += [(0, 0)] * len(tail)
    return ids, offsets


# -- WPM ----------------------------------------------------------------------------------------

_nfd1 = lru_cache(maxsize=1 << 16)(U.nfd)  # one character's decomposition

def _nfd_aligned(text: str) -> list[tuple[str, int]]:
    """NFD of `text` in U.nfd's order (each character decomposed, then runs of non-starters
    stably sorted by combining class) as (character, index of an input character): the input
    character it comes from, except in a reordered run (see below)."""
    seq = [(d, k) for k, c in enumerate(text) for d in _nfd1(c)]
    ccc = U._norm().ccc
    i, n = 0, len(seq)
    while i < n:
        if ord(seq[i][0]) not in ccc:
            i += 1
            continue
        j = i
        while j < n and ord(seq[j][0]) in ccc:
            j += 1
        if j - i > 1:
            # the characters move, their input positions stay in order (tokenizers' alignment
            # of a reordering: the k-th character of the run is given the k-th position)
            chars = sorted((d for d, _ in seq[i:j]), key=lambda d: ccc[ord(d)])
            seq[i:j] = zip(chars, [k for _, k in seq[i:j]])
        i = j
    return seq


def _wpm_words(eng, text: str) -> list[tuple[str, list[int]]]:
    """`eng.words(text)` with, for each word character, the index in `text` it comes from."""
    if eng.strip_accents and not text.isascii():
        seq = _nfd_aligned(text)
    else:
        seq = list(zip(text, range(len(text))))
    # what each character becomes, worked out once per character: None (white space: ends a
    # word), or its characters after the cleanup, each with whether it is a word of its own
    table = eng.__dict__.setdefault("_offsets_chars", {})
    words: list[tuple[str, list[int]]] = []
    cur: list[str] = []
    pos: list[int] = []
    for d, k in seq:
        out = table.get(d, False)
        if out is False:
            out = table[d] = _wpm_char(eng, d)
        if out is None:
            if cur:
                words.append(("".join(cur), pos))
                cur, pos = [], []
            continue
        for e, alone in out:
            if alone:
                if cur:
                    words.append(("".join(cur), pos))
                    cur, pos = [], []
                words.append((e, [k]))
            else:
                cur.append(e)
                pos.append(k)
    if cur:
        words.append(("".join(cur), pos))
    return words


def _wpm_char(eng, d: str):
    if eng._space.match(d):
        return None
    if eng._drop.match(d) or (eng.strip_accents and eng._mn.match(d)):
        return ()
    return tuple((e, bool(eng._single.match(e))) for e in (U.lowercase(d) if eng.lowercase else d))


def _wpm(eng, text: str) -> list[tuple[int, int, int]]:
    t2i = eng.t2i
    maxlen = eng.max_len
    out: list[tuple[int, int, int]] = []
    for word, pos in _wpm_words(eng, text):
        w = "\u2581" + word
        n = len(w)
        got = []
        i = 0
        while i < n:
            for j in range(min(n, i + maxlen), i, -1):
                t = t2i.get(w[i:j])
                if t is not None:
                    # w[i:j] holds word characters max(i-1, 0) .. j-2 ("▁" is none)
                    held = pos[max(i - 1, 0):j - 1]
                    got.append((t, min(held), max(held) + 1) if held else (t, pos[0], pos[0]))
                    i = j
                    break
            else:
                got = None
                break
        out += got if got else [(eng.unk, min(pos), max(pos) + 1)]
    return out


# -- UGM ----------------------------------------------------------------------------------------

def _ugm_normalize(eng, text: str) -> tuple[str, list[int]]:
    """`eng.normalize(text)` and norm_to_orig: for each normalized character the index in
    `text` where the step that produced it began, plus one entry for the end."""
    data = text.encode("utf-8")
    n = len(data)
    # byte offset -> index of the character holding it
    cidx = [k for k, ch in enumerate(text) for _ in range(1 if ch < "\x80" else len(ch.encode("utf-8")))]
    cidx.append(len(text))
    space = eng.space
    nspace = len(space)
    prepend, merge = eng.prepend, eng.merge
    out = bytearray()
    n2o: list[int] = []  # per output byte
    prepended = non_ws = False
    inserted = False  # a "▁" was put before a word already
    run_start = -1  # where the current run of white space began
    i = 0
    while i < n:
        step = cidx[i]
        piece, used = eng.next_piece(data, i)
        for c in piece:
            if c != 0x20:
                if not non_ws:
                    non_ws = True
                    if (prepend and not prepended) or merge:
                        out += space
                        # the dummy prefix stands where the first word begins; a "▁" for
                        # white space where that white space began
                        n2o += [run_start if inserted and run_start >= 0 else step] * nspace
                        prepended = inserted = True
                    run_start = -1
                out.append(c)
                n2o.append(step)
            else:
                non_ws = False
                if run_start < 0:
                    run_start = step
                if not merge:
                    out += space
                    n2o += [step] * nspace
        i += used
    end = run_start if merge and run_start >= 0 else len(text)
    norm = out.decode("utf-8", "surrogateescape")
    if len(norm) == len(out):
        n2o.append(end)
        return norm, n2o
    starts = accumulate((len(c.encode("utf-8", "surrogateescape")) for c in norm), initial=0)
    chars = [n2o[b] for b in starts if b < len(out)]
    chars.append(end)
    return norm, chars


def _ugm(eng, text: str) -> list[tuple[int, int, int]]:
    norm, n2o = _ugm_normalize(eng, text)
    if not norm:
        return []
    back_tok, back_pos = eng._lattice(norm)
    unk = eng.unk
    out: list[tuple[int, int, int]] = []
    prev_unknown = False
    at = len(norm)
    while True:
        t = back_tok[at]
        start = back_pos[at]
        is_unknown = t == unk
        if prev_unknown and is_unknown:
            out[-1] = (t, start, out[-1][2])  # one token for a run of unknown pieces
        else:
            out.append((t, start, at))
        at = start
        if at == 0:
            break
        prev_unknown = is_unknown
    out.reverse()
    return [(t, n2o[a], n2o[b]) for t, a, b in out]


# -- SPM / BPE: tokens that spell the fragment ----------------------------------------------------

def _spelled(tok, text: str, prefix: bool, run) -> list[tuple[int, int, int]]:
    """SPM / BPE: each token's span from the bytes it holds of the engine's input.  Without a
    byte-level alphabet that input has " " as "▁" (one character for one, so the text's own "▁"
    is told apart) and a token holds its text's bytes, a byte token one byte."""
    ids: list[int] = []
    run(" " + text if prefix else text, ids)
    v = tok.vocab
    if tok.kind == "SPM" or not tok._engine.byte_encode:
        seen = (" " + text if prefix else text).replace(" ", "\u2581")
        tokens, attrs = v.tokens, v.attrs
        lengths = [1 if attrs[i] & BYTE else len(tokens[i].encode("utf-8")) for i in ids]
    else:
        seen = text
        pieces = tok._piece_table()
        lengths = [len(pieces[i]) for i in ids]
    if sum(lengths) != len(seen.encode("utf-8", "surrogatepass")):
        raise ValueError(f"{tok.name}: the tokens of {text[:40]!r} do not spell it; no offsets")
    out = []
    ci = 0  # the character byte `at` is in
    start_of = 0  # byte at which character ci starts
    at = 0
    n = len(seen)
    size = [len(c.encode("utf-8", "surrogatepass")) for c in seen] if not seen.isascii() else [1] * n
    for i, length in zip(ids, lengths):
        start = ci
        at += length
        while ci < n and start_of + size[ci] <= at:
            start_of += size[ci]
            ci += 1
        end = ci + 1 if at > start_of and ci < n else ci
        out.append((i, start, max(start, end) if length else start))
    if prefix:
        # the dummy-prefix space is no character of the text
        out = [(i, max(a - 1, 0), max(b - 1, 0)) for i, a, b in out]
    return out
