"""Normalizers: text -> text, as Hugging Face tokenizers' `normalizers`.

Each one is a small object with `normalize(text) -> str` and `to_config() -> dict` (the HF JSON
form).  `from_config(dict)` builds any of them.  All Unicode data comes from pinned tables
(`_unicode.py`), so results do not depend on the interpreter.

`Precompiled` (SentencePiece's charsmap) is provided by `anytok.sentencepiece` when available
(see `_precompiled`); until then it raises `UnsupportedTokenizerError`.
"""

from __future__ import annotations

import re

from ..errors import UnsupportedTokenizerError
from . import _unicode as U
from .patterns import Pattern

__all__ = ["from_config"]


class Normalizer:
    type = ""

    def normalize(self, text: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_config(self) -> dict:
        return {"type": self.type}


class NFC(Normalizer):
    type = "NFC"

    def normalize(self, text: str) -> str:
        return U.nfc(text)


class NFD(Normalizer):
    type = "NFD"

    def normalize(self, text: str) -> str:
        return U.nfd(text)


class NFKC(Normalizer):
    type = "NFKC"

    def normalize(self, text: str) -> str:
        return U.nfkc(text)


class NFKD(Normalizer):
    type = "NFKD"

    def normalize(self, text: str) -> str:
        return U.nfkd(text)


class Lowercase(Normalizer):
    type = "Lowercase"

    def normalize(self, text: str) -> str:
        return U.lowercase(text)


class StripAccents(Normalizer):
    """Removes combining marks (general category M of Unicode 9.0), as HF's `StripAccents`."""

    type = "StripAccents"

    def __init__(self):
        self._rx = re.compile(U.char_class("MARKS_9") + "+")

    def normalize(self, text: str) -> str:
        return text if text.isascii() else self._rx.sub("", text)


class Replace(Normalizer):
    type = "Replace"

    def __init__(self, pattern, content: str):
        self.pattern = Pattern(pattern, "normalizer Replace")
        self.content = content

    def normalize(self, text: str) -> str:
        return self.pattern.replace(text, self.content)

    def to_config(self) -> dict:
        return {"type": "Replace", "pattern": dict(self.pattern.spec), "content": self.content}


class Prepend(Normalizer):
    type = "Prepend"

    def __init__(self, prepend: str):
        self.prepend = prepend

    def normalize(self, text: str) -> str:
        return self.prepend + text if text else text

    def to_config(self) -> dict:
        return {"type": "Prepend", "prepend": self.prepend}


class Strip(Normalizer):
    """Strips White_Space (Rust's `char::is_whitespace`) on the left and/or right."""

    type = "Strip"

    def __init__(self, strip_left: bool = True, strip_right: bool = True):
        self.strip_left = bool(strip_left)
        self.strip_right = bool(strip_right)
        ws = U.char_class("WHITE_SPACE_17")
        self._left = re.compile(f"\\A{ws}+")
        self._right = re.compile(f"{ws}+\\Z")

    def normalize(self, text: str) -> str:
        if self.strip_left:
            text = self._left.sub("", text)
        if self.strip_right:
            text = self._right.sub("", text)
        return text

    def to_config(self) -> dict:
        return {"type": "Strip", "strip_left": self.strip_left, "strip_right": self.strip_right}


_CHINESE = re.compile(
    "([\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f\U0002b740-\U0002b81f"
    "\U0002b920-\U0002ceaf\uf900-\ufaff\U0002f800-\U0002fa1f])"
)


class BertNormalizer(Normalizer):
    """BERT's cleanup, CJK spacing, accent stripping and lowercasing, in that order.

    clean_text: drops NUL, U+FFFD and "controls" (Cc, Cf, Co of Unicode 8.0 except \\t \\n \\r),
    turns White_Space into " ".  strip_accents (default: = lowercase): NFD (Unicode 9.0), then
    drops Mn (Unicode 8.0).  lowercase: Rust's per-character lowercase (Unicode 17.0).
    """

    type = "BertNormalizer"

    def __init__(self, clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True):
        self.clean_text = bool(clean_text)
        self.handle_chinese_chars = bool(handle_chinese_chars)
        self.strip_accents = strip_accents
        self.lowercase = bool(lowercase)
        controls = U.ranges("CONTROL_8")
        # Remove \t \n \r from the control ranges (they are whitespace for BERT).
        removed = _minus(controls, [(0x09, 0x0A), (0x0D, 0x0D)]) + [(0, 0), (0xFFFD, 0xFFFD)]
        self._drop = re.compile(U.re_class(sorted(removed)) + "+")
        self._space = re.compile(U.char_class("WHITE_SPACE_17"))
        self._mn = re.compile(U.char_class("NONSPACING_MARK_8") + "+")

    def normalize(self, text: str) -> str:
        if self.clean_text:
            text = self._drop.sub("", text)
            text = self._space.sub(" ", text)
        if self.handle_chinese_chars and not text.isascii():
            # " c " for each CJK character c: splitting on the captured character and joining
            # with " " gives that without re's Python-level template expansion per match.
            text = " ".join(_CHINESE.split(text))
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if strip and not text.isascii():
            text = self._mn.sub("", U.nfd(text))
        if self.lowercase:
            text = U.lowercase(text)
        return text

    def to_config(self) -> dict:
        return {"type": "BertNormalizer", "clean_text": self.clean_text,
                "handle_chinese_chars": self.handle_chinese_chars,
                "strip_accents": self.strip_accents, "lowercase": self.lowercase}


def _minus(ranges: list[tuple[int, int]], cut: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for lo, hi in ranges:
        pieces = [(lo, hi)]
        for clo, chi in cut:
            nxt = []
            for a, b in pieces:
                if chi < a or clo > b:
                    nxt.append((a, b))
                    continue
                if a < clo:
                    nxt.append((a, clo - 1))
                if chi < b:
                    nxt.append((chi + 1, b))
            pieces = nxt
        out.extend(pieces)
    return out


class ByteLevel(Normalizer):
    """Maps every byte of the UTF-8 text to its GPT-2 byte-level character."""

    type = "ByteLevel"

    def normalize(self, text: str) -> str:
        from .pre_tokenizers import bytes_to_unicode_text

        return bytes_to_unicode_text(text)


class Sequence(Normalizer):
    type = "Sequence"

    def __init__(self, normalizers: list[Normalizer]):
        self.normalizers = list(normalizers)

    def normalize(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def to_config(self) -> dict:
        return {"type": "Sequence", "normalizers": [n.to_config() for n in self.normalizers]}


def _precompiled(cfg: dict) -> Normalizer:
    # TODO(sentencepiece): anytok.sentencepiece provides the charsmap normalizer; hook it here
    # as `from ..sentencepiece.precompiled import Precompiled; return Precompiled(cfg)`.
    try:
        from ..sentencepiece import precompiled  # type: ignore[attr-defined]
    except ImportError:
        raise UnsupportedTokenizerError(
            "normalizer Precompiled (SentencePiece charsmap) is not supported yet"
        ) from None
    return precompiled.from_config(cfg)  # pragma: no cover - provided by the other module


def from_config(cfg: dict | None) -> Normalizer | None:
    if cfg is None:
        return None
    kind = cfg.get("type")
    if kind == "Sequence":
        return Sequence([from_config(c) for c in cfg.get("normalizers", [])])
    simple = {"NFC": NFC, "NFD": NFD, "NFKC": NFKC, "NFKD": NFKD, "Lowercase": Lowercase,
              "StripAccents": StripAccents, "ByteLevel": ByteLevel}
    if kind in simple:
        return simple[kind]()
    if kind == "Replace":
        return Replace(cfg["pattern"], cfg["content"])
    if kind == "Prepend":
        return Prepend(cfg["prepend"])
    if kind == "Strip":
        return Strip(cfg.get("strip_left", True), cfg.get("strip_right", True))
    if kind == "BertNormalizer":
        return BertNormalizer(cfg.get("clean_text", True), cfg.get("handle_chinese_chars", True),
                              cfg.get("strip_accents"), cfg.get("lowercase", True))
    if kind == "Precompiled":
        return _precompiled(cfg)
    raise UnsupportedTokenizerError(f"normalizer {kind!r} is not supported")
