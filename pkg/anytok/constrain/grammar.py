"""Lark grammars in llguidance's dialect -> an Earley parser over lexemes (`earley.py`).

Data flow: `compile_grammar(text)` reads the grammar (`_Reader`) into rule trees:
rules `name: a b | c` with `?name` / `!name`, `-> alias` and attributes
`name[lazy, suffix="..", temperature=0.5, capture]`; terminals `NAME: ...`; `"strings"` (flag
`i`), `"a".."z"`, `/regexes/` (flags `i`, `s`), `( )`, `[ ]`, `?`, `*`, `+`, `~ n`, `~ n..m`,
`{n}`, `{n,}`, `{,m}`, `{n,m}`; in terminals `a & b` and `~a` (and / not, as byte-level
automata built by `ExprSet.intersect` / `difference`); `%regex { "substring_chunks": [..] }`
(or `substring_words`, `substring_chars`); `%json { schema }`; `%ignore`, `%import common.NAME`,
`%llguidance {..}` with the options `allow_initial_skip` and `ignore_once`; `//` and `#`
comments; `start` is the start rule.  `_Builder` turns the trees into an `earley.Grammar`:
each distinct string, regex and terminal used in a rule is a lexeme (compiled with
`regex_syntax` and `derivatives`), the `%ignore` terminals are one skip lexeme, a rule with
`lazy` or `suffix` is one lazy lexeme (its body, then the suffix), and `%json` is one lexeme
made by the `json` subpackage.  `earley.States` serves the grammar to the matcher.

Special tokens (`<|name|>`, `<[1,5-9]>`, `<[^...]>`, `<[*]>`) are token-range lexemes:
`\xff` + byte j for the j-th of them, with the ids in `Grammar.token_ranges[j]`; a grammar
with any is compiled per tokenizer (`read_grammar`, then `compile_read` with the tokenizer's
`TokenTrie` as `vocab`), and checked once at once against `ANY_VOCAB`.  Rule attributes are read in order as llguidance does (`lazy` is `suffix=//`).
A rule with `stop=` / `suffix=` / `lazy` / `max_tokens=` / `temperature=` is one lexeme of its
body (`_Builder.gen_symbol`, llguidance's `gen`): then the suffix or stop, lazy; a stop's bytes
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

from . import derivatives as D
from . import earley as E
from . import regex_syntax as R
from .errors import ConstraintError, UnsupportedFeatureError


class GrammarSyntaxError(ConstraintError):
    """The grammar text is malformed."""


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
        self.has_tokens = False  # special tokens: compiled per tokenizer

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
                    value = ("re", v[1][1:end], v[1][end + 1:])
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
            return ("re", value[1:end], flags)
        if kind == "name" and not value.startswith(("?", "!")) and "." not in value:
            return ("name", value)
        if kind == "directive":
            if value == "%json":
                return ("json", self.take()[1])
            if value == "%regex":
                return ("sre", self.take()[1])
            raise UnsupportedFeatureError(f"grammar directive {value} inside a rule")
        if kind == "special":
            self.has_tokens = True
            return ("tok", _token_spec(value))
        if value == "@":  # a reference to another grammar: a Lark text alone has none
            t = self.take()
            if t[0] == "number":
                raise GrammarSyntaxError("numeric grammar references (like @0) are not supported (as llguidance)")
            raise GrammarSyntaxError(f"unknown grammar @{t[1]} (a single Lark grammar has no sub-grammars)")
        if value == "<":
            raise GrammarSyntaxError(f"bad special token at offset {pos} in grammar")
        raise GrammarSyntaxError(f"unexpected {value!r} at offset {pos} in grammar")


def _token_spec(text: str):
    """`<|name|>` -> ("name", text); `<[1,5-9]>` -> ("ranges", negated, [(lo, hi), ...]);
    `<[*]>` -> ("any",).  Ranges are inclusive, as in llguidance."""
    if not (text.startswith("<[") and text.endswith("]>")):
        return ("name", text)
    body = text[2:-2]
    negate = body.startswith("^")
    if negate:
        body = body[1:]
    if body == "*":
        if negate:
            raise GrammarSyntaxError("negated wildcard token <[^*]> is not supported")
        return ("any",)
    if "*" in body:
        raise GrammarSyntaxError("wildcard token range '*' must not contain additional tokens")
    ranges = []
    for part in body.split(","):
        ends = [e.strip() for e in part.split("-")]
        if len(ends) > 2:
            raise GrammarSyntaxError(f"invalid token range: {part!r} in {text}")
        if len(ends) == 1 and not ends[0]:
            continue
        if not all(e.isascii() and e.isdigit() for e in ends):
            raise GrammarSyntaxError(f"invalid token id in {text}")
        lo, hi = int(ends[0]), int(ends[-1])
        if lo > hi:
            raise GrammarSyntaxError(f"invalid token range: {part!r} in {text}")
        ranges.append((lo, hi))
    if not ranges:
        raise GrammarSyntaxError(f"empty token range {text}")
    return ("ranges", negate, ranges)


def _resolve_token(spec, vocab, text_for_errors: str):
    """A special-token spec -> sorted inclusive ranges of token ids, for tokenizer `vocab`
    (an object with `n_vocab` and `special_names`: name -> id)."""
    n = vocab.n_vocab
    if spec[0] == "any":
        return [(0, n - 1)]
    if spec[0] == "name":
        t = vocab.special_names.get(spec[1])
        if t is None:
            some = ", ".join(sorted(vocab.special_names)[:20]) or "none"
            raise GrammarSyntaxError(f"unknown special token: {spec[1]!r}; this tokenizer's special tokens: {some}")
        return [(t, t)]
    _, negate, ranges = spec
    for lo, hi in ranges:
        if hi >= n:
            raise GrammarSyntaxError(f"Token range end too large: {hi} (vocabulary of {n})")
    if not negate:
        return list(ranges)
    out = []
    cur = 0
    for lo, hi in sorted(ranges):
        if hi < cur:
            continue
        if lo > cur:
            out.append((cur, lo - 1))
        cur = max(cur, hi + 1)
    if cur <= n - 1:
        out.append((cur, n - 1))
    return out


class _AnyVocab:
    """A vocabulary with every special token (id 0) and 2**32 ids: checks a grammar with
    special tokens before any tokenizer is known."""
    n_vocab = 1 << 32

    class special_names:
        @staticmethod
        def get(name):
            return 0


ANY_VOCAB = _AnyVocab()


def _is_terminal(name: str) -> bool:
    return name.lstrip("_")[:1].isupper()


def _regex_text(pattern: str, flags: str) -> str:
    # inside /.../, "\/" is a slash
    pattern = re.sub(r"\\(\\|/)", lambda m: m.group(0) if m.group(1) == "\\" else "/", pattern)
    return f"(?{flags}:{pattern})" if flags else pattern


def _is_lazy(attrs: dict) -> bool:
    """llguidance's `Rule::is_lazy`: a stop / suffix that is a regex or a non-empty string."""
    like = attrs.get("stop", attrs.get("suffix"))
    return like is not None and like != ""


_KNOWN_OPTIONS = {"allow_initial_skip", "ignore_once", "no_forcing", "allow_invalid_utf8"}
_LEXEME_ATTRS = {"lazy", "max_tokens", "temperature", "stop", "suffix", "capture", "stop_capture"}


class _Builder:
    """Rule trees -> `earley.Grammar`: every string, regex and terminal used in a rule is a
    lexeme (one per distinct expression); a lexeme that matches the empty string is wrapped
    in a nonterminal that may also be empty (as llguidance does); repetitions become helper
    nonterminals (`x*` left-recursive, `x{n,m}` n copies and a chain of m - n optional ones)."""

    def __init__(self, rules: dict, ignore: list, attrs: dict, options: dict, limits, vocab=None):
        self.vocab = vocab
        self.defs = rules
        self.attrs = attrs
        self.limits = limits
        self.es = D.ExprSet()
        self.g = E.Grammar(self.es)
        self.term_trees: dict = {}
        self._busy: set = set()
        self._depth = 0
        self.lex_sym: dict = {}  # (expression id, lazy) -> symbol
        self.nt: dict = {}
        for k, v in options.items():  # (other keys are ignored, as llguidance does)
            if k in _KNOWN_OPTIONS and not isinstance(v, bool):
                raise GrammarSyntaxError(f"%llguidance option {k} must be true or false")
        self.g.no_forcing = bool(options.get("no_forcing"))
        if options.get("allow_invalid_utf8"):
            raise UnsupportedFeatureError("%llguidance option allow_invalid_utf8",
                                          "regexes over bytes; llguidance 1.9.1's own masks there allow "
                                          "tokens it then rejects, so there is no reference to match")
        self.g.allow_initial_skip = bool(options.get("allow_initial_skip"))
        self.g.skip_once = bool(options.get("ignore_once"))
        if ignore:
            trees = [self.tree(n) for n in ignore]
            e = self.compile(("alt", trees) if len(trees) > 1 else trees[0])
            if e == D.NOTHING:
                raise ConstraintError("%ignore matches nothing")
            self.g.skip = self.g.lexeme(e, "%ignore")

    # -- lexemes: trees of code points -------------------------------------------------------
    def tree(self, node):
        """A lexeme's rule tree -> a code-point tree (terminals named in it inlined)."""
        self._depth += 1
        try:
            if self._depth > self.limits.max_nesting:
                raise E.GrammarLimitError(f"a terminal nested more than {self.limits.max_nesting} deep, "
                                          "counting the terminals it names (Limits.max_nesting)")
            return self._tree(node)
        finally:
            self._depth -= 1

    def _tree(self, node):
        kind = node[0]
        if kind == "str":
            text, flags = node[1], node[2]
            items = []
            for c in text:  # "..."i: each character's simple case folding class, as llguidance
                cp = ord(c)
                items.append(("set", R.case_fold(((cp, cp),)) if flags else ((cp, cp),)))
            return ("cat", items) if items else R.EMPTY
        if kind == "rng":
            return ("set", ((node[1], node[2]),))
        if kind == "re":
            return R.parse(_regex_text(node[1], node[2]), self.limits.max_nesting)
        if kind == "name":
            name = node[1]
            if not _is_terminal(name):
                raise GrammarSyntaxError(f"rule {name} used inside a terminal")
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
        if kind == "json":
            raise GrammarSyntaxError("%json inside a terminal")
        if kind == "tok":
            raise GrammarSyntaxError("special tokens (like <|name|> or <[id]>) cannot be used in terminals")
        if kind == "and":
            return ("and", [self.tree(n) for n in node[1]])
        if kind == "not":
            return ("not", self.tree(node[1]))
        if kind == "sre":
            return ("expr", self.structured(node[1]))
        raise AssertionError(kind)

    def structured(self, spec) -> int:
        """`%regex { "substring_chunks": [...] }` (or `substring_words` / `substring_chars`):
        the concatenations of consecutive chunks, the empty one included."""
        # llguidance 1.9.1 knows these three fields only, and exactly one of them
        fields = ("substring_chunks", "substring_words", "substring_chars")
        if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in fields:
            raise GrammarSyntaxError(f"%regex takes exactly one of {', '.join(fields)}; got {str(spec)[:60]}")
        (k, v), = spec.items()
        if k == "substring_chunks" and isinstance(v, list) and all(isinstance(c, str) for c in v):
            chunks = v
        elif k == "substring_chars" and isinstance(v, str):
            chunks = list(v)
        elif k == "substring_words" and isinstance(v, str):
            chunks = re.findall(r"\w+|\W", v)
        else:
            raise GrammarSyntaxError(f"%regex {k} takes {'a list of strings' if k == 'substring_chunks' else 'a string'}")
        es = self.es
        runs = []
        tail = D.NOTHING  # the non-empty runs of consecutive chunks starting at chunk i
        for c in reversed(chunks):
            tail = es.concat(es.literal(c.encode()), es.alt([D.EPSILON, tail]))
            runs.append(tail)
        return es.alt([D.EPSILON] + runs)

    def compile(self, t) -> int:
        """A code-point tree with `and` / `not` / `expr` nodes -> an expression."""
        es = self.es
        k = t[0]
        if k == "cat":
            r = D.EPSILON
            for x in reversed(t[1]):
                r = es.concat(self.compile(x), r)
            return r
        if k == "alt":
            return es.alt([self.compile(x) for x in t[1]])
        if k == "rep":
            return es.repeat(self.compile(t[1]), t[2], t[3])
        if k == "expr":
            return t[1]
        try:
            if k == "and":
                pos = [x for x in t[1] if x[0] != "not"]
                neg = [x[1] for x in t[1] if x[0] == "not"]
                r = self.compile(pos[0]) if pos else self._any()
                for x in pos[1:]:
                    r = es.intersect(r, self.compile(x))
                for x in neg:
                    r = es.difference(r, self.compile(x))
                return r
            if k == "not":  # any byte string outside (invalid UTF-8 included, as llguidance)
                return es.difference(self._any(), self.compile(t[1]))
        except OverflowError:
            raise E.GrammarLimitError("a terminal with & or ~ whose automaton is past 5000 states") from None
        return D.compile_tree(es, t)

    def _any(self) -> int:
        return self.es.repeat(self.es.byteset(D.FULL_MASK), 0, None)

    def lexeme_symbol(self, node, name: str = "") -> int:
        return self.gen_symbol(self.tree(node), name or str(node)[:60])

    def gen_symbol(self, tree, name: str, lazy: bool = False, hidden: bool = False,
                   max_tokens: int | None = None, eos_ending: bool = False) -> int:
        """The symbol of one lexeme (a code-point tree): greedy or lazy, its end hidden
        (`stop=`) or not, limited to `max_tokens` tokens or not, ended by end-of-sequence
        (`stop=""`) or not; one per distinct kind."""
        e = self.compile(tree)
        key = (e, lazy, hidden, max_tokens, eos_ending)
        sym = self.lex_sym.get(key)
        if sym is None:
            if e == D.NOTHING:
                raise ConstraintError(f"grammar lexeme {name} matches nothing")
            k = self.g.lexeme(e, name, lazy)
            if hidden:
                self.g.hidden |= 1 << k
            if max_tokens is not None:
                self.g.max_tokens[k] = max_tokens
            if eos_ending:
                self.g.eos_ending |= 1 << k
            sym = -2 - k
            if self.es.nullable[e]:  # llguidance: X -> lexeme | (empty)
                w = self.g.nonterminal(f"nullable {name[:40]}")
                self.g.prods[w] = [[sym], []]
                sym = w
            self.lex_sym[key] = sym
        return sym

    # -- rules ------------------------------------------------------------------------------
    def _fresh(self, name: str, prods: list) -> int:
        n = self.g.nonterminal(name)
        self.g.prods[n] = prods
        if len(self.g.prods) > self.limits.max_symbols:
            raise E.GrammarLimitError(
                f"grammar with more than {self.limits.max_symbols} symbols (Limits.max_symbols)")
        return n

    def rhs(self, node) -> list:
        if node[0] == "seq":
            return [self.sym(n) for n in node[1]]
        return [self.sym(node)]

    def json_symbol(self, schema) -> int:
        """`%json { schema }`: the JSON texts of the schema (anytok's JSON Schema compiler, with
        llguidance's defaults) as one lexeme over the schema's own expressions."""
        from .json import compile_schema

        key = ("json", _json.dumps(schema, sort_keys=True))
        sym = self.lex_sym.get(key)
        if sym is None:
            if not isinstance(schema, (dict, bool)):
                raise GrammarSyntaxError("%json must be followed by a JSON Schema (an object or a boolean)")
            es, e = compile_schema(schema)
            sym = self.lex_sym[key] = -2 - self.g.lexeme(e, "%json", False, es)
        return sym

    def token_symbol(self, spec) -> int:
        """A special token or token range: one lexeme `\\xff` + byte j (j numbers the token
        lexemes of the grammar), which no ordinary token's bytes reach: `earley.States` lists
        the token ids of lexeme j in `token_ranges[j]`, and the matcher allows and consumes
        those ids (see `matcher.py`), as llguidance's token-range lexemes."""
        if self.vocab is None:
            raise AssertionError("special tokens are compiled per tokenizer")
        ranges = _resolve_token(spec, self.vocab, "")
        key = ("tok", spec[1] if spec[0] == "name" else tuple(ranges))
        sym = self.lex_sym.get(key)
        if sym is None:
            g = self.g
            j = len(g.token_ranges)
            if j > 255:
                raise UnsupportedFeatureError("more than 256 distinct special tokens or token ranges in one grammar")
            g.token_ranges.append(ranges)
            name = spec[1] if spec[0] == "name" else "<[" + ",".join(f"{a}-{b}" for a, b in ranges) + "]>"
            sym = self.lex_sym[key] = -2 - g.lexeme(self.es.literal(bytes((0xFF, j))), name)
        return sym

    def sym(self, node) -> int:
        k = node[0]
        if k == "tok":
            return self.token_symbol(node[1])
        if k == "json":
            return self.json_symbol(node[1])
        if k in ("str", "re", "rng", "sre", "and", "not") or k == "name" and _is_terminal(node[1]):
            return self.lexeme_symbol(node, name=node[1] if k == "name" else "")
        if k == "name":
            n = self.nt.get(node[1])
            if n is None:
                raise GrammarSyntaxError(f"undefined rule {node[1]}")
            return n
        if k == "seq":
            return self._fresh("(seq)", [self.rhs(node)])
        if k == "alt":
            return self._fresh("(alt)", [self.rhs(a) for a in node[1]])
        inner, lo, hi = node[1], node[2], node[3]
        if lo + (hi or 0) > self.limits.max_symbols:
            raise E.GrammarLimitError(
                f"repetition {{{lo},{hi}}} larger than the symbol budget (Limits.max_symbols)")
        item = self.sym(inner)
        if hi is None:
            star = self.g.nonterminal("(star)")
            self.g.prods[star] = [[], [star, item]]
            return self._fresh("(rep)", [[item] * lo + [star]]) if lo else star
        tail = []
        for _ in range(hi - lo):  # O_k -> (empty) | item O_(k-1)
            tail = [self._fresh("(opt)", [[], [item] + tail])]
        return self._fresh("(rep)", [[item] * lo + tail])

    def build(self) -> E.Grammar:
        if "start" not in self.defs:
            raise GrammarSyntaxError("grammar has no start rule")
        g = self.g
        rules = [n for n in self.defs if not _is_terminal(n)]
        rules.remove("start")
        for n in ["start"] + rules:
            self.nt[n] = g.nonterminal(n)
        for n in ["start"] + rules:
            body = self.defs[n]
            attrs = self.attrs.get(n, {})
            stop, suffix = attrs.get("stop"), attrs.get("suffix")
            if stop is not None and suffix is not None:
                raise GrammarSyntaxError(f"stop= and suffix= cannot be used together (rule {n})")
            max_tokens = attrs.get("max_tokens")
            if max_tokens is not None:
                if not (isinstance(max_tokens, str) and max_tokens.isdigit()):
                    raise GrammarSyntaxError(f"max_tokens of {n} must be a number")
                max_tokens = int(max_tokens)
                if max_tokens == 0:  # as llguidance: zero tokens, so the empty string
                    g.prods[self.nt[n]] = [[]]
                    continue
            like = stop if stop is not None else suffix
            if like is None and "stop_capture" in attrs:
                raise GrammarSyntaxError(f"stop_capture requires stop= or suffix= (rule {n})")
            if like is not None and not isinstance(like, (str, tuple)):
                raise GrammarSyntaxError(f"stop= / suffix= of {n} must be a string or a regex")
            if like is None and body[0] == "json" and (max_tokens is not None or "temperature" in attrs):
                # as llguidance: a nested grammar (its own lexeme class) with the attributes
                if max_tokens is not None:
                    raise UnsupportedFeatureError("max_tokens= on a %json rule", n)
                g.prods[self.nt[n]] = [[self.json_symbol(body[1])]]  # (temperature: masks unchanged)
            elif like is not None or max_tokens is not None or "temperature" in attrs:
                # one lexeme (llguidance's `gen`): the body, then the stop / suffix (a lazy
                # lexeme); with max_tokens= / temperature= and neither, a greedy one
                try:  # as llguidance: on terminals only
                    tree = self.tree(body)
                except GrammarSyntaxError as e:
                    raise GrammarSyntaxError(
                        f"{e}; temperature= and max_tokens= only supported on TERMINALS") from None
                if like is not None and like not in ("", ("re", "", "")):
                    like_node = ("str", like, "") if isinstance(like, str) else like
                    if like_node[0] == "re" and set(like_node[2]) - set("is"):
                        raise UnsupportedFeatureError(f"regex flags {like_node[2]!r} in a grammar")
                    tree = ("cat", [tree, self.tree(like_node)])
                # stop: the stop's bytes are hidden, and (as in llguidance) no token goes on
                # past them (earley.States' barrier states)
                # stop="" / suffix="": a greedy lexeme that end-of-sequence may also end
                g.prods[self.nt[n]] = [[self.gen_symbol(tree, n, lazy=like is not None and like != "",
                                                        hidden=stop is not None and stop != "",
                                                        max_tokens=max_tokens, eos_ending=like == "")]]
            elif body[0] == "alt":
                g.prods[self.nt[n]] = [self.rhs(a) for a in body[1]]
            else:
                g.prods[self.nt[n]] = [self.rhs(body)]
        for n in self.defs:  # terminals are checked even when unused (as llguidance)
            if _is_terminal(n):
                self.tree(("name", n))
        return g


def read_grammar(text: str, max_nesting: int | None = None) -> _Reader:
    r = _Reader(text, max_nesting or E.Limits().max_nesting)
    r.read()
    return r


def compile_grammar(text: str, limits=None, vocab=None):
    """(States, start state) of the strings the grammar generates, as llguidance lexes them.
    A grammar with special tokens needs `vocab` (see `_resolve_token`)."""
    r = read_grammar(text)
    return compile_read(r, limits, vocab)


def compile_read(r: _Reader, limits=None, vocab=None):
    return _compile_rules(r.rules, r.ignore, r.attrs, r.options, limits, vocab)


def _compile_rules(rules, ignore, attrs, options, limits, vocab=None):
    limits = limits or E.Limits()
    g = _Builder(rules, ignore, attrs, options, limits, vocab).build()
    states = E.States(g, limits)
    return states, states.start
