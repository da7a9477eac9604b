"""The grammar form every constraint compiles to (the grammar IR), and its compilation.

Data flow:

    regex text -------------------\\
    JSON Schema (json/, %json) ----+--> rule trees: named rules (+ attributes, %ignore, options)
    Lark text (grammar.py) --------+    in a GrammarBuilder --compile()--> Constraint over one of
    GBNF text (gbnf.py) -----------/    two engines:
        * a grammar whose start rule is one lexeme and nothing else (a string, a regex, a tree
          of the lexeme-level kinds below and the recursive `rec` rules it uses: a JSON Schema's
          rules, `json_rules`): the lexeme's expression alone, lowered by `terminals.Terminals`
          into one `derivatives.ExprSet` (a lazy DFA with lazily expanded rules, no parser);
        * any other: lexemes (expressions in one `ExprSet`) + BNF productions -> `earley.Grammar`
          -> `earley.States` (an Earley parser over llguidance's lexer, with the same
          interface as an expression set).  Each lexeme's tree (the terminals it names inlined,
          `%regex` substrings written out as `str`/`seq`/`alt`, a `stop=` / `suffix=` rule's
          body and stop joined by `seq`, a special token's `token_lexeme(j)`) is lowered by one
          `terminals.Terminals` sharing the grammar's `ExprSet`, and a `%json`'s rule trees by
          the JSON compiler's `Terminals` on that same `ExprSet` (its `$ref` rules its own): the
          only tree -> expression lowering, for every front end.

A JSON Schema is compiled to rule trees by `json/` (`json.schema_rules`; `json_rules` here
shows them) and those are lowered by `terminals.Terminals` (the lexeme compiler, which also
answers the JSON compiler's questions while it builds: is a tree empty, does a key match);
`("json", schema)` in a rule is that, as one lexeme of the grammar's expression set.  The engine (`derivatives`, `earley`,
`matcher`, `slicer`) sees only what `compile()` makes of the rules: it knows nothing of which
front end built them.

Rule trees are tuples (build them with the functions below, or write them directly):

    literal(text, ignore_case)   ("str", text, "i" or "")   a string; "i": simple case folding
    regex(pattern, flags)        ("re", pattern, flags)     Rust `regex` syntax; flags "i", "s"
    char_range(lo, hi)           ("rng", lo, hi)            one code point in [lo, hi]
    ref(name)                    ("name", name)             a rule or terminal
    seq(*items)                  ("seq", [items])
    alt(*items)                  ("alt", [items])
    repeat(item, lo, hi)         ("rep", item, lo, hi)      hi None: unbounded; optional/star/plus
    both(*items) / negate(item)  ("and", [..]) / ("not", x) terminals only: intersection, complement
    substrings(spec)             ("sre", spec)              llguidance's %regex {"substring_...": ..}
    json_schema(schema)          ("json", schema)           JSON texts valid against a JSON Schema
    special_token(text)          ("tok", spec)              `<|name|>`, `<[5,7-9]>`, `<[^..]>`, `<[*]>`

Lexeme-level kinds (inside one lexeme; what JSON Schemas compile to, see `json_rules`):

    byte_set(mask)               ("bytes", mask)            one byte of a 256-bit set
    parsed(tree)                 ("parsed", tree)           a regex parsed by `regex_syntax.parse`
    recursive(name)              ("rec", name)              rule `name` (a tree, may recurse, not
                                                            left-recursive), expanded lazily by
                                                            the derivatives (`$ref`, any value)
    lazy_both(items, within)     ("conj", [..], within)     strings all items match, derived
                                                            lazily (each item a subset of `within`)
    excluding(item, strings)     ("minus", item, frozenset) `item`'s strings but these byte strings
    no_leading(item, mask)       ("nostart", item, mask)    `item`'s strings not starting with a
                                                            byte of the 256-bit set `mask`
    token_lexeme(j)              ("toklex", j)              the lexeme of the grammar's j-th special
                                                            token or range (`\xff` + byte j); made by
                                                            `compile()` from a `tok` node, its ids in
                                                            `Grammar.token_ranges[j]`, not for rules

A name whose first letter after leading underscores is uppercase is a *terminal* (as in Lark):
its tree is inlined into one lexeme wherever it is used (it may not use rules); any other name
is a *rule* (a nonterminal of the Earley grammar).  Strings, regexes and terminals used in rules
are lexemes, lexed as llguidance lexes them (longest match; a lazy lexeme ends at its first
match).  Rule attributes (`GrammarBuilder.rule(..., **attributes)`), as llguidance's: `lazy`,
`stop=` / `suffix=` (a string or a regex tree: the rule becomes one lexeme, its body then the
stop/suffix, lazy; a stop's bytes are hidden), `max_tokens=N`, `temperature=`, `capture`,
`stop_capture=`.  Options (`option()`), as `%llguidance {...}`: `no_forcing`,
`allow_initial_skip`, `ignore_once`.
"""

from __future__ import annotations

import json as _json
import re

from . import derivatives as D
from . import earley as E
from . import terminals as T
from .constraint import Constraint
from .errors import ConstraintError, GrammarSyntaxError, Limits, UnsupportedFeatureError


def literal(text: str, ignore_case: bool = False) -> tuple:
    """The string `text` (with `ignore_case`: each character's simple case folding class)."""
    return ("str", text, "i" if ignore_case else "")


def regex(pattern: str, flags: str = "") -> tuple:
    """A regex in Rust `regex` syntax; `flags` "i" (case-insensitive) and/or "s" (dot-all)."""
    return ("re", pattern, flags)


def char_range(lo: str, hi: str) -> tuple:
    """One character from `lo` to `hi` (inclusive)."""
    if len(lo) != 1 or len(hi) != 1 or ord(hi) < ord(lo):
        raise GrammarSyntaxError(f"bad character range {lo!r}..{hi!r}")
    return ("rng", ord(lo), ord(hi))


def ref(name: str) -> tuple:
    """A use of rule or terminal `name`."""
    return ("name", name)


def seq(*items) -> tuple:
    """The items one after the other."""
    return items[0] if len(items) == 1 else ("seq", list(items))


def alt(*items) -> tuple:
    """Any one of the items."""
    return items[0] if len(items) == 1 else ("alt", list(items))


def repeat(item, lo: int = 0, hi: int | None = None) -> tuple:
    """`item` from `lo` to `hi` times (`hi` None: unbounded)."""
    if lo < 0 or hi is not None and hi < lo:
        raise GrammarSyntaxError(f"empty repetition range {{{lo},{hi}}}")
    return ("rep", item, lo, hi)


def optional(item) -> tuple:
    return repeat(item, 0, 1)


def star(item) -> tuple:
    return repeat(item, 0, None)


def plus(item) -> tuple:
    return repeat(item, 1, None)


def both(*items) -> tuple:
    """Strings all items match (terminals only; an automaton product)."""
    return ("and", list(items))


def negate(item) -> tuple:
    """Any byte string `item` does not match (terminals only)."""
    return ("not", item)


def substrings(spec: dict) -> tuple:
    """llguidance's `%regex {...}`: `{"substring_chunks": [...]}`, `{"substring_words": "..."}`
    or `{"substring_chars": "..."}`: the concatenations of consecutive chunks."""
    return ("sre", spec)


def json_schema(schema) -> tuple:
    """The JSON texts valid against `schema` (a dict or a bool), as `constrain.json_schema`."""
    return ("json", schema)


def byte_set(mask: int) -> tuple:
    """One byte from the 256-bit set `mask` (bit b: byte b)."""
    return ("bytes", mask)


def parsed(tree) -> tuple:
    """A regex already parsed by `regex_syntax.parse` (a code-point tree)."""
    return ("parsed", tree)


def recursive(name: str) -> tuple:
    """A use of rule `name` inside a lexeme: its tree may use `recursive(name)` again (after a
    byte: not left-recursive), expanded lazily by the derivatives."""
    return ("rec", name)


def lazy_both(items, within) -> tuple:
    """The strings every item matches, kept lazy (derivatives of each taken on demand, as
    derivre's `And`); each item is a subset of `within`, which is left out of the product."""
    return ("conj", list(items), within)


def excluding(item, strings) -> tuple:
    """The strings of `item` except the byte strings `strings`."""
    return ("minus", item, frozenset(strings))


def no_leading(item, mask: int) -> tuple:
    """The strings of `item` that do not start with a byte of the 256-bit set `mask`."""
    return ("nostart", item, mask)


def token_lexeme(j: int) -> tuple:
    """The lexeme of the `j`-th special token (or token range) of a grammar: the bytes `\xff`,
    `j`, which no ordinary token's bytes reach (the matcher allows and consumes the ids
    `earley.Grammar.token_ranges[j]` lists for it).  `compile()` makes one per distinct
    `special_token` it resolves; a rule cannot use it (its ids come with the grammar)."""
    if not isinstance(j, int) or not 0 <= j <= 255:
        raise UnsupportedFeatureError("more than 256 distinct special tokens or token ranges in one grammar")
    return ("toklex", j)


def json_rules(schema) -> dict:
    """The rule trees of the JSON texts `schema` allows (a dict or a bool; top-level
    `x-guidance` options read): {"start": tree, name: tree, ...}, the `rec` rules named after
    the `$ref`s they compile.  `GrammarBuilder` with these rules compiles to the same constraint
    as `constrain.json_schema(schema)`.

    >>> from anytok.constrain import builder as B
    >>> rules = B.json_rules({"type": "integer", "minimum": 0})
    >>> rules["start"][0]
    'nostart'
    """
    from .json import schema_rules

    return schema_rules(schema)


def special_token(text: str) -> tuple:
    """A special token or token range, written as in llguidance's Lark: `<|name|>`, `<[5]>`,
    `<[1,5-9]>`, `<[^0-99]>`, `<[*]>` (resolved against each tokenizer)."""
    return ("tok", _token_spec(text))


class GrammarBuilder:
    """A grammar under construction: rules (name -> rule tree), their attributes, `%ignore`
    trees and options; `compile()` makes the `Constraint`.  The start rule is `start`.

    >>> from anytok.constrain import builder as B
    >>> g = B.GrammarBuilder()
    >>> g.rule("start", B.seq(B.literal("n="), B.ref("NUM")))
    >>> g.rule("NUM", B.regex("[0-9]+"))
    >>> c = g.compile()
    """

    def __init__(self):
        self.rules: dict = {}
        self.attrs: dict = {}
        self.ignored: list = []
        self.options: dict = {}

    def rule(self, name: str, body, **attributes) -> None:
        """Define rule (or terminal, by its name) `name` as `body`, with llguidance's rule
        attributes (`lazy=True`, `stop=`, `suffix=`, `max_tokens=`, `temperature=`,
        `capture=True`, `stop_capture=`)."""
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9-]*", name):
            raise GrammarSyntaxError(f"bad rule name {name!r}")
        if name in self.rules:
            raise GrammarSyntaxError(f"rule {name} defined twice")
        attrs = {}
        for key, value in attributes.items():
            if key not in _LEXEME_ATTRS:
                raise GrammarSyntaxError(f"unknown rule attribute {key!r} on {name}")
            if key == "lazy":
                if value is not True:
                    raise GrammarSyntaxError(f"attribute lazy of {name} takes no value")
                if not _is_lazy(attrs):  # `lazy` is `suffix=//` unless a stop or suffix came before
                    attrs["suffix"] = ("re", "", "")
            elif key in ("stop", "suffix") and ("stop" in attrs or "suffix" in attrs):
                raise GrammarSyntaxError(f"Cannot have multiple stop/suffix conditions (rule {name})")
            else:
                attrs[key] = value
        self.rules[name] = body
        if attrs:
            self.attrs[name] = attrs

    def ignore(self, body) -> None:
        """Allow `body` (a terminal's tree) between any two lexemes (Lark's `%ignore`)."""
        self.ignored.append(body)

    def option(self, name: str, value) -> None:
        """A `%llguidance {...}` option: `no_forcing`, `allow_initial_skip`, `ignore_once`."""
        self.options[name] = value

    def has_tokens(self) -> bool:
        """Whether a special token is used (the grammar is then compiled per tokenizer)."""
        stack = list(self.rules.values())
        while stack:
            n = stack.pop()
            if n[0] == "tok":
                return True
            stack += T.children(n)
        return False

    def compile(self, limits: Limits | None = None, description: str | None = None) -> Constraint:
        """The `Constraint` of the strings the grammar generates.  `limits` as everywhere;
        `description` names it in its repr and errors.  A grammar with special tokens is
        checked now and compiled for each tokenizer on its first `matcher()`."""
        description = description or "grammar"
        if self.has_tokens():
            self._compile(limits, ANY_VOCAB, description)  # (the rest checked now)
            return Constraint(None, 0, description, lambda trie: self._compile(limits, trie, description))
        es, start = self._compile(limits, None, description)
        return Constraint(es, start, description)

    def _compile(self, limits, vocab, description: str):
        limits = limits or Limits()
        body = self.rules.get("start")
        if (body is not None and len(self.rules) == 1 and not self.attrs and not self.ignored
                and not self.options and body[0] in ("re", "str", "rng", "json")):
            return _one_lexeme(body, limits, description)
        if body is not None and not self.attrs and not self.ignored and not self.options and _lexeme_rules(self.rules):
            # one lexeme with recursive rules (a JSON Schema's): lowered alone, as a lazy DFA
            terms = T.Terminals({k: v for k, v in self.rules.items() if k != "start"})
            start = terms.finish(body)
            if start == D.NOTHING:
                raise ConstraintError(f"{description} matches nothing")
            terms.es.set_limits(limits)
            return terms.es, start
        g = _Builder(self.rules, self.ignored, self.attrs, self.options, limits, vocab).build()
        states = E.States(g, limits)
        return states, states.start


_LEXEME_KINDS = {"str", "re", "rng", "bytes", "parsed", "rec", "seq", "alt", "rep", "and", "not", "conj",
                 "minus", "nostart"}


def _lexeme_rules(rules: dict) -> bool:
    """Whether `rules` are one lexeme with recursive rules: the start rule uses `rec` (or a
    kind only a lexeme has) and every rule is made of lexeme-level kinds only."""
    kinds = set()
    for body in rules.values():
        seen, todo = set(), [body]
        while todo:
            n = todo.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if not isinstance(n, tuple) or not n or n[0] not in _LEXEME_KINDS:
                return False
            kinds.add(n[0])
            todo += T.children(n)
    return bool(kinds & {"rec", "bytes", "parsed", "conj", "minus", "nostart"}) and all(
        k == "start" or _is_terminal(k) for k in rules)


def _one_lexeme(body, limits, description: str):
    """A grammar that is one lexeme: its expression alone, served as a lazy DFA."""
    if body[0] == "json":
        from .json import compile_schema

        if not isinstance(body[1], (dict, bool)):
            raise GrammarSyntaxError("%json must be followed by a JSON Schema (an object or a boolean)")
        es, start = compile_schema(body[1])
        es.set_limits(limits)
        return es, start
    es = D.ExprSet()
    es.set_limits(limits)
    start = T.Terminals(es=es, max_nesting=limits.max_nesting).lower(body)
    if start == D.NOTHING:
        raise ConstraintError(f"{description} matches nothing")
    return es, start


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


def _is_lazy(attrs: dict) -> bool:
    """llguidance's `Rule::is_lazy`: a stop / suffix that is a regex or a non-empty string."""
    like = attrs.get("stop", attrs.get("suffix"))
    return like is not None and like != ""


_KNOWN_OPTIONS = {"allow_initial_skip", "ignore_once", "no_forcing", "allow_invalid_utf8"}
_LEXEME_ATTRS = {"lazy", "max_tokens", "temperature", "stop", "suffix", "capture", "stop_capture"}


def _substrings(spec) -> tuple:
    """`%regex { "substring_chunks": [...] }` (or `substring_words` / `substring_chars`) as a
    rule tree: the concatenations of consecutive chunks, the empty one included."""
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
    runs = []
    tail = T.NOTHING  # the non-empty runs of consecutive chunks starting at chunk i
    for c in reversed(chunks):
        tail = ("seq", [("str", c, ""), ("alt", [T.EMPTY, tail])])
        runs.append(tail)
    return ("alt", [T.EMPTY] + runs)


class _Builder:
    """Rule trees -> `earley.Grammar`: every string, regex and terminal used in a rule is a
    lexeme (one per distinct expression, lowered by `self.terms`, a `terminals.Terminals`); a lexeme that matches the empty string is wrapped
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
        # every lexeme's tree lowered into `es` (terminals as the rules of `rec` nodes)
        self.terms = T.Terminals({k: v for k, v in rules.items() if _is_terminal(k)}, self.es,
                                 max_nesting=limits.max_nesting)
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

    # -- lexemes: rule trees lowered by `terminals.Terminals` ----------------------------------
    def tree(self, node):
        """A lexeme's rule tree with the terminals it names inlined (and `%regex` substrings
        written out): a tree of the lexeme-level kinds, for `compile`."""
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
        if kind in ("str", "rng", "re", "parsed", "bytes", "rec", "conj", "minus", "nostart"):
            return node
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
        if kind in ("seq", "alt", "and"):
            return (kind, [self.tree(n) for n in node[1]])
        if kind == "rep":
            return ("rep", self.tree(node[1]), node[2], node[3])
        if kind == "not":
            return ("not", self.tree(node[1]))
        if kind == "json":
            raise GrammarSyntaxError("%json inside a terminal")
        if kind == "tok":
            raise GrammarSyntaxError("special tokens (like <|name|> or <[id]>) cannot be used in terminals")
        if kind == "sre":
            return _substrings(node[1])
        raise GrammarSyntaxError(f"unknown rule tree node {kind!r}")

    def compile(self, tree) -> int:
        """A lexeme's tree (from `tree`) -> its expression (`Terminals.lower`)."""
        try:
            return self.terms.lower(tree)
        except OverflowError:
            raise E.GrammarLimitError("a terminal with & or ~ whose automaton is past 5000 states") from None

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
        llguidance's defaults) as one lexeme, its rule trees lowered by `terminals.Terminals` in
        the grammar's expression set like every other lexeme (its `$ref` rules its own)."""
        from .json import compile_schema

        key = ("json", _json.dumps(schema, sort_keys=True))
        sym = self.lex_sym.get(key)
        if sym is None:
            if not isinstance(schema, (dict, bool)):
                raise GrammarSyntaxError("%json must be followed by a JSON Schema (an object or a boolean)")
            _, e = compile_schema(schema, self.es)
            sym = self.lex_sym[key] = -2 - self.g.lexeme(e, "%json")
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
            tree = token_lexeme(len(g.token_ranges))
            g.token_ranges.append(ranges)
            name = spec[1] if spec[0] == "name" else "<[" + ",".join(f"{a}-{b}" for a, b in ranges) + "]>"
            sym = self.lex_sym[key] = -2 - g.lexeme(self.compile(tree), name)
        return sym

    def sym(self, node) -> int:
        k = node[0]
        if k == "tok":
            return self.token_symbol(node[1])
        if k == "json":
            return self.json_symbol(node[1])
        if k in ("str", "re", "rng", "sre", "and", "not", "bytes", "parsed", "rec", "conj", "minus", "nostart") \
                or k == "name" and _is_terminal(node[1]):
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
        if k == "toklex":
            raise GrammarSyntaxError("token_lexeme nodes are made by compile(); a rule names a special "
                                     "token with special_token(...)")
        if k != "rep":
            raise GrammarSyntaxError(f"unknown rule tree node {k!r}")
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
                if isinstance(max_tokens, str) and max_tokens.isdigit():  # (as read from Lark text)
                    max_tokens = int(max_tokens)
                if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
                    raise GrammarSyntaxError(f"max_tokens of {n} must be a number")
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
                    tree = ("seq", [tree, self.tree(like_node)])
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
