"""Compiling a schema: the JSON texts it allows as one expression of a `derivatives.ExprSet`
(lexemes joined by optional whitespace, `$ref`s and "any value" as lazily expanded rules), the
roles of the other modules of this package mixed into one `_Compiler`."""

from __future__ import annotations

import json

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


class _Compiler(MergeMixin, RefsMixin, DisjointMixin, NumbersMixin, ConstantsMixin):
    def __init__(self, root, options: "JsonOptions | None" = None, es: "D.ExprSet | None" = None):
        o = options or JsonOptions()
        self.root = root
        self.ids = None  # `$id`s and anchors, indexed on the first `$ref` that needs them
        draft = root.get("$schema") if isinstance(root, dict) else None
        self.unknown = UNKNOWN_IN_DRAFT.get(draft.rstrip("#"), set()) if isinstance(draft, str) else set()
        self.coerce_one_of = o.coerce_one_of or o.lenient  # llguidance: lenient coerces oneOf too
        self.lenient = o.lenient
        es = self.es = es if es is not None else _template(o).fork()
        self.expr_base = len(es.exprs)  # (the template's expressions do not count against the budget)
        # whitespace: at most one match of the skip regex before each lexeme (llguidance's lexer
        # skips one lexeme of it; its default `[ \t\n\r]+` made optional is `[ \t\n\r]*`)
        self.ws_mask = o.ws_mask
        self.ws = self.opt(self.tree(o.ws_tree)) if o.ws_tree is not None else D.EPSILON
        self.rules: dict = {}  # JSON pointer -> (rule index, reference)
        self.pending: list = []
        self.any_ref = None
        self._simple_string = None
        self.visited = 0  # value() calls, against SUBSCHEMA_BUDGET
        self.comma = self.lexeme(self.tree(o.item_tree))
        self.colon = self.lexeme(self.tree(o.key_tree))

    # -- building blocks -------------------------------------------------------------------
    def lexeme(self, e: int) -> int:
        """A lexeme: optional whitespace, then `e`."""
        if e == D.NOTHING:
            raise Unsat("empty lexeme")
        return self.es.concat(self.ws, e)

    def lit(self, text: str) -> int:
        return self.lexeme(self.es.literal(text.encode()))

    def seq(self, *items) -> int:
        r = D.EPSILON
        for i in reversed(items):
            r = self.es.concat(i, r)
        return r

    def opt(self, e: int) -> int:
        return self.es.alt((e, D.EPSILON))

    def tree(self, node) -> int:
        return D.compile_tree(self.es, node)

    def regex(self, pattern: str) -> int:
        return self.tree(_memo(_PARSED, pattern, R.parse))

    def string_lexeme(self, body_tree) -> int:
        body = self.tree(_quote(body_tree))
        if body == D.NOTHING:
            raise Unsat("string pattern matches nothing")
        q = self.es.byteset(1 << 0x22)
        return self.lexeme(self.seq(q, body, q))

    def simple_string(self) -> int:
        if self._simple_string is None:
            self._simple_string = self.string_lexeme(("rep", ("set", ANY_CP), 0, None))
        return self._simple_string

    def quoted(self, tree) -> int:
        """The JSON string (with its quotes) of the decoded texts `tree` matches."""
        q = self.es.byteset(1 << 0x22)
        return self.seq(q, self.tree(_quote(tree)), q)

    def key_base(self) -> int:
        """Any JSON string with any `\\uXXXX` escape (llguidance's additional-key lexeme)."""
        es = self.es
        hex2 = "[0-9a-fA-F]{2}"
        scalar = (f"[0-9a-cA-Ce-fE-F]{hex2}[0-9a-fA-F]"  # U+0000-U+CFFF, U+E000-U+FFFF
                  f"|[dD][0-7]{hex2}"  # U+D000-U+D7FF
                  f"|[dD][89abAB]{hex2}\\\\u[dD][c-fC-F]{hex2}")  # a surrogate pair
        char = self.regex(r'[^"\\\x00-\x1F\x7F]|\\["\\bfnrt]|\\u(?:' + scalar + ")")
        q = es.byteset(1 << 0x22)
        return self.seq(q, es.repeat(char, 0, None), q)

    def general_key(self, taken: list, patterns: list = (), where: str = "") -> int:
        """Any JSON string with any `\\uXXXX` escape (llguidance's additional-key lexeme), except
        the literal keys in `taken` and the keys of `patterns` (quoted pattern expressions)."""
        es = self.es
        key = es.minus_literals(self.key_base(), frozenset(taken))
        if patterns:  # one product with their union (differences one by one grow a DFA each time)
            try:
                key = es.difference(key, es.alt(list(patterns)), INTERSECTION_BUDGET)
            except OverflowError:
                raise UnsupportedFeatureError("JSON Schema patternProperties this large", f"at {where}") from None
        return self.lexeme(key)

    def any_value(self) -> int:
        if self.any_ref is None:
            k, ref = self.es.new_rule(False)
            self.any_ref = ref
            options = [
                self.lit("null"),
                self.lexeme(self.regex("true|false")),
                self.lexeme(self.regex(NUMBER_RE)),
                self.simple_string(),
                self.array_of([], ref, 0, None),
                self.object_of([], [(self.simple_string(), ref)]),
            ]
            self.es.set_rule(k, self.es.alt(options))
        return self.any_ref

    def list_of(self, item: int) -> int:
        """item (, item)*"""
        return self.seq(self.es.repeat(self.seq(item, self.comma), 0, None), item)

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
            acc = D.EPSILON
            for item in reversed(optional[1:]):
                acc = self.opt(self.seq(self.comma, item, acc))
            tail = self.seq(optional[0], acc)
            parts.append(self.opt(self.seq(self.comma, tail) if required else tail))
        parts.append(self.lit("]"))
        return self.seq(*parts)

    def object_of(self, named: list, extras: list, min_extra: int = 0, max_extra=None) -> int:
        """`named`: [(key lexeme, value, required)] in order, then min_extra..max_extra pairs,
        in any order, of the (key lexeme, value) kinds in `extras` (pattern and additional
        properties)."""
        items = [(self.seq(k, self.colon, v), req) for k, v, req in named]
        if extras and max_extra != 0:
            item = self.es.alt([self.seq(k, self.colon, v) for k, v in extras])
            rep = self.es.repeat(self.seq(item, self.comma), max(min_extra - 1, 0),
                                 None if max_extra is None else max(max_extra - 1, 0))
            items.append((self.seq(rep, item), min_extra > 0))
        elif min_extra > 0:
            raise Unsat("minProperties is greater than the number of properties")
        return self.fields(items)

    def fields(self, items: list) -> int:
        """`{` items in order, comma-separated, the optional ones left out or not `}` (built
        from the last item back, without recursion: objects may have thousands of properties)."""
        n = len(items)
        prefixed = [D.EPSILON] * (n + 1)  # prefixed[i]: items i.. after an earlier item
        for i in range(n - 1, -1, -1):
            item, req = items[i]
            if req:
                prefixed[i] = self.seq(self.comma, item, prefixed[i + 1])
            else:
                prefixed[i] = self.seq(self.opt(self.seq(self.comma, item)), prefixed[i + 1])
        k = next((i for i, (_, req) in enumerate(items) if req), n)  # the first required item
        first = self.seq(items[k][0], prefixed[k + 1]) if k < n else D.EPSILON
        for i in range(k - 1, -1, -1):  # optional items before it: each there or not
            first = self.es.alt((self.seq(items[i][0], prefixed[i + 1]), first))
        return self.seq(self.lit("{"), first, self.lit("}"))

    # -- schemas ---------------------------------------------------------------------------
    def value(self, s, where: str) -> int:
        """The expression of the JSON values `s` allows (raises Unsat when none)."""
        self.visited += 1
        if self.visited > SUBSCHEMA_BUDGET or len(self.es.exprs) - self.expr_base > EXPRESSION_BUDGET:
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
        return self.es.alt(out)

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
        es = self.es
        # every quoted tree is a set of JSON string bodies: once `minLength` is met the length
        # side is any body, and the intersection is the other side alone
        es.universal.add(self.tree(_quote(("rep", ("set", ANY_CP), 0, None))))
        try:
            body = es.conj([self.tree(_quote(t)) for t in trees], INTERSECTION_BUDGET)
        except OverflowError:
            raise UnsupportedFeatureError(
                "JSON Schema string constraints whose intersection is this large",
                f"at {where} (no common string found within {INTERSECTION_BUDGET:,} steps)") from None
        if body == D.NOTHING:
            raise Unsat("no string satisfies pattern/format/length together")
        q = es.byteset(1 << 0x22)
        return self.lexeme(self.seq(q, body, q))

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
            es_p = D.ExprSet()
            pat_keys.append((p, self.quoted(tree), (es_p, D.compile_tree(es_p, tree))))
        for i, (p1, k1, _) in enumerate(pat_keys):
            for p2, k2, _ in pat_keys[i + 1:]:
                if self.es.intersect(k1, k2, INTERSECTION_BUDGET) != D.NOTHING:
                    raise ConstraintError(f"JSON schema: patternProperties /{p1}/ and /{p2}/ are not disjoint at {where}")

        def matching(name: str) -> list:
            out = []
            for p, _, (es_p, e) in pat_keys:
                for b in name.encode("utf-8", "surrogatepass"):
                    e = es_p.derive(e, b)
                if es_p.nullable[e]:
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
            named.append((self.lexeme(self.es.literal(quoted)), v, is_req))
        extras = []
        for p, key, _ in pat_keys:
            try:
                v = self.value(pats[p], f"{where}/patternProperties/{p}")
            except Unsat:
                continue
            excluded = frozenset(q for q, hits in taken if p in hits)
            key = self.es.minus_literals(key, excluded)
            if key != D.NOTHING:  # (every key it matches is a named property)
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
            return self.es.alt([self.fields(o) for o in options])
        return self.object_of(named, extras, min_x, max_x)

    def over_budget(self):
        raise UnsupportedFeatureError(
            "JSON schema beyond the compile budget",
            f"more than {SUBSCHEMA_BUDGET:,} subschemas visited or {EXPRESSION_BUDGET:,} expressions built "
            f"({self.visited:,} and {len(self.es.exprs) - self.expr_base:,} so far); see docs/constrain-json.md#limits")

    def finish(self, top: int) -> int:
        while self.pending:
            k, target, uri = self.pending.pop()
            try:
                body = self.value(target, uri)
            except Unsat as e:
                raise ConstraintError(f"JSON schema: $ref {uri!r} is unsatisfiable ({e})") from None
            self.es.set_rule(k, body)
        top = self.es.check_rules(top)
        if top == D.NOTHING:
            raise Unsat("every JSON value it allows nests without end (a required property recurses)")
        if len(self.es.exprs) - self.expr_base > EXPRESSION_BUDGET:
            self.over_budget()
        return self.es.strip_leading(top, self.ws_mask)


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


_TEMPLATES: dict = {}  # whitespace and separators -> a frozen ExprSet (see `_template`)


def _template(o: JsonOptions) -> D.ExprSet:
    """The expressions every schema with these whitespace and separator options starts from:
    the lexemes of JSON's punctuation, literals, numbers, strings and keys, with what the
    first masks need of their derivatives, made once per process and forked per schema (they do
    not depend on the schema; the masks are the same, only made once)."""
    key = (repr(o.ws_tree), o.ws_mask, repr(o.item_tree), repr(o.key_tree))
    t = _TEMPLATES.get(key)
    if t is None:
        c = _Compiler(True, o, D.ExprSet())
        es = c.es
        for text in ("null", "{", "}", "[", "]"):
            c.lit(text)
        c.lexeme(c.regex("true|false"))
        c.lexeme(c.regex(NUMBER_RE))
        c.simple_string()
        # the additional-key lexeme's automaton (finite: a few states per UTF-8 and escape
        # step), every state's derivatives grouped, as `minus_literals` asks for them
        todo, seen = [c.key_base()], set()
        while todo and len(seen) < 1000:
            e = todo.pop()
            if e in seen:
                continue
            seen.add(e)
            todo.extend(es.derivative_groups(e))
        es.byte_classes()
        if len(_TEMPLATES) >= 16:
            _TEMPLATES.clear()
        t = _TEMPLATES[key] = es.freeze()
    return t


def compile_schema(schema) -> tuple:
    """(ExprSet, start expression) of the JSON texts `schema` allows."""
    check_depth(schema)
    options = None
    if isinstance(schema, dict) and "x-guidance" in schema:
        options = schema["x-guidance"]
        schema = {k: v for k, v in schema.items() if k != "x-guidance"}
    c = _Compiler(schema, JsonOptions(options))
    text = json.dumps(schema)
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
    c.es.max_exprs = c.expr_base + EXPRESSION_BUDGET + EXPRESSION_BUDGET // 8
    try:
        with gc_paused():
            top = c.value(schema, "#")
            return c.es, c.finish(top)
    except GrammarLimitError:
        if len(c.es.exprs) >= c.es.max_exprs:
            c.over_budget()
        raise
    except Unsat as e:
        raise ConstraintError(f"JSON schema is unsatisfiable: {e}") from None
    except RecursionError:
        raise UnsupportedFeatureError("JSON schemas nested this deeply") from None


