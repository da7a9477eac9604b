"""Lark grammars in llguidance's dialect -> an Earley parser over lexemes (`earley.py`).

Data flow: `compile_grammar(text)` reads the grammar (`_Reader`) into rule trees:
rules `name: a b | c` with `?name` / `!name`, `-> alias` and attributes
`name[lazy, suffix="..", temperature=0.5, capture]`; terminals `NAME: ...`; `"strings"` (flag
`i`), `"a".."z"`, `/regexes/` (flags `i`, `s`), `( )`, `[ ]`, `?`, `*`, `+`, `~ n`, `~ n..m`,
`{n}`, `{n,}`, `{,m}`, `{n,m}`; in terminals `a & b` and `~a` (and / not, as byte-level
automata built by `ExprSet.intersect` / `difference`); `%regex { "substring_chunks": [..] }`
(or `substring_words`, `substring_chars`); `%json { schema }`; `%ignore`, `%import common.NAME`,
`%llguidance {..}` with the options `allow_initial_skip` and `ignore_once`; `//` and `#`
comments; `start` is the start rule.  The rules are a `builder.GrammarBuilder` (the grammar
form every constraint compiles to); `builder._Builder` turns the trees into an `earley.Grammar`:
each distinct string, regex and terminal used in a rule is a lexeme (compiled with
`regex_syntax` and `derivatives`), the `%ignore` terminals are one skip lexeme, a rule with
`lazy` or `suffix` is one lazy lexeme (its body, then the suffix), and `%json` is one lexeme
made by the `json` subpackage.  `earley.States` serves the grammar to the matcher.

Special tokens (`<|name|>`, `<[1,5-9]>`, `<[^...]>`, `<[*]>`) are token-range lexemes:
`\xff` + byte j for the j-th of them, with the ids in `Grammar.token_ranges[j]`; a grammar
with any is compiled per tokenizer (`GrammarBuilder.compile`, with the tokenizer's `TokenTrie`
as `vocab`), and checked once at once against `builder.ANY_VOCAB`.  Rule attributes are read in order as llguidance does (`lazy` is `suffix=//`).
A rule with `stop=` / `suffix=` / `lazy` / `max_tokens=` / `temperature=` is one lexeme of its
body (`builder._Builder.gen_symbol`, llguidance's `gen`): then the suffix or stop, lazy; a stop's bytes
are hidden (`Grammar.hidden`: see earley.py's barrier states); `stop=""` / `suffix=""` is a
greedy lexeme that end-of-sequence may end (`Grammar.eos_ending`: earley.py's `eos_end`);
`max_tokens=N` sets `Grammar.max_tokens[k] = N` (the matcher counts tokens: earley.py's
`limit_max_tokens`), and `max_tokens=0` makes the rule empty.  `%llguidance {"no_forcing":
true}` sets `Grammar.no_forcing` (the matcher forces nothing).

Not implemented, raising `UnsupportedFeatureError` naming it: the option `allow_invalid_utf8`.
What llguidance 1.9.1 rejects raises `GrammarSyntaxError`, as do malformed grammars:
priorities `name.N` ("not supported yet"), templates ("params not supported yet"), `%regex`
with other fields, `%import` other than common, and `@sub` references (a single Lark text
has no sub-grammars: llguidance says "unknown grammar").
"""

from __future__ import annotations

import re

import json as _json

from . import earley as E
from .builder import _LEXEME_ATTRS, GrammarBuilder, _is_lazy, _token_spec
from .errors import GrammarSyntaxError, UnsupportedFeatureError


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+|//[^\n]*|\#[^\n]*|\\\n)
  | (?P<nl>\n)
  | (?P<string>"(?:[^"\\\n]|\\.)*"i?)
  | (?P<regex>/(?:[^/\\\n]|\\.)+/[a-z]*)
  | (?P<directive>%[a-z_]+)
  | (?P<name>(?:!\??|\?)?[A-Za-z_](?:[A-Za-z_0-9]|-(?!>))*(?:\.-?[0-9]+)?)
  | (?P<range>\.\.)
  | (?P<number>[0-9]+)
  | (?P<special><[^<>\s]+>)
  | (?P<op>[:|()\[\]?*+~,={}<>@.&-])
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


def _tokens(text: str):
    out = []
    i = 0
    dec = _json.JSONDecoder()
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m:
            raise GrammarSyntaxError(f"unexpected character {text[i]!r} at offset {i} in grammar")
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group(), i))
        i = m.end()
        if kind == "directive" and m.group() in ("%llguidance", "%json", "%regex"):
            j = i
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            try:
                obj, end = dec.raw_decode(text, j)
            except ValueError as e:
                raise GrammarSyntaxError(f"{m.group()} must be followed by JSON ({e})") from None
            out.append(("json", obj, j))
            i = end
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

    def __init__(self, text: str, max_nesting: int = E.Limits().max_nesting):
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0  # open ( [ ~ (the reader recurses once per level)
        self.max_nesting = max_nesting
        self.rules: dict = {}
        self.ignore: list = []
        self.attrs: dict = {}
        self.options: dict = {}

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
                if value == "%llguidance":
                    opts = self.take()[1]
                    if not isinstance(opts, dict):
                        raise GrammarSyntaxError("%llguidance must be followed by a JSON object")
                    self.options.update(opts)
                    continue
                raise UnsupportedFeatureError(f"grammar directive {value}")
            if kind != "name":
                raise GrammarSyntaxError(f"expected a rule name at offset {pos} in grammar, got {value!r}")
            self.take()
            name = value.lstrip("?!")
            if "." in name:
                raise GrammarSyntaxError(f"priorities ({name}) are not supported, as in llguidance 1.9.1 "
                                         "(\"not supported yet\")")
            attrs = {}
            if self.peek()[1] == "[":
                attrs = self.read_attributes(name)
            if self.peek()[1] in ("{", "<") or self.peek()[0] == "special":
                raise GrammarSyntaxError(f"templates (rule {name} with parameters) are not supported, "
                                         "as in llguidance (\"params not supported yet\")")
            self.expect(":")
            if name in self.rules:
                raise GrammarSyntaxError(f"rule {name} defined twice")
            self.rules[name] = self.alternatives()
            if attrs:
                self.attrs[name] = attrs
        return self.rules, self.ignore

    def read_attributes(self, name: str) -> dict:
        """`name[lazy, max_tokens=5, stop="x", ...]`, read in order as llguidance does: `lazy`
        is `suffix=//` (an empty regex) unless a non-empty stop or suffix came before; a second
        stop / suffix is an error; later values of other attributes win."""
        self.expect("[")
        attrs = {}
        while self.peek()[1] != "]":
            t = self.take()
            if t[0] != "name":
                raise GrammarSyntaxError(f"expected an attribute name at offset {t[2]} in grammar")
            key = t[1]
            if key not in _LEXEME_ATTRS:
                raise GrammarSyntaxError(f"unknown rule attribute {key!r} on {name}")
            value = True
            if self.peek()[1] == "=":
                self.take()
                v = self.take()
                if v[0] == "string":
                    value = _unescape(v[1][1:-1])
                elif v[0] == "regex":  # stop=/.../ or suffix=/.../
                    end = v[1].rindex("/")
                    value = ("re", _unslash(v[1][1:end]), v[1][end + 1:])
                elif v[0] == "number" or v[0] == "name":
                    value = v[1]
                    if self.peek()[1] == "." and self.peek(1)[0] == "number":  # 0.7
                        self.take()
                        value += "." + self.take()[1]
                else:
                    raise GrammarSyntaxError(f"bad value for attribute {key} at offset {v[2]}")
            elif key not in ("lazy", "capture"):
                raise GrammarSyntaxError(f"attribute {key} of {name} needs a value")
            if key == "lazy":
                if not _is_lazy(attrs):
                    attrs["suffix"] = ("re", "", "")
            elif key in ("stop", "suffix") and ("stop" in attrs or "suffix" in attrs):
                raise GrammarSyntaxError(f"Cannot have multiple stop/suffix conditions (rule {name})")
            elif key == "stop_capture" and key in attrs:
                raise GrammarSyntaxError(f"Cannot have multiple stop_capture names (rule {name})")
            else:
                attrs[key] = value
            if self.peek()[1] == ",":
                self.take()
            else:
                break
        self.expect("]")
        return attrs

    def read_import(self):
        """`%import common.NAME [-> ALIAS]` or `%import common (NAME, ...)`."""
        t = self.take()
        if t[1] != "common":
            raise GrammarSyntaxError(f"%import from {t[1]!r}: only Lark's common terminals can be imported "
                                     "(as in llguidance)")
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

    def conjunction(self):
        """`a & b`: binds tighter than `|` (terminals only)."""
        items = [self.sequence()]
        while self.peek()[1] == "&":
            self.take()
            items.append(self.sequence())
        return items[0] if len(items) == 1 else ("and", items)

    def alternatives(self):
        alts = [self.conjunction()]
        while True:
            # a "|" may start a continuation line
            j = self.i
            while self.toks[j][0] == "nl":
                j += 1
            if self.toks[j][1] == "|":
                self.i = j + 1
                alts.append(self.conjunction())
            else:
                break
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def sequence(self):
        items = []
        while True:
            kind, value, pos = self.peek()
            if kind in ("nl", "eof") or value in ("|", ")", "]", "&"):
                break
            if kind == "name" and self.peek(1)[1] in (":", "["):
                if self.peek(1)[1] == ":" or self._attr_head():
                    break
            if value == "-" and self.peek(1)[1] == ">":  # `-> alias`: a tree name, same strings
                self.i += 2
                self.take()
                continue
            items.append(self.repetition())
        return items[0] if len(items) == 1 else ("seq", items)

    def _attr_head(self) -> bool:
        """Whether `name [ ... ] :` starts here (a rule with attributes)."""
        j = self.i + 2
        while j < len(self.toks) and self.toks[j][1] != "]" and self.toks[j][0] not in ("nl", "eof"):
            j += 1
        return j + 1 < len(self.toks) and self.toks[j][1] == "]" and self.toks[j + 1][1] == ":"

    def repetition(self):
        node = self.atom()
        ops = 0
        while True:
            v = self.peek()[1]
            if v in ("?", "*", "+", "~", "{"):
                ops += 1
                if ops > 1:  # as llguidance ("Expected value"): `"a"??`, `x*{2}`
                    raise GrammarSyntaxError(f"a second repetition operator {v!r} at offset {self.peek()[2]} "
                                             "in grammar (put the repeated item in parentheses)")
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
            elif v == "{":
                if self.peek(1)[0] != "number" and self.peek(1)[1] != ",":
                    raise GrammarSyntaxError(f"template usage ({node[1] if node[0] == 'name' else 'an item'}{{...}} at "
                                             f"offset {self.peek()[2]}) is not supported, as in llguidance "
                                             "(\"template usage not supported yet\")")
                self.take()
                lo, hi = 0, None
                if self.peek()[0] == "number":
                    lo = int(self.take()[1])
                    hi = lo
                if self.peek()[1] == ",":
                    self.take()
                    hi = int(self.take()[1]) if self.peek()[0] == "number" else None
                self.expect("}")
                if hi is not None and hi < lo:
                    raise GrammarSyntaxError(f"empty repetition range {{{lo},{hi}}}")
                node = ("rep", node, lo, hi)
            else:
                return node

    def atom(self):
        if self.peek()[1] in ("~", "(", "["):
            self.depth += 1
            if self.depth > self.max_nesting:
                raise E.GrammarLimitError(f"grammar nested more than {self.max_nesting} deep at offset "
                                          f"{self.peek()[2]} (Limits.max_nesting)")
            try:
                return self._atom()
            finally:
                self.depth -= 1
        return self._atom()

    def _atom(self):
        kind, value, pos = self.take()
        if value == "~":  # negation: binds tighter than `*` (terminals only)
            return ("not", self.atom())
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
            text = _unescape(value[1:len(value) - 1 - len(flags)])
            if self.peek()[0] == "range":  # "a".."z"
                self.take()
                t = self.take()
                if t[0] != "string" or t[1].endswith("i"):
                    raise GrammarSyntaxError(f"expected a string after .. at offset {t[2]}")
                hi = _unescape(t[1][1:-1])
                if len(text) != 1 or len(hi) != 1 or flags:
                    raise GrammarSyntaxError("a range \"a\"..\"z\" needs two one-character strings")
                if ord(hi) < ord(text):
                    raise GrammarSyntaxError(f"empty range {value}..{t[1]}")
                return ("rng", ord(text), ord(hi))
            return ("str", text, flags)
        if kind == "regex":
            end = value.rindex("/")
            flags = value[end + 1:]
            if set(flags) - set("is"):
                raise UnsupportedFeatureError(f"regex flags {flags!r} in a grammar")
            return ("re", _unslash(value[1:end]), flags)
        if kind == "name" and not value.startswith(("?", "!")) and "." not in value:
            return ("name", value)
        if kind == "directive":
            if value == "%json":
                return ("json", self.take()[1])
            if value == "%regex":
                return ("sre", self.take()[1])
            raise UnsupportedFeatureError(f"grammar directive {value} inside a rule")
        if kind == "special":
            return ("tok", _token_spec(value))
        if value == "@":  # a reference to another grammar: a Lark text alone has none
            t = self.take()
            if t[0] == "number":
                raise GrammarSyntaxError("numeric grammar references (like @0) are not supported (as llguidance)")
            raise GrammarSyntaxError(f"unknown grammar @{t[1]} (a single Lark grammar has no sub-grammars)")
        if value == "<":
            raise GrammarSyntaxError(f"bad special token at offset {pos} in grammar")
        raise GrammarSyntaxError(f"unexpected {value!r} at offset {pos} in grammar")


def _unslash(pattern: str) -> str:
    """A regex as written between slashes, where "\\/" is a slash."""
    return re.sub(r"\\(\\|/)", lambda m: m.group(0) if m.group(1) == "\\" else "/", pattern)


def read_grammar(text: str, max_nesting: int | None = None) -> GrammarBuilder:
    """The grammar of a Lark text, in the builder's form (`builder.py`)."""
    r = _Reader(text, max_nesting or E.Limits().max_nesting)
    r.read()
    b = GrammarBuilder()
    b.rules, b.attrs, b.ignored = r.rules, r.attrs, r.ignore
    b.options = r.options
    return b

