"""`const` and `enum`: the values kept by the keywords beside them (as llguidance intersects a
constant with its siblings) and each value's one JSON text (`ConstantsMixin`)."""

from __future__ import annotations

import json
import math
import re

from ..terminals import probe
from ..errors import ConstraintError, UnsupportedFeatureError
from .keywords import CONST_SIBLINGS, REJECTED, Unsat, has_type, json_equal, schema_types, usize
from .merge import pattern_found
from .numbers import bounds, i64, plain_float
from .strings import lit_tree

# Text JSON writes as it is: no control character, quote, backslash, DEL or lone surrogate.
_PLAIN_TEXT = re.compile(r'[^\x00-\x1f"\\\x7f\ud800-\udfff]*')


class ConstantsMixin:
    def constants(self, s: dict, kw: str, where: str) -> int:
        values = [s[kw]] if kw == "const" else s[kw]
        if not isinstance(values, list):
            raise ConstraintError(f"JSON schema: enum must be an array at {where}")
        types = s.get("type")
        if isinstance(types, str):
            types = [types]
        if types is not None and (not isinstance(types, list) or not all(isinstance(t, str) for t in types)):
            raise ConstraintError(f"JSON schema: type must be a string or an array of strings at {where}")
        options = []
        checks = set(s) & (CONST_SIBLINGS - {"type"})
        for v in values:
            if types is not None and not any(has_type(v, t) for t in types):
                continue
            if checks and not self.constant_fits(v, s, checks, where):
                continue
            as_int = types is not None and "integer" in types and "number" not in types
            options.append(lambda v=v, i=as_int: self.constant(v, i, where))
        if not options:
            raise Unsat("no enum value has the schema's type")
        return self.first_satisfiable(options)

    def constant_fits(self, v, s: dict, checks: set, where: str) -> bool:
        """Whether the constant `v` satisfies the string/number keywords next to it (what
        llguidance's intersection of the constant with its sibling keywords keeps)."""
        if isinstance(v, str):
            if not checks & {"minLength", "maxLength", "pattern", "format"}:
                return True
            lo = usize(s, "minLength", where) or 0
            hi = usize(s, "maxLength", where)
            if len(v) < lo or hi is not None and len(v) > hi:
                return False
            data = v.encode("utf-8", "surrogatepass")
            for t in self.text_trees(s, where):
                if not probe(("parsed", t))(data):
                    return False
            return True
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            (lo, xlo), (hi, xhi) = bounds(s)
            if lo is not None and (v < lo or v == lo and xlo) or hi is not None and (v > hi or v == hi and xhi):
                return False
            if "multipleOf" in s:
                text = self.constant_text(v, False, where)
                try:
                    self.multiple_of(("str", text, ""), s, where)
                except Unsat:
                    return False
            return True
        return True

    def fits(self, v, s, where: str, depth: int = 0):
        """(whether the constant `v` satisfies schema `s`, `v` as llguidance then prints it:
        an integral double under `type: integer` as an integer).  What llguidance's
        intersection of a constant array/object with the keywords beside it keeps (keywords
        it rejects raise UnsupportedFeatureError, unknown ones are ignored, as in `value`)."""
        if depth > 40:
            raise UnsupportedFeatureError("JSON Schema const/enum checked against schemas nested this deeply",
                                          f"at {where}")
        if s is True or s == {}:
            return True, v
        if s is False:
            return False, v
        if not isinstance(s, dict):
            raise ConstraintError(f"JSON schema at {where} must be an object or a boolean")
        for k in s:
            if k in REJECTED and k not in self.unknown and not self.lenient:
                raise UnsupportedFeatureError(f"JSON Schema keyword {k!r}", f"at {where}; llguidance rejects it too")
        if "$ref" in s:
            ok, v = self.fits(v, self.resolve(s["$ref"], where), where, depth + 1)
            if not ok:
                return False, v
        for k in ("allOf", "anyOf", "oneOf"):
            if k in s:
                subs = s[k]
                if not isinstance(subs, list):
                    raise ConstraintError(f"JSON schema: {k} must be an array at {where}")
                if k == "allOf":
                    for sub in subs:
                        ok, v = self.fits(v, sub, where, depth + 1)
                        if not ok:
                            return False, v
                else:  # (oneOf as llguidance compiles it: as anyOf, its options disjoint)
                    for sub in subs:
                        ok, w = self.fits(v, sub, where, depth + 1)
                        if ok:
                            v = w
                            break
                    else:
                        return False, v
        types = schema_types(s)
        if types is not None and not any(isinstance(t, str) and has_type(v, t) for t in types):
            return False, v
        if "const" in s and not json_equal(v, s["const"]) or "enum" in s and not (
                isinstance(s["enum"], list) and any(json_equal(v, x) for x in s["enum"])):
            return False, v
        if isinstance(v, float) and v.is_integer() and types is not None and "integer" in types \
                and "number" not in types:
            v = int(v)
        if isinstance(v, list):
            lo, hi = usize(s, "minItems", where) or 0, usize(s, "maxItems", where)
            if len(v) < lo or hi is not None and len(v) > hi:
                return False, v
            items = s.get("items", True)
            if isinstance(items, list):
                prefix, items = items, s.get("additionalItems", True)
            else:
                prefix = s.get("prefixItems", [])
            out = []
            for i, x in enumerate(v):
                ok, x = self.fits(x, prefix[i] if i < len(prefix) else items, where, depth + 1)
                if not ok:
                    return False, v
                out.append(x)
            return True, out
        if isinstance(v, dict):
            lo, hi = usize(s, "minProperties", where) or 0, usize(s, "maxProperties", where)
            if len(v) < lo or hi is not None and len(v) > hi:
                return False, v
            required = s.get("required", [])
            if not isinstance(required, list) or any(r not in v for r in required):
                return False, v
            props = s.get("properties", {})
            pats = s.get("patternProperties", {})
            if not isinstance(props, dict) or not isinstance(pats, dict):
                raise ConstraintError(f"JSON schema: properties must be an object at {where}")
            out = {}
            for key, x in v.items():
                hit = next((p for p in pats if pattern_found(p, key)), None)
                subs = ([props[key]] if key in props else []) + ([pats[hit]] if hit is not None else [])
                for sub in subs or [s.get("additionalProperties", True)]:
                    ok, x = self.fits(x, sub, where, depth + 1)
                    if not ok:
                        return False, v
                out[key] = x
            return True, out
        checks = set(s) & (CONST_SIBLINGS - {"type"})
        return (not checks or self.constant_fits(v, s, checks, where)), v

    def constant_text(self, v, as_int: bool, where: str) -> str:
        """The one text llguidance allows for a numeric constant: its value as a double (an
        integer that fits 64 bits, signed, is an integer range, its bounds as doubles rounded
        inwards and saturated to 64 bits, as is any constant next to `type: integer`; anything
        else a number range [v, v], printed as Rust prints a double: shortest round-trip digits,
        never an exponent)."""
        if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 64:
            # (llguidance's Python API cannot pass such a number to it: refused)
            raise UnsupportedFeatureError("JSON Schema numeric const beyond 64 bits", f"at {where}")
        if math.isinf(v) or math.isnan(v):
            raise ConstraintError(f"JSON schema: const {v} is not a JSON number at {where}")
        if as_int or (isinstance(v, int) and v < 2 ** 63):
            if not float(v).is_integer():
                raise Unsat(f"const {v} is not an integer")
            return str(i64(float(v)))
        return plain_float(float(v))

    def constant(self, v, as_int: bool, where: str) -> int:
        if v is None:
            return self.lit("null")
        if isinstance(v, bool):
            return self.lit("true" if v else "false")
        if isinstance(v, (int, float)):
            return self.lexeme(("str", self.constant_text(v, as_int, where), ""))
        if isinstance(v, str):
            if _PLAIN_TEXT.fullmatch(v):
                # Nothing to escape: the one JSON spelling, a literal (as the quoted tree of its
                # characters would match, without an expression per character).
                return self.lexeme(("str", f'"{v}"', ""))
            return self.string_lexeme(lit_tree(v))
        if isinstance(v, list):
            items = [self.constant(x, False, where) for x in v]
            return self.array_of(items, None, len(items), len(items))
        if isinstance(v, dict):
            named = [(self.lexeme(("str", json.dumps(k, ensure_ascii=False), "")),
                      self.constant(x, False, where), True) for k, x in v.items()]
            return self.object_of(named, [])
        raise ConstraintError(f"JSON schema: const of type {type(v).__name__} at {where}")
