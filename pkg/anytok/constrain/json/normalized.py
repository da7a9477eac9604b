"""Whether llguidance 1.9.1 (default options) compiles the `oneOf`s of a JSON schema.

llguidance turns a schema into its own normalized form before compiling it: keywords are read in
key order, the plain ones gathered into chunks (each given the schema's `type`) that are
intersected, one after the other, with `const`/`enum`/`allOf`/`anyOf`/`oneOf`/`$ref` as they come
(an intersection with a `oneOf` intersects each option, a `$ref` beside other keywords is
resolved and intersected).  After every intersection a `oneOf` whose options it can prove
pairwise disjoint becomes an `anyOf`; a `oneOf` left in the graph the compiler walks is an error
unless `coerce_one_of`.  So an option without `type` takes the parent's type before the check,
and the check depends on where the siblings stand.

This module rebuilds that normalized form, just precisely enough for the verdict (kinds of value,
string literals, object properties, the structure that holds other schemas) and answers True
(every `oneOf` llguidance meets becomes an `anyOf`), False (one stays a `oneOf`: llguidance
refuses the schema) or None (something it does not model: the caller decides another way).
Pairs of options are proven disjoint by `disjoint.kinds_disjoint`, the one check.
"""

import re

from .disjoint import ANY, UNSAT, kinds_disjoint
from .keywords import ANNOTATIONS as META
from .keywords import IMPLEMENTED_HERE as IMPLEMENTED
from .keywords import TYPES

KNOWN = IMPLEMENTED | META | {
    "dependencies", "not", "uniqueItems", "contains", "propertyNames", "else", "if", "then",
    "$recursiveAnchor", "$recursiveRef", "dependentRequired", "dependentSchemas", "maxContains", "minContains",
    "unevaluatedItems", "unevaluatedProperties", "$dynamicAnchor", "$dynamicRef"}
APPLICATORS = ("const", "enum", "allOf", "anyOf", "oneOf", "$ref")
MAX_SIZE = 50_000
MAX_STACK = 128


class _GiveUp(Exception):
    """Outside what this model covers (or llguidance errors for another reason)."""


class _LlRefuses(Exception):
    """An error llguidance raises for this schema whatever else it holds."""


class _Model:
    def __init__(self, root, resolve, formats, unknown=frozenset()):
        self.root, self.resolve, self.formats = root, resolve, formats
        self.known = KNOWN - set(unknown)  # (the keywords the root's draft knows)
        self.defs, self.seen, self.n = {}, set(), 0
        s = root.get("$schema", "") if isinstance(root, dict) else ""
        self.old_draft = isinstance(s, str) and ("draft-0" in s or "2019-09" in s)
        self.rx = {}

    def tick(self):
        self.n += 1
        if self.n > MAX_SIZE:
            raise _GiveUp("too large")

    # -- compile ------------------------------------------------------------------------------
    def compile(self, s):
        return self.normalize(self.contents(s))

    def contents(self, s):
        if s is True:
            return ANY
        if s is False:
            return UNSAT
        if not isinstance(s, dict):
            raise _GiveUp("not a schema")
        self.tick()
        if all(k in META or k not in self.known for k in s):
            return ANY
        if any(k not in IMPLEMENTED and k not in META and k in self.known for k in s):
            raise _GiveUp("unimplemented keyword")
        dummy_props = ({k: True for k in s["properties"]} if isinstance(s.get("properties"), dict) else None)
        dummy_prefix = ([True] * len(s["prefixItems"]) if isinstance(s.get("prefixItems"), list) else None)
        result, current = ANY, {}
        for k, v in s.items():
            if k in APPLICATORS:
                if current:
                    if "type" in s:
                        current["type"] = s["type"]
                    result = self.intersect(result, self.simple(current), 0)
                    current = {}
                result = self.apply(result, k, v)
            elif k not in META:
                current[k] = v
                if k == "additionalProperties" and "properties" not in current and dummy_props is not None:
                    current["properties"] = dummy_props
                if k == "items" and "prefixItems" not in current and dummy_prefix is not None:
                    current["prefixItems"] = dummy_prefix
        if current:
            if "type" in s:
                current["type"] = s["type"]
            result = self.intersect(result, self.simple(current), 0)
        return result

    def apply(self, result, k, v):
        if k == "const":
            return self.intersect(result, self.const(v), 0)
        if k == "enum":
            if not isinstance(v, list):
                raise _GiveUp("enum")
            return self.intersect(result, ("anyof", [self.const(x) for x in v]), 0)
        if k == "$ref":
            if not isinstance(v, str):
                raise _GiveUp("$ref")
            if result == ANY:
                self.define(v)
                return ("ref", v)
            return self.intersect_ref(v, result, False, 0)
        if not isinstance(v, list):
            raise _GiveUp(k)
        if k == "allOf":
            for x in v:
                result = self.intersect(result, self.compile(x), 0)
            return result
        return self.intersect(result, ("anyof" if k == "anyOf" else "oneof", [self.compile(x) for x in v]), 0)

    def define(self, uri):
        if uri not in self.seen:
            self.seen.add(uri)
            try:
                target = self.resolve(uri)
            except Exception:  # noqa: BLE001  (the caller's own resolution says what is wrong)
                raise _GiveUp("ref") from None
            self.defs[uri] = self.compile(target)

    def intersect_ref(self, uri, schema, ref_first, level):
        self.define(uri)
        if uri not in self.defs:
            raise _LlRefuses("circular references with sibling keys")
        target = self.defs[uri]
        return self.intersect(target, schema, level + 1) if ref_first else self.intersect(schema, target, level + 1)

    def const(self, v):
        if v is None:
            return ("null",)
        if isinstance(v, bool):
            return ("bool", v)
        if isinstance(v, (int, float)):
            return ("number",)
        if isinstance(v, str):
            return ("string", ("lit", v))
        if isinstance(v, list):
            return ("array", [self.const(x) for x in v], UNSAT)
        if isinstance(v, dict):
            return ("object", {k: self.const(x) for k, x in v.items()}, {}, UNSAT, list(v), 0, None)
        raise _GiveUp("const")

    def simple(self, s):
        types = s.get("type", list(TYPES))
        if isinstance(types, str):
            return self.typed(types, s)
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise _GiveUp("type")
        out = [self.typed(t, s) for t in types]
        return out[0] if len(out) == 1 else ("anyof", out)

    def typed(self, t, s):
        self.tick()
        if t == "null":
            return ("null",)
        if t == "boolean":
            return ("bool", None)
        if t in ("number", "integer"):
            return ("number",)
        if t == "string":
            f = s.get("format")
            if f is not None and f not in self.formats:
                raise _GiveUp("format")
            return ("string", "rx" if "pattern" in s or f is not None else None)
        if t == "array":
            items, add = s.get("items"), s.get("additionalItems")
            if self.old_draft or add is not None or isinstance(items, list):
                prefix, items = (items, add) if isinstance(items, list) else (None, items)
            else:
                prefix = s.get("prefixItems")
            if prefix is not None and not isinstance(prefix, list):
                raise _GiveUp("prefixItems")
            return ("array", [self.compile(x) for x in prefix or ()], None if items is None else self.compile(items))
        if t == "object":
            props, pats = s.get("properties", {}), s.get("patternProperties", {})
            req = s.get("required", [])
            if not isinstance(props, dict) or not isinstance(pats, dict) or not isinstance(req, list):
                raise _GiveUp("object")
            props = {k: self.compile(v) for k, v in props.items()}
            pats = {k: self.compile(v) for k, v in pats.items()}
            for name in props:
                for p, ps in pats.items():
                    if self.match(p, name):
                        props[name] = self.intersect(props[name], ps, 0)
                        break
            add = s.get("additionalProperties")
            add = None if add is None else self.compile(add)
            minp, maxp = s.get("minProperties", 0), s.get("maxProperties")
            return self.mk_object(props, pats, add, list(dict.fromkeys(req)), minp, maxp)
        raise _GiveUp("type")

    @staticmethod
    def mk_object(props, pats, add, req, minp, maxp):
        if not isinstance(minp, int) or (maxp is not None and not isinstance(maxp, int)):
            raise _GiveUp("min/maxProperties")
        if maxp is not None and (minp > maxp or len(req) > maxp):
            return UNSAT
        return ("object", props, pats, add, req, minp, maxp)

    def match(self, pattern, name):
        r = self.rx.get(pattern)
        if r is None:
            try:
                r = self.rx[pattern] = re.compile(pattern)
            except re.error:
                raise _GiveUp("pattern") from None
        return r.search(name) is not None

    def prop(self, o, key):
        if key in o[1]:
            return o[1][key]
        for p, ps in o[2].items():
            if self.match(p, key):
                return ps
        return ANY if o[3] is None else o[3]

    # -- intersect, normalize, disjoint ---------------------------------------------------------
    def intersect(self, a, b, level):
        self.tick()
        if level > MAX_STACK:
            raise _LlRefuses("schema intersection stack level exceeded")
        ka, kb = a[0], b[0]
        if ka == "any":
            m = b
        elif kb == "any":
            m = a
        elif ka == "unsat" or kb == "unsat":
            m = a if ka == "unsat" else b
        elif ka == "ref":
            m = self.intersect_ref(a[1], b, True, level + 1)
        elif kb == "ref":
            m = self.intersect_ref(b[1], a, False, level + 1)
        elif ka == "oneof" or (kb != "oneof" and ka == "anyof"):  # (llguidance's order of cases)
            m = (ka, [self.intersect(o, b, level + 1) for o in a[1]])
        elif kb in ("oneof", "anyof"):
            m = (kb, [self.intersect(a, o, level + 1) for o in b[1]])
        elif ka != kb:
            m = UNSAT
        elif ka in ("null", "number"):
            m = a
        elif ka == "bool":
            m = a if a[1] == b[1] or b[1] is None else b if a[1] is None else UNSAT
        elif ka == "string":
            m = ("string", b[1] if a[1] is None else a[1] if b[1] is None else "rx")
        elif ka == "array":
            n = max(len(a[1]), len(b[1]))
            pa = a[1] + [ANY if a[2] is None else a[2]] * (n - len(a[1]))
            pb = b[1] + [ANY if b[2] is None else b[2]] * (n - len(b[1]))
            items = b[2] if a[2] is None else a[2] if b[2] is None else self.intersect(a[2], b[2], level + 1)
            m = ("array", [self.intersect(x, y, level + 1) for x, y in zip(pa, pb)], items)
        else:  # objects
            props = {}
            for k, p in a[1].items():
                props[k] = self.intersect(p, self.prop(b, k), level + 1)
            for k, p in b[1].items():
                if k not in props:
                    props[k] = self.intersect(self.prop(a, k), p, level + 1)
            pats = {}
            rest = dict(b[2])
            for k, p in a[2].items():
                if k in rest:
                    pats[k] = self.intersect(p, rest.pop(k), level + 1)
                else:
                    pats[k] = p if b[3] is None else self.intersect(p, b[3], level + 1)
            for k, p in rest.items():
                pats[k] = p if a[3] is None else self.intersect(p, a[3], level + 1)
            add = b[3] if a[3] is None else a[3] if b[3] is None else self.intersect(a[3], b[3], level + 1)
            maxp = b[6] if a[6] is None else a[6] if b[6] is None else min(a[6], b[6])
            m = self.mk_object(props, pats, add, list(dict.fromkeys(a[4] + b[4])), max(a[5], b[5]), maxp)
        return self.normalize(m)

    def normalize(self, s):
        k = s[0]
        if k == "anyof":
            valid, unsat = [], False
            for o in s[1]:
                if o[0] == "any":
                    return ANY
                if o[0] == "unsat":
                    unsat = True
                elif o[0] == "anyof":
                    valid += o[1]
                else:
                    valid.append(o)
            if not valid:
                return UNSAT
            return valid[0] if len(valid) == 1 else ("anyof", valid)
        if k == "oneof":
            valid = []
            for o in s[1]:
                if o[0] == "unsat":
                    continue
                if o[0] == "oneof":
                    valid += o[1]
                else:
                    valid.append(o)
            if not valid:
                return UNSAT
            if len(valid) == 1:
                return valid[0]
            if all(self.disjoint(x, y) for i, x in enumerate(valid) for y in valid[i + 1:]):
                return ("anyof", valid)
            return ("oneof", valid)
        return s

    def disjoint(self, a, b):
        return kinds_disjoint(a, b, self._fields)

    def _fields(self, a, b):
        return ((self.prop(a, k), self.prop(b, k)) for k in dict.fromkeys(a[4] + b[4]))

    # -- the compiler's walk ----------------------------------------------------------------------
    def has_one_of(self, top) -> bool:
        stack, done = [top], set()
        while stack:
            s = stack.pop()
            if id(s) in done:
                continue
            done.add(id(s))
            k = s[0]
            if k == "oneof":
                return True
            if k == "anyof":
                stack += s[1]
            elif k == "ref":
                if s[1] in self.defs:
                    stack.append(self.defs[s[1]])
            elif k == "array":
                stack += s[1]
                if s[2] is not None:
                    stack.append(s[2])
            elif k == "object":
                stack += s[1].values()
                stack += s[2].values()
                if s[3] is not None:
                    stack.append(s[3])
        return False


def verdict(schema, resolve, formats, unknown=frozenset()) -> tuple:
    """(one_of, refusal): `one_of` True when llguidance (default options) turns every `oneOf`
    it compiles in `schema` into an `anyOf`, False when one stays (llguidance refuses the
    schema), None when not modelled; `refusal` the error llguidance's schema builder raises
    whatever the rest ("circular references with sibling keys", its intersection stack
    limit), else None.  `resolve(uri)` gives a `$ref`'s target; `formats` the known `format`
    names; `unknown` the keywords the schema's draft does not know."""
    m = _Model(schema, resolve, formats, unknown)
    try:
        return not m.has_one_of(m.compile(schema)), None
    except _LlRefuses as e:
        return None, str(e)
    except (_GiveUp, RecursionError, TypeError, ValueError, AttributeError):
        return None, None
