"""`GGUFTokenizer`: the tokenizer in a GGUF file, giving llama.cpp's ids.

`encode(text)` is llama.cpp's `llama_tokenize(text, add_special=false, parse_special=false)`:

1. partition: user-defined tokens (never control or unknown ones: parse_special is false) are
   cut out of the text, longest token first, each found with a plain substring search, with the
   lstrip / rstrip llama.cpp gives some tokens;
2. each remaining fragment goes through the model's engine:
   * BPE (`gpt2`, `gemma4`): an `anytok.pipeline` Tokenizer built from the vocabulary — the
     `tokenizer.ggml.pre` type's split expressions as `Split` pre-tokenizers (each applied to
     the pieces of the one before, llama.cpp's way), then GPT-2's byte-to-character map
     (or, for Gemma 4, spaces as "▁" and byte fallback), then BPE by the merge list;
   * SPM (`llama`): llama.cpp's score-ordered bigram merge over the whole fragment (" " as
     "▁", a space in front of the first fragment and after every special token), bytes as
     `<0xXX>` tokens for what no token covers;
   * WPM (`bert`): llama.cpp's BERT cleanup and split, then greedy longest-match WordPiece over
     "▁" + word;
   * UGM (`t5`): the precompiled charsmap (anytok.sentencepiece's CharsMap), llama.cpp's
     whitespace handling, then the best-scoring segmentation, summed in double as llama.cpp;
3. `add_special_tokens=True` adds BOS / EOS (CLS / SEP for WPM) as llama.cpp does for the file.

`decode(ids)` is `llama_detokenize(ids, remove_special=false, unparse_special=true)`;
`skip_special_tokens=True` makes control tokens empty (unparse_special=false).
"""

from __future__ import annotations

import heapq
import re
from typing import Iterable, Sequence

from ..incremental.generic import IncrementalMixin
from ..errors import UnsupportedTokenizerError
from ..pipeline import _unicode as U
from ..pipeline.pre_tokenizers import _bytes_to_unicode
from . import vocab as V
from .vocab import LlamaVocab

__all__ = ["GGUFTokenizer", "CONFIG_FORMAT"]

CONFIG_FORMAT = "anytok.gguf"
_C_SPACE = " \t\n\v\f\r"  # C isspace()


def _repair(text: str) -> str:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _onig(expr: str) -> str:
    # llama.cpp runs each expression on one piece at a time with std::regex, where `$` is the
    # end of that piece; in Oniguruma `$` is the end of any line.
    return expr.replace("$", "\\z") if expr.endswith("$") else expr


class _BPEEngine:
    def __init__(self, v: LlamaVocab):
        from ..pipeline.tokenizer import Tokenizer

        self.byte_encode = v.pre_type not in ("gemma4", "sarvam-moe")
        self.newline_words = v.pre_type == "gemma4"
        splits = [{"type": "Split", "pattern": {"Regex": _onig(e)}, "behavior": "Isolated", "invert": False}
                  for e in V.PRE_REGEXES[v.pre_type]]
        if self.byte_encode:
            splits.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
        # The merges as the ids of their two tokens (flat), as anytok's BPE model takes them.
        # A merge naming or making no token is left out (llama.cpp would apply it, then spell
        # the unknown result as single-byte tokens; no vocabulary here has one).
        t2i = v.token_to_id
        get = t2i.get
        left, right = _split_merges(v.merges_raw)
        # (C-level map/zip over the ~10^5 merges: the largest part of a load after the header)
        joined = list(map(str.__add__, left, right))
        ia = list(map(get, left))
        ib = list(map(get, right))
        made_ids = list(map(get, joined))
        if None in ia or None in ib or None in made_ids:
            keep = [k for k, (x, y, z) in enumerate(zip(ia, ib, made_ids)) if x is not None and y is not None
                    and z is not None]
            ia, ib, joined = [ia[k] for k in keep], [ib[k] for k in keep], [joined[k] for k in keep]
            made_ids = [made_ids[k] for k in keep]
        merge_ids: list[int] = [0] * (2 * len(ia))
        merge_ids[::2] = ia
        merge_ids[1::2] = ib
        self.n_merges = len(ia)
        vocab = t2i
        if not v.ignore_merges:
            # Control, user-defined and unknown tokens that BPE can never make (neither one
            # character nor a merge's result) are left out of the model's vocabulary: the ids
            # are the same, and the pipeline can then be proven a tiktoken-style Encoding.
            tokens = v.tokens
            made = set(joined)
            drop = {tokens[i] for i, a in enumerate(v.attrs)
                    if a & (V.CONTROL | V.USER_DEFINED | V.UNKNOWN) and len(tokens[i]) > 1 and tokens[i] not in made}
            if drop:
                vocab = {t: i for t, i in t2i.items() if t not in drop}
        model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                 "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": not self.byte_encode,
                 "ignore_merges": v.ignore_merges, "vocab": vocab, "anytok_merges": merge_ids, "anytok_merge_made": made_ids}
        self.config = {
            "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}
            if v.escape_whitespaces else None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": splits},
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
            if self.byte_encode else {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"}]},
            "model": model,
        }
        self.pipeline = Tokenizer.from_config(dict(self.config, added_tokens=[]), name=v.pre_type)
        self.t2i = v.token_to_id

    def encode(self, text: str, out: list[int]) -> None:
        if len(text) > 20000 and self.pipeline._as_encoding is None:
            # A long text: try once to prove the pipeline is a tiktoken-style Encoding (about a
            # second for 128k tokens; the same ids by construction, ~6x faster after).
            self.pipeline._encoding_or_reason()
        if self.newline_words and "\n" in text:
            # Gemma 4: a run of newlines that is a token is that token (llama.cpp's fix).
            for piece in re.findall("[^\n]+|\n+", text):
                if piece[0] == "\n" and piece in self.t2i:
                    out.append(self.t2i[piece])
                else:
                    out += self.pipeline.encode(piece)
            return
        out += self.pipeline.encode(text)


def _split_merges(merges: list[str]) -> tuple[list[str], list[str]]:
    """The two tokens of each `tokenizer.ggml.merges` line "a b", cut at the first space after
    its first character; a line with no such space is left out."""
    if not merges:
        return [], []
    joined = "\n".join(merges)
    n = len(merges)
    if joined.count(" ") == n and joined.count("\n") == n - 1 and joined[0] != " " and "\n " not in joined:
        # one space in each line, none first, no newline in any token: one split does all
        flat = joined.replace("\n", " ").split(" ")
        return flat[0::2], flat[1::2]
    left, right = [], []
    for m in merges:
        cut = m.find(" ", 1)
        if cut >= 0:
            left.append(m[:cut])
            right.append(m[cut + 1:])
    return left, right


class _SPMEngine:
    """llama.cpp's SPM: merge the adjacent pair whose concatenation is the token of highest
    score (leftmost on ties) until none is left; what is not a token becomes byte tokens."""

    def __init__(self, v: LlamaVocab):
        self.t2i = v.token_to_id
        self.scores = v.scores
        self.byte_ids = [v.token_to_id.get(f"<0x{b:02X}>", v.token_to_id.get(chr(b)) if b < 128 else None)
                         for b in range(256)]
        self.unk = v.special["unk"]
        self._tokens = v.tokens
        self._joins: set[str] | None = None  # "c▁" pairs some token holds (made on first use)
        self._cache: dict[str, list[int]] = {}

    def encode(self, text: str, out: list[int]) -> None:
        """The text cut before each "▁" that no token holds together with the character in
        front of it: no merge can join symbols across such a cut (a merge makes a token, which
        would hold that pair), and merges on either side do not affect each other, so the
        pieces' ids (cached per piece, like words) are the whole text's."""
        if len(text) < 24:
            self._encode(text, out)
            return
        joins = self._joins
        if joins is None:
            joins = self._joins = {t[k - 1:k + 1] for t in self._tokens for k in range(1, len(t)) if t[k] == "\u2581"}
        cache = self._cache
        if len(cache) > 50_000:
            cache.clear()
        parts = text.split("\u2581")
        cur = parts[0]
        for p in parts[1:]:
            if cur and cur[-1] + "\u2581" not in joins:
                ids = cache.get(cur)
                if ids is None:
                    ids = cache[cur] = []
                    self._encode(cur, ids)
                out += ids
                cur = "\u2581" + p
            else:
                cur += "\u2581" + p
        ids = cache.get(cur)
        if ids is None:
            ids = cache[cur] = []
            self._encode(cur, ids)
        out += ids

    def _encode(self, text: str, out: list[int]) -> None:
        t2i = self.t2i
        scores = self.scores
        whole = t2i.get(text)
        syms = list(text)
        n = len(syms)
        if n == 0:
            return
        if n == 1 and whole is not None:
            out.append(whole)
            return
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        heap: list = []
        push = heapq.heappush
        for i in range(n - 1):
            t = t2i.get(syms[i] + syms[i + 1])
            if t is not None:
                push(heap, (-scores[t], i, i + 1, len(syms[i]) + len(syms[i + 1])))
        pop = heapq.heappop
        while heap:
            _, left, right, size = pop(heap)
            a = syms[left]
            b = syms[right]
            if not a or not b or len(a) + len(b) != size or nxt[left] != right:
                continue
            syms[left] = a + b
            syms[right] = ""
            r2 = nxt[right]
            nxt[left] = r2
            if r2 >= 0:
                prv[r2] = left
            p = prv[left]
            if p >= 0:
                t = t2i.get(syms[p] + syms[left])
                if t is not None:
                    push(heap, (-scores[t], p, left, len(syms[p]) + len(syms[left])))
            if r2 >= 0:
                t = t2i.get(syms[left] + syms[r2])
                if t is not None:
                    push(heap, (-scores[t], left, r2, len(syms[left]) + len(syms[r2])))
        i = 0
        byte_ids = self.byte_ids
        while i != -1:
            s = syms[i]
            t = t2i.get(s)
            if t is not None:
                out.append(t)
            else:
                for b in s.encode("utf-8"):
                    bid = byte_ids[b]
                    if bid is None:
                        raise UnsupportedTokenizerError(f"SPM vocabulary has no token for byte 0x{b:02X}")
                    out.append(bid)
            i = nxt[i]


class _WPMEngine:
    """llama.cpp's WPM: BERT-style cleanup and split, then greedy longest match over "▁" + word."""

    def __init__(self, v: LlamaVocab):
        self.t2i = v.token_to_id
        self.unk = v.special["unk"]
        self.max_len = max(len(t) for t in v.tokens)
        self.lowercase = v.lowercase
        self.strip_accents = v.strip_accents
        ws = U.ranges("WHITE_SPACE_17")
        ctrl = U.ranges("CONTROL_8")
        punct = U.ranges("PUNCTUATION_8")
        # (?: ...) classes: drop (NUL, U+FFFD, controls), space, single-character words
        self._space = re.compile(U.re_class(ws) + "+")
        self._drop = re.compile(U.re_class(sorted(ctrl + [(0, 0), (0xFFFD, 0xFFFD)])))
        self._mn = re.compile(U.char_class("NONSPACING_MARK_8"))
        ascii_sym = [(c, c) for c in range(0x7F) if chr(c) in "$+<=>^`|~"]
        cjk = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
               (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]
        self._single = re.compile("(" + U.re_class(sorted(punct + ascii_sym + cjk)) + ")")

    def words(self, text: str) -> list[str]:
        if self.strip_accents and not text.isascii():
            text = U.nfd(text)
        # whitespace first (a control character that is also white space splits words)
        parts = self._space.split(text)
        out = []
        for part in parts:
            part = self._drop.sub("", part)
            if self.strip_accents:
                part = self._mn.sub("", part)
            if self.lowercase:
                part = U.lowercase(part)
            out += [w for w in self._single.split(part) if w]
        return out

    def encode(self, text: str, out: list[int]) -> None:
        t2i = self.t2i
        maxlen = self.max_len
        for word in self.words(text):
            w = "\u2581" + word
            n = len(w)
            start = len(out)
            i = 0
            while i < n:
                for j in range(min(n, i + maxlen), i, -1):
                    t = t2i.get(w[i:j])
                    if t is not None:
                        out.append(t)
                        i = j
                        break
                else:
                    del out[start:]
                    break
            if len(out) == start:
                out.append(self.unk)


class _UGMEngine:
    """llama.cpp's UGM (T5-style unigram): the charsmap's longest-prefix rewriting with
    user-defined tokens kept as they are, spaces as "▁" (merged when remove_extra_whitespaces,
    one in front when add_space_prefix), then the best-scoring segmentation (Viterbi over the
    normal, user-defined and unused tokens; unknown characters cost min score - 10 and
    consecutive unknowns give one unknown token)."""

    def __init__(self, v: LlamaVocab):
        import struct

        from ..sentencepiece.normalizer import CharsMap

        raw = v.header.kv.get("tokenizer.ggml.precompiled_charsmap")
        self.charsmap = CharsMap(bytes(raw)) if raw is not None and len(raw) else None
        attrs = v.attrs
        self.matcher: dict[str, tuple[int, float]] = {}
        min_score = float("inf")
        for i, (t, a) in enumerate(zip(v.tokens, attrs)):
            if a & V.NORMAL:
                min_score = min(min_score, v.scores[i])
            if a & (V.NORMAL | V.USER_DEFINED | V.UNUSED):
                self.matcher[t] = (i, 0.0 if a & V.USER_DEFINED else v.scores[i])
        # float arithmetic, as llama.cpp computes it
        self.unk_score = struct.unpack("f", struct.pack("f", min_score - 10.0))[0] if self.matcher else -10.0
        self.unk = v.special["unk"]
        self.max_len = max((len(t) for t in self.matcher), default=1)
        self._prefixes: dict | None = None  # every prefix of a token -> its (id, score) or False
        self.user = sorted({v.tokens[i].encode("utf-8") for i, a in enumerate(attrs) if a & V.USER_DEFINED},
                           key=len, reverse=True)
        self.prepend = v.add_space_prefix
        self.merge = v.remove_extra_whitespaces
        self.space = b"\xe2\x96\x81" if v.escape_whitespaces else b" "

    def next_piece(self, data: bytes, i: int) -> tuple[bytes, int]:
        """The normalized bytes for `data` at `i` and how many input bytes they stand for: a
        user-defined token as it is, else the charsmap's replacement, else one UTF-8 character."""
        for u in self.user:
            if data.startswith(u, i):
                return u, len(u)
        if self.charsmap is not None:
            used, piece = self.charsmap.match(data, i)
            if piece is not None:
                return piece, used
        b = data[i]
        used = 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4
        return data[i:i + used], used

    def normalize(self, text: str) -> str:
        data = text.encode("utf-8")
        n = len(data)
        out = bytearray()
        space = self.space
        prepended = non_ws = False
        i = 0
        next_piece = self.next_piece
        while i < n:
            piece, used = next_piece(data, i)
            for c in piece:
                if c != 0x20:
                    if not non_ws:
                        non_ws = True
                        if (self.prepend and not prepended) or self.merge:
                            out += space
                            prepended = True
                    out.append(c)
                else:
                    non_ws = False
                    if not self.merge:
                        out += space
            i += used
        return out.decode("utf-8", "surrogateescape")

    def encode(self, text: str, out: list[int]) -> None:
        norm = self.normalize(text)
        n = len(norm)
        if not n:
            return
        back_tok, back_pos = self._lattice(norm)
        unk = self.unk
        ids = []
        prev_unknown = False
        at = n
        while True:
            t = back_tok[at]
            is_unknown = t == unk
            if not (prev_unknown and is_unknown):
                ids.append(t)
            at = back_pos[at]
            if at == 0:
                break
            prev_unknown = is_unknown
        ids.reverse()
        out += ids

    def _lattice(self, norm: str) -> tuple[list[int], list[int]]:
        """The best segmentation of `norm`: for each end position, the last token's id and
        where it starts (unknown pieces one character each)."""
        n = len(norm)
        get = self._prefixes
        if get is None:
            # The longest-match scan stops at the first substring that starts no token (the
            # same tokens are found in the same order, so ties break as before).
            pref: dict = {}
            for t, hit in self.matcher.items():
                for k in range(1, len(t)):
                    pref.setdefault(t[:k], False)
            pref.update(self.matcher)
            get = self._prefixes = pref
        get = get.get
        maxlen = self.max_len
        unk = self.unk
        unk_score = self.unk_score
        best = [-float("inf")] * (n + 1)
        back_tok = [unk] * (n + 1)
        back_pos = [0] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            cur = best[i]
            single = False
            for j in range(i + 1, min(n, i + maxlen) + 1):
                hit = get(norm[i:j])
                if hit is None:
                    break
                if hit:
                    if j == i + 1:
                        single = True
                    s = cur + hit[1]
                    if s > best[j]:
                        best[j] = s
                        back_tok[j] = hit[0]
                        back_pos[j] = i
            if not single:
                s = cur + unk_score
                if s > best[i + 1]:
                    best[i + 1] = s
                    back_tok[i + 1] = unk
                    back_pos[i + 1] = i
        return back_tok, back_pos


class GGUFTokenizer(IncrementalMixin):
    """The tokenizer of a GGUF file (see the module docstring for what each method matches)."""

    def __init__(self, vocab: LlamaVocab, name: str = "gguf"):
        self.vocab = vocab
        self.name = name
        self.kind = vocab.kind
        if vocab.kind == "BPE":
            self._engine = _BPEEngine(vocab)
        elif vocab.kind == "SPM":
            self._engine = _SPMEngine(vocab)
        elif vocab.kind == "WPM":
            self._engine = _WPMEngine(vocab)
        elif vocab.kind == "UGM":
            self._engine = _UGMEngine(vocab)
        else:
            raise UnsupportedTokenizerError(
                f"{vocab.what}: tokenizer.ggml.model {vocab.model!r} ({vocab.kind}) is not supported by anytok yet")
        attrs = vocab.attrs
        tokens = vocab.tokens
        # The tokens cut out of text before the model runs (parse_special=false: user-defined only).
        self._cut = [(tokens[i], i, attrs[i] & V.LSTRIP, attrs[i] & V.RSTRIP) for i in vocab.special_cache()
                     if not attrs[i] & (V.CONTROL | V.UNKNOWN)]
        self._cut_rx = re.compile("|".join(re.escape(t) for t, *_ in self._cut)) if self._cut else None
        self._pieces: list[bytes] | None = None
        self._encoding = None

    # ------------------------------------------------------------------------------------------
    # Encoding
    # ------------------------------------------------------------------------------------------
    def _partition(self, text: str) -> list:
        """llama.cpp's tokenizer_st_partition: a list of str (text) and int (token) fragments."""
        if self._cut_rx is None or not self._cut_rx.search(text):
            return [text]
        return [f[0] for f in self._partition_spans(text)]

    def _partition_spans(self, text: str) -> list:
        """`_partition` with spans: (text, start) for a text fragment, (token id, start, end)
        for a token cut out (its span holding the white space its lstrip / rstrip removed)."""
        frags: list = [(text, 0)]
        if self._cut_rx is None or not self._cut_rx.search(text):
            return frags
        for tok, tid, lstrip, rstrip in self._cut:
            if not any(len(f) == 2 and tok in f[0] for f in frags):
                continue
            new: list = []
            for frag in frags:
                if len(frag) == 3 or tok not in frag[0]:
                    new.append(frag)
                    continue
                f, base = frag
                while True:
                    at = f.find(tok)
                    if at < 0:
                        if f:
                            new.append((f, base))
                        break
                    left = f[:at]
                    if lstrip:
                        left = left.rstrip(_C_SPACE)
                    if left:
                        new.append((left, base))
                    end = base + at + len(tok)
                    f = f[at + len(tok):]
                    if rstrip:
                        kept = f.lstrip(_C_SPACE)
                        end += len(f) - len(kept)
                        f = kept
                    new.append((tid, base + len(left), end))
                    base = end
            frags = new
        return frags

    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        """llama.cpp's ids for `text` (add_special=`add_special_tokens`, parse_special=false)."""
        v = self.vocab
        out: list[int] = []
        if add_special_tokens:
            if self.kind == "WPM":
                out.append(v.special["bos"])
            elif v.add_bos:
                if v.special["bos"] is None:
                    raise UnsupportedTokenizerError(f"{self.name}: add_bos is set but there is no BOS token")
                out.append(v.special["bos"])
        if text:
            text = _repair(text)
            engine = self._engine.encode
            if self.kind == "SPM":
                prev_special = True
                for f in self._partition(text):
                    if isinstance(f, int):
                        out.append(f)
                        prev_special = True
                        continue
                    if v.add_space_prefix and prev_special:
                        f = " " + f
                    engine(f.replace(" ", "\u2581"), out)
                    prev_special = False
            else:
                for f in self._partition(text):
                    if isinstance(f, int):
                        out.append(f)
                    else:
                        engine(f, out)
        if add_special_tokens:
            if self.kind == "WPM":
                out.append(v.special["sep"])
            elif v.add_eos:
                if v.special["eos"] is None:
                    raise UnsupportedTokenizerError(f"{self.name}: add_eos is set but there is no EOS token")
                out.append(v.special["eos"])
        return out

    def encode_with_offsets(self, text: str, *, add_special_tokens: bool = False
                            ) -> tuple[list[int], list[tuple[int, int]]]:
        """`(ids, offsets)`: the ids of `encode(text, add_special_tokens=...)` and, for each
        token, its (start, end) code-point span in `text` (llama.cpp reports none; see
        anytok.gguf.offsets for how each engine's are made and which reference they equal).
        Tokens that add_special_tokens adds get (0, 0)."""
        from .offsets import encode_with_offsets

        return encode_with_offsets(self, text, add_special_tokens, _repair)

    def encode_batch(self, texts: Sequence[str], *, add_special_tokens: bool = False) -> list[list[int]]:
        return [self.encode(t, add_special_tokens=add_special_tokens) for t in texts]

    def count(self, text: str, *, add_special_tokens: bool = False) -> int:
        return len(self.encode(text, add_special_tokens=add_special_tokens))

    def count_till_limit(self, text: str, limit: int) -> int | None:
        """`count(text)` if it is at most `limit`, else None (the whole text is encoded)."""
        n = self.count(text)
        return n if n <= limit else None

    # ------------------------------------------------------------------------------------------
    # Decoding
    # ------------------------------------------------------------------------------------------
    def _piece_table(self) -> list[bytes]:
        if self._pieces is None:
            v = self.vocab
            bpe_bytes = v.kind == "BPE" and not v.escape_whitespaces
            if bpe_bytes:
                byte_of = {c: b for b, c in enumerate(_bytes_to_unicode())}
            pieces = []
            for tok, a in zip(v.tokens, v.attrs):
                if a & (V.UNKNOWN | V.CONTROL | V.USER_DEFINED):
                    pieces.append(tok.encode("utf-8"))
                elif a & V.NORMAL:
                    if bpe_bytes:
                        try:
                            pieces.append(bytes(byte_of[c] for c in tok))
                        except KeyError:
                            out = bytearray()
                            for c in tok:
                                if c in byte_of:
                                    out.append(byte_of[c])
                                else:
                                    out += b"[UNK_BYTE_0x" + c.encode("utf-8").hex().encode() + tok.encode("utf-8") + b"]"
                            pieces.append(bytes(out))
                    else:
                        pieces.append(tok.replace("\u2581", " ").encode("utf-8"))
                elif a & V.BYTE:
                    pieces.append(bytes([_byte_of_token(tok)]))
                else:
                    pieces.append(b"")
            self._pieces = pieces
        return self._pieces

    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        v = self.vocab
        pieces = self._piece_table()
        attrs = v.attrs
        n = len(pieces)
        out = bytearray()
        remove_space = v.add_space_prefix
        for i in ids:
            if not 0 <= i < n:
                raise ValueError(f"token id {i} is not in the vocabulary (0..{n - 1})")
            if skip_special_tokens and attrs[i] & (V.UNKNOWN | V.CONTROL):
                remove_space = False
                continue
            p = pieces[i]
            if remove_space and p[:1] == b" ":
                p = p[1:]
            remove_space = False
            out += p
        if v.clean_spaces:
            out = _clean_spaces(bytes(out))
        return bytes(out)

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> str:
        """llama.cpp's detokenized text (invalid UTF-8 replaced by U+FFFD)."""
        return self.decode_bytes(ids, skip_special_tokens=skip_special_tokens).decode("utf-8", "replace")

    def decode_batch(self, batch: Iterable[Iterable[int]], *, skip_special_tokens: bool = False) -> list[str]:
        return [self.decode(ids, skip_special_tokens=skip_special_tokens) for ids in batch]

    # ------------------------------------------------------------------------------------------
    # Vocabulary
    # ------------------------------------------------------------------------------------------
    @property
    def n_vocab(self) -> int:
        return len(self.vocab.tokens)

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.token_to_id.get(token)

    def id_to_token(self, i: int) -> str | None:
        return self.vocab.tokens[i] if 0 <= i < len(self.vocab.tokens) else None

    @property
    def special_tokens_set(self) -> set[str]:
        return {t for t, a in zip(self.vocab.tokens, self.vocab.attrs) if a & (V.CONTROL | V.UNKNOWN)}

    def is_special_token(self, i: int) -> bool:
        return 0 <= i < len(self.vocab.attrs) and bool(self.vocab.attrs[i] & (V.CONTROL | V.UNKNOWN))

    def token_env(self):
        """What `anytok.constrain` needs of this tokenizer (`constrain.tokens.TokenEnv`), as
        llguidance's `llguidance.llamacpp.lltokenizer_from_vocab` reads a llama.cpp vocabulary:
        each token's bytes are llama.cpp's piece for it (`llama_token_to_piece` with
        special=true: control, unknown and user-defined tokens as their text, byte tokens as
        that byte, `▁` as a space); control tokens and user-defined tokens shaped `<...>` are
        special (never allowed but for EOS); unused tokens have no bytes.  EOS: the file's EOS
        token.  Forced text is tokenized as llama.cpp does (add_special=false,
        parse_special=false); where that puts something in front of the text (SentencePiece's
        added space), llguidance tokenizes a sentinel byte and the text, and drops the
        sentinel's tokens: the same is done here."""
        from ..constrain.errors import UnsupportedFeatureError
        from ..constrain.tokens import TokenEnv

        v = self.vocab
        token_bytes = {}
        for t, (piece, a) in enumerate(zip(self._piece_table(), v.attrs)):
            if a & V.CONTROL or (a & V.USER_DEFINED and piece[:1] == b"<" and piece[-1:] == b">"):
                continue
            token_bytes[t] = piece
        raw = self.encode
        env = TokenEnv(token_bytes, self.n_vocab, v.special.get("eos"), {}, raw)
        if b"".join(token_bytes.get(t, b"") for t in raw("a")) == b"a":
            return env
        # A sentinel: a byte token in 1..31 that no longer token starts with, nor with a space
        # before it, so that its tokens never merge with the text after it.
        extended = {data[:k] for data in token_bytes.values() for k in (1, 2) if len(data) > k}
        singles = {data for data in token_bytes.values() if len(data) == 1}
        sentinel = next((b for b in range(1, 32) if bytes([b]) in singles
                         and bytes([b]) not in extended and bytes([32, b]) not in extended), None)
        if sentinel is None:
            raise UnsupportedFeatureError(f"GGUF tokenizer {self.name!r}: no sentinel byte for forced text",
                                          "its tokenizer adds to the text and no byte token in 1..31 stands alone")
        mark = chr(sentinel)
        lead = raw(mark)
        name = self.name

        def encode(text: str) -> list:
            if not text:
                return []
            ids = raw(mark + text)
            if ids[:len(lead)] != lead:
                raise ValueError(f"GGUF tokenizer {name!r}: the sentinel byte {sentinel} merged with {text!r}")
            return ids[len(lead):]

        env.encode = encode
        return env

    @property
    def chat_template(self) -> str | None:
        return self.vocab.chat_template

    def info(self) -> dict:
        """What `anytok inspect` prints: model type, pre-tokenizer, sizes, special tokens."""
        v = self.vocab
        specials = {k: {"id": i, "text": v.tokens[i]} for k, i in v.special.items() if i is not None}
        return {
            "model": v.model, "type": v.kind, "pre": v.pre_name, "pre_type": v.pre_type if v.kind == "BPE" else None,
            "n_vocab": len(v.tokens), "n_merges": len(v.merges_raw), "special_tokens": specials,
            "add_bos": v.add_bos, "add_eos": v.add_eos, "add_space_prefix": v.add_space_prefix,
            "n_control_tokens": sum(1 for a in v.attrs if a & V.CONTROL),
            "n_user_defined_tokens": sum(1 for a in v.attrs if a & V.USER_DEFINED),
            "chat_template": v.chat_template is not None,
            "gguf_version": v.header.version, "tensor_count": v.header.tensor_count,
        }

    # ------------------------------------------------------------------------------------------
    # Conversion
    # ------------------------------------------------------------------------------------------
    def to_encoding(self):
        """The tiktoken-style `Encoding` this tokenizer is, for byte-level BPE GGUFs without
        user-defined tokens: `enc.encode_ordinary(text) == tok.encode(text)`; its special tokens
        are the control and unknown tokens (`enc.encode(text, allowed_special="all")` cuts them
        out leftmost-longest, close to llama.cpp's parse_special=true).  Proving it takes about
        a second for a 128k vocabulary (once).  `UnsupportedTokenizerError` says why otherwise."""
        if self._encoding is None:
            if self.kind != "BPE" or not self._engine.byte_encode:
                raise UnsupportedTokenizerError(f"{self.name}: not a byte-level BPE vocabulary ({self.kind})")
            if self._cut:
                raise UnsupportedTokenizerError(
                    f"{self.name}: has user-defined tokens, which llama.cpp cuts out of any text "
                    "(an Encoding cuts special tokens only when allowed)")
            from ..pipeline.tokenizer import Tokenizer

            v = self.vocab
            added = [{"id": i, "content": v.tokens[i], "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True} for i in sorted(v.special_cache())]
            pipeline = Tokenizer.from_config(dict(self._engine.config, added_tokens=added), name=self.name)
            self._encoding = pipeline.to_encoding()
        return self._encoding

    def to_tokenizer_json(self) -> dict:
        """A Hugging Face tokenizer.json for a BPE GGUF (its control, user-defined and unknown
        tokens as added tokens).  `tokenizers` gives llama.cpp's ids on it for text that spells
        none of them: HF cuts every added token out of text (llama.cpp with parse_special=false
        only user-defined ones), leftmost first where llama.cpp goes longest first."""
        if self.kind != "BPE":
            raise UnsupportedTokenizerError(f"{self.name}: only BPE GGUF tokenizers convert to tokenizer.json "
                                            f"(this one is {self.kind})")
        v = self.vocab
        added = []
        for i in sorted(i for i, a in enumerate(v.attrs) if a & (V.CONTROL | V.USER_DEFINED | V.UNKNOWN)):
            a = v.attrs[i]
            added.append({"id": i, "content": v.tokens[i], "single_word": False, "lstrip": bool(a & V.LSTRIP),
                          "rstrip": bool(a & V.RSTRIP), "normalized": False,
                          "special": not a & V.USER_DEFINED})
        cfg = self._engine.config
        model = dict(cfg["model"])
        model["vocab"] = dict(model["vocab"])
        flat = model.pop("anytok_merges")
        model.pop("anytok_merge_made", None)
        tokens = v.tokens
        model["merges"] = [[tokens[a], tokens[b]] for a, b in zip(flat[::2], flat[1::2])]
        return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
                "normalizer": cfg["normalizer"], "pre_tokenizer": cfg["pre_tokenizer"], "post_processor": None,
                "decoder": cfg["decoder"], "model": model}

    def to_config(self) -> dict:
        """The tokenizer as a config anytok's `.atok` files store: the header's `tokenizer.*`
        and `general.name` / `general.architecture` key-values with their GGUF types."""
        h = self.vocab.header
        kv = {}
        types = {}
        for k, val in h.kv.items():
            if k.startswith("tokenizer.") or k in ("general.name", "general.architecture"):
                kv[k] = list(val) if not isinstance(val, (str, int, float, bool, list)) else val
                types[k] = h.types[k]
        return {"format": CONFIG_FORMAT, "name": self.name, "version": h.version, "kv": kv, "types": types}

    @classmethod
    def from_config(cls, cfg: dict) -> "GGUFTokenizer":
        from array import array

        from .header import GGUFHeader

        if cfg.get("format") != CONFIG_FORMAT:
            raise ValueError(f"not a GGUF tokenizer config (format {cfg.get('format')!r})")
        kv = dict(cfg["kv"])
        types = dict(cfg["types"])
        codes = {"array[float32]": "f", "array[int32]": "i", "array[uint8]": "B", "array[int8]": "b"}
        for k, t in types.items():
            if t in codes and isinstance(kv.get(k), list):
                kv[k] = array(codes[t], kv[k])
        header = GGUFHeader(int(cfg.get("version", 3)), 0, kv, types, "<", 0)
        name = cfg.get("name") or "gguf"
        return cls(LlamaVocab(header, name), name=name)

    def __repr__(self) -> str:
        return f"<anytok.gguf.GGUFTokenizer {self.name!r} {self.vocab.model}/{self.kind} n_vocab={self.n_vocab}>"


def _byte_of_token(tok: str) -> int:
    if len(tok) == 6 and tok.startswith("<0x") and tok.endswith(">"):
        try:
            return int(tok[3:5], 16)
        except ValueError:
            pass
    b = tok.encode("utf-8")
    return b[0] if b else 0


def _clean_spaces(text: bytes) -> bytes:
    """llama.cpp's clean_spaces passes over the detokenized bytes."""
    # " ?", " !", " .", " ,": drop the space
    text = re.sub(rb" (?=[?!.,])", b"", text)
    # " ' " between spaces: drop both spaces
    out = bytearray()
    i = 0
    n = len(text)
    while i < n:
        x = text[i]
        if x == 0x27 and 0 < i and i + 1 < n and text[i - 1] == 0x20 and text[i + 1] == 0x20 and out[-1:] == b" ":
            out[-1:] = b"'"
            i += 2
            continue
        out.append(x)
        i += 1
    # " 's", " 'm", " 're", " 've": drop the space
    return re.sub(rb" (?='(?:s|m|re|ve))", b"", bytes(out))
