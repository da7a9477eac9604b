"""Disjointness of `oneOf` options, as llguidance proves it: the one check (`kinds_disjoint`).

llguidance turns a `oneOf` into an `anyOf` when it can prove its options pairwise disjoint
over its normalized schemas.  Both places that need that verdict describe an option as a *kind
term* and ask `kinds_disjoint`: `normalized.py` (llguidance's whole normalized form, one verdict
per schema) and `DisjointMixin` (option by option, from the schema as written, where that model
gives up).  Kind terms: ("any",), ("unsat",), ("ref", ...), ("null",), ("bool", value or None),
("number",), ("string", ("lit", text) or None or "rx"), ("array", ...), ("object", ...),
("anyof", [terms]) and ("oneof", [terms]); what an object's properties are is the caller's
(`fields`).
"""

from __future__ import annotations

from .keywords import ANNOTATIONS, IMPLEMENTED_HERE, TYPES, Unsat, has_type, schema_types
from .merge import property_schema
from ..errors import ConstraintError

ANY = ("any",)
UNSAT = ("unsat",)


def kinds_disjoint(a, b, fields) -> bool:
    """Whether no JSON value is of both kind terms `a` and `b`: kinds that differ (integer and
    number are one), two booleans or two string literals that differ, two objects when a
    property either requires has disjoint kinds on the two sides (`fields(a, b)`: the pairs of
    kind terms of those properties, in order); "any" and "ref" are disjoint from nothing but
    "unsat", which is disjoint from everything."""
    ka, kb = a[0], b[0]
    if ka == "unsat" or kb == "unsat":
        return True
    if ka in ("any", "ref") or kb in ("any", "ref"):
        return False
    if ka == "bool" and kb == "bool":
        return a[1] is not None and b[1] is not None and a[1] != b[1]
    if ka in ("anyof", "oneof"):
        return all(kinds_disjoint(o, b, fields) for o in a[1])
    if kb in ("anyof", "oneof"):
        return all(kinds_disjoint(a, o, fields) for o in b[1])
    if ka == "string" and kb == "string" and isinstance(a[1], tuple) and isinstance(b[1], tuple):
        return a[1][1] != b[1][1]
    if ka == "object" and kb == "object":
        return any(kinds_disjoint(x, y, fields) for x, y in fields(a, b))
    return ka != kb


class DisjointMixin:
    def disjoint(self, options) -> bool:
        """oneOf = anyOf when no value can match two options, proven as llguidance proves it
        (nothing more, nothing less), each option read as written: the union of its kinds of
        value (`_alts`), an object's properties its `properties` entry, else the first matching
        `patternProperties`, else `additionalProperties`; a bare `$ref` and an unconstrained
        schema are disjoint from nothing, an unsatisfiable option from everything."""
        kinds = [self.kind(o, 0) for o in options]
        return all(kinds_disjoint(a, b, self._fields) for i, a in enumerate(kinds) for b in kinds[i + 1:])

    def kind(self, s, depth: int):
        """The kind term of schema `s` (objects as ("object", schema))."""
        alts = self._alts(s, depth)
        return UNSAT if not alts else alts[0] if len(alts) == 1 else ("anyof", alts)

    def _fields(self, a, b):
        ra, rb = a[1].get("required", []), b[1].get("required", [])
        if not isinstance(ra, list) or not isinstance(rb, list):
            return
        for key in dict.fromkeys(ra + rb):
            if isinstance(key, str):
                yield self.kind(property_schema(a[1], key), 1), self.kind(property_schema(b[1], key), 1)

    def _alts(self, s, depth: int) -> list:
        """The kinds of value a schema allows, as llguidance's normalized schema has them:
        ("any",), ("ref",), ("null",), ("bool", value or None), ("number",), ("string",
        ("lit", constant) or None), ("array",), ("object", schema); [] when unsatisfiable."""
        if s is True:
            return [("any",)]
        if s is False:
            return []
        if not isinstance(s, dict) or depth > 50:
            return [("any",)]
        raw = [k for k in s if k not in ANNOTATIONS]  # (unknown keywords make llguidance merge)
        keys = [k for k in raw if k in IMPLEMENTED_HERE]
        if not keys:
            return [("any",)]
        if raw == ["$ref"]:
            return [("ref",)]
        appl = [k for k in keys if k in ("$ref", "allOf", "anyOf", "oneOf")]
        if appl:
            v = s[appl[0]]
            if len(raw) == 1 and appl[0] != "$ref" and isinstance(v, list):
                if appl[0] == "allOf" and len(v) != 1:
                    pass
                else:
                    out = []
                    for o in v:
                        out += self._alts(o, depth + 1)
                    return [("any",)] if ("any",) in out else out
            try:
                merged = self.merge_all_of(s, "#")
            except Unsat:
                return []
            except (ConstraintError, RecursionError):
                return [("any",)]
            if isinstance(merged, dict) and any(k in merged for k in ("$ref", "allOf")):
                return [("any",)]
            return self._alts(merged, depth + 1)
        if "const" in keys or "enum" in keys:
            values = [s["const"]] if "const" in keys else s["enum"]
            if not isinstance(values, list) or ("const" in keys and "enum" in keys):
                return [("any",)]
            types = schema_types(s)
            text = "pattern" in keys or "format" in keys
            out = []
            for v in values:
                if types is not None and not any(isinstance(t, str) and has_type(v, t) for t in types):
                    continue
                if v is None:
                    out.append(("null",))
                elif isinstance(v, bool):
                    out.append(("bool", v))
                elif isinstance(v, (int, float)):
                    out.append(("number",))
                elif isinstance(v, str):
                    out.append(("string", None if text else ("lit", v)))
                elif isinstance(v, list):
                    out.append(("array",))
                else:
                    out.append(("object", {"properties": {k: {"const": x} for k, x in v.items()},
                                           "required": list(v), "additionalProperties": False}))
            return out
        types = schema_types(s)
        if types is None:
            types = list(TYPES)
        if not isinstance(types, list):
            return [("any",)]
        out = []
        for t in types:
            kind = {"null": ("null",), "boolean": ("bool", None), "number": ("number",), "integer": ("number",),
                    "string": ("string", None), "array": ("array",), "object": ("object", s)}.get(t)
            if kind is None:
                return [("any",)]
            out.append(kind)
        return out
