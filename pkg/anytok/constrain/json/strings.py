"""Strings: regex trees of decoded text turned into trees of JSON string bodies (`quote_tree`,
llguidance's JsonQuote), and `pattern`s read as JSON Schema reads them (searched for, ASCII
`\\d`/`\\w`: `search_tree`)."""

from __future__ import annotations

from .. import regex_syntax as R

_SHORT_ESCAPES = {8: "b", 9: "t", 10: "n", 12: "f", 13: "r"}
_SPECIAL = tuple((c, c) for c in range(0x20)) + ((0x22, 0x22), (0x5C, 0x5C), (0x7F, 0x7F))
ANY_CP = R.ANY

def _set(*chars: str):
    return ("set", tuple((ord(c), ord(c)) for c in sorted(set(chars))))


def lit_tree(s: str):
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
            after.append(("cat", [lit_tree("u00"), hexes[0] if len(hexes) == 1 else ("alt", hexes)]))
        alts = [("set", plain)] if plain else []
        if after:
            alts.append(("cat", [lit_tree("\\"), after[0] if len(after) == 1 else ("alt", after)]))
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
    anywhere = ("rep", ("set", ANY_CP), 0, None)
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


def search_tree(pattern: str):
    """The tree of the strings in which `pattern` is found: along every path through the
    pattern, a `^` where the path begins pins the match to the start, a `$` where it ends to
    the end (`^(a$)|(^b$)`, `^(a|b$)`); an anchor anywhere else is refused, as llguidance
    ("lookarounds not supported")."""
    tree = R._Parser(_ascii_classes(pattern)).parse()
    tree = _pin(_pin(tree, R._START, True), R._END, False)
    return R._resolve(tree, False, False)  # any other anchor: UnsupportedFeatureError


# -- numbers ----------------------------------------------------------------------------------
