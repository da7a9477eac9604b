"""Lark-like grammars (the syntax llguidance accepts) -> one grammar expression.

Data flow: `compile_grammar(text)` reads the grammar (`_Reader`: rules `name: a b | c`,
terminals `NAME: ...`, `"strings"` (flag `i`), `/regexes/` (flags `i`, `s`), grouping `( )`,
`[ ]` and `?` (optional), `*`, `+`, `~ n` and `~ n..m`, `%ignore`, `%import common.NAME`
(Lark's common terminals), `//` comments; `start` is the start rule).  As in llguidance, every
terminal, string and regex used in a rule is a lexeme, and the `%ignore` lexemes may come
between any two lexemes, not before the first, and after the last only where another lexeme
could have followed (`ExprSet.end_marker`).  Rules become `ExprSet` rules (so they may recurse,
though not left-recursively); lexemes are compiled with `regex_syntax` and `derivatives`.  The
result is one expression that `matcher.py` serves like a regex.

llguidance lexes greedily (a lexeme is extended as long as any allowed lexeme can continue), so
its language can be smaller than the grammar's: `start: A B`, `A: /a+/`, `B: /a/` accepts
nothing.  `check_lexemes` proves, before anything is served, that greedy lexing cannot matter:
no byte that can extend a complete lexeme can also start a lexeme that may follow it (FOLLOW
sets of the grammar, `%ignore` lexemes included), and no two lexemes match the same string.
Grammars it cannot prove this for, and the parts of llguidance's syntax not listed above
(`%json`, `%regex`, `%llguidance`, special tokens, `@sub`, attributes such as `max_tokens`,
priorities, left recursion) raise `UnsupportedFeatureError`; malformed grammars raise
`GrammarSyntaxError`.
"""

from __future__ import annotations

import re

from . import derivatives as D
from . import regex_syntax as R
from .errors import ConstraintError, UnsupportedFeatureError


class GrammarSyntaxError(ConstraintError):
    """The grammar text is malformed."""


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+|//[^\n]*|\\\n)
  | (?P<nl>\n)
  | (?P<string>"(?:[^"\\\n]|\\.)*"i?)
  | (?P<regex>/(?:[^/\\\n]|\\.)+/[a-z]*)
  | (?P<directive>%[a-z_]+)
  | (?P<name>[?!]?[A-Za-z_][A-Za-z_0-9]*(?:\.-?[0-9]+)?)
  | (?P<range>\.\.)
  | (?P<number>[0-9]+)
  | (?P<op>[:|()\[\]?*+~,={}<>@.-])
""", re.X)

_STRING_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0", "/": "/"}
# `%import common.NAME`: Lark's common.lark terminals, as llguidance defines them.
_FLOAT = r"(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+"
COMMON = {
    "DIGIT": r"[0-9]", "HEXDIGIT": r"[a-fA-F0-9]", "INT": r"[0-9]+", "SIGNED_INT": r"[+-]?[0-9]+",
    "DECIMAL": r"[0-9]+\.[0-9]*|\.[0-9]+", "_EXP": r"[eE][+-]?[0-9]+",
    "FLOAT": _FLOAT, "SIGNED_FLOAT": rf"[+-]?(?:{_FLOAT})",
    "NUMBER": rf"[0-9]+|{_FLOAT}", "SIGNED_NUMBER": rf"[+-]?(?:[0-9]+|{_FLOAT})",
    "ESCAPED_STRING": r'"(?:[^"\\]|\\.)*"',
    "LCASE_LETTER": r"[a-z]", "UCASE_LETTER": r"[A-Z]", "LETTER": r"[A-Za-z]", "WORD": r"[A-Za-z]+",
    "CNAME": r"[_A-Za-z][_A-Za-z0-9]*", "WS_INLINE": r"[ \t]+", "WS": r"[ \t\f\r\n]+",
    "CR": r"\r", "LF": r"\n", "NEWLINE": r"(?:\r?\n)+", "SH_COMMENT": r"#[^\n]*",
    "CPP_COMMENT": r"//[^\n]*", "C_COMMENT": r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/", "SQL_COMMENT": r"--[^\n]*",
}
MAX_STATES = 20000  # lexer states explored by check_lexemes before giving up


def _tokens(text: str):
    out = []
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m:
            raise GrammarSyntaxError(f"unexpected character {text[i]!r} at offset {i} in grammar")
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group(), i))
        i = m.end()
    out.append(("nl", "\n", len(text)))
    out.append(("eof", "", len(text)))
    return out


def _unescape(body: str) -> str:
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in _STRING_ESCAPES:
            out.append(_STRING_ESCAPES[n])
            i += 2
        elif n in "xu":
            width = 2 if n == "x" else 4
            digits = body[i + 2:i + 2 + width]
            if len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise GrammarSyntaxError(f"bad \\{n} escape in string literal \"{body}\"")
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            raise UnsupportedFeatureError(f"string escape \\{n} in a grammar literal")
    return "".join(out)


class _Reader:
    """Grammar text -> {name: expansion tree}; trees are
    ("alt", [...]), ("seq", [...]), ("rep", node, lo, hi), ("name", n), ("str", text, flags),
    ("re", pattern, flags)."""

    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0
        self.rules: dict = {}
        self.ignore: list = []

    def peek(self, k: int = 0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, value: str):
        t = self.take()
        if t[1] != value:
            raise GrammarSyntaxError(f"expected {value!r} at offset {t[2]} in grammar, got {t[1]!r}")

    def skip_nl(self):
        while self.peek()[0] == "nl":
            self.i += 1

    def read(self):
        while True:
            self.skip_nl()
            kind, value, pos = self.peek()
            if kind == "eof":
                break
            if kind == "directive":
                self.take()
                if value == "%ignore":
                    self.ignore.append(self.alternatives())
                    continue
                if value == "%import":
                    self.read_import()
                    continue
                raise UnsupportedFeatureError(f"grammar directive {value}")
            if kind != "name":
                raise GrammarSyntaxError(f"expected a rule name at offset {pos} in grammar, got {value!r}")
            self.take()
            name = value.lstrip("?!")
            if "." in name:
                raise UnsupportedFeatureError("rule and terminal priorities", name)
            if self.peek()[1] == "[":
                raise UnsupportedFeatureError("rule attributes (max_tokens, lazy, stop, ...)", name)
            if self.peek()[1] in ("{", "<"):
                raise UnsupportedFeatureError("parameterized rules / templates", name)
            self.expect(":")
            if name in self.rules:
                raise GrammarSyntaxError(f"rule {name} defined twice")
            self.rules[name] = self.alternatives()
        return self.rules, self.ignore

    def read_import(self):
        """`%import common.NAME [-> ALIAS]` or `%import common (NAME, ...)`."""
        t = self.take()
        if t[1] != "common":
            raise UnsupportedFeatureError(f"%import from {t[1]!r}", "only Lark's common terminals")
        pairs = []
        if self.peek()[1] == ".":
            self.take()
            name = self.take()[1]
            local = name
            if self.peek()[1] == "-" and self.peek(1)[1] == ">":
                self.i += 2
                local = self.take()[1]
            pairs.append((name, local))
        else:
            self.expect("(")
            while True:
                pairs.append((self.take()[1],) * 2)
                if self.peek()[1] != ",":
                    break
                self.take()
            self.expect(")")
        for name, local in pairs:
            if name not in COMMON:
                raise GrammarSyntaxError(f"unknown terminal common.{name}")
            if local in self.rules:
                raise GrammarSyntaxError(f"{local} defined twice")
            self.rules[local] = ("re", COMMON[name], "")

    def alternatives(self):
        alts = [self.sequence()]
        while True:
            # a "|" may start a continuation line
            j = self.i
            while self.toks[j][0] == "nl":
                j += 1
            if self.toks[j][1] == "|":
                self.i = j + 1
                alts.append(self.sequence())
            else:
                break
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def sequence(self):
        items = []
        while True:
            kind, value, pos = self.peek()
            if kind in ("nl", "eof") or value in ("|", ")", "]"):
                break
            if kind == "name" and self.peek(1)[1] == ":":
                break
            items.append(self.repetition())
        return items[0] if len(items) == 1 else ("seq", items)

    def repetition(self):
        node = self.atom()
        while True:
            v = self.peek()[1]
            if v in ("?", "*", "+"):
                self.take()
                lo, hi = {"?": (0, 1), "*": (0, None), "+": (1, None)}[v]
                node = ("rep", node, lo, hi)
            elif v == "~":
                self.take()
                t = self.take()
                if t[0] != "number":
                    raise GrammarSyntaxError(f"expected a number after ~ at offset {t[2]}")
                lo = hi = int(t[1])
                if self.peek()[0] == "range":
                    self.take()
                    t = self.take()
                    if t[0] != "number":
                        raise GrammarSyntaxError(f"expected a number after .. at offset {t[2]}")
                    hi = int(t[1])
                if hi < lo:
                    raise GrammarSyntaxError(f"empty repetition range ~{lo}..{hi}")
                node = ("rep", node, lo, hi)
            else:
                return node

    def atom(self):
        kind, value, pos = self.take()
        if value == "(":
            node = self.alternatives()
            self.expect(")")
            return node
        if value == "[":
            node = self.alternatives()
            self.expect("]")
            return ("rep", node, 0, 1)
        if kind == "string":
            flags = "i" if value.endswith("i") else ""
            return ("str", _unescape(value[1:len(value) - 1 - len(flags)]), flags)
        if kind == "regex":
            end = value.rindex("/")
            flags = value[end + 1:]
            if set(flags) - set("is"):
                raise UnsupportedFeatureError(f"regex flags {flags!r} in a grammar")
            return ("re", value[1:end], flags)
        if kind == "name" and not value.startswith(("?", "!")) and "." not in value:
            return ("name", value)
        if kind == "directive":
            raise UnsupportedFeatureError(f"grammar directive {value} inside a rule")
        if value in ("<", "@"):
            raise UnsupportedFeatureError("special tokens and @sub-grammars in a grammar")
        if kind == "range":
            raise UnsupportedFeatureError('character ranges ("a".."z") in a grammar')
        raise GrammarSyntaxError(f"unexpected {value!r} at offset {pos} in grammar")


def _is_terminal(name: str) -> bool:
    return name.lstrip("_")[:1].isupper()


def _regex_text(pattern: str, flags: str) -> str:
    # inside /.../, "\/" is a slash
    pattern = re.sub(r"\\(\\|/)", lambda m: m.group(0) if m.group(1) == "\\" else "/", pattern)
    return f"(?{flags}:{pattern})" if flags else pattern


class _Builder:
    def __init__(self, rules: dict, ignore: list):
        self.defs = rules
        self.es = D.ExprSet()
        self.term_trees: dict = {}
        self.lexemes: dict = {}  # expression id -> first occurrence (for messages)
        self._busy: set = set()
        ig = [self.lexeme_expr(n) for n in ignore]
        self.ignore = self.es.repeat(self.es.alt(ig), 0, None) if ig else D.EPSILON
        self.ignore_ids = ig
        self.ignore_nodes = ignore
        self.refs: dict = {}

    # -- lexemes: trees of code points -------------------------------------------------------
    def tree(self, node):
        kind = node[0]
        if kind == "str":
            text, flags = node[1], node[2]
            if flags and any(not c.isascii() for c in text):
                raise UnsupportedFeatureError("case-insensitive grammar literals with non-ASCII characters")
            items = []
            for c in text:
                cp = ord(c)
                if flags and c.isalpha():
                    items.append(("set", ((ord(c.upper()), ord(c.upper())), (ord(c.lower()), ord(c.lower())))))
                else:
                    items.append(("set", ((cp, cp),)))
            return ("cat", items) if items else R.EMPTY
        if kind == "re":
            return R.parse(_regex_text(node[1], node[2]))
        if kind == "name":
            name = node[1]
            if not _is_terminal(name):
                raise UnsupportedFeatureError("rules (lowercase) inside terminals", name)
            if name not in self.term_trees:
                if name not in self.defs:
                    raise GrammarSyntaxError(f"undefined terminal {name}")
                if name in self._busy:
                    raise GrammarSyntaxError(f"terminal {name} refers to itself")
                self._busy.add(name)
                self.term_trees[name] = self.tree(self.defs[name])
                self._busy.discard(name)
            return self.term_trees[name]
        if kind == "seq":
            return ("cat", [self.tree(n) for n in node[1]])
        if kind == "alt":
            return ("alt", [self.tree(n) for n in node[1]])
        if kind == "rep":
            return ("rep", self.tree(node[1]), node[2], node[3])
        raise AssertionError(kind)

    def lexeme_expr(self, node) -> int:
        e = D.compile_tree(self.es, self.tree(node))
        if e == D.NOTHING:
            raise ConstraintError(f"grammar lexeme {node} matches nothing")
        if self.es.nullable[e]:
            raise UnsupportedFeatureError("grammar lexemes that match the empty string", str(node)[:60])
        self.lexemes.setdefault(e, node)
        return e

    # -- rules ------------------------------------------------------------------------------
    def nullable_rules(self) -> dict:
        rules = {n: t for n, t in self.defs.items() if not _is_terminal(n)}
        null: dict = {n: False for n in rules}

        def nl(node) -> bool:
            k = node[0]
            if k in ("str", "re"):
                return False
            if k == "name":
                if _is_terminal(node[1]):
                    return False
                if node[1] not in null:
                    raise GrammarSyntaxError(f"undefined rule {node[1]}")
                return null[node[1]]
            if k == "seq":
                return all(nl(n) for n in node[1])
            if k == "alt":
                return any(nl(n) for n in node[1])
            return node[2] == 0 or nl(node[1])

        changed = True
        while changed:
            changed = False
            for n, t in rules.items():
                if not null[n] and nl(t):
                    null[n] = changed = True
        return null

    def expr(self, node) -> int:
        es = self.es
        k = node[0]
        if k in ("str", "re") or k == "name" and _is_terminal(node[1]):
            return es.concat(self.ignore, self.lexeme_expr(node))
        if k == "name":
            return self.refs[node[1]][1]
        if k == "seq":
            r = D.EPSILON
            for n in reversed(node[1]):
                r = es.concat(self.expr(n), r)
            return r
        if k == "alt":
            return es.alt([self.expr(n) for n in node[1]])
        return es.repeat(self.expr(node[1]), node[2], node[3])

    def build(self) -> int:
        if "start" not in self.defs:
            raise GrammarSyntaxError("grammar has no start rule")
        null = self.nullable_rules()
        for n in null:
            self.refs[n] = self.es.new_rule(null[n])
        for n in null:
            self.es.set_rule(self.refs[n][0], self.expr(self.defs[n]))
        try:
            self.es.check_rules()
        except ConstraintError as e:
            if "left-recursive" in str(e):
                raise UnsupportedFeatureError("left-recursive grammar rules") from None
            raise
        if _is_terminal("start"):
            raise AssertionError
        start = self.refs["start"][1]
        if self.ignore_ids:  # ignored lexemes after the last one, where another could follow
            start = self.es.concat(start, self.es.end_marker(self.ignore))
        mask = 0
        for e in self.ignore_ids:
            for b in self.es.viable_bytes(e):
                mask |= 1 << b
        return self.es.strip_leading(start, mask) if mask else start

    def lexeme_id(self, node):
        """The lexeme a leaf of a rule is, or None if `node` is not a leaf lexeme."""
        if node[0] in ("str", "re") or node[0] == "name" and _is_terminal(node[1]):
            return D.compile_tree(self.es, self.tree(node))
        return None

    def follows(self) -> dict:
        """lexeme -> the lexemes that can come right after it in the grammar (FOLLOW sets; the
        end of input is -1)."""
        rules = {n: t for n, t in self.defs.items() if not _is_terminal(n)}
        null = self.nullable_rules()
        first_memo: dict = {}

        def first(node):  # (set of lexemes, nullable)
            key = id(node)
            if key in first_memo:
                return first_memo[key]
            first_memo[key] = (frozenset(), False)  # recursion guard (refined by the fixpoint)
            lx = self.lexeme_id(node)
            k = node[0]
            if lx is not None:
                r = (frozenset((lx,)), False)
            elif k == "name":
                r = (rule_first[node[1]], null[node[1]])
            elif k == "seq":
                acc, nl = set(), True
                for n in node[1]:
                    f, n_null = first(n)
                    acc |= f
                    if not n_null:
                        nl = False
                        break
                r = (frozenset(acc), nl)
            elif k == "alt":
                parts = [first(n) for n in node[1]]
                r = (frozenset().union(*(f for f, _ in parts)), any(n for _, n in parts))
            else:
                f, n_null = first(node[1])
                r = (f, node[2] == 0 or n_null)
            first_memo[key] = r
            return r

        rule_first = {n: frozenset() for n in rules}
        changed = True
        while changed:
            changed = False
            first_memo.clear()
            for n, t in rules.items():
                f = first(t)[0]
                if f != rule_first[n]:
                    rule_first[n] = f
                    changed = True
        first_memo.clear()
        lex_follow: dict = {}
        rule_follow = {n: set() for n in rules}
        rule_follow["start"].add(-1)

        def walk(node, follow: frozenset):
            lx = self.lexeme_id(node)
            k = node[0]
            if lx is not None:
                lex_follow.setdefault(lx, set()).update(follow)
            elif k == "name":
                rule_follow[node[1]].update(follow)
            elif k == "seq":
                f = follow
                for n in reversed(node[1]):
                    walk(n, f)
                    nf, nl = first(n)
                    f = nf | f if nl else nf
            elif k == "alt":
                for n in node[1]:
                    walk(n, follow)
            else:
                inner = follow | first(node[1])[0] if node[3] is None or node[3] > 1 else follow
                walk(node[1], inner)

        while True:
            before = sum(len(v) for v in rule_follow.values()) + sum(len(v) for v in lex_follow.values())
            for n, t in rules.items():
                walk(t, frozenset(rule_follow[n]))
            if sum(len(v) for v in rule_follow.values()) + sum(len(v) for v in lex_follow.values()) == before:
                return lex_follow

    def check_lexemes(self) -> None:
        """Raise UnsupportedFeatureError unless greedy lexing provably gives the grammar's
        language (see the module docstring).  The lexer's states are explored from the start
        of a lexeme (a tuple: one derivative per lexeme); for each lexeme X, the bytes that
        extend some lexeme after a complete X must not start a lexeme that can follow X (nor
        an `%ignore` lexeme); and no two lexemes may match the same string."""
        es = self.es
        lex = sorted(self.lexemes)
        start = tuple(lex)
        seen = {start}
        todo = [start]
        extend = [0] * len(lex)
        while todo:
            st = todo.pop()
            accepting = [i for i, e in enumerate(st) if es.nullable[e]]
            if len(accepting) > 1:
                names = [str(self.lexemes[lex[i]])[:40] for i in accepting[:2]]
                raise UnsupportedFeatureError("grammar lexemes that match the same string", " and ".join(names))
            for b in range(256):
                nxt = tuple(es.derive(e, b) for e in st)
                if not any(nxt):
                    continue
                for i in accepting:
                    extend[i] |= 1 << b
                if nxt not in seen:
                    if len(seen) >= MAX_STATES:
                        raise UnsupportedFeatureError("grammar whose lexer is too large to check for greedy lexing")
                    seen.add(nxt)
                    todo.append(nxt)
        first_bytes = {}
        for e in lex:
            m = 0
            for b in es.viable_bytes(e):
                m |= 1 << b
            first_bytes[e] = m
        follow = self.follows()
        ignore_first = 0
        for e in self.ignore_ids:
            ignore_first |= first_bytes[e]
        every = set().union(*follow.values()) if follow else set()
        runs = {e for e, n in zip(self.ignore_ids, self.ignore_nodes) if _is_run(self.tree(n))}
        for i, e in enumerate(lex):
            if e in self.ignore_ids:
                # any lexeme may follow an ignored one, and so may an ignored one (itself
                # too, unless it is a run of one class: two runs lex as one, same strings)
                nexts = set(every) | set(follow.get(e, ())) | (set(self.ignore_ids) - ({e} & runs))
                after = 0
            else:
                nexts = follow.get(e, set())
                after = ignore_first
            for y in nexts:
                if y != -1:
                    after |= first_bytes[y]
            clash = extend[i] & after
            if clash:
                b = (clash & -clash).bit_length() - 1
                raise UnsupportedFeatureError(
                    "grammar where greedy lexing differs from the grammar: after a complete "
                    f"{str(self.lexemes[e])[:40]}, byte {bytes([b])!r} both extends a lexeme and starts the next one")


def _is_run(tree) -> bool:
    """Whether an %ignore lexeme (its code-point tree) is a run of one class, `[...]+`:
    then two of them in a row lex greedily as one, which matches the same strings."""
    return tree[0] == "rep" and tree[1][0] == "set" and tree[2] >= 1 and tree[3] is None


def compile_grammar(text: str) -> tuple:
    """(ExprSet, start expression) of the strings the grammar generates."""
    if "%json" in text or "%llguidance" in text or "%lark" in text or "%regex" in text:
        for d in ("%json", "%llguidance", "%lark", "%regex"):
            if d in text:
                raise UnsupportedFeatureError(f"grammar directive {d}")
    rules, ignore = _Reader(text).read()
    b = _Builder(rules, ignore)
    try:
        start = b.build()
    except RecursionError:
        raise UnsupportedFeatureError("grammars nested this deeply") from None
    b.check_lexemes()
    return b.es, start
