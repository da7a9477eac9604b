"""JSON Schema -> one grammar expression of JSON texts, as llguidance 1.9.1 compiles schemas.

Data flow: `compile_schema(schema)` walks the schema (a dict or bool, already parsed) and builds,
in one `derivatives.ExprSet`, the byte-level expression of every JSON text the schema allows,
with llguidance's default JSON settings (measured against llguidance, see the tests):

* lexemes: `{ } [ ] , :`, `null`, `true|false`, numbers, each whole string (with its quotes)
  and each property key; JSON whitespace (`[ \\t\\n\\r]*`) is allowed between any two lexemes,
  never before the first or after the last (`strip_leading` removes it at the start);
* properties in the order of `properties`, then the `required` names not listed there, then
  any number of additional properties (JSON Schema's default: any value), comma-separated; a
  named property appears at most once, additional keys are any other string (a key spelled
  differently from a named one, e.g. with a `\\u` escape, counts as additional);
* strings: any code point except `"`, `\\`, U+0000-U+001F and U+007F, which must be escaped
  (`\\"`, `\\\\`, `\\b \\f \\n \\r \\t`, or `\\u00XX` for the control characters); no other
  escapes (`\\/`, `\\u0041` are rejected), except in additional property keys, which also take
  any `\\uXXXX` escape of a scalar value (a surrogate pair as one character); a pattern class
  with every control character also takes `\\"` and `\\\\` (llguidance's quoting, `quote_tree`);
* `pattern` is searched for (unanchored unless `^`/`$`), with ASCII `\\d` and `\\w`; lengths
  count code points (an escape is one); pattern, format and lengths together are intersected
  lazily (`ExprSet.conj`: derivatives of each side taken on demand, as derivre's `And`);
* numbers: `-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?`; integers `-?(0|[1-9][0-9]*)`; with
  bounds, llguidance's range languages, quirks included (`float_regex`, `int_regex`: no
  exponents, `-0` only where its range regex has it, ...); `multipleOf` intersects them with
  llguidance's digit-by-digit remainder automaton (`multiples`);
* objects also with `patternProperties` (keys: the JSON-quoted pattern, searched for; patterns
  must be disjoint; additional keys exclude them, `ExprSet.difference`; a named property a
  pattern matches takes both schemas, also when `allOf` merges them: `_intersect`) and
  `minProperties`/`maxProperties` where llguidance has them; arrays with `prefixItems` (or
  draft-2019 `items` arrays and `additionalItems`), `minItems`, `maxItems`;
* `enum`/`const` (with `type` and string/number keywords next to them filtering the values),
  `anyOf`, `allOf` of one schema; `oneOf` as `anyOf` where llguidance proves its options
  disjoint once merged with their siblings (`_ll_oneof` rebuilds llguidance's normalized schema
  for that verdict, once per schema; else refused);
* `$ref` (JSON pointers, `$id`s and anchors within the document, recursion allowed) and
  `{}`/`true` (any JSON value) become grammar rules (`ExprSet.new_rule`), expanded lazily by
  the derivatives; keywords the root's `$schema` draft does not know are ignored;
* top-level `"x-guidance"` options (`JsonOptions`), as llguidance reads them:
  `whitespace_flexible` (false: no whitespace), `whitespace_pattern` (a regex: at most one match
  of it before each lexeme, replacing JSON whitespace), `item_separator`/`key_separator`
  (regexes, each one lexeme), `coerce_one_of` (oneOf as anyOf), `lenient` (oneOf as anyOf;
  keywords llguidance does not implement, unknown formats and min/maxProperties beyond its
  special cases ignored, as llguidance ignores them with a warning); patterns whose bytes
  could make llguidance's greedy lexer split a text differently, and non-default
  `json_allowed_escapes`/`json_allow_general_unicode_escapes`, raise UnsupportedFeatureError.

The result is a single expression, so `matcher.py` serves it exactly as it serves a regex:
llguidance's lexer and Earley parser accept the same byte strings here, because every lexeme of
these grammars ends where the next one starts with a byte the lexeme cannot continue with.

Whatever llguidance implements and this module does not raises `UnsupportedFeatureError` naming
it; schemas llguidance rejects (malformed, unsatisfiable, unknown formats) raise
`ConstraintError`.
"""

from __future__ import annotations

import json
import math
import re
from urllib.parse import unquote, urldefrag, urljoin

from . import derivatives as D
from . import regex_syntax as R
from .errors import ConstraintError, GrammarLimitError, UnsupportedFeatureError
from .matcher import pause_gc

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
_UNKNOWN_IN_DRAFT = {
    "http://json-schema.org/draft-04/schema": _DRAFT_6, "http://json-schema.org/draft-06/schema": _DRAFT_7,
    "http://json-schema.org/draft-07/schema": _DRAFT_2019, "https://json-schema.org/draft/2019-09/schema": _DRAFT_2020,
}
TYPES = ("null", "boolean", "number", "string", "array", "object")
# Keywords next to const/enum that filter the constants (the rest: UnsupportedFeatureError).
_CONST_SIBLINGS = {"type", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
                   "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}

# Keywords of objects and arrays only (beside constants that are neither: without effect).
_CONTAINER_KEYWORDS = {"properties", "additionalProperties", "patternProperties", "required", "minProperties",
                       "maxProperties", "items", "prefixItems", "additionalItems", "minItems", "maxItems"}

# `format`s, written here from their RFC definitions (the languages equal llguidance's).
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_DATE = (r"[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
         r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|[12][0-9]))")
_TIME = (r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?"
         r"(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])")
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
# RFC 5321 Mailbox: a dot-string local part, then a domain or an IPv4 address literal.
_ATOM = r"[a-zA-Z0-9!#$%&'*+\-/=?^_`{|}~]+"
_SUBDOMAIN = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_EMAIL = rf"{_ATOM}(?:\.{_ATOM})*@(?:{_SUBDOMAIN}(?:\.{_SUBDOMAIN})*|\[(?:{_OCTET}\.){{3}}{_OCTET}\])"
# RFC 3339 appendix A durations: P, then a date part (years/months/days, optional time part),
# a time part alone, or weeks.
_DUR_TIME = r"T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
_DURATION = (r"P(?:(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)(?:" + _DUR_TIME + r")?"
             r"|" + _DUR_TIME + r"|[0-9]+W)")
# RFC 3986 URIs (IPv6 literals in their compressed forms without an embedded IPv4 address).
_PCT = "%[0-9a-fA-F]{2}"
_SUB_DELIMS = "!$&'()*+,;="
_UNRESERVED = "a-zA-Z0-9\\-._~"
_PCHAR = f"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_H16 = "[0-9a-fA-F]{1,4}"
_IPV6 = "|".join([f"(?:{_H16}:){{7}}{_H16}", f"(?:{_H16}:){{1,7}}:"]
                 + [f"(?:{_H16}:){{1,{7 - k}}}(?::{_H16}){{1,{k}}}" for k in range(1, 7)]
                 + [f":(?::{_H16}){{1,7}}", "::"])
_HOST = (rf"\[(?:{_IPV6}|v[0-9a-fA-F]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+)\]"
         rf"|(?:{_OCTET}\.){{3}}{_OCTET}|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*")
_URI = (rf"[a-zA-Z][a-zA-Z0-9+\-.]*:"
        rf"(?://(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?(?:{_HOST})(?::[0-9]*)?(?:/{_PCHAR}*)*"
        rf"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?|{_PCHAR}+(?:/{_PCHAR}*)*|)"
        rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?")
FORMATS = {
    "date": _DATE,
    "time": _TIME,
    "date-time": _DATE + "[tT]" + _TIME,
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "ipv4": rf"(?:{_OCTET}\.){{3}}{_OCTET}",
    "hostname": rf"{_LABEL}(?:\.{_LABEL})*",
    "email": _EMAIL,
    "duration": _DURATION,
    "uri": _URI,
    "ipv6": _IPV6,
    "unknown": r"(?s:.*)",
}

_BASE = "https://json-schema.invalid/"  # a document's base URI when it has no $id
INTERSECTION_BUDGET = 5000  # DFA pairs (patternProperties keys), tuples searched (string constraints)
# multipleOf: the largest step coefficient (digits without the decimal point) and the most
# states its minimized remainder automaton may keep (a step prime to 10 needs one per remainder)
MULTIPLE_OF_COEF = 10_000
MULTIPLE_OF_STATES = 5000
# The compile budget: a schema whose compilation needs more is refused (UnsupportedFeatureError
# naming the budget) instead of running on.  Each expression holds a 256-entry derivative row
# (~2 KB), so EXPRESSION_BUDGET bounds the memory (~0.5 GB); SUBSCHEMA_BUDGET (llguidance's
# max_size: 50,000 schema nodes) bounds the work of merging allOf/anyOf/$ref.  The largest
# schemas of JSONSchemaBench's dev half need about 40,000 expressions and 1.5 s.
EXPRESSION_BUDGET = 250_000
SUBSCHEMA_BUDGET = 50_000

_SHORT_ESCAPES = {8: "b", 9: "t", 10: "n", 12: "f", 13: "r"}
_SPECIAL = tuple((c, c) for c in range(0x20)) + ((0x22, 0x22), (0x5C, 0x5C), (0x7F, 0x7F))
_ANY_CP = R.ANY


def _follow_pointer(target, pointer: str, uri: str, where: str):
    """The part of `target` a JSON pointer (`/a/0/b`, percent- and ~-escaped; "" for all of it)
    names, for `$ref` `uri` at `where`."""
    for part in unquote(pointer).split("/")[1:] if pointer else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            raise ConstraintError(f"JSON schema: $ref {uri!r} points to nothing (at {where})")
    return target


class _Unsat(Exception):
    """The (sub)schema allows no value (llguidance drops such options of anyOf, etc.)."""


def _set(*chars: str):
    return ("set", tuple((ord(c), ord(c)) for c in sorted(set(chars))))


def _lit_tree(s: str):
    return ("cat", [("set", ((ord(c), ord(c)),)) for c in s]) if s else R.EMPTY


_HEX = "0123456789abcdef"


def _hex_digit(d: int):
    c = _HEX[d]
    return _set(c, c.upper())


def quote_tree(node):
    """The tree of the JSON string bodies whose decoded text `node` matches (llguidance's
    JsonQuote with its default escapes)."""
    kind = node[0]
    if kind == "set":
        ranges = node[1]
        plain = R.U.difference(ranges, _SPECIAL)
        ctrl = {c for lo, hi in R.U.intersect(ranges, ((0, 0x1F),)) for c in range(lo, hi + 1)}
        has = lambda c: bool(R.U.intersect(ranges, ((c, c),)))  # noqa: E731
        # After a backslash: one of `short`, or u00 and the hex of one of `coded`.  As
        # llguidance (derivre) quotes byte sets: a set with all control characters (or all
        # but \n) also takes \" and \\, even when it has neither " nor \.
        if len(ctrl) == 32 or ctrl == set(range(32)) - {0x0A}:
            short = set('"\\bfrt' + ("n" if 0x0A in ctrl else ""))
        else:
            short = {_SHORT_ESCAPES[c] for c in ctrl if c in _SHORT_ESCAPES}
        coded = set(ctrl)
        if has(0x22):
            short.add('"')
        if has(0x5C):
            short.add("\\")
        if has(0x7F):
            coded.add(0x7F)
        after = [_set(*short)] if short else []
        by_high: dict = {}
        for c in sorted(coded):
            by_high.setdefault(c >> 4, []).append(c & 15)
        if by_high:
            hexes = [("cat", [_hex_digit(h), _set(*"".join(_HEX[d] + _HEX[d].upper() for d in lows))])
                     for h, lows in sorted(by_high.items())]
            after.append(("cat", [_lit_tree("u00"), hexes[0] if len(hexes) == 1 else ("alt", hexes)]))
        alts = [("set", plain)] if plain else []
        if after:
            alts.append(("cat", [_lit_tree("\\"), after[0] if len(after) == 1 else ("alt", after)]))
        if not alts:
            return ("set", ())
        return alts[0] if len(alts) == 1 else ("alt", alts)
    if kind in ("cat", "alt"):
        return (kind, [quote_tree(n) for n in node[1]])
    if kind == "rep":
        return ("rep", quote_tree(node[1]), node[2], node[3])
    return node


def _ascii_classes(pattern: str) -> str:
    """`\\d \\D \\w \\W` as ASCII classes (JSON Schema's regex semantics, as llguidance)."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            if n in "dD":
                out.append("[^0-9]" if n == "D" else "[0-9]")
            elif n in "wW":
                out.append("[^0-9a-zA-Z_]" if n == "W" else "[0-9a-zA-Z_]")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _has_anchor(node) -> bool:
    kind = node[0]
    if kind == "look":
        return True
    if kind == "group":
        return _has_anchor(node[1])
    if kind in ("alt", "cat"):
        return any(map(_has_anchor, node[1]))
    if kind == "rep":
        return _has_anchor(node[1])
    return False


def _pin(node, anchor, first: bool):
    """`node` searched for from one side, as llguidance: along every path through it, a leading
    `^` (`anchor` START, `first` True) pins the match to the string's start, else any text may
    come before it; mirrored for a trailing `$`.  Anchors elsewhere are left for `_resolve`."""
    anywhere = ("rep", ("set", _ANY_CP), 0, None)
    if not _has_anchor(node):
        return ("cat", [anywhere, node] if first else [node, anywhere])
    kind = node[0]
    if node == anchor:
        return R.EMPTY
    if kind == "group":
        return _pin(node[1], anchor, first)
    if kind == "alt":
        return ("alt", [_pin(n, anchor, first) for n in node[1]])
    if kind == "cat" and node[1]:
        items = list(node[1])
        k = 0 if first else len(items) - 1
        items[k] = _pin(items[k], anchor, first)
        return ("cat", items)
    return ("cat", [anywhere, node] if first else [node, anywhere])


def _search_tree(pattern: str):
    """The tree of the strings in which `pattern` is found: along every path through the
    pattern, a `^` where the path begins pins the match to the start, a `$` where it ends to
    the end (`^(a$)|(^b$)`, `^(a|b$)`); an anchor anywhere else is refused, as llguidance
    ("lookarounds not supported")."""
    tree = R._Parser(_ascii_classes(pattern)).parse()
    tree = _pin(_pin(tree, R._START, True), R._END, False)
    return R._resolve(tree, False, False)  # any other anchor: UnsupportedFeatureError


# -- numbers ----------------------------------------------------------------------------------

def _digits_between(lo: str, hi: str) -> str:
    """Regex of the digit strings of len(lo) == len(hi) from lo to hi (as numbers)."""
    if not lo:
        return ""
    if lo.count("0") == len(lo) and hi.count("9") == len(hi):  # every string that long: linear,
        return "[0-9]" * len(lo)  # not the 2**n branches the split below would make of it
    if lo[0] == hi[0]:
        return lo[0] + _digits_between(lo[1:], hi[1:])
    n = len(lo) - 1
    parts = [lo[0] + _digits_between(lo[1:], "9" * n)]
    if int(lo[0]) + 1 <= int(hi[0]) - 1:
        parts.append(f"[{int(lo[0]) + 1}-{int(hi[0]) - 1}]" + "[0-9]" * n)
    parts.append(hi[0] + _digits_between("0" * n, hi[1:]))
    return "(?:" + "|".join(parts) + ")"


def _nonneg_range(lo: int, hi: int | None) -> str:
    """Regex of the canonical decimal integers from lo >= 0 to hi (None: unbounded)."""
    parts = []
    n_lo = len(str(lo))
    top = len(str(hi)) if hi is not None else n_lo
    for n in range(n_lo, top + 1):
        a = max(lo, 10 ** (n - 1) if n > 1 else 0)
        b = 10 ** n - 1 if hi is None else min(hi, 10 ** n - 1)
        if a <= b:
            parts.append(_digits_between(str(a), str(b)))
    if hi is None:
        parts.append(f"[1-9][0-9]{{{n_lo},}}")
    return "(?:" + "|".join(parts) + ")"


def int_regex(lo: int | None, hi: int | None) -> str:
    """Canonical integers in [lo, hi]; `-0` where llguidance's range regex has it (no bounds,
    or a lower bound below zero and an upper bound at or above it)."""
    if lo is not None and hi is not None and lo > hi:
        raise _Unsat("empty integer range")
    parts = []
    if lo is None or lo < 0:  # negatives: -(|n|) for n in [lo, min(hi, -1)]
        neg_hi = None if lo is None else -lo
        neg_lo = 1 if hi is None or hi >= 0 else -hi
        if neg_hi is None or neg_lo <= neg_hi:
            parts.append("-" + _nonneg_range(neg_lo, neg_hi))
    if hi is None or hi >= 0:
        parts.append(_nonneg_range(max(lo or 0, 0), hi))
    if (lo is None and hi is None) or (lo is not None and hi is not None and lo < 0 <= hi):
        parts.append("-0")
    return "|".join(parts)


NUMBER_RE = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"


# Bounded numbers: llguidance builds a regex by splitting the range at zero and at the integer
# parts of the bounds, and compares fraction digits as strings.  Its language has quirks (no
# exponents; `-2.50` is not in [-2.5, 3]; `0` is in (0, 0.5]), so the same construction is
# followed here step by step: `_frac_*` match fraction digit strings, `float_regex` the numbers.

class _RangeError(Exception):
    pass


def _or(parts: list) -> str:
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


def _frac_from(x: str, inclusive: bool) -> str:
    """Fraction digits (after the point) from x upwards, as llguidance's lexi_x_to_9."""
    if not x:
        return "[0-9]*" if inclusive else "[0-9]*[1-9]"
    if inclusive and len(x) == 1:
        return f"[{x}-9][0-9]*"
    parts = [x[0] + _frac_from(x[1:], inclusive)]
    if x[0] != "9":
        parts.append(f"[{int(x[0]) + 1}-9][0-9]*")
    return _or(parts)


def _frac_upto(x: str, inclusive: bool) -> str:
    """Fraction digits up to x, as llguidance's lexi_0_to_x."""
    if not x:
        if inclusive:
            return ""
        raise _RangeError("empty fraction range")
    if not inclusive and len(x) == 1:
        if x == "0":
            raise _RangeError("empty fraction range")
        return f"[0-{int(x) - 1}][0-9]*"
    parts = [x[0] + _frac_upto(x[1:], inclusive)]
    if x[0] != "0":
        parts.append(f"[0-{int(x[0]) - 1}][0-9]*")
    return _or(parts)


def _frac_between(lo: str, hi: str, lo_inc: bool, hi_inc: bool) -> str:
    """Fraction digits between lo and hi (same length), as llguidance's lexi_range."""
    if lo == hi:
        if lo_inc and hi_inc:
            return lo
        raise _RangeError("empty fraction range")
    if lo[0] == hi[0]:
        return lo[0] + _frac_between(lo[1:], hi[1:], lo_inc, hi_inc)
    if lo[0] > hi[0]:
        raise _RangeError("bad fraction range")
    parts = [lo[0] + _frac_from(lo[1:].rstrip("0"), lo_inc)]
    if int(lo[0]) + 1 < int(hi[0]):
        parts.append(f"[{int(lo[0]) + 1}-{int(hi[0]) - 1}][0-9]*")
    rest = hi[1:].rstrip("0")
    if rest or hi_inc:
        parts.append(hi[0] + _frac_upto(rest, hi_inc))
    return _or(parts)


def _plain(f: float) -> str:
    """A float as Rust's `{}` prints it: shortest round-trip digits, never an exponent."""
    from decimal import Decimal

    t = format(Decimal(repr(float(f))), "f")
    if "." in t:
        t = t.rstrip("0").rstrip(".")
    return t


def _uint_regex(lo: int, hi: int) -> str:
    return _nonneg_range(lo, hi)


def float_regex(lo, hi, lo_inc: bool, hi_inc: bool) -> str:
    """The numbers llguidance's range regex for [lo, hi] (None: unbounded) matches."""
    if lo is None and hi is None:
        return NUMBER_RE
    if hi is None:
        if lo < 0:
            return _or([float_regex(lo, 0.0, lo_inc, False), float_regex(0.0, None, True, False)])
        k = len(str(abs(int(lo))))
        return _or([float_regex(lo, float(10 ** k), lo_inc, False), f"[1-9][0-9]{{{k},}}(?:\\.[0-9]+)?"])
    if lo is None:
        if hi == 0:
            neg = "-" + float_regex(0.0, None, False, False)
            return _or([neg, "0"]) if hi_inc else neg
        if hi > 0:
            return _or(["-" + float_regex(0.0, None, False, False), float_regex(0.0, hi, True, hi_inc)])
        return "-" + float_regex(-hi, None, hi_inc, False)
    if lo > hi:
        raise _RangeError("empty range")
    if lo == hi:
        if lo_inc and hi_inc:
            return re.escape(_plain(lo))
        raise _RangeError("empty range")
    if lo < 0:
        if hi < 0:
            return "-" + float_regex(-hi, -lo, hi_inc, lo_inc)
        parts = ["-" + float_regex(0.0, -lo, False, lo_inc)]
        if hi > 0 or hi_inc:
            parts.append(float_regex(0.0, hi, True, hi_inc))
        return _or(parts)
    ls, rs = _plain(lo), _plain(hi)
    if ls == rs or math.isinf(lo) or math.isinf(hi):
        raise _RangeError("bad range")
    li, _, ld = ls.partition(".")
    ri, _, rd = rs.partition(".")
    li, ri = int(li), int(ri)
    if li == ri:
        n = max(len(ld), len(rd))
        ld, rd = ld.ljust(n, "0"), rd.ljust(n, "0")
        frac = "\\." + _frac_between(ld, rd, lo_inc, hi_inc)
        if int(ld or "0") == 0:
            return f"{li}(?:{frac})?"
        return f"{li}{frac}"
    parts = []
    if ld or not lo_inc:
        parts.append(f"{li}\\.{_frac_from(ld, lo_inc)}")
        li += 1
    if ri > li:
        parts.append(f"{_uint_regex(li, ri - 1)}(?:\\.[0-9]+)?")
    if rd:
        parts.append(f"{ri}(?:\\.{_frac_upto(rd, hi_inc)})?")
    elif hi_inc:
        parts.append(f"{ri}(?:\\.0+)?")
    return _or(parts)


def _num(v, key):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ConstraintError(f"JSON schema: {key!r} must be a number, got {json.dumps(v)[:60]}")
    return v


def _bounds(s: dict):
    """(minimum, exclusive?), (maximum, exclusive?) as llguidance reads them (draft 4 booleans too)."""
    mn = _num(s["minimum"], "minimum") if "minimum" in s else None
    mx = _num(s["maximum"], "maximum") if "maximum" in s else None
    xmn, xmx = s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
    xmn = (mn if xmn is True else None) if isinstance(xmn, bool) or xmn is None else _num(xmn, "exclusiveMinimum")
    xmx = (mx if xmx is True else None) if isinstance(xmx, bool) or xmx is None else _num(xmx, "exclusiveMaximum")
    if mn is not None and xmn is not None:
        low = (xmn, True) if xmn >= mn else (mn, False)
    else:
        low = (xmn, True) if xmn is not None else (mn, False)
    if mx is not None and xmx is not None:
        high = (xmx, True) if xmx <= mx else (mx, False)
    else:
        high = (xmx, True) if xmx is not None else (mx, False)
    return low, high


# -- the compiler -----------------------------------------------------------------------------

class _Compiler:
    def __init__(self, root, options: "JsonOptions | None" = None):
        o = options or JsonOptions()
        self.root = root
        self.ids = None  # `$id`s and anchors, indexed on the first `$ref` that needs them
        draft = root.get("$schema") if isinstance(root, dict) else None
        self.unknown = _UNKNOWN_IN_DRAFT.get(draft.rstrip("#"), set()) if isinstance(draft, str) else set()
        self.coerce_one_of = o.coerce_one_of or o.lenient  # llguidance: lenient coerces oneOf too
        self.lenient = o.lenient
        es = self.es = D.ExprSet()
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
            raise _Unsat("empty lexeme")
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
        return self.tree(R.parse(pattern))

    def string_lexeme(self, body_tree) -> int:
        body = self.tree(quote_tree(body_tree))
        if body == D.NOTHING:
            raise _Unsat("string pattern matches nothing")
        q = self.es.byteset(1 << 0x22)
        return self.lexeme(self.seq(q, body, q))

    def simple_string(self) -> int:
        if self._simple_string is None:
            self._simple_string = self.string_lexeme(("rep", ("set", _ANY_CP), 0, None))
        return self._simple_string

    def quoted(self, tree) -> int:
        """The JSON string (with its quotes) of the decoded texts `tree` matches."""
        q = self.es.byteset(1 << 0x22)
        return self.seq(q, self.tree(quote_tree(tree)), q)

    def general_key(self, taken: list, patterns: list = (), where: str = "") -> int:
        """Any JSON string with any `\\uXXXX` escape (llguidance's additional-key lexeme), except
        the literal keys in `taken` and the keys of `patterns` (quoted pattern expressions)."""
        es = self.es
        hex2 = "[0-9a-fA-F]{2}"
        scalar = (f"[0-9a-cA-Ce-fE-F]{hex2}[0-9a-fA-F]"  # U+0000-U+CFFF, U+E000-U+FFFF
                  f"|[dD][0-7]{hex2}"  # U+D000-U+D7FF
                  f"|[dD][89abAB]{hex2}\\\\u[dD][c-fC-F]{hex2}")  # a surrogate pair
        char = self.regex(r'[^"\\\x00-\x1F\x7F]|\\["\\bfnrt]|\\u(?:' + scalar + ")")
        q = es.byteset(1 << 0x22)
        key = es.minus_literals(self.seq(q, es.repeat(char, 0, None), q), frozenset(taken))
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
                        raise _Unsat("required array item is unsatisfiable")
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
            raise _Unsat("minProperties is greater than the number of properties")
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
        """The expression of the JSON values `s` allows (raises _Unsat when none)."""
        self.visited += 1
        if self.visited > SUBSCHEMA_BUDGET or len(self.es.exprs) > EXPRESSION_BUDGET:
            self.over_budget()
        if s is True:
            return self.any_value()
        if s is False:
            raise _Unsat("schema is false")
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
                if not any(_json_equal(s["const"], v) for v in values):
                    raise _Unsat("the const value is not among the enum values")
                return self.value({**{k: v for k, v in s.items() if k != "const"}, "enum": [s["const"]]}, where)
            a = applicators[0]
            if len(applicators) == 1 and a in ("const", "enum") and set(others) <= _CONST_SIBLINGS:
                return self.constants(s, a, where)
            if len(applicators) == 1 and a in ("const", "enum") and set(others) <= _CONST_SIBLINGS | _CONTAINER_KEYWORDS:
                # object/array keywords beside constants: llguidance intersects each constant with
                # them, which keeps the arrays and objects that satisfy them (and leaves scalars be)
                values = [s[a]] if a == "const" else s[a]
                if not isinstance(values, list):
                    raise ConstraintError(f"JSON schema: enum must be an array at {where}")
                container = {k: v for k, v in s.items() if k in _CONTAINER_KEYWORDS}
                kept = []
                for v in values:
                    if isinstance(v, (list, dict)):
                        ok, v = self.fits(v, container, where)
                        if not ok:
                            continue
                    kept.append(v)
                if not kept:
                    raise _Unsat("no const/enum value satisfies the keywords beside it")
                rest = {k: v for k, v in s.items() if k not in _CONTAINER_KEYWORDS and k not in ("const", "enum")}
                return self.constants(dict(rest, enum=kept), "enum", where)
            if len(applicators) > 1 or others or (a == "allOf" and isinstance(s[a], list) and len(s[a]) > 1):
                # keywords next to allOf/anyOf/oneOf/$ref: intersected, as llguidance merges them
                merged = self.merge_all_of(s, where)
                if merged == s:  # nothing left to merge, and still not compilable: a loop otherwise
                    raise UnsupportedFeatureError(
                        f"JSON Schema {a} next to "
                        + ", ".join(repr(k) for k in applicators[1:] + [k for k in others if k not in _CONST_SIBLINGS]),
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
                        except _Unsat:
                            continue
                    if not merged:
                        raise _Unsat(f"no {a} option is satisfiable")
                    # llguidance checks the options as written and again once merged (where two
                    # string constants intersected are no longer a constant to it: only named
                    # properties, types and constants on one side count)
                    if a == "oneOf" and not self.coerce_one_of and not self.disjoint(opts) and not all(
                            _disjoint(x, y, named_only=True) for j, x in enumerate(merged) for y in merged[j + 1:]):
                        raise UnsupportedFeatureError(
                            "JSON Schema oneOf whose options are not verifiably disjoint",
                            f"at {where}; llguidance rejects it too unless coerce_one_of")
                    return {"anyOf": merged}  # oneOf: its merged options proven disjoint
        out = True
        for part in parts:
            out = _intersect(out, part, where)
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

    def resolve(self, uri, where: str):
        if isinstance(uri, str) and uri != "#" and not uri.startswith("#/"):
            return self.resolve_id(uri, where)
        if not isinstance(uri, str):
            raise ConstraintError(f"JSON schema: $ref must be a string at {where}")
        return _follow_pointer(self.root, uri[1:], uri, where)

    def resolve_id(self, uri: str, where: str):
        """A `$ref` by identifier, within the document (as llguidance's resolver): the
        document's own `$id`/`id` (draft 4), a subschema's `$id`/`id` (absolute or relative to
        the one around it), an anchor (`$anchor`, or an `$id`/`id` of the form `#name`), then a
        JSON pointer after the `#`.  Resolved against the document's base URI."""
        if self.ids is None:
            self.ids = {}
            root_id = self.root.get("$id", self.root.get("id")) if isinstance(self.root, dict) else None
            base = _join(_BASE, root_id) if isinstance(root_id, str) else _BASE
            self.base = urldefrag(base)[0]
            stack = [(self.root, self.base)]
            while stack:
                s, base = stack.pop()
                if isinstance(s, list):
                    stack += [(x, base) for x in s]
                    continue
                if not isinstance(s, dict):
                    continue
                for key in ("$id", "id"):
                    v = s.get(key)
                    if isinstance(v, str):
                        full, frag = urldefrag(_join(base, v))
                        if frag:
                            self.ids.setdefault(f"{full}#{frag}", s)
                        else:
                            base = full
                            self.ids.setdefault(full, s)
                        break
                if isinstance(s.get("$anchor"), str):
                    self.ids.setdefault(f"{base}#{s['$anchor']}", s)
                for k, v in s.items():
                    if k not in ("const", "enum", "default", "examples") and isinstance(v, (dict, list)):
                        stack.append((v, base))
        full, frag = urldefrag(_join(self.base, uri))
        target = self.ids.get(full, self.root if full == self.base else None)
        if target is not None and frag and not frag.startswith("/"):
            target = self.ids.get(f"{full}#{frag}")
        if target is None:
            raise UnsupportedFeatureError(f"JSON Schema $ref {uri!r}",
                                          "only references within the document are supported")
        return _follow_pointer(target, frag, uri, where)

    def first_satisfiable(self, builders) -> int:
        out, unsat = [], None
        for b in builders:
            try:
                out.append(b())
            except _Unsat as e:
                unsat = e
        if not out:
            raise unsat or _Unsat("no options")
        return self.es.alt(out)

    def any_of(self, options) -> int:
        if not options:
            raise _Unsat("anyOf is empty")
        if any(o is True or o == {} for o, _ in options):
            return self.any_value()
        return self.first_satisfiable([lambda o=o, w=w: self.value(o, w) for o, w in options])

    def disjoint(self, options) -> bool:
        """oneOf = anyOf when no value can match two options, proven as llguidance proves it
        (nothing more, nothing less): each option seen as the union of its kinds of value; two
        kinds are disjoint when they differ (integer and number are one kind), two booleans or
        string constants when their values differ, two objects when a property either requires
        has disjoint schemas on the two sides (its `properties` entry, else the first matching
        `patternProperties`, else `additionalProperties`); a bare `$ref` and an unconstrained
        schema are disjoint from nothing, an unsatisfiable option from everything."""
        alts = [self._ll_alts(o, 0) for o in options]
        return all(self._ll_alts_disjoint(a, b) for i, a in enumerate(alts) for b in alts[i + 1:])

    def resolved(self, options: list, where: str) -> list:
        """`options` with their `$ref`s and `allOf`s merged in (False for an unsatisfiable one)."""
        out = []
        for o in options:
            if isinstance(o, dict) and ("$ref" in o or "allOf" in o):
                try:
                    o = self.merge_all_of(o, where)
                except _Unsat:
                    o = False
                except (ConstraintError, RecursionError):
                    pass
            out.append(o)
        return out

    def _ll_alts(self, s, depth: int) -> list:
        """The kinds of value a schema allows, as llguidance's normalized schema has them:
        ("any",), ("ref",), ("null",), ("bool", value or None), ("number",), ("string",
        constant or None), ("array",), ("object", schema); [] when unsatisfiable."""
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
                        out += self._ll_alts(o, depth + 1)
                    return [("any",)] if ("any",) in out else out
            try:
                merged = self.merge_all_of(s, "#")
            except _Unsat:
                return []
            except (ConstraintError, RecursionError):
                return [("any",)]
            if isinstance(merged, dict) and any(k in merged for k in ("$ref", "allOf")):
                return [("any",)]
            return self._ll_alts(merged, depth + 1)
        if "const" in keys or "enum" in keys:
            values = [s["const"]] if "const" in keys else s["enum"]
            if not isinstance(values, list) or ("const" in keys and "enum" in keys):
                return [("any",)]
            types = _types(s)
            text = "pattern" in keys or "format" in keys
            out = []
            for v in values:
                if types is not None and not any(isinstance(t, str) and _has_type(v, t) for t in types):
                    continue
                if v is None:
                    out.append(("null",))
                elif isinstance(v, bool):
                    out.append(("bool", v))
                elif isinstance(v, (int, float)):
                    out.append(("number",))
                elif isinstance(v, str):
                    out.append(("string", None if text else v))
                elif isinstance(v, list):
                    out.append(("array",))
                else:
                    out.append(("object", {"properties": {k: {"const": x} for k, x in v.items()},
                                           "required": list(v), "additionalProperties": False}))
            return out
        types = _types(s)
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

    def _ll_alts_disjoint(self, xs: list, ys: list) -> bool:
        for x in xs:
            for y in ys:
                if x[0] in ("any", "ref") or y[0] in ("any", "ref"):
                    return False
                if x[0] != y[0]:
                    continue
                if x[0] in ("bool", "string") and x[1] is not None and y[1] is not None and x[1] != y[1]:
                    continue
                if x[0] == "object" and self._ll_objects_disjoint(x[1], y[1]):
                    continue
                return False
        return True

    def _ll_objects_disjoint(self, a: dict, b: dict) -> bool:
        ra, rb = a.get("required", []), b.get("required", [])
        if not isinstance(ra, list) or not isinstance(rb, list):
            return False
        for key in dict.fromkeys(ra + rb):
            if isinstance(key, str) and self._ll_alts_disjoint(
                    self._ll_alts(_property_schema(a, key), 1), self._ll_alts(_property_schema(b, key), 1)):
                return True
        return False

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

    def number(self, s: dict, integer: bool, where: str) -> int:
        (lo, xlo), (hi, xhi) = _bounds(s)
        if lo is not None and hi is not None:
            if lo > hi:
                raise _Unsat("minimum is greater than maximum")
            if lo == hi and (xlo or xhi):
                raise _Unsat("minimum equals an exclusive maximum")
        if not integer:
            for v in (lo, hi):
                if v is not None and (math.isinf(v) or math.isnan(v)):
                    raise ConstraintError(f"JSON schema: infinite number bound at {where}")
            try:
                rx = float_regex(lo, hi, not xlo, not xhi)
            except _RangeError as e:
                raise ConstraintError(f"JSON schema: cannot build the number range at {where} ({e})") from None
            return self.lexeme(self.multiple_of(self.regex(rx), s, where))
        for v in (lo, hi):
            if v is not None and (math.isinf(v) or math.isnan(v)):
                raise UnsupportedFeatureError("JSON Schema infinite integer bounds", f"at {where}")
        # as llguidance: the bounds as doubles, rounded inwards, then saturated to 64 bits
        ilo = None if lo is None else _i64(float(lo) + 1 if xlo and float(lo).is_integer() else math.ceil(float(lo)))
        ihi = None if hi is None else _i64(float(hi) - 1 if xhi and float(hi).is_integer() else math.floor(float(hi)))
        # the bounds llguidance's integer-range regex cannot handle (its open-ended ranges from a
        # 19-digit bound, and -2**63 anywhere): refused as llguidance refuses them
        if (-2 ** 63 in (ilo, ihi) or ilo is not None and ihi is None and ilo >= 10 ** 18
                or ihi is not None and ilo is None and ihi <= -10 ** 18):
            raise ConstraintError(f"JSON schema: integer range [{ilo}, {ihi}] at {where} is beyond what "
                                  "llguidance's integer-range regex handles (64-bit bounds, an open "
                                  "range from 19 digits on)")
        return self.lexeme(self.multiple_of(self.regex(int_regex(ilo, ihi)), s, where))

    def multiple_of(self, e: int, s: dict, where: str) -> int:
        """`e` (a number lexeme) restricted to multiples of s["multipleOf"], if given: as
        llguidance, the intersection with "an optional minus, then digits (and at most as many
        fraction digits as the step has) whose value is a multiple of the step"."""
        if "multipleOf" not in s:
            return e
        step = _num(s["multipleOf"], "multipleOf")
        if step <= 0:
            raise UnsupportedFeatureError("JSON Schema multipleOf <= 0", f"at {where}")
        coef, exp = _decimal(float(step))
        if coef > MULTIPLE_OF_COEF:
            raise UnsupportedFeatureError("JSON Schema multipleOf with this many significant digits",
                                          f"at {where} (at most {MULTIPLE_OF_COEF:,})")
        try:
            r = self.es.intersect(e, self.es.concat(self.es.alt((self.es.literal(b"-"), D.EPSILON)),
                                                    self.multiples(coef, exp)), INTERSECTION_BUDGET)
        except OverflowError:
            raise UnsupportedFeatureError("JSON Schema multipleOf whose number language is this large",
                                          f"at {where}") from None
        if r == D.NOTHING:
            raise _Unsat("no multiple of multipleOf in range")
        return r

    def multiples(self, d: int, scale: int) -> int:
        """Digit strings whose value times 10^scale is a multiple of d, with no fraction part or
        one of at most `scale` digits, exactly as llguidance's MultipleOf matches them: a DFA
        over remainders (leading zeros allowed; the number regex it is intersected with rules
        them out), its live states as rules.  In the fraction part, once 10^(digits left) is
        at most d, the remaining digits are forced (so with multipleOf 0.25, 0.5 must be
        written 0.50)."""
        es = self.es

        def frac(r: int, left: int):
            if left == 0 and r == 0:
                return "end"
            to_go = (d - r) % d
            if to_go >= 10 ** left:
                return None
            if 10 ** left <= d:
                return ("digits", str(to_go).zfill(left))
            return ("frac", r, left)

        def edges_of(st):
            if st == "start":
                return [(0x30 + c, ("int", (c * 10 ** scale) % d)) for c in range(10)]
            if st == "end":
                return []
            if st[0] == "digits":
                rest = st[1][1:]
                return [(ord(st[1][0]), ("digits", rest) if rest else "end")]
            if st[0] == "int":
                out = [(0x30 + c, ("int", (10 * st[1] + c * 10 ** scale) % d)) for c in range(10)]
                if scale > 0:
                    out.append((0x2E, frac(st[1], scale)))
                return [(b, n) for b, n in out if n is not None]
            r, left = st[1], st[2]
            out = [(0x30 + c, frac((r + c * 10 ** (left - 1)) % d, left - 1)) for c in range(10)]
            return [(b, n) for b, n in out if n is not None]

        def accepting(st) -> bool:
            return st == "end" or st[0] in ("int", "frac") and st[1] == 0

        edges: dict = {}
        todo = ["start"]
        while todo:
            st = todo.pop()
            if st not in edges:
                edges[st] = edges_of(st)
                todo.extend(n for _, n in edges[st])
        live = {st for st in edges if accepting(st)}
        changed = True
        while changed:
            changed = False
            for st, out in edges.items():
                if st not in live and any(n in live for _, n in out):
                    live.add(st)
                    changed = True
        if "start" not in live:
            return D.NOTHING
        # minimized (Moore): remainders that lead to the same strings are one rule (a step of
        # 5000 needs a handful, not 5000: only its factor prime to 10 needs one per remainder)
        block = {st: int(accepting(st)) for st in live}
        count = len(set(block.values()))
        while True:
            ids: dict = {}
            new = {st: ids.setdefault((block[st],) + tuple((b, block[n]) for b, n in edges[st] if n in live),
                                      len(ids)) for st in live}
            if len(ids) == count:
                break
            block, count = new, len(ids)
        if count > MULTIPLE_OF_STATES:
            raise OverflowError
        rules: dict = {}
        for st in live:
            if block[st] not in rules:
                rules[block[st]] = (st, es.new_rule(accepting(st)))
        for st, (k, _) in rules.values():
            parts = [es.concat(es.byteset(1 << b), rules[block[n]][1][1]) for b, n in edges[st] if n in live]
            if accepting(st):
                parts.append(D.EPSILON)
            es.set_rule(k, es.alt(parts))
        return rules[block["start"]][1][1]

    def string(self, s: dict, where: str) -> int:
        lo = _usize(s, "minLength", where) or 0
        hi = _usize(s, "maxLength", where)
        if hi is not None and lo > hi:
            raise _Unsat("minLength is greater than maxLength")
        length = ("rep", ("set", _ANY_CP), lo, hi)
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
        es.universal.add(self.tree(quote_tree(("rep", ("set", _ANY_CP), 0, None))))
        try:
            body = es.conj([self.tree(quote_tree(t)) for t in trees], INTERSECTION_BUDGET)
        except OverflowError:
            raise UnsupportedFeatureError(
                "JSON Schema string constraints whose intersection is this large",
                f"at {where} (no common string found within {INTERSECTION_BUDGET:,} steps)") from None
        if body == D.NOTHING:
            raise _Unsat("no string satisfies pattern/format/length together")
        q = es.byteset(1 << 0x22)
        return self.lexeme(self.seq(q, body, q))

    def text_trees(self, s: dict, where: str) -> list:
        """The trees of `s`'s `pattern` (searched for) and `format` (whole), one per pattern or
        format: `allOf` merges leave a tuple of several (see `_intersect`)."""
        trees = []
        pattern, fmt = s.get("pattern"), s.get("format")
        for p in pattern if isinstance(pattern, tuple) else () if pattern is None else (pattern,):
            if not isinstance(p, str):
                raise ConstraintError(f"JSON schema: pattern must be a string at {where}")
            trees.append(_search_tree(p))
        for f in fmt if isinstance(fmt, tuple) else () if fmt is None else (fmt,):
            if not isinstance(f, str):
                raise ConstraintError(f"JSON schema: format must be a string at {where}")
            if f not in FORMATS:
                if self.lenient and isinstance(fmt, tuple):
                    continue  # (a format of its own is dropped before, in `value`)
                raise ConstraintError(f"JSON schema: unknown format {f!r} at {where}")
            trees.append(R.parse(FORMATS[f]))
        return trees

    def array(self, s: dict, where: str) -> int:
        lo = _usize(s, "minItems", where) or 0
        hi = _usize(s, "maxItems", where)
        if hi is not None and lo > hi:
            raise _Unsat("minItems is greater than maxItems")
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
            except _Unsat:
                compiled.append(None)
        try:
            item = self.value(items, f"{where}/items")
        except _Unsat:
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
        min_p = _usize(s, "minProperties", where) or 0
        max_p = _usize(s, "maxProperties", where)
        if max_p is not None and (min_p > max_p or len(required) > max_p):
            raise _Unsat("minProperties/required is greater than maxProperties")
        pats = s.get("patternProperties", {})
        if not isinstance(pats, dict):
            raise ConstraintError(f"JSON schema: patternProperties must be an object at {where}")
        # pattern keys: JSON-quoted search regexes (disjoint, as llguidance requires)
        pat_keys = []
        for p in pats:
            tree = _search_tree(p)
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
        applied = s.get(_PATTERNS_APPLIED, False)  # (an allOf merge did it already)
        for name in list(props) + [r for r in required if r not in props]:
            hits = matching(name)
            if name in props:
                # llguidance: a named property matched by a pattern takes both schemas (the
                # named one first; patterns are disjoint, so at most one matches)
                sub = props[name] if applied or not hits else _both(props[name], pats[hits[0]])
            else:
                sub = pats[hits[0]] if hits else extra
            quoted = json.dumps(name, ensure_ascii=False).encode()
            taken.append((quoted, hits))
            is_req = name in required
            try:
                v = self.value(sub, f"{where}/properties/{name}")
            except _Unsat:
                if is_req:
                    raise
                continue
            named.append((self.lexeme(self.es.literal(quoted)), v, is_req))
        extras = []
        for p, key, _ in pat_keys:
            try:
                v = self.value(pats[p], f"{where}/patternProperties/{p}")
            except _Unsat:
                continue
            excluded = frozenset(q for q, hits in taken if p in hits)
            key = self.es.minus_literals(key, excluded)
            if key != D.NOTHING:  # (every key it matches is a named property)
                extras.append((self.lexeme(key), v))
        try:
            extra_value = self.value(extra, f"{where}/additionalProperties")
        except _Unsat:
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
        checks = set(s) & (_CONST_SIBLINGS - {"type"})
        for v in values:
            if types is not None and not any(_has_type(v, t) for t in types):
                continue
            if checks and not self.constant_fits(v, s, checks, where):
                continue
            as_int = types is not None and "integer" in types and "number" not in types
            options.append(lambda v=v, i=as_int: self.constant(v, i, where))
        if not options:
            raise _Unsat("no enum value has the schema's type")
        return self.first_satisfiable(options)

    def constant_fits(self, v, s: dict, checks: set, where: str) -> bool:
        """Whether the constant `v` satisfies the string/number keywords next to it (what
        llguidance's intersection of the constant with its sibling keywords keeps)."""
        if isinstance(v, str):
            if not checks & {"minLength", "maxLength", "pattern", "format"}:
                return True
            lo = _usize(s, "minLength", where) or 0
            hi = _usize(s, "maxLength", where)
            if len(v) < lo or hi is not None and len(v) > hi:
                return False
            data = v.encode("utf-8", "surrogatepass")
            for t in self.text_trees(s, where):
                es = D.ExprSet()
                e = D.compile_tree(es, t)
                for b in data:
                    e = es.derive(e, b)
                if not es.nullable[e]:
                    return False
            return True
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            (lo, xlo), (hi, xhi) = _bounds(s)
            if lo is not None and (v < lo or v == lo and xlo) or hi is not None and (v > hi or v == hi and xhi):
                return False
            if "multipleOf" in s:
                text = self.constant_text(v, False, where)
                try:
                    self.multiple_of(self.es.literal(text.encode()), s, where)
                except _Unsat:
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
        types = _types(s)
        if types is not None and not any(isinstance(t, str) and _has_type(v, t) for t in types):
            return False, v
        if "const" in s and not _json_equal(v, s["const"]) or "enum" in s and not (
                isinstance(s["enum"], list) and any(_json_equal(v, x) for x in s["enum"])):
            return False, v
        if isinstance(v, float) and v.is_integer() and types is not None and "integer" in types \
                and "number" not in types:
            v = int(v)
        if isinstance(v, list):
            lo, hi = _usize(s, "minItems", where) or 0, _usize(s, "maxItems", where)
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
            lo, hi = _usize(s, "minProperties", where) or 0, _usize(s, "maxProperties", where)
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
                hit = next((p for p in pats if _pattern_found(p, key)), None)
                subs = ([props[key]] if key in props else []) + ([pats[hit]] if hit is not None else [])
                for sub in subs or [s.get("additionalProperties", True)]:
                    ok, x = self.fits(x, sub, where, depth + 1)
                    if not ok:
                        return False, v
                out[key] = x
            return True, out
        checks = set(s) & (_CONST_SIBLINGS - {"type"})
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
                raise _Unsat(f"const {v} is not an integer")
            return str(_i64(float(v)))
        return _plain(float(v))

    def constant(self, v, as_int: bool, where: str) -> int:
        if v is None:
            return self.lit("null")
        if isinstance(v, bool):
            return self.lit("true" if v else "false")
        if isinstance(v, (int, float)):
            return self.lexeme(self.es.literal(self.constant_text(v, as_int, where).encode()))
        if isinstance(v, str):
            return self.string_lexeme(_lit_tree(v))
        if isinstance(v, list):
            items = [self.constant(x, False, where) for x in v]
            return self.array_of(items, None, len(items), len(items))
        if isinstance(v, dict):
            named = [(self.lexeme(self.es.literal(json.dumps(k, ensure_ascii=False).encode())),
                      self.constant(x, False, where), True) for k, x in v.items()]
            return self.object_of(named, [])
        raise ConstraintError(f"JSON schema: const of type {type(v).__name__} at {where}")

    def ref(self, uri, where: str) -> int:
        if not isinstance(uri, str):
            raise ConstraintError(f"JSON schema: $ref must be a string at {where}")
        pointer = unquote(uri[1:]) if uri == "#" or uri.startswith("#/") else uri  # (an identifier as itself)
        hit = self.rules.get(pointer)
        if hit is None:
            target = self.resolve(uri, where)
            k, ref = self.es.new_rule(False)
            hit = self.rules[pointer] = (k, ref)
            self.pending.append((k, target, uri))
        return hit[1]

    def over_budget(self):
        raise UnsupportedFeatureError(
            "JSON schema beyond the compile budget",
            f"more than {SUBSCHEMA_BUDGET:,} subschemas visited or {EXPRESSION_BUDGET:,} expressions built "
            f"({self.visited:,} and {len(self.es.exprs):,} so far); see docs/constrain-json.md#limits")

    def finish(self, top: int) -> int:
        while self.pending:
            k, target, uri = self.pending.pop()
            try:
                body = self.value(target, uri)
            except _Unsat as e:
                raise ConstraintError(f"JSON schema: $ref {uri!r} is unsatisfiable ({e})") from None
            self.es.set_rule(k, body)
        top = self.es.check_rules(top)
        if top == D.NOTHING:
            raise _Unsat("every JSON value it allows nests without end (a required property recurses)")
        if len(self.es.exprs) > EXPRESSION_BUDGET:
            self.over_budget()
        return self.es.strip_leading(top, self.ws_mask)


def _join(base: str, ref: str) -> str:
    """`ref` resolved against `base` (RFC 3986; `#...` and absolute URIs of any scheme too)."""
    if ref.startswith("#"):
        return base.split("#")[0] + ref
    if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", ref):
        return ref
    return urljoin(base, ref)


def _both(a, b):
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
            return _intersect(a, b, "")
        except ConstraintError:
            pass
    return {"allOf": [a, b]}


_LOWER = ("minimum", "minLength", "minItems", "minProperties")
_UPPER = ("maximum", "maxLength", "maxItems", "maxProperties")


def _types(s: dict):
    t = s.get("type")
    if t is None:
        return None
    return [t] if isinstance(t, str) else t


def _canon(v) -> str:
    return json.dumps(v, sort_keys=True)


def _intersect(a, b, where: str):
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
    ta, tb = _types(a), _types(b)
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
            out[k] = _both(u, v)
        elif k in ("enum", "const"):
            continue  # below
        elif k in ("pattern", "format") and isinstance(u, (str, tuple)) and isinstance(v, (str, tuple)):
            # both patterns (formats) hold, as llguidance's `And` of the two regexes; a tuple
            # is only ever made here (a schema's own `pattern` or `format` must be a string)
            pu = u if isinstance(u, tuple) else (u,)
            out[k] = pu + tuple(p for p in (v if isinstance(v, tuple) else (v,)) if p not in pu)
        elif k == "multipleOf" and _has_type(u, "number") and _has_type(v, "number") and u > 0 and v > 0:
            out[k] = _lcm_step(u, v)
        elif k == "prefixItems" and isinstance(u, list) and isinstance(v, list) \
                and not isinstance(a.get("items"), list) and not isinstance(b.get("items"), list):
            # position by position; past one side's prefix, that side's `items`
            ia, ib = a.get("items", True), b.get("items", True)
            out[k] = [_both(u[i] if i < len(u) else ia, v[i] if i < len(v) else ib)
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
            props[name] = _both(sub, pb[name] if name in pb else _property_schema(b, name))
        for name, sub in pb.items():
            if name not in pa:
                props[name] = _both(_property_schema(a, name), sub)
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
                    pp[key] = _both(sub, ppb[key])
                else:
                    pp[key] = _both(sub, b["additionalProperties"]) if "additionalProperties" in b else sub
            for key, sub in ppb.items():
                if key not in ppa:
                    pp[key] = _both(sub, a["additionalProperties"]) if "additionalProperties" in a else sub
            out["patternProperties"] = pp
            out[_PATTERNS_APPLIED] = True
        if "additionalProperties" in a or "additionalProperties" in b:
            out["additionalProperties"] = _both(a.get("additionalProperties", True), b.get("additionalProperties", True))
        req = []
        for side in (a, b):
            r = side.get("required", [])
            if not isinstance(r, list) or not all(isinstance(x, str) for x in r):
                raise ConstraintError(f"JSON schema: required must be an array of strings at {where}")
            req += [x for x in r if x not in req]
        if req:
            out["required"] = req
    return out


# An object schema merged by `_intersect` carries this key: its `properties` already include
# their matching `patternProperties` schemas (`object` must not merge them again).
_PATTERNS_APPLIED = "\x00anytok: patternProperties merged into properties"
_OBJECT_KEYS = ("properties", "additionalProperties", "required", "patternProperties", _PATTERNS_APPLIED)


def _own_properties(s: dict, where: str) -> dict:
    """`properties` of an object schema, each merged with the first pattern of its own
    `patternProperties` found in its name (as llguidance compiles an object schema)."""
    props = s.get("properties", {})
    if not isinstance(props, dict):
        raise ConstraintError(f"JSON schema: properties must be an object at {where}")
    pats = s.get("patternProperties")
    if not pats or not isinstance(pats, dict) or s.get(_PATTERNS_APPLIED):
        return props
    out = {}
    for name, sub in props.items():
        hit = next((p for p in pats if _pattern_found(p, name)), None)
        out[name] = sub if hit is None else _both(sub, pats[hit])
    return out


def _property_schema(s: dict, key: str):
    """The schema an object schema gives property `key`: its `properties` entry, else that of
    the first `patternProperties` pattern found in it, else `additionalProperties` (patterns
    read as llguidance reads them: Rust syntax, ASCII `\\d` and `\\w`, searched for)."""
    props = s.get("properties")
    if isinstance(props, dict) and key in props:
        return props[key]
    pats = s.get("patternProperties")
    if isinstance(pats, dict):
        for p, sub in pats.items():
            if _pattern_found(p, key):
                return sub
    return s.get("additionalProperties", True)


_PATTERN_DFAS: dict = {}  # pattern -> (ExprSet, start) of its search tree


def _pattern_found(pattern, key: str) -> bool:
    """Whether the patternProperties regex `pattern` is found in `key` (RegexSyntaxError if it
    is not a regex, as llguidance refuses the schema then)."""
    if not isinstance(pattern, str):
        raise ConstraintError(f"JSON schema: patternProperties key must be a string, got {pattern!r}")
    r = _PATTERN_DFAS.get(pattern)
    if r is None:
        if len(_PATTERN_DFAS) > 256:
            _PATTERN_DFAS.clear()
        es = D.ExprSet()
        r = _PATTERN_DFAS[pattern] = (es, D.compile_tree(es, _search_tree(pattern)))
    es, e = r
    derive = es.derive
    for b in key.encode("utf-8", "surrogatepass"):
        e = derive(e, b)
        if e == D.NOTHING:
            return False
    return es.nullable[e]


def _disjoint(a, b, named_only: bool = False) -> bool:
    """Whether no JSON value matches both schemas (a sound, partial check)."""
    if a is False or b is False:
        return True
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    if set(a) & {"$ref", "anyOf", "oneOf", "allOf", "enum"} or set(b) & {"$ref", "anyOf", "oneOf", "allOf", "enum"}:
        return False
    def kind(s):  # the set of types, integer counted as number; None: any or malformed
        t = s.get("type")
        t = [t] if isinstance(t, str) else t
        if not isinstance(t, list) or not all(isinstance(x, str) for x in t):
            return None
        return frozenset("number" if x == "integer" else x for x in t)

    ka, kb = kind(a), kind(b)
    if ka is not None and kb is not None and not ka & kb:
        return True
    ta = next(iter(ka)) if ka is not None and len(ka) == 1 else None
    tb = next(iter(kb)) if kb is not None and len(kb) == 1 else None
    if "const" in a and "const" in b:
        ca, cb = a["const"], b["const"]
        return isinstance(ca, str) and isinstance(cb, str) and ca != cb
    if ta == tb == "object":
        pa, pb = a.get("properties", {}), b.get("properties", {})
        ra, rb = a.get("required", []), b.get("required", [])
        if not all(isinstance(x, dict) for x in (pa, pb)) or not all(isinstance(x, list) for x in (ra, rb)):
            return False
        for key in list(ra) + list(rb):
            if not isinstance(key, str):
                return False
            if named_only and (key not in pa or key not in pb):  # (as llguidance, for merged oneOf)
                continue
            sa = pa.get(key, a.get("additionalProperties", True))
            sb = pb.get(key, b.get("additionalProperties", True))
            if _disjoint(sa, sb):
                return True
    return False


def _i64(x) -> int:
    """A number rounded to an integer as Rust's `f64 as i64` does it: saturated to 64 bits."""
    return int(min(max(x, -2 ** 63), 2 ** 63 - 1))


def _lcm_step(u, v):
    """The least common multiple of two `multipleOf` steps, in their decimal form (0.5 and 0.2
    give 1; 4 and 6 give 12), as llguidance merges them."""
    (cu, eu), (cv, ev) = _decimal(float(u)), _decimal(float(v))
    e = max(eu, ev)
    m = math.lcm(cu * 10 ** (e - eu), cv * 10 ** (e - ev))
    while e > 0 and m % 10 == 0:
        m //= 10
        e -= 1
    return m if e == 0 else m / 10 ** e


def _decimal(f: float) -> tuple:
    """multipleOf as (coef, exp), coef * 10^-exp, found as llguidance does (with the same
    floating-point steps)."""
    exp = 0
    while f != math.floor(f):
        f *= 10.0
        exp += 1
        if exp > 30:
            break
    if f > 2 ** 32 - 1:
        raise ConstraintError(f"JSON schema: multipleOf has too many digits ({f})")
    coef = int(f)
    while exp > 0 and coef % 10 == 0:
        coef //= 10
        exp -= 1
    return coef, exp


def _json_equal(a, b) -> bool:
    """Equality of JSON values (a boolean is no number; 1 and 1.0 are one number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _has_type(v, t: str) -> bool:
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


def _usize(s: dict, key: str, where: str):
    v = s.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ConstraintError(f"JSON schema: {key} must be a non-negative integer at {where}, got {json.dumps(v)[:40]}")
    return v


# Bytes a separator or whitespace pattern may match: ASCII outside every JSON lexeme's own
# bytes (letters, digits, quotes, brackets, signs, the point), so that llguidance's greedy lexer
# and this module's expressions split a text into the same lexemes.
_SEP_BYTES = frozenset(range(0x80)) - frozenset(b'"{}[]+-.\\') - frozenset(range(0x30, 0x3A)) \
    - frozenset(range(0x41, 0x5B)) - frozenset(range(0x61, 0x7B))
_WS_BYTES = _SEP_BYTES - frozenset(b",:")
_OPTIONS = ("item_separator", "key_separator", "whitespace_flexible", "whitespace_pattern", "coerce_one_of",
            "lenient", "json_allowed_escapes", "json_allow_general_unicode_escapes")


def _tree_bytes(node) -> set:
    """The code points a regex_syntax tree can match (as a set; None past ASCII)."""
    kind = node[0]
    if kind == "set":
        out = set()
        for lo, hi in node[1]:
            if hi >= 0x80:
                return None
            out.update(range(lo, hi + 1))
        return out
    if kind in ("cat", "alt"):
        out = set()
        for n in node[1]:
            b = _tree_bytes(n)
            if b is None:
                return None
            out |= b
        return out
    if kind == "rep":
        return _tree_bytes(node[1]) if node[3] != 0 else set()
    return set()


def _literal_text(node):
    """The text of a tree that matches exactly one string, else None."""
    if node[0] == "set" and len(node[1]) == 1 and node[1][0][0] == node[1][0][1]:
        return chr(node[1][0][0])
    if node[0] == "cat":
        parts = [_literal_text(n) for n in node[1]]
        return None if None in parts else "".join(parts)
    if node[0] == "empty":
        return ""
    return None


class JsonOptions:
    """llguidance's `x-guidance` options (JsonCompileOptions), checked and parsed: separators
    and the whitespace pattern are regexes (llguidance 1.9.1 compiles them as lexemes)."""

    def __init__(self, options: dict | None = None):
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise ConstraintError("JSON schema: x-guidance must be an object")
        for k in options:
            if k not in _OPTIONS:
                raise ConstraintError(f"JSON schema: unknown x-guidance option {k!r} (llguidance knows "
                                      + ", ".join(_OPTIONS) + ")")
        for k in ("whitespace_flexible", "coerce_one_of", "lenient", "json_allow_general_unicode_escapes"):
            if k in options and not isinstance(options[k], bool):
                raise ConstraintError(f"JSON schema: x-guidance {k} must be a boolean")
        for k in ("item_separator", "key_separator", "whitespace_pattern", "json_allowed_escapes"):
            v = options.get(k)
            if v is not None and not isinstance(v, str):
                raise ConstraintError(f"JSON schema: x-guidance {k} must be a string")
        if options.get("json_allow_general_unicode_escapes"):
            raise UnsupportedFeatureError("JSON Schema x-guidance option json_allow_general_unicode_escapes")
        esc = options.get("json_allowed_escapes")
        if esc is not None and set(esc) != set('nrbtf\\"u'):
            raise UnsupportedFeatureError(f"JSON Schema x-guidance option json_allowed_escapes={esc!r}",
                                          "only the default set nrbtf\\\"u")
        self.coerce_one_of = options.get("coerce_one_of", False)
        self.lenient = options.get("lenient", False)
        pattern = options.get("whitespace_pattern")
        if pattern is None and options.get("whitespace_flexible", True):
            pattern = "[\\x20\\x0A\\x0D\\x09]+"
        self.ws_tree, ws_bytes = None, set()
        if pattern is not None:
            self.ws_tree = R.parse(pattern)
            ws_bytes = _tree_bytes(self.ws_tree)
            if ws_bytes is None or not ws_bytes <= _WS_BYTES:
                raise UnsupportedFeatureError(
                    f"JSON Schema x-guidance whitespace_pattern {pattern!r}",
                    "only patterns of ASCII bytes that are not letters, digits or JSON punctuation")
        self.ws_mask = sum(1 << b for b in ws_bytes)
        seps = []
        for k, default in (("item_separator", ","), ("key_separator", ":")):
            text = options.get(k, default)
            tree = R.parse(text)
            b = _tree_bytes(tree)
            lit = _literal_text(tree)
            if b is None or not b <= _SEP_BYTES or lit == "":
                raise UnsupportedFeatureError(
                    f"JSON Schema x-guidance {k} {text!r}",
                    "only non-empty separators of ASCII bytes that are not letters, digits, quotes, brackets or signs")
            # a separator whose length varies, or that starts with a whitespace byte, and
            # whitespace it could run into: llguidance's greedy lexing would split texts differently
            if ws_bytes and ((lit is None and b & ws_bytes) or (lit is not None and ord(lit[0]) in ws_bytes)):
                raise UnsupportedFeatureError(
                    f"JSON Schema x-guidance {k} {text!r} next to whitespace {pattern!r}",
                    "a separator of varying length sharing bytes with the whitespace pattern, or starting with one")
            seps.append(tree)
        self.item_tree, self.key_tree = seps


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
        # normalized form (see _ll_oneof)
        from ._ll_oneof import verdict

        one_of, refusal = verdict(schema, lambda uri: c.resolve(uri, "#"), FORMATS, c.unknown)
        if refusal is not None:
            raise UnsupportedFeatureError(f"JSON Schema with {refusal}", "llguidance rejects it too")
        if not c.coerce_one_of:
            if one_of is False:
                raise UnsupportedFeatureError("JSON Schema oneOf whose options are not verifiably disjoint",
                                              "llguidance rejects it too unless coerce_one_of")
            c.coerce_one_of = one_of is True  # (None: not modelled, checked oneOf by oneOf)
    # one construct past the budget (a constant of a million characters) stops where it is
    c.es.max_exprs = EXPRESSION_BUDGET + EXPRESSION_BUDGET // 8
    try:
        with pause_gc():
            top = c.value(schema, "#")
            return c.es, c.finish(top)
    except GrammarLimitError:
        if len(c.es.exprs) >= c.es.max_exprs:
            c.over_budget()
        raise
    except _Unsat as e:
        raise ConstraintError(f"JSON schema is unsatisfiable: {e}") from None
    except RecursionError:
        raise UnsupportedFeatureError("JSON schemas nested this deeply") from None


# containers (objects and arrays) nested in a schema: json.dumps and the compiler recurse
# over them, so deeper schemas are refused up front
MAX_SCHEMA_DEPTH = 200


def check_depth(schema) -> None:
    """Raise GrammarLimitError if `schema` nests objects and arrays more than
    MAX_SCHEMA_DEPTH deep (checked without recursion)."""
    from .errors import GrammarLimitError

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
