"""HF `Pattern`s (`{"String": ...}` / `{"Regex": ...}`) and `SplitDelimiterBehavior`.

A pattern gives the spans of its matches; `split_by` cuts a text by them with one of HF's five
behaviours, exactly as `NormalizedString::split` in the Rust crate (including its handling of
consecutive matches, which is why the behaviours are written out literally).
"""

from __future__ import annotations

import re

from ..pretokenize import Splitter, UnsupportedPatternError
from ..errors import UnsupportedTokenizerError

__all__ = ["Pattern", "split_by", "BEHAVIORS"]

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


class Pattern:
    """A literal string or an Oniguruma regex, with its HF JSON form."""

    def __init__(self, spec, component: str):
        if isinstance(spec, str):  # a bare string (older files, Python constructors)
            spec = {"String": spec}
        if not isinstance(spec, dict) or len(spec) != 1:
            raise UnsupportedTokenizerError(f"{component}: unsupported pattern {spec!r}")
        ((kind, value),) = spec.items()
        self.spec = {kind: value}
        if kind == "String":
            self.literal: str | None = value
            self._rx = re.compile(re.escape(value)) if value else None
            self._splitter = None
        elif kind == "Regex":
            self.literal = None
            self._rx = None
            try:
                self._splitter = Splitter(value, dialect="onig")
            except UnsupportedPatternError as e:
                raise UnsupportedTokenizerError(f"{component}: {e}") from None
        else:
            raise UnsupportedTokenizerError(f"{component}: unsupported pattern kind {kind!r}")

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self._splitter is not None:
            return self._splitter.spans(text)
        if self._rx is None:
            return []  # an empty string matches nothing (HF)
        return [m.span() for m in self._rx.finditer(text)]

    def findall(self, text: str) -> list[str] | None:
        """The matched pieces, when they are known to cover `text` (else None)."""
        if self._splitter is not None:
            pieces = self._splitter.split(text)
            if len("".join(pieces)) == len(text):  # (see as_encoding.IsolatedSplitter.split)
                return pieces
        return None

    def replace(self, text: str, content: str) -> str:
        if self.literal is not None:
            return text.replace(self.literal, content) if self.literal else text
        spans = self.spans(text)
        if not spans:
            return text
        out, prev = [], 0
        for s, e in spans:
            out.append(text[prev:s])
            out.append(content)
            prev = e
        out.append(text[prev:])
        return "".join(out)


def split_by(text: str, spans: list[tuple[int, int]], behavior: str, invert: bool = False) -> list[str]:
    """Cut `text` at the match `spans` with an HF `SplitDelimiterBehavior`; empty pieces dropped."""
    if not text:
        return []
    parts: list[list] = []  # [start, end, is_match]
    prev = 0
    for s, e in spans:
        if prev != s:
            parts.append([prev, s, False])
        parts.append([s, e, True])
        prev = e
    if prev != len(text):
        parts.append([prev, len(text), False])
    if invert:
        for p in parts:
            p[2] = not p[2]
    if behavior == "Isolated":
        out = [(s, e) for s, e, _ in parts]
    elif behavior == "Removed":
        out = [(s, e) for s, e, m in parts if not m]
    elif behavior == "Contiguous":
        acc: list[list[int]] = []
        previous = False
        for s, e, m in parts:
            if m == previous and acc:
                acc[-1][1] = e
            else:
                acc.append([s, e])
            previous = m
        out = [(s, e) for s, e in acc]
    elif behavior == "MergedWithPrevious":
        acc = []
        previous = False
        for s, e, m in parts:
            if m and not previous and acc:
                acc[-1][1] = e
            else:
                acc.append([s, e])
            previous = m
        out = [(s, e) for s, e in acc]
    elif behavior == "MergedWithNext":
        acc = []
        previous = False
        for s, e, m in reversed(parts):
            if m and not previous and acc:
                acc[-1][0] = s
            else:
                acc.append([s, e])
            previous = m
        out = [(s, e) for s, e in reversed(acc)]
    else:
        raise UnsupportedTokenizerError(f"unsupported split behavior {behavior!r}")
    return [text[s:e] for s, e in out if e > s]
