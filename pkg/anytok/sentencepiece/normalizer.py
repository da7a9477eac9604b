"""SentencePiece normalization, exactly as `normalizer.cc` (`Normalizer::Normalize`) does it.

Two stages.

1. **Rewriting** (`NormalizePrefix`, repeated from left to right).  At the current position:
   a user-defined symbol of the model (longest one) is copied unchanged; otherwise the longest
   key of the *precompiled charsmap* that starts here is replaced by its value; otherwise one
   character is copied unchanged.  The charsmap is a blob `<u32 trie size><Darts double-array
   trie of UTF-8 keys><NUL-terminated values>` (the trie maps a key to the offset of its value).
2. **Whitespace**, piece by piece over the rewritten pieces: with `remove_extra_whitespaces`,
   leading spaces go, a piece's leading spaces go when the text so far ends in a space, and
   trailing U+2581 (or spaces) go at the end; `escape_whitespaces` turns every space into
   U+2581; `add_dummy_prefix` puts one U+2581 in front (at the end with the trainer's
   `treat_whitespace_as_suffix`).

`Normalizer.normalize_reference` is that algorithm, step by step on UTF-8 bytes, slow and
plain.  `Normalizer.normalize` gives the same result with C-level string operations:

* The charsmap's keys are whole characters (checked when it is loaded; otherwise `normalize`
  uses the reference).  A match of two or more characters starting at position i needs the
  character at i + 1 to be a *second character*: one that continues some key after its first
  character.  For NFKC these are the combining marks and a few others; ordinary text has none.
  So one regex finds the few positions that can start a longer match; there the trie is walked,
  and everything between them is a single-character mapping (`str.translate`).
* With pieces of at most one space each, the piece-wise whitespace rule is the same as
  collapsing runs of spaces in the whole text; so `normalize` works on the whole string when
  no charsmap value and no user-defined symbol holds two spaces in a row (else: reference).

`Precompiled` is the charsmap alone (rewriting without the whitespace stage): Hugging Face's
`Precompiled` normalizer in `tokenizer.json`.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

from ..errors import UnsupportedTokenizerError
from .darts import DoubleArray, _offset

__all__ = ["CharsMap", "Normalizer", "Precompiled", "SPACE_SYMBOL"]

SPACE_SYMBOL = "\u2581"
# normalizer.h: kMaxTrieResultsSize; only that many prefix matches are looked at.
_MAX_TRIE_RESULTS = 32


def _utf8_len(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead < 0xE0:
        return 2
    if 0xE0 <= lead < 0xF0:
        return 3
    if 0xF0 <= lead < 0xF5:
        return 4
    return 0


class CharsMap:
    """A precompiled charsmap: longest-prefix rewriting rules on UTF-8 text."""

    def __init__(self, blob: bytes):
        blob = bytes(blob)
        # Normalizer::DecodePrecompiledCharsMap, with its checks and messages.
        if len(blob) <= 4:
            raise UnsupportedTokenizerError("normalizer_spec.precompiled_charsmap: blob for normalization rule is broken")
        trie_size = int.from_bytes(blob[:4], "little")
        if trie_size >= len(blob):
            raise UnsupportedTokenizerError("normalizer_spec.precompiled_charsmap: trie data size exceeds the input blob size")
        if trie_size < 1024 or trie_size & 0x3FF:
            raise UnsupportedTokenizerError("normalizer_spec.precompiled_charsmap: trie data size is not divisible by 1024")
        self.blob = blob
        self.trie = DoubleArray(blob[4 : 4 + trie_size])
        self.values = blob[4 + trie_size :]
        if not self.values or self.values[-1] != 0:
            raise UnsupportedTokenizerError("normalizer_spec.precompiled_charsmap: normalized block must be null terminated")
        self._value_cache: dict[int, bytes] = {}
        self._analyse()

    # -- the exact rule, on bytes -------------------------------------------------------------

    def value_at(self, offset: int) -> bytes:
        v = self._value_cache.get(offset)
        if v is None:
            end = self.values.index(0, offset)
            v = self._value_cache[offset] = self.values[offset:end]
        return v

    def match(self, data: bytes, pos: int) -> tuple[int, bytes | None]:
        """The longest rule at `data[pos:]`: (key length in bytes, replacement), or (0, None)."""
        longest = 0
        value = 0
        for k, (v, length) in enumerate(self.trie.common_prefix_search(data, pos)):
            if k >= _MAX_TRIE_RESULTS:
                break
            if longest == 0 or length > longest:
                longest, value = length, v
        if longest == 0 or value >= len(self.values):
            return 0, None
        return longest, self.value_at(value)

    # -- a character-level view for the fast path ---------------------------------------------

    def _analyse(self) -> None:
        """Derive `single`, `second`, `max_key_chars` and `regular` from the trie.

        Every unit at position p with label L is the child labelled L of the node whose walk
        position is p ^ L (that is how a walk reaches it), so one pass over the units gives
        every node's children; the trie (a DAWG: suffixes are shared) is then walked by
        character, each node once.
        """
        units = self.trie.units
        n = len(units)
        children: dict[int, list[tuple[int, int]]] = {}
        for p in range(n):
            unit = units[p]
            label = unit & 0x800000FF
            if 0 < label < 256:
                children.setdefault(p ^ label, []).append((label, p ^ _offset(unit)))
        # A node ends a key when the unit that led to it has its leaf bit: walk position ->
        # value offset.
        has_leaf = {}
        for p in range(n):
            unit = units[p]
            label = unit & 0x800000FF
            if 0 < label < 256 and unit & 0x100:
                nxt = p ^ _offset(unit)
                if nxt < n:
                    has_leaf[nxt] = units[nxt] & 0x7FFFFFFF
        self._children = children
        self._leaf = has_leaf
        regular = True

        def char_edges(node: int) -> list[tuple[str, int]] | None:
            # The complete UTF-8 characters leading out of `node`: [(char, node after it)].
            # None when a key ends inside a character or a path is not UTF-8.
            out = []
            for lead, nxt in children.get(node, ()):
                size = _utf8_len(lead)
                if size == 0:
                    return None
                frontier = [(bytes((lead,)), nxt)]
                for _ in range(size - 1):
                    step = []
                    for prefix, node2 in frontier:
                        if node2 in has_leaf:
                            return None  # a key ends mid-character
                        for b, nxt2 in children.get(node2, ()):
                            if not 0x80 <= b < 0xC0:
                                return None
                            step.append((prefix + bytes((b,)), nxt2))
                    frontier = step
                for raw, node2 in frontier:
                    try:
                        ch = raw.decode("utf-8")
                    except UnicodeDecodeError:
                        return None
                    out.append((ch, node2))
            return out

        root = _offset(units[0]) if n else 0
        first = char_edges(root)
        single: dict[str, str] = {}
        second: set[str] = set()
        depth_memo: dict[int, int] = {}
        if first is None:
            regular = False
            first = []
        for ch, node in first:
            if node in has_leaf:
                try:
                    single[ch] = self.value_at(has_leaf[node]).decode("utf-8")
                except (UnicodeDecodeError, ValueError):
                    regular = False
        # Second characters, and the longest key in characters (iteratively, nodes memoised).
        edges_memo: dict[int, list[tuple[str, int]]] = {}

        def edges(node: int) -> list[tuple[str, int]]:
            nonlocal regular
            e = edges_memo.get(node)
            if e is None:
                e = char_edges(node)
                if e is None:
                    regular = False
                    e = []
                edges_memo[node] = e
            return e

        seen_first_nodes = set()
        for ch, node in first:
            if node in seen_first_nodes:
                continue
            seen_first_nodes.add(node)
            for ch2, _ in edges(node):
                second.add(ch2)
        # Longest path (in characters) from the root: post-order over the DAG.
        stack = [(root, False)]
        on_path = set()
        while stack:
            node, done = stack.pop()
            if done:
                on_path.discard(node)
                depth_memo[node] = max((1 + depth_memo[nxt] for _, nxt in edges(node)), default=0)
                continue
            if node in depth_memo:
                continue
            if node in on_path:  # a cycle cannot happen in a trie; be safe
                regular = False
                depth_memo[node] = 0
                continue
            on_path.add(node)
            stack.append((node, True))
            for _, nxt in edges(node):
                if nxt not in depth_memo:
                    stack.append((nxt, False))
        self.max_key_chars = depth_memo.get(root, 0)
        # Every value must be UTF-8 (checked for the values that multi-character keys reach on
        # demand in `match_text`; single characters above).
        self.single = single
        self.second = frozenset(second)
        self.regular = regular
        self.has_double_space = any("  " in v for v in single.values()) or self._values_have_double_space()

    def _values_have_double_space(self) -> bool:
        # Values are NUL-separated in the blob; a cheap superset test on the raw bytes.
        return b"  " in self.values

    def match_text(self, text: str, pos: int) -> tuple[int, str | None]:
        """`match` at character position `pos` of `text`: (key length in characters, value)."""
        window = text[pos : pos + self.max_key_chars].encode("utf-8")
        length, value = self.match(window, 0)
        if value is None:
            return 0, None
        return len(window[:length].decode("utf-8")), value.decode("utf-8")


@functools.lru_cache(maxsize=8)
def charsmap_for(blob: bytes) -> CharsMap:
    """The `CharsMap` of `blob`, shared (it is immutable) by every normalizer that uses it."""
    return CharsMap(blob)


class Normalizer:
    """SentencePiece's normalizer for one `NormalizerSpec` (and the trainer's whitespace side).

    `user_defined` are the model's USER_DEFINED pieces: they are never rewritten.
    """

    def __init__(
        self,
        *,
        precompiled_charsmap: bytes = b"",
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined: Iterable[str] = (),
    ):
        self.charsmap = charsmap_for(bytes(precompiled_charsmap)) if precompiled_charsmap else None
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.user_defined = tuple(sorted(set(user_defined), key=lambda s: (-len(s.encode("utf-8")), s)))
        self._ud_bytes = tuple(s.encode("utf-8") for s in self.user_defined)
        self._space = SPACE_SYMBOL if escape_whitespaces else " "
        cm = self.charsmap
        self._fast = cm is None or cm.regular
        if remove_extra_whitespaces and (any("  " in s for s in self.user_defined) or (cm is not None and cm.has_double_space)):
            self._fast = False
        # Positions where the fast path must look closer: a user-defined symbol starts there
        # (every start, overlapping ones too), or the next character is a second character.
        alts = []
        if self.user_defined:
            alts.append("(?=" + "|".join(map(re.escape, self.user_defined)) + ")")
        if cm is not None and cm.second:
            alts.append("(?=.[" + "".join(map(_class_escape, sorted(cm.second))) + "])")
        self._special_re = re.compile("|".join(alts), re.S) if alts else None
        self._translate = {ord(k): v for k, v in cm.single.items()} if cm is not None else {}

    # -- the reference: normalizer.cc step by step --------------------------------------------

    def _prefix(self, data: bytes, pos: int) -> tuple[bytes, int]:
        """NormalizePrefix: (rewritten piece, bytes consumed) at `data[pos:]`."""
        for ud in self._ud_bytes:  # longest first
            if data.startswith(ud, pos):
                return ud, len(ud)
        if self.charsmap is not None:
            length, value = self.charsmap.match(data, pos)
            if value is not None and length <= len(data) - pos:
                return value, length
        size = _utf8_len(data[pos]) or 1
        return data[pos : pos + size], size

    def normalize_reference(self, text: str) -> str:
        data = text.encode("utf-8")
        if not data:
            return ""
        space = b" "
        sym = self._space.encode("utf-8")
        pos = 0
        end = len(data)
        if self.remove_extra_whitespaces:
            while pos < end:
                piece, size = self._prefix(data, pos)
                if piece != space:
                    break
                pos += size
        if pos >= end:
            return ""
        out = bytearray()
        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out += sym
        is_prev_space = self.remove_extra_whitespaces
        while pos < end:
            piece, size = self._prefix(data, pos)
            if is_prev_space:
                piece = piece.lstrip(b" ")
            if piece:
                out += piece.replace(b" ", sym) if self.escape_whitespaces else piece
                is_prev_space = piece.endswith(b" ")
            pos += size
            if not self.remove_extra_whitespaces:
                is_prev_space = False
        if self.remove_extra_whitespaces:
            while out.endswith(sym):
                del out[-len(sym) :]
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out += sym
        return out.decode("utf-8")

    # -- the fast path ------------------------------------------------------------------------

    def rewrite(self, text: str) -> str:
        """Stage 1 only: user-defined symbols kept, charsmap rules applied (the concatenation
        of the rewritten pieces).  Requires a regular charsmap."""
        cm = self.charsmap
        if cm is None:
            return text
        special = self._special_re
        table = self._translate
        if special is None:
            return text.translate(table)
        out = []
        pos = 0
        ud = self.user_defined
        for m in special.finditer(text):
            i = m.start()
            if i < pos:
                continue  # inside the previous match: the scan never stops there
            if i > pos:
                out.append(text[pos:i].translate(table))
            for s in ud:
                if text.startswith(s, i):
                    out.append(s)
                    pos = i + len(s)
                    break
            else:
                length, value = cm.match_text(text, i)
                if value is None:
                    out.append(text[i])
                    pos = i + 1
                else:
                    out.append(value)
                    pos = i + length
        out.append(text[pos:].translate(table))
        return "".join(out)

    def normalize(self, text: str) -> str:
        """The normalized text that sentencepiece's model sees (as `Normalizer::Normalize`)."""
        if not text:
            return ""
        if not self._fast:
            return self.normalize_reference(text)
        s = self.rewrite(text) if self.charsmap is not None else text
        if self.remove_extra_whitespaces:
            if "  " in s:
                s = _SPACES.sub(" ", s)
            s = s.lstrip(" ")
            if not s:
                # Whether the leading-space loop ate the whole input decides whether a suffix
                # dummy is still added; rare enough for the reference to answer.
                return self.normalize_reference(text)
        if self.escape_whitespaces:
            s = s.replace(" ", SPACE_SYMBOL)
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            s = self._space + s
        if self.remove_extra_whitespaces:
            s = s.rstrip(self._space)
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            s += self._space
        return s


_SPACES = re.compile(" {2,}")
_CLUSTER_MEMO = 1 << 14


def _class_escape(ch: str) -> str:
    return "\\" + ch if ch in "\\]^-[" else ch


class Precompiled:
    """Hugging Face's `Precompiled` normalizer: a model's charsmap, without whitespace handling.

    Two semantics over the same charsmap:

    * `normalize(text)`: sentencepiece's rewriting (longest rule at each position, from the
      left), what a `.model` file's normalizer does before its whitespace stage.
    * `normalize_hf(text, grapheme_spans)`: what `tokenizers` does with a tokenizer.json
      `Precompiled` normalizer (`spm_precompiled` + tokenizers' normalizers/precompiled.rs):
      the text is cut into extended grapheme clusters; a cluster of fewer than 6 UTF-8 bytes
      that starts with some rule's key is replaced whole by the value of the *shortest* such
      rule (the rest of the cluster is dropped); otherwise each character is replaced by its
      own rule's value, if any.  The two agree except inside clusters of several characters
      (a letter with combining marks, CR LF, Hangul jamo sequences, emoji sequences...).
      `grapheme_spans(text)` must give the (start, end) character offsets of the clusters of
      two or more characters, in order, as Rust's `unicode-segmentation` (the Unicode version
      of the tokenizers build) cuts them; single-character clusters need no data.
    """

    def __init__(self, precompiled_charsmap: bytes):
        self._normalizer = Normalizer(
            precompiled_charsmap=precompiled_charsmap,
            add_dummy_prefix=False,
            remove_extra_whitespaces=False,
            escape_whitespaces=False,
        )
        self.charsmap = self._normalizer.charsmap
        self._cluster_memo: dict[str, str] = {}

    def normalize(self, text: str) -> str:
        if not text:
            return text
        n = self._normalizer
        if n.charsmap is None or not n.charsmap.regular:
            return n.normalize_reference(text)
        return n.rewrite(text)

    def _shortest(self, chunk: str) -> str | None:
        # spm_precompiled's `transform`: the value of the first (shortest) key that is a
        # prefix of the chunk.
        cm = self.charsmap
        data = chunk.encode("utf-8")
        found = cm.trie.common_prefix_search(data)
        if not found:
            return None
        value = found[0][0]
        if value >= len(cm.values):
            return None
        try:
            return cm.value_at(value).decode("utf-8")
        except UnicodeDecodeError:
            raise UnsupportedTokenizerError("Precompiled.precompiled_charsmap: a value is not UTF-8") from None

    def normalize_hf(self, text: str, grapheme_spans) -> str:
        if not text or self.charsmap is None:
            return text
        cm = self.charsmap
        if cm.regular:
            table = self._normalizer._translate
            translate = lambda s: s.translate(table)  # noqa: E731
        else:
            translate = lambda s: "".join(self._per_char(s))  # noqa: E731
        out = []
        append = out.append
        pos = 0
        # Each distinct cluster's replacement is worked out once (a cluster depends on nothing
        # around it); the memo is emptied when it grows past _CLUSTER_MEMO entries.
        memo = self._cluster_memo
        for begin, end in grapheme_spans(text):
            if begin > pos:
                append(translate(text[pos:begin]))
            cluster = text[begin:end]
            value = memo.get(cluster)
            if value is None:
                value = self._shortest(cluster) if len(cluster.encode("utf-8")) < 6 else None
                if value is None:
                    value = "".join(self._per_char(cluster))
                if len(memo) >= _CLUSTER_MEMO:
                    memo.clear()
                memo[cluster] = value
            append(value)
            pos = end
        append(translate(text[pos:]))
        return "".join(out)

    def _per_char(self, s: str):
        for ch in s:
            value = self._shortest(ch)
            yield ch if value is None else value
