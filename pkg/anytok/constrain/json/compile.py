"""Compiling a schema: the JSON texts it allows as the builder's rule trees of one lexeme
(lexemes joined by optional whitespace, `$ref`s, "any value" and remainder automata as
recursive rules), lowered by `terminals.Terminals` into one `derivatives.ExprSet` expression;
the roles of the other modules of this package mixed into one `_Compiler`."""

from __future__ import annotations

import json
import re

from .. import derivatives as D
from .. import regex_syntax as R
from ..errors import ConstraintError, GrammarLimitError, UnsupportedFeatureError
from ..._gc import gc_paused
from .constants import ConstantsMixin
from .disjoint import DisjointMixin
from .formats import FORMATS
from .keywords import (
    ANNOTATIONS, CONST_SIBLINGS, CONTAINER_KEYWORDS, EXPRESSION_BUDGET, IMPLEMENTED_HERE, INTERSECTION_BUDGET,
    REJECTED, SUBSCHEMA_BUDGET, TYPES, UNKNOWN_IN_DRAFT, Unsat, check_depth, json_equal, usize,
)
from .merge import PATTERNS_APPLIED, MergeMixin, both_schemas
from .normalized import verdict
from .numbers import NUMBER_RE, NumbersMixin
from .options import JsonOptions
from .refs import RefsMixin
from .strings import ANY_CP, quote_tree, search_tree
from ..terminals import EMPTY, NOTHING, Terminals, probe


class _Compiler(MergeMixin, RefsMixin, DisjointMixin, NumbersMixin, ConstantsMixin):
    def __init__(self, root, options: "JsonOptions | None" = None, es: "D.ExprSet | None" = None):
        o = options or JsonOptions()
        self.root = root
        self.ids = None  # `$id`s and anchors, indexed on the first `$ref` that needs them
        draft = root.get("$schema") if isinstance(root, dict) else None
        self.unknown = UNKNOWN_IN_DRAFT.get(draft.rstrip("#"), set()) if isinstance(draft, str) else set()
        self.coerce_one_of = o.coerce_one_of or o.lenient  # llguidance: lenient coerces oneOf too
        self.lenient = o.lenient
        shared = _shared(o)
        self.defs: dict = {}  # the rules of the rule trees built: name -> tree
        # the builder's lexeme compiler, with what every schema shares already lowered (or, in
        # a grammar's expression set `es`, lowered there as used); asked whether a tree is empty
        # (lexemes, intersections) while the trees are built
        self.terms = shared.terms.fork(self.defs) if es is None else Terminals(self.defs, es)
        self.terms.budget = INTERSECTION_BUDGET
        es = self.terms.es
        self.expr_base = len(es.exprs)  # (the template's expressions do not count against the budget)
        # whitespace: at most one match of the skip regex before each lexeme (llguidance's lexer
        # skips one lexeme of it; its default `[ \t\n\r]+` made optional is `[ \t\n\r]*`)
        self.ws_mask = o.ws_mask
        self.ws = shared.ws
        self.lits = dict(shared.lits)  # text -> its lexeme
        self.regexes = dict(shared.regexes)  # regex text -> its tree
        self.rules: dict = {}  # JSON pointer -> its rule's ("rec", name)
        self.pending: list = []
        self.any_ref = None
        self._simple_string = shared.string
        self._key_base = shared.key_base
        self.visited = 0  # value() calls, against SUBSCHEMA_BUDGET
        self.comma = shared.comma
        self.colon = shared.colon

    # -- building blocks: rule trees (see builder.py), lowered by `self.terms` -------------
    def lexeme(self, e) -> tuple:
        """A lexeme: optional whitespace, then `e`."""
        if self.terms.empty(e):
            raise Unsat("empty lexeme")
        return ("seq", [self.ws, e])

    def lit(self, text: str) -> tuple:
        r = self.lits.get(text)
        if r is None:
            r = self.lits[text] = self.lexeme(("str", text, ""))
        return r

    @staticmethod
    def seq(*items) -> tuple:
        return ("seq", list(items))

    @staticmethod
    def opt(e) -> tuple:
        return ("alt", [e, EMPTY])

    def regex(self, pattern: str) -> tuple:
        r = self.regexes.get(pattern)
        if r is None:
            r = self.regexes[pattern] = ("re", pattern, "")
        return r

    def string_lexeme(self, body_tree) -> tuple:
        body = ("parsed", _quote(body_tree))
        if self.terms.empty(body):
            raise Unsat("string pattern matches nothing")
        return self.lexeme(self.seq(QUOTE, body, QUOTE))

    def simple_string(self) -> tuple:
        return self._simple_string

    @staticmethod
    def quoted(tree) -> tuple:
        """The JSON string (with its quotes) of the decoded texts `tree` matches."""
        return ("seq", [QUOTE, ("parsed", _quote(tree)), QUOTE])

    def key_base(self) -> tuple:
        """Any JSON string with any `\\uXXXX` escape (llguidance's additional-key lexeme)."""
        return self._key_base

    def general_key(self, taken: list, patterns: list = (), where: str = "") -> tuple:
        """Any JSON string with any `\\uXXXX` escape (llguidance's additional-key lexeme), except
        the literal keys in `taken` and the keys of `patterns` (quoted pattern trees)."""
        key = ("minus", self.key_base(), frozenset(taken)) if taken else self.key_base()
        if patterns:  # one product with their union (differences one by one grow a DFA each time)
            key = ("and", [key, ("not", ("alt", list(patterns)))])
            try:
                self.terms.empty(key)  # (the product made now, within the budget)
            except OverflowError:
                raise UnsupportedFeatureError("JSON Schema patternProperties this large", f"at {where}") from None
        return self.lexeme(key)

    def any_value(self) -> tuple:
        if self.any_ref is None:
            name = self.rule_name("ANY")
            self.any_ref = ("rec", name)
            self.defs[name] = ("alt", [
                self.lit("null"),
                self.lexeme(self.regex("true|false")),
                self.lexeme(self.regex(NUMBER_RE)),
                self.simple_string(),
                self.array_of([], self.any_ref, 0, None),
                self.object_of([], [(self.simple_string(), self.any_ref)]),
            ])
        return self.any_ref

    def rule_name(self, hint: str) -> str:
        """A new rule name (a terminal's: uppercase) after `hint` (a JSON pointer, ...)."""
        base = "R_" + re.sub(r"[^A-Za-z0-9_]+", "_", hint).strip("_")[:48] if hint != "ANY" else "ANY"
        name, n = base, 1
        while name in self.defs:
            n += 1
            name = f"{base}_{n}"
        self.defs[name] = NOTHING  # (reserved; the body is set when compiled)
        return name

    def list_of(self, item) -> tuple:
        """item (, item)*"""
        return self.seq(("rep", self.seq(item, self.comma), 0, None), item)

    def array_of(self, prefix: list, items, min_items: int, max_items):
        """llguidance's array: required items, then nested optional ones (or an open tail)."""
        required, optional = [], []
        n = max_items if max_items is not None else max(len(prefix), min_items)
        for i in range(n):
            if i < len(prefix):
                item = prefix[i]
                if item is None:  # unsatisfiable prefix item: no more items from here on
                    if i < min_items:
                        raise Unsat("required array item is unsatisfiable")
                    max_items = i
                    break
            elif items is not None:
                item = items
            else:
                break
            (required if i < min_items else optional).append(item)
        if max_items is None and items is not None:
            optional.append(self.list_of(items))
        parts = [self.lit("[")]
        for i, item in enumerate(required):
            if i:
                parts.append(self.comma)
            parts.append(item)
        if optional:
            acc = EMPTY
            for item in reversed(optional[1:]):
                acc = self.opt(self.seq(self.comma, item, acc))
            tail = self.seq(optional[0], acc)
            parts.append(self.opt(self.seq(self.comma, tail) if required else tail))
        parts.append(self.lit("]"))
        return self.seq(*parts)

    def object_of(self, named: list, extras: list, min_extra: int = 0, max_extra=None) -> tuple:
        """`named`: [(key lexeme, value, required)] in order, then min_extra..max_extra pairs,
        in any order, of the (key lexeme, value) kinds in `extras` (pattern and additional
        properties)."""
        items = [(self.seq(k, self.colon, v), req) for k, v, req in named]
        if extras and max_extra != 0:
            item = ("alt", [self.seq(k, self.colon, v) for k, v in extras])
            rep = ("rep", self.seq(item, self.comma), max(min_extra - 1, 0),
                   None if max_extra is None else max(max_extra - 1, 0))
            items.append((self.seq(rep, item), min_extra > 0))
        elif min_extra > 0:
            raise Unsat("minProperties is greater than the number of properties")
        return self.fields(items)

    def fields(self, items: list) -> tuple:
        """`{` items in order, comma-separated, the optional ones left out or not `}` (built
        from the last item back, without recursion: objects may have thousands of properties)."""
        n = len(items)
        prefixed = [EMPTY] * (n + 1)  # prefixed[i]: items i.. after an earlier item
        for i in range(n - 1, -1, -1):
            item, req = items[i]
            if req:
                prefixed[i] = self.seq(self.comma, item, prefixed[i + 1])
            else:
                prefixed[i] = self.seq(self.opt(self.seq(self.comma, item)), prefixed[i + 1])
        k = next((i for i, (_, req) in enumerate(items) if req), n)  # the first required item
        first = self.seq(items[k][0], prefixed[k + 1]) if k < n else EMPTY
        for i in range(k - 1, -1, -1):  # optional items before it: each there or not
            first = ("alt", [self.seq(items[i][0], prefixed[i + 1]), first])
        return self.seq(self.lit("{"), first, self.lit("}"))

    # -- schemas ---------------------------------------------------------------------------
    def value(self, s, where: str) -> int:
        """The expression of the JSON values `s` allows (raises Unsat when none)."""
        self.visited += 1
        if self.visited > SUBSCHEMA_BUDGET or len(self.terms.es.exprs) - self.expr_base > EXPRESSION_BUDGET:
            self.over_budget()
        if s is True:
            return self.any_value()
        if s is False:
            raise Unsat("schema is false")
        if not isinstance(s, dict):
            raise ConstraintError(f"JSON schema at {where} must be an object or a boolean, got {json.dumps(s)[:60]}")
        keys = [k for k in s if k not in ANNOTATIONS]
        if self.unknown and any(k in self.unknown for k in keys):  # keywords of later drafts: ignored
            if all(k in self.unknown or k not in IMPLEMENTED_HERE | REJECTED for k in keys):
                return self.any_value()
            # (const is applied whatever the draft, as in llguidance, once another keyword stands by)
            s = {k: v for k, v in s.items() if k not in self.unknown or k == "const"}
            keys = [k for k in keys if k not in self.unknown or k == "const"]
        for k in keys:
            if k in REJECTED and not self.lenient:  # lenient: ignored, as llguidance warns and ignores
                raise UnsupportedFeatureError(f"JSON Schema keyword {k!r}", f"at {where}; llguidance rejects it too")
        keys = [k for k in keys if k in IMPLEMENTED_HERE]
        if self.lenient and "format" in keys and s["format"] not in FORMATS and isinstance(s["format"], str):
            s = {k: v for k, v in s.items() if k != "format"}  # lenient: an unknown format is ignored
            keys.remove("format")
        if not keys:
            return self.any_value()
        applicators = [k for k in keys if k in ("const", "enum", "anyOf", "oneOf", "allOf", "$ref")]
        if applicators:
            others = [k for k in keys if k not in applicators]
            if "const" in applicators and "enum" in applicators:
                # both: the enum values equal to the constant, as llguidance intersects them
                values = s["enum"]
                if not isinstance(values, list):
                    raise ConstraintError(f"JSON schema: enum must be an array at {where}")
                if not any(json_equal(s["const"], v) for v in values):
                    raise Unsat("the const value is not among the enum values")
                return self.value({**{k: v for k, v in s.items() if k != "const"}, "enum": [s["const"]]}, where)
            a = applicators[0]
            if len(applicators) == 1 and a in ("const", "enum") and set(others) <= CONST_SIBLINGS:
                return self.constants(s, a, where)
            if len(applicators) == 1 and a in ("const", "enum") and set(others) <= CONST_SIBLINGS | CONTAINER_KEYWORDS:
                # object/array keywords beside constants: llguidance intersects each constant with
                # them, which keeps the arrays and objects that satisfy them (and leaves scalars be)
                values = [s[a]] if a == "const" else s[a]
                if not isinstance(values, list):
                    raise ConstraintError(f"JSON schema: enum must be an array at {where}")
                container = {k: v for k, v in s.items() if k in CONTAINER_KEYWORDS}
                kept = []
                for v in values:
                    if isinstance(v, (list, dict)):
                        ok, v = self.fits(v, container, where)
                        if not ok:
                            continue
                    kept.append(v)
                if not kept:
                    raise Unsat("no const/enum value satisfies the keywords beside it")
                rest = {k: v for k, v in s.items() if k not in CONTAINER_KEYWORDS and k not in ("const", "enum")}
                return self.constants(dict(rest, enum=kept), "enum", where)
            if len(applicators) > 1 or others or (a == "allOf" and isinstance(s[a], list) and len(s[a]) > 1):
                # keywords next to allOf/anyOf/oneOf/$ref: intersected, as llguidance merges them
                merged = self.merge_all_of(s, where)
                if merged == s:  # nothing left to merge, and still not compilable: a loop otherwise
                    raise UnsupportedFeatureError(
                        f"JSON Schema {a} next to "
                        + ", ".join(repr(k) for k in applicators[1:] + [k for k in others if k not in CONST_SIBLINGS]),
                        f"at {where}")
                return self.value(merged, where)
            v = s[a]
            if a == "$ref":
                return self.ref(v, where)
            if not isinstance(v, list):
                raise ConstraintError(f"JSON schema: {a} must be an array at {where}")
            if a == "allOf":
                if len(v) != 1:
                    raise UnsupportedFeatureError("JSON Schema allOf with more than one schema", f"at {where}")
                return self.value(v[0], f"{where}/allOf/0")
            if a == "oneOf" and not self.coerce_one_of and not self.disjoint(v) and not (
                    # an unknown keyword beside it: llguidance checks the options again, merged
                    any(k not in ANNOTATIONS for k in s if k != a) and self.disjoint(self.resolved(v, where))):
                raise UnsupportedFeatureError(
                    "JSON Schema oneOf whose options are not verifiably disjoint",
                    f"at {where}; llguidance rejects it too unless coerce_one_of")
            return self.any_of([(o, f"{where}/{a}/{i}") for i, o in enumerate(v)])
        types = s.get("type", list(TYPES))
        if isinstance(types, str):
            types = [types]
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise ConstraintError(f"JSON schema: type must be a string or an array of strings at {where}")
        options = []
        for t in types:
            if t not in TYPES and t != "integer":
                raise ConstraintError(f"JSON schema: invalid type {t!r} at {where}")
            options.append(lambda t=t: self.typed(t, s, where))
        return self.first_satisfiable(options)


    def first_satisfiable(self, builders) -> int:
        out, unsat = [], None
        for b in builders:
            try:
                out.append(b())
            except Unsat as e:
                unsat = e
        if not out:
            raise unsat or Unsat("no options")
        return out[0] if len(out) == 1 else ("alt", out)

    def any_of(self, options) -> int:
        if not options:
            raise Unsat("anyOf is empty")
        if any(o is True or o == {} for o, _ in options):
            return self.any_value()
        return self.first_satisfiable([lambda o=o, w=w: self.value(o, w) for o, w in options])

    def typed(self, t: str, s: dict, where: str) -> int:
        if t == "null":
            return self.lit("null")
        if t == "boolean":
            return self.lexeme(self.regex("true|false"))
        if t in ("integer", "number"):
            return self.number(s, t == "integer", where)
        if t == "string":
            return self.string(s, where)
        if t == "array":
            return self.array(s, where)
        return self.object(s, where)


    def string(self, s: dict, where: str) -> int:
        lo = usize(s, "minLength", where) or 0
        hi = usize(s, "maxLength", where)
        if hi is not None and lo > hi:
            raise Unsat("minLength is greater than maxLength")
        length = ("rep", ("set", ANY_CP), lo, hi)
        if "pattern" not in s and "format" not in s:
            return self.string_lexeme(length)
        trees = self.text_trees(s, where)
        if lo or hi is not None or not trees:
            trees.append(length)
        if len(trees) == 1:
            return self.string_lexeme(trees[0])
        # pattern, format and lengths together: the intersection of the quoted languages (quoting
        # is one-to-one and prefix-free per character, so it commutes with intersection), kept
        # lazy as llguidance's derivre keeps `And`: only the tuples of derivatives a walk
        # reaches are made; whether any string is left is decided here within a budget
        # every quoted tree is a set of JSON string bodies: once `minLength` is met the length
        # side is any body, and the intersection is the other side alone (`conj`'s third part)
        body = ("conj", [("parsed", _quote(t)) for t in trees], _ANY_BODY)
        try:
            if self.terms.empty(body):
                raise Unsat("no string satisfies pattern/format/length together")
        except OverflowError:
            raise UnsupportedFeatureError(
                "JSON Schema string constraints whose intersection is this large",
                f"at {where} (no common string found within {INTERSECTION_BUDGET:,} steps)") from None
        return self.lexeme(self.seq(QUOTE, body, QUOTE))

    def text_trees(self, s: dict, where: str) -> list:
        """The trees of `s`'s `pattern` (searched for) and `format` (whole), one per pattern or
        format: `allOf` merges leave a tuple of several (see `intersect`)."""
        trees = []
        pattern, fmt = s.get("pattern"), s.get("format")
        for p in pattern if isinstance(pattern, tuple) else () if pattern is None else (pattern,):
            if not isinstance(p, str):
                raise ConstraintError(f"JSON schema: pattern must be a string at {where}")
            trees.append(_memo(_SEARCHED, p, search_tree))
        for f in fmt if isinstance(fmt, tuple) else () if fmt is None else (fmt,):
            if not isinstance(f, str):
                raise ConstraintError(f"JSON schema: format must be a string at {where}")
            if f not in FORMATS:
                if self.lenient and isinstance(fmt, tuple):
                    continue  # (a format of its own is dropped before, in `value`)
                raise ConstraintError(f"JSON schema: unknown format {f!r} at {where}")
            trees.append(_memo(_PARSED, FORMATS[f], R.parse))
        return trees

    def array(self, s: dict, where: str) -> int:
        lo = usize(s, "minItems", where) or 0
        hi = usize(s, "maxItems", where)
        if hi is not None and lo > hi:
            raise Unsat("minItems is greater than maxItems")
        items = s.get("items", True)
        schema_uri = str(self.root.get("$schema", "")) if isinstance(self.root, dict) else ""
        old_draft = any(d in schema_uri for d in ("draft-03", "draft-04", "draft-06", "draft-07", "2019-09"))
        if old_draft or "additionalItems" in s or isinstance(items, list):
            # drafts up to 2019-09: `items` as an array is the prefix, `additionalItems` the rest
            # (ignored when `items` is not an array); `prefixItems` does not exist there
            if isinstance(items, list):
                prefix, items = items, s.get("additionalItems", True)
            else:
                prefix = []
            stem = "items"
        else:
            prefix = s.get("prefixItems", [])
            stem = "prefixItems"
        if not isinstance(prefix, list):
            raise ConstraintError(f"JSON schema: prefixItems must be an array at {where}")
        compiled = []
        for i, p in enumerate(prefix):
            try:
                compiled.append(self.value(p, f"{where}/{stem}/{i}"))
            except Unsat:
                compiled.append(None)
        try:
            item = self.value(items, f"{where}/items")
        except Unsat:
            if len(prefix) < lo:
                raise
            item = None
        return self.array_of(compiled, item, lo, hi)

    def object(self, s: dict, where: str) -> int:
        props = s.get("properties", {})
        if not isinstance(props, dict):
            raise ConstraintError(f"JSON schema: properties must be an object at {where}")
        required = s.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise ConstraintError(f"JSON schema: required must be an array of strings at {where}")
        required = list(dict.fromkeys(required))
        extra = s.get("additionalProperties", True)
        min_p = usize(s, "minProperties", where) or 0
        max_p = usize(s, "maxProperties", where)
        if max_p is not None and (min_p > max_p or len(required) > max_p):
            raise Unsat("minProperties/required is greater than maxProperties")
        pats = s.get("patternProperties", {})
        if not isinstance(pats, dict):
            raise ConstraintError(f"JSON schema: patternProperties must be an object at {where}")
        # pattern keys: JSON-quoted search regexes (disjoint, as llguidance requires)
        pat_keys = []
        for p in pats:
            tree = _memo(_SEARCHED, p, search_tree)
            pat_keys.append((p, self.quoted(tree), probe(("parsed", tree))))
        for i, (p1, k1, _) in enumerate(pat_keys):
            for p2, k2, _ in pat_keys[i + 1:]:
                if not self.terms.empty(("and", [k1, k2])):
                    raise ConstraintError(f"JSON schema: patternProperties /{p1}/ and /{p2}/ are not disjoint at {where}")

        def matching(name: str) -> list:
            out = []
            data = name.encode("utf-8", "surrogatepass")
            for p, _, matches in pat_keys:
                if matches(data):
                    out.append(p)
            return out

        named, taken = [], []
        applied = s.get(PATTERNS_APPLIED, False)  # (an allOf merge did it already)
        for name in list(props) + [r for r in required if r not in props]:
            hits = matching(name)
            if name in props:
                # llguidance: a named property matched by a pattern takes both schemas (the
                # named one first; patterns are disjoint, so at most one matches)
                sub = props[name] if applied or not hits else both_schemas(props[name], pats[hits[0]])
            else:
                sub = pats[hits[0]] if hits else extra
            quoted = json.dumps(name, ensure_ascii=False).encode()
            taken.append((quoted, hits))
            is_req = name in required
            try:
                v = self.value(sub, f"{where}/properties/{name}")
            except Unsat:
                if is_req:
                    raise
                continue
            named.append((self.lexeme(("str", quoted.decode(), "")), v, is_req))
        extras = []
        for p, key, _ in pat_keys:
            try:
                v = self.value(pats[p], f"{where}/patternProperties/{p}")
            except Unsat:
                continue
            excluded = frozenset(q for q, hits in taken if p in hits)
            if excluded:
                key = ("minus", key, excluded)
            if not self.terms.empty(key):  # (every key it matches is a named property)
                extras.append((self.lexeme(key), v))
        try:
            extra_value = self.value(extra, f"{where}/additionalProperties")
        except Unsat:
            extra_value = None
        if extra_value is not None:
            if taken or pat_keys:
                key = self.general_key([q for q, _ in taken], [k for _, k, _ in pat_keys], where)
            else:
                key = self.simple_string()
            extras.append((key, extra_value))
        n_req = sum(1 for *_, r in named if r)
        n_opt = len(named) - n_req
        min_x = max(min_p - n_req, 0)
        max_x = None if max_p is None else max(max_p - n_req, 0)
        if n_opt and (min_x > 0 or max_x is not None):
            # llguidance: only "at most one" / "at least one" / "exactly one" of the optional
            # properties, and only without additional properties
            special = min_x <= 1 and (1 if max_x is None else max_x) == 1 and extra is False and not pats
            if not special and not self.lenient:
                raise UnsupportedFeatureError(
                    "JSON Schema minProperties/maxProperties with optional properties",
                    f"at {where}; llguidance rejects it too unless all named properties are required")
        if n_opt and (min_x > 0 or max_x is not None) and special:
            # (lenient, llguidance warns and bounds only the additional properties, below)
            items = [(self.seq(k, self.colon, v), r) for k, v, r in named]
            options = []
            for idx, (_, r) in enumerate(items):
                if r:
                    continue
                if max_x == 1:
                    options.append([(it, True) for j, (it, rr) in enumerate(items) if j == idx or rr])
                else:
                    options.append([(it, rr or j == idx) for j, (it, rr) in enumerate(items)])
            if max_x == 1 and min_x == 0:
                options.append([(it, True) for it, rr in items if rr])
            return ("alt", [self.fields(o) for o in options])
        return self.object_of(named, extras, min_x, max_x)

    def over_budget(self):
        raise UnsupportedFeatureError(
            "JSON schema beyond the compile budget",
            f"more than {SUBSCHEMA_BUDGET:,} subschemas visited or {EXPRESSION_BUDGET:,} expressions built "
            f"({self.visited:,} and {len(self.terms.es.exprs) - self.expr_base:,} so far); see docs/constrain-json.md#limits")

    def finish(self, top) -> dict:
        """The rules of the schema's texts: "start" (`top`, its leading whitespace removed)
        and the rules it uses (`$ref` targets, any value, remainder automata)."""
        while self.pending:
            name, target, uri = self.pending.pop()
            try:
                self.defs[name] = self.value(target, uri)
            except Unsat as e:
                raise ConstraintError(f"JSON schema: $ref {uri!r} is unsatisfiable ({e})") from None
        return {"start": ("nostart", top, self.ws_mask), **self.defs}

    def lower(self, rules: dict) -> int:
        """The expression of the rules `finish` made, in `self.terms`."""
        start = self.terms.finish(rules["start"])
        if start == D.NOTHING:
            raise Unsat("every JSON value it allows nests without end (a required property recurses)")
        if len(self.terms.es.exprs) - self.expr_base > EXPRESSION_BUDGET:
            self.over_budget()
        return start


# Per process, as the same regexes and string kinds come back in schema after schema (trees are
# never changed once made): regex text -> its tree, pattern -> its searched-for tree, repr of a
# tree -> its JSON-quoted tree
_PARSED: dict = {}
_SEARCHED: dict = {}
_QUOTED: dict = {}


def _memo(cache: dict, key, make):
    r = cache.get(key)
    if r is None:
        r = make(key)
        if len(cache) >= 4096:
            cache.clear()
        cache[key] = r
    return r


def _quote(tree):
    return _memo(_QUOTED, repr(tree), lambda _: quote_tree(tree))


QUOTE = ("str", '"', "")
_ANY_BODY = ("parsed", quote_tree(("rep", ("set", ANY_CP), 0, None)))  # any JSON string body
_SHARED: dict = {}  # whitespace and separators -> a `_Shared`


class _Shared:
    """The trees every schema with these whitespace and separator options uses (the lexemes
    of JSON's punctuation, literals, numbers, strings and keys) and a frozen `Terminals` they
    are lowered in, with what the first masks need of their derivatives: made once per process
    and forked per schema (they do not depend on the schema; the masks are the same, only made
    once)."""

    def __init__(self, o: JsonOptions):
        terms = Terminals()
        self.ws = ("alt", [("parsed", o.ws_tree), EMPTY]) if o.ws_tree is not None else EMPTY

        def lexeme(e):
            r = ("seq", [self.ws, e])
            terms.lower(r)
            return r

        self.comma = lexeme(("parsed", o.item_tree))
        self.colon = lexeme(("parsed", o.key_tree))
        self.lits = {text: lexeme(("str", text, "")) for text in ("null", "{", "}", "[", "]")}
        self.regexes = {p: ("re", p, "") for p in ("true|false", NUMBER_RE)}
        for r in self.regexes.values():
            lexeme(r)
        self.string = lexeme(("seq", [QUOTE, ("parsed", _quote(("rep", ("set", ANY_CP), 0, None))), QUOTE]))
        hex2 = "[0-9a-fA-F]{2}"
        scalar = (f"[0-9a-cA-Ce-fE-F]{hex2}[0-9a-fA-F]"  # U+0000-U+CFFF, U+E000-U+FFFF
                  f"|[dD][0-7]{hex2}"  # U+D000-U+D7FF
                  f"|[dD][89abAB]{hex2}\\\\u[dD][c-fC-F]{hex2}")  # a surrogate pair
        char = ("re", r'[^"\\\x00-\x1F\x7F]|\\["\\bfnrt]|\\u(?:' + scalar + ")", "")
        self.key_base = ("seq", [QUOTE, ("rep", char, 0, None), QUOTE])
        # the additional-key lexeme's automaton (finite: a few states per UTF-8 and escape
        # step), every state's derivatives grouped, as `minus_literals` asks for them
        terms.warm(self.key_base, 1000)
        terms.es.byte_classes()
        self.terms = terms.freeze()


def _shared(o: JsonOptions) -> _Shared:
    key = (repr(o.ws_tree), o.ws_mask, repr(o.item_tree), repr(o.key_tree))
    t = _SHARED.get(key)
    if t is None:
        if len(_SHARED) >= 16:
            _SHARED.clear()
        t = _SHARED[key] = _Shared(o)
    return t


def schema_rules(schema) -> dict:
    """The rule trees of the JSON texts `schema` allows: {"start": tree, rule name: tree, ...}
    (the builder's node kinds, see builder.py; `("rec", name)` uses a rule), what
    `compile_schema` lowers into one expression."""
    return _build(schema)[1]


def compile_schema(schema, es: "D.ExprSet | None" = None) -> tuple:
    """(ExprSet, start expression) of the JSON texts `schema` allows: its rule trees
    (`schema_rules`) lowered by the builder's lexeme compiler (`terminals.Terminals`), in a fork
    of the per-process template's expression set, or in `es` (a grammar's `%json`: one lexeme
    among the grammar's others, its `$ref` rules its own)."""
    if es is None:
        c, rules = _build(schema)
        return c.terms.es, _guarded(c, lambda: c.lower(rules))
    max_exprs = es.max_exprs  # (the compile budget is set on `es` while it builds)
    try:
        c, rules = _build(schema, es)
        return es, _guarded(c, lambda: c.lower(rules))
    finally:
        es.max_exprs = max_exprs


def _build(schema, es: "D.ExprSet | None" = None) -> tuple:
    """(compiler, rule trees) of `schema` (its expressions in `es`, if given)."""
    check_depth(schema)
    options = None
    if isinstance(schema, dict) and "x-guidance" in schema:
        options = schema["x-guidance"]
        schema = {k: v for k, v in schema.items() if k != "x-guidance"}
    text = json.dumps(schema)
    if "\\ud" in text:
        _check_surrogates(schema)
    c = _Compiler(schema, JsonOptions(options), es)
    if "$ref" in text or (not c.coerce_one_of and "oneOf" in text):
        # llguidance's verdict on its oneOfs, and its builder's own refusals, from its
        # normalized form (see normalized.py)
        one_of, refusal = verdict(schema, lambda uri: c.resolve(uri, "#"), FORMATS, c.unknown)
        if refusal is not None:
            raise UnsupportedFeatureError(f"JSON Schema with {refusal}", "llguidance rejects it too")
        if not c.coerce_one_of:
            if one_of is False:
                raise UnsupportedFeatureError("JSON Schema oneOf whose options are not verifiably disjoint",
                                              "llguidance rejects it too unless coerce_one_of")
            c.coerce_one_of = one_of is True  # (None: not modelled, checked oneOf by oneOf)
    # one construct past the budget (a constant of a million characters) stops where it is
    c.terms.es.max_exprs = c.expr_base + EXPRESSION_BUDGET + EXPRESSION_BUDGET // 8
    return c, _guarded(c, lambda: c.finish(c.value(schema, "#")))


def _check_surrogates(schema) -> None:
    """ConstraintError if a string or key of `schema` holds a surrogate code point (U+D800 to
    U+DFFF: from JSON text, a lone `\\uD800` escape): no JSON text encodes it, and llguidance
    refuses the schema (its JSON reader: "lone leading surrogate in hex escape", "unexpected end
    of hex escape"; its Python API: "Value is not JSON serializable")."""
    stack = [schema]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str):
            m = re.search("[\ud800-\udfff]", v)
            if m:
                raise ConstraintError(f"JSON schema holds a lone surrogate U+{ord(m.group()):04X} in the string "
                                      f"{v[:40]!r}: no JSON text encodes it (llguidance rejects the schema too)")


def _guarded(c: _Compiler, work):
    es = c.terms.es
    try:
        with gc_paused():
            return work()
    except GrammarLimitError:
        if len(es.exprs) >= es.max_exprs:
            c.over_budget()
        raise
    except Unsat as e:
        raise ConstraintError(f"JSON schema is unsatisfiable: {e}") from None
    except RecursionError:
        raise UnsupportedFeatureError("JSON schemas nested this deeply") from None
