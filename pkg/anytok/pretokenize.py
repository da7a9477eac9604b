"""Pre-tokenization: split text into pieces with a tiktoken-style pattern, using stdlib `re` only.

tiktoken compiles its split pattern with Rust's `fancy-regex`, whose `\\p{L}`, `\\s`, ... come
from the Unicode tables of Rust's `regex` crate.  Python's `re` knows neither `\\p{..}` nor the
same Unicode version, so a pattern is translated here, once, into plain `re` syntax in which
every class is spelled out as explicit code point ranges taken from the pinned tables in
`_unicode_tables.py`.  The translation keeps the pattern's structure (alternation order,
greedy/lazy/possessive quantifiers, look-around), and both engines are backtracking engines
with leftmost-first alternation, so the matches are the same; the test suite proves it on
every code point in many contexts.

Three compiled variants of each pattern are kept, because stdlib `re` is fast on a class only
while the class stays small:

* **ASCII**: every class cut down to U+0000..U+007F.  Exact on text for which
  `str.isascii()` holds (English prose, code), and the fastest.
* **BMP**: every class cut down to U+0000..U+FFFF.  `re` stores such a class as a bitmap
  (O(1) per test).  Exact on text without astral characters.
* **astral text**: `re` checks class ranges above U+FFFF one by one, which is slow.  So an
  astral character is first replaced by a BMP stand-in that belongs to exactly the same
  classes of this pattern (same "signature"), the BMP variant runs on the stand-in text, and
  the original text is cut at the same offsets (the replacement keeps the length).  When
  some astral signature has no BMP stand-in (e.g. a pattern naming an astral literal), the
  full pattern is used instead, which is exact but slower.

Text containing lone surrogates is not split here: `Encoding` first repairs it the way tiktoken
does (surrogate pairs joined, lone ones replaced by U+FFFD).

Two dialects are parsed.  `"fancy"` (the default) is tiktoken's: Rust's regex / fancy-regex.
`"onig"` is Oniguruma's default (Ruby) syntax, which Hugging Face `tokenizers` compiles its
`Split` / `Replace` regexes with; where the two read the same text differently:

* `X{n,m}+` is `(?:X{n,m})+` (not possessive), `X{n}?` is `(?:X{n})?` (not lazy), `{,n}` is
  `{0,n}`; `X*+`, `X++`, `X?+` are possessive in both.
* `^` / `$` are always line anchors (`$` before any "\\n" and at the end), `\\Z` is "end, or before
  a final newline", `\\z` the end; the flag `m` means "dot matches newline" (Ruby's /m).
* `\\h` is an ASCII hex digit.  Case-insensitive literals that a multi-character case folding
  could match (Oniguruma matches "ß" with `(?i:ss)`) are refused.
* Oniguruma's `\\p{..}` and `\\s` follow Unicode 16.0 (probed in tests/test_hf_unicode.py), the
  same tables as tiktoken's; `\\w` in a pattern (it needs the Alphabetic property) is not supported
  yet -- the Whitespace pre-tokenizer, which is `\\w+|[^\\w\\s]+`, has its own class and table.
"""

from __future__ import annotations

import bisect
import re
import threading
from itertools import accumulate, islice
from typing import Callable

from . import _pattern_cache
from .errors import UnsupportedPatternError
from . import unicode as ucd
from .unicode import Ranges

__all__ = ["Splitter", "UnsupportedPatternError", "translate_pattern"]


# --------------------------------------------------------------------------------------------
# Parsing (Rust regex / fancy-regex syntax, the subset tokenizer patterns use)
# --------------------------------------------------------------------------------------------
# AST nodes are tuples:
#   ("set", ranges)                 one character from a set (literals become 1-element sets)
#   ("seq", [node, ...])            concatenation
#   ("alt", [node, ...])            alternation, leftmost first
#   ("group", kind, node)           kind: ":" "=" "!" "<=" "<!" ">"
#   ("repeat", node, lo, hi, mode)  hi None = unbounded; mode "" greedy, "?" lazy, "+" possessive
#   ("assert", what)                "start" "end" "line_start" "line_end"

_SIMPLE_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "v": 0x0B, "a": 0x07, "e": 0x1B}


# ASCII letter pairs that are the full case folding of some character (CaseFolding.txt, status
# F): Oniguruma lets `(?i:ss)` match "ß", `(?i:st)` match "ﬆ", ...
_MULTI_FOLD_PAIRS = frozenset({"ss", "st", "ff", "fi", "fl"})
_HEX_DIGITS: Ranges = ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))


class _Parser:
    def __init__(self, pattern: str, dialect: str = "fancy"):
        if dialect not in ("fancy", "onig"):
            raise ValueError(f"unknown regex dialect {dialect!r}")
        self.p = pattern
        self.i = 0
        self.onig = dialect == "onig"

    def error(self, msg: str) -> UnsupportedPatternError:
        return UnsupportedPatternError(f"{msg} at offset {self.i} of split pattern {self.p!r}")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def take(self) -> str:
        if self.i >= len(self.p):
            raise self.error("unexpected end of pattern")
        c = self.p[self.i]
        self.i += 1
        return c

    def parse(self):
        node = self.parse_alt(flags=frozenset())
        if self.i != len(self.p):
            raise self.error("unbalanced ')'")
        return node

    def parse_alt(self, flags):
        branches = []
        while True:
            seq, flags = self.parse_seq(flags)
            branches.append(seq)
            if self.peek() == "|":
                self.i += 1
                continue
            return branches[0] if len(branches) == 1 else ("alt", branches)

    def parse_seq(self, flags):
        items = []
        prev_letter = ""
        while self.i < len(self.p) and self.peek() not in "|)":
            if self.p.startswith("(?", self.i) and self._is_bare_flag_group():
                flags = self._parse_bare_flags(flags)
                prev_letter = ""
                continue
            start = self.i
            atom = self.parse_atom(flags)
            if self.onig and "i" in flags:
                letter = self.p[start] if self.i == start + 1 and self.p[start].isascii() and self.p[start].isalpha() else ""
                if letter and (prev_letter + letter).lower() in _MULTI_FOLD_PAIRS:
                    raise self.error(f"case-insensitive {prev_letter + letter!r} can match a multi-character case folding")
                prev_letter = letter
            items.append(self.parse_quantifier(atom))
        return ("seq", items), flags

    def _is_bare_flag_group(self) -> bool:
        m = re.compile(r"\(\?[a-zA-Z-]*\)").match(self.p, self.i)
        return m is not None

    def _parse_bare_flags(self, flags):
        m = re.compile(r"\(\?([a-zA-Z-]*)\)").match(self.p, self.i)
        self.i = m.end()
        return self._apply_flags(flags, m.group(1))

    def _apply_flags(self, flags, spec: str):
        on, _, off = spec.partition("-")
        new = set(flags)
        for ch in on + off:
            if ch not in ("im" if self.onig else "ims"):
                raise self.error(f"unsupported regex flag {ch!r}")
        if self.onig:
            # Ruby's (?m) is "dot matches newline"; its ^ and $ are always line anchors.
            on, off = on.replace("m", "s"), off.replace("m", "s")
        new.update(on)
        new.difference_update(off)
        return frozenset(new)

    def parse_quantifier(self, atom):
        c = self.peek()
        if c == "*":
            lo, hi = 0, None
            self.i += 1
        elif c == "+":
            lo, hi = 1, None
            self.i += 1
        elif c == "?":
            lo, hi = 0, 1
            self.i += 1
        elif c == "{":
            m = re.compile(r"\{(\d*)(,(\d*))?\}" if self.onig else r"\{(\d+)(,(\d*))?\}").match(self.p, self.i)
            if not m or (self.onig and not m.group(1) and not m.group(3)):
                if self.onig:
                    return atom  # Oniguruma reads a "{" that starts no interval as a literal
                raise self.error("bad repetition")
            lo = int(m.group(1) or 0)
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            self.i = m.end()
            if self.onig and self.peek() == "+":
                # Ruby syntax: an interval followed by "+" is that interval, repeated.
                self.i += 1
                if atom[0] == "assert":
                    raise self.error("quantified assertion")
                return ("repeat", ("group", ":", ("repeat", atom, lo, hi, "")), 1, None, "")
            if self.onig and self.peek() == "?" and m.group(2) is None:
                # Ruby syntax: "X{n}?" is "(?:X{n})?", not a lazy X{n}.
                self.i += 1
                if atom[0] == "assert":
                    raise self.error("quantified assertion")
                return ("repeat", ("group", ":", ("repeat", atom, lo, hi, "")), 0, 1, "")
        else:
            return atom
        mode = ""
        if self.peek() in ("?", "+"):
            mode = self.take()
        if atom[0] == "assert":
            raise self.error("quantified assertion")
        return ("repeat", atom, lo, hi, mode)

    def parse_atom(self, flags):
        c = self.take()
        if c == "(":
            return self.parse_group(flags)
        if c == "[":
            return ("set", self.parse_class_body(flags))
        if c == "\\":
            return self.parse_escape(flags, in_class=False)
        if c == ".":
            if "s" in flags:
                return ("set", ucd.difference(ucd.EVERYTHING, ucd.SURROGATES))
            return ("set", ucd.difference(ucd.EVERYTHING, ((0x0A, 0x0A),) + ucd.SURROGATES))
        if c == "^":
            return ("assert", "line_start" if "m" in flags or self.onig else "start")
        if c == "$":
            return ("assert", "line_end" if "m" in flags or self.onig else "end")
        if c in "*+?" or (c == "{" and not self.onig):
            raise self.error("nothing to repeat")
        return ("set", self.literal(ord(c), flags))

    def literal(self, cp: int, flags) -> Ranges:
        if "i" in flags:
            ch = chr(cp)
            if ch.isascii():
                return ucd.ascii_case_class(ch)
            if ucd.contains(ucd.category("LC") or (), cp) or ucd.contains(ucd.category("Lm") or (), cp):
                raise self.error(f"case-insensitive non-ASCII letter {ch!r} is not supported")
        return ((cp, cp),)

    def finish_set(self, ranges: Ranges, flags) -> Ranges:
        """Apply case-insensitivity to a class (before any negation), as Rust's regex does."""
        if "i" not in flags:
            return ranges
        non_ascii = ucd.difference(ranges, ucd.ASCII)
        if ucd.intersect(non_ascii, ucd.union(ucd.category("LC"), ucd.category("Lm"))):
            raise self.error("case-insensitive class with non-ASCII letters is not supported")
        extra = []
        for lo, hi in ucd.intersect(ranges, ucd.ASCII):
            for cp in range(lo, hi + 1):
                extra.extend(ucd.ascii_case_class(chr(cp)))
        return ucd.union(ranges, tuple(extra))

    def parse_group(self, flags):
        kind = ":"
        inner_flags = flags
        if self.peek() == "?":
            self.i += 1
            for prefix, k in (("<=", "<="), ("<!", "<!"), ("=", "="), ("!", "!"), (">", ">"), (":", ":")):
                if self.p.startswith(prefix, self.i):
                    self.i += len(prefix)
                    kind = k
                    break
            else:
                m = re.compile(r"P?<([A-Za-z_][A-Za-z0-9_]*)>").match(self.p, self.i)
                if m:
                    self.i = m.end()
                else:
                    m = re.compile(r"([a-zA-Z-]*):").match(self.p, self.i)
                    if not m:
                        raise self.error("unsupported group syntax")
                    inner_flags = self._apply_flags(flags, m.group(1))
                    self.i = m.end()
        node = self.parse_alt(inner_flags)
        if self.take() != ")":
            raise self.error("missing ')'")
        return ("group", kind, node)

    def parse_escape(self, flags, in_class: bool):
        c = self.take()
        if c in "pP":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    raise self.error("unterminated \\p{")
                name = self.p[self.i + 1 : end]
                self.i = end + 1
            else:
                name = self.take()
            negate = c == "P"
            if name.startswith("^"):
                name, negate = name[1:], not negate
            ranges = ucd.category(name)
            if ranges is None:
                if name.replace("_", "").lower() in ("whitespace", "wspace", "space"):
                    ranges = ucd.white_space()
                else:
                    raise self.error(f"unsupported Unicode class \\{c}{{{name}}}")
            if negate:
                ranges = ucd.difference(ucd.complement(ranges), ucd.SURROGATES)
            return ranges if in_class else ("set", self.finish_set(ranges, flags))
        if c in "sSdD" or (self.onig and c in "hH"):
            ranges = ucd.white_space() if c in "sS" else _HEX_DIGITS if c in "hH" else ucd.category("Nd")
            if c.isupper():
                ranges = ucd.difference(ucd.complement(ranges), ucd.SURROGATES)
            return ranges if in_class else ("set", ranges)
        if c in "wWbB":
            raise self.error(f"\\{c} (Unicode word characters) is not supported")
        if c in _SIMPLE_ESCAPES:
            cp = _SIMPLE_ESCAPES[c]
        elif c in "xuU":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                digits = self.p[self.i + 1 : end]
                self.i = end + 1
            else:
                width = {"x": 2, "u": 4, "U": 8}[c]
                digits = self.p[self.i : self.i + width]
                self.i += width
            try:
                cp = int(digits, 16)
            except ValueError:
                raise self.error(f"bad escape \\{c}{digits}") from None
        elif c == "A" and not in_class:
            return ("assert", "start")
        elif c == "z" and not in_class:
            return ("assert", "end")
        elif c == "Z" and not in_class and self.onig:
            return ("assert", "end_or_final_newline")
        elif self.onig and c.isdigit():
            raise self.error(f"unsupported escape \\{c} (back-reference or octal)")
        elif c.isalnum():
            raise self.error(f"unsupported escape \\{c}")
        else:
            cp = ord(c)
        if in_class:
            return ((cp, cp),)
        return ("set", self.literal(cp, flags))

    def parse_class_body(self, flags) -> Ranges:
        negate = False
        if self.peek() == "^":
            negate = True
            self.i += 1
        items: list[tuple[int, int]] = []
        first = True
        while True:
            c = self.take()
            if c == "]" and not first:
                break
            first = False
            if c == "[":
                if self.peek() == ":":
                    raise self.error("POSIX classes are not supported")
                items.extend(self.parse_class_body(flags))
                continue
            if c in "&-~" and self.peek() == c and self.peek(1) != "]":
                raise self.error("class set operations are not supported")
            if c == "\\":
                got = self.parse_escape(flags, in_class=True)
            else:
                got = ((ord(c), ord(c)),)
            if len(got) == 1 and got[0][0] == got[0][1] and self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                d = self.take()
                if d == "\\":
                    end = self.parse_escape(flags, in_class=True)
                    if len(end) != 1 or end[0][0] != end[0][1]:
                        raise self.error("bad class range")
                    hi = end[0][0]
                elif d == "[":
                    raise self.error("bad class range")
                else:
                    hi = ord(d)
                if hi < got[0][0]:
                    raise self.error("class range out of order")
                items.append((got[0][0], hi))
            else:
                items.extend(got)
        ranges = self.finish_set(ucd.normalize(items), flags)
        if negate:
            ranges = ucd.difference(ucd.complement(ranges), ucd.SURROGATES)
        return ranges


def parse_pattern(pattern: str, dialect: str = "fancy"):
    """Parse a split pattern into anytok's small regex AST.

    `dialect`: "fancy" for tiktoken's (Rust regex / fancy-regex) syntax, "onig" for the
    Oniguruma (Ruby) syntax of Hugging Face tokenizers.
    """
    return _factor(_Parser(pattern, dialect).parse())


# --------------------------------------------------------------------------------------------
# Rendering to stdlib `re` syntax
# --------------------------------------------------------------------------------------------


_CLASS_SPECIAL = frozenset("\\]^-[")


def _char(cp: int) -> str:
    # Printable characters are written as themselves: `re` parses them much faster than
    # escapes, which matters for classes with thousands of ranges.
    if cp > 0x20 and cp != 0x7F and not 0xD800 <= cp <= 0xDFFF and cp <= 0xFFFF:
        ch = chr(cp)
        if ch not in _CLASS_SPECIAL and (cp > 0x7F or ch.isalnum() or ch == "_"):
            return ch
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _render_set(ranges: Ranges) -> str:
    if not ranges:
        return "[^\\x00-\\U0010ffff]"  # matches nothing, and may still be quantified
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _char(ranges[0][0])
    return "[" + _class_body(ranges) + "]"


def _class_body(ranges: Ranges) -> str:
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_char(lo))
        elif hi == lo + 1:
            parts.append(_char(lo) + _char(hi))
        else:
            parts.append(f"{_char(lo)}-{_char(hi)}")
    return "".join(parts)


_ASSERTS = {"start": r"\A", "end": r"\Z", "line_start": "(?m:^)", "line_end": "(?m:$)",
            "end_or_final_newline": r"(?=\n?\Z)"}


def _size(ranges: Ranges) -> int:
    return sum(hi - lo + 1 for lo, hi in ranges)


def _render(node, universe: Ranges | None, tighten: bool = True) -> str:
    """`re` source for the AST `node`, every class cut down to `universe` (None: all of
    Unicode); with `tighten`, first made cheaper to run for text within `universe` (_tighten)."""
    if tighten:
        node = _tighten(_within(node, universe), at_end=True)
    return _emit(node, universe)


def _emit(node, universe: Ranges | None) -> str:
    kind = node[0]
    if kind == "set":
        ranges = node[1]
        if universe is not None:
            ranges = ucd.intersect(ranges, universe)
            if universe is ucd.BMP:
                # The BMP variant only ever sees BMP text, so a class may as well be written
                # as the negation of its complement in the BMP, when that names fewer code
                # points: `re` compiles a class in a Python loop over every code point of its
                # ranges (~20 ms for o200k's pattern, which names CJK in four classes).
                rest = ucd.intersect(ucd.complement(ranges), universe)
                if rest and _size(rest) < _size(ranges):
                    return "[^" + _class_body(rest) + "]"
        return _render_set(ranges)
    if kind == "seq":
        return "".join(_emit(n, universe) for n in node[1])
    if kind == "alt":
        return "|".join(_emit(n, universe) for n in node[1])
    if kind == "group":
        return f"(?{node[1]}{_emit(node[2], universe)})"
    if kind == "repeat":
        _, inner, lo, hi, mode = node
        body = _emit(inner, universe)
        if inner[0] in ("seq", "alt") or (inner[0] == "set" and len(body) > 1 and body[0] != "[" and body[0] != "\\"):
            body = f"(?:{body})"
        if (lo, hi) == (0, None):
            q = "*"
        elif (lo, hi) == (1, None):
            q = "+"
        elif (lo, hi) == (0, 1):
            q = "?"
        elif hi is None:
            q = f"{{{lo},}}"
        elif lo == hi:
            q = f"{{{lo}}}"
        else:
            q = f"{{{lo},{hi}}}"
        return body + q + mode
    if kind == "assert":
        return _ASSERTS[node[1]]
    raise AssertionError(kind)


def _factor(node):
    """Factor a common first character out of an alternation: (?:'s|'t|'re) -> '(?:s|t|re).

    Both engines try the branches in order after the same one-character match, so the result
    is the same; `re` just stops re-testing that character for every branch.
    """
    kind = node[0]
    if kind in ("seq", "alt"):
        node = (kind, [_factor(n) for n in node[1]])
    elif kind == "group":
        node = ("group", node[1], _factor(node[2]))
    elif kind == "repeat":
        node = ("repeat", _factor(node[1]), *node[2:])
    if node[0] != "alt":
        return node
    heads = []
    for branch in node[1]:
        if branch[0] != "seq" or len(branch[1]) < 2 or branch[1][0][0] != "set":
            return node
        heads.append(branch[1][0])
    if any(h != heads[0] for h in heads):
        return node
    rest = ("alt", [("seq", branch[1][1:]) for branch in node[1]])
    return ("seq", [heads[0], ("group", ":", rest)])


# --------------------------------------------------------------------------------------------
# Tightening: quantifiers made possessive where backtracking into them can never succeed
# --------------------------------------------------------------------------------------------
# `re` backtracks into a greedy quantifier whenever what follows fails, and tries an optional
# character again without it; on code, whose spaces and punctuation fail several branches of a
# split pattern before one matches, that is a quarter of the split.  Three rewrites give the
# same matches on every text within the universe the pattern was cut to (the classes are
# compared after the cut, so a rewrite may hold for ASCII text and not for all of Unicode):
#
# 1. `X?Y` -> `X?+Y` (X one character class) when Y cannot match the empty string and cannot
#    start with a character of X: had X matched a character c, Y would have to start at c
#    without it, and cannot.
# 2. In a branch of the whole pattern, a greedy `Q` -> possessive when everything after it in
#    the branch matches at any position (only optional parts, no assertions): once the branch's
#    end is reached the match is taken, so nothing ever backtracks into Q.
# 3. A branch ending in `S*N+` or `S*N` (N a subset of S; o200k's and cl100k's `\s*[\r\n]+`)
#    -> `(?:T*+N)++` with T = S - N: both match S-characters up to the last N-character of the
#    run of S-characters (and fail if it has none), but the original gets there by giving back
#    one character of the run at a time.


def _within(node, universe: Ranges | None):
    """`node` with every class cut down to `universe` (None: unchanged)."""
    if universe is None:
        return node
    kind = node[0]
    if kind == "set":
        return ("set", ucd.intersect(node[1], universe))
    if kind in ("seq", "alt"):
        return (kind, [_within(n, universe) for n in node[1]])
    if kind == "group":
        return ("group", node[1], _within(node[2], universe))
    if kind == "repeat":
        return ("repeat", _within(node[1], universe), *node[2:])
    return node


def _first(node) -> tuple[Ranges, bool] | None:
    """(the characters a match of `node` may start with, whether it may be empty), or None if
    that depends on an assertion or a look-around."""
    kind = node[0]
    if kind == "set":
        return node[1], False
    if kind == "repeat":
        got = _first(node[1])
        return None if got is None else (got[0], got[1] or node[2] == 0)
    if kind == "group":
        return _first(node[2]) if node[1] in (":", ">") else None
    if kind in ("seq", "alt"):
        chars: Ranges = ()
        empty = kind == "seq"
        for n in node[1]:
            got = _first(n)
            if got is None:
                return None
            chars = ucd.union(chars, got[0])
            if kind == "alt":
                empty = empty or got[1]
            elif not got[1]:
                return chars, False
        return chars, empty
    return None


def _always_matches(node) -> bool:
    """Whether `node` matches (at least the empty string) at every position of every text."""
    kind = node[0]
    if kind == "repeat":
        return node[2] == 0 or _always_matches(node[1])
    if kind == "seq":
        return all(map(_always_matches, node[1]))
    if kind == "alt":
        return any(map(_always_matches, node[1]))
    if kind == "group":
        return node[1] in (":", ">") and _always_matches(node[2])
    return False


def _tighten(node, at_end: bool = False):
    """Rewrites 1-3 above; `at_end`: nothing follows `node` in the pattern, so reaching its end
    ends the match (rewrites 2 and 3 apply)."""
    kind = node[0]
    if kind == "alt":
        return ("alt", [_tighten(n, at_end) for n in node[1]])
    if kind == "group":
        return ("group", node[1], _tighten(node[2], at_end and node[1] in (":", ">")))
    if kind == "repeat":
        # (inside a repeat, what follows the inner node may be the inner node again)
        node = ("repeat", _tighten(node[1]), *node[2:])
        if at_end and node[4] == "":
            node = node[:4] + ("+",)
        return node
    if kind != "seq":
        return node
    last = len(node[1]) - 1
    # (a group that ends the branch ends the match too; a repeat there is rewrite 2's)
    items = [_tighten(n, at_end and i == last and n[0] == "group") for i, n in enumerate(node[1])]
    for i in range(len(items) - 1):
        item = items[i]
        if item[0] == "repeat" and item[1][0] == "set" and item[2:] == (0, 1, ""):
            rest = _first(("seq", items[i + 1 :]))
            if rest is not None and not rest[1] and not ucd.intersect(item[1][1], rest[0]):
                items[i] = item[:4] + ("+",)  # rewrite 1
    if not at_end:
        return ("seq", items)
    if len(items) >= 2:
        s, n = items[-2], items[-1]
        if n[0] == "set":
            n = ("repeat", n, 1, 1, "")
        if (s[0] == n[0] == "repeat" and s[1][0] == n[1][0] == "set" and s[2:] == (0, None, "")
                and n[2] == 1 and n[3] in (1, None) and n[4] == ""
                and not ucd.difference(n[1][1], s[1][1])):
            rest = ucd.difference(s[1][1], n[1][1])
            unit = ("seq", [("repeat", ("set", rest), 0, None, "+"), n[1]]) if rest else n[1]
            items[-2:] = [("repeat", unit, 1, None, "+")]  # rewrite 3
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if item[0] == "repeat" and item[4] == "":
            items[i] = item[:4] + ("+",)  # rewrite 2
        if not _always_matches(item):
            break
    return ("seq", items)


def _sets(node, out: list[Ranges]) -> None:
    if node[0] == "set":
        out.append(node[1])
    elif node[0] in ("seq", "alt"):
        for n in node[1]:
            _sets(n, out)
    elif node[0] == "group":
        _sets(node[2], out)
    elif node[0] == "repeat":
        _sets(node[1], out)


def translate_pattern(pattern: str, universe: Ranges | None = None, dialect: str = "fancy") -> str:
    """Translate a fancy-regex (or, with dialect="onig", Oniguruma) pattern into stdlib `re`.

    With `universe` (e.g. `unicode.ASCII`), every class is cut down to it: the result is then
    exact only on text whose characters all lie in the universe.
    """
    return _render(parse_pattern(pattern, dialect), universe)


# --------------------------------------------------------------------------------------------
# Astral stand-ins
# --------------------------------------------------------------------------------------------


NO_STAND_IN = "\x80"  # in the table of _ascii_stand_ins: no ASCII character will do


def _ascii_stand_ins(sets: list[Ranges]) -> tuple[str, str]:
    """For the classes of a pattern, the ASCII character each non-ASCII one can stand in for.

    Returns `(starts, reps)`, two strings of equal length: the characters from `starts[i]` up
    to `starts[i + 1]` (excluded; the last run ends at U+10FFFF) belong to exactly the same
    classes as the ASCII character `reps[i]`, or to those of no ASCII character if `reps[i]`
    is NO_STAND_IN.  Runs are maximal: neighbours have different `reps`.
    """
    cuts = {0x80, ucd.MAX_CODE_POINT + 1}
    for s in sets:
        for lo, hi in s:
            cuts.update(c for c in (lo, hi + 1) if 0x80 < c <= ucd.MAX_CODE_POINT)
    seg_starts = sorted(cuts)[:-1]
    seg_sig = [0] * len(seg_starts)
    ascii_sig = [0] * 0x80
    for bit, s in enumerate(sets):
        for lo, hi in s:
            for cp in range(lo, min(hi, 0x7F) + 1):
                ascii_sig[cp] |= 1 << bit
            k = bisect.bisect_left(seg_starts, max(lo, 0x80))
            while k < len(seg_starts) and seg_starts[k] <= hi:
                seg_sig[k] |= 1 << bit
                k += 1
    by_sig: dict[int, str] = {}
    for cp in reversed(range(0x80)):
        by_sig[ascii_sig[cp]] = chr(cp)  # the lowest ASCII character of each signature
    starts, reps = [], []
    for start, sig in zip(seg_starts, seg_sig):
        rep = by_sig.get(sig, NO_STAND_IN)
        if not reps or reps[-1] != rep:
            starts.append(chr(start))
            reps.append(rep)
    return "".join(starts), "".join(reps)


def _astral_stand_ins(sets: list[Ranges]) -> list[tuple[int, int, int]] | None:
    """For the classes of a pattern, map astral code points to BMP ones with the same signature.

    Returns sorted `(first, last, stand_in)` runs covering U+10000..U+10FFFF, or None when some
    astral signature has no BMP representative.
    """
    cuts = {0, 0x10000, ucd.MAX_CODE_POINT + 1}
    for s in sets:
        for lo, hi in s:
            cuts.add(lo)
            cuts.add(hi + 1)
    bounds = sorted(c for c in cuts if c <= ucd.MAX_CODE_POINT + 1)
    # Signature of each elementary segment: which sets contain it.
    seg_starts = bounds[:-1]
    seg_sig: list[int] = [0] * len(seg_starts)
    for bit, s in enumerate(sets):
        for lo, hi in s:
            k = bisect.bisect_left(seg_starts, lo)
            while k < len(seg_starts) and seg_starts[k] <= hi:
                seg_sig[k] |= 1 << bit
                k += 1
    bmp_rep: dict[int, int] = {}
    for start, end, sig in zip(seg_starts, bounds[1:], seg_sig):
        if start >= 0x10000:
            break
        for cp in range(start, end):
            if not 0xD800 <= cp <= 0xDFFF:
                bmp_rep.setdefault(sig, cp)
                break
    runs = []
    for start, end, sig in zip(seg_starts, bounds[1:], seg_sig):
        if start < 0x10000:
            continue
        rep = bmp_rep.get(sig)
        if rep is None:
            return None
        if runs and runs[-1][2] == rep and runs[-1][1] == start - 1:
            runs[-1] = (runs[-1][0], end - 1, rep)
        else:
            runs.append((start, end - 1, rep))
    return runs


# --------------------------------------------------------------------------------------------
# The splitter
# --------------------------------------------------------------------------------------------

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
SURROGATE = re.compile("[\ud800-\udfff]")
_NON_ASCII = re.compile("[^\x00-\x7f]")
# Up to this many non-ASCII characters, a text of up to FEW_TEXT_MAX characters may be split by
# the ASCII variant with ASCII stand-ins (see Splitter._split_few) while the BMP variant is not
# compiled yet.  (Finding the pieces that hold a stand-in costs ~9 ms per million characters,
# about what compiling the BMP variant of o200k's pattern costs.)
FEW_NON_ASCII = 1024
FEW_TEXT_MAX = 1 << 20


class Splitter:
    """Split text into pieces exactly as tiktoken's regex does (see the module docstring).

    Only the ASCII variant is compiled up front; the others are compiled on first use (the BMP
    one takes ~10 ms for o200k's pattern, the full one much longer).  Until the BMP variant is
    needed, a text with a handful of non-ASCII characters is split by the ASCII variant, each
    such character replaced by an ASCII one that belongs to the same classes (`_split_few`).
    """

    def __init__(self, pattern: str, dialect: str = "fancy"):
        self.pattern = pattern
        self.dialect = dialect
        self._ast_node = None
        # The bundled patterns' ASCII variants are cached as source (_pattern_cache.py,
        # generated and checked by the tests), so loading them parses nothing.
        cached = dialect == "fancy" and pattern in _pattern_cache.ASCII
        source = _pattern_cache.ASCII[pattern] if cached else None
        self._ascii = re.compile(source if source is not None else _render(self._ast, ucd.ASCII))
        # (starts, reps) of _ascii_stand_ins, cached for the bundled patterns; else made when
        # first needed (None until then).
        self._ascii_reps: tuple[str, str] | None = _pattern_cache.STAND_INS[pattern] if cached else None
        # Whether the pieces always cover the text (no character skipped), so that callers need
        # not check.  Known of the bundled patterns: each has alternatives for letters, numbers,
        # whitespace and everything else, each of which matches any single such character, and
        # findall tries every alternative at every position (tests/test_unicode_tables.py checks
        # it on every code point).  Other patterns: unknown, False.
        self.covers = cached
        self._bmp_rx: re.Pattern[str] | None = None
        self._full_rx: re.Pattern[str] | None = None
        self._stand_in_fn: Callable[[str], str] | None | bool = False
        self._lock = threading.Lock()

    @property
    def _ast(self):
        """The parsed pattern (parsed on first use when the ASCII variant came from the cache)."""
        node = self._ast_node
        if node is None:
            node = self._ast_node = parse_pattern(self.pattern, self.dialect)
        return node

    @property
    def _bmp(self) -> re.Pattern[str]:
        rx = self._bmp_rx
        if rx is None:
            with self._lock:
                if self._bmp_rx is None:
                    source = _pattern_cache.BMP.get(self.pattern) if self.dialect == "fancy" else None
                    self._bmp_rx = re.compile(source if source is not None else _render(self._ast, ucd.BMP))
                rx = self._bmp_rx
        return rx

    @property
    def _full(self) -> re.Pattern[str]:
        rx = self._full_rx
        if rx is None:
            with self._lock:
                if self._full_rx is None:
                    self._full_rx = re.compile(_render(self._ast, None))
                rx = self._full_rx
        return rx

    @property
    def _stand_in(self) -> Callable[[str], str] | None:
        """A function giving a text with each astral character replaced by its BMP stand-in
        (None: impossible)."""
        fn = self._stand_in_fn
        if fn is False:
            sets: list[Ranges] = []
            _sets(self._ast, sets)
            runs = _astral_stand_ins(sets)
            if runs is None:
                fn = None
            else:
                starts = [r[0] for r in runs]
                reps = ["", *(chr(r[2]) for r in runs)]  # reps[bisect_right(starts, cp)]: cp's run's
                bisect_right = bisect.bisect_right

                def fn(text: str) -> str:
                    # The astral characters and the text between them by two C passes, then a
                    # lookup per astral character: a re.sub callback per character cost twice
                    # as much (a code-point sweep has a million of them).
                    found = _ASTRAL.findall(text)
                    out = [""] * (2 * len(found) + 1)
                    out[0::2] = _ASTRAL.split(text)
                    out[1::2] = [reps[bisect_right(starts, ord(c))] for c in found]
                    return "".join(out)

            self._stand_in_fn = fn
        return fn  # type: ignore[return-value]

    def split(self, text: str) -> list[str]:
        """The pieces of `text`, in order (text must hold no lone surrogates)."""
        if text.isascii():
            return self._ascii.findall(text)
        if self._bmp_rx is None and len(text) <= FEW_TEXT_MAX:
            pieces = self._split_few(text)
            if pieces is not None:
                return pieces
        if _ASTRAL.search(text) is None:
            return self._bmp.findall(text)
        stand_in = self._stand_in
        if stand_in is None:
            return self._full.findall(text)
        return self._cut_like(text, stand_in(text))

    def _split_few(self, text: str) -> list[str] | None:
        """The pieces of a text with at most FEW_NON_ASCII non-ASCII characters, each of which
        has an ASCII stand-in (else None): the ASCII variant splits the text with the
        stand-ins in, and the pieces holding one are cut from `text` instead.

        Exact because the pattern sees a character only through the classes it belongs to: the
        stand-in text gives the same matches as `text`, and on ASCII text the ASCII variant is
        the pattern.  It spares compiling the BMP variant (~10 ms for o200k's pattern) for text
        that is ASCII but for a few characters (a name, a dash, an emoji in source code): the
        first encode of a short such text in a process takes microseconds instead.
        """
        found = list(islice(_NON_ASCII.finditer(text), FEW_NON_ASCII + 1))
        if len(found) > FEW_NON_ASCII:
            return None
        table = self._ascii_reps
        if table is None:
            if self.dialect != "fancy":
                return None
            sets: list[Ranges] = []
            _sets(self._ast, sets)
            table = self._ascii_reps = _ascii_stand_ins(sets)
        starts, reps = table
        parts = []
        prev = 0
        for m in found:
            rep = reps[bisect.bisect_right(starts, m.group()) - 1]
            if rep == NO_STAND_IN:
                return None
            k = m.start()
            parts += text[prev:k], rep
            prev = k + 1
        parts.append(text[prev:])
        proxy = "".join(parts)
        pieces = self._ascii.findall(proxy)
        # (Comprehensions rather than `map` over builtins here and in _cut_like: under Pyodide a
        # call through `map` costs about twice as much; natively they are level, or better.)
        bounds = list(accumulate([len(p) for p in pieces], initial=0))
        if bounds[-1] != len(text):
            # Some characters matched no branch, so the pieces are not contiguous.
            return [text[a:b] for a, b in (m.span() for m in self._ascii.finditer(proxy))]
        for m in found:
            i = bisect.bisect_right(bounds, m.start()) - 1
            pieces[i] = text[bounds[i] : bounds[i + 1]]
        return pieces

    def _cut_like(self, text: str, proxy: str) -> list[str]:
        """Split `proxy` (same length and classes as `text`); return the same spans of `text`."""
        pieces = self._bmp.findall(proxy)
        bounds = list(accumulate([len(p) for p in pieces], initial=0))
        if bounds[-1] != len(text):
            # Some characters matched no branch, so the pieces are not contiguous.
            return [text[a:b] for a, b in (m.span() for m in self._bmp.finditer(proxy))]
        return [text[a:b] for a, b in zip(bounds, islice(bounds, 1, None))]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) character offsets of the pieces."""
        if text.isascii():
            rx = self._ascii
        elif _ASTRAL.search(text) is None:
            rx = self._bmp
        elif self._stand_in is None:
            rx = self._full
        else:
            text = self._stand_in(text)
            rx = self._bmp
        return [m.span() for m in rx.finditer(text)]
