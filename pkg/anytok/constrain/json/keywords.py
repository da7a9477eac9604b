"""Reading a schema: the keywords llguidance knows, their drafts, typed access to their values,
the compile budgets, and the depth check run before anything else."""

from __future__ import annotations

import json

from ..errors import ConstraintError, GrammarLimitError

WS_BYTES = b" \t\n\r"
ANNOTATIONS = {
    "$anchor", "$defs", "definitions", "$schema", "$id", "id", "$comment", "title", "description",
    "default", "readOnly", "writeOnly", "examples", "contentMediaType", "contentEncoding",
}
# The keywords llguidance implements (all of them are, at least in part, here too).
IMPLEMENTED_HERE = {
    "anyOf", "oneOf", "allOf", "$ref", "const", "enum", "type", "items", "prefixItems", "additionalItems",
    "minItems",
    "maxItems", "properties", "additionalProperties", "patternProperties", "required", "minProperties",
    "maxProperties",
    "minLength", "maxLength",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
}
# Keywords of JSON Schema (2020-12 and earlier drafts) that llguidance rejects too.
REJECTED = {
    "not", "if", "then", "else", "contains", "minContains", "maxContains", "uniqueItems",
    "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
    "unevaluatedItems", "unevaluatedProperties", "$dynamicRef", "$recursiveRef",
}
# Keywords an older draft (named by the root's `$schema`) does not know: llguidance ignores them
# there, and reads a schema of only such keywords (and annotations) as any value.
_DRAFT_2020 = {"$dynamicRef"}
_DRAFT_2019 = _DRAFT_2020 | {"$recursiveRef", "dependentRequired", "dependentSchemas", "maxContains", "minContains",
                             "prefixItems", "unevaluatedItems", "unevaluatedProperties"}
_DRAFT_7 = _DRAFT_2019 | {"if", "then", "else"}
_DRAFT_6 = _DRAFT_7 | {"const", "contains", "propertyNames"}
UNKNOWN_IN_DRAFT = {
    "http://json-schema.org/draft-04/schema": _DRAFT_6, "http://json-schema.org/draft-06/schema": _DRAFT_7,
    "http://json-schema.org/draft-07/schema": _DRAFT_2019, "https://json-schema.org/draft/2019-09/schema": _DRAFT_2020,
}
TYPES = ("null", "boolean", "number", "string", "array", "object")
# Keywords next to const/enum that filter the constants (the rest: UnsupportedFeatureError).
CONST_SIBLINGS = {"type", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
                   "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}

# Keywords of objects and arrays only (beside constants that are neither: without effect).
CONTAINER_KEYWORDS = {"properties", "additionalProperties", "patternProperties", "required", "minProperties",
                       "maxProperties", "items", "prefixItems", "additionalItems", "minItems", "maxItems"}


INTERSECTION_BUDGET = 5000  # DFA pairs (patternProperties keys), tuples searched (string constraints)

# The compile budget: a schema whose compilation needs more is refused (UnsupportedFeatureError
# naming the budget) instead of running on.  Each expression holds a 256-entry derivative row
# (~2 KB), so EXPRESSION_BUDGET bounds the memory (~0.5 GB); SUBSCHEMA_BUDGET (llguidance's
# max_size: 50,000 schema nodes) bounds the work of merging allOf/anyOf/$ref.  The largest
# schemas of JSONSchemaBench's dev half need about 40,000 expressions and 1.5 s.
EXPRESSION_BUDGET = 250_000
SUBSCHEMA_BUDGET = 50_000

class Unsat(Exception):
    """The (sub)schema allows no value (llguidance drops such options of anyOf, etc.)."""


def schema_types(s: dict):
    t = s.get("type")
    if t is None:
        return None
    return [t] if isinstance(t, str) else t

def json_equal(a, b) -> bool:
    """Equality of JSON values (a boolean is no number; 1 and 1.0 are one number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def has_type(v, t: str) -> bool:
    if t == "null":
        return v is None
    if t == "boolean":
        return isinstance(v, bool)
    if t == "integer":
        return not isinstance(v, bool) and (isinstance(v, int) or isinstance(v, float) and v.is_integer())
    if t == "number":
        return not isinstance(v, bool) and isinstance(v, (int, float))
    if t == "string":
        return isinstance(v, str)
    if t == "array":
        return isinstance(v, list)
    if t == "object":
        return isinstance(v, dict)
    raise ConstraintError(f"JSON schema: invalid type {t!r}")


def usize(s: dict, key: str, where: str):
    v = s.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ConstraintError(f"JSON schema: {key} must be a non-negative integer at {where}, got {json.dumps(v)[:40]}")
    return v


# containers (objects and arrays) nested in a schema: json.dumps and the compiler recurse
# over them, so deeper schemas are refused up front
MAX_SCHEMA_DEPTH = 200


def check_depth(schema) -> None:
    """Raise GrammarLimitError if `schema` nests objects and arrays more than
    MAX_SCHEMA_DEPTH deep (checked without recursion)."""


    stack = [(schema, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            items = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        if d > MAX_SCHEMA_DEPTH:
            raise GrammarLimitError(f"JSON schema nested more than {MAX_SCHEMA_DEPTH} deep (objects and arrays)")
        stack.extend((x, d + 1) for x in items if isinstance(x, (dict, list)))
