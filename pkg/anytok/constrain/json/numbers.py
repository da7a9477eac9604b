"""Numbers: integer and number ranges as llguidance's range regexes (quirks included), the
bounds as llguidance reads them, and `multipleOf` as its digit-by-digit remainder automaton
(`NumbersMixin`, compiled into the caller's expression set)."""

from __future__ import annotations

import json
import math
import re

from ..terminals import EMPTY, NOTHING
from ..errors import ConstraintError, UnsupportedFeatureError
from .keywords import Unsat

# multipleOf: the largest step coefficient (digits without the decimal point) and the most
# states its minimized remainder automaton may keep (a step prime to 10 needs one per remainder)
MULTIPLE_OF_COEF = 10_000
MULTIPLE_OF_STATES = 5000

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
        raise Unsat("empty integer range")
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


def plain_float(f: float) -> str:
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
            return re.escape(plain_float(lo))
        raise _RangeError("empty range")
    if lo < 0:
        if hi < 0:
            return "-" + float_regex(-hi, -lo, hi_inc, lo_inc)
        parts = ["-" + float_regex(0.0, -lo, False, lo_inc)]
        if hi > 0 or hi_inc:
            parts.append(float_regex(0.0, hi, True, hi_inc))
        return _or(parts)
    ls, rs = plain_float(lo), plain_float(hi)
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


def num(v, key):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ConstraintError(f"JSON schema: {key!r} must be a number, got {json.dumps(v)[:60]}")
    return v


def bounds(s: dict):
    """(minimum, exclusive?), (maximum, exclusive?) as llguidance reads them (draft 4 booleans too)."""
    mn = num(s["minimum"], "minimum") if "minimum" in s else None
    mx = num(s["maximum"], "maximum") if "maximum" in s else None
    xmn, xmx = s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
    xmn = (mn if xmn is True else None) if isinstance(xmn, bool) or xmn is None else num(xmn, "exclusiveMinimum")
    xmx = (mx if xmx is True else None) if isinstance(xmx, bool) or xmx is None else num(xmx, "exclusiveMaximum")
    if mn is not None and xmn is not None:
        low = (xmn, True) if xmn >= mn else (mn, False)
    else:
        low = (xmn, True) if xmn is not None else (mn, False)
    if mx is not None and xmx is not None:
        high = (xmx, True) if xmx <= mx else (mx, False)
    else:
        high = (xmx, True) if xmx is not None else (mx, False)
    return low, high



def i64(x) -> int:
    """A number rounded to an integer as Rust's `f64 as i64` does it: saturated to 64 bits."""
    return int(min(max(x, -2 ** 63), 2 ** 63 - 1))


def lcm_step(u, v):
    """The least common multiple of two `multipleOf` steps, in their decimal form (0.5 and 0.2
    give 1; 4 and 6 give 12), as llguidance merges them."""
    (cu, eu), (cv, ev) = decimal_step(float(u)), decimal_step(float(v))
    e = max(eu, ev)
    m = math.lcm(cu * 10 ** (e - eu), cv * 10 ** (e - ev))
    while e > 0 and m % 10 == 0:
        m //= 10
        e -= 1
    return m if e == 0 else m / 10 ** e


def decimal_step(f: float) -> tuple:
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

class NumbersMixin:

    def number(self, s: dict, integer: bool, where: str) -> int:
        (lo, xlo), (hi, xhi) = bounds(s)
        if lo is not None and hi is not None:
            if lo > hi:
                raise Unsat("minimum is greater than maximum")
            if lo == hi and (xlo or xhi):
                raise Unsat("minimum equals an exclusive maximum")
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
        ilo = None if lo is None else i64(float(lo) + 1 if xlo and float(lo).is_integer() else math.ceil(float(lo)))
        ihi = None if hi is None else i64(float(hi) - 1 if xhi and float(hi).is_integer() else math.floor(float(hi)))
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
        step = num(s["multipleOf"], "multipleOf")
        if step <= 0:
            raise UnsupportedFeatureError("JSON Schema multipleOf <= 0", f"at {where}")
        coef, exp = decimal_step(float(step))
        if coef > MULTIPLE_OF_COEF:
            raise UnsupportedFeatureError("JSON Schema multipleOf with this many significant digits",
                                          f"at {where} (at most {MULTIPLE_OF_COEF:,})")
        r = ("and", [e, ("seq", [("alt", [("str", "-", ""), EMPTY]), self.multiples(coef, exp)])])
        try:
            if self.terms.empty(r):
                raise Unsat("no multiple of multipleOf in range")
        except OverflowError:
            raise UnsupportedFeatureError("JSON Schema multipleOf whose number language is this large",
                                          f"at {where}") from None
        return r

    def multiples(self, d: int, scale: int) -> int:
        """Digit strings whose value times 10^scale is a multiple of d, with no fraction part or
        one of at most `scale` digits, exactly as llguidance's MultipleOf matches them: a DFA
        over remainders (leading zeros allowed; the number regex it is intersected with rules
        them out), its live states as rules (a tree: `("rec", name)` per state).  In the fraction part, once 10^(digits left) is
        at most d, the remaining digits are forced (so with multipleOf 0.25, 0.5 must be
        written 0.50)."""
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
            return NOTHING
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
                rules[block[st]] = (st, ("rec", self.rule_name(f"MULTIPLE_{d}e{scale}")))
        for st, ref in rules.values():
            parts = [("seq", [("bytes", 1 << b), rules[block[n]][1]]) for b, n in edges[st] if n in live]
            if accepting(st):
                parts.append(EMPTY)
            self.defs[ref[1]] = ("alt", parts)
        return rules[block["start"]][1]

