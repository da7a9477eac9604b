"""Regular-expression syntax: pattern text -> a small tree over code-point classes.

Data flow: `parse(pattern)` reads the pattern (the dialect of Rust's `regex` crate, which
llguidance uses) and returns a tree of tuples:

    ("set", ranges)          one code point from `ranges` (sorted, disjoint (lo, hi) pairs)
    ("cat", [node, ...])     concatenation
    ("alt", [node, ...])     alternation
    ("rep", node, lo, hi)    repetition, hi None for unbounded
    ("empty",)               the empty string

Anchors are handled here the way llguidance does: `^`/`\\A` where the match must start and
`$`/`\\z` where it must end (through groups, alternations and the first/last item of a
concatenation) mean nothing, since the whole output is matched anyway; anywhere else they are
look-arounds, which llguidance rejects, and so do we.  Lazy quantifiers match the same
language as greedy ones.  `derivatives.compile_tree` turns the tree into byte-level expressions.

Unicode classes come from anytok's own pinned tables (`anytok.unicode`, Unicode 16.0 as
llguidance 1.9.1): general categories (`\\p{L}`, `\\p{Lu}`, `\\pN`, long names, `gc=`),
`\\d` (= `\\p{Nd}`), `\\s` (White_Space), `\\w` (see `_word`).  `(?i)` and the `i` flag
close each class under Unicode 16.0 simple case folding (`case_fold`, the table
`_casefold_table.py` generated from CaseFolding.txt), as Rust's regex crate does.  Scripts,
binary properties and `(?-u)` are rejected with `UnsupportedFeatureError`, look-arounds too
(naming them); nesting deeper than `Limits.max_nesting` raises `GrammarLimitError`; malformed
patterns raise `RegexSyntaxError`.
"""

from __future__ import annotations

from bisect import bisect_left

from .. import unicode as U
from .errors import MAX_NESTING_CEILING, GrammarLimitError, RegexSyntaxError, UnsupportedFeatureError

MAX_CP = 0x10FFFF
SURROGATES = ((0xD800, 0xDFFF),)
ANY = U.difference(((0, MAX_CP),), SURROGATES)
ANY_BUT_NL = U.difference(ANY, ((10, 10),))
EMPTY = ("empty",)
MAX_NESTING = MAX_NESTING_CEILING  # groups, classes, stacked repetitions (`Limits.max_nesting`)
_START, _END = ("look", "start"), ("look", "end")

_ESCAPES = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11, "a": 7}
_META = set("\\.+*?()|[]{}^$#&-~ ")
_POSIX = {
    "alnum": ((48, 57), (65, 90), (97, 122)), "alpha": ((65, 90), (97, 122)),
    "ascii": ((0, 127),), "blank": ((9, 9), (32, 32)), "cntrl": ((0, 31), (127, 127)),
    "digit": ((48, 57),), "graph": ((33, 126),), "lower": ((97, 122),),
    "print": ((32, 126),), "punct": ((33, 47), (58, 64), (91, 96), (123, 126)),
    "space": ((9, 13), (32, 32)), "upper": ((65, 90),),
    "word": ((48, 57), (65, 90), (95, 95), (97, 122)), "xdigit": ((48, 57), (65, 70), (97, 102)),
}


def _word() -> tuple:
    """Unicode `\\w`: Alphabetic, marks, decimal digits, connector punctuation, Join_Control.
    Alphabetic is letters, letter numbers and Other_Alphabetic; the Other_Alphabetic code points
    that are neither letters nor marks are four blocks of circled/squared Latin letters
    (checked against llguidance code point by code point for Unicode 16.0)."""
    parts = [U.category(c) for c in ("L", "Nl", "M", "Nd", "Pc")]
    parts.append(((0x200C, 0x200D), (0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189)))
    return _norm(U.union(*parts))


_FOLD_CPS: list = []  # the code points with a simple case folding class, sorted
_FOLD_OF: dict = {}  # code point -> its class (a tuple of code points)


def case_fold(ranges) -> tuple:
    """`ranges` closed under Unicode 16.0 simple case folding, as Rust's regex crate applies
    `(?i)`: each code point brings every member of its class (`_casefold_table`)."""
    if not _FOLD_CPS:
        from ._casefold_table import CLASSES

        for item in CLASSES.split():
            members = tuple(int(x, 16) for x in item.split(","))
            for cp in members:
                _FOLD_OF[cp] = members
        _FOLD_CPS.extend(sorted(_FOLD_OF))
    out = list(ranges)
    for lo, hi in ranges:
        i = bisect_left(_FOLD_CPS, lo)
        while i < len(_FOLD_CPS) and _FOLD_CPS[i] <= hi:
            out.extend((m, m) for m in _FOLD_OF[_FOLD_CPS[i]])
            i += 1
    return _norm(out)


def _norm(ranges) -> tuple:
    return U.difference(U.normalize(ranges), SURROGATES)


class _Parser:
    def __init__(self, pattern: str, max_nesting: int = MAX_NESTING):
        self.p = pattern
        self.i = 0
        self.depth = 0
        self.max_nesting = max_nesting

    def too_deep(self, what: str):
        raise GrammarLimitError(f"{what} nested more than {self.max_nesting} deep at offset {self.i} in regex "
                                f"{self.p[:60]!r} (Limits.max_nesting)")

    # -- helpers ---------------------------------------------------------------------------
    def err(self, msg: str, pos: int | None = None):
        raise RegexSyntaxError(msg, self.p, self.i if pos is None else pos)

    def peek(self) -> str | None:
        return self.p[self.i] if self.i < len(self.p) else None

    def eat(self, s: str) -> bool:
        if self.p.startswith(s, self.i):
            self.i += len(s)
            return True
        return False

    def skip_ws(self, flags):
        if "x" not in flags:
            return
        while self.i < len(self.p):
            c = self.p[self.i]
            if c.isspace() and c in " \t\n\r\f\v":
                self.i += 1
            elif c == "#":
                while self.i < len(self.p) and self.p[self.i] != "\n":
                    self.i += 1
            else:
                return

    # -- grammar ---------------------------------------------------------------------------
    def parse(self):
        node = self.alternation(set())
        if self.i < len(self.p):
            self.err("unopened group" if self.p[self.i] == ")" else "unexpected character")
        return node

    def alternation(self, flags):
        branches = [self.concat(flags)]
        while self.eat("|"):
            branches.append(self.concat(flags))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concat(self, flags):
        items = []
        flags = set(flags)
        while True:
            self.skip_ws(flags)
            c = self.peek()
            if c is None or c in "|)":
                break
            start = self.i
            atom = self.atom(flags)
            if atom is None:  # a flag group (?x) changing the rest of this concatenation
                continue
            atom = self.repetitions(atom, flags, start)
            items.append(atom)
        if not items:
            return EMPTY
        return items[0] if len(items) == 1 else ("cat", items)

    def repetitions(self, atom, flags, start):
        stacked = 0
        while True:
            self.skip_ws(flags)
            c = self.peek()
            if c in ("*", "+", "?"):
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{":
                save = self.i
                rng = self.counted()
                if rng is None:
                    self.i = save
                    self.err("repetition quantifier expects a valid decimal")
                lo, hi = rng
            else:
                return atom
            self.eat("?")  # lazy: same language (a repeated anchor stays an anchor, rejected later)
            stacked += 1
            if self.depth + stacked > self.max_nesting:  # each level is one more for the compilers
                self.too_deep("repetitions")
            atom = ("rep", atom, lo, hi)

    def counted(self):
        self.i += 1
        j = self.i
        while self.i < len(self.p) and self.p[self.i].isdigit():
            self.i += 1
        if j == self.i:
            return None
        lo = int(self.p[j:self.i])
        hi = lo
        if self.eat(","):
            k = self.i
            while self.i < len(self.p) and self.p[self.i].isdigit():
                self.i += 1
            hi = int(self.p[k:self.i]) if k != self.i else None
        if not self.eat("}"):
            return None
        if hi is not None and hi < lo:
            self.err("invalid repetition range")
        return lo, hi

    def atom(self, flags):
        c = self.p[self.i]
        if c in "*+?":
            self.err("repetition operator missing expression")
        if c == "{":
            self.err("repetition operator missing expression")
        if c == "(":
            return self.group(flags)
        if c == "[":
            return ("set", self.case(self.bracket(flags), flags))
        if c == ".":
            self.i += 1
            return ("set", ANY if "s" in flags else ANY_BUT_NL)
        if c == "^":
            self.i += 1
            if "m" in flags:
                raise UnsupportedFeatureError("multi-line anchors", "(?m)^")
            return _START
        if c == "$":
            self.i += 1
            if "m" in flags:
                raise UnsupportedFeatureError("multi-line anchors", "(?m)$")
            return _END
        if c == "\\":
            r = self.escape(flags, in_class=False)
            if isinstance(r, tuple) and r and r[0] == "look":
                return r
            if isinstance(r, int):
                return ("set", self.case(((r, r),), flags))
            return ("set", r)
        self.i += 1
        cp = ord(c)
        return ("set", self.case(((cp, cp),), flags))

    def case(self, ranges, flags):
        return case_fold(ranges) if "i" in flags else ranges

    def group(self, flags):
        start = self.i
        self.depth += 1
        if self.depth > self.max_nesting:
            self.too_deep("groups")
        try:
            return self._group(flags, start)
        finally:
            self.depth -= 1

    def _group(self, flags, start):
        self.i += 1
        inner_flags = set(flags)
        if self.eat("?"):
            for look in ("=", "!", "<=", "<!"):
                if self.p.startswith(look, self.i):  # (Rust's regex has none: llguidance rejects them)
                    raise UnsupportedFeatureError("look-around assertions", f"(?{look}...) at offset {start}")
            if self.eat("P<") or self.eat("<"):
                j = self.p.find(">", self.i)
                if j < 0 or j == self.i:
                    self.err("invalid capture group name")
                self.i = j + 1
            else:
                neg = False
                seen = False
                while True:
                    c = self.peek()
                    if c is None:
                        self.err("unclosed group", start)
                    if c in ":)":
                        break
                    self.i += 1
                    if c == "-":
                        if neg:
                            self.err("repeated negation in flags")
                        neg = True
                        continue
                    if c not in "imsxuUR":
                        self.err("unrecognized flag")
                    seen = True
                    if c == "u":
                        if neg:
                            raise UnsupportedFeatureError("non-Unicode mode", "(?-u)")
                        continue
                    if c in "UR":
                        continue  # swap greed / CRLF: same language for us (no anchors inside)
                    (inner_flags.discard if neg else inner_flags.add)(c)
                if not seen and neg:
                    self.err("expected flag after negation")
                if self.eat(")"):
                    flags.clear()
                    flags.update(inner_flags)
                    return None
                self.i += 1  # ':'
        node = self.alternation(inner_flags)
        if not self.eat(")"):
            self.err("unclosed group", start)
        return ("group", node)

    def hexnum(self, n_digits: int | None):
        if n_digits is None:
            if not self.eat("{"):
                self.err("invalid hexadecimal escape")
            j = self.p.find("}", self.i)
            if j < 0:
                self.err("unclosed hexadecimal escape")
            txt = self.p[self.i:j]
            self.i = j + 1
        else:
            txt = self.p[self.i:self.i + n_digits]
            self.i += n_digits
            if len(txt) != n_digits:
                self.err("incomplete hexadecimal escape")
        if not txt or len(txt) > 8 or any(ch not in "0123456789abcdefABCDEF" for ch in txt):
            self.err("invalid hexadecimal digit")
        cp = int(txt, 16)
        if cp > MAX_CP or 0xD800 <= cp <= 0xDFFF:
            self.err("invalid Unicode scalar value")
        return cp

    def escape(self, flags, in_class: bool):
        """A backslash escape: an int (one code point), ranges, or an anchor."""
        self.i += 1
        c = self.peek()
        if c is None:
            self.err("incomplete escape sequence")
        self.i += 1
        if c in _ESCAPES:
            return _ESCAPES[c]
        if c in _META or (c < "\x80" and not c.isalnum() and c not in "<>"):
            return ord(c)  # as Rust's regex: any ASCII character but letters, digits, < and >
        if c in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[c]
            return self.hexnum(None if self.peek() == "{" else width)
        if c == "d":
            return U.category("Nd")
        if c == "D":
            return U.complement(U.category("Nd"))
        if c == "s":
            return U.white_space()
        if c == "S":
            return _norm(U.complement(U.white_space()))
        if c == "w":
            return _word()
        if c == "W":
            return _norm(U.complement(_word()))
        if c in "pP":
            if self.peek() == "{":
                j = self.p.find("}", self.i)
                if j < 0:
                    self.err("unclosed Unicode class")
                name = self.p[self.i + 1:j]
                self.i = j + 1
            else:
                name = self.peek()
                if name is None:
                    self.err("incomplete Unicode class")
                self.i += 1
            negate = c == "P"
            if name.startswith("^"):
                negate, name = not negate, name[1:]
            for sep in ("=", "!="):
                if sep in name:
                    key, _, val = name.partition(sep)
                    if key.replace("_", "").replace(" ", "").lower() in ("gc", "generalcategory"):
                        name = val
                        negate = negate != (sep == "!=")
                    break
            ranges = U.category(name.strip())
            if ranges is None:
                raise UnsupportedFeatureError(f"Unicode property \\p{{{name}}}", "only general categories are supported")
            ranges = _norm(ranges)
            return _norm(U.complement(ranges)) if negate else ranges
        if not in_class:
            if c == "A":
                return _START
            if c == "z":
                return _END
            if c in "bBz<>":
                raise UnsupportedFeatureError("look-around assertions", f"\\{c}")
        if c.isdigit():
            raise UnsupportedFeatureError("backreferences / octal escapes", f"\\{c}")
        self.err("unrecognized escape sequence", self.i - 2)

    def bracket(self, flags):
        start = self.i
        self.depth += 1
        if self.depth > self.max_nesting:
            self.too_deep("classes")
        try:
            return self._bracket(flags, start)
        finally:
            self.depth -= 1

    def _bracket(self, flags, start):
        self.i += 1
        negate = self.eat("^")
        acc = self.class_items(flags, start, first=True)
        if negate:
            acc = _norm(U.complement(acc))
        return acc

    def class_items(self, flags, start, first):
        """Items up to the closing bracket, with && / -- / ~~ set operations."""
        acc = self.class_union(flags, start, first)
        while True:
            for op in ("&&", "--", "~~"):
                if self.eat(op):
                    rhs = self.class_union(flags, start, False)
                    if op == "&&":
                        acc = U.intersect(acc, rhs)
                    elif op == "--":
                        acc = U.difference(acc, rhs)
                    else:
                        acc = U.union(U.difference(acc, rhs), U.difference(rhs, acc))
                    break
            else:
                if not self.eat("]"):
                    self.err("unclosed character class", start)
                return _norm(acc)

    def class_union(self, flags, start, first):
        items = []
        if first and self.peek() == "]":
            self.i += 1
            items.append((93, 93))
        while True:
            self.skip_ws(flags)
            c = self.peek()
            if c is None:
                self.err("unclosed character class", start)
            if c == "]" or self.p.startswith(("&&", "--", "~~"), self.i):
                break
            if c == "[":
                if self.p.startswith("[:", self.i):
                    j = self.p.find(":]", self.i + 2)
                    if j >= 0:
                        name = self.p[self.i + 2:j]
                        neg = name.startswith("^")
                        name = name[1:] if neg else name
                        if name in _POSIX:
                            self.i = j + 2
                            r = _POSIX[name]
                            items.extend(_norm(U.complement(r)) if neg else r)
                            continue
                items.extend(self.bracket(flags))
                continue
            lo = self.class_atom(flags)
            if isinstance(lo, tuple):
                items.extend(lo)
                continue
            if self.peek() == "-" and not self.p.startswith("-]", self.i) and not self.p.startswith("--", self.i):
                self.i += 1
                hi = self.class_atom(flags)
                if isinstance(hi, tuple):
                    self.err("invalid range boundary")
                if hi < lo:
                    self.err("invalid character class range")
                items.append((lo, hi))
            else:
                items.append((lo, lo))
        return self.case(_norm(items), flags) if items else ()

    def class_atom(self, flags):
        if self.i >= len(self.p):
            self.err("unclosed character class")
        c = self.p[self.i]
        if c == "\\":
            r = self.escape(flags, in_class=True)
            return r
        self.i += 1
        return ord(c)



def _resolve(node, at_start: bool, at_end: bool):
    """Drop anchors where llguidance ignores them; reject them anywhere else."""
    kind = node[0]
    if kind == "look":
        if node == _START and at_start or node == _END and at_end:
            return EMPTY
        raise UnsupportedFeatureError("look-around assertions", "anchor not at the start/end of the match")
    if kind == "group":
        return _resolve(node[1], at_start, at_end)
    if kind == "alt":
        return ("alt", [_resolve(n, at_start, at_end) for n in node[1]])
    if kind == "cat":
        items = node[1]
        last = len(items) - 1
        return ("cat", [_resolve(n, at_start and i == 0, at_end and i == last) for i, n in enumerate(items)])
    if kind == "rep":
        return ("rep", _resolve(node[1], False, False), node[2], node[3])
    return node


def parse(pattern: str, max_nesting: int = MAX_NESTING):
    """The tree of `pattern` (see the module docstring); nesting past `max_nesting` raises
    `GrammarLimitError`."""
    if not isinstance(pattern, str):
        raise TypeError(f"regex pattern must be a str, got {type(pattern).__name__}")
    parser = _Parser(pattern, max_nesting)
    tree = parser.parse()
    # groups and stacked repetitions are bounded level by level; their product is bounded
    # here, before anything recurses over the tree (three tree levels per group at most)
    stack = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        if d > 3 * max_nesting:
            parser.too_deep("groups and repetitions")
        k = node[0]
        if k in ("alt", "cat"):
            stack.extend((n, d + 1) for n in node[1])
        elif k in ("rep", "group"):
            stack.append((node[1], d + 1))
    return _resolve(tree, True, True)
