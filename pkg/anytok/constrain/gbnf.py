"""llama.cpp's GBNF, read into the rule trees of `grammar.py` (then the Earley parser).

Data flow: `parse(text)` reads the rules (`name ::= alternatives`; `"literals"` and `[classes]`
with the escapes `\\" \\\\ \\[ \\] \\n \\r \\t \\xHH \\uHHHH \\UHHHHHHHH`; `.`; groups; `* + ?
{m} {m,} {m,n}`; `#` comments; a rule ends at the end of its line unless inside parentheses or
after `|`; a later rule of the same name replaces an earlier one; `root` is the start rule)
and returns the rules as `grammar.py`'s trees.  Which parts are lexemes is decided as
llguidance's `gbnf_to_lark` decides it, since under greedy lexing the lexeme boundaries
change the language: a rule other than `root` whose body (transitively) has only literals,
classes, `.` and references to such rules is one terminal (one lexeme); in every other rule,
each literal, class, `.` and reference to a terminal rule is a lexeme of its own.
"""

from __future__ import annotations

from .errors import MAX_NESTING_CEILING, GrammarLimitError
from .errors import GrammarSyntaxError

_HEX = set("0123456789abcdefABCDEF")


class _Reader:
    def __init__(self, text: str, max_nesting: int = MAX_NESTING_CEILING):
        self.t = text
        self.i = 0
        self.depth = 0  # open parentheses (the reader recurses once per level)
        self.max_nesting = max_nesting

    def err(self, msg: str):
        line = self.t.count("\n", 0, self.i) + 1
        raise GrammarSyntaxError(f"GBNF: {msg} at line {line} ({self.t[self.i:self.i + 20]!r})")

    def cur(self) -> str:
        return self.t[self.i] if self.i < len(self.t) else ""

    def space(self, newlines: bool):
        t = self.t
        while self.i < len(t):
            c = t[self.i]
            if c in " \t" or newlines and c in "\r\n":
                self.i += 1
            elif c == "#":
                while self.i < len(t) and t[self.i] not in "\r\n":
                    self.i += 1
            else:
                break

    def char(self):
        """(code point, escaped) of one character of a literal or class."""
        c = self.cur()
        if c == "":
            self.err("unexpected end of input")
        if c != "\\":
            self.i += 1
            return ord(c), False
        e = self.t[self.i + 1:self.i + 2]
        if not e:
            self.err("incomplete escape sequence")
        simple = {'"': '"', "\\": "\\", "[": "[", "]": "]", "n": "\n", "r": "\r", "t": "\t"}
        if e in simple:
            self.i += 2
            return ord(simple[e]), True
        width = {"x": 2, "u": 4, "U": 8}.get(e)
        if width is None:
            self.err(f"invalid escape sequence \\{e}")
        digits = self.t[self.i + 2:self.i + 2 + width]
        if len(digits) != width or not set(digits) <= _HEX:
            self.err(f"invalid \\{e} escape sequence")
        self.i += 2 + width
        cp = int(digits, 16)
        if cp > 0x10FFFF:
            self.err(f"\\{e}{digits} is not a code point")
        return cp, True

    def name(self) -> str:
        j = self.i
        t = self.t
        while self.i < len(t) and (t[self.i].isalnum() or t[self.i] in "-_"):
            self.i += 1
        if self.i == j:
            self.err("expected a rule name")
        return t[j:self.i]

    def integer(self) -> int:
        j = self.i
        while self.cur().isdigit():
            self.i += 1
        if self.i == j:
            self.err("expected an integer")
        return int(self.t[j:self.i])

    def rules(self) -> list:
        out = []
        self.space(True)
        while self.cur():
            name = self.name()
            self.space(False)
            if self.t[self.i:self.i + 3] != "::=":
                self.err("expected ::=")
            self.i += 3
            self.space(True)
            out.append((name, self.alternatives(False)))
            if self.cur() == "\r":
                self.i += 1
            if self.cur() == "\n":
                self.i += 1
            self.space(True)
        return out

    def alternatives(self, nested: bool):
        alts = []
        while True:
            alts.append(self.sequence(nested))
            self.space(nested)
            if self.cur() != "|":
                break
            self.i += 1
            self.space(True)
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def sequence(self, nested: bool):
        items = []
        while self.cur() and self.cur() not in "|)" and (nested or self.cur() not in "\r\n"):
            c = self.cur()
            if c == '"':
                self.i += 1
                s = []
                while True:
                    cp, esc = self.char()
                    if cp == 34 and not esc:
                        break
                    s.append(chr(cp))
                items.append(("str", "".join(s), ""))
            elif c == "[":
                items.append(("re", self.char_class(), ""))
            elif c == "(":
                self.i += 1
                self.depth += 1
                if self.depth > self.max_nesting:
                    raise GrammarLimitError(f"GBNF grammar nested more than {self.max_nesting} deep "
                                            "(Limits.max_nesting)")
                self.space(True)
                node = self.alternatives(True)
                self.depth -= 1
                if self.cur() != ")":
                    self.err("expected ')'")
                self.i += 1
                items.append(node)
            elif c == ".":
                self.i += 1
                items.append(("re", ".", ""))
            elif c.isalnum() or c in "-_":
                items.append(("ref", self.name()))
            else:
                break
            self.space(nested)
            self.repetition(items)
            self.space(nested)
        if not items:
            return ("str", "", "")
        return items[0] if len(items) == 1 else ("seq", items)

    def char_class(self) -> str:
        """The class as Rust regex text (what `gbnf_to_lark` writes between the slashes)."""
        self.i += 1
        out = ["["]
        while True:
            raw = self.cur()
            cp, esc = self.char()
            if not esc:
                if raw == "]":
                    out.append("]")
                    return "".join(out)
                out.append("\\[" if raw == "[" else raw)
            elif cp in (91, 92, 93):
                out.append("\\" + chr(cp))
            else:
                out.append(f"\\x{{{cp:x}}}")

    def repetition(self, items: list):
        if not items:
            return
        c = self.cur()
        rep = {"*": (0, None), "+": (1, None), "?": (0, 1)}.get(c)
        if rep:
            self.i += 1
            items[-1] = ("rep", items[-1]) + rep
            return
        if c != "{":
            return
        self.i += 1
        self.space(True)
        lo = self.integer()
        self.space(True)
        if self.cur() == "}":
            self.i += 1
            items[-1] = ("rep", items[-1], lo, lo)
            return
        if self.cur() != ",":
            self.err("expected ',' or '}'")
        self.i += 1
        self.space(True)
        hi = self.integer() if self.cur().isdigit() else None
        self.space(True)
        if self.cur() != "}":
            self.err("expected '}'")
        self.i += 1
        if hi is not None and hi < lo:
            raise GrammarSyntaxError(f"GBNF: empty repetition {{{lo},{hi}}}")
        items[-1] = ("rep", items[-1], lo, hi)


def _refs(node, out: list):
    todo = [node]
    while todo:
        n = todo.pop()
        k = n[0]
        if k == "ref":
            out.append(n[1])
        elif k in ("seq", "alt"):
            todo.extend(n[1])
        elif k == "rep":
            todo.append(n[1])


def parse(text: str, max_nesting: int = MAX_NESTING_CEILING) -> dict:
    """GBNF text -> {rule name: tree} in the builder's form (`builder.py`; terminal rules get uppercase
    names, `root` becomes `start`); parentheses nested more than `max_nesting` deep raise
    `GrammarLimitError`."""
    if not isinstance(text, str):
        raise TypeError(f"GBNF grammar must be a str, got {type(text).__name__}")
    rules = dict(_Reader(text, max_nesting).rules())
    if "root" not in rules:
        raise GrammarSyntaxError("GBNF: no 'root' rule")
    refs = {}
    for n, body in rules.items():
        r: list = []
        _refs(body, r)
        for x in r:
            if x not in rules:
                raise GrammarSyntaxError(f"GBNF: rule {x!r} is not defined")
        refs[n] = r
    terminal = set()
    changed = True
    while changed:
        changed = False
        for n in rules:
            if n != "root" and n not in terminal and all(x in terminal for x in refs[n]):
                terminal.add(n)
                changed = True
    names = {}
    for k, n in enumerate(rules):
        names[n] = "start" if n == "root" else (f"T{k}_" if n in terminal else f"r{k}_")

    def rename(node):
        k = node[0]
        if k == "ref":
            return ("name", names[node[1]])
        if k in ("seq", "alt"):
            return (k, [rename(x) for x in node[1]])
        if k == "rep":
            return ("rep", rename(node[1]), node[2], node[3])
        return node

    return {names[n]: rename(body) for n, body in rules.items()}
