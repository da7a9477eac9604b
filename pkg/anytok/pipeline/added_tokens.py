"""Added tokens: found in the text before anything else, as HF's `AddedVocabulary`.

Two matchers, as in the Rust crate: tokens with `normalized=False` are searched in the original
text; the rest of the text is normalized split by split, and tokens with `normalized=True` are
searched in the normalized text (their own content normalized the same way).  Matching is
leftmost-longest (Aho-Corasick `LeftmostLongest` in Rust); here a regex shaped like a trie of
the tokens, which `re` runs in C: at each position the longest token wins, and the scan goes on
after the match (a match refused by `single_word` is skipped, not retried shorter).

`lstrip` / `rstrip` widen a match over the White_Space around it.  `single_word` refuses a match
with a word character right before or after it: `\\w` of Unicode 16.0 (WORD_16 in `_tables.py`,
the class of the Whitespace pre-tokenizer; tests/test_hf_unicode.py probes it on every code
point), tested on the match as found, before lstrip/rstrip widen it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from . import _unicode as U

__all__ = ["AddedToken", "AddedVocabulary"]


@dataclass(frozen=True)
class AddedToken:
    id: int
    content: str
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True
    special: bool = False

    def to_config(self) -> dict:
        return {"id": self.id, "content": self.content, "single_word": self.single_word,
                "lstrip": self.lstrip, "rstrip": self.rstrip, "normalized": self.normalized,
                "special": self.special}

    @classmethod
    def from_config(cls, cfg: dict) -> "AddedToken":
        return cls(int(cfg["id"]), cfg["content"], bool(cfg.get("single_word", False)),
                   bool(cfg.get("lstrip", False)), bool(cfg.get("rstrip", False)),
                   bool(cfg.get("normalized", not cfg.get("special", False))), bool(cfg.get("special", False)))


def trie_regex(words: list[str]) -> re.Pattern[str] | None:
    """A regex matching, at each position, the longest of `words` that starts there."""
    words = [w for w in words if w]
    if not words:
        return None
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = True

    def render(node: dict) -> str:
        end = "" in node
        branches = [re.escape(ch) + render(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if end:  # greedy: the longer token first, this one when nothing longer matches
            body = f"(?:{body})?"
        return body

    return re.compile(render(trie), re.DOTALL)


def _word_classes():
    word = U.ranges("WORD_16")
    bmp = re.compile(U.re_class([(lo, min(hi, 0xFFFF)) for lo, hi in word if lo < 0x10000])).match
    return bmp, [b for lo, hi in word if hi >= 0x10000 for b in (max(lo, 0x10000), hi + 1)]


# WORD_16 cut to the BMP (a class that `re` checks by a bitmap; with its astral ranges it is a
# list of ~800 ranges scanned per check), and the astral ranges' bounds (bisect_right is odd
# inside one).
_BMP_WORD, _ASTRAL_WORD = _word_classes()


def _word_at(text: str, i: int) -> bool:
    """Whether text[i] is a word character (WORD_16)."""
    c = text[i]
    if c < "\U00010000":
        return _BMP_WORD(c) is not None
    return bisect_right(_ASTRAL_WORD, ord(c)) & 1 == 1


class _Matcher:
    def __init__(self, tokens: list[AddedToken], contents: list[str]):
        self.by_content = {}
        for tok, content in zip(tokens, contents):
            if content:
                self.by_content.setdefault(content, tok)
        self.rx = trie_regex(list(self.by_content))
        ws = U.char_class("WHITE_SPACE_17")
        self._lspace = re.compile(f"{ws}*\\Z")
        self._rspace = re.compile(f"{ws}*")
        self._word = _word_at

    def split(self, text: str) -> list[tuple[str, int | None]]:
        """(piece, id or None) covering `text` in order; pieces with an id are added tokens."""
        rx = self.rx
        if rx is None or not text:
            return [(text, None)]
        out: list[tuple[str, int | None]] = []
        start_offset = 0
        by_content = self.by_content
        for m in rx.finditer(text):
            start, stop = m.span()
            tok = by_content[m.group()]
            if tok.single_word and ((start > 0 and self._word(text, start - 1))
                                    or (stop < len(text) and self._word(text, stop))):
                continue  # inside a word: not this token, and no shorter one is tried
            if tok.lstrip:
                start = max(self._lspace.search(text, 0, start).start(), start_offset)
            if tok.rstrip:
                stop = self._rspace.match(text, stop).end()
            if start_offset < start:
                out.append((text[start_offset:start], None))
            out.append((text[start:stop], tok.id))
            start_offset = stop
        if start_offset < len(text):
            out.append((text[start_offset:], None))
        return out


class AddedVocabulary:
    def __init__(self, tokens: list[AddedToken], normalizer=None):
        self.tokens = list(tokens)
        self.id_to_content = {t.id: t.content for t in self.tokens}
        self.content_to_id = {t.content: t.id for t in self.tokens}
        self.special = {t.content for t in self.tokens if t.special}
        # Rust: special tokens first, then the others, each in their order.
        ordered = [t for t in self.tokens if t.special] + [t for t in self.tokens if not t.special]
        raw = [t for t in ordered if not t.normalized]
        norm = [t for t in ordered if t.normalized]
        self.raw = _Matcher(raw, [t.content for t in raw])
        contents = [normalizer.normalize(t.content) if normalizer is not None else t.content for t in norm]
        self.normalized = _Matcher(norm, contents)
        self.has_raw = self.raw.rx is not None
        self.has_normalized = self.normalized.rx is not None
