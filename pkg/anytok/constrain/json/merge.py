"""Merging: `allOf`, `$ref` and the keywords beside `anyOf`/`oneOf` intersected into one schema
keyword by keyword, as llguidance merges them (`MergeMixin.merge_all_of`, `intersect`)."""

from __future__ import annotations

import json

from ..terminals import probe
from ..errors import ConstraintError, UnsupportedFeatureError
from .keywords import ANNOTATIONS, IMPLEMENTED_HERE, REJECTED, SUBSCHEMA_BUDGET, Unsat, has_type, schema_types
from .numbers import lcm_step
from .strings import search_tree


class MergeMixin:
    def merge_all_of(self, s: dict, where: str, depth: int = 0):
        """`s` with its `allOf` members, `$ref` targets and sibling keywords intersected into one
        schema, as llguidance merges them: `anyOf`/`oneOf` distributed over the rest (each option
        merged with it), types intersected, bounds tightened, `required` joined, properties in
        order of appearance (a property one side does not name is checked against that side's
        additionalProperties), constants filtered.  What cannot be merged keyword by keyword
        raises UnsupportedFeatureError."""
        if depth > 40:
            raise UnsupportedFeatureError("JSON Schema allOf/$ref merged this deeply (recursive $ref inside allOf)",
                                          f"at {where}")
        self.visited += 1  # (anyOf options distributed over anyOf options multiply)
        if self.visited > SUBSCHEMA_BUDGET:
            self.over_budget()
        parts = self._flat_parts(s, where, 0)
        for i, part in enumerate(parts):
            for a in ("anyOf", "oneOf"):
                if isinstance(part, dict) and a in part:
                    opts = part[a]
                    if not isinstance(opts, list):
                        raise ConstraintError(f"JSON schema: {a} must be an array at {where}")
                    rest = {k: v for k, v in part.items() if k != a}
                    # llguidance: the properties of the keywords beside the anyOf/oneOf come
                    # before an option's where `properties` stands before the anyOf/oneOf, after
                    # them otherwise (inline option or $ref alike); with no properties beside,
                    # a $ref option's first
                    keys = list(part)
                    at = next((j for j, k in enumerate(keys) if k in ("properties", "additionalProperties")), None)
                    merged = []
                    for o in opts:
                        try:
                            if at is None:
                                rest_first = not (isinstance(o, dict) and "$ref" in o)
                            else:
                                rest_first = at < keys.index(a)
                            order = parts[:i] + ([rest, o] if rest_first else [o, rest])
                            merged.append(self.merge_all_of({"allOf": order + parts[i + 1:]}, where, depth + 1))
                        except Unsat:
                            continue
                    if not merged:
                        raise Unsat(f"no {a} option is satisfiable")
                    # llguidance checks the options as written and again once merged
                    if a == "oneOf" and not self.coerce_one_of and not self.disjoint(opts) \
                            and not self.disjoint(merged):
                        raise UnsupportedFeatureError(
                            "JSON Schema oneOf whose options are not verifiably disjoint",
                            f"at {where}; llguidance rejects it too unless coerce_one_of")
                    return {"anyOf": merged}  # oneOf: its merged options proven disjoint
        out = True
        for part in parts:
            out = intersect(out, part, where)
        return out

    def _flat_parts(self, s, where: str, depth: int) -> list:
        """`s` as a list of schemas without allOf or $ref at their top level (siblings placed as
        llguidance orders properties)."""
        if depth > 40:
            raise UnsupportedFeatureError("JSON Schema allOf/$ref merged this deeply (recursive $ref inside allOf)",
                                          f"at {where}")
        if not isinstance(s, dict):
            return [s]
        # $ref and allOf in key order, the sibling keywords as one part: where the first of
        # `properties`/`additionalProperties` stands among them, else last (as llguidance
        # orders the properties: {"properties": ..., "allOf": [{"$ref": ...}]} lists its own
        # properties first)
        out, current, at = [], {}, None
        for k, v in s.items():
            if k in ("properties", "additionalProperties") and at is None:
                at = len(out)
            if k == "$ref":
                out += self._flat_parts(self.resolve(v, where), where, depth + 1)
            elif k == "allOf":
                if not isinstance(v, list):
                    raise ConstraintError(f"JSON schema: allOf must be an array at {where}")
                for member in v:
                    out += self._flat_parts(member, where, depth + 1)
            elif k not in ANNOTATIONS:  # anyOf/oneOf stay with their siblings (see merge_all_of)
                current[k] = v
        if current or not out:
            out.insert(len(out) if at is None else at, current)
        return out

    def resolved(self, options: list, where: str) -> list:
        """`options` with their `$ref`s and `allOf`s merged in (False for an unsatisfiable one)."""
        out = []
        for o in options:
            if isinstance(o, dict) and ("$ref" in o or "allOf" in o):
                try:
                    o = self.merge_all_of(o, where)
                except Unsat:
                    o = False
                except (ConstraintError, RecursionError):
                    pass
            out.append(o)
        return out

def both_schemas(a, b):
    """A schema for the values both `a` and `b` allow (merged lazily, through allOf)."""
    if a is True or a == {}:
        return b
    if b is True or b == {} or a == b:
        return a
    if a is False or b is False:
        return False
    appl = {"$ref", "allOf", "anyOf", "oneOf"}
    if isinstance(a, dict) and isinstance(b, dict) and not (set(a) | set(b)) & appl:
        try:
            return intersect(a, b, "")
        except ConstraintError:
            pass
    return {"allOf": [a, b]}


_LOWER = ("minimum", "minLength", "minItems", "minProperties")
_UPPER = ("maximum", "maxLength", "maxItems", "maxProperties")



def _canon(v) -> str:
    return json.dumps(v, sort_keys=True)


def intersect(a, b, where: str):
    """The keyword-by-keyword intersection of two schemas without allOf/$ref/anyOf/oneOf."""
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    if a is False or b is False:
        return False
    if not isinstance(a, dict) or not isinstance(b, dict):
        raise ConstraintError(f"JSON schema at {where} must be an object or a boolean")
    out = dict(a)
    ta, tb = schema_types(a), schema_types(b)
    if ta is not None and tb is not None:
        if not all(isinstance(t, str) for t in ta + tb):
            raise ConstraintError(f"JSON schema: type must be a string or an array of strings at {where}")
        both = [t for t in ta if t in tb or (t == "integer" and "number" in tb)]
        both += [t for t in tb if t == "integer" and "number" in ta and t not in both]
        if not both:
            return False
        out["type"] = both[0] if len(both) == 1 else both
    elif tb is not None:
        out["type"] = b["type"]
    for k, v in b.items():
        if k == "type" or k in ANNOTATIONS:
            continue
        if k in _OBJECT_KEYS:
            continue  # below
        if k not in out:
            out[k] = v
            continue
        u = out[k]
        if u == v:
            continue
        if k in _LOWER or k in _UPPER or k in ("exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(u, bool) or isinstance(v, bool) or not isinstance(u, (int, float)) \
                    or not isinstance(v, (int, float)):
                raise UnsupportedFeatureError(f"JSON Schema allOf merging {k} of {u!r} and {v!r}", f"at {where}")
            out[k] = max(u, v) if k in _LOWER or k == "exclusiveMinimum" else min(u, v)
        elif k in ("items", "additionalItems"):
            out[k] = both_schemas(u, v)
        elif k in ("enum", "const"):
            continue  # below
        elif k in ("pattern", "format") and isinstance(u, (str, tuple)) and isinstance(v, (str, tuple)):
            # both patterns (formats) hold, as llguidance's `And` of the two regexes; a tuple
            # is only ever made here (a schema's own `pattern` or `format` must be a string)
            pu = u if isinstance(u, tuple) else (u,)
            out[k] = pu + tuple(p for p in (v if isinstance(v, tuple) else (v,)) if p not in pu)
        elif k == "multipleOf" and has_type(u, "number") and has_type(v, "number") and u > 0 and v > 0:
            out[k] = lcm_step(u, v)
        elif k == "prefixItems" and isinstance(u, list) and isinstance(v, list) \
                and not isinstance(a.get("items"), list) and not isinstance(b.get("items"), list):
            # position by position; past one side's prefix, that side's `items`
            ia, ib = a.get("items", True), b.get("items", True)
            out[k] = [both_schemas(u[i] if i < len(u) else ia, v[i] if i < len(v) else ib)
                      for i in range(max(len(u), len(v)))]
        elif k in IMPLEMENTED_HERE or k in REJECTED:
            raise UnsupportedFeatureError(f"JSON Schema allOf merging two different {k!r}", f"at {where}")
        # (keywords that do not constrain, such as "x-..." extensions: the first one kept)
    # constants: the values of one side that the other lists too
    vals = []
    for side in (a, b):
        if "const" in side:
            vals.append([side["const"]])
        elif "enum" in side:
            if not isinstance(side["enum"], list):
                raise ConstraintError(f"JSON schema: enum must be an array at {where}")
            vals.append(side["enum"])
    if len(vals) == 2:
        keep = {_canon(v) for v in vals[1]}
        common = [v for v in vals[0] if _canon(v) in keep]
        if not common:
            return False
        out.pop("const", None)
        out.pop("enum", None)
        out["enum"] = common
    # objects, as llguidance intersects two object schemas: each side's properties already
    # merged with its own matching pattern, a property one side does not name merged with that
    # side's pattern or additionalProperties, a pattern one side has merged with the other
    # side's additionalProperties where it has one
    if any(k in a or k in b for k in _OBJECT_KEYS):
        pa, pb = _own_properties(a, where), _own_properties(b, where)
        props = {}
        for name, sub in pa.items():
            props[name] = both_schemas(sub, pb[name] if name in pb else property_schema(b, name))
        for name, sub in pb.items():
            if name not in pa:
                props[name] = both_schemas(property_schema(a, name), sub)
        for k in _OBJECT_KEYS:
            out.pop(k, None)
        if props:
            out["properties"] = props
        ppa, ppb = a.get("patternProperties", {}), b.get("patternProperties", {})
        if not isinstance(ppa, dict) or not isinstance(ppb, dict):
            raise ConstraintError(f"JSON schema: patternProperties must be an object at {where}")
        if ppa or ppb:
            pp = {}
            for key, sub in ppa.items():
                if key in ppb:
                    pp[key] = both_schemas(sub, ppb[key])
                else:
                    pp[key] = both_schemas(sub, b["additionalProperties"]) if "additionalProperties" in b else sub
            for key, sub in ppb.items():
                if key not in ppa:
                    pp[key] = both_schemas(sub, a["additionalProperties"]) if "additionalProperties" in a else sub
            out["patternProperties"] = pp
            out[PATTERNS_APPLIED] = True
        if "additionalProperties" in a or "additionalProperties" in b:
            out["additionalProperties"] = both_schemas(a.get("additionalProperties", True), b.get("additionalProperties", True))
        req = []
        for side in (a, b):
            r = side.get("required", [])
            if not isinstance(r, list) or not all(isinstance(x, str) for x in r):
                raise ConstraintError(f"JSON schema: required must be an array of strings at {where}")
            req += [x for x in r if x not in req]
        if req:
            out["required"] = req
    return out


# An object schema merged by `intersect` carries this key: its `properties` already include
# their matching `patternProperties` schemas (`object` must not merge them again).
PATTERNS_APPLIED = "\x00anytok: patternProperties merged into properties"
_OBJECT_KEYS = ("properties", "additionalProperties", "required", "patternProperties", PATTERNS_APPLIED)


def _own_properties(s: dict, where: str) -> dict:
    """`properties` of an object schema, each merged with the first pattern of its own
    `patternProperties` found in its name (as llguidance compiles an object schema)."""
    props = s.get("properties", {})
    if not isinstance(props, dict):
        raise ConstraintError(f"JSON schema: properties must be an object at {where}")
    pats = s.get("patternProperties")
    if not pats or not isinstance(pats, dict) or s.get(PATTERNS_APPLIED):
        return props
    out = {}
    for name, sub in props.items():
        hit = next((p for p in pats if pattern_found(p, name)), None)
        out[name] = sub if hit is None else both_schemas(sub, pats[hit])
    return out


def property_schema(s: dict, key: str):
    """The schema an object schema gives property `key`: its `properties` entry, else that of
    the first `patternProperties` pattern found in it, else `additionalProperties` (patterns
    read as llguidance reads them: Rust syntax, ASCII `\\d` and `\\w`, searched for)."""
    props = s.get("properties")
    if isinstance(props, dict) and key in props:
        return props[key]
    pats = s.get("patternProperties")
    if isinstance(pats, dict):
        for p, sub in pats.items():
            if pattern_found(p, key):
                return sub
    return s.get("additionalProperties", True)


_PATTERN_DFAS: dict = {}  # pattern -> (ExprSet, start) of its search tree


def pattern_found(pattern, key: str) -> bool:
    """Whether the patternProperties regex `pattern` is found in `key` (RegexSyntaxError if it
    is not a regex, as llguidance refuses the schema then)."""
    if not isinstance(pattern, str):
        raise ConstraintError(f"JSON schema: patternProperties key must be a string, got {pattern!r}")
    r = _PATTERN_DFAS.get(pattern)
    if r is None:
        if len(_PATTERN_DFAS) > 256:
            _PATTERN_DFAS.clear()
        r = _PATTERN_DFAS[pattern] = probe(("parsed", search_tree(pattern)))
    return r(key.encode("utf-8", "surrogatepass"))

